// DCQCN (Mellanox flavour, docs/network-model.md §13.1) driven directly through a fake CcHost: CNP
// handling, the α EWMA, the rate-decrease check, the three increase stages, the MIN_RATE floor
// and CLAMP_TARGET_RATE. Parameters are run.py's "dcqcn" at 100 Gb/s unless a test says otherwise.
#include <gtest/gtest.h>

#include <iterator>
#include <vector>

#include "wormhole/cc/dcqcn.h"
#include "wormhole/cc/factory.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/net/cc.h"
#include "wormhole/net/flow.h"

using namespace wh;

namespace {

constexpr uint64_t kLine = 100'000'000'000ull;  // 100 Gb/s
enum : int { kAlpha = 0, kDecrease = 1, kIncrease = 2 };

/// Records timer and rate calls; set_rate applies the rate as the network does.
struct FakeHost final : CcHost {
  struct TimerCall {
    uint32_t id;
    int slot;
    Time at;
  };
  struct RateCall {
    uint32_t id;
    uint64_t rate;
    bool retime;
  };
  Time t = 0;
  std::vector<TimerCall> timers;
  std::vector<RateCall> rates;
  Time now() const override { return t; }
  void set_timer(uint32_t id, Flow&, int slot, Time at) override { timers.push_back({id, slot, at}); }
  void set_rate(uint32_t id, Flow& f, uint64_t rate_bps, bool retime) override {
    rates.push_back({id, rate_bps, retime});
    f.rate_bps = rate_bps;
  }
  /// The last armed time of `slot`, or -1.
  Time armed(int slot) const {
    for (auto it = timers.rbegin(); it != timers.rend(); ++it)
      if (it->slot == slot) return it->at;
    return -1;
  }
  size_t count(int slot) const {
    size_t n = 0;
    for (const auto& c : timers) n += c.slot == slot;
    return n;
  }
};

/// run.py "dcqcn" at 100 Gb/s: t_alpha 1 µs, t_dec 4 µs, RP_TIMER 300 µs, g 1/256, F 1,
/// AI 20 Mb/s, HAI 200 Mb/s, MIN_RATE 1000 Mb/s, CLAMP_TARGET_RATE 0.
DcqcnParams run_py_params() {
  DcqcnParams p;
  p.alpha_interval = 1 * kUs;
  p.decrease_interval = 4 * kUs;
  p.rp_timer = 300 * kUs;
  p.g = 1.0 / 256;
  p.fast_recovery_times = 1;
  p.rate_ai_bps = 20'000'000;
  p.rate_hai_bps = 200'000'000;
  p.min_rate_bps = 1'000'000'000;
  p.clamp_target_rate = false;
  return p;
}

Flow line_rate_flow() {
  Flow f;
  f.rate_bps = f.max_rate_bps = kLine;
  return f;
}

Packet ack(bool cnp) {
  Packet p;
  p.type = PktType::Ack;
  p.cnp = cnp ? 1 : 0;
  return p;
}

DcqcnState& st(Flow& f) { return std::get<DcqcnState>(f.cc); }

}  // namespace

