// PartitionSet: hand-built create/join/merge/split cases, the id rules (merge survivor, old id
// kept by the smallest flow, LIFO reuse), and a cross-check against connected components
// recomputed from scratch after every step of a pseudo-random add/remove sequence.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "wormhole/ffwd/partitions.h"

using namespace wh;
using V = std::vector<uint32_t>;

namespace {
constexpr uint32_t kNone = PartitionSet::kNone;
uint32_t add(PartitionSet& ps, uint32_t flow, V ports) { return ps.add_flow(flow, ports); }
V of_ports(const PartitionSet& ps, V ports) { return ps.partitions_of_ports(ports); }
}  // namespace

TEST(PartitionSet, DisjointFlowsMakeSeparatePartitions) {
  PartitionSet ps(10);
  EXPECT_EQ(ps.size(), 0u);
  EXPECT_EQ(add(ps, 1, {0, 1}), 0u);
  EXPECT_EQ(add(ps, 2, {3, 2}), 1u);
  EXPECT_EQ(ps.size(), 2u);
  EXPECT_EQ(ps.live_ids(), (V{0, 1}));
  EXPECT_EQ(ps.id_bound(), 2u);
  EXPECT_EQ(ps.flows(0), (V{1}));
  EXPECT_EQ(ps.ports(0), (V{0, 1}));
  EXPECT_EQ(ps.flows(1), (V{2}));
  EXPECT_EQ(ps.ports(1), (V{2, 3}));
  EXPECT_EQ(ps.partition_of_flow(1), 0u);
  EXPECT_EQ(ps.partition_of_flow(2), 1u);
  EXPECT_EQ(ps.partition_of_flow(3), kNone);
  EXPECT_EQ(ps.partition_of_port(3), 1u);
  EXPECT_EQ(ps.partition_of_port(4), kNone);
  EXPECT_EQ(ps.flow_ports(2), (V{2, 3}));
}

TEST(PartitionSet, FlowJoinsTheOnePartitionItTouches) {
  PartitionSet ps(10);
  add(ps, 1, {0, 1});
  add(ps, 2, {2, 3});
  EXPECT_EQ(add(ps, 0, {4, 3}), 1u);
  EXPECT_EQ(ps.size(), 2u);
  EXPECT_EQ(ps.flows(1), (V{0, 2}));
  EXPECT_EQ(ps.ports(1), (V{2, 3, 4}));
  EXPECT_EQ(ps.partition_of_port(4), 1u);
  EXPECT_EQ(ps.flows(0), (V{1}));
}

TEST(PartitionSet, MergeOfThreeKeepsLargestAndReusesFreedIdsLifo) {
  PartitionSet ps(10);
  EXPECT_EQ(add(ps, 5, {0}), 0u);
  EXPECT_EQ(add(ps, 3, {1}), 1u);
  EXPECT_EQ(add(ps, 4, {1}), 1u);  // partition 1 now has two flows
  EXPECT_EQ(add(ps, 7, {2}), 2u);
  EXPECT_EQ(add(ps, 9, {3}), 3u);  // untouched bystander
  EXPECT_EQ(of_ports(ps, {2, 0, 1, 1, 5}), (V{0, 1, 2}));
  EXPECT_EQ(add(ps, 6, {2, 0, 1}), 1u);  // most flows wins, not smallest id
  EXPECT_EQ(ps.size(), 2u);
  EXPECT_FALSE(ps.live(0));
  EXPECT_FALSE(ps.live(2));
  EXPECT_EQ(ps.live_ids(), (V{1, 3}));
  EXPECT_EQ(ps.flows(1), (V{3, 4, 5, 6, 7}));
  EXPECT_EQ(ps.ports(1), (V{0, 1, 2}));
  for (uint32_t f : {3u, 4u, 5u, 6u, 7u}) EXPECT_EQ(ps.partition_of_flow(f), 1u);
  for (uint32_t p : {0u, 1u, 2u}) EXPECT_EQ(ps.partition_of_port(p), 1u);
  EXPECT_EQ(ps.flows(3), (V{9}));
  // Freed in ascending order (0 then 2), so reuse goes 2, 0, then a fresh id.
  EXPECT_EQ(add(ps, 10, {5}), 2u);
  EXPECT_EQ(add(ps, 11, {6}), 0u);
  EXPECT_EQ(add(ps, 12, {7}), 4u);
  EXPECT_EQ(ps.id_bound(), 5u);
}

