// Collectives -> flows (docs/workloads.md §1.1, §5): group formation, ring / AllToAll decomposition,
// with hand counts in the comments.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <set>
#include <stdexcept>
#include <string>

#include "wormhole/workload/collectives.h"
#include "wormhole/workload/simai_workload.h"

using namespace wh;

namespace {

constexpr uint64_t MiB = 1ull << 20;

WorkloadHeader header(uint32_t tp, uint32_t ep = 1, uint32_t all_gpus = 0, uint32_t pp = 1) {
  WorkloadHeader h;
  h.policy = "HYBRID_TRANSFORMER_FWD_IN_BCKWD";
  h.tp = tp;
  h.ep = ep;
  h.pp = pp;
  h.all_gpus = all_gpus;
  return h;
}

std::vector<uint32_t> range(uint32_t a, uint32_t b) {  // a .. b-1
  std::vector<uint32_t> v;
  for (uint32_t i = a; i < b; ++i) v.push_back(i);
  return v;
}

/// make_layout's std::invalid_argument message (fails the test if it does not throw).
std::string layout_error(const WorkloadHeader& h, uint32_t gpus, uint32_t gps) {
  try {
    make_layout(h, gpus, gps);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for gpus " << gpus << " gps " << gps << " tp " << h.tp;
  return {};
}

std::string layout_error_pp(const WorkloadHeader& h, uint32_t gpus, uint32_t gps) {
  try {
    make_layout(h, gpus, gps, true);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for gpus " << gpus << " pp " << h.pp;
  return {};
}

/// Structural checks every ring plan must pass: counts, bytes, and that each flow's parent is the
/// previous step of the same ring delivering to this flow's source.
void check_ring_plan(const CollectivePlan& p, uint32_t R, uint32_t C, uint32_t steps, uint64_t chunk) {
  ASSERT_EQ(p.steps, steps);
  ASSERT_EQ(p.rings, C);
  ASSERT_EQ(p.chunk, chunk);
  ASSERT_EQ(p.size(), static_cast<size_t>(C) * steps * R);
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, int> per_src;  // (ring, step, src) -> count
  for (const auto& f : explicit_flows(p)) {
    EXPECT_EQ(f.bytes, chunk);
    EXPECT_NE(f.src, f.dst);
    ++per_src[{f.ring, f.step, f.src}];
    if (f.step == 0) {
      EXPECT_EQ(f.parent, kNoParent);
    } else {
      ASSERT_LT(f.parent, p.size());
      const auto par = p.flow(f.parent);
      EXPECT_EQ(par.dst, f.src);
      EXPECT_EQ(par.step + 1, f.step);
      EXPECT_EQ(par.ring, f.ring);
    }
  }
  EXPECT_EQ(per_src.size(), static_cast<size_t>(C) * steps * R);  // one flow per rank per step per ring
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Layout (§1.1 last bullet)

TEST(Collectives, LayoutFromHeaderAndTopology) {
  // 16 GPUs, TP 8 -> DP 2, EP 1 -> DP_EP 2. The header's PP (2) is ignored (forced to 1).
  const auto L = make_layout(header(8, 1, 16, 2), 16, 8);
  EXPECT_EQ(L.gpus, 16u);
  EXPECT_EQ(L.tp, 8u);
  EXPECT_EQ(L.dp, 2u);
  EXPECT_EQ(L.ep, 1u);
  EXPECT_EQ(L.dp_ep, 2u);
  EXPECT_EQ(L.gpus_per_server, 8u);
  // TP 0 = all GPUs -> DP 1.
  const auto all = make_layout(header(0), 32, 8);
  EXPECT_EQ(all.tp, 32u);
  EXPECT_EQ(all.dp, 1u);
  // TP 16 over two 8-GPU servers is a valid SimAI layout (§5.3).
  EXPECT_EQ(make_layout(header(16), 32, 8).dp, 2u);
}

TEST(Collectives, LayoutOfRealWorkloads) {
  // workload_ep_test: all_gpus 32, TP 4, EP 4 (§1.7) -> DP 8, DP_EP 2.
  const auto ep = read_simai_workload(WH_TEST_DATA "/simai/SimAI@pr288/example/workload_ep_test.txt");
  const auto L = make_layout(ep.header, 32, 8);
  EXPECT_EQ(L.tp, 4u);
  EXPECT_EQ(L.ep, 4u);
  EXPECT_EQ(L.dp, 8u);
  EXPECT_EQ(L.dp_ep, 2u);
  // gpt13b_128g: TP 8, PP 2 in the header; PP forced to 1 -> DP = 128 / 8 = 16.
  const auto g13 = read_simai_workload(WH_TEST_DATA "/simai/SimAI@pr288/example/workload_gpt13b_128g.txt");
  EXPECT_EQ(g13.header.pp, 2u);
  EXPECT_EQ(make_layout(g13.header, 128, 8).dp, 16u);
  // With the pipeline taken from the header: PP 2 -> 64 GPUs per stage, DP = 128 / (8 × 2) = 8.
  const auto pp = make_layout(g13.header, 128, 8, true);
  EXPECT_EQ(pp.pp, 2u);
  EXPECT_EQ(pp.stage_gpus, 64u);
  EXPECT_EQ(pp.dp, 8u);
}

// A workload for 16 GPUs on a 32-GPU topology runs on the topology's 32 with a warning, as SimAI's
// ns-3 backend does (DP = 32 / TP 8 = 4).
TEST(Collectives, AllGpusMismatchWarnsAndTakesTheTopologysCount) {
  std::vector<std::string> warnings;
  const auto L = make_layout(header(8, 1, 16), 32, 8, false, &warnings);
  EXPECT_EQ(L.gpus, 32u);
  EXPECT_EQ(L.dp, 4u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "all_gpus 16 differs from the 32 GPUs the workload runs on: using 32 (DP = 4), as SimAI's ns-3 "
                         "backend does");
  warnings.clear();
  make_layout(header(8, 1, 32), 32, 8, false, &warnings);
  EXPECT_TRUE(warnings.empty());
}

// Megatron's rank order tp-dp-pp: 32 GPUs, TP 4, PP 2 -> stage 0 = GPUs 0..15, stage 1 = 16..31;
// DP = 32 / (4 × 2) = 4 with stride TP inside a stage; pipeline peers 16 apart.
TEST(Collectives, PipelineStagesAreConsecutiveBlocks) {
  const auto L = make_layout(header(4, 1, 32, 2), 32, 8, true);
  EXPECT_EQ(L.pp, 2u);
  EXPECT_EQ(L.stage_gpus, 16u);
  EXPECT_EQ(L.dp, 4u);
  EXPECT_EQ(group_members(L, CommGroup::TP, 17), range(16, 20));
  EXPECT_EQ(group_members(L, CommGroup::DP, 17), (std::vector<uint32_t>{17, 21, 25, 29}));
  EXPECT_EQ(group_members(L, CommGroup::DP, 2), (std::vector<uint32_t>{2, 6, 10, 14}));
  EXPECT_EQ(pipeline_peer(L, 5, 1), 21u);
  EXPECT_EQ(pipeline_peer(L, 21, 0), 5u);
  EXPECT_NE(layout_error_pp(header(4, 1, 0, 3), 32, 8).find("not divisible by PP 3"), std::string::npos);
}

TEST(Collectives, LayoutErrors) {
  EXPECT_NE(layout_error(header(3), 16, 8).find("not divisible by TP 3"), std::string::npos);
  // 24 GPUs / TP 6 divides, but 6 neither divides 8 nor is a multiple of it.
  EXPECT_NE(layout_error(header(6), 24, 8).find("TP 6 not dividing GPUs per server 8"), std::string::npos);
  // 32 / TP 4 = DP 8; EP 3 does not divide 8.
  EXPECT_NE(layout_error(header(4, 3), 32, 8).find("EP 3 not dividing DP 8"), std::string::npos);
  EXPECT_NE(layout_error(header(4, 0), 32, 8).find("EP is 0"), std::string::npos);
  EXPECT_NE(layout_error(header(8), 20, 8).find("not a whole number"), std::string::npos);
  EXPECT_NE(layout_error(header(8), 0, 8).find("no GPUs"), std::string::npos);
  EXPECT_NE(layout_error(header(8), 16, 0).find("GPUs per server is 0"), std::string::npos);
  EXPECT_NE(layout_error(header(3), 16, 8).find("(fix: "), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Groups (§5.1)

TEST(Collectives, TpAndDpGroups16GpusTp8) {
  const auto L = make_layout(header(8), 16, 8);  // DP 2
  EXPECT_EQ(group_members(L, CommGroup::TP, 0), range(0, 8));
  EXPECT_EQ(group_members(L, CommGroup::TP, 13), range(8, 16));
  // DP group i = {i, i + 8}.
  EXPECT_EQ(group_members(L, CommGroup::DP, 0), (std::vector<uint32_t>{0, 8}));
  EXPECT_EQ(group_members(L, CommGroup::DP, 3), (std::vector<uint32_t>{3, 11}));
  EXPECT_EQ(group_members(L, CommGroup::DP, 11), (std::vector<uint32_t>{3, 11}));
  EXPECT_TRUE(group_members(L, CommGroup::None, 5).empty());
  EXPECT_THROW(group_members(L, CommGroup::TP, 16), std::invalid_argument);
  // One rank per server -> 1 ring; TP 8 on one server -> 8 rings.
  EXPECT_EQ(ring_count(L, group_members(L, CommGroup::DP, 3)), 1u);
  EXPECT_EQ(ring_count(L, group_members(L, CommGroup::TP, 3)), 8u);
}

TEST(Collectives, EpAndDpEpGroupsMoeLayout) {
  // all_gpus 32, TP 4, EP 4 -> DP 8, DP_EP 2; 8-GPU servers.
  const auto L = make_layout(header(4, 4, 32), 32, 8);
  // EP (a, k) = {(a*4 + l)*4 + k : l = 0..3}: GPU 0 -> a 0, k 0; GPU 17 -> TP group 4, a 1, k 1.
  EXPECT_EQ(group_members(L, CommGroup::EP, 0), (std::vector<uint32_t>{0, 4, 8, 12}));
  EXPECT_EQ(group_members(L, CommGroup::EP, 5), (std::vector<uint32_t>{1, 5, 9, 13}));
  EXPECT_EQ(group_members(L, CommGroup::EP, 17), (std::vector<uint32_t>{17, 21, 25, 29}));
  EXPECT_EQ(group_members(L, CommGroup::EP, 31), (std::vector<uint32_t>{19, 23, 27, 31}));
  // DP_EP (b, k) = {(b + m*4)*4 + k : m = 0..1}: GPU 0 -> b 0; GPU 5 -> TP group 1, b 1, k 1.
  EXPECT_EQ(group_members(L, CommGroup::DP_EP, 0), (std::vector<uint32_t>{0, 16}));
  EXPECT_EQ(group_members(L, CommGroup::DP_EP, 5), (std::vector<uint32_t>{5, 21}));
  EXPECT_EQ(group_members(L, CommGroup::DP_EP, 17), (std::vector<uint32_t>{1, 17}));
  // DP (stride TP 4): 8 ranks.
  EXPECT_EQ(group_members(L, CommGroup::DP, 2), (std::vector<uint32_t>{2, 6, 10, 14, 18, 22, 26, 30}));
  // Rings: EP {0,4,8,12} has 2 ranks on server 0; DP_EP {0,16} 1; DP {2,6,...} 2; TP 4 -> 4.
  EXPECT_EQ(ring_count(L, group_members(L, CommGroup::EP, 0)), 2u);
  EXPECT_EQ(ring_count(L, group_members(L, CommGroup::DP_EP, 0)), 1u);
  EXPECT_EQ(ring_count(L, group_members(L, CommGroup::DP, 2)), 2u);
  EXPECT_EQ(ring_count(L, group_members(L, CommGroup::TP, 2)), 4u);
}

TEST(Collectives, GroupsPartitionTheGpus) {
  // For every kind, each GPU is in its own group, every member names the same group, sizes match.
  for (const auto& [tp, ep, gpus] : std::vector<std::tuple<uint32_t, uint32_t, uint32_t>>{
           {4, 4, 32}, {8, 1, 16}, {8, 2, 64}, {16, 2, 64}, {1, 1, 8}, {2, 4, 32}}) {
    const auto L = make_layout(header(tp, ep), gpus, 8);
    const std::map<CommGroup, uint32_t> size{
        {CommGroup::TP, L.tp}, {CommGroup::DP, L.dp}, {CommGroup::EP, L.ep}, {CommGroup::DP_EP, L.dp_ep}};
    for (const auto& [g, n] : size) {
      for (uint32_t gpu = 0; gpu < gpus; ++gpu) {
        const auto m = group_members(L, g, gpu);
        ASSERT_EQ(m.size(), n) << to_string(g) << " tp " << tp << " ep " << ep;
        EXPECT_TRUE(std::is_sorted(m.begin(), m.end()));
        EXPECT_TRUE(std::find(m.begin(), m.end(), gpu) != m.end());
        for (uint32_t other : m) EXPECT_EQ(group_members(L, g, other), m);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Ring decomposition (§5.3, §5.4)

TEST(Collectives, Tp8AllReduce16MiBOn8Gpus) {
  // R = 8, C = 8 rings, steps = 2(8-1) = 14, chunk = 16 MiB / 8 / 8 = 262,144 B,
  // flows = 8 rings x 14 steps x 8 ranks = 896 (the fork's dump in §5.7 has exactly this).
  const auto L = make_layout(header(8, 1, 8), 8, 8);
  const auto m = group_members(L, CommGroup::TP, 0);
  const uint32_t C = ring_count(L, m);
  ASSERT_EQ(C, 8u);
  const auto p = plan_collective(Collective::AllReduce, 16 * MiB, m, C);
  check_ring_plan(p, 8, 8, 14, 262144);
  EXPECT_EQ(p.size(), 896u);
  // All 8 rings are rotations of one cycle: every flow goes r -> r+1 (mod 8).
  std::map<uint32_t, uint64_t> sent;
  for (const auto& f : explicit_flows(p)) {
    EXPECT_EQ(f.dst, (f.src + 1) % 8);
    sent[f.src] += f.bytes;
  }
  // Per rank: 8 rings x 14 steps x 262,144 = 29,360,128 B = 2(R-1) S / R = 14 x 2 MiB.
  for (uint32_t g = 0; g < 8; ++g) EXPECT_EQ(sent[g], 29360128u);
  EXPECT_EQ(p.ring_order(3), (std::vector<uint32_t>{3, 4, 5, 6, 7, 0, 1, 2}));
  // SimAI's order: ring-major, then step, then rank ascending.
  EXPECT_EQ(p.flow(0).src, 0u);
  EXPECT_EQ(p.flow(9).step, 1u);
  EXPECT_EQ(p.flow(9).src, 1u);
  EXPECT_EQ(p.flow(9).parent, 0u);  // step-0 flow of ring 0 from rank 0 delivered to rank 1
  EXPECT_EQ(p.flow(112).ring, 1u);  // 14 x 8 flows per ring
}

TEST(Collectives, Tp8AllReduce16MiBOn16Gpus) {
  // TP 8 on 16 GPUs: two independent TP groups {0..7}, {8..15}, each exactly as on 8 GPUs:
  // 2 x 896 = 1,792 flows of 262,144 B, none leaves its server.
  const auto L = make_layout(header(8, 1, 16), 16, 8);
  size_t total = 0;
  for (uint32_t first : {0u, 8u}) {
    const auto m = group_members(L, CommGroup::TP, first);
    const auto p = plan_collective(Collective::AllReduce, 16 * MiB, m, ring_count(L, m));
    check_ring_plan(p, 8, 8, 14, 262144);
    for (const auto& f : explicit_flows(p)) {
      EXPECT_EQ(f.src / 8, first / 8);
      EXPECT_EQ(f.dst / 8, first / 8);
      EXPECT_EQ(f.dst, first + (f.src - first + 1) % 8);
    }
    total += p.size();
  }
  EXPECT_EQ(total, 1792u);
}

TEST(Collectives, DpAllReduceOneRankPerServer) {
  // 16 GPUs / TP 8: DP group {3, 11}, 1 ring, steps 2(2-1) = 2, chunk 16 MiB / 2 / 1 = 8 MiB,
  // flows 1 x 2 x 2 = 4: 3 -> 11 and 11 -> 3 in each step.
  const auto L = make_layout(header(8), 16, 8);
  const auto m = group_members(L, CommGroup::DP, 3);
  const auto p = plan_collective(Collective::AllReduce, 16 * MiB, m, ring_count(L, m));
  check_ring_plan(p, 2, 1, 2, 8 * MiB);
  EXPECT_EQ(p.flow(0).src, 3u);
  EXPECT_EQ(p.flow(0).dst, 11u);
  EXPECT_EQ(p.flow(1).src, 11u);
  EXPECT_EQ(p.flow(1).dst, 3u);
}

TEST(Collectives, ReduceScatterAndAllGatherSteps) {
  // TP 8, 16 MiB: steps R-1 = 7, flows 8 x 7 x 8 = 448 of 262,144 B; per rank 7 x 2 MiB sent.
  const auto m = range(0, 8);
  for (Collective op : {Collective::ReduceScatter, Collective::AllGather}) {
    const auto p = plan_collective(op, 16 * MiB, m, 8);
    check_ring_plan(p, 8, 8, 7, 262144);
    EXPECT_EQ(p.size(), 448u);
  }
  // DP group of 8 ranks with TP 4 on 8-GPU servers: 2 ranks per server -> 2 rings, 4 servers.
  // RS of 12 MiB: chunk 12 MiB / 8 / 2 = 786,432 B, steps 7, flows 2 x 7 x 8 = 112.
  const auto L = make_layout(header(4, 4), 32, 8);
  const auto dp = group_members(L, CommGroup::DP, 0);  // {0,4,8,...,28}
  const auto rs = plan_collective(Collective::ReduceScatter, 12 * MiB, dp, ring_count(L, dp));
  check_ring_plan(rs, 8, 2, 7, 786432);
  EXPECT_EQ(rs.ring_order(0), (std::vector<uint32_t>{0, 4, 8, 12, 16, 20, 24, 28}));
  EXPECT_EQ(rs.ring_order(1), (std::vector<uint32_t>{4, 0, 12, 8, 20, 16, 28, 24}));
}

TEST(Collectives, Tp16RingCrossesRails) {
  // TP 16 over two 8-GPU servers: 8 rings; ring c = server 0 rotated by c, then server 1 rotated by c.
  // Ring 3: 3 4 5 6 7 0 1 2 | 11 12 13 14 15 8 9 10: inter-server hops 2 -> 11 and 10 -> 3.
  const auto L = make_layout(header(16), 32, 8);
  const auto m = group_members(L, CommGroup::TP, 20);
  EXPECT_EQ(m, range(16, 32));
  const auto m0 = group_members(L, CommGroup::TP, 0);
  const uint32_t C = ring_count(L, m0);
  ASSERT_EQ(C, 8u);
  const auto p = plan_collective(Collective::AllReduce, 32 * MiB, m0, C);
  // chunk 32 MiB / 16 / 8 = 262,144; steps 30; flows 8 x 30 x 16 = 3,840.
  check_ring_plan(p, 16, 8, 30, 262144);
  EXPECT_EQ(p.ring_order(3),
            (std::vector<uint32_t>{3, 4, 5, 6, 7, 0, 1, 2, 11, 12, 13, 14, 15, 8, 9, 10}));
  std::set<std::pair<uint32_t, uint32_t>> cross;
  for (const auto& f : explicit_flows(p))
    if (f.ring == 3 && f.src / 8 != f.dst / 8) cross.insert({f.src, f.dst});
  EXPECT_EQ(cross, (std::set<std::pair<uint32_t, uint32_t>>{{2, 11}, {10, 3}}));
}

// ---------------------------------------------------------------------------------------------
// AllToAll (§5.7), degenerate cases

TEST(Collectives, AllToAllDirectFlows) {
  // EP group {0,4,8,12}, 4 MiB: R(R-1) = 12 flows of 4 MiB / 4 = 1 MiB, one step, no parents.
  const auto L = make_layout(header(4, 4), 32, 8);
  const auto m = group_members(L, CommGroup::EP, 0);
  const auto p = plan_collective(Collective::AllToAll, 4 * MiB, m, ring_count(L, m));
  EXPECT_EQ(p.size(), 12u);
  EXPECT_EQ(p.steps, 1u);
  EXPECT_EQ(p.rings, 1u);
  EXPECT_EQ(p.chunk, 1 * MiB);
  std::set<std::pair<uint32_t, uint32_t>> pairs;
  for (const auto& f : explicit_flows(p)) {
    EXPECT_EQ(f.bytes, 1 * MiB);
    EXPECT_EQ(f.parent, kNoParent);
    EXPECT_EQ(f.step, 0u);
    EXPECT_EQ(f.ring, 0u);
    EXPECT_NE(f.src, f.dst);
    pairs.insert({f.src, f.dst});
  }
  EXPECT_EQ(pairs.size(), 12u);
  // TP 8 AllToAll of 1000 B: 56 flows of floor(1000 / 8) = 125 B.
  const auto q = plan_collective(Collective::AllToAll, 1000, range(0, 8), 8);
  EXPECT_EQ(q.size(), 56u);
  EXPECT_EQ(q.chunk, 125u);
}

TEST(Collectives, ZeroSizeAndTinyChunks) {
  const auto m = range(0, 8);
  for (Collective op : {Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather,
                        Collective::AllToAll}) {
    const auto p = plan_collective(op, 0, m, 8);  // zero-size: completes immediately
    EXPECT_TRUE(p.empty());
    EXPECT_EQ(p.steps, 0u);
  }
  EXPECT_TRUE(plan_collective(Collective::None, 16 * MiB, m, 8).empty());
  // ALLREDUCE 4 (an ig/wg size, not raised to 4096) on TP 8: 4 / 8 / 8 = 0 -> no flows (SimAI)...
  EXPECT_TRUE(plan_collective(Collective::AllReduce, 4, m, 8).empty());
  // ... or 896 flows of 1 B when clamped.
  const auto c = plan_collective(Collective::AllReduce, 4, m, 8, ZeroChunk::ClampToOneByte);
  check_ring_plan(c, 8, 8, 14, 1);
  // A fwd size raised to 4096: 4096 / 64 = 64 B per flow. 100 B: floor(100 / 8 / 8) = 1 B.
  check_ring_plan(plan_collective(Collective::AllReduce, 4096, m, 8), 8, 8, 14, 64);
  check_ring_plan(plan_collective(Collective::AllGather, 100, m, 8), 8, 8, 7, 1);
  // AllToAll of 7 B on 8 ranks: floor(7 / 8) = 0.
  EXPECT_TRUE(plan_collective(Collective::AllToAll, 7, m, 8).empty());
  EXPECT_EQ(plan_collective(Collective::AllToAll, 7, m, 8, ZeroChunk::ClampToOneByte).size(), 56u);
}

TEST(Collectives, SingleRankAndBadRings) {
  // n = 1 (e.g. DP_EP with EP = DP, or DP with TP = all GPUs): no flows.
  for (Collective op : {Collective::AllReduce, Collective::ReduceScatter, Collective::AllGather,
                        Collective::AllToAll})
    EXPECT_TRUE(plan_collective(op, 16 * MiB, {5}, 1).empty());
  EXPECT_TRUE(plan_collective(Collective::AllReduce, 16 * MiB, {}, 0).empty());
  const auto L = make_layout(header(0), 8, 8);  // TP = all 8 GPUs -> DP 1
  EXPECT_EQ(group_members(L, CommGroup::DP, 4), (std::vector<uint32_t>{4}));
  // Ring count must divide the group size; a duplicated member is rejected.
  EXPECT_THROW(plan_collective(Collective::AllReduce, 16 * MiB, range(0, 8), 3), std::invalid_argument);
  EXPECT_THROW(plan_collective(Collective::AllReduce, 16 * MiB, range(0, 8), 0), std::invalid_argument);
  EXPECT_THROW(plan_collective(Collective::AllReduce, 16 * MiB, {0, 1, 1, 2}, 1), std::invalid_argument);
  // Member order does not matter.
  const auto a = plan_collective(Collective::AllReduce, 1 * MiB, {3, 1, 2, 0}, 4);
  const auto b = plan_collective(Collective::AllReduce, 1 * MiB, {0, 1, 2, 3}, 4);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a.flow(i).src, b.flow(i).src);
    EXPECT_EQ(a.flow(i).dst, b.flow(i).dst);
  }
}
