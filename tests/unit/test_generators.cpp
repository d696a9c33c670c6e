// Fabric generators (docs/workloads.md §3): SimAI's shipped files reproduced byte for byte, node / switch /
// link counts derived by hand, connectivity, the rail property, and the reference k=4 fat tree.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "wormhole/topo/generators.h"

using namespace wh;
namespace fs = std::filesystem;

namespace {

const std::string kSimai = std::string(WH_TEST_DATA) + "/simai";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string temp_file(const std::string& text, const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path d = fs::path(::testing::TempDir()) / "wh_generator_tests" /
                     (std::string(info->test_suite_name()) + "." + info->name());
  fs::create_directories(d);
  const fs::path p = d / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

std::vector<std::vector<uint32_t>> adjacency(const Topology& t) {
  std::vector<std::vector<uint32_t>> adj(t.num_nodes);
  for (const TopoLink& l : t.links) adj[l.a].push_back(l.b), adj[l.b].push_back(l.a);
  return adj;
}

/// Every GPU reaches every other through switches only (hosts never forward).
void expect_all_gpus_connected(const SimaiTopology& s) {
  const auto adj = adjacency(s.topo);
  std::vector<uint8_t> seen(s.topo.num_nodes, 0);
  std::vector<uint32_t> todo = {0};
  seen[0] = 1;
  while (!todo.empty()) {
    const uint32_t v = todo.back();
    todo.pop_back();
    if (v != 0 && !s.topo.is_switch[v]) continue;
    for (uint32_t w : adj[v])
      if (!seen[w]) seen[w] = 1, todo.push_back(w);
  }
  for (uint32_t g = 0; g < s.gpus; ++g) ASSERT_TRUE(seen[g]) << "GPU " << g << " unreachable from GPU 0";
  for (uint32_t v = 0; v < s.topo.num_nodes; ++v) EXPECT_FALSE(adj[v].empty()) << "node " << v << " has no link";
}

/// The leaves GPU g attaches to, ascending.
std::vector<uint32_t> leaves_of(const GeneratedFabric& f, const std::vector<std::vector<uint32_t>>& adj, uint32_t g) {
  std::vector<uint32_t> out;
  for (uint32_t w : adj[g])
    if (f.role[w] == NodeRole::Leaf) out.push_back(w);
  std::sort(out.begin(), out.end());
  return out;
}

struct Counts { uint32_t gpus, nodes, nvswitches, switches, links; };

void expect_counts(const GeneratedFabric& f, const Counts& c) {
  EXPECT_EQ(f.gpus, c.gpus);
  EXPECT_EQ(f.topo.num_nodes, c.nodes);
  EXPECT_EQ(f.nvswitches, c.nvswitches);
  EXPECT_EQ(f.switches, c.switches);
  EXPECT_EQ(f.topo.num_switches(), c.nvswitches + c.switches);
  EXPECT_EQ(f.topo.links.size(), c.links);
  EXPECT_EQ(f.role.size(), c.nodes);
  EXPECT_EQ(f.nodes(NodeRole::Gpu).size(), c.gpus);
  EXPECT_EQ(f.nodes(NodeRole::NvSwitch).size(), c.nvswitches);
  expect_all_gpus_connected(f);
  // Written out in either format, it reads back unchanged.
  std::ostringstream hpcc, simai;
  write_hpcc_topology(f.topo, hpcc);
  const Topology h = read_topology(temp_file(hpcc.str(), "topology.txt"));
  write_simai_topology(f, simai);
  const SimaiTopology s = read_simai_topology(temp_file(simai.str(), "simai"));
  EXPECT_EQ(s.gpus, f.gpus);
  EXPECT_EQ(s.nvswitches, f.nvswitches);
  EXPECT_EQ(s.switches, f.switches);
  EXPECT_EQ(s.topo.is_nvswitch, f.topo.is_nvswitch);
  for (const Topology* r : {&h, &s.topo}) {
    ASSERT_EQ(r->links.size(), f.topo.links.size());
    EXPECT_EQ(r->is_switch, f.topo.is_switch);
    for (size_t i = 0; i < r->links.size(); ++i) {
      const TopoLink &x = r->links[i], &y = f.topo.links[i];
      ASSERT_EQ(std::tie(x.a, x.b, x.rate_bps, x.delay, x.error_rate), std::tie(y.a, y.b, y.rate_bps, y.delay, y.error_rate)) << i;
    }
  }
}

/// The (a, b, rate) multiset of a topology's links.
std::multiset<std::tuple<uint32_t, uint32_t, uint64_t, Time>> link_set(const Topology& t) {
  std::multiset<std::tuple<uint32_t, uint32_t, uint64_t, Time>> out;
  for (const TopoLink& l : t.links) out.insert({std::min(l.a, l.b), std::max(l.a, l.b), l.rate_bps, l.delay});
  return out;
}

}  // namespace

TEST(Generators, SpectrumXEqualsShippedFiles) {
  // SimAI@pr288's files: `-topo Spectrum-X -g G -bw R -nvbw 2400Gbps -gt A100`, everything else default.
  for (uint32_t g : {8u, 16u})
    for (uint64_t gbps : {100ull, 400ull}) {
      const std::string name = "Spectrum-X_" + std::to_string(g) + "g_8gps_" + std::to_string(gbps) + "Gbps_A100";
      SCOPED_TRACE(name);
      SpectrumXParams p;
      p.gpus = g;
      p.nic_rate_bps = gbps * 1'000'000'000;
      p.nvlink_rate_bps = 2'400'000'000'000;
      p.gpu_type = "A100";
      const GeneratedFabric f = generate_spectrum_x(p);
      EXPECT_EQ(f.topo.file, "generated " + name);
      const std::string path = kSimai + "/SimAI@pr288/" + name;
      const SimaiTopology shipped = read_simai_topology(path);
      EXPECT_EQ(link_set(f.topo), link_set(shipped.topo));
      EXPECT_EQ(f.topo.is_switch, shipped.topo.is_switch);
      EXPECT_EQ(f.topo.is_nvswitch, shipped.topo.is_nvswitch);
      std::ostringstream out;
      write_simai_topology(f, out);
      EXPECT_EQ(out.str(), slurp(path));  // same numbering and link order too
    }
}

TEST(Generators, RailOptimizedEqualsUpstreamFile) {
  // `-g 16 -psn 8 -bw 200Gbps -nvbw 900Gbps -l 0.001ms -gt H20` (docs/workloads.md §3.2).
  SpectrumXParams p;
  p.gpus = 16;
  p.spines = 8;
  p.nic_rate_bps = 200'000'000'000;
  p.nvlink_rate_bps = 900'000'000'000;
  p.nic_delay = p.leaf_spine_delay = 1 * kUs;
  p.gpu_type = "H20";
  std::ostringstream out;
  write_simai_topology(generate_spectrum_x(p), out);
  EXPECT_EQ(out.str(), slurp(kSimai + "/SimAI/astra-sim-alibabacloud/inputs/topo/Rail_Opti_SingleToR_16g_8gps_200Gbps_H20"));
}

TEST(Generators, SpectrumXCounts) {
  // Defaults: 8 leaves per segment of 64 servers (512 GPUs), 64 spines, one NVSwitch per server.
  // N = G + G/8 NVSwitches + 8·segments leaves + 64 spines; links = 64·leaves + G NIC + G NVLink.
  const Counts cases[] = {
      {8, 8 + 1 + 8 + 64, 1, 72, 64 * 8 + 8 + 8},             // 81, 528 (the shipped file)
      {16, 16 + 2 + 8 + 64, 2, 72, 64 * 8 + 16 + 16},         // 90, 544
      {128, 128 + 16 + 8 + 64, 16, 72, 64 * 8 + 128 + 128},   // 216, 768
      {1024, 1024 + 128 + 16 + 64, 128, 80, 64 * 16 + 1024 + 1024},  // 2 segments: 1232, 3072
  };
  for (const Counts& c : cases) {
    SCOPED_TRACE(c.gpus);
    SpectrumXParams p;
    p.gpus = c.gpus;
    expect_counts(generate_spectrum_x(p), c);
  }
}

TEST(Generators, LeavesPerSpineDerivedFromTheSize) {
  // Unset, leaves_per_spine is max(SimAI's default, segments·gps): 8192 Spectrum-X GPUs are 16 segments of
  // 512, so 128 (the default 64 allows 8 segments: 4096 GPUs). Leaves 16·8 = 128, spines 64, NVSwitches
  // 1024: N = 8192 + 1024 + 128 + 64 = 9408; links = 128·64 + 8192 NIC + 8192 NVLink = 24576.
  SpectrumXParams p;
  p.gpus = 8192;
  EXPECT_EQ(effective_leaves_per_spine(p), 128u);
  const GeneratedFabric f = generate_spectrum_x(p);
  expect_counts(f, {8192, 9408, 1024, 192, 24576});
  EXPECT_EQ(f.nodes(NodeRole::Leaf).size(), 128u);
  EXPECT_EQ(f.nodes(NodeRole::Spine).size(), 64u);
  p.gpus = 4096;  // SimAI's default size: its default value
  EXPECT_EQ(effective_leaves_per_spine(p), 64u);
  p.gpus = 8;  // never below the default
  EXPECT_EQ(effective_leaves_per_spine(p), 64u);
  p.gpus = 8192;
  p.leaves_per_spine = 64;  // an explicit value is honoured, and too small it still stops the generator
  EXPECT_EQ(effective_leaves_per_spine(p), 64u);
  try {
    generate_spectrum_x(p);
    ADD_FAILURE() << "8192 GPUs with leaves_per_spine 64 generated";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("8192 GPUs need 16 segments of 512 GPUs, more than the 8 that "
                                         "leaves_per_spine allows"),
              std::string::npos)
        << e.what();
  }
  // HPN, 32768 GPUs: 32 segments of 1024 (the default 240 allows 30): max(240, 32·8) = 256. Leaves 2·256,
  // spines 120, NVSwitches 4096: N = 32768 + 4096 + 512 + 120 = 37496; links = 512·120 (dual plane 512·60)
  // + 2·32768 NIC + 32768 NVLink = 159744 (129024).
  HpnParams h;
  EXPECT_EQ(effective_leaves_per_spine(h), 240u);  // 15360 GPUs: 15 segments, 120 < 240
  h.gpus = 32768;
  EXPECT_EQ(effective_leaves_per_spine(h), 256u);
  expect_counts(generate_hpn(h), {32768, 37496, 4096, 632, 159744});
  h.dual_plane = true;
  expect_counts(generate_hpn(h), {32768, 37496, 4096, 632, 129024});
}

