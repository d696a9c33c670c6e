// HPCC (docs/network-model.md §13.2) driven directly through a fake CcHost, with every update computed by
// hand. Parameters are the reference run `run.py hp --hpai 50` at 100 Gb/s: η 0.95, MI_THRESH 0,
// RATE_AI 50 Mb/s, MIN_RATE 1000 Mb/s, FAST_REACT 1, MULTI_RATE 0, SAMPLE_FEEDBACK 0, INT_MULTI 4.
// The flow has line rate 100 Gb/s, W = maxBdp = 104,000 B and T = maxRtt = 8320 ns.
//
// Quantisation with INT_MULTI 4: tx bytes in units of 128 × 4 = 512 B (20 bits, wrapping), queue
// lengths in units of 80 × 4 = 320 B (17 bits), time in ns (24 bits, wrapping).
#include <gtest/gtest.h>

#include "recording_cc_host.h"

#include <initializer_list>
#include <vector>

#include "wormhole/cc/factory.h"
#include "wormhole/cc/hpcc.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/net/cc.h"
#include "wormhole/net/flow.h"

using namespace wh;

namespace {

constexpr uint64_t kLine = 100'000'000'000ull;  // 100 Gb/s
constexpr uint64_t kAi = 50'000'000;            // RATE_AI 50 Mb/s
constexpr uint64_t kMin = 1'000'000'000;        // MIN_RATE 1000 Mb/s
constexpr uint64_t kT = 8320;                   // ns
constexpr uint32_t kMulti = 4;

using FakeHost = test::RecordingCcHost;

/// run.py "hp --hpai 50" at 100 Gb/s.
HpccParams hp_params() {
  HpccParams p;
  p.eta = 0.95;
  p.max_stage = 0;
  p.rate_ai_bps = kAi;
  p.min_rate_bps = kMin;
  p.fast_react = true;
  p.multi_rate = false;
  p.sample_feedback = false;
  p.int_multi = kMulti;
  return p;
}

Flow hp_flow() {
  Flow f;
  f.rate_bps = f.max_rate_bps = kLine;
  f.win = 104'000;        // maxBdp
  f.base_rtt = kT * kNs;  // maxRtt = 8320 ns
  f.var_win = true;
  return f;
}

/// One hop's INT record as a switch writes it: (now ns, port tx bytes, port queue bytes, rate).
struct Rec {
  uint64_t ns, tx, qlen;
  uint64_t rate = kLine;
};

Packet ack(uint64_t seq, std::initializer_list<Rec> hops) {
  Packet p;
  p.type = PktType::Ack;
  p.seq = seq;
  for (const Rec& r : hops) p.ih.push(r.ns, r.tx, r.qlen, r.rate, kMulti);
  return p;
}

HpccState& st(Flow& f) { return std::get<HpccState>(f.cc); }

bool same_hop(const IntHop& a, const IntHop& b) {
  return a.time == b.time && a.bytes == b.bytes && a.qlen == b.qlen && a.rate_bps == b.rate_bps;
}

// The reference records of the single-hop examples. r0 at t = 1000 ns, tx 1000 B (1 unit of
// 512 B), queue 30,000 B (93 units of 320 B = 29,760 B); r1 4160 ns later (τ = T/2), tx + 51,700 B
// = 52,700 B (102 units), queue 50,000 B (156 units = 49,920 B).
const Rec r0{1000, 1000, 30'000};
const Rec r1{1000 + 4160, 52'700, 50'000};

// The full update from r0 to r1 (derived in FullUpdateOneHop):
// u = 2081/1625, U = 1853/1625, R = trunc(95e9 · 1625/1853) + 50e6 = 83,360,847,274 bit/s.
constexpr uint64_t kR1 = 83'360'847'274ull;

/// Starts a flow and feeds it the first ACK (r0) with snd_nxt = 10,000: lastUpdateSeq = 10,000.
void first_ack(Hpcc& cc, Flow& f, FakeHost& h, const Rec& r = r0) {
  cc.on_start(0, f, h);
  f.snd_nxt = 10'000;
  cc.on_ack(0, f, ack(1000, {r}), h);
}

}  // namespace

TEST(Hpcc, FactoryReadsHpParametersFromTheRingConfig) {
  const SimConfig cfg =
      read_hpcc_config(std::string(WH_TEST_DATA) + "/refruns/hpcc-ring16-fattree-k4-1MB/config_hpcc.txt");
  auto cc = make_cc(cfg, nullptr);
  auto* h = dynamic_cast<Hpcc*>(cc.get());
  ASSERT_NE(h, nullptr);
  EXPECT_STREQ(h->name(), "hpcc");
  EXPECT_EQ(h->int_mode(), IntMode::Hpcc);
  EXPECT_EQ(h->int_bytes(), 42u);  // 5 × 8 + 2: 1090-B data packets
  const HpccParams& p = h->params();
  EXPECT_DOUBLE_EQ(p.eta, 0.95);
  EXPECT_EQ(p.max_stage, 0u);
  EXPECT_EQ(p.rate_ai_bps, kAi);
  EXPECT_EQ(p.min_rate_bps, kMin);
  EXPECT_TRUE(p.fast_react);
  EXPECT_FALSE(p.multi_rate);
  EXPECT_FALSE(p.sample_feedback);
  EXPECT_EQ(p.int_multi, 4u);
}

TEST(Hpcc, StartAtLineRate) {
  Hpcc cc(hp_params());
  FakeHost h;
  Flow f = hp_flow();
  cc.on_start(0, f, h);
  const HpccState& s = st(f);
  EXPECT_EQ(s.cur_rate_bps, kLine);
  EXPECT_EQ(s.inc_stage, 0u);
  EXPECT_EQ(s.u, 1.0);
  EXPECT_EQ(s.last_update_seq, 0u);
  for (const auto& hs : s.hops) EXPECT_EQ(hs.rc_bps, kLine);
  EXPECT_TRUE(h.rates.empty());
  EXPECT_EQ(h.timer_calls, 0u);
}

TEST(Hpcc, IntHopQuantisation) {
  IntHop a;
  a.set(1000, 1000, 30'000, kLine, kMulti);
  EXPECT_EQ(a.time, 1000u);
  EXPECT_EQ(a.bytes, 1u);       // 1000 / 512 = 1.95 -> 1
  EXPECT_EQ(a.qlen, 93u);       // 30,000 / 320 = 93.75 -> 93
  EXPECT_EQ(a.qlen_bytes(kMulti), 29'760u);
  EXPECT_EQ(a.rate_bps, kLine);
  IntHop b;
  b.set(5160, 52'700, 50'000, kLine, kMulti);
  EXPECT_EQ(b.bytes, 102u);     // 52,700 / 512 = 102.93 -> 102
  EXPECT_EQ(b.qlen, 156u);      // 50,000 / 320 = 156.25 -> 156
  EXPECT_EQ(b.ns_since(a), 4160u);
  EXPECT_EQ(b.bytes_since(a, kMulti), 101u * 512);  // 51,712 B, not the true 51,700 B
}

TEST(Hpcc, FirstAckStoresIntOnly) {
  Hpcc cc(hp_params());
  FakeHost h;
  Flow f = hp_flow();
  cc.on_start(0, f, h);
  f.snd_nxt = 10'000;
  const Packet a = ack(1000, {r0});
  cc.on_ack(0, f, a, h);
  const HpccState& s = st(f);
  EXPECT_EQ(s.last_update_seq, 10'000u);  // = snd_nxt
  EXPECT_TRUE(same_hop(s.hop[0], a.ih.hop[0]));
  EXPECT_EQ(s.cur_rate_bps, kLine);
  EXPECT_EQ(s.u, 1.0);
  EXPECT_EQ(s.inc_stage, 0u);
  EXPECT_TRUE(h.rates.empty());
  EXPECT_EQ(f.rate_bps, kLine);
}

TEST(Hpcc, FullUpdateOneHop) {
  // τ = 5160 − 1000 = 4160 ns; Δbytes = (102 − 1) × 512 = 51,712 B.
  // txRate = 51,712 × 8 / 4160e-9 = 99,446,153,846.15 bit/s; txRate/B = 0.99446153846 (= 1616/1625).
  // queue: min(49,920, 29,760) = 29,760 B; term = 29,760 × 100e9 / (100e9 × 104,000) = 0.28615384615
  //   (= 465/1625). u = 2081/1625 = 1.28061538461.
  // U = (1 × (8320 − 4160) + u × 4160) / 8320 = (1 + u)/2 = 1853/1625 = 1.14030769230.
  // c = U/η = 1.20032388663 ≥ 1: R = Rc/c + AI = trunc(100e9 × 0.95 × 1625/1853) + 50e6
  //   = trunc(83,310,847,274.69) + 50,000,000 = 83,360,847,274 bit/s; within [1e9, 100e9].
  Hpcc cc(hp_params());
  FakeHost h;
  Flow f = hp_flow();
  first_ack(cc, f, h);
  f.snd_nxt = 30'000;
  const Packet a = ack(12'000, {r1});  // 12,000 > lastUpdateSeq 10,000: full update
  cc.on_ack(0, f, a, h);
  const HpccState& s = st(f);
  EXPECT_DOUBLE_EQ(s.u, 1853.0 / 1625);
  ASSERT_EQ(h.rates.size(), 1u);
  EXPECT_EQ(h.rates[0].rate, kR1);
  EXPECT_TRUE(h.rates[0].retime);  // HPCC re-times the pacing (ChangeRate)
  EXPECT_EQ(f.rate_bps, kR1);
  // Committed on a full update: Rc, incStage (MI: 0) and lastUpdateSeq = snd_nxt.
  EXPECT_EQ(s.cur_rate_bps, kR1);
  EXPECT_EQ(s.inc_stage, 0u);
  EXPECT_EQ(s.last_update_seq, 30'000u);
  EXPECT_TRUE(same_hop(s.hop[0], a.ih.hop[0]));  // stored record replaced
  // The window follows the rate (VAR_WIN): 104,000 × 83,360,847,274 / 1e11 = 86,695.28 -> 86,695 B.
  EXPECT_EQ(f.window(), 86'695u);
}

TEST(Hpcc, FastReactChangesRateButNotRc) {
  // After the full update (Rc = 83,360,847,274, U = 1.14030769230, lastUpdateSeq = 30,000):
  // ACK 20,000 ≤ 30,000 -> fast react with r2 = (t 5992, tx 62,700 B, queue 40,000 B).
  //   τ = 5992 − 5160 = 832 ns (T/10); tx units 62,700/512 = 122 -> Δ = 20 × 512 = 10,240 B;
  //   txRate/B = 10,240 × 8 / 832e-9 / 100e9 = 0.98461538461;
  //   queue units 40,000/320 = 125 (exactly 40,000 B); min(40,000, 49,920) = 40,000 B;
  //   term = 40,000/104,000 = 0.38461538461; u = 1.36923076923 (= 89/65).
  //   U = (U × (8320 − 832) + u × 832)/8320 = 0.9 × 1.14030769230 + 0.1 × 1.36923076923 = 1.1632.
  //   c = 1.1632/0.95 = 1.22442105263; R = trunc(83,360,847,274/c) + 50e6
  //     = trunc(68,081,847,412.7) + 50,000,000 = 68,131,847,412 bit/s.
  // Rc, incStage and lastUpdateSeq stay; the INT record and U are updated.
  Hpcc cc(hp_params());
  FakeHost h;
  Flow f = hp_flow();
  first_ack(cc, f, h);
  f.snd_nxt = 30'000;
  cc.on_ack(0, f, ack(12'000, {r1}), h);
  const Rec r2{5992, 62'700, 40'000};
  f.snd_nxt = 35'000;
  const Packet a2 = ack(20'000, {r2});
  cc.on_ack(0, f, a2, h);
  HpccState& s = st(f);
  ASSERT_EQ(h.rates.size(), 2u);
  EXPECT_EQ(h.rates[1].rate, 68'131'847'412u);
  EXPECT_TRUE(h.rates[1].retime);
  EXPECT_EQ(f.rate_bps, 68'131'847'412u);
  EXPECT_EQ(s.cur_rate_bps, kR1);       // not committed
  EXPECT_EQ(s.inc_stage, 0u);
  EXPECT_EQ(s.last_update_seq, 30'000u);  // unchanged by a fast react
  EXPECT_DOUBLE_EQ(s.u, 1.1632);
  EXPECT_TRUE(same_hop(s.hop[0], a2.ih.hop[0]));

  // Next a full update (31,000 > 30,000) with r3 = (t 6824, tx 72,700 B, queue 40,000 B): it
  // starts from the committed Rc, not from the fast-react rate.
  //   τ = 832; units 72,700/512 = 141 -> Δ = 19 × 512 = 9728 B; txRate/B = 9728 × 8/832/100 = 0.93538461538;
  //   queue min(40,000, 40,000)/104,000 = 0.38461538461; u = 1.32;
  //   U = 0.9 × 1.1632 + 0.1 × 1.32 = 1.17888; c = 1.24092631578;
  //   R = trunc(83,360,847,274/c) + 50e6 = 67,176,307,096 + 50,000,000 = 67,226,307,096 bit/s.
  const Rec r3{6824, 72'700, 40'000};
  f.snd_nxt = 40'000;
  cc.on_ack(0, f, ack(31'000, {r3}), h);
  ASSERT_EQ(h.rates.size(), 3u);
  EXPECT_EQ(h.rates[2].rate, 67'226'307'096u);
  EXPECT_EQ(s.cur_rate_bps, 67'226'307'096u);
  EXPECT_EQ(s.last_update_seq, 40'000u);
  EXPECT_DOUBLE_EQ(s.u, 1.17888);
}

TEST(Hpcc, NoFastReactWithoutFastReactFlag) {
  HpccParams p = hp_params();
  p.fast_react = false;
  Hpcc cc(p);
  FakeHost h;
  Flow f = hp_flow();
  first_ack(cc, f, h);
  f.snd_nxt = 30'000;
  cc.on_ack(0, f, ack(12'000, {r1}), h);
  ASSERT_EQ(h.rates.size(), 1u);
  const HpccState before = st(f);
  // ACK 20,000 ≤ lastUpdateSeq 30,000: nothing at all, not even the INT record is stored.
  cc.on_ack(0, f, ack(20'000, {Rec{5992, 62'700, 40'000}}), h);
  EXPECT_EQ(h.rates.size(), 1u);
  const HpccState& s = st(f);
  EXPECT_TRUE(same_hop(s.hop[0], before.hop[0]));
  EXPECT_EQ(s.u, before.u);
  EXPECT_EQ(s.cur_rate_bps, kR1);
  EXPECT_EQ(s.last_update_seq, 30'000u);
  EXPECT_EQ(f.rate_bps, kR1);
}

TEST(Hpcc, AdditiveIncreaseWithMaxStage) {
  // MI_THRESH 5: while c < 1 and incStage < 5 the rate grows by RATE_AI per full update.
  // Each ACK: τ = 10,000 ns > T (capped at T for the EWMA), Δbytes = 61 × 512 = 31,232 B
  // (25 Gb/s × 10 µs = 31,250 B, quantised), empty queues.
  //   u = 31,232 × 8 / 10,000e-9 / 100e9 = 0.249856; U = (U·0 + u·8320)/8320 = u; c = 0.263 < 1.
  // Rc = 50e9 -> 50.05e9 -> 50.1e9 -> 50.15e9 -> 50.2e9 -> 50.25e9 (stage 1..5), then at stage 5
  // (≥ MI_THRESH): R = trunc(50.25e9/0.263) + AI = 1.9e11 -> capped at the line rate, stage 0;
  // then c < 1 and stage 0 < 5 again: R = 100e9 + AI -> capped at 100e9, stage 1.
  HpccParams p = hp_params();
  p.max_stage = 5;
  Hpcc cc(p);
  FakeHost h;
  Flow f = hp_flow();
  cc.on_start(0, f, h);
  f.snd_nxt = 10'000;
  uint64_t t = 1000, tx = 0;
  cc.on_ack(0, f, ack(1000, {Rec{t, tx, 0}}), h);
  HpccState& s = st(f);
  s.cur_rate_bps = 50'000'000'000;
  f.rate_bps = 50'000'000'000;
  const uint64_t want_rate[] = {50'050'000'000, 50'100'000'000, 50'150'000'000, 50'200'000'000,
                                50'250'000'000, kLine, kLine};
  const uint32_t want_stage[] = {1, 2, 3, 4, 5, 0, 1};
  for (int i = 0; i < 7; ++i) {
    t += 10'000;
    tx += 31'232;
    f.snd_nxt += 10'000;
    cc.on_ack(0, f, ack(s.last_update_seq + 1000, {Rec{t, tx, 0}}), h);
    ASSERT_EQ(h.rates.size(), size_t(i + 1));
    EXPECT_EQ(h.rates[i].rate, want_rate[i]) << i;
    EXPECT_EQ(s.cur_rate_bps, want_rate[i]) << i;
    EXPECT_EQ(s.inc_stage, want_stage[i]) << i;
    EXPECT_NEAR(s.u, 0.249856, 1e-15);
    EXPECT_EQ(s.last_update_seq, f.snd_nxt);
  }
}

TEST(Hpcc, RateFlooredAtMinRate) {
  // Both records show a 5,000,000-B queue (15,625 units of 320 B exactly) and no bytes sent,
  // τ = T = 8320: u = 0 + 5,000,000/104,000 = 48.0769230769 (= 625/13); U = u (τ = T).
  // c = 50.6072874494; R = 100e9/c + AI: exactly 1,976,000,000 in rationals (100e9 × 12.35/625),
  // 1,975,999,999.99... in double, truncated to 1,975,999,999 (as the reference's double does);
  // + 50e6 = 2,025,999,999.
  // Next full update, same u: R = trunc(2,025,999,999/c) + 50e6 = 40,033,759 + 50e6 = 90,033,759
  // < MIN_RATE -> 1,000,000,000.
  Hpcc cc(hp_params());
  FakeHost h;
  Flow f = hp_flow();
  first_ack(cc, f, h, Rec{1000, 0, 5'000'000});
  f.snd_nxt = 20'000;
  cc.on_ack(0, f, ack(11'000, {Rec{1000 + kT, 0, 5'000'000}}), h);
  ASSERT_EQ(h.rates.size(), 1u);
  EXPECT_EQ(h.rates[0].rate, 2'025'999'999u);
  EXPECT_DOUBLE_EQ(st(f).u, 625.0 / 13);
  f.snd_nxt = 30'000;
  cc.on_ack(0, f, ack(21'000, {Rec{1000 + 2 * kT, 0, 5'000'000}}), h);
  ASSERT_EQ(h.rates.size(), 2u);
  EXPECT_EQ(h.rates[1].rate, kMin);
  EXPECT_EQ(st(f).cur_rate_bps, kMin);
}

TEST(Hpcc, TwoHopsTakesTheMaxUtilisation) {
  // MULTI_RATE 0 with two hops: hop 0 as in FullUpdateOneHop (u = 1.2806), hop 1 idle
  // (Δ = 20 × 512 = 10,240 B in 4160 ns, u = 10,240 × 8/4160/100 = 0.19692): the max is hop 0's,
  // with its τ = 4160, so the result is FullUpdateOneHop's: R = 83,360,847,274.
  Hpcc cc(hp_params());
  FakeHost h;
  Flow f = hp_flow();
  cc.on_start(0, f, h);
  f.snd_nxt = 10'000;
  cc.on_ack(0, f, ack(1000, {r0, Rec{1000, 0, 0}}), h);
  f.snd_nxt = 30'000;
  cc.on_ack(0, f, ack(12'000, {r1, Rec{5160, 10'240, 0}}), h);
  ASSERT_EQ(h.rates.size(), 1u);
  EXPECT_EQ(h.rates[0].rate, kR1);
  EXPECT_DOUBLE_EQ(st(f).u, 1853.0 / 1625);
  // Both stored records replaced.
  EXPECT_EQ(st(f).hop[1].bytes, 20u);
  EXPECT_EQ(st(f).hop[0].bytes, 102u);
}

TEST(Hpcc, MultiRatePerHopState) {
  // MULTI_RATE 1, two hops, same records as TwoHopsTakesTheMaxUtilisation.
  //   hop 0: U0 = (1 + 1.2806153846)/2 = 1.1403076923, c0 = 1.2003 -> R0 = 83,360,847,274 (as above).
  //   hop 1: u1 = 0.1969230769, U1 = (1 + u1)/2 = 0.5984615385, c1 = 0.6299595142 < 1 but
  //          incStage 0 ≥ MI_THRESH 0 -> R1 = trunc(100e9/c1) + AI = 158,790,359,897 -> capped 100e9.
  //   R = min(R0, R1) = 83,360,847,274. Full update: Rc_0 = R0, Rc_1 = 100e9 committed.
  HpccParams p = hp_params();
  p.multi_rate = true;
  Hpcc cc(p);
  FakeHost h;
  Flow f = hp_flow();
  cc.on_start(0, f, h);
  f.snd_nxt = 10'000;
  cc.on_ack(0, f, ack(1000, {r0, Rec{1000, 0, 0}}), h);
  f.snd_nxt = 30'000;
  cc.on_ack(0, f, ack(12'000, {r1, Rec{5160, 10'240, 0}}), h);
  HpccState& s = st(f);
  ASSERT_EQ(h.rates.size(), 1u);
  EXPECT_EQ(h.rates[0].rate, kR1);
  EXPECT_TRUE(h.rates[0].retime);
  EXPECT_DOUBLE_EQ(s.hops[0].u, 1853.0 / 1625);
  EXPECT_DOUBLE_EQ(s.hops[1].u, (1 + 0.19692307692307692) / 2);
  EXPECT_EQ(s.hops[0].rc_bps, kR1);
  EXPECT_EQ(s.hops[1].rc_bps, kLine);
  EXPECT_EQ(s.hops[0].inc_stage, 0u);
  EXPECT_EQ(s.hops[1].inc_stage, 0u);
  EXPECT_EQ(s.u, 1.0);  // the single-rate U is not used
  EXPECT_EQ(s.last_update_seq, 30'000u);

  // Fast react (20,000 ≤ 30,000): hop 0 repeats its last record (τ = 0: skipped, see
  // ZeroTauHopIsSkipped), hop 1 gets r = (t 5992, tx 62,700 B, queue 40,000 B) relative to
  // (5160, 10,240 B (20 units), 0):
  //   τ = 832, units 62,700/512 = 122 -> Δ = 102 × 512 = 52,224 B -> txRate/B = 52,224 × 8/832/100
  //   = 5.0215384615; queue min(40,000, 0) = 0; u1 = 5.0215384615;
  //   U1 = 0.9 × 0.5984615385 + 0.1 × 5.0215384615 = 1.0407692308; c1 = 1.0955465587;
  //   R1 = trunc(Rc_1/c1) + AI = trunc(100e9/1.0955465587) + 50e6 = 91,278,640,059 + 50e6
  //      = 91,328,640,059.
  //   hop 0 not updated: R = min(Rc_0, R1) = min(83,360,847,274, 91,328,640,059) = 83,360,847,274.
  // Per-hop Rc are not committed on a fast react; U1 is.
  f.snd_nxt = 35'000;
  cc.on_ack(0, f, ack(20'000, {r1, Rec{5992, 62'700, 40'000}}), h);
  ASSERT_EQ(h.rates.size(), 2u);
  EXPECT_EQ(h.rates[1].rate, kR1);
  EXPECT_NEAR(s.hops[1].u, 1.0407692307692308, 1e-15);
  EXPECT_DOUBLE_EQ(s.hops[0].u, 1853.0 / 1625);
  EXPECT_EQ(s.hops[1].rc_bps, kLine);
  EXPECT_EQ(s.hops[0].rc_bps, kR1);
  EXPECT_EQ(s.last_update_seq, 30'000u);

  // Full update (31,000 > 30,000), both hops idle 832 ns later (no bytes, empty queues):
  //   hop 0: u = 0, U0 = 0.9 × 1.1403076923 = 1.0262769231, c0 = 1.0802914980,
  //          R0 = trunc(83,360,847,274/c0) + AI = 77,165,142,399 + 50e6 = 77,215,142,399;
  //   hop 1: u = 0, U1 = 0.9 × 1.0407692308 = 0.9366923077, c1 = 0.9859919028 < 1, stage 0 ≥ 0:
  //          R1 = trunc(100e9/c1) + AI > 100e9 -> 100e9.
  //   R = 77,215,142,399; committed Rc_0 = R0, Rc_1 = 100e9.
  f.snd_nxt = 40'000;
  cc.on_ack(0, f, ack(31'000, {Rec{5992, 52'700, 0}, Rec{6824, 62'700, 0}}), h);
  ASSERT_EQ(h.rates.size(), 3u);
  EXPECT_EQ(h.rates[2].rate, 77'215'142'399u);
  EXPECT_EQ(s.hops[0].rc_bps, 77'215'142'399u);
  EXPECT_EQ(s.hops[1].rc_bps, kLine);
  EXPECT_EQ(s.last_update_seq, 40'000u);
}

TEST(Hpcc, MoreThanFiveHopsIgnored) {
  // An ACK whose INT counted 6 hops (the 6th record overwrote the 1st) carries no usable
  // feedback: no rate change, no stored record, U unchanged; a full update still advances
  // lastUpdateSeq to snd_nxt (as the reference does outside its nhop check).
  Hpcc cc(hp_params());
  FakeHost h;
  Flow f = hp_flow();
  first_ack(cc, f, h);
  const HpccState before = st(f);
  Packet a = ack(12'000, {r1, r1, r1, r1, r1, Rec{5160, 90'000, 1'000'000}});
  ASSERT_EQ(a.ih.nhop, 6u);
  f.snd_nxt = 30'000;
  cc.on_ack(0, f, a, h);
  const HpccState& s = st(f);
  EXPECT_TRUE(h.rates.empty());
  EXPECT_TRUE(same_hop(s.hop[0], before.hop[0]));
  EXPECT_EQ(s.u, 1.0);
  EXPECT_EQ(s.cur_rate_bps, kLine);
  EXPECT_EQ(s.last_update_seq, 30'000u);
  // A fast react with 6 hops changes nothing either.
  a.seq = 20'000;
  cc.on_ack(0, f, a, h);
  EXPECT_TRUE(h.rates.empty());
  EXPECT_EQ(s.last_update_seq, 30'000u);
  // Five hops are fine: a normal update follows.
  f.snd_nxt = 40'000;
  cc.on_ack(0, f, ack(31'000, {r1}), h);
  ASSERT_EQ(h.rates.size(), 1u);
  EXPECT_EQ(h.rates[0].rate, kR1);
}

TEST(Hpcc, TimeAndBytesWrap) {
  // FullUpdateOneHop shifted so both counters wrap between the two records:
  //   time: r0 at 5 × 2^24 + 2^24 − 1000 ns (field 16,776,216), r1 4160 ns later (field 3160):
  //         τ = 3160 + 2^24 − 16,776,216 = 4160;
  //   bytes: r0 at (2^20 − 50) × 512 + 488 B (field 1,048,526, remainder 488 as 1000 = 512 + 488),
  //          r1 51,700 B later: 488 + 51,700 = 52,188 = 101 × 512 + 476 -> field 2^20 − 50 + 101 − 2^20 = 51;
  //          Δ = 51 + 2^20 − 1,048,526 = 101 units = 51,712 B.
  // Same u, U and R = 83,360,847,274 as without wrap.
  const uint64_t t0 = 5ull * (1u << 24) + (1u << 24) - 1000;
  const uint64_t b0 = ((1ull << 20) - 50) * 512 + 488;
  Hpcc cc(hp_params());
  FakeHost h;
  Flow f = hp_flow();
  first_ack(cc, f, h, Rec{t0, b0, 30'000});
  EXPECT_EQ(st(f).hop[0].time, (1u << 24) - 1000);
  EXPECT_EQ(st(f).hop[0].bytes, (1u << 20) - 50);
  f.snd_nxt = 30'000;
  const Packet a = ack(12'000, {Rec{t0 + 4160, b0 + 51'700, 50'000}});
  EXPECT_EQ(a.ih.hop[0].time, 3160u);
  EXPECT_EQ(a.ih.hop[0].bytes, 51u);
  cc.on_ack(0, f, a, h);
  ASSERT_EQ(h.rates.size(), 1u);
  EXPECT_EQ(h.rates[0].rate, kR1);
  EXPECT_DOUBLE_EQ(st(f).u, 1853.0 / 1625);
}

TEST(Hpcc, QueueLengthKeeps17Bits) {
  // 17-bit queue field in 320-B units: 2^17 units = 41,943,040 B wraps to 0; (2^17 + 3) units -> 3.
  IntHop a;
  a.set(0, 0, (1ull << 17) * 320, kLine, kMulti);
  EXPECT_EQ(a.qlen, 0u);
  a.set(0, 0, ((1ull << 17) + 3) * 320 + 319, kLine, kMulti);
  EXPECT_EQ(a.qlen, 3u);
  EXPECT_EQ(a.qlen_bytes(kMulti), 960u);
}

TEST(Hpcc, Hop800GUsesItsExactRate) {
  // A deliberate difference from the reference: an 800 Gb/s hop is stored with rate_bps = 800e9
  // and u uses B = 800e9 (the reference's 3-bit rate index has no 800 G entry and reads 25 G).
  // Hop: τ = 4160, Δbytes = 406 × 512 = 207,872 B (≈ 400 Gb/s), queues 100,000 B (312 units =
  // 99,840 B) in both records. Flow: NIC 100 G, W = 104,000, Rc set to 40e9.
  //   txRate = 207,872 × 8 / 4160e-9 = 399,753,846,153.8; /800e9 = 0.49969230769;
  //   queue: 99,840 × 100e9 / (800e9 × 104,000) = 0.12; u = 0.61969230769;
  //   U = (1 + u)/2 = 0.80984615385; c = 0.85246963563 < 1, stage 0 ≥ MI_THRESH 0 -> MI:
  //   R = trunc(40e9/c) + AI = 46,922,492,401 + 50e6 = 46,972,492,401.
  // (Read as 25 G: u = 15.99 + 3.84 = 19.83, U = 10.415, R = 3,698,556,825.)
  constexpr uint64_t k800G = 800'000'000'000ull;
  Hpcc cc(hp_params());
  FakeHost h;
  Flow f = hp_flow();
  first_ack(cc, f, h, Rec{1000, 0, 100'000, k800G});
  EXPECT_EQ(st(f).hop[0].rate_bps, k800G);
  st(f).cur_rate_bps = 40'000'000'000;
  f.rate_bps = 40'000'000'000;
  f.snd_nxt = 30'000;
  cc.on_ack(0, f, ack(12'000, {Rec{5160, 207'872, 100'000, k800G}}), h);
  ASSERT_EQ(h.rates.size(), 1u);
  EXPECT_NEAR(st(f).u, 0.80984615384615385, 1e-15);
  EXPECT_EQ(h.rates[0].rate, 46'972'492'401u);
  EXPECT_EQ(st(f).cur_rate_bps, 46'972'492'401u);
}

TEST(Hpcc, ZeroTauHopIsSkipped) {
  // Two records of a hop at the same ns: the reference divides 0 bytes by 0 s (NaN rate); we
  // skip the hop. With no hop updated there is no rate change, but a full update still commits
  // lastUpdateSeq.
  Hpcc cc(hp_params());
  FakeHost h;
  Flow f = hp_flow();
  first_ack(cc, f, h);
  f.snd_nxt = 30'000;
  cc.on_ack(0, f, ack(12'000, {r0}), h);
  EXPECT_TRUE(h.rates.empty());
  EXPECT_EQ(st(f).u, 1.0);
  EXPECT_EQ(st(f).cur_rate_bps, kLine);
  EXPECT_EQ(st(f).last_update_seq, 30'000u);
}

TEST(Hpcc, SampleFeedbackSkipsEmptyQueueHopsOnFastReact) {
  HpccParams p = hp_params();
  p.sample_feedback = true;
  Hpcc cc(p);
  FakeHost h;
  Flow f = hp_flow();
  first_ack(cc, f, h);
  f.snd_nxt = 30'000;
  cc.on_ack(0, f, ack(12'000, {r1}), h);  // full update, as FullUpdateOneHop
  ASSERT_EQ(h.rates.size(), 1u);
  EXPECT_EQ(h.rates[0].rate, kR1);
  // Fast react with an empty queue in the record: skipped (no rate change, record not stored).
  cc.on_ack(0, f, ack(20'000, {Rec{5992, 62'700, 0}}), h);
  EXPECT_EQ(h.rates.size(), 1u);
  EXPECT_EQ(st(f).hop[0].time, 5160u);
  // Fast react with a queue (FastReactChangesRateButNotRc's r2): applied, 68,131,847,412.
  cc.on_ack(0, f, ack(20'000, {Rec{5992, 62'700, 40'000}}), h);
  ASSERT_EQ(h.rates.size(), 2u);
  EXPECT_EQ(h.rates[1].rate, 68'131'847'412u);
}
