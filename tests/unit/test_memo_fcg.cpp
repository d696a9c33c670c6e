// Flow contention graphs: hand-built graphs, relabelled isomorphic ones hit with the right map,
// WL-indistinguishable non-isomorphic ones are told apart by VF2.
#include <gtest/gtest.h>

#include <stdexcept>

#include "memo_fixtures.h"
#include "wormhole/memo/fcg.h"

using namespace wh;
using namespace wh::test;

namespace {

/// Two disjoint triangles, or one hexagon: both 2-regular on 6 equal vertices, so WL hashing
/// cannot tell them apart; they are not isomorphic.
std::vector<FcgFlow> two_triangles() {
  return {fl({1, 2}), fl({1, 3}), fl({2, 3}), fl({11, 12}), fl({11, 13}), fl({12, 13})};
}
std::vector<FcgFlow> hexagon() {
  std::vector<FcgFlow> f;
  for (uint32_t i = 0; i < 6; ++i) f.push_back(fl({20 + (i + 5) % 6, 20 + i}));
  return f;
}

}  // namespace

TEST(Fcg, EdgesWeighSharedPortsAndRatesAreQuantised) {
  // A {1,2,3}, B {3,4}, C {2,3,5}: A–B share port 3, A–C ports 2 and 3, B–C port 3.
  const Fcg g = make_fcg({fl({1, 2, 3}, 49'600'000'000), fl({3, 4, 4}, 50'400'000'000), fl({5, 3, 2}, 48'400'000'000)}, kG);
  ASSERT_EQ(g.vertices(), 3u);
  EXPECT_EQ(g.label[0].rate_q, 50u);
  EXPECT_EQ(g.label[1].rate_q, 50u);
  EXPECT_EQ(g.label[2].rate_q, 48u);
  ASSERT_EQ(g.edges.size(), 3u);
  const uint32_t want[3][3] = {{0, 1, 1}, {0, 2, 2}, {1, 2, 1}};  // (u, v, shared ports)
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(g.edges[i].u, want[i][0]);
    EXPECT_EQ(g.edges[i].v, want[i][1]);
    EXPECT_EQ(g.edges[i].weight, want[i][2]);
  }
  EXPECT_THROW(make_fcg({fl({1})}, 0), std::invalid_argument);
}

TEST(Fcg, RelabelledFlowsAreIsomorphicWithTheRightMap) {
  // The same contention pattern on other ports, flows listed in another order (C, A, B), one of
  // them at another rate so the map is forced: A -> 1, B -> 2, C -> 0.
  const Fcg a = make_fcg({fl({1, 2, 3}, 30 * kG), fl({3, 4}), fl({2, 3, 5})}, kG);
  const Fcg b = make_fcg({fl({72, 73, 75}), fl({71, 72, 73}, 30 * kG), fl({73, 74})}, kG);
  EXPECT_EQ(wl_hash(a), wl_hash(b));
  const auto map = isomorphism(a, b);
  ASSERT_TRUE(map.has_value());
  EXPECT_EQ(*map, (std::vector<uint32_t>{1, 2, 0}));
}

TEST(Fcg, EqualWlHashButNotIsomorphic) {
  const Fcg t = make_fcg(two_triangles(), kG), h = make_fcg(hexagon(), kG);
  EXPECT_EQ(t.edges.size(), 6u);
  EXPECT_EQ(h.edges.size(), 6u);
  EXPECT_EQ(wl_hash(t), wl_hash(h));
  EXPECT_FALSE(isomorphism(t, h).has_value());
  EXPECT_TRUE(isomorphism(t, t).has_value());
}

TEST(Fcg, LabelsAndWeightsMustMatch) {
  const Fcg base = make_fcg({fl({1, 2}), fl({1, 2})}, kG);           // one edge of weight 2
  const Fcg lighter = make_fcg({fl({1, 2}), fl({1, 3})}, kG);        // weight 1
  const Fcg slower = make_fcg({fl({1, 2}), fl({1, 2}, 20 * kG)}, kG);  // another rate label
  const Fcg narrower = make_fcg({fl({1, 2}), fl({1, 2}, 50 * kG, 25 * kG)}, kG);  // another bottleneck
  FcgFlow fresh = fl({1, 2});
  fresh.fresh = true;
  const Fcg newer = make_fcg({fl({1, 2}), fresh}, kG);  // one flow has sent nothing yet
  FcgFlow far = fl({1, 2});
  far.rtt_ns = 9000;
  const Fcg farther = make_fcg({fl({1, 2}), far}, kG);  // another base RTT
  FcgFlow slow_nic = fl({1, 2});
  slow_nic.line_bps = 25 * kG;
  const Fcg smaller_nic = make_fcg({fl({1, 2}), slow_nic}, kG);  // another line rate
  const Fcg longer = make_fcg({fl({1, 2}), fl({1, 2, 5})}, kG);  // one more hop (its port 5 shared by nobody)
  for (const Fcg* other : {&lighter, &slower, &narrower, &newer, &farther, &smaller_nic}) {
    EXPECT_NE(wl_hash(base), wl_hash(*other));
    EXPECT_FALSE(isomorphism(base, *other).has_value());
  }
  // One more hop, the same two shared ports: the edge is the same, the label is not.
  EXPECT_EQ(longer.edges.size(), 1u);
  EXPECT_EQ(longer.edges[0].weight, 2u);
  EXPECT_FALSE(isomorphism(base, longer).has_value());
  // Rates within half a quantum of each other are the same label.
  EXPECT_TRUE(isomorphism(base, make_fcg({fl({7, 8}, 50'400'000'000), fl({7, 8}, 49'700'000'000)}, kG)).has_value());
}

TEST(Fcg, ContendingAndAckCouplingAreDifferentEdgesAndAckCouplingHasADirection) {
  auto with_acks = [](FcgFlow f, std::vector<uint32_t> acks) {
    f.acks = std::move(acks);
    return f;
  };
  // Two flows sending through port 1 contend for it (each at about half its rate); a flow whose ACKs
  // leave through another's data port 2 only waits behind it: one edge each, not the same edge.
  const Fcg contend = make_fcg({fl({1, 2}), fl({1, 3})}, kG);
  const Fcg crossing = make_fcg({with_acks(fl({1, 4}), {2}), fl({2, 3})}, kG);
  ASSERT_EQ(contend.edges.size(), 1u);
  ASSERT_EQ(crossing.edges.size(), 1u);
  EXPECT_EQ(contend.edges[0].weight, 1u);
  EXPECT_EQ(crossing.edges[0].weight, 0u);
  EXPECT_EQ(crossing.edges[0].u_acks, 1u);  // flow 0's ACKs leave with flow 1's data
  EXPECT_EQ(crossing.edges[0].v_acks, 0u);
  EXPECT_NE(wl_hash(contend), wl_hash(crossing));
  EXPECT_FALSE(isomorphism(contend, crossing).has_value());
  // ACK ports carrying nobody's data couple nothing.
  EXPECT_TRUE(make_fcg({with_acks(fl({1}), {9}), with_acks(fl({2}), {9})}, kG).edges.empty());
  // The direction decides the map: A (ACKs on B's data) and B, against B' and A' listed the other way
  // round, with equal labels: A must map to A'.
  const Fcg a = make_fcg({with_acks(fl({1, 4}), {2}), fl({2, 3})}, kG);
  const Fcg b = make_fcg({fl({12, 13}), with_acks(fl({11, 14}), {12})}, kG);
  const auto map = isomorphism(a, b);
  ASSERT_TRUE(map.has_value());
  EXPECT_EQ(*map, (std::vector<uint32_t>{1, 0}));
  EXPECT_EQ(wl_hash(a), wl_hash(b));
  // Both ways coupled (a ring of two) is a third pattern.
  const Fcg both = make_fcg({with_acks(fl({1, 4}), {2}), with_acks(fl({2, 3}), {1})}, kG);
  EXPECT_EQ(both.edges[0].u_acks + both.edges[0].v_acks, 2u);
  EXPECT_FALSE(isomorphism(a, both).has_value());
}

TEST(Fcg, EmptyAndLoneFlow) {
  EXPECT_TRUE(isomorphism(Fcg{}, Fcg{}).has_value());
  const Fcg one = make_fcg({fl({3})}, kG);
  EXPECT_EQ(one.edges.size(), 0u);
  EXPECT_EQ(*isomorphism(one, make_fcg({fl({9})}, kG)), std::vector<uint32_t>{0});
  EXPECT_FALSE(isomorphism(one, Fcg{}).has_value());
}
