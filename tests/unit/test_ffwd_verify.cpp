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
  v.end(i, 3 * kUs, true, {12'000, 24'000});
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
  v.end(i, 6 * kUs, true, {294'000});
  v.close(nullptr);
  EXPECT_DOUBLE_EQ(v.sample(i).error, 0.0);
  EXPECT_DOUBLE_EQ(v.sample(i).signed_error, 0.0);  // nor a bias: a mean of these stays below its max
  EXPECT_FALSE(v.sample(i).failed);
  // 20,000 B apart: 11,000 B beyond the packet.
  const size_t j = v.begin(VerifySample::Kind::kReplay, 1, 0, 2000 * kUs, {0}, {0.05}, {0});
  v.end(j, 6 * kUs, true, {280'000});
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
  v.end(i, 6 * kUs, false, {0});
  v.close(nullptr);
  EXPECT_DOUBLE_EQ(v.sample(i).error, 1.0);
  EXPECT_DOUBLE_EQ(v.sample(i).signed_error, 1.0);
  EXPECT_TRUE(v.sample(i).failed);
  // Within one packet of nothing is nothing.
  const size_t j = v.begin(VerifySample::Kind::kFastForward, 1, 0, 2000 * kUs, {0}, {0.001}, {0});
  v.end(j, 6 * kUs, false, {0});
  v.close(nullptr);
  EXPECT_DOUBLE_EQ(v.sample(j).error, 0.0);
  EXPECT_FALSE(v.sample(j).failed);
}

TEST(Verifier, WithinTheBoundPasses) {
  Verifier v(1, 0.05);
  const size_t i = v.begin(VerifySample::Kind::kReplay, 1, 0, kUs, {0}, {0.1}, {0});
  v.end(i, kUs, false, {102'000});  // predicted 100,000 B, simulated 102,000 B: 1.96 %
  v.close(nullptr);
  EXPECT_NEAR(v.sample(i).error, 2'000.0 / 102'000, 1e-12);
  EXPECT_NEAR(v.sample(i).signed_error, -2'000.0 / 102'000, 1e-12);
  EXPECT_FALSE(v.sample(i).failed);
}
