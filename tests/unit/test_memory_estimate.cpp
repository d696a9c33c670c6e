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
  // The fabric (72 switches) sees 8 attachment classes (one per leaf: its rail's GPUs), each NVSwitch
  // one (its server's GPUs): 72·8 + 2·1 = 578 entries of 12 B, and 12 B per host link (32).
  SpectrumXParams p;
  p.gpus = 16;
  const NetworkFootprint f = estimate_network_bytes(generate_spectrum_x(p).topo);
  EXPECT_EQ(f.routing, 578u * 12 + 32 * 12);
  EXPECT_GE(f.ports, 1088u * sizeof(Port));  // two ports a link
  EXPECT_LT(f.ports, 1088u * (sizeof(Port) + 128));
  EXPECT_GE(f.nodes, 90u * sizeof(Node));
  EXPECT_EQ(f.total(), f.nodes + f.ports + f.routing);
  // Without NVLink: the fabric's 72·8 entries and 16 host links.
  p.nvswitches_per_server = 0;
  EXPECT_EQ(estimate_network_bytes(generate_spectrum_x(p).topo).routing, 72u * 8 * 12 + 16 * 12);
  // 131,072 GPUs: 2048 leaves and 64 spines see 2048 classes, 16,384 NVSwitches one each, 262,144 host
  // links: 55.2 MB (it was 78.4 GB with a column per host, which made such a run end in std::bad_alloc).
  p.gpus = 131072;
  p.nvswitches_per_server = 1;
  EXPECT_EQ(estimate_network_bytes(generate_spectrum_x(p).topo).routing, (2112ull * 2048 + 16384) * 12 + 262144ull * 12);
}

TEST(MemoryEstimate, WithinAQuarterOfWhatANetworkAllocates) {
  // 1024 Spectrum-X GPUs: routing (80 switches × 16 classes + 128 NVSwitches) × 12 B + 2048 host links
  // × 12 B = 41,472 B, ports 6144 × sizeof(Port).
  SpectrumXParams p;
  p.gpus = 1024;
  const GeneratedFabric f = generate_spectrum_x(p);
  const NetworkFootprint est = estimate_network_bytes(f.topo);
  ASSERT_EQ(est.routing, (80u * 16 + 128) * 12 + 2048 * 12);
  SimConfig cfg;
  cfg.ecn[400'000'000'000] = {1600, 6400, 0.2};
  cfg.cc_mode = 3;  // HPCC: congestion control is not what is measured
  // In use: small chunks (uordblks) and the mmap-ed large ones (hblkhd), and the ports' state, which
  // PortArray maps itself.
  const auto in_use = [] { return mallinfo2().uordblks + mallinfo2().hblkhd; };
  const size_t before = in_use();
  {
    Network net(cfg, f.topo, make_cc(cfg, nullptr));
    net.routing();
    ASSERT_EQ(net.ports().made_count(), 6144u);
    const double used = double(in_use() - before + net.ports().made_count() * sizeof(Port));
    EXPECT_GT(double(est.total()), 0.8 * used) << "estimated " << est.total() << " B, allocated " << used << " B";
    EXPECT_LT(double(est.total()), 1.25 * used) << "estimated " << est.total() << " B, allocated " << used << " B";
  }
}