TEST(Dcqcn, FactoryReadsRunPyParametersFromTheRingConfig) {
  const SimConfig cfg =
      read_hpcc_config(std::string(WH_TEST_DATA) + "/refruns/hpcc-ring16-fattree-k4-1MB/config_dcqcn.txt");
  auto cc = make_cc(cfg, nullptr);
  auto* d = dynamic_cast<Dcqcn*>(cc.get());
  ASSERT_NE(d, nullptr);
  EXPECT_STREQ(d->name(), "dcqcn");
  EXPECT_EQ(d->int_bytes(), 0u);  // no INT: 1048-B data packets
  const DcqcnParams& p = d->params();
  EXPECT_EQ(p.alpha_interval, 1'000'000);       // ALPHA_RESUME_INTERVAL 1 µs = 10^6 ps
  EXPECT_EQ(p.decrease_interval, 4'000'000);    // RATE_DECREASE_INTERVAL 4 µs
  EXPECT_EQ(p.rp_timer, 300'000'000);           // RP_TIMER 300 µs
  EXPECT_DOUBLE_EQ(p.g, 1.0 / 256);             // EWMA_GAIN 0.00390625
  EXPECT_EQ(p.fast_recovery_times, 1u);         // FAST_RECOVERY_TIMES 1
  EXPECT_EQ(p.rate_ai_bps, 20'000'000u);        // RATE_AI 20Mb/s
  EXPECT_EQ(p.rate_hai_bps, 200'000'000u);      // RATE_HAI 200Mb/s
  EXPECT_EQ(p.min_rate_bps, 1'000'000'000u);    // MIN_RATE 1000Mb/s
  EXPECT_FALSE(p.clamp_target_rate);            // CLAMP_TARGET_RATE 0
}

TEST(Dcqcn, StartInitialisesStateAtLineRate) {
  Dcqcn cc(run_py_params());
  FakeHost h;
  Flow f = line_rate_flow();
  cc.on_start(0, f, h);
  const DcqcnState& s = st(f);
  EXPECT_EQ(s.target_bps, kLine);  // Rt = line rate
  EXPECT_EQ(s.alpha, 1.0);
  EXPECT_EQ(s.stage, 0u);
  EXPECT_TRUE(s.first_cnp);
  EXPECT_FALSE(s.alpha_cnp);
  EXPECT_FALSE(s.decrease_cnp);
  EXPECT_TRUE(h.timers.empty());  // no timer before the first CNP
  EXPECT_TRUE(h.rates.empty());
  EXPECT_EQ(f.rate_bps, kLine);
}

TEST(Dcqcn, AckWithoutCnpChangesNothing) {
  Dcqcn cc(run_py_params());
  FakeHost h;
  Flow f = line_rate_flow();
  cc.on_start(0, f, h);
  h.t = 5 * kUs;
  for (int i = 0; i < 10; ++i) cc.on_ack(0, f, ack(false), h);
  EXPECT_TRUE(st(f).first_cnp);
  EXPECT_FALSE(st(f).alpha_cnp);
  EXPECT_FALSE(st(f).decrease_cnp);
  EXPECT_TRUE(h.timers.empty());
  EXPECT_TRUE(h.rates.empty());
}

TEST(Dcqcn, FirstCnpStartsTimersWithoutCuttingTheRate) {
  Dcqcn cc(run_py_params());
  FakeHost h;
  Flow f = line_rate_flow();
  cc.on_start(7, f, h);
  const Time t0 = 2 * kSec + 12345 * kNs;
  h.t = t0;
  cc.on_ack(7, f, ack(true), h);
  DcqcnState& s = st(f);
  EXPECT_EQ(s.alpha, 1.0);          // α = 1
  EXPECT_FALSE(s.alpha_cnp);        // cleared on the first CNP
  EXPECT_TRUE(s.decrease_cnp);      // set: the first decrease check will cut
  EXPECT_FALSE(s.first_cnp);
  EXPECT_EQ(s.target_bps, kLine);   // Rt = 1.0 × Rc = 100 Gb/s
  EXPECT_EQ(f.rate_bps, kLine);     // no immediate cut
  EXPECT_TRUE(h.rates.empty());
  ASSERT_EQ(h.timers.size(), 2u);
  EXPECT_EQ(h.timers[0].id, 7u);
  EXPECT_EQ(h.timers[0].slot, kAlpha);
  EXPECT_EQ(h.timers[0].at, t0 + 1 * kUs);           // α timer: now + 1 µs
  EXPECT_EQ(h.timers[1].id, 7u);
  EXPECT_EQ(h.timers[1].slot, kDecrease);
  EXPECT_EQ(h.timers[1].at, t0 + 4 * kUs + 1 * kNs);  // decrease check: now + 4 µs + 1 ns
  // A second CNP only sets both flags: no new timers, no rate change.
  h.t = t0 + 100 * kNs;
  cc.on_ack(7, f, ack(true), h);
  EXPECT_TRUE(s.alpha_cnp);
  EXPECT_TRUE(s.decrease_cnp);
  EXPECT_EQ(h.timers.size(), 2u);
  EXPECT_TRUE(h.rates.empty());
}

TEST(Dcqcn, AlphaTimerEwma) {
  Dcqcn cc(run_py_params());
  FakeHost h;
  Flow f = line_rate_flow();
  cc.on_start(0, f, h);
  h.t = 10 * kUs;
  cc.on_ack(0, f, ack(true), h);  // α = 1, flag cleared
  DcqcnState& s = st(f);
  const double g = 1.0 / 256;
  // α timer without a CNP since: α = (1 − g)·1 = 255/256 = 0.99609375 (exact in binary).
  h.t = 11 * kUs;
  cc.on_timer(0, f, kAlpha, h);
  EXPECT_EQ(s.alpha, 255.0 / 256);
  EXPECT_FALSE(s.alpha_cnp);
  EXPECT_EQ(h.armed(kAlpha), 12 * kUs);  // re-armed at now + 1 µs
  // Again without CNP: α = (255/256)^2 = 65025/65536 = 0.9922027587890625 (exact).
  h.t = 12 * kUs;
  cc.on_timer(0, f, kAlpha, h);
  EXPECT_EQ(s.alpha, 65025.0 / 65536);
  // With a CNP since: α = (1 − g)·65025/65536 + g = (255·65025 + 65536)/(256·65536)
  //   = (16,581,375 + 65,536)/16,777,216 = 16,646,911/16,777,216 = 0.99223321676254272...
  cc.on_ack(0, f, ack(true), h);
  EXPECT_TRUE(s.alpha_cnp);
  h.t = 13 * kUs;
  cc.on_timer(0, f, kAlpha, h);
  EXPECT_DOUBLE_EQ(s.alpha, 16646911.0 / 16777216);
  EXPECT_DOUBLE_EQ(s.alpha, (1 - g) * (65025.0 / 65536) + g);
  EXPECT_FALSE(s.alpha_cnp);  // cleared by the update
  EXPECT_EQ(h.armed(kAlpha), 14 * kUs);
  // With α = 1 and a CNP since, α stays 1: (1 − g)·1 + g = 1 (exact).
  s.alpha = 1;
  s.alpha_cnp = true;
  cc.on_timer(0, f, kAlpha, h);
  EXPECT_EQ(s.alpha, 1.0);
  // The α timer never touches the rate.
  EXPECT_TRUE(h.rates.empty());
}

TEST(Dcqcn, FullSequenceFromFirstCnp) {
  // First CNP at t0; α decays once without CNP; the decrease check cuts; then three increase
  // events walk through fast recovery (stage 0 < F = 1), additive increase (stage 1 == F) and
  // hyper increase (stage 2 > F).
  Dcqcn cc(run_py_params());
  FakeHost h;
  Flow f = line_rate_flow();
  cc.on_start(3, f, h);
  const Time t0 = 2 * kSec;
  h.t = t0;
  cc.on_ack(3, f, ack(true), h);
  DcqcnState& s = st(f);

  // t0 + 1 µs: α timer, no CNP since the first one (its flag was cleared): α = 255/256.
  h.t = t0 + 1 * kUs;
  cc.on_timer(3, f, kAlpha, h);
  EXPECT_EQ(s.alpha, 255.0 / 256);

  // t0 + 4 µs + 1 ns: decrease check; the first CNP set decrease_cnp.
  // Rc = 100e9 × (1 − (255/256)/2) = 100e9 × 257/512 = 195,312,500 × 257 = 50,195,312,500 bit/s
  // (exact in double). Stage 0 and no clamp: Rt stays 100 Gb/s.
  const Time td = t0 + 4 * kUs + 1 * kNs;
  h.t = td;
  const size_t before = h.timers.size();
  cc.on_timer(3, f, kDecrease, h);
  ASSERT_EQ(h.rates.size(), 1u);
  EXPECT_EQ(h.rates[0].id, 3u);
  EXPECT_EQ(h.rates[0].rate, 50'195'312'500u);
  EXPECT_FALSE(h.rates[0].retime);  // DCQCN just changes the rate (§8)
  EXPECT_EQ(f.rate_bps, 50'195'312'500u);
  EXPECT_EQ(s.target_bps, kLine);
  EXPECT_EQ(s.stage, 0u);
  EXPECT_FALSE(s.decrease_cnp);
  // Timers: the decrease check re-armed at now + 4 µs, the increase timer at now + 300 µs.
  ASSERT_EQ(h.timers.size(), before + 2);
  EXPECT_EQ(h.armed(kDecrease), td + 4 * kUs);
  EXPECT_EQ(h.armed(kIncrease), td + 300 * kUs);

  // Decrease check without a CNP since: nothing changes except the re-arm.
  h.t = td + 4 * kUs;
  cc.on_timer(3, f, kDecrease, h);
  EXPECT_EQ(h.rates.size(), 1u);
  EXPECT_EQ(h.armed(kDecrease), td + 8 * kUs);
  EXPECT_EQ(h.armed(kIncrease), td + 300 * kUs);  // not restarted
  EXPECT_EQ(h.count(kIncrease), 1u);

  // Increase 1, stage 0 < F: fast recovery, Rc = Rc/2 + Rt/2
  //   = 25,097,656,250 + 50,000,000,000 = 75,097,656,250; stage -> 1; re-armed at now + 300 µs.
  Time ti = td + 300 * kUs;
  h.t = ti;
  cc.on_timer(3, f, kIncrease, h);
  EXPECT_EQ(f.rate_bps, 75'097'656'250u);
  EXPECT_EQ(s.target_bps, kLine);
  EXPECT_EQ(s.stage, 1u);
  EXPECT_EQ(h.armed(kIncrease), ti + 300 * kUs);

  // Increase 2, stage 1 == F: additive, Rt = min(100e9 + 20e6, 100e9) = 100e9 (capped);
  //   Rc = 37,548,828,125 + 50,000,000,000 = 87,548,828,125; stage -> 2.
  ti += 300 * kUs;
  h.t = ti;
  cc.on_timer(3, f, kIncrease, h);
  EXPECT_EQ(s.target_bps, kLine);
  EXPECT_EQ(f.rate_bps, 87'548'828'125u);
  EXPECT_EQ(s.stage, 2u);

  // Increase 3, stage 2 > F: hyper, Rt = min(100e9 + 200e6, 100e9) = 100e9;
  //   Rc = 87,548,828,125/2 + 50e9 = 43,774,414,062 (truncated from .5) + 50e9 = 93,774,414,062.
  ti += 300 * kUs;
  h.t = ti;
  cc.on_timer(3, f, kIncrease, h);
  EXPECT_EQ(f.rate_bps, 93'774'414'062u);
  EXPECT_EQ(s.stage, 3u);
  EXPECT_EQ(h.armed(kIncrease), ti + 300 * kUs);
  // No rate change ever used re-timing.
  for (const auto& r : h.rates) EXPECT_FALSE(r.retime);
}

TEST(Dcqcn, AdditiveIncreaseAtStageF) {
  Dcqcn cc(run_py_params());
  FakeHost h;
  Flow f = line_rate_flow();
  cc.on_start(0, f, h);
  DcqcnState& s = st(f);
  s.first_cnp = false;
  s.target_bps = 60'000'000'000;
  s.stage = 1;  // == F
  f.rate_bps = 40'000'000'000;
  cc.on_timer(0, f, kIncrease, h);
  // Rt = 60e9 + 20e6 = 60,020,000,000; Rc = 40e9/2 + 60.02e9/2 = 20e9 + 30,010,000,000 = 50,010,000,000.
  EXPECT_EQ(s.target_bps, 60'020'000'000u);
  EXPECT_EQ(f.rate_bps, 50'010'000'000u);
  EXPECT_EQ(s.stage, 2u);
}

TEST(Dcqcn, HyperIncreaseAboveStageF) {
  Dcqcn cc(run_py_params());
  FakeHost h;
  Flow f = line_rate_flow();
  cc.on_start(0, f, h);
  DcqcnState& s = st(f);
  s.first_cnp = false;
  s.target_bps = 60'000'000'000;
  s.stage = 2;  // > F
  f.rate_bps = 40'000'000'000;
  cc.on_timer(0, f, kIncrease, h);
  // Rt = 60e9 + 200e6 = 60,200,000,000; Rc = 20e9 + 30,100,000,000 = 50,100,000,000.
  EXPECT_EQ(s.target_bps, 60'200'000'000u);
  EXPECT_EQ(f.rate_bps, 50'100'000'000u);
  EXPECT_EQ(s.stage, 3u);
  // Next (stage 3): Rt = 60.4e9; Rc = 25,050,000,000 + 30,200,000,000 = 55,250,000,000.
  cc.on_timer(0, f, kIncrease, h);
  EXPECT_EQ(s.target_bps, 60'400'000'000u);
  EXPECT_EQ(f.rate_bps, 55'250'000'000u);
  EXPECT_EQ(s.stage, 4u);
  // Near the line rate the target is capped: Rt = min(99.9e9 + 0.2e9, 100e9) = 100e9;
  // Rc = 99,000,000,000/2 + 100e9/2 = 49.5e9 + 50e9 = 99,500,000,000.
  s.target_bps = 99'900'000'000;
  f.rate_bps = 99'000'000'000;
  cc.on_timer(0, f, kIncrease, h);
  EXPECT_EQ(s.target_bps, kLine);
  EXPECT_EQ(f.rate_bps, 99'500'000'000u);
}

TEST(Dcqcn, FastRecoveryHalvesEachTermSeparately) {
  // DataRate arithmetic in integer bit/s: Rc/2 + Rt/2, each half truncated.
  // Rc = 50,000,000,001, Rt = 99,999,999,999: 25,000,000,000 + 49,999,999,999 = 74,999,999,999
  // (not (Rc + Rt)/2 = 75,000,000,000). Stage 0 < F: Rt unchanged.
  Dcqcn cc(run_py_params());
  FakeHost h;
  Flow f = line_rate_flow();
  cc.on_start(0, f, h);
  DcqcnState& s = st(f);
  s.first_cnp = false;
  s.target_bps = 99'999'999'999;
  s.stage = 0;
  f.rate_bps = 50'000'000'001;
  cc.on_timer(0, f, kIncrease, h);
  EXPECT_EQ(f.rate_bps, 74'999'999'999u);
  EXPECT_EQ(s.target_bps, 99'999'999'999u);
  EXPECT_EQ(s.stage, 1u);
}

TEST(Dcqcn, DefaultFastRecoveryFiveStages) {
  // F = 5 (program default): stages 0..4 are fast recovery (Rt fixed), stage 5 adds AI, 6 adds HAI.
  DcqcnParams p = run_py_params();
  p.fast_recovery_times = 5;
  Dcqcn cc(p);
  FakeHost h;
  Flow f = line_rate_flow();
  cc.on_start(0, f, h);
  DcqcnState& s = st(f);
  s.first_cnp = false;
  s.target_bps = 80'000'000'000;
  f.rate_bps = 16'000'000'000;
  // Rc: 16e9 -> 48e9 -> 64e9 -> 72e9 -> 76e9 -> 78e9 (each (Rc + 80e9)/2, all even so exact).
  const uint64_t want[] = {48'000'000'000, 64'000'000'000, 72'000'000'000, 76'000'000'000, 78'000'000'000};
  for (uint64_t w : want) {
    cc.on_timer(0, f, kIncrease, h);
    EXPECT_EQ(f.rate_bps, w);
    EXPECT_EQ(s.target_bps, 80'000'000'000u);
  }
  EXPECT_EQ(s.stage, 5u);
  // Stage 5 == F: Rt = 80.02e9, Rc = 39e9 + 40.01e9 = 79,010,000,000.
  cc.on_timer(0, f, kIncrease, h);
  EXPECT_EQ(s.target_bps, 80'020'000'000u);
  EXPECT_EQ(f.rate_bps, 79'010'000'000u);
  // Stage 6 > F: Rt = 80.22e9, Rc = 39,505,000,000 + 40,110,000,000 = 79,615,000,000.
  cc.on_timer(0, f, kIncrease, h);
  EXPECT_EQ(s.target_bps, 80'220'000'000u);
  EXPECT_EQ(f.rate_bps, 79'615'000'000u);
}

TEST(Dcqcn, RepeatedCutsStopAtMinRate) {
  // CNPs keep arriving: α stays exactly 1 ((1 − g)·1 + g = 1), every decrease check halves Rc:
  // 100e9 -> 50e9 -> 25e9 -> 12.5e9 -> 6.25e9 -> 3.125e9 -> 1.5625e9 -> max(1e9, 0.78125e9) = 1e9,
  // and it stays at 1e9 (MIN_RATE) afterwards.
  Dcqcn cc(run_py_params());
  FakeHost h;
  Flow f = line_rate_flow();
  cc.on_start(0, f, h);
  Time t = 2 * kSec;
  h.t = t;
  cc.on_ack(0, f, ack(true), h);
  DcqcnState& s = st(f);
  const uint64_t want[] = {50'000'000'000, 25'000'000'000, 12'500'000'000, 6'250'000'000, 3'125'000'000,
                           1'562'500'000,  1'000'000'000,  1'000'000'000,  1'000'000'000};
  for (uint64_t w : want) {
    // 4 α updates per 4-µs decrease period, each with a CNP since.
    for (int i = 0; i < 4; ++i) {
      cc.on_ack(0, f, ack(true), h);
      h.t = (t += 1 * kUs);
      cc.on_timer(0, f, kAlpha, h);
      EXPECT_EQ(s.alpha, 1.0);
    }
    h.t = t + 1 * kNs;
    cc.on_timer(0, f, kDecrease, h);
    EXPECT_EQ(f.rate_bps, w);
    EXPECT_EQ(s.stage, 0u);
    // Stage 0 without clamp: the target stays at the line rate throughout.
    EXPECT_EQ(s.target_bps, kLine);
  }
  // Each cut restarted the increase timer at its own now + 300 µs.
  EXPECT_EQ(h.count(kIncrease), std::size(want));
  EXPECT_EQ(h.armed(kIncrease), t + 1 * kNs + 300 * kUs);
}

TEST(Dcqcn, TargetOnDecreaseDependsOnStageAndClamp) {
  // Rc = 60e9, Rt = 100e9, α = 1, CNP since the last check. The cut is Rc·(1 − 1/2) = 30e9 in all
  // cases; Rt is set to the old Rc (60e9) only if stage != 0 or CLAMP_TARGET_RATE.
  auto run = [](bool clamp, uint32_t stage) {
    DcqcnParams p = run_py_params();
    p.clamp_target_rate = clamp;
    Dcqcn cc(p);
    FakeHost h;
    Flow f = line_rate_flow();
    cc.on_start(0, f, h);
    DcqcnState& s = st(f);
    s.first_cnp = false;
    s.alpha = 1;
    s.decrease_cnp = true;
    s.stage = stage;
    s.target_bps = kLine;
    f.rate_bps = 60'000'000'000;
    cc.on_timer(0, f, kDecrease, h);
    EXPECT_EQ(f.rate_bps, 30'000'000'000u);
    EXPECT_EQ(s.stage, 0u);  // reset by the decrease
    return s.target_bps;
  };
  EXPECT_EQ(run(false, 0), kLine);               // stage 0, no clamp: Rt unchanged
  EXPECT_EQ(run(true, 0), 60'000'000'000u);      // CLAMP_TARGET_RATE 1: Rt = Rc before the cut
  EXPECT_EQ(run(false, 2), 60'000'000'000u);     // stage != 0: Rt = Rc before the cut
  EXPECT_EQ(run(true, 3), 60'000'000'000u);
}

TEST(Dcqcn, DecreaseUsesCurrentAlphaAndTruncates) {
  // α = 16,646,911/16,777,216 = 0.99223321676254272 (from the EWMA test): Rc = 100e9 × (1 − α/2)
  //   = 100e9 × (1 − 16,646,911/33,554,432) = 100e9 × 16,907,521/33,554,432
  //   = 100e9 × 0.50388339161872864 = 50,388,339,161.87... -> truncated to 50,388,339,161 bit/s.
  Dcqcn cc(run_py_params());
  FakeHost h;
  Flow f = line_rate_flow();
  cc.on_start(0, f, h);
  DcqcnState& s = st(f);
  s.first_cnp = false;
  s.alpha = 16646911.0 / 16777216;
  s.decrease_cnp = true;
  cc.on_timer(0, f, kDecrease, h);
  EXPECT_EQ(f.rate_bps, 50'388'339'161u);
}