TEST(PartitionSet, MergeTieGoesToSmallestId) {
  PartitionSet ps(4);
  add(ps, 8, {0});
  add(ps, 2, {1});
  add(ps, 1, {2});
  EXPECT_EQ(add(ps, 3, {2, 1}), 1u);  // partitions 1 and 2 have one flow each
  EXPECT_EQ(ps.flows(1), (V{1, 2, 3}));
  EXPECT_EQ(ps.live_ids(), (V{0, 1}));
  EXPECT_EQ(add(ps, 4, {3}), 2u);
}

TEST(PartitionSet, ChainSplitsWhenMiddleLeaves) {
  // A = 5 on ports {0,1}, B = 2 on {1,2}, C = 3 on {2,3}: one partition through B.
  PartitionSet ps(6);
  EXPECT_EQ(add(ps, 5, {0, 1}), 0u);
  EXPECT_EQ(add(ps, 2, {1, 2}), 0u);
  EXPECT_EQ(add(ps, 3, {2, 3}), 0u);
  EXPECT_EQ(ps.ports(0), (V{0, 1, 2, 3}));
  // C holds the smallest remaining flow id (3 < 5), so C keeps id 0 and A gets a new one.
  EXPECT_EQ(ps.remove_flow(2), (V{0, 1}));
  EXPECT_EQ(ps.size(), 2u);
  EXPECT_EQ(ps.flows(0), (V{3}));
  EXPECT_EQ(ps.ports(0), (V{2, 3}));
  EXPECT_EQ(ps.flows(1), (V{5}));
  EXPECT_EQ(ps.ports(1), (V{0, 1}));
  EXPECT_EQ(ps.partition_of_flow(5), 1u);
  EXPECT_EQ(ps.partition_of_flow(3), 0u);
  EXPECT_EQ(ps.partition_of_flow(2), kNone);
  EXPECT_EQ(ps.partition_of_port(0), 1u);
  EXPECT_EQ(ps.partition_of_port(1), 1u);
  EXPECT_EQ(ps.partition_of_port(2), 0u);
  EXPECT_EQ(ps.partition_of_port(3), 0u);
}

TEST(PartitionSet, RemovalWithoutSplitKeepsIdAndDropsUnusedPorts) {
  PartitionSet ps(6);
  add(ps, 1, {0, 1});
  add(ps, 2, {1, 2});
  add(ps, 3, {0, 2, 4});  // a cycle: removing 2 does not disconnect
  EXPECT_EQ(ps.remove_flow(3), (V{0}));
  EXPECT_EQ(ps.flows(0), (V{1, 2}));
  EXPECT_EQ(ps.ports(0), (V{0, 1, 2}));
  EXPECT_EQ(ps.partition_of_port(4), kNone);
  EXPECT_EQ(ps.size(), 1u);
}

