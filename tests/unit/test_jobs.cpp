// Placement of several jobs on one cluster (docs/workloads.md §11). Known answers by hand.
#include <gtest/gtest.h>

#include "wormhole/workload/jobs.h"

using namespace wh;

namespace {
std::vector<uint32_t> ids(std::initializer_list<uint32_t> l) { return l; }
}  // namespace

// 4 servers of 4 GPUs (16 GPUs). Job 0 asks for GPUs 4-7 explicitly (taken first); job 1 packs 6
// GPUs: the lowest free, 0-3 and 8-9; job 2 spreads 4 over the servers (below).
TEST(Jobs, ExplicitThenPackedThenSpread) {
  const auto p = place_jobs({{ids({7, 6, 5, 4}), 0, "packed"}, {{}, 6, "packed"}, {{}, 4, "spread"}}, 16, 4);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0], ids({4, 5, 6, 7}));
  EXPECT_EQ(p[1], ids({0, 1, 2, 3, 8, 9}));
  // Free after jobs 0 and 1: 10, 11, 12, 13, 14, 15. Spread order: slot 0 (12), slot 1 (13), slot 2 (10,
  // 14), slot 3 (11, 15) -> the first 4: 12, 13, 10, 14.
  EXPECT_EQ(p[2], ids({10, 12, 13, 14}));
}

TEST(Jobs, SpreadOnAnEmptyClusterTakesOneSlotPerServerFirst) {
  EXPECT_EQ(place_jobs({{{}, 4, "spread"}}, 16, 4)[0], ids({0, 4, 8, 12}));
  EXPECT_EQ(place_jobs({{{}, 6, "spread"}}, 16, 4)[0], ids({0, 1, 4, 5, 8, 12}));
}

TEST(Jobs, PlacementErrors) {
  auto error = [](const std::vector<PlacementRequest>& r) {
    try {
      place_jobs(r, 16, 4);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error({{ids({0, 16}), 0, "packed"}}), "job 0: GPU 16 does not exist (the topology has GPUs 0-15)");
  EXPECT_EQ(error({{ids({0, 1}), 0, "packed"}, {ids({1}), 0, "packed"}}), "job 1: GPU 1 is also job 0's");
  EXPECT_EQ(error({{{}, 12, "packed"}, {{}, 8, "spread"}}), "job 1: 8 GPUs asked for, 4 left free of the topology's 16");
}
