// The graph the distributed run's cut is made on (partition/cut_graph.h): link and node weights from
// the expected flows' routed bytes, over the paths the flows take when they run.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "wormhole/cc/factory.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/io/topology.h"
#include "wormhole/net/network.h"
#include "wormhole/partition/cut_graph.h"

#include "net_fixtures.h"

using namespace wh;
using namespace wh::test;

namespace {

SimConfig dcqcn_config() {
  return read_hpcc_config(std::string(WH_TEST_DATA) + "/refruns/hpcc-ring16-fattree-k4-1MB/config_dcqcn.txt");
}

std::vector<uint64_t> edge_weights(const NetGraph& g) {
  std::vector<uint64_t> w;
  for (const NetGraph::Edge& e : g.edges) w.push_back(e.weight);
  return w;
}

}  // namespace

// One 10-MB flow from host 0 to host 1 on a star of 4 hosts (switch 4; link i joins host i): its two
// links weigh 10 MB + 1, the idle ones 1. Nodes weigh 1 + ports + flows + MB through them: host 0
// 1 + 1 + 1 + 10 (sent out of its NIC), host 1 1 + 1 + 1 + 10 (received), the switch 1 + 4 + 10 (sent
// out of its port to host 1), hosts 2 and 3 1 + 1.
TEST(CutGraph, StarKnownAnswer) {
  const SimConfig cfg = dcqcn_config();
  Network net(cfg, star(4), make_cc(cfg, nullptr));
  net.routing();
  const NetGraph g = cut_graph(star(4), net.fabric(), cut_flows({flow(0, 1, 10'000'000)}));
  EXPECT_EQ(edge_weights(g), (std::vector<uint64_t>{11, 11, 1, 1}));
  EXPECT_EQ(g.node_weight, (std::vector<uint32_t>{13, 13, 2, 2, 15}));
  // Without flows a link weighs its rate in Gb/s and a node its links' rates in 100 Gb/s.
  const NetGraph idle = cut_graph(star(4), net.fabric(), {});
  EXPECT_EQ(edge_weights(idle), (std::vector<uint64_t>{100, 100, 100, 100}));
  EXPECT_EQ(idle.node_weight, (std::vector<uint32_t>{3, 3, 3, 3, 9}));
}

// On a k = 4 fat tree (ECMP at the edge and aggregation switches), each link weighs what the flows
// sent over it when they ran: a flow's own path follows its source port (several flows of one pair
// included).
TEST(CutGraph, WeighsEveryFlowOverThePathItTakes) {
  const SimConfig cfg = dcqcn_config();
  const Topology topo = read_topology(std::string(WH_TEST_DATA) + "/refruns/hpcc-ring16-fattree-k4-1MB/topology.txt");
  std::vector<FlowSpec> specs;
  for (uint32_t i = 0; i < 16; ++i)
    for (uint32_t k = 0; k < 1 + i % 3; ++k)  // 1-3 flows a pair: their source ports differ
      specs.push_back(flow(i, (i + 5 + 2 * (i % 2)) % 16, (1 + k) * 1'000'000, (i * 3 + k) * 20 * kUs));
  Network net(cfg, topo, make_cc(cfg, nullptr));
  net.add_flows(specs);
  const std::vector<CutFlow> before = cut_flows(net);  // as a distributed run takes them, before it runs
  net.run(100 * kMs);
  // Port -> link, as topology.h numbers interfaces.
  std::vector<uint32_t> link_of_port(net.ports().size());
  std::vector<uint32_t> next_if(topo.num_nodes, 0);
  for (uint32_t k = 0; k < topo.links.size(); ++k)
    for (uint32_t n : {topo.links[k].a, topo.links[k].b}) link_of_port[net.nodes()[n].first_port + next_if[n]++] = k;
  std::vector<uint64_t> bytes(topo.links.size(), 0);
  uint32_t multi_hop = 0;
  for (uint32_t id = 0; id < net.flow_count(); ++id) {
    ASSERT_TRUE(net.flow_finished(id));
    const std::vector<uint32_t> path = net.data_path(id);
    multi_hop += path.size() > 3;
    for (uint32_t p : path) bytes[link_of_port[p]] += net.flow_info(id).size;
  }
  ASSERT_GT(multi_hop, 0u);  // some flows cross the core: ECMP chose among paths
  std::vector<uint64_t> expected;
  for (uint64_t b : bytes) expected.push_back(b / 1'000'000 + 1);
  EXPECT_EQ(edge_weights(cut_graph(topo, net.fabric(), before)), expected);
}

// A source-destination pair of expected traffic (many flows, other ports) is spread evenly at every
// choice. 8 MB from host 0 (pod 0) to host 15 (pod 3) of the k = 4 fat tree: its NIC link 8 MB, the
// edge's 2 uplinks 4 MB each, the 2 aggregations' 4 core uplinks 2 MB each, the 4 cores' links into
// pod 3 2 MB each, pod 3's aggregations' 2 links to host 15's edge 4 MB each, its NIC link 8 MB: weights
// MB + 1, the 32 − 14 other links 1.
TEST(CutGraph, SpreadsAPairOverItsEcmpPaths) {
  const SimConfig cfg = dcqcn_config();
  const Topology topo = read_topology(std::string(WH_TEST_DATA) + "/refruns/hpcc-ring16-fattree-k4-1MB/topology.txt");
  Network net(cfg, topo, make_cc(cfg, nullptr));
  net.routing();
  std::vector<uint64_t> w = edge_weights(cut_graph(topo, net.fabric(), cut_flows({flow(0, 15, 8'000'000)})));
  std::sort(w.begin(), w.end());
  std::vector<uint64_t> expected(w.size() - 14, 1);
  for (uint64_t x : {3, 3, 3, 3, 3, 3, 3, 3, 5, 5, 5, 5, 9, 9}) expected.push_back(x);
  EXPECT_EQ(w, expected);
}
