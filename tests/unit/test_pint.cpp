// HPCC-PINT (docs/network-model.md §13.5): the log-scale utilisation code (the reference's Pint class)
// and the sender's sampled HPCC update, driven through a fake CcHost. Parameters as run.py "hp"
// at 100 Gb/s (η 0.95, MI_THRESH 0, RATE_AI 50 Mb/s, MIN_RATE 1000 Mb/s), PINT_LOG_BASE 1.05.
#include <gtest/gtest.h>

#include "recording_cc_host.h"

#include <cmath>
#include <vector>

#include "wormhole/cc/factory.h"
#include "wormhole/cc/hpcc.h"
#include "wormhole/core/rng.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/net/cc.h"
#include "wormhole/net/flow.h"
#include "wormhole/net/int_header.h"

using namespace wh;

namespace {

constexpr uint64_t kLine = 100'000'000'000ull;
constexpr uint64_t kAi = 50'000'000;

using FakeHost = test::RecordingCcHost;

HpccParams pint_params() {
  HpccParams p;
  p.eta = 0.95;
  p.max_stage = 0;
  p.rate_ai_bps = kAi;
  p.min_rate_bps = 1'000'000'000;
  p.fast_react = true;
  p.multi_rate = false;
  p.int_multi = 4;
  p.pint_log_base = 1.05;
  p.pint_prob = 1.0;
  p.seed = 7;
  return p;
}

Flow line_flow() {
  Flow f;
  f.rate_bps = f.max_rate_bps = kLine;
  f.win = 104'000;
  f.base_rtt = 8320 * kNs;
  return f;
}

Packet pack(uint64_t seq, uint16_t power) {
  Packet p;
  p.type = PktType::Ack;
  p.seq = seq;
  p.ih.pint_power = power;
  return p;
}

HpccPintState& st(Flow& f) { return std::get<HpccPintState>(f.cc); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// codec
// ---------------------------------------------------------------------------------------------

TEST(PintCodec, DecodeIsPowerOverMaxConcurrent) {
  PintCodec c;
  c.log_base = 1.05;
  EXPECT_EQ(c.decode(0), 1.0 / 512);
  EXPECT_DOUBLE_EQ(c.decode(1), 1.05 / 512);
  EXPECT_DOUBLE_EQ(c.decode(2), 1.1025 / 512);
  EXPECT_DOUBLE_EQ(c.decode(128), std::pow(1.05, 128) / 512);  // 1.00684 (u ≈ 1)
  EXPECT_DOUBLE_EQ(c.decode(134), std::pow(1.05, 134) / 512);  // 1.34926
  // Monotone.
  for (uint16_t p = 1; p < 300; ++p) EXPECT_GT(c.decode(p), c.decode(p - 1));
  c.log_base = 1.1;
  EXPECT_DOUBLE_EQ(c.decode(10), std::pow(1.1, 10) / 512);
}

TEST(PintCodec, SmallestUtilisationEncodesToZero) {
  // u·512 rounded up to 1 (also u = 0): power log_b(1) = 0 exactly; floor = ceil, and the upper
  // bound is moved to b^1, so the probability of rounding up is (1 − 1)/(b − 1) = 0.
  PintCodec c;
  Rng rng(1, 2);
  for (double u : {0.0, 1e-9, 1.0 / 512}) {
    for (int i = 0; i < 100; ++i) EXPECT_EQ(c.encode(u, rng), 0u) << u;
  }
}

TEST(PintCodec, EncodeRoundsBetweenNeighbouringPowers) {
  // u = 0.73: ui = ceil(0.73 × 512) = ceil(373.76) = 374; log_1.05(374) = 121.42316, so the code
  // is 121 or 122 (1.05^121 = 366.3576, 1.05^122 = 384.6755), 122 with probability
  // (374 − 366.3576)/(384.6755 − 366.3576) = 0.41721.
  // The expected decoded value is (366.3576 + 0.41721 × 18.3179)/512 = 374/512 = 0.73046875,
  // within 0.07 % of u (the ceil to 1/512 steps). Over 10,000 draws (fixed seed) the mean is
  // within 1 % of u, and the count of 122s within 5 σ of 4172 (σ = √(10,000·p·(1−p)) = 49.3).
  PintCodec c;
  Rng rng(2024, 1);
  const double u = 0.73;
  const double lower = std::pow(1.05, 121), upper = std::pow(1.05, 122);
  const double p_up = (374 - lower) / (upper - lower);
  EXPECT_NEAR(p_up, 0.41721, 1e-5);
  const int n = 10'000;
  double sum = 0;
  int ups = 0;
  for (int i = 0; i < n; ++i) {
    const uint16_t code = c.encode(u, rng);
    ASSERT_TRUE(code == 121 || code == 122) << code;
    ups += code == 122;
    sum += c.decode(code);
  }
  const double mean = sum / n;
  EXPECT_NEAR(mean, u, 0.01 * u);
  EXPECT_NEAR(mean, 374.0 / 512, 0.001);  // unbiased for ui/512: σ_mean ≈ 18.3 × 0.49/512/100 = 0.00018
  const double sigma = std::sqrt(n * p_up * (1 - p_up));
  EXPECT_NEAR(ups, n * p_up, 5 * sigma);
}

TEST(PintCodec, MeanOfDecodedTracksUOverARange) {
  // For several utilisations the mean of 10,000 decoded draws is within 1 % of u.
  PintCodec c;
  Rng rng(99, 3);
  for (double u : {0.2, 0.5, 0.95, 1.0, 1.3, 3.7, 20.0}) {
    double sum = 0;
    for (int i = 0; i < 10'000; ++i) sum += c.decode(c.encode(u, rng));
    EXPECT_NEAR(sum / 10'000, u, 0.01 * u) << u;
  }
}

// ---------------------------------------------------------------------------------------------
// HpccPint
// ---------------------------------------------------------------------------------------------

TEST(HpccPint, FactoryBuildsPintWithTwoByteField) {
  SimConfig cfg = read_hpcc_config(std::string(WH_TEST_DATA) + "/refruns/hpcc-ring16-fattree-k4-1MB/config_hpcc.txt");
  cfg.cc_mode = 10;
  auto cc = make_cc(cfg, nullptr);
  ASSERT_NE(dynamic_cast<HpccPint*>(cc.get()), nullptr);
  EXPECT_STREQ(cc->name(), "hpcc-pint");
  EXPECT_EQ(cc->int_mode(), IntMode::Pint);
  EXPECT_EQ(cc->int_bytes(), 2u);
}

TEST(HpccPint, FirstAckRecordsThenUpdates) {
  HpccPint cc(pint_params());
  FakeHost h;
  Flow f = line_flow();
  cc.on_start(0, f, h);
  EXPECT_EQ(st(f).cur_rate_bps, kLine);
  EXPECT_EQ(st(f).last_update_seq, 0u);
  // First ACK: lastUpdateSeq = snd_nxt, nothing else.
  f.snd_nxt = 10'000;
  cc.on_ack(0, f, pack(1000, 134), h);
  EXPECT_TRUE(h.rates.empty());
  EXPECT_EQ(st(f).last_update_seq, 10'000u);
  EXPECT_EQ(st(f).cur_rate_bps, kLine);

  // Full update (12,000 > 10,000), power 134: U = 1.05^134/512 = 1.34926145673; c = U/0.95 =
  // 1.42027521761 ≥ 1: R = trunc(100e9/c) + 50e6 = 70,408,888,897 + 50,000,000 = 70,458,888,897.
  f.snd_nxt = 30'000;
  cc.on_ack(0, f, pack(12'000, 134), h);
  ASSERT_EQ(h.rates.size(), 1u);
  EXPECT_EQ(h.rates[0].rate, 70'458'888'897u);
  EXPECT_TRUE(h.rates[0].retime);
  EXPECT_EQ(st(f).cur_rate_bps, 70'458'888'897u);
  EXPECT_EQ(st(f).inc_stage, 0u);
  EXPECT_EQ(st(f).last_update_seq, 30'000u);

  // Fast react (20,000 ≤ 30,000), power 134 again: R = trunc(70,458,888,897/c) + AI
  // = 49,609,320,801 + 50e6 = 49,659,320,801; Rc and lastUpdateSeq unchanged.
  f.snd_nxt = 35'000;
  cc.on_ack(0, f, pack(20'000, 134), h);
  ASSERT_EQ(h.rates.size(), 2u);
  EXPECT_EQ(h.rates[1].rate, 49'659'320'801u);
  EXPECT_EQ(st(f).cur_rate_bps, 70'458'888'897u);
  EXPECT_EQ(st(f).last_update_seq, 30'000u);

  // Full update (31,000), power 120: U = 1.05^120/512 = 0.68146872201, c = 0.71733549685 < 1,
  // but incStage 0 ≥ MI_THRESH 0 -> multiplicative: R = trunc(70,458,888,897/c) + AI
  // = 98,223,061,881 + 50e6 = 98,273,061,881 (from Rc, not from the fast-react rate).
  f.snd_nxt = 40'000;
  cc.on_ack(0, f, pack(31'000, 120), h);
  ASSERT_EQ(h.rates.size(), 3u);
  EXPECT_EQ(h.rates[2].rate, 98'273'061'881u);
  EXPECT_EQ(st(f).cur_rate_bps, 98'273'061'881u);
  EXPECT_EQ(st(f).last_update_seq, 40'000u);
}

TEST(HpccPint, AdditiveIncreaseBelowTargetWithMaxStage) {
  // MI_THRESH 2, power 120 (c = 0.717 < 1): +AI twice (stages 1, 2), then multiplicative
  // (stage 2 ≥ 2): trunc(Rc/c) + AI, capped at the line rate.
  HpccParams p = pint_params();
  p.max_stage = 2;
  HpccPint cc(p);
  FakeHost h;
  Flow f = line_flow();
  cc.on_start(0, f, h);
  f.snd_nxt = 10'000;
  cc.on_ack(0, f, pack(1000, 120), h);
  st(f).cur_rate_bps = 60'000'000'000;
  f.snd_nxt = 20'000;
  cc.on_ack(0, f, pack(11'000, 120), h);
  EXPECT_EQ(st(f).cur_rate_bps, 60'050'000'000u);
  EXPECT_EQ(st(f).inc_stage, 1u);
  f.snd_nxt = 30'000;
  cc.on_ack(0, f, pack(21'000, 120), h);
  EXPECT_EQ(st(f).cur_rate_bps, 60'100'000'000u);
  EXPECT_EQ(st(f).inc_stage, 2u);
  // 60.1e9/0.71733549685 = 83.78e9 + 50e6.
  f.snd_nxt = 40'000;
  cc.on_ack(0, f, pack(31'000, 120), h);
  const double c = std::pow(1.05, 120) / 512 / 0.95;
  EXPECT_EQ(st(f).cur_rate_bps, static_cast<uint64_t>(60'100'000'000.0 / c) + kAi);
  EXPECT_EQ(st(f).inc_stage, 0u);
  // Power 0 (U = 1/512, c < 1) at stage 0 < 2: additive, Rc + AI, stage 1.
  const uint64_t rc = st(f).cur_rate_bps;
  f.snd_nxt = 50'000;
  cc.on_ack(0, f, pack(41'000, 0), h);
  EXPECT_EQ(st(f).cur_rate_bps, rc + kAi);
  EXPECT_EQ(st(f).inc_stage, 1u);
  // Bounds: at stage 2, power 0: R = Rc × 486.4 + AI -> line rate; power 250 (U = 387): -> MIN_RATE.
  st(f).inc_stage = 2;
  f.snd_nxt = 55'000;
  cc.on_ack(0, f, pack(51'000, 0), h);
  EXPECT_EQ(st(f).cur_rate_bps, kLine);
  EXPECT_EQ(st(f).inc_stage, 0u);
  f.snd_nxt = 60'000;
  cc.on_ack(0, f, pack(56'000, 250), h);
  EXPECT_EQ(st(f).cur_rate_bps, 1'000'000'000u);
}

TEST(HpccPint, SamplingWithHalfProbability) {
  // PINT_PROB 0.5: an ACK is used when (rng % 65536) < 32768. Of 10,000 ACKs about half are
  // sampled: the first sampled one only records, each later one changes the rate, so
  // sampled = rate calls + 1. Binomial(10,000, 0.5): mean 5000, σ = 50; accept ±5σ.
  HpccParams p = pint_params();
  p.pint_prob = 0.5;
  HpccPint cc(p);
  FakeHost h;
  Flow f = line_flow();
  cc.on_start(3, f, h);
  const int n = 10'000;
  for (int i = 0; i < n; ++i) {
    f.snd_nxt = 1000ull * (i + 2);
    cc.on_ack(3, f, pack(1000ull * (i + 1), 128), h);
  }
  const double sampled = double(h.rates.size() + 1);
  EXPECT_NEAR(sampled, 5000.0, 5 * 50.0);
  EXPECT_GT(st(f).last_update_seq, 0u);
  // The same seed and flow id give the same draws: a second run is identical.
  HpccPint cc2(p);
  FakeHost h2;
  Flow f2 = line_flow();
  cc2.on_start(3, f2, h2);
  for (int i = 0; i < n; ++i) {
    f2.snd_nxt = 1000ull * (i + 2);
    cc2.on_ack(3, f2, pack(1000ull * (i + 1), 128), h2);
  }
  EXPECT_EQ(h2.rates.size(), h.rates.size());
}

TEST(HpccPint, UnsampledAckDoesNothing) {
  // PINT_PROB 0: no ACK is ever used, not even to record the first one.
  HpccParams p = pint_params();
  p.pint_prob = 0.0;
  HpccPint cc(p);
  FakeHost h;
  Flow f = line_flow();
  cc.on_start(0, f, h);
  f.snd_nxt = 10'000;
  for (int i = 0; i < 100; ++i) cc.on_ack(0, f, pack(1000 + i, 200), h);
  EXPECT_TRUE(h.rates.empty());
  EXPECT_EQ(st(f).last_update_seq, 0u);
  EXPECT_EQ(f.rate_bps, kLine);
}
