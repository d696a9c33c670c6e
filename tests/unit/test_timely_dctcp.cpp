// TIMELY and DCTCP (docs/network-model.md §13.3–13.4) driven directly through a fake CcHost, each update
// computed by hand. TIMELY uses TimelyParams defaults (α 0.875, β 0.8, T_low 50 µs, T_high 500 µs,
// minRTT 20 µs, RATE_AI 5 Mb/s, RATE_HAI 50 Mb/s, MIN_RATE 100 Mb/s); DCTCP uses DctcpParams
// defaults (g = 1/16, DCTCP_RATE_AI 1000 Mb/s, MIN_RATE 100 Mb/s, MTU 1000 B). Flows at 100 Gb/s.
#include <gtest/gtest.h>

#include "recording_cc_host.h"

#include <vector>

#include "wormhole/cc/factory.h"
#include "wormhole/cc/timely.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/net/cc.h"
#include "wormhole/net/flow.h"

using namespace wh;

namespace {

constexpr uint64_t kLine = 100'000'000'000ull;

using FakeHost = test::RecordingCcHost;

Flow line_flow() {
  Flow f;
  f.rate_bps = f.max_rate_bps = kLine;
  return f;
}

/// An ACK for TIMELY: `ts` = the data packet's send time (ps), echoed.
Packet tack(uint64_t seq, Time ts) {
  Packet p;
  p.type = PktType::Ack;
  p.seq = seq;
  p.ts = ts;
  return p;
}

Packet dack(uint64_t seq, bool cnp) {
  Packet p;
  p.type = PktType::Ack;
  p.seq = seq;
  p.cnp = cnp ? 1 : 0;
  return p;
}

TimelyState& tst(Flow& f) { return std::get<TimelyState>(f.cc); }
DctcpState& dst(Flow& f) { return std::get<DctcpState>(f.cc); }

/// Feeds a TIMELY flow one full-update ACK (seq just above lastUpdateSeq, snd_nxt advanced by
/// 10,000) whose RTT is `rtt_ns`, at time h.t + 1 ms.
void timely_ack(Timely& cc, Flow& f, FakeHost& h, uint64_t rtt_ns) {
  h.t += 1 * kMs;
  const uint64_t seq = tst(f).last_update_seq + 1000;
  f.snd_nxt += 10'000;
  cc.on_ack(0, f, tack(seq, h.t - static_cast<Time>(rtt_ns) * kNs), h);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// TIMELY
// ---------------------------------------------------------------------------------------------

TEST(Timely, FactoryAndDefaults) {
  SimConfig cfg = read_hpcc_config(std::string(WH_TEST_DATA) + "/refruns/hpcc-ring16-fattree-k4-1MB/config_hpcc.txt");
  cfg.cc_mode = 7;
  auto cc = make_cc(cfg, nullptr);
  ASSERT_NE(dynamic_cast<Timely*>(cc.get()), nullptr);
  EXPECT_STREQ(cc->name(), "timely");
  EXPECT_EQ(cc->int_mode(), IntMode::Timestamp);
  EXPECT_EQ(cc->int_bytes(), 8u);  // 1056-B data packets
  const TimelyParams p;
  EXPECT_EQ(p.alpha, 0.875);
  EXPECT_EQ(p.beta, 0.8);
  EXPECT_EQ(p.t_low_ns, 50'000u);
  EXPECT_EQ(p.t_high_ns, 500'000u);
  EXPECT_EQ(p.min_rtt_ns, 20'000u);
  EXPECT_EQ(p.rate_ai_bps, 5'000'000u);
  EXPECT_EQ(p.rate_hai_bps, 50'000'000u);
}

TEST(Timely, FirstAckOnlyRecords) {
  Timely cc(TimelyParams{});
  FakeHost h;
  Flow f = line_flow();
  cc.on_start(0, f, h);
  EXPECT_EQ(tst(f).cur_rate_bps, kLine);
  f.snd_nxt = 10'000;
  // RTT = now − ts in whole ns: 300 µs + 999 ps − (200 µs + 1 ps) -> 300,000 − 200,000 = 100,000 ns.
  h.t = 300 * kUs + 999;
  cc.on_ack(0, f, tack(1000, 200 * kUs + 1), h);
  const TimelyState& s = tst(f);
  EXPECT_TRUE(h.rates.empty());
  EXPECT_EQ(s.last_update_seq, 10'000u);
  EXPECT_EQ(s.last_rtt_ns, 100'000u);
  EXPECT_EQ(s.rtt_diff, 0.0);
  EXPECT_EQ(s.inc_stage, 0u);
  EXPECT_EQ(s.cur_rate_bps, kLine);
  EXPECT_EQ(h.timer_calls, 0u);
}

TEST(Timely, LowRttAdditiveThenHyperIncrease) {
  // RTT 10 µs < T_low: always increase. Rc = 50e9: +5 Mb/s for the first 5 consecutive
  // increases (incStage 0..4), then +50 Mb/s (incStage ≥ 5).
  Timely cc(TimelyParams{});
  FakeHost h;
  Flow f = line_flow();
  cc.on_start(0, f, h);
  timely_ack(cc, f, h, 10'000);  // first ACK: records only
  ASSERT_TRUE(h.rates.empty());
  tst(f).cur_rate_bps = 50'000'000'000;
  f.rate_bps = 50'000'000'000;
  const uint64_t want[] = {50'005'000'000, 50'010'000'000, 50'015'000'000, 50'020'000'000,
                           50'025'000'000, 50'075'000'000, 50'125'000'000};
  for (int i = 0; i < 7; ++i) {
    timely_ack(cc, f, h, 10'000);
    ASSERT_EQ(h.rates.size(), size_t(i + 1));
    EXPECT_EQ(h.rates[i].rate, want[i]) << i;
    EXPECT_FALSE(h.rates[i].retime);  // TIMELY just changes the rate
    EXPECT_EQ(tst(f).cur_rate_bps, want[i]);
    EXPECT_EQ(tst(f).inc_stage, uint32_t(i + 1));
    EXPECT_EQ(tst(f).last_update_seq, f.snd_nxt);
  }
  // Capped at the line rate: 99.99e9 + 50e6 -> 100e9.
  tst(f).cur_rate_bps = 99'990'000'000;
  timely_ack(cc, f, h, 10'000);
  EXPECT_EQ(h.rates.back().rate, kLine);
}

TEST(Timely, HighRttDecrease) {
  // RTT 1000 µs > T_high: R = Rc·(1 − β(1 − T_high/rtt)) = 100e9 × (1 − 0.8 × 0.5) = 60e9 (the
  // double 0.6 × 100e9 rounds to exactly 6e10). Then RTT 2000 µs: c = 1 − 0.8 × 0.75 = 0.4, in double
  // 0.39999999999999991 -> 60e9 × c = 23,999,999,999.99... -> truncated 23,999,999,999.
  Timely cc(TimelyParams{});
  FakeHost h;
  Flow f = line_flow();
  cc.on_start(0, f, h);
  timely_ack(cc, f, h, 10'000);
  tst(f).inc_stage = 3;
  timely_ack(cc, f, h, 1'000'000);
  ASSERT_EQ(h.rates.size(), 1u);
  EXPECT_EQ(h.rates[0].rate, 60'000'000'000u);
  EXPECT_EQ(tst(f).inc_stage, 0u);  // a decrease resets the counter
  EXPECT_EQ(tst(f).last_rtt_ns, 1'000'000u);
  timely_ack(cc, f, h, 2'000'000);
  EXPECT_EQ(h.rates[1].rate, 23'999'999'999u);
  EXPECT_EQ(tst(f).cur_rate_bps, 23'999'999'999u);
}

TEST(Timely, NonPositiveGradientIncreases) {
  // lastRtt 200 µs, new RTT 150 µs (between T_low and T_high): rttDiff = 0.125 × 0 + 0.875 × (−50,000)
  // = −43,750 ns; gradient = −43,750/20,000 = −2.1875 ≤ 0 -> increase by AI: 100e9 capped.
  Timely cc(TimelyParams{});
  FakeHost h;
  Flow f = line_flow();
  cc.on_start(0, f, h);
  timely_ack(cc, f, h, 200'000);
  tst(f).cur_rate_bps = 40'000'000'000;
  timely_ack(cc, f, h, 150'000);
  ASSERT_EQ(h.rates.size(), 1u);
  EXPECT_EQ(h.rates[0].rate, 40'005'000'000u);
  EXPECT_EQ(tst(f).rtt_diff, -43'750.0);
  EXPECT_EQ(tst(f).inc_stage, 1u);
  // Equal RTTs: gradient = 0.125 × (−43,750)/20,000 < 0 -> increase again.
  timely_ack(cc, f, h, 150'000);
  EXPECT_EQ(h.rates[1].rate, 40'010'000'000u);
  EXPECT_EQ(tst(f).rtt_diff, 0.125 * -43'750.0);
}

TEST(Timely, PositiveGradientDecreasesToMinRate) {
  // RTTs 100 µs (first ACK), 110, 112, 200 µs:
  //  1. diff 10,000: rttDiff = 0.875 × 10,000 = 8750; gradient 0.4375; c = 1 − 0.8 × 0.4375 = 0.65
  //     (0.64999999999999991 in double): R = trunc(100e9 × c) = 64,999,999,999.
  //  2. diff 2000: rttDiff = 0.125 × 8750 + 0.875 × 2000 = 2843.75; gradient 0.1421875;
  //     c = 0.88625: R = trunc(64,999,999,999 × 0.88625) = trunc(57,606,249,999.1) = 57,606,249,999.
  //  3. diff 88,000: rttDiff = 0.125 × 2843.75 + 0.875 × 88,000 = 77,355.46875; gradient 3.8678;
  //     c = 1 − 3.094 < 0 -> 0: R = max(MIN_RATE, 0) = 100 Mb/s.
  Timely cc(TimelyParams{});
  FakeHost h;
  Flow f = line_flow();
  cc.on_start(0, f, h);
  timely_ack(cc, f, h, 100'000);
  timely_ack(cc, f, h, 110'000);
  ASSERT_EQ(h.rates.size(), 1u);
  EXPECT_EQ(h.rates[0].rate, 64'999'999'999u);
  EXPECT_EQ(tst(f).rtt_diff, 8750.0);
  timely_ack(cc, f, h, 112'000);
  EXPECT_EQ(h.rates[1].rate, 57'606'249'999u);
  EXPECT_EQ(tst(f).rtt_diff, 2843.75);
  timely_ack(cc, f, h, 200'000);
  EXPECT_EQ(h.rates[2].rate, 100'000'000u);
  EXPECT_EQ(tst(f).rtt_diff, 77'355.46875);
  EXPECT_EQ(tst(f).cur_rate_bps, 100'000'000u);
  EXPECT_EQ(tst(f).inc_stage, 0u);
}

TEST(Timely, NoFastReact) {
  // An ACK with seq ≤ lastUpdateSeq does nothing: no rate change, RTT not recorded.
  Timely cc(TimelyParams{});
  FakeHost h;
  Flow f = line_flow();
  cc.on_start(0, f, h);
  timely_ack(cc, f, h, 100'000);  // lastUpdateSeq = 10,000, lastRtt = 100 µs
  const TimelyState before = tst(f);
  h.t += 1 * kMs;
  f.snd_nxt += 10'000;
  cc.on_ack(0, f, tack(before.last_update_seq, h.t - 900 * kUs), h);  // RTT 900 µs > T_high
  cc.on_ack(0, f, tack(5000, h.t - 900 * kUs), h);
  EXPECT_TRUE(h.rates.empty());
  EXPECT_EQ(tst(f).last_update_seq, before.last_update_seq);
  EXPECT_EQ(tst(f).last_rtt_ns, 100'000u);
  EXPECT_EQ(tst(f).cur_rate_bps, kLine);
  EXPECT_EQ(f.rate_bps, kLine);
}

// ---------------------------------------------------------------------------------------------
// DCTCP
// ---------------------------------------------------------------------------------------------

TEST(Dctcp, FactoryReadsParameters) {
  SimConfig cfg = read_hpcc_config(std::string(WH_TEST_DATA) + "/refruns/hpcc-ring16-fattree-k4-1MB/config_dcqcn.txt");
  cfg.cc_mode = 8;
  auto cc = make_cc(cfg, nullptr);
  ASSERT_NE(dynamic_cast<Dctcp*>(cc.get()), nullptr);
  EXPECT_STREQ(cc->name(), "dctcp");
  EXPECT_EQ(cc->int_bytes(), 0u);
  const DctcpParams p;
  EXPECT_EQ(p.g, 1.0 / 16);
  EXPECT_EQ(p.rate_ai_bps, 1'000'000'000u);
  EXPECT_EQ(p.mtu, 1000u);
}

TEST(Dctcp, AlphaBatchesCwrAndAdditiveIncrease) {
  Dctcp cc(DctcpParams{});
  FakeHost h;
  Flow f = line_flow();
  cc.on_start(0, f, h);
  DctcpState& s = dst(f);
  EXPECT_EQ(s.alpha, 1.0);
  EXPECT_FALSE(s.cwr);
  f.rate_bps = 50'000'000'000;

  // 1. ACK 1000, snd_nxt 10,000, no mark: first batch: lastUpdateSeq = 10,000,
  //    batch = 10,000/1000 + 1 = 11; not in CWR and a new batch: R = 50e9 + 1e9 = 51e9.
  f.snd_nxt = 10'000;
  cc.on_ack(0, f, dack(1000, false), h);
  EXPECT_EQ(s.last_update_seq, 10'000u);
  EXPECT_EQ(s.batch_size, 11u);
  EXPECT_EQ(s.alpha, 1.0);
  ASSERT_EQ(h.rates.size(), 1u);
  EXPECT_EQ(h.rates[0].rate, 51'000'000'000u);
  EXPECT_FALSE(h.rates[0].retime);

  // 2. ACK 2000 marked, snd_nxt 12,000: count 1; outside CWR: R = 51e9 × (1 − 1/2) = 25.5e9,
  //    enter CWR until an ACK passes 12,000.
  f.snd_nxt = 12'000;
  cc.on_ack(0, f, dack(2000, true), h);
  EXPECT_EQ(s.ecn_count, 1u);
  EXPECT_TRUE(s.cwr);
  EXPECT_EQ(s.high_seq, 12'000u);
  ASSERT_EQ(h.rates.size(), 2u);
  EXPECT_EQ(h.rates[1].rate, 25'500'000'000u);

  // 3. ACK 3000 marked, ACK 4000 unmarked: in CWR, only counted (2).
  cc.on_ack(0, f, dack(3000, true), h);
  cc.on_ack(0, f, dack(4000, false), h);
  EXPECT_EQ(s.ecn_count, 2u);
  EXPECT_EQ(h.rates.size(), 2u);

  // 4. ACK 11,000 > 10,000, snd_nxt 20,000: α = (15/16)·1 + (1/16)·min(1, 2/11) = 167/176
  //    = 0.948863636; count reset; batch = (20,000 − 11,000)/1000 + 1 = 10; lastUpdateSeq 20,000.
  //    11,000 ≤ high_seq 12,000: still in CWR, so no increase.
  f.snd_nxt = 20'000;
  cc.on_ack(0, f, dack(11'000, false), h);
  EXPECT_DOUBLE_EQ(s.alpha, 167.0 / 176);
  EXPECT_EQ(s.ecn_count, 0u);
  EXPECT_EQ(s.batch_size, 10u);
  EXPECT_EQ(s.last_update_seq, 20'000u);
  EXPECT_TRUE(s.cwr);
  EXPECT_EQ(h.rates.size(), 2u);

  // 5. ACK 13,000 > 12,000: CWR ends; not a new batch (≤ 20,000): no increase.
  cc.on_ack(0, f, dack(13'000, false), h);
  EXPECT_FALSE(s.cwr);
  EXPECT_EQ(h.rates.size(), 2u);
  EXPECT_EQ(f.rate_bps, 25'500'000'000u);

  // 6. ACK 21,000 > 20,000, snd_nxt 30,000: α = (15/16)·(167/176) + 0 = 2505/2816 = 0.889559659;
  //    batch = 9000/1000 + 1 = 10; outside CWR, new batch: R = 25.5e9 + 1e9 = 26.5e9.
  f.snd_nxt = 30'000;
  cc.on_ack(0, f, dack(21'000, false), h);
  EXPECT_DOUBLE_EQ(s.alpha, 2505.0 / 2816);
  ASSERT_EQ(h.rates.size(), 3u);
  EXPECT_EQ(h.rates[2].rate, 26'500'000'000u);

  // 7. ACK 22,000 marked: R = 26.5e9 × (1 − α/2) = 26.5e9 × 3127/5632 = 14,713,334,517.04
  //    -> 14,713,334,517; CWR until 30,000.
  cc.on_ack(0, f, dack(22'000, true), h);
  ASSERT_EQ(h.rates.size(), 4u);
  EXPECT_EQ(h.rates[3].rate, 14'713'334'517u);
  EXPECT_TRUE(s.cwr);
  EXPECT_EQ(s.high_seq, 30'000u);

  // 8. Twelve more marked ACKs (duplicates of 25,000) in CWR: count 1 + 12 = 13 > batch 10.
  for (int i = 0; i < 12; ++i) cc.on_ack(0, f, dack(25'000, true), h);
  EXPECT_EQ(s.ecn_count, 13u);
  EXPECT_EQ(h.rates.size(), 4u);

  // 9. ACK 31,000 marked, snd_nxt 40,000: count 14; new batch: frac = min(1, 14/10) = 1:
  //    α = (15/16)·(2505/2816) + 1/16 = 40,391/45,056 = 0.896462180; batch 10; 31,000 > 30,000 ends
  //    CWR, and the mark cuts at once: R = 14,713,334,517 × (1 − α/2) = 8,118,360,545.98
  //    -> 8,118,360,545; CWR again (high_seq 40,000), so no increase for this batch.
  f.snd_nxt = 40'000;
  cc.on_ack(0, f, dack(31'000, true), h);
  EXPECT_DOUBLE_EQ(s.alpha, 40391.0 / 45056);
  EXPECT_EQ(s.ecn_count, 0u);
  ASSERT_EQ(h.rates.size(), 5u);
  EXPECT_EQ(h.rates[4].rate, 8'118'360'545u);
  EXPECT_TRUE(s.cwr);
  EXPECT_EQ(s.high_seq, 40'000u);
  EXPECT_EQ(h.timer_calls, 0u);
}

TEST(Dctcp, AdditiveIncreaseCappedAtLineRate) {
  // At line rate an unmarked new batch computes min(100e9, 100e9 + 1e9) = 100e9: no rate call.
  Dctcp cc(DctcpParams{});
  FakeHost h;
  Flow f = line_flow();
  cc.on_start(0, f, h);
  f.snd_nxt = 10'000;
  cc.on_ack(0, f, dack(1000, false), h);
  EXPECT_TRUE(h.rates.empty());
  f.rate_bps = 99'500'000'000;
  f.snd_nxt = 20'000;
  cc.on_ack(0, f, dack(11'000, false), h);
  ASSERT_EQ(h.rates.size(), 1u);
  EXPECT_EQ(h.rates[0].rate, kLine);
}

TEST(Dctcp, CutFlooredAtMinRate) {
  // R = 150 Mb/s, α = 1: 150e6 × 0.5 = 75e6 < MIN_RATE -> 100 Mb/s. The first ACK both starts
  // the first batch and cuts; CWR suppresses the increase.
  Dctcp cc(DctcpParams{});
  FakeHost h;
  Flow f = line_flow();
  cc.on_start(0, f, h);
  f.rate_bps = 150'000'000;
  f.snd_nxt = 5000;
  cc.on_ack(0, f, dack(1000, true), h);
  ASSERT_EQ(h.rates.size(), 1u);
  EXPECT_EQ(h.rates[0].rate, 100'000'000u);
  EXPECT_EQ(dst(f).batch_size, 6u);  // 5000/1000 + 1
  EXPECT_EQ(dst(f).ecn_count, 1u);   // counted before the batch check, kept for the next α update
  EXPECT_TRUE(dst(f).cwr);
}