TEST(Generators, SpectrumXRailProperty) {
  SpectrumXParams p;
  p.gpus = 1024;  // 2 segments of 512 GPUs
  const GeneratedFabric f = generate_spectrum_x(p);
  const auto adj = adjacency(f.topo);
  const std::vector<uint32_t> leaves = f.nodes(NodeRole::Leaf), spines = f.nodes(NodeRole::Spine);
  ASSERT_EQ(leaves.size(), 16u);
  ASSERT_EQ(spines.size(), 64u);
  for (uint32_t g = 0; g < f.gpus; ++g) {
    // GPU r of every server in segment s sits on leaf s·8 + r, and on nothing else but its NVSwitch.
    const uint32_t rail = g % 8, seg = g / 512;
    ASSERT_EQ(leaves_of(f, adj, g), std::vector<uint32_t>{leaves[seg * 8 + rail]}) << g;
    ASSERT_EQ(adj[g].size(), 2u);
    EXPECT_EQ(f.role[adj[g][0]], NodeRole::NvSwitch);
    EXPECT_EQ(adj[g][0], 1024 + g / 8);
  }
  for (uint32_t l : leaves) EXPECT_EQ(adj[l].size(), 64u + 64u) << l;  // 64 NICs down, 64 spines up (1:1)
  for (uint32_t s : spines) EXPECT_EQ(adj[s].size(), 16u);
}

