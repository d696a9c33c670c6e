// Routing against the reference: next-hop order, ECMP choices, base RTT/BDP maxima (docs/network-model.md §12, §14).
#include <gtest/gtest.h>

#include "wormhole/cc/factory.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/io/results_writer.h"
#include "wormhole/io/topology.h"
#include "wormhole/net/hash.h"
#include "wormhole/net/network.h"

using namespace wh;

namespace {
struct Loaded {
  SimConfig cfg;
  Topology topo;
  std::unique_ptr<Network> net;
};
Loaded load(const std::string& scenario, const std::string& config) {
  Loaded l;
  const std::string dir = std::string(WH_TEST_DATA) + "/refruns/" + scenario + "/";
  l.cfg = read_hpcc_config(dir + config);
  l.topo = read_topology(l.cfg.topology_file);
  l.net = std::make_unique<Network>(l.cfg, l.topo, make_cc(l.cfg, nullptr));
  return l;
}
std::vector<uint32_t> peers(Network& net, uint32_t node, uint32_t dst) {
  std::vector<uint32_t> out;
  for (uint32_t p : net.routing().next_hops(node, dst)) out.push_back(net.ports()[net.ports()[p].peer].node);
  return out;
}
}  // namespace

TEST(Routing, LeafSpineNextHopsAreSpinesDescending) {
  auto l = load("hpcc-incast16to1-leafspine64-1MB", "config_dcqcn.txt");
  EXPECT_EQ(peers(*l.net, 65, 0), (std::vector<uint32_t>{79, 78, 77, 76, 75, 74, 73, 72}));
  EXPECT_EQ(peers(*l.net, 72, 0), (std::vector<uint32_t>{64}));
  // The reference's traced decisions: 8 -> 0 at leaf 65 takes spine 79, 9 -> 0 takes spine 78.
  const auto hops = l.net->routing().next_hops(65, 0);
  EXPECT_EQ(l.net->ports()[l.net->ports()[hops[ecmp_hash(node_ip(8), node_ip(0), 10000, 100, 65) % 8]].peer].node, 79u);
  EXPECT_EQ(l.net->ports()[l.net->ports()[hops[ecmp_hash(node_ip(9), node_ip(0), 10000, 100, 65) % 8]].peer].node, 78u);
  EXPECT_EQ(l.net->routing().max_rtt_ns(), 8320u);
  EXPECT_EQ(l.net->routing().max_bdp_bytes(), 104000u);
}

TEST(Routing, FatTreeMaximaAndAggregationChoice) {
  auto l = load("hpcc-ring16-fattree-k4-1MB", "config_dcqcn.txt");
  EXPECT_EQ(l.net->routing().max_rtt_ns(), 12480u);
  EXPECT_EQ(l.net->routing().max_bdp_bytes(), 156000u);
  // src 1 -> dst 2, seed 16 (edge 16): index 0 of 2 -> aggregation 25.
  const auto hops = l.net->routing().next_hops(16, 2);
  ASSERT_EQ(hops.size(), 2u);
  EXPECT_EQ(l.net->ports()[l.net->ports()[hops[ecmp_hash(node_ip(1), node_ip(2), 10000, 100, 16) % 2]].peer].node, 25u);
  const PathMetrics& m = l.net->routing().pair(0, 1);
  EXPECT_EQ(m.rtt_ns(), 4160u);
  EXPECT_EQ(m.hops, 2u);
}
