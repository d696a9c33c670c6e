// RateWindow: hand-computed windows, the strict steadiness threshold, runs longer than the
// window, and a brute-force cross-check on pseudo-random runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <numeric>

#include "wormhole/ffwd/rate_window.h"

using namespace wh;

TEST(RateWindow, EmptyWindowIsZero) {
  RateWindow w;
  w.reset(4);
  EXPECT_EQ(w.count(), 0u);
  EXPECT_FALSE(w.full());
  EXPECT_EQ(w.max(), 0u);
  EXPECT_EQ(w.min(), 0u);
  EXPECT_EQ(w.mean(), 0.0);
  EXPECT_FALSE(w.steady(1.0));
}

TEST(RateWindow, ConstantSeriesIsSteady) {
  RateWindow w;
  w.reset(10);
  w.append(1000, 5);
  EXPECT_EQ(w.count(), 5u);
  EXPECT_FALSE(w.full());
  w.append(1000, 5);
  EXPECT_EQ(w.count(), 10u);
  EXPECT_TRUE(w.full());
  EXPECT_EQ(w.max(), 1000u);
  EXPECT_EQ(w.min(), 1000u);
  EXPECT_EQ(w.mean(), 1000.0);
  EXPECT_TRUE(w.steady(0.01));
  w.append(1000, 7);
  EXPECT_EQ(w.count(), 10u);
  EXPECT_TRUE(w.steady(1e-9));
}

TEST(RateWindow, NotFullIsNotSteady) {
  RateWindow w;
  w.reset(8);
  w.append(500, 7);  // one sample short
  EXPECT_EQ(w.max(), 500u);
  EXPECT_EQ(w.mean(), 500.0);
  EXPECT_FALSE(w.steady(1.0));
  w.append(500, 1);
  EXPECT_TRUE(w.steady(1.0));
}

TEST(RateWindow, ZeroRatesAreNotSteady) {
  RateWindow w;
  w.reset(3);
  w.append(0, 5);
  EXPECT_TRUE(w.full());
  EXPECT_EQ(w.mean(), 0.0);
  EXPECT_FALSE(w.steady(1.0));
}

TEST(RateWindow, SpreadAtThetaIsNotSteadyBelowIs) {
  RateWindow w;
  w.reset(4);
  w.append(90, 2);
  w.append(110, 2);  // 90 90 110 110: mean 100, spread 20 -> dR = 0.2 exactly as a double
  EXPECT_EQ(w.mean(), 100.0);
  EXPECT_EQ(w.max() - w.min(), 20u);
  EXPECT_FALSE(w.steady(0.2));                      // strict
  EXPECT_TRUE(w.steady(std::nextafter(0.2, 1.0)));  // the next double up passes
  RateWindow v;
  v.reset(4);
  v.append(91, 2);
  v.append(109, 2);  // mean 100, spread 18 -> 0.18
  EXPECT_TRUE(v.steady(0.2));
  EXPECT_FALSE(v.steady(0.18));
}

TEST(RateWindow, ZeroCountAppendIsNoOp) {
  RateWindow w;
  w.reset(2);
  w.append(7, 1);
  w.append(99, 0);
  EXPECT_EQ(w.count(), 1u);
  EXPECT_EQ(w.max(), 7u);
  EXPECT_EQ(w.min(), 7u);
  w.append(3, 1);
  w.append(1000, 0);
  EXPECT_EQ(w.max(), 7u);
  EXPECT_EQ(w.min(), 3u);
  EXPECT_EQ(w.mean(), 5.0);
}

TEST(RateWindow, PartialEvictionOfARun) {
  RateWindow w;
  w.reset(4);
  w.append(10, 3);
  w.append(20, 2);  // 10 10 10 20 20 -> window 10 10 20 20
  EXPECT_EQ(w.count(), 4u);
  EXPECT_EQ(w.max(), 20u);
  EXPECT_EQ(w.min(), 10u);
  EXPECT_EQ(w.mean(), 15.0);
  w.append(30, 1);  // 10 20 20 30
  EXPECT_EQ(w.min(), 10u);
  EXPECT_EQ(w.max(), 30u);
  EXPECT_EQ(w.mean(), 20.0);
  w.append(30, 1);  // 20 20 30 30: the 10-run is gone entirely
  EXPECT_EQ(w.min(), 20u);
  EXPECT_EQ(w.mean(), 25.0);
  w.append(5, 3);  // 30 5 5 5
  EXPECT_EQ(w.max(), 30u);
  EXPECT_EQ(w.min(), 5u);
  EXPECT_EQ(w.mean(), 11.25);
}