TEST(PartitionSet, SearchesFromEachPortOfTheRemovedFlowJoinWhereTheyMeet) {
  // A = 1 on ports {0,1,2} leaves three ports others use: B = 2 {0,5} and C = 3 {5,1} meet at port 5;
  // D = 4 {2,6} and E = 5 {6,7} meet nobody else: two parts, {B,C} keeping the id.
  PartitionSet ps(8);
  add(ps, 1, {0, 1, 2});
  add(ps, 2, {0, 5});
  add(ps, 3, {5, 1});
  add(ps, 4, {2, 6});
  add(ps, 5, {6, 7});
  EXPECT_EQ(ps.remove_flow(1), (V{0, 1}));
  EXPECT_EQ(ps.flows(0), (V{2, 3}));
  EXPECT_EQ(ps.ports(0), (V{0, 1, 5}));
  EXPECT_EQ(ps.flows(1), (V{4, 5}));
  EXPECT_EQ(ps.ports(1), (V{2, 6, 7}));
  // Joined again through F = 6 {7,5}: removing D now leaves ports 2 (nobody) and 6 (E): one part.
  add(ps, 6, {7, 5});
  EXPECT_EQ(ps.size(), 1u);
  EXPECT_EQ(ps.remove_flow(4), (V{0}));
  EXPECT_EQ(ps.flows(0), (V{2, 3, 5, 6}));
  EXPECT_EQ(ps.partition_of_port(2), kNone);
  // Removing C leaves ports 5 (B, F) and 1 (nobody): one part whatever the rest.
  EXPECT_EQ(ps.remove_flow(3), (V{0}));
  EXPECT_EQ(ps.ports(0), (V{0, 5, 6, 7}));
}

TEST(PartitionSet, SearchesThatMeetKeepThePartitionWhole) {
  // A = 1 on {0,1} leaves ports 0 (B = 2 {0,5}) and 1 (C = 3 {1,5}) in use; the searches from them meet
  // at port 5: one part, its id kept, every port still used.
  PartitionSet ps(6);
  add(ps, 1, {0, 1});
  add(ps, 2, {0, 5});
  add(ps, 3, {1, 5});
  EXPECT_EQ(ps.remove_flow(1), (V{0}));
  EXPECT_EQ(ps.size(), 1u);
  EXPECT_EQ(ps.flows(0), (V{2, 3}));
  EXPECT_EQ(ps.ports(0), (V{0, 1, 5}));
  // D = 4 on {0,1,2,3} leaves four ports in use; E = 5 {2,6} and F = 6 {3,6} meet at port 6, G = 7 {6,5}
  // joins them to B and C at port 5: one part. Without G, two.
  PartitionSet again(8);
  for (auto [f, ports] : {std::pair<uint32_t, V>{2, {0, 5}}, {3, {1, 5}}, {4, {0, 1, 2, 3}}, {5, {2, 6}}, {6, {3, 6}},
                          {7, {6, 5}}})
    add(again, f, ports);
  EXPECT_EQ(again.remove_flow(4), (V{0}));
  EXPECT_EQ(again.flows(0), (V{2, 3, 5, 6, 7}));
  EXPECT_EQ(again.ports(0), (V{0, 1, 2, 3, 5, 6}));
  again.remove_flow(7);
  EXPECT_EQ(again.size(), 2u);
  EXPECT_EQ(again.flows(0), (V{2, 3}));
  EXPECT_EQ(again.flows(1), (V{5, 6}));
}

TEST(PartitionSet, StarSplitsIntoThreeNewIdsLifoInFlowOrder) {
  PartitionSet ps(10);
  EXPECT_EQ(add(ps, 100, {5}), 0u);
  EXPECT_EQ(add(ps, 101, {6}), 1u);
  EXPECT_EQ(add(ps, 0, {0, 1, 2}), 2u);
  add(ps, 12, {2});
  add(ps, 10, {0});
  add(ps, 11, {1});
  EXPECT_EQ(ps.remove_flow(100), V{});
  EXPECT_EQ(ps.remove_flow(101), V{});  // free list now [0, 1]
  // Components {10}, {11}, {12}: 10 keeps 2, then 11 and 12 take 1 and 0 (last freed first).
  EXPECT_EQ(ps.remove_flow(0), (V{2, 1, 0}));
  EXPECT_EQ(ps.partition_of_flow(10), 2u);
  EXPECT_EQ(ps.partition_of_flow(11), 1u);
  EXPECT_EQ(ps.partition_of_flow(12), 0u);
  EXPECT_EQ(ps.partition_of_port(0), 2u);
  EXPECT_EQ(ps.partition_of_port(1), 1u);
  EXPECT_EQ(ps.partition_of_port(2), 0u);
  EXPECT_EQ(ps.ports(1), (V{1}));
  EXPECT_EQ(ps.size(), 3u);
  EXPECT_EQ(ps.id_bound(), 3u);
}

