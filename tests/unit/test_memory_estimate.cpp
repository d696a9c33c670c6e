// The network's memory estimate (net/memory_estimate.h): the routing table counted by hand, and the
// whole estimate against what building a network and its routes really allocates (glibc's mallinfo2).
#include <gtest/gtest.h>
#include <malloc.h>

#include "wormhole/cc/factory.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/net/memory_estimate.h"
#include "wormhole/net/network.h"
#include "wormhole/topo/generators.h"

using namespace wh;

TEST(MemoryEstimate, RoutingTableByHand) {
  // Spectrum-X, 16 GPUs: 2 NVSwitches, 8 leaves, 64 spines; links 64·8 + 16 NIC + 16 NVLink = 544.
  // Every GPU has two ports (NVLink and NIC), so each is a table row as are the 74 switches: 90 rows
  // of 16 hosts, 4 B each = 5760 B.
  SpectrumXParams p;
  p.gpus = 16;
  const NetworkFootprint f = estimate_network_bytes(generate_spectrum_x(p).topo);
  EXPECT_EQ(f.routing, 90u * 16 * 4);
  EXPECT_GE(f.ports, 1088u * sizeof(Port));  // two ports a link
  EXPECT_LT(f.ports, 1088u * (sizeof(Port) + 128));
  EXPECT_GE(f.nodes, 90u * sizeof(Node));
  EXPECT_EQ(f.total(), f.nodes + f.ports + f.routing);
  // Without NVLink a GPU has one port and no row: the 72 switches' rows only, 72·16·4 = 4608 B.
  p.nvswitches_per_server = 0;
  EXPECT_EQ(estimate_network_bytes(generate_spectrum_x(p).topo).routing, 72u * 16 * 4);
  // 131,072 GPUs: 16,384 NVSwitches, 2048 leaves, 64 spines and every GPU are rows (149,568) of
  // 131,072 hosts: 78.4 GB, the part that made such a run end in std::bad_alloc.
  p.gpus = 131072;
  p.nvswitches_per_server = 1;
  EXPECT_EQ(estimate_network_bytes(generate_spectrum_x(p).topo).routing, 149568ull * 131072 * 4);
}

TEST(MemoryEstimate, WithinAQuarterOfWhatANetworkAllocates) {
  // 1024 Spectrum-X GPUs: routing 1232 rows × 1024 hosts × 4 B = 5.0 MB, ports 6144 × sizeof(Port).
  SpectrumXParams p;
  p.gpus = 1024;
  const GeneratedFabric f = generate_spectrum_x(p);
  const NetworkFootprint est = estimate_network_bytes(f.topo);
  ASSERT_EQ(est.routing, 1232u * 1024 * 4);
  SimConfig cfg;
  cfg.ecn[400'000'000'000] = {1600, 6400, 0.2};
  cfg.cc_mode = 3;  // HPCC: congestion control is not what is measured
  // In use: small chunks (uordblks) and the mmap-ed large ones (hblkhd), as the routing table.
  const auto in_use = [] { return mallinfo2().uordblks + mallinfo2().hblkhd; };
  const size_t before = in_use();
  {
    Network net(cfg, f.topo, make_cc(cfg, nullptr));
    net.routing();
    const double used = double(in_use() - before);
    EXPECT_GT(double(est.total()), 0.8 * used) << "estimated " << est.total() << " B, allocated " << used << " B";
    EXPECT_LT(double(est.total()), 1.25 * used) << "estimated " << est.total() << " B, allocated " << used << " B";
  }
}