TEST(Generators, HpnCounts) {
  // Defaults: segments of 128 servers (1024 GPUs) with 2×8 leaves, 120 spines, 200G NICs, two per GPU.
  // N = G + G/8 + 16 + 120; links = 120·16 (single plane) or 60·16 (dual plane) + 2G + G.
  const Counts single[] = {
      {8, 8 + 1 + 16 + 120, 1, 136, 1920 + 16 + 8},          // 145, 1944
      {16, 16 + 2 + 16 + 120, 2, 136, 1920 + 32 + 16},       // 154, 1968
      {128, 128 + 16 + 16 + 120, 16, 136, 1920 + 256 + 128}, // 280, 2304
      {1024, 1024 + 128 + 16 + 120, 128, 136, 1920 + 2048 + 1024},  // 1288, 4992
  };
  for (const Counts& c : single) {
    SCOPED_TRACE(c.gpus);
    HpnParams p;
    p.gpus = c.gpus;
    expect_counts(generate_hpn(p), c);
    p.dual_plane = true;
    expect_counts(generate_hpn(p), {c.gpus, c.nodes, c.nvswitches, c.switches, c.links - 960});
  }
}

TEST(Generators, HpnDualToRAndPlanes) {
  HpnParams p;
  p.gpus = 2048;  // 2 segments: 32 leaves (16 per ToR list)
  p.dual_plane = true;
  const GeneratedFabric f = generate_hpn(p);
  const auto adj = adjacency(f.topo);
  const std::vector<uint32_t> leaves = f.nodes(NodeRole::Leaf), spines = f.nodes(NodeRole::Spine);
  ASSERT_EQ(leaves.size(), 32u);
  for (uint32_t g = 0; g < f.gpus; ++g) {
    const uint32_t k = (g / 1024) * 8 + g % 8;  // rail leaf within each list
    ASSERT_EQ(leaves_of(f, adj, g), (std::vector<uint32_t>{leaves[k], leaves[16 + k]})) << g;
  }
  for (size_t i = 0; i < leaves.size(); ++i) {  // plane 1: spines 0..59; plane 2: 60..119
    std::vector<uint32_t> up;
    for (uint32_t w : adj[leaves[i]])
      if (f.role[w] == NodeRole::Spine) up.push_back(w);
    ASSERT_EQ(up.size(), 60u);
    EXPECT_EQ(up.front(), spines[i < 16 ? 0 : 60]);
    EXPECT_EQ(up.back(), spines[i < 16 ? 59 : 119]);
  }
}

