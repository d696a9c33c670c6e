// The RED-like ECN marking curve at dequeue (docs/network-model.md §11.3), with the thresholds of the
// reference runs at 100 Gb/s: KMIN 400 KB, KMAX 1600 KB, PMAX 0.2 (K in units of 1000 B).
#include <gtest/gtest.h>

#include "wormhole/net/port.h"

using namespace wh;

TEST(EcnCurve, RampBetweenKminAndKmax) {
  const uint64_t kmin = 400'000, kmax = 1'600'000;
  const double pmax = 0.2;
  EXPECT_EQ(ecn_mark_probability(0, kmin, kmax, pmax), 0.0);
  EXPECT_EQ(ecn_mark_probability(kmin, kmin, kmax, pmax), 0.0);  // q > KMIN is required
  // q = 1,000,000 B: 0.2 × (1,000,000 − 400,000) / 1,200,000 = 0.1
  EXPECT_DOUBLE_EQ(ecn_mark_probability(1'000'000, kmin, kmax, pmax), 0.1);
  // q = 700,000 B: 0.2 × 300,000 / 1,200,000 = 0.05
  EXPECT_DOUBLE_EQ(ecn_mark_probability(700'000, kmin, kmax, pmax), 0.05);
  EXPECT_DOUBLE_EQ(ecn_mark_probability(kmax, kmin, kmax, pmax), 0.2);  // at KMAX: PMAX, not 1
  EXPECT_EQ(ecn_mark_probability(kmax + 1, kmin, kmax, pmax), 1.0);   // above KMAX: always
}

TEST(EcnCurve, DctcpStepWhenKminEqualsKmax) {
  // run.py's DCTCP: KMIN = KMAX = 30·B/10 KB (300 KB at 100 G), PMAX 1: a step at K.
  const uint64_t k = 300'000;
  EXPECT_EQ(ecn_mark_probability(k, k, k, 1.0), 0.0);
  EXPECT_EQ(ecn_mark_probability(k + 1, k, k, 1.0), 1.0);
}

TEST(EcnCurve, DrawsFollowTheCurve) {
  // The switch marks when a uniform draw of the port's stream is below the probability: over
  // 100,000 draws at q = 1 MB (p = 0.1) the fraction is 0.1 within 5 standard deviations
  // (sqrt(0.1·0.9/100000) = 0.00095).
  Rng rng(1, 7);
  const double p = ecn_mark_probability(1'000'000, 400'000, 1'600'000, 0.2);
  int marks = 0;
  for (int i = 0; i < 100000; ++i) marks += rng.uniform() < p;
  EXPECT_NEAR(marks / 100000.0, 0.1, 5 * 0.00095);
}
