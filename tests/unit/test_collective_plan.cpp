// The implicit CollectivePlan against the explicit planner it replaced: for every op and a few
// (ranks, rings, bytes), flow by flow (ends, bytes, step, ring, parent, child, per-member sends), and
// plan_bytes / driver_plan_bytes known answers.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>
#include <vector>

#include "wormhole/workload/collectives.h"
#include "wormhole/workload/driver.h"

namespace wh {
namespace {

/// The explicit planner as it was (src/workload/collectives.cpp before the plans became implicit):
/// every flow built and stored, ring order and parents found by search. The reference.
std::vector<FlowStep> reference_flows(Collective op, uint64_t S, const std::vector<uint32_t>& members, uint32_t C,
                                      ZeroChunk zero_chunk) {
  std::vector<FlowStep> flows;
  const auto R = static_cast<uint32_t>(members.size());
  if (R <= 1 || op == Collective::None || S == 0) return flows;
  std::vector<uint32_t> sorted = members;
  std::sort(sorted.begin(), sorted.end());
  if (op == Collective::AllToAll) {
    uint64_t chunk = S / R;
    if (chunk == 0) {
      if (zero_chunk == ZeroChunk::NoFlows) return flows;
      chunk = 1;
    }
    for (uint32_t i = 0; i < R; ++i)
      for (uint32_t j = 0; j < R; ++j)
        if (i != j) flows.push_back(FlowStep{sorted[i], sorted[j], chunk, 0, 0, kNoParent});
    return flows;
  }
  uint64_t chunk = S / R / C;
  if (chunk == 0) {
    if (zero_chunk == ZeroChunk::NoFlows) return flows;
    chunk = 1;
  }
  const uint32_t steps = op == Collective::AllReduce ? 2 * (R - 1) : R - 1;
  const uint32_t blocks = R / C;
  std::vector<std::vector<uint32_t>> ring_order(C);
  for (uint32_t c = 0; c < C; ++c)
    for (uint32_t b = 0; b < blocks; ++b)
      for (uint32_t j = 0; j < C; ++j) ring_order[c].push_back(sorted[b * C + (c + j) % C]);
  for (uint32_t c = 0; c < C; ++c) {
    const auto& ring = ring_order[c];
    const size_t ring_base = flows.size();
    for (uint32_t st = 0; st < steps; ++st)
      for (uint32_t i = 0; i < R; ++i) {
        const auto pos = static_cast<uint32_t>(std::find(ring.begin(), ring.end(), sorted[i]) - ring.begin());
        FlowStep f{sorted[i], ring[(pos + 1) % R], chunk, st, c, kNoParent};
        if (st > 0) {
          const uint32_t prev = ring[(pos + R - 1) % R];
          const auto prev_i =
              static_cast<uint32_t>(std::lower_bound(sorted.begin(), sorted.end(), prev) - sorted.begin());
          f.parent = static_cast<uint32_t>(ring_base + size_t(st - 1) * R + prev_i);
        }
        flows.push_back(f);
      }
  }
  return flows;
}

/// Compares plan_collective(op, S, members, C, z) with the reference, flow by flow.
void expect_same(Collective op, uint64_t S, const std::vector<uint32_t>& members, uint32_t C, ZeroChunk z) {
  SCOPED_TRACE(testing::Message() << to_string(op) << " S " << S << " R " << members.size() << " C " << C
                                  << (z == ZeroChunk::NoFlows ? "" : " clamped"));
  const std::vector<FlowStep> ref = reference_flows(op, S, members, C, z);
  const CollectivePlan p = plan_collective(op, S, members, C, z);
  ASSERT_EQ(p.size(), ref.size());
  EXPECT_EQ(collective_flow_count(op, S, static_cast<uint32_t>(members.size()), C, z), ref.size());
  std::vector<uint32_t> sorted = members;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(p.members, sorted);
  std::vector<uint32_t> child(ref.size(), kNoParent);
  std::vector<std::vector<uint32_t>> sends(members.size());
  for (uint32_t f = 0; f < ref.size(); ++f) {
    if (ref[f].parent != kNoParent) child[ref[f].parent] = f;
    sends[std::lower_bound(sorted.begin(), sorted.end(), ref[f].src) - sorted.begin()].push_back(f);
  }
  for (uint32_t f = 0; f < ref.size(); ++f) {
    const FlowStep a = p.flow(f), &b = ref[f];
    ASSERT_EQ(std::tie(a.src, a.dst, a.bytes, a.step, a.ring, a.parent),
              std::tie(b.src, b.dst, b.bytes, b.step, b.ring, b.parent))
        << "flow " << f;
    ASSERT_EQ(p.members[p.src_index(f)], b.src);
    ASSERT_EQ(p.members[p.dst_index(f)], b.dst);
    ASSERT_EQ(p.parent(f), b.parent);
    ASSERT_EQ(p.child(f), child[f]) << "flow " << f;
  }
  for (uint32_t i = 0; i < sends.size() && !ref.empty(); ++i) {
    ASSERT_EQ(p.sends_per_member(), sends[i].size());
    for (uint32_t k = 0; k < sends[i].size(); ++k) ASSERT_EQ(p.sent_flow(i, k), sends[i][k]);
  }
}

std::vector<uint32_t> strided(uint32_t n, uint32_t first, uint32_t stride) {
  std::vector<uint32_t> m(n);
  for (uint32_t i = 0; i < n; ++i) m[i] = first + i * stride;
  return m;
}

TEST(CollectivePlan, ImplicitEqualsExplicitForEveryOp) {
  const Collective ops[] = {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter,
                            Collective::AllToAll, Collective::None};
  // (ranks, rings): one ring, a ring per member (a TP group), blocks of 2, 4 and 8, 2 ranks.
  const std::pair<uint32_t, uint32_t> shapes[] = {{2, 1}, {2, 2}, {3, 1}, {4, 2}, {8, 8}, {8, 1},
                                                  {12, 4}, {16, 2}, {16, 8}, {24, 8}};
  // Bytes: 0, a 0-byte chunk, chunks that divide unevenly, exact, large.
  const uint64_t sizes[] = {0, 1, 5, 1000, 4096, 1048577, uint64_t(3) << 33};
  for (Collective op : ops)
    for (auto [R, C] : shapes)
      for (uint64_t S : sizes)
        for (ZeroChunk z : {ZeroChunk::NoFlows, ZeroChunk::ClampToOneByte}) {
          expect_same(op, S, strided(R, 0, 1), C, z);
          expect_same(op, S, strided(R, 3, 4), C, z);  // a DP group of TP 4
        }
}

TEST(CollectivePlan, ChainsFollowParents) {
  // Every flow has one (chain, place); a flow's parent is the place before it in its chain; roots
  // begin chains; chains × length = flows.
  const std::pair<uint32_t, uint32_t> shapes[] = {{2, 1}, {3, 1}, {4, 2}, {8, 8}, {12, 4}, {16, 2}, {24, 8}};
  for (Collective op : {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter, Collective::AllToAll})
    for (auto [R, C] : shapes) {
      const CollectivePlan p = plan_collective(op, 1 << 20, strided(R, 3, 4), C);
      ASSERT_EQ(uint64_t(p.chains()) * p.chain_length(), p.size());
      std::vector<uint8_t> seen(p.size(), 0);
      for (uint32_t f = 0; f < p.size(); ++f) {
        const auto [chain, place] = p.chain_of(f);
        ASSERT_LT(chain, p.chains());
        ASSERT_LT(place, p.chain_length());
        EXPECT_EQ(seen[uint64_t(chain) * p.chain_length() + place]++, 0) << "flow " << f;
        const uint32_t parent = p.parent(f);
        if (parent == kNoParent) {
          EXPECT_EQ(place, 0u);
        } else {
          EXPECT_EQ(p.chain_of(parent), std::make_pair(chain, place - 1)) << "flow " << f;
        }
      }
    }
}

TEST(CollectivePlan, PairsSumTheFlows) {
  // for_each_pair's counts per (sender, receiver) are those of walking every flow.
  const std::pair<uint32_t, uint32_t> shapes[] = {{2, 1}, {2, 2}, {3, 1}, {4, 2}, {8, 8}, {12, 4}, {16, 2}, {24, 8}};
  for (Collective op : {Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter, Collective::AllToAll,
                        Collective::None})
    for (auto [R, C] : shapes) {
      const CollectivePlan p = plan_collective(op, 1 << 20, strided(R, 3, 4), C);
      std::map<std::pair<uint32_t, uint32_t>, uint64_t> walked, paired;
      for (uint32_t f = 0; f < p.size(); ++f) ++walked[{p.src_index(f), p.dst_index(f)}];
      p.for_each_pair([&](uint32_t i, uint32_t j, uint32_t n) { paired[{i, j}] += n; });
      EXPECT_EQ(paired, walked) << to_string(op) << " R " << R << " C " << C;
    }
}

TEST(CollectivePlan, FinishedFlowsFollowChains) {
  // The ring of HandComputedRing: flow 19 (ring 1, step 1, from 40, at position 2 of ring 1 = 20 10 40
  // 30) is in the chain that began one position back, at 10: chain 1·4 + 1 = 5, place 1; its parent 12
  // is place 0 of it, its child 22 place 2.
  const CollectivePlan p = plan_collective(Collective::AllGather, 24, {40, 10, 30, 20}, 2);
  EXPECT_EQ(p.chains(), 8u);
  EXPECT_EQ(p.chain_length(), 3u);
  EXPECT_EQ(p.chain_of(19), std::make_pair(5u, 1u));
  EXPECT_EQ(p.chain_of(12), std::make_pair(5u, 0u));
  EXPECT_EQ(p.chain_of(22), std::make_pair(5u, 2u));
  FinishedFlows done;
  done.reset(p);
  EXPECT_THROW(done.set(p, 19), std::logic_error);  // before its parent
  done.set(p, 12);
  EXPECT_TRUE(done.test(p, 12));
  EXPECT_FALSE(done.test(p, 19));
  done.set(p, 19);
  EXPECT_TRUE(done.test(p, 19));
  EXPECT_FALSE(done.test(p, 22));
  EXPECT_THROW(done.set(p, 19), std::logic_error);  // twice
  for (uint32_t f = 0; f < p.size(); ++f) {  // another chain's flows are untouched
    if (p.chain_of(f).first != 5) {
      EXPECT_FALSE(done.test(p, f)) << f;
    }
  }
  // An AllToAll's flows finish in any order, each once.
  const CollectivePlan a = plan_collective(Collective::AllToAll, 9, {1, 2, 3}, 7);
  done.reset(a);
  done.set(a, 5);
  done.set(a, 0);
  EXPECT_TRUE(done.test(a, 5));
  EXPECT_TRUE(done.test(a, 0));
  EXPECT_FALSE(done.test(a, 3));
  EXPECT_THROW(done.set(a, 5), std::logic_error);
}

TEST(CollectivePlan, MembersInAnyOrderAreSorted) {
  expect_same(Collective::AllReduce, 1 << 20, {12, 0, 8, 4, 13, 1, 9, 5}, 2, ZeroChunk::NoFlows);
  expect_same(Collective::AllToAll, 1 << 20, {7, 3, 5}, 1, ZeroChunk::NoFlows);
}

TEST(CollectivePlan, HandComputedRing) {
  // AllGather of 24 B on {10, 20, 30, 40} with 2 rings: chunk 24 / 4 / 2 = 3, steps 3, 2·3·4 = 24
  // flows. Ring 0 = 10 20 30 40, ring 1 = 20 10 40 30. Flow (c·3 + s)·4 + i.
  const CollectivePlan p = plan_collective(Collective::AllGather, 24, {40, 10, 30, 20}, 2);
  ASSERT_EQ(p.size(), 24u);
  EXPECT_EQ(p.ring_order(0), (std::vector<uint32_t>{10, 20, 30, 40}));
  EXPECT_EQ(p.ring_order(1), (std::vector<uint32_t>{20, 10, 40, 30}));
  // Ring 1, step 1, sender 40 (i = 3): f = (3 + 1)·4 + 3 = 19, to 30; its parent is ring 1 step 0
  // from 10 (40's previous on ring 1): (3 + 0)·4 + 0 = 12; its child is step 2 from 30: 20 + 2 = 22.
  const FlowStep f = p.flow(19);
  EXPECT_EQ(std::tie(f.src, f.dst, f.bytes, f.step, f.ring, f.parent),
            std::make_tuple(40u, 30u, uint64_t(3), 1u, 1u, 12u));
  EXPECT_EQ(p.child(19), 22u);
  EXPECT_EQ(p.child(23), kNoParent);  // last step
  // AllToAll of 9 B on {1, 2, 3}: 3-B flows 1→2, 1→3, 2→1, 2→3, 3→1, 3→2.
  const CollectivePlan a = plan_collective(Collective::AllToAll, 9, {1, 2, 3}, 7);
  ASSERT_EQ(a.size(), 6u);
  EXPECT_EQ(a.flow(3).src, 2u);
  EXPECT_EQ(a.flow(3).dst, 3u);
  EXPECT_EQ(a.flow(3).parent, kNoParent);
  EXPECT_EQ(a.sent_flow(2, 1), 5u);
}

TEST(CollectivePlan, RefusesTooManyFlows) {
  // A ring AllReduce on 46,342 ranks (one ring): 2·46,341·46,342 = 4,295,069,244 flows >= 2^32 − 1.
  // Planning is O(R): refused at once, with the reason.
  const std::vector<uint32_t> big = strided(46342, 0, 1);
  try {
    plan_collective(Collective::AllReduce, uint64_t(1) << 40, big, 1);
    FAIL() << "not refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("4295069244 flows"), std::string::npos) << e.what();
  }
  // 46,341 ranks: 4,294,883,880 flows, under the limit: planned without storing them.
  const CollectivePlan p = plan_collective(Collective::AllReduce, uint64_t(1) << 40, strided(46341, 0, 1), 1);
  EXPECT_EQ(p.size(), 4294883880u);
  EXPECT_EQ(p.child(p.size() - 1), kNoParent);
  EXPECT_EQ(p.flow(p.size() - 1).src, 46340u);
  // AllToAll on 65,536 ranks: 65,536·65,535 = 4,294,901,760 flows, accepted; an AllToAll of 65,537 is not.
  EXPECT_EQ(plan_collective(Collective::AllToAll, uint64_t(1) << 40, strided(65536, 0, 1), 1).size(), 4294901760u);
  EXPECT_THROW(plan_collective(Collective::AllToAll, uint64_t(1) << 40, strided(65537, 0, 1), 1),
               std::invalid_argument);
}

TEST(CollectivePlan, PlanBytesKnownAnswers) {
  // The plan: its record plus 4 B a member, whatever its flow count.
  EXPECT_EQ(plan_bytes(0), sizeof(CollectivePlan));
  EXPECT_EQ(plan_bytes(2048), sizeof(CollectivePlan) + 8192);
  // The driver's: per member 4 (plan) + 4 (its cache key) + 1 (issued) + 4 (flows left) = 13 B, and
  // a fixed part (records). Which flows finished: an AllToAll's (chains of one) a bit each in whole 64-bit words, a ring's 4 B
  // a chain.
  const uint64_t fixed = driver_plan_bytes(0, 0, 0);
  EXPECT_EQ(driver_plan_bytes(1, 0, 0), fixed + 13);
  EXPECT_EQ(driver_plan_bytes(0, 1, 1), fixed + 8);
  EXPECT_EQ(driver_plan_bytes(0, 64, 1), fixed + 8);
  EXPECT_EQ(driver_plan_bytes(0, 65, 1), fixed + 16);
  EXPECT_EQ(driver_plan_bytes(0, 3, 2), fixed + 12);
  // The DP AllReduce of 16,384 Spectrum-X GPUs (TP 8): 2048 ranks, 1 ring, 2048 chains of 2·2047 =
  // 4094 flows (8,384,512 in all): 8192 B of counts + 26,624 B of members (a bit a flow took 1,048,064 B).
  EXPECT_EQ(driver_plan_bytes(2048, 2048, 4094), fixed + 8192 + 26624);
  EXPECT_LT(fixed, 1024u);
}

}  // namespace
}  // namespace wh