TEST(Generators, DcnPlusCounts) {
  // Defaults: one ToR per 64 GPUs (8 servers), 8 spines; leaves_per_spine given as 16 here.
  // N = G + G/8 + ToRs + 8; links = 8·ToRs + G NIC + G NVLink.
  const Counts single[] = {
      {8, 8 + 1 + 1 + 8, 1, 9, 8 + 8 + 8},                 // 18, 24
      {16, 16 + 2 + 1 + 8, 2, 9, 8 + 16 + 16},             // 27, 40
      {128, 128 + 16 + 2 + 8, 16, 10, 16 + 128 + 128},     // 154, 272
      {1024, 1024 + 128 + 16 + 8, 128, 24, 128 + 1024 + 1024},  // 16 ToRs (leaves_per_spine 16): 1176, 2176
  };
  for (const Counts& c : single) {
    SCOPED_TRACE(c.gpus);
    DcnPlusParams p;
    p.gpus = c.gpus;
    p.leaves_per_spine = 16;
    expect_counts(generate_dcn_plus(p), c);
  }
  DcnPlusParams u;  // unset, leaves_per_spine is max(8, ToRs): 1024 GPUs give 16, 32 with dual ToR
  u.gpus = 1024;
  EXPECT_EQ(effective_leaves_per_spine(u), 16u);
  expect_counts(generate_dcn_plus(u), single[3]);
  u.gpus = 8;
  EXPECT_EQ(effective_leaves_per_spine(u), 8u);
  u.gpus = 1024;
  u.dual_tor = true;
  EXPECT_EQ(effective_leaves_per_spine(u), 32u);
  DcnPlusParams d;  // dual ToR: 2 ToRs per 64 GPUs; 1024 GPUs need leaves_per_spine >= 2·16
  d.dual_tor = true;
  d.gpus = 8;
  expect_counts(generate_dcn_plus(d), {8, 8 + 1 + 2 + 8, 1, 10, 8 * 2 + 16 + 8});  // 19, 40
  d.gpus = 1024;
  d.leaves_per_spine = 32;
  expect_counts(generate_dcn_plus(d), {1024, 1024 + 128 + 32 + 8, 128, 40, 8 * 32 + 2048 + 1024});  // 1192, 3328
}