TEST(PartitionSet, RemovingLastFlowFreesTheId) {
  PartitionSet ps(5);
  EXPECT_EQ(add(ps, 4, {1, 2}), 0u);
  EXPECT_EQ(ps.remove_flow(4), V{});
  EXPECT_EQ(ps.size(), 0u);
  EXPECT_FALSE(ps.live(0));
  EXPECT_TRUE(ps.live_ids().empty());
  EXPECT_EQ(ps.partition_of_flow(4), kNone);
  EXPECT_EQ(ps.partition_of_port(1), kNone);
  EXPECT_EQ(ps.partition_of_port(2), kNone);
  EXPECT_EQ(add(ps, 5, {3}), 0u);  // reused, no new id
  EXPECT_EQ(ps.id_bound(), 1u);
  EXPECT_EQ(add(ps, 4, {1}), 1u);  // the same flow id can come back
}

TEST(PartitionSet, FlowWithoutPortsIsItsOwnPartition) {
  PartitionSet ps(3);
  EXPECT_EQ(add(ps, 1, {}), 0u);
  EXPECT_EQ(add(ps, 2, {}), 1u);
  EXPECT_EQ(add(ps, 3, {0}), 2u);
  EXPECT_EQ(ps.flows(0), (V{1}));
  EXPECT_TRUE(ps.ports(0).empty());
  EXPECT_TRUE(ps.flow_ports(1).empty());
  EXPECT_TRUE(of_ports(ps, {}).empty());
  EXPECT_EQ(ps.remove_flow(1), V{});
  EXPECT_EQ(ps.size(), 2u);
  EXPECT_EQ(ps.partition_of_port(0), 2u);
}

TEST(PartitionSet, DuplicatePortsAreCollapsed) {
  PartitionSet ps(5);
  EXPECT_EQ(add(ps, 1, {3, 1, 3, 1, 3}), 0u);
  EXPECT_EQ(ps.flow_ports(1), (V{1, 3}));
  EXPECT_EQ(ps.ports(0), (V{1, 3}));
  EXPECT_EQ(add(ps, 2, {3, 3}), 0u);
  EXPECT_EQ(ps.ports(0), (V{1, 3}));
  EXPECT_EQ(ps.remove_flow(1), (V{0}));
  EXPECT_EQ(ps.ports(0), (V{3}));
  EXPECT_EQ(ps.partition_of_port(1), kNone);
  EXPECT_EQ(ps.remove_flow(2), V{});
  EXPECT_EQ(ps.partition_of_port(3), kNone);
}

TEST(PartitionSet, PartitionsOfPorts) {
  PartitionSet ps(8);
  add(ps, 1, {6});
  add(ps, 2, {0, 1});
  add(ps, 3, {4});
  EXPECT_EQ(of_ports(ps, {4, 6, 7, 6, 2}), (V{0, 2}));
  EXPECT_EQ(of_ports(ps, {1, 0}), (V{1}));
  EXPECT_TRUE(of_ports(ps, {2, 3, 5, 7}).empty());
}

TEST(PartitionSet, DuplicateAddAndAbsentRemoveThrow) {
  PartitionSet ps(4);
  add(ps, 1, {0});
  EXPECT_THROW(add(ps, 1, {2}), std::logic_error);
  EXPECT_THROW(ps.remove_flow(2), std::logic_error);
  // The failed calls changed nothing.
  EXPECT_EQ(ps.size(), 1u);
  EXPECT_EQ(ps.partition_of_port(2), kNone);
  EXPECT_EQ(ps.flow_ports(1), (V{0}));
  ps.remove_flow(1);
  EXPECT_THROW(ps.remove_flow(1), std::logic_error);
}

