// KeySelection, KeySample, BracketSelection and the order keys (wormhole/io/rank_select.h): the keys a
// sort puts at each rank, for series with ties, a wide range of values, and histograms summed over
// several parts (as ranks do); a sample that misleads the bracket is told, not answered.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <vector>

#include "wormhole/io/rank_select.h"

namespace wh {
namespace {

TEST(OrderKey, OrdersDoublesAsNumbers) {
  const double ascending[] = {-std::numeric_limits<double>::infinity(), -1e300, -1.0, -1e-310, -0.0, 0.0, 1e-310,
                              1e-300, 1.0, 1.0000000000000002, 1.5, 2.0, 1e300,
                              std::numeric_limits<double>::infinity()};
  for (size_t i = 0; i + 1 < std::size(ascending); ++i)
    EXPECT_LT(order_key(ascending[i]), order_key(ascending[i + 1])) << ascending[i] << " " << ascending[i + 1];
  for (double x : ascending) {
    EXPECT_EQ(from_order_key(order_key(x)), x);
    EXPECT_EQ(std::signbit(from_order_key(order_key(x))), std::signbit(x));
  }
}

// Selects every query over `series` split into `parts` (each part counted apart, the histograms summed
// between passes, as ranks sum them).
std::vector<uint64_t> select(const std::vector<std::vector<uint64_t>>& series, const std::vector<std::pair<unsigned, uint64_t>>& q,
                             size_t parts) {
  const size_t n = series[0].size();
  std::vector<KeySelection> part;
  for (size_t p = 0; p < parts; ++p) part.emplace_back(q);
  KeySelection& total = part[0];
  while (!total.done()) {
    for (size_t p = 0; p < parts; ++p)
      for (size_t i = p * n / parts; i < (p + 1) * n / parts; ++i) {
        std::vector<uint64_t> keys;
        for (const auto& s : series) keys.push_back(s[i]);
        part[p].count(keys.data());
      }
    // As MPI_Allreduce(MPI_SUM) in place: every part then holds the sum, and each narrows alike.
    for (size_t p = 1; p < parts; ++p)
      for (size_t j = 0; j < total.histograms().size(); ++j) total.histograms()[j] += part[p].histograms()[j];
    for (size_t p = 1; p < parts; ++p) part[p].histograms() = total.histograms();
    for (KeySelection& k : part) k.next();
  }
  for (const KeySelection& k : part) EXPECT_EQ(k.keys(), total.keys());
  return total.keys();
}

TEST(KeySelection, GivesTheKeysASortPutsAtEachRank) {
  std::mt19937_64 rng(7);
  const size_t n = 20011;
  // Series 0: slowdown-like ratios with many ties; 1: doubles over many magnitudes; 2: integers near 2^40.
  std::vector<std::vector<uint64_t>> series(3);
  for (size_t i = 0; i < n; ++i) {
    series[0].push_back(order_key(1.0 + double(rng() % 50) / 16.0));
    series[1].push_back(order_key(std::ldexp(double(rng() % 1000 + 1), int(rng() % 200) - 100)));
    series[2].push_back((uint64_t(1) << 40) + rng() % 100000);
  }
  std::vector<std::pair<unsigned, uint64_t>> q;
  for (unsigned s = 0; s < 3; ++s)
    for (uint64_t k : {uint64_t(0), uint64_t(1), n / 2, n * 99 / 100, n - 2, n - 1, uint64_t(rng() % n)}) q.emplace_back(s, k);
  for (size_t parts : {1, 3}) {
    const std::vector<uint64_t> got = select(series, q, parts);
    for (size_t i = 0; i < q.size(); ++i) {
      std::vector<uint64_t> sorted = series[q[i].first];
      std::sort(sorted.begin(), sorted.end());
      EXPECT_EQ(got[i], sorted[q[i].second]) << "series " << q[i].first << " rank " << q[i].second << " parts " << parts;
    }
  }
}

TEST(KeySelection, OneFigureAndAllEqual) {
  EXPECT_EQ(select({{order_key(2.5)}}, {{0, 0}}, 1), std::vector<uint64_t>{order_key(2.5)});
  const std::vector<uint64_t> same(1000, order_key(1.25));
  EXPECT_EQ(select({same}, {{0, 0}, {0, 499}, {0, 999}}, 1), std::vector<uint64_t>(3, order_key(1.25)));
}

TEST(KeySelection, ARankBeyondTheFiguresThrows) {
  EXPECT_THROW(KeySelection({}), std::invalid_argument);
  KeySelection s({{0, 3}});
  for (uint64_t k : {1, 2, 3}) s.count(&k);
  EXPECT_THROW(s.next(), std::logic_error);  // ranks 0..2 only
}

TEST(KeySample, KeepsEveryStrideThElementDoublingTheStrideWhenFull) {
  // Two series: k and 1000 + k.
  KeySample s(2, 8);
  const auto add = [&](uint64_t k) { s.add([&](uint64_t* keys) { keys[0] = k, keys[1] = 1000 + k; }); };
  for (uint64_t k = 0; k < 8; ++k) add(100 + k);
  // Full at 8: every other kept, stride 2.
  EXPECT_FALSE(s.complete());
  EXPECT_EQ(s.keys(0), (std::vector<uint64_t>{100, 102, 104, 106}));
  for (uint64_t k = 8; k < 20; ++k) add(100 + k);
  // 108..114 fill it again (stride 4 then), 116 joins, 117..119 fall between strides.
  EXPECT_EQ(s.keys(0), (std::vector<uint64_t>{100, 104, 108, 112, 116}));
  EXPECT_EQ(s.keys(1), (std::vector<uint64_t>{1100, 1104, 1108, 1112, 1116}));
  EXPECT_EQ(s.added(), 20u);
  KeySample whole(1, 8);
  int asked = 0;
  for (uint64_t k : {5, 3, 9}) whole.add([&](uint64_t* keys) { keys[0] = k, ++asked; });
  EXPECT_TRUE(whole.complete());
  EXPECT_EQ(whole.keys(0), (std::vector<uint64_t>{5, 3, 9}));
  EXPECT_EQ(asked, 3);
  // Capacity 2: 1 and 2 fill it (1 kept, stride 2), 3 fills it again (1 kept, stride 4), and 4 is
  // not asked for.
  KeySample thinned(1, 2);
  asked = 0;
  for (uint64_t k : {1, 2, 3, 4}) thinned.add([&](uint64_t* keys) { keys[0] = k, ++asked; });
  EXPECT_EQ(asked, 3);
  EXPECT_EQ(thinned.keys(0), (std::vector<uint64_t>{1}));
}

// The series' queries by BracketSelection from a sample of `capacity` elements; nullopt if unresolved.
std::optional<std::vector<uint64_t>> bracket(const std::vector<std::vector<uint64_t>>& series,
                                             const std::vector<std::pair<unsigned, uint64_t>>& q, size_t capacity,
                                             bool* passed = nullptr) {
  KeySample sample(unsigned(series.size()), capacity);
  for (size_t i = 0; i < series[0].size(); ++i)
    sample.add([&](uint64_t* keys) {
      for (size_t s = 0; s < series.size(); ++s) keys[s] = series[s][i];
    });
  BracketSelection b(q, sample);
  if (passed) *passed = b.needs_pass();
  if (b.needs_pass())
    for (size_t i = 0; i < series[0].size(); ++i) {
      std::vector<uint64_t> keys;
      for (const auto& s : series) keys.push_back(s[i]);
      b.count(keys.data());
    }
  if (!b.resolve()) return std::nullopt;
  return b.keys();
}

TEST(BracketSelection, GivesTheKeysASortPutsAtEachRank) {
  std::mt19937_64 rng(11);
  const size_t n = 20011;
  std::vector<std::vector<uint64_t>> series(3);
  for (size_t i = 0; i < n; ++i) {
    series[0].push_back(order_key(1.0 + double(rng() % 50) / 16.0));  // ties
    series[1].push_back(order_key(std::ldexp(double(rng() % 1000 + 1), int(rng() % 200) - 100)));
    series[2].push_back(i * 7919 % 20011);  // a permutation: no ties, no order
  }
  std::vector<std::pair<unsigned, uint64_t>> q;
  for (unsigned s = 0; s < 3; ++s)
    for (uint64_t k : {uint64_t(0), uint64_t(1), n / 2, n * 99 / 100, n - 2, n - 1, uint64_t(rng() % n)}) q.emplace_back(s, k);
  for (size_t capacity : {size_t(256), size_t(4096), size_t(1) << 15}) {  // thinned 7 times, 3, and complete
    bool passed = false;
    const auto got = bracket(series, q, capacity, &passed);
    ASSERT_TRUE(got) << "capacity " << capacity;
    EXPECT_EQ(passed, capacity < n);
    for (size_t i = 0; i < q.size(); ++i) {
      std::vector<uint64_t> sorted = series[q[i].first];
      std::sort(sorted.begin(), sorted.end());
      EXPECT_EQ((*got)[i], sorted[q[i].second]) << "series " << q[i].first << " rank " << q[i].second << " capacity " << capacity;
    }
  }
  const std::vector<uint64_t> same(5000, order_key(1.25));
  EXPECT_EQ(bracket({same}, {{0, 0}, {0, 2500}, {0, 4999}}, 64), std::vector<uint64_t>(3, order_key(1.25)));
}

TEST(BracketSelection, MoreKeysBetweenThanItKeepsIsToldNotAnswered) {
  // 10,000 distinct keys, a sample of 64 (stride 256): a median's bracket spans ±33 sample ranks,
  // about half the keys; with room for 100 of them the pass cannot rank them, with room for all it can.
  std::vector<uint64_t> keys;
  for (uint64_t i = 0; i < 10000; ++i) keys.push_back(i * 7919 % 10007);
  KeySample sample(1, 64);
  for (uint64_t k : keys) sample.add([&](uint64_t* out) { out[0] = k; });
  for (size_t kept : {size_t(100), BracketSelection::kKeptPerQuery}) {
    BracketSelection b({{0, 5000}}, sample, kept);
    ASSERT_TRUE(b.needs_pass());
    for (uint64_t k : keys) b.count(&k);
    std::vector<uint64_t> sorted = keys;
    std::sort(sorted.begin(), sorted.end());
    if (kept == 100) {
      EXPECT_FALSE(b.resolve());
    } else {
      ASSERT_TRUE(b.resolve());
      EXPECT_EQ(b.keys(), std::vector<uint64_t>{sorted[5000]});
    }
  }
}

TEST(BracketSelection, ASampleThatMisledIsToldNotAnswered) {
  // Every 16th key is 0, the others 1000 + i: a sample whose stride is a multiple of 16 holds only
  // zeros, and brackets the median with [0, 0]; the pass finds 1/16 of the keys there, not half.
  std::vector<uint64_t> keys;
  for (uint64_t i = 0; i < (1 << 16); ++i) keys.push_back(i % 16 ? 1000 + i : 0);
  EXPECT_FALSE(bracket({keys}, {{0, 1 << 15}}, 1024));
  // The lowest ranks lie in the bracket: answered.
  EXPECT_EQ(bracket({keys}, {{0, 5}}, 1024), std::vector<uint64_t>{0});
  KeySample three(1);
  for (uint64_t k : {1, 2, 3}) three.add([&](uint64_t* keys) { keys[0] = k; });
  EXPECT_THROW(BracketSelection({}, three), std::invalid_argument);
  EXPECT_THROW(BracketSelection({{0, 3}}, three), std::invalid_argument);  // ranks 0..2 only
  EXPECT_THROW(BracketSelection({{1, 0}}, three), std::invalid_argument);  // no series 1
}

}  // namespace
}  // namespace wh
