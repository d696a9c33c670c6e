// The memo store: isomorphic keys hit with their vertex map, non-isomorphic ones with equal WL
// hashes miss, namespaces separate, entries are visible only from their insertion time.
#include <gtest/gtest.h>

#include <stdexcept>

#include "wormhole/memo/store.h"

#include "memo_fixtures.h"

using namespace wh;
using namespace wh::test;

namespace {

}  // namespace

TEST(MemoStore, IsomorphicKeyHitsWithItsMap) {
  MemoStore s;
  // Key: A (30G) – B, A – C (2 shared ports), B – C. Values per key vertex: A 1000, B 1001, C 1002.
  const Fcg key = make_fcg({fl({1, 2, 3}, 30 * kG), fl({3, 4}), fl({2, 3, 5})}, kG);
  ASSERT_TRUE(s.insert(7, key, value_for(3, 1000), 10 * kUs).second);
  // The same pattern elsewhere, flows in the order C, A, B.
  const Fcg query = make_fcg({fl({72, 73, 75}), fl({71, 72, 73}, 30 * kG), fl({73, 74})}, kG);
  const auto hit = s.lookup(7, query, 20 * kUs);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->map, (std::vector<uint32_t>{2, 0, 1}));
  // Query flow i gets the bytes of key vertex map[i]: C 1002, A 1000, B 1001.
  std::vector<uint64_t> bytes;
  for (uint32_t i = 0; i < 3; ++i) bytes.push_back(hit->entry->value.bytes[hit->map[i]]);
  EXPECT_EQ(bytes, (std::vector<uint64_t>{1002, 1000, 1001}));
  MemoStore::count_hit(*hit);
  EXPECT_EQ(s.entries().front()->hits, 1u);
  // An isomorphic key is not inserted twice.
  EXPECT_FALSE(s.insert(7, query, value_for(3, 0), 30 * kUs).second);
  EXPECT_EQ(s.size(), 1u);
}

TEST(MemoStore, EqualHashesButNotIsomorphicMiss) {
  MemoStore s;
  const Fcg triangles = make_fcg({fl({1, 2}), fl({1, 3}), fl({2, 3}), fl({11, 12}), fl({11, 13}), fl({12, 13})}, kG);
  std::vector<FcgFlow> ring;
  for (uint32_t i = 0; i < 6; ++i) ring.push_back(fl({20 + (i + 5) % 6, 20 + i}));
  const Fcg hexagon = make_fcg(ring, kG);
  ASSERT_EQ(wl_hash(triangles), wl_hash(hexagon));
  ASSERT_TRUE(s.insert(1, triangles, value_for(6, 0), 0).second);
  EXPECT_FALSE(s.lookup(1, hexagon, 1 * kSec).has_value());
  // Both live in one bucket, each found by its own kind.
  ASSERT_TRUE(s.insert(1, hexagon, value_for(6, 100), 0).second);
  EXPECT_EQ(s.size(), 2u);
  EXPECT_EQ(s.lookup(1, hexagon, 1 * kSec)->entry->value.bytes[0], 100u);
  EXPECT_EQ(s.lookup(1, triangles, 1 * kSec)->entry->value.bytes[0], 0u);
}

TEST(MemoStore, NamespacesAndVisibility) {
  MemoStore s;
  const Fcg key = make_fcg({fl({1, 2}), fl({2, 3})}, kG);
  ASSERT_TRUE(s.insert(1, key, value_for(2, 0), 5 * kUs).second);
  EXPECT_FALSE(s.lookup(2, key, 1 * kSec).has_value());       // another CC / link rates / buffers
  EXPECT_FALSE(s.lookup(1, key, 5 * kUs - 1).has_value());    // before it was inserted
  EXPECT_TRUE(s.lookup(1, key, 5 * kUs).has_value());
  EXPECT_TRUE(s.insert(2, key, value_for(2, 0), 0).second);  // the same graph in another namespace
  EXPECT_EQ(s.size(), 2u);
  EXPECT_THROW(s.insert(3, key, value_for(3, 0), 0), std::invalid_argument);
}