TEST(RateWindow, MaxDropsOutOfWindow) {
  RateWindow w;
  w.reset(3);
  w.append(50, 1);
  w.append(10, 1);
  w.append(20, 1);  // 50 10 20
  EXPECT_EQ(w.max(), 50u);
  EXPECT_EQ(w.min(), 10u);
  w.append(30, 1);  // 10 20 30
  EXPECT_EQ(w.max(), 30u);
  EXPECT_EQ(w.min(), 10u);
  EXPECT_EQ(w.mean(), 20.0);
  w.append(5, 1);  // 20 30 5
  EXPECT_EQ(w.max(), 30u);
  EXPECT_EQ(w.min(), 5u);
  w.append(5, 1);  // 30 5 5
  EXPECT_EQ(w.max(), 30u);
  w.append(5, 1);  // 5 5 5
  EXPECT_EQ(w.max(), 5u);
  EXPECT_EQ(w.min(), 5u);
  EXPECT_EQ(w.mean(), 5.0);
}

TEST(RateWindow, RunLongerThanWindow) {
  const uint64_t l = 8;
  RateWindow w;
  w.reset(l);
  w.append(5, 3);
  w.append(7, 10 * l);  // pushes everything else out
  EXPECT_EQ(w.count(), l);
  EXPECT_EQ(w.max(), 7u);
  EXPECT_EQ(w.min(), 7u);
  EXPECT_EQ(w.mean(), 7.0);
  w.append(3, 1);  // 7 x7, 3: sum 52
  EXPECT_EQ(w.max(), 7u);
  EXPECT_EQ(w.min(), 3u);
  EXPECT_EQ(w.mean(), 6.5);
  // A run of 10^15 grid points at 1 Tb/s costs O(1) and leaves an exact mean.
  const uint64_t big = 1'000'000'000'000ull;
  w.append(big, 1'000'000'000'000'000ull);
  EXPECT_EQ(w.count(), l);
  EXPECT_EQ(w.max(), big);
  EXPECT_EQ(w.min(), big);
  EXPECT_EQ(w.mean(), static_cast<double>(big));
  EXPECT_TRUE(w.steady(1e-12));
  w.append(big - 8, 1);  // sum = 8*big - 8 -> mean big - 1
  EXPECT_EQ(w.mean(), static_cast<double>(big - 1));
  EXPECT_EQ(w.min(), big - 8);
}

TEST(RateWindow, ResetEmpties) {
  RateWindow w;
  w.reset(2);
  w.append(100, 5);
  w.reset(3);
  EXPECT_EQ(w.count(), 0u);
  EXPECT_EQ(w.max(), 0u);
  w.append(4, 1);
  w.append(8, 2);
  EXPECT_TRUE(w.full());
  EXPECT_EQ(w.min(), 4u);
  EXPECT_EQ(w.mean(), 20.0 / 3.0);
}

TEST(RateWindow, WindowOfOneSample) {
  RateWindow w;
  w.reset(1);
  w.append(9, 1);
  EXPECT_TRUE(w.steady(1e-12));
  w.append(4, 3);
  w.append(6, 1);
  EXPECT_EQ(w.max(), 6u);
  EXPECT_EQ(w.min(), 6u);
  EXPECT_EQ(w.mean(), 6.0);
}

// Every append is checked against the last l samples kept explicitly.
TEST(RateWindow, MatchesBruteForceOnRandomRuns) {
  for (uint64_t l : {1u, 2u, 3u, 5u, 8u, 17u, 64u, 200u}) {
    uint64_t s = 12345 + l;  // fixed LCG seed per window length
    auto next = [&s]() {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      return s >> 33;
    };
    RateWindow w;
    w.reset(l);
    std::deque<uint64_t> last;
    for (int step = 0; step < 3000; ++step) {
      const uint64_t r = next();
      uint64_t value;
      switch (r % 4) {
        case 0: value = (next() % 8) * 1000; break;            // few distinct values: many ties
        case 1: value = next() % ((1ull << 40) - 1); break;    // full range
        default: value = 100'000 + next() % 50; break;         // nearly steady
      }
      const uint64_t count = (r / 4) % 7 == 0 ? 0 : next() % (2 * l + 3);
      w.append(value, count);
      for (uint64_t i = 0; i < std::min(count, l); ++i) last.push_back(value);
      while (last.size() > l) last.pop_front();

      ASSERT_EQ(w.count(), last.size()) << "l=" << l << " step=" << step;
      ASSERT_EQ(w.full(), last.size() == l);
      if (last.empty()) {
        ASSERT_EQ(w.max(), 0u);
        continue;
      }
      const uint64_t mx = *std::max_element(last.begin(), last.end());
      const uint64_t mn = *std::min_element(last.begin(), last.end());
      const uint64_t sum = std::accumulate(last.begin(), last.end(), uint64_t{0});
      const double mean = static_cast<double>(sum) / static_cast<double>(last.size());
      ASSERT_EQ(w.max(), mx) << "l=" << l << " step=" << step;
      ASSERT_EQ(w.min(), mn) << "l=" << l << " step=" << step;
      ASSERT_EQ(w.mean(), mean) << "l=" << l << " step=" << step;
      const bool steady = last.size() == l && mean > 0 && static_cast<double>(mx - mn) / mean < 0.001;
      ASSERT_EQ(w.steady(0.001), steady) << "l=" << l << " step=" << step;
    }
  }
}
