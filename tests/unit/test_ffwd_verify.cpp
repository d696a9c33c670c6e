// Verify mode's bookkeeping: which decisions are verified (fractions spread evenly, counts from the
// start) and the errors of a sample, by hand.
#include <gtest/gtest.h>

#include <vector>

#include "wormhole/ffwd/verify.h"

using namespace wh;

namespace {

std::vector<int> chosen(double setting, int decisions) {
  Verifier v(setting, 0.01);
  std::vector<int> out;
  for (int n = 0; n < decisions; ++n)
    if (v.choose(VerifySample::Kind::kFastForward)) out.push_back(n);
  return out;
}

}  // namespace

TEST(Verifier, FractionsAreSpreadEvenlyAndCountsTakeTheFirst) {
  EXPECT_TRUE(chosen(0, 10).empty());
  // n is verified iff ceil((n + 1) f) > ceil(n f): f = 1/4 picks 0, 4, 8 — the first decision too, so
  // a run with one decision verifies it (with floor, f = 1/2 and one skip verified none).
  EXPECT_EQ(chosen(0.25, 12), (std::vector<int>{0, 4, 8}));
  EXPECT_EQ(chosen(0.5, 6), (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(chosen(0.5, 1), (std::vector<int>{0}));
  EXPECT_EQ(chosen(1, 4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(chosen(3, 6), (std::vector<int>{0, 1, 2}));
  // The kinds are counted apart.
  Verifier v(2, 0.01);
  EXPECT_TRUE(v.choose(VerifySample::Kind::kFastForward));
  EXPECT_TRUE(v.choose(VerifySample::Kind::kReplay));
  EXPECT_TRUE(v.choose(VerifySample::Kind::kReplay));
  EXPECT_FALSE(v.choose(VerifySample::Kind::kReplay));
  EXPECT_TRUE(v.choose(VerifySample::Kind::kFastForward));
}

TEST(Verifier, ErrorIsTheSumOfAbsoluteDifferencesOverTheSimulatedBytes) {
  Verifier v(1, 0.05);
  // Two flows predicted at 0.01 and 0.02 bytes/ps from snd_una 1000 and 5000, over 1 µs (1e6 ps):
  // predicted 10,000 and 20,000 B; simulated 11,000 and 19,000 B.
  const size_t i = v.begin(VerifySample::Kind::kFastForward, 7, 2 * kUs, 3 * kUs, {4, 9}, {0.01, 0.02}, {1000, 5000});
  v.tick(i, 3 * kUs, {12'000, 24'000});
  v.end(i, true);
  const std::vector<size_t> closed = v.close(nullptr);
  ASSERT_EQ(closed, std::vector<size_t>{i});
  const VerifySample& s = v.sample(i);
  EXPECT_DOUBLE_EQ(s.predicted[0], 10'000);
  EXPECT_DOUBLE_EQ(s.predicted[1], 20'000);
  EXPECT_DOUBLE_EQ(s.simulated[0], 11'000);
  EXPECT_DOUBLE_EQ(s.simulated[1], 19'000);
  EXPECT_DOUBLE_EQ(s.error, 2'000.0 / 30'000);      // (1,000 + 1,000) / 30,000
  EXPECT_DOUBLE_EQ(s.signed_error, 0.0);            // (−1,000 + 1,000) / 30,000
  EXPECT_TRUE(s.failed);                            // 6.7 % > 5 %
  EXPECT_TRUE(s.cut);
  EXPECT_EQ(s.end - s.start, 1 * kUs);
  EXPECT_TRUE(v.close(nullptr).empty());            // each sample closes once
}

TEST(Verifier, ADifferenceWithinOnePacketIsNoError) {
  Verifier v(1, 0.01, 9000);
  // Over a 6-µs span a flow is predicted 300,000 B and acknowledges 294,000 B: 6,000 B, less than one
  // 9,000-B packet apart — no error (without the resolution, 2.0 % and failed).
  const size_t i = v.begin(VerifySample::Kind::kReplay, 1, 0, 2000 * kUs, {0}, {0.05}, {0});
  v.tick(i, 6 * kUs, {294'000});
  v.end(i, true);
  v.close(nullptr);
  EXPECT_DOUBLE_EQ(v.sample(i).error, 0.0);
  EXPECT_DOUBLE_EQ(v.sample(i).signed_error, 0.0);  // nor a bias: a mean of these stays below its max
  EXPECT_FALSE(v.sample(i).failed);
  // 20,000 B apart: 11,000 B beyond the packet.
  const size_t j = v.begin(VerifySample::Kind::kReplay, 1, 0, 2000 * kUs, {0}, {0.05}, {0});
  v.tick(j, 6 * kUs, {280'000});
  v.end(j, true);
  v.close(nullptr);
  EXPECT_NEAR(v.sample(j).error, 11'000.0 / 280'000, 1e-12);
  EXPECT_NEAR(v.sample(j).signed_error, 11'000.0 / 280'000, 1e-12);
  EXPECT_TRUE(v.sample(j).failed);
}

TEST(Verifier, NothingMovedWhileProgressWasPredictedIsAFullError) {
  // A partition paused for the whole span: 300,000 B predicted, 0 acknowledged. (It used to count as
  // 0 % and pass, for want of a denominator.)
  Verifier v(1, 0.01, 9000);
  const size_t i = v.begin(VerifySample::Kind::kFastForward, 1, 0, 2000 * kUs, {0}, {0.05}, {0});
  v.tick(i, 6 * kUs, {0});
  v.end(i, false);
  v.close(nullptr);
  EXPECT_DOUBLE_EQ(v.sample(i).error, 1.0);
  EXPECT_DOUBLE_EQ(v.sample(i).signed_error, 1.0);
  EXPECT_TRUE(v.sample(i).failed);
  // Within one packet of nothing is nothing.
  const size_t j = v.begin(VerifySample::Kind::kFastForward, 1, 0, 2000 * kUs, {0}, {0.001}, {0});
  v.tick(j, 6 * kUs, {0});
  v.end(j, false);
  v.close(nullptr);
  EXPECT_DOUBLE_EQ(v.sample(j).error, 0.0);
  EXPECT_FALSE(v.sample(j).failed);
}

TEST(Verifier, WithinTheBoundPasses) {
  Verifier v(1, 0.05);
  const size_t i = v.begin(VerifySample::Kind::kReplay, 1, 0, kUs, {0}, {0.1}, {0});
  v.tick(i, kUs, {102'000});
  v.end(i, false);  // predicted 100,000 B, simulated 102,000 B: 1.96 %
  v.close(nullptr);
  EXPECT_NEAR(v.sample(i).error, 2'000.0 / 102'000, 1e-12);
  EXPECT_NEAR(v.sample(i).signed_error, -2'000.0 / 102'000, 1e-12);
  EXPECT_FALSE(v.sample(i).failed);
}

TEST(Verifier, ACutSampleIsComparedUpToItsLastTick) {
  // A flow predicted at 0.05 bytes/ps (400 Gb/s) from snd_una 0, ticks every µs: 50,000 B at 1 µs,
  // 100,000 B at 2 µs; it ends at 2.5 µs with 125,000 B, and the next tick (3 µs) takes it out of its
  // partition. Compared up to the 3-µs tick it read 150,000 B predicted against 125,000 B: 16.7 %
  // off and failed, for a flow that ran exactly as predicted. Up to its last tick it is exact.
  Verifier v(1, 0.01, 1000);
  const size_t i = v.begin(VerifySample::Kind::kFastForward, 1, 0, 10 * kUs, {0}, {0.05}, {0});
  v.tick(i, 1 * kUs, {50'000});
  v.tick(i, 2 * kUs, {100'000});
  v.end(i, true);
  v.close(nullptr);
  const VerifySample& s = v.sample(i);
  EXPECT_EQ(s.end, 2 * kUs);
  EXPECT_TRUE(s.compared());
  EXPECT_DOUBLE_EQ(s.predicted[0], 100'000);
  EXPECT_DOUBLE_EQ(s.simulated[0], 100'000);
  EXPECT_DOUBLE_EQ(s.error, 0.0);
  EXPECT_FALSE(s.failed);
  // Cut before its first tick: nothing to compare, no error, not failed.
  const size_t j = v.begin(VerifySample::Kind::kFastForward, 1, 5 * kUs, 10 * kUs, {0}, {0.05}, {0});
  v.end(j, true);
  v.close(nullptr);
  EXPECT_FALSE(v.sample(j).compared());
  EXPECT_DOUBLE_EQ(v.sample(j).error, 0.0);
  EXPECT_FALSE(v.sample(j).failed);
}

TEST(Verifier, APlannedEndBetweenTicksIsInterpolated) {
  // A replay predicts its recorded average, 0.052 bytes/ps, over its planned 2.5 µs. The flow ramps:
  // 0.04 bytes/ps in the first µs, 0.06 after, so it has made 130,000 B at 2.5 µs (0.052 × 2.5 µs) and
  // 160,000 B at the 3-µs tick. Compared up to that tick it read 156,000 B predicted against 160,000:
  // 1.9 % off and failed. At the planned end, interpolated between the 2-µs and 3-µs ticks, it is exact.
  Verifier v(1, 0.01, 1000);
  const size_t i = v.begin(VerifySample::Kind::kReplay, 1, 0, 2500 * kNs, {0}, {0.052}, {0});
  v.tick(i, 1 * kUs, {40'000});
  v.tick(i, 2 * kUs, {100'000});
  v.tick(i, 3 * kUs, {160'000});
  v.end(i, false);
  v.close(nullptr);
  const VerifySample& s = v.sample(i);
  EXPECT_EQ(s.end, 2500 * kNs);
  EXPECT_FALSE(s.cut);
  EXPECT_NEAR(s.predicted[0], 130'000, 1e-6);
  EXPECT_NEAR(s.simulated[0], 130'000, 1e-6);
  EXPECT_NEAR(s.error, 0.0, 1e-12);
  EXPECT_FALSE(s.failed);
}