namespace {

// Checks the whole set against connected components computed from scratch (union-find over
// ports), and returns the number of components.
size_t verify_against_scratch(const PartitionSet& ps, const std::map<uint32_t, V>& present, uint32_t num_ports) {
  // Union-find over flows, joined through the first flow seen on each port.
  std::map<uint32_t, uint32_t> parent;
  for (const auto& [f, _] : present) parent[f] = f;
  auto find = [&](uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  std::vector<uint32_t> port_owner(num_ports, kNone);
  for (const auto& [f, ports] : present)
    for (uint32_t p : ports) {
      if (port_owner[p] == kNone) port_owner[p] = f;
      else parent[find(f)] = find(port_owner[p]);
    }

  std::map<uint32_t, uint32_t> root_to_pid;
  std::map<uint32_t, uint32_t> pid_to_root;
  for (const auto& [f, ports] : present) {
    const uint32_t pid = ps.partition_of_flow(f);
    EXPECT_NE(pid, kNone);
    EXPECT_TRUE(ps.live(pid));
    const uint32_t root = find(f);
    auto [it, fresh] = root_to_pid.emplace(root, pid);
    EXPECT_EQ(it->second, pid) << "flows of one component in two partitions";
    auto [jt, fresh2] = pid_to_root.emplace(pid, root);
    EXPECT_EQ(jt->second, root) << "two components in one partition";
    V sorted = ports;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    EXPECT_EQ(ps.flow_ports(f), sorted);
  }
  EXPECT_EQ(ps.size(), root_to_pid.size());
  V live;
  for (const auto& [pid, _] : pid_to_root) live.push_back(pid);
  EXPECT_EQ(ps.live_ids(), live);

  for (uint32_t pid : live) {
    V want_flows, want_ports;
    for (const auto& [f, ports] : present)
      if (find(f) == pid_to_root[pid]) {
        want_flows.push_back(f);
        want_ports.insert(want_ports.end(), ports.begin(), ports.end());
      }
    std::sort(want_ports.begin(), want_ports.end());
    want_ports.erase(std::unique(want_ports.begin(), want_ports.end()), want_ports.end());
    EXPECT_EQ(ps.flows(pid), want_flows);  // map order: ascending
    EXPECT_EQ(ps.ports(pid), want_ports);
  }
  for (uint32_t p = 0; p < num_ports; ++p) {
    const uint32_t want = port_owner[p] == kNone ? kNone : root_to_pid[find(port_owner[p])];
    EXPECT_EQ(ps.partition_of_port(p), want) << "port " << p;
  }
  return root_to_pid.size();
}

}  // namespace

TEST(PartitionSet, MatchesComponentsFromScratchOnRandomOps) {
  constexpr uint32_t kPorts = 50;
  uint64_t s = 20240607;
  auto next = [&s]() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(s >> 33);
  };
  PartitionSet ps(kPorts);
  std::map<uint32_t, V> present;
  // A model of the id allocator: LIFO free list, merged-away ids freed in ascending order.
  V model_free;
  uint32_t model_bound = 0;
  auto model_new = [&]() {
    if (model_free.empty()) return model_bound++;
    const uint32_t id = model_free.back();
    model_free.pop_back();
    return id;
  };
  size_t merges = 0, splits = 0, max_parts = 0;

