// Flow storage (include/wormhole/net/flow_table.h): a finished flow keeps its FlowInfo and gives its QP
// state back, so a run holds state only for the flows running at once; what outlives the state is
// exactly what the results need.
#include <gtest/gtest.h>

#include <vector>

#include "wormhole/cc/factory.h"
#include "wormhole/core/chunked.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/net/flow_table.h"
#include "wormhole/net/network.h"

#include "net_fixtures.h"

using namespace wh;
using namespace wh::test;

namespace {

SimConfig dcqcn() {
  return read_hpcc_config(std::string(WH_TEST_DATA) + "/refruns/hpcc-ring16-fattree-k4-1MB/config_dcqcn.txt");
}

}  // namespace

TEST(ChunkedVector, GrowsWithoutMovingElementsAndTruncatesWholeChunks) {
  ChunkedVector<uint64_t, 2> v;  // chunks of 4
  v.push_back(7);
  const uint64_t* first = &v[0];
  for (uint64_t i = 1; i < 10; ++i) EXPECT_EQ(v.push_back(i * 10), i);
  EXPECT_EQ(&v[0], first);  // growth never moved it
  EXPECT_EQ(v.size(), 10u);
  EXPECT_EQ(v[9], 90u);
  EXPECT_EQ(v.capacity_bytes(), 3 * 4 * sizeof(uint64_t));
  v.truncate(5);
  EXPECT_EQ(v.capacity_bytes(), 2 * 4 * sizeof(uint64_t));
  EXPECT_EQ(v.push_back(55), 5u);
  EXPECT_EQ(v[4], 40u);
  EXPECT_EQ(v[5], 55u);
}

TEST(FlowTable, ReleasedSlotsAreReusedAndTheOutcomeOutlivesTheState) {
  FlowTable t;
  FlowInfo a;
  a.src = 1, a.dst = 2, a.size = 5000;
  const uint32_t id0 = t.add(a), id1 = t.add(a);
  EXPECT_FALSE(t.live(id0));
  Flow& s0 = t.create_state(id0);
  EXPECT_EQ(s0.size, 5000u);
  s0.skipped_bytes = 1000, s0.nic = 3, s0.clock_offset = 42;
  t.release(id0);
  EXPECT_FALSE(t.live(id0));
  EXPECT_EQ(t.info(id0).skipped_bytes, 1000u);
  EXPECT_EQ(t.info(id0).nic, 3u);
  EXPECT_EQ(t.info(id0).clock_offset, 42);
  Flow& s1 = t.create_state(id1);  // takes the slot id0 gave back, cleared
  EXPECT_EQ(&s1, &s0);
  EXPECT_EQ(s1.skipped_bytes, 0u);
  EXPECT_EQ(t.live_count(), 1u);
  EXPECT_EQ(t.peak_live(), 1u);
}

TEST(FlowTable, SequentialFlowsHoldOneStateAtATime) {
  // 50 flows of 100 KB, each starting 100 µs after the last (a flow takes ~12 µs): the run never holds
  // more than one flow's QP state, and none at its end; every record is as a lone flow's.
  const SimConfig cfg = dcqcn();
  Network net(cfg, star(2), make_cc(cfg, nullptr));
  std::vector<FlowSpec> specs;
  for (uint32_t k = 0; k < 50; ++k) specs.push_back(flow(0, 1, 100'000, k * 100 * kUs));
  net.add_flows(specs);
  EXPECT_EQ(net.live_flows(), 0u);  // added, not started: no state yet
  net.run(1 * kSec);
  EXPECT_EQ(net.flows_finished(), 50u);
  EXPECT_EQ(net.live_flows(), 0u);
  EXPECT_EQ(net.peak_live_flows(), 1u);
  const uint64_t fct = net.record(0).fct_ns();
  EXPECT_GT(fct, 8'000u);  // 100 KB at 100 Gb/s is 8 µs of payload
  for (uint32_t id = 0; id < 50; ++id) {
    const FlowRecord r = net.record(id);
    ASSERT_TRUE(r.finished());
    EXPECT_EQ(r.fct_ns(), fct) << id;
    EXPECT_EQ(r.min_fct_ns, net.record(0).min_fct_ns);
    EXPECT_EQ(r.sport, 10000u + id);  // the k-th flow of a pair
  }
  EXPECT_EQ(net.data_path(49).size(), 2u);  // a released flow still knows its path: NIC, switch port
  EXPECT_THROW(net.flow(0), std::logic_error);  // its QP state is gone
}

TEST(FlowTable, KeepFinishedStateKeepsEveryFlowsStateForInspection) {
  const SimConfig cfg = dcqcn();
  Network net(cfg, star(2), make_cc(cfg, nullptr));
  net.keep_finished_state(true);
  net.add_flows({flow(0, 1, 100'000), flow(0, 1, 100'000, 100 * kUs)});
  net.run(1 * kSec);
  EXPECT_EQ(net.live_flows(), 2u);
  EXPECT_EQ(net.flow(1).snd_una, 100'000u);
}