TEST(Generators, DcnPlusServerUnderOneToR) {
  DcnPlusParams p;
  p.gpus = 256;
  const GeneratedFabric f = generate_dcn_plus(p);
  const auto adj = adjacency(f.topo);
  const std::vector<uint32_t> leaves = f.nodes(NodeRole::Leaf);
  ASSERT_EQ(leaves.size(), 4u);
  for (uint32_t g = 0; g < f.gpus; ++g) {
    ASSERT_EQ(leaves_of(f, adj, g), std::vector<uint32_t>{leaves[g / 64]}) << g;
    EXPECT_EQ(leaves_of(f, adj, g), leaves_of(f, adj, g - g % 8));  // all GPUs of a server on one ToR
  }
  // 64×400G down, 8×400G up: 8:1 per ToR.
  for (uint32_t l : leaves) EXPECT_EQ(adj[l].size(), 64u + 8u);
}

TEST(Generators, FatTreeK4EqualsReference) {
  const GeneratedFabric f = generate_fat_tree({});  // k = 4, 100 Gbps, 1 µs: the HPCC reference
  const Topology ref = read_topology(WH_TEST_DATA "/refruns/hpcc-ring16-fattree-k4-1MB/topology.txt");
  expect_counts(f, {16, 36, 0, 20, 48});
  // Degree sequences: 16 hosts of degree 1, 8 edges / 8 aggregations of 4, 4 cores of 4.
  auto degrees = [](const Topology& t) {
    std::vector<size_t> d;
    for (const auto& a : adjacency(t)) d.push_back(a.size());
    return d;
  };
  EXPECT_EQ(degrees(f.topo), degrees(ref));
  std::map<size_t, int> hist;
  for (size_t d : degrees(f.topo)) ++hist[d];
  EXPECT_EQ(hist, (std::map<size_t, int>{{1, 16}, {4, 20}}));
  // Same links in the same order (so the same interface indices), same switch ids.
  EXPECT_EQ(f.topo.is_switch, ref.is_switch);
  ASSERT_EQ(f.topo.links.size(), ref.links.size());
  for (size_t i = 0; i < ref.links.size(); ++i) {
    const TopoLink &x = f.topo.links[i], &y = ref.links[i];
    EXPECT_EQ(std::tie(x.a, x.b, x.rate_bps, x.delay), std::tie(y.a, y.b, y.rate_bps, y.delay)) << "line " << y.line;
  }
  EXPECT_EQ(f.nodes(NodeRole::Leaf).size(), 8u);
  EXPECT_EQ(f.nodes(NodeRole::Spine).size(), 8u);
  EXPECT_EQ(f.nodes(NodeRole::Core).size(), 4u);
}