  for (int step = 0; step < 2000; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    const uint32_t flow = 7 * (next() % 60) + 3;  // sparse, non-contiguous flow ids
    if (present.count(flow)) {
      const uint32_t old = ps.partition_of_flow(flow);
      V remaining = ps.flows(old);
      remaining.erase(std::find(remaining.begin(), remaining.end(), flow));
      const V got = ps.remove_flow(flow);
      present.erase(flow);
      if (remaining.empty()) {
        EXPECT_TRUE(got.empty());
        model_free.push_back(old);
      } else {
        ASSERT_FALSE(got.empty());
        EXPECT_EQ(got[0], old);
        EXPECT_EQ(ps.flows(got[0]).front(), remaining.front());
        for (size_t k = 1; k < got.size(); ++k) {
          EXPECT_EQ(got[k], model_new());
          EXPECT_LT(ps.flows(got[k - 1]).front(), ps.flows(got[k]).front());
        }
        size_t covered = 0;
        for (uint32_t id : got) covered += ps.flows(id).size();
        EXPECT_EQ(covered, remaining.size());
        if (got.size() > 1) ++splits;
      }
    } else {
      // Ports near a random centre of a ring, so partitions stay local and splits happen.
      const uint32_t centre = next() % kPorts;
      const uint32_t n = next() % 5;  // 0..4 ports, repeats possible
      V ports;
      for (uint32_t i = 0; i < n; ++i) ports.push_back((centre + next() % 4) % kPorts);
      const V touched = ps.partitions_of_ports(ports);
      uint32_t want;
      if (touched.empty()) {
        want = model_new();
      } else {
        want = touched[0];
        for (uint32_t t : touched)
          if (ps.flows(t).size() > ps.flows(want).size()) want = t;
        for (uint32_t t : touched)
          if (t != want) model_free.push_back(t);
        if (touched.size() > 1) ++merges;
      }
      EXPECT_EQ(ps.add_flow(flow, ports), want);
      present[flow] = ports;
    }
    EXPECT_EQ(ps.id_bound(), model_bound);
    max_parts = std::max(max_parts, verify_against_scratch(ps, present, kPorts));
    if (HasFailure()) break;
  }
  // The sequence really exercised merges, splits and many partitions at once.
  EXPECT_GT(merges, 50u);
  EXPECT_GT(splits, 50u);
  EXPECT_GT(max_parts, 5u);
}

// The flow index follows the active flows: a page (256 ids) is held while one of its flows is, and
// ids far apart, re-added after their page was given back, or in one page with others removed
// answer as before.
TEST(PartitionSet, FlowIndexHoldsAPageOnlyWhileOneOfItsFlowsIsActive) {
  PartitionSet ps(8);
  for (uint32_t f = 0; f < 600; ++f) add(ps, f, {f % 8});  // ids 0..599: pages 0, 1 and 2
  EXPECT_EQ(ps.flow_pages_held(), 3u);
  for (uint32_t f = 0; f < 512; ++f) ps.remove_flow(f);   // pages 0 and 1 empty
  EXPECT_EQ(ps.flow_pages_held(), 1u);
  EXPECT_EQ(ps.partition_of_flow(0), kNone);
  EXPECT_EQ(ps.partition_of_flow(511), kNone);
  EXPECT_EQ(ps.flow_ports(512), (V{0}));
  EXPECT_EQ(ps.flow_ports(599), (V{7}));
  add(ps, 5, {3});                                          // page 0 made again
  add(ps, 4000000, {3});                                    // a long way on: page 15625
  EXPECT_EQ(ps.flow_pages_held(), 3u);
  EXPECT_EQ(ps.partition_of_flow(4000000), ps.partition_of_flow(5));
  EXPECT_EQ(ps.partition_of_flow(4000000), ps.partition_of_port(3));
  EXPECT_EQ(ps.flow_ports(4000000), (V{3}));
  EXPECT_EQ(ps.partition_of_flow(3999999), kNone);  // a page never made
  EXPECT_EQ(ps.partition_of_flow(4000001), kNone);  // an empty slot of a page held
  EXPECT_THROW(ps.flow_ports(4000001), std::logic_error);
  for (uint32_t f = 512; f < 600; ++f) ps.remove_flow(f);
  ps.remove_flow(5);
  ps.remove_flow(4000000);
  EXPECT_EQ(ps.flow_pages_held(), 0u);
  EXPECT_EQ(ps.size(), 0u);
  EXPECT_THROW(ps.remove_flow(4000000), std::logic_error);
}