TEST(Generators, FatTreeCounts) {
  // k³/4 hosts, k²/2 edges + k²/2 aggregations + k²/4 cores, links = 3·k³/4 (+ NVLinks).
  FatTreeParams p;
  p.gpus = 8;  // k = 4 with half the edges populated: 8 host links + 16 + 16
  expect_counts(generate_fat_tree(p), {8, 8 + 20, 0, 20, 8 + 16 + 16});
  p = {};
  p.k = 8;
  expect_counts(generate_fat_tree(p), {128, 128 + 80, 0, 80, 3 * 128});      // 208, 384
  p.k = 16;
  expect_counts(generate_fat_tree(p), {1024, 1024 + 320, 0, 320, 3 * 1024});  // 1344, 3072
  p.gpus_per_server = 8;
  p.nvswitches_per_server = 1;  // GPU servers: + 128 NVSwitches, + 1024 NVLinks
  const GeneratedFabric g = generate_fat_tree(p);
  expect_counts(g, {1024, 1344 + 128, 128, 320, 3072 + 1024});
  EXPECT_EQ(g.topo.links[0].b, 1024u);  // GPU 0's NVLink first, then its edge link
  EXPECT_EQ(g.topo.links[1].b, 1024u + 128u);
}

TEST(Generators, BadParameters) {
  auto fails = [](auto&& gen, const std::string& fragment) {
    try {
      gen();
      ADD_FAILURE() << "no exception, expected: " << fragment;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  auto sx = [](auto edit) {
    return [edit] {
      SpectrumXParams p;
      p.gpus = 64;
      edit(p);
      return generate_spectrum_x(p);
    };
  };
  fails(sx([](SpectrumXParams& p) { p.gpus = 12; }), "gpus (12) must be a multiple of gpus_per_server (8)");
  fails(sx([](SpectrumXParams& p) { p.gpus = 0; }), "gpus must be > 0");
  fails(sx([](SpectrumXParams& p) { p.gpus_per_server = 0; }), "gpus_per_server must be > 0");
  fails(sx([](SpectrumXParams& p) { p.nic_rate_bps = 0; }), "the NIC rate must be > 0");
  fails(sx([](SpectrumXParams& p) { p.nvlink_rate_bps = 0; }), "the NVLink rate must be > 0");
  fails(sx([](SpectrumXParams& p) { p.leaf_spine_rate_bps = 0; }), "switch-to-switch link rate must be > 0");
  fails(sx([](SpectrumXParams& p) { p.nic_delay = -1; }), "delays must be >= 0");
  fails(sx([](SpectrumXParams& p) { p.error_rate = 1; }), "error_rate must be in [0, 1)");
  fails(sx([](SpectrumXParams& p) { p.gpu_type = "H 100"; }), "gpu_type must be one word");
  fails(sx([](SpectrumXParams& p) { p.spines = 0; }), "spines must be > 0");
  fails(sx([](SpectrumXParams& p) { p.servers_per_segment = 0; }), "must be > 0");
  fails(sx([](SpectrumXParams& p) { p.gpus = 5000, p.leaves_per_spine = 64; }),
        "5000 GPUs need 10 segments of 512 GPUs, more than the 8");
  fails([] { HpnParams p; p.gpus = 64; p.dual_plane = true; p.spines = 7; return generate_hpn(p); },
        "dual plane needs an even spine count, not 7");
  fails([] { DcnPlusParams p; p.gpus = 1024; p.leaves_per_spine = 8; return generate_dcn_plus(p); },
        "1024 GPUs need 16 segments");
  fails([] { FatTreeParams p; p.k = 3; return generate_fat_tree(p); }, "k must be even and >= 2, not 3");
  fails([] { FatTreeParams p; p.k = 0; return generate_fat_tree(p); }, "k must be even");
  fails([] { FatTreeParams p; p.gpus = 17; return generate_fat_tree(p); }, "17 GPUs exceed the 16 hosts");
  fails([] { FatTreeParams p; p.gpus_per_server = 8; p.gpus = 12; return generate_fat_tree(p); }, "multiple of gpus_per_server");
  fails([] { FatTreeParams p; p.fabric_rate_bps = 0; return generate_fat_tree(p); }, "fat-tree generator: the switch-to-switch");
  // Without NVSwitches the NVLink rate is unused and may be 0.
  SpectrumXParams p;
  p.gpus = 16;
  p.nvswitches_per_server = 0;
  p.nvlink_rate_bps = 0;
  const GeneratedFabric f = generate_spectrum_x(p);
  EXPECT_EQ(f.nvswitches, 0u);
  EXPECT_EQ(f.topo.links.size(), 64u * 8 + 16);
}
