// Routing by attachment class (wormhole/net/routing.h) against hand-computed next hops and against a
// brute-force per-host BFS (the reference's algorithm, docs/network-model.md §12) on generated fabrics.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>

#include "wormhole/net/routing.h"

using namespace wh;

namespace {

constexpr uint64_t k100G = 100'000'000'000ull;
constexpr uint32_t kPayload = 1000;

struct Link {
  uint32_t a, b;
  uint64_t rate;
  Time delay;
};

/// Nodes and ports as Network lays them out: node v's ports are its links in list order.
struct Fabric {
  std::vector<Node> nodes;
  std::vector<PortLink> ports;
  Fabric(uint32_t n, const std::vector<uint8_t>& sw, const std::vector<uint8_t>& nvs, const std::vector<Link>& links) {
    nodes.resize(n);
    std::vector<std::vector<std::pair<uint32_t, bool>>> of(n);  // (link, is the b end)
    for (uint32_t i = 0; i < links.size(); ++i) of[links[i].a].push_back({i, false}), of[links[i].b].push_back({i, true});
    std::vector<uint32_t> end_a(links.size()), end_b(links.size());
    for (uint32_t v = 0; v < n; ++v) {
      nodes[v].is_switch = sw[v];
      nodes[v].is_nvswitch = nvs[v];
      nodes[v].first_port = static_cast<uint32_t>(ports.size());
      nodes[v].num_ports = static_cast<uint32_t>(of[v].size());
      for (auto [l, is_b] : of[v]) {
        (is_b ? end_b : end_a)[l] = static_cast<uint32_t>(ports.size());
        ports.emplace_back();
        ports.back().node = v;
        ports.back().rate_bps = links[l].rate;
        ports.back().delay = links[l].delay;
      }
    }
    for (uint32_t l = 0; l < links.size(); ++l) ports[end_a[l]].peer = end_b[l], ports[end_b[l]].peer = end_a[l];
  }
  void link_down(uint32_t p) { ports[p].up = ports[ports[p].peer].up = false; }
};

/// The per-host BFS the class tables replace (the previous implementation, verbatim in substance).
struct BruteForce {
  std::map<std::pair<uint32_t, uint32_t>, std::vector<uint32_t>> lists;  // (row node, dst host)
  std::map<std::pair<uint32_t, uint32_t>, PathMetrics> metrics;          // (src, dst)
  uint64_t max_rtt = 0, max_bdp = 0;

  explicit BruteForce(const Fabric& f) {
    const auto& nodes = f.nodes;
    const auto& ports = f.ports;
    const uint32_t n = static_cast<uint32_t>(nodes.size());
    struct Adj {
      uint32_t nb;
      std::vector<uint32_t> ports;
    };
    std::vector<std::vector<Adj>> adj(n);
    for (uint32_t v = 0; v < n; ++v) {
      for (uint32_t p = nodes[v].first_port; p < nodes[v].first_port + nodes[v].num_ports; ++p) {
        if (!ports[p].up || !ports[ports[p].peer].up) continue;
        const uint32_t nb = ports[ports[p].peer].node;
        auto it = std::find_if(adj[v].begin(), adj[v].end(), [&](const Adj& a) { return a.nb == nb; });
        if (it == adj[v].end()) adj[v].push_back({nb, {p}});
        else it->ports.push_back(p);
      }
      std::sort(adj[v].begin(), adj[v].end(), [&](const Adj& a, const Adj& b) {
        const bool sa = nodes[a.nb].is_switch, sb = nodes[b.nb].is_switch;
        if (sa != sb) return !sa;
        return sa ? a.nb > b.nb : a.nb < b.nb;
      });
    }
    for (uint32_t root = 0; root < n; ++root) {
      if (nodes[root].is_switch) continue;
      std::vector<int32_t> dist(n, -1);
      std::vector<uint64_t> delay(n, 0), tx(n, 0), bw(n, 0);
      std::vector<std::vector<uint32_t>> scratch(n);
      std::vector<uint8_t> nvs_hop(n, 0);
      std::vector<uint32_t> queue{root}, visited{root};
      dist[root] = 0;
      bw[root] = UINT64_MAX;
      for (size_t i = 0; i < queue.size(); ++i) {
        const uint32_t now = queue[i];
        const int32_t d = dist[now];
        for (const Adj& a : adj[now]) {
          const uint32_t next = a.nb;
          const PortLink& link = ports[a.ports.back()];
          auto time = [&] {
            delay[next] = delay[now] + static_cast<uint64_t>(link.delay / kNs);
            tx[next] = tx[now] + uint64_t(kPayload) * 1000000000ull * 8 / link.rate_bps;
            bw[next] = std::min(bw[now], link.rate_bps);
          };
          if (dist[next] < 0) {
            dist[next] = d + 1;
            time();
            visited.push_back(next);
            if (nodes[next].is_switch) queue.push_back(next);
          }
          if (dist[next] == d + 1 && nodes[now].is_nvswitch && !nvs_hop[next]) {
            nvs_hop[next] = 1;
            scratch[next].clear();
            time();
          } else if (nvs_hop[next] && !nodes[now].is_nvswitch) {
            continue;
          }
          if (dist[next] == d + 1)
            for (uint32_t p : a.ports) scratch[next].push_back(ports[p].peer);
        }
      }
      for (uint32_t v : visited) {
        if (v == root) continue;
        if (!nodes[v].is_switch) {
          const PathMetrics m{true, static_cast<uint32_t>(dist[v]), delay[v], tx[v], bw[v]};
          max_rtt = std::max(max_rtt, m.rtt_ns());
          max_bdp = std::max(max_bdp, m.bdp_bytes());
          metrics[{v, root}] = m;
        }
        if (nodes[v].is_switch || nodes[v].num_ports > 1) lists[{v, root}] = scratch[v];
      }
    }
  }
};

std::vector<uint32_t> vec(std::span<const uint32_t> s) { return {s.begin(), s.end()}; }

/// Every next hop, NIC choice and pair metric of `r` equals the brute force's.
void expect_same(Routing& r, const Fabric& f, const BruteForce& bf, bool maxima = true) {
  const uint32_t n = static_cast<uint32_t>(f.nodes.size());
  for (uint32_t d = 0; d < n; ++d) {
    if (f.nodes[d].is_switch) continue;
    for (uint32_t v = 0; v < n; ++v) {
      auto it = bf.lists.find({v, d});
      const std::vector<uint32_t> want = it == bf.lists.end() ? std::vector<uint32_t>{} : it->second;
      ASSERT_EQ(vec(r.next_hops(v, d)), want) << "node " << v << " to host " << d;
      if (f.nodes[v].is_switch) continue;
      if (f.nodes[v].num_ports > 1) {
        EXPECT_EQ(vec(r.host_nics(v, d)), want) << "host " << v << " to host " << d;
      }
      auto m = bf.metrics.find({v, d});
      const PathMetrics& got = r.pair(v, d);
      const PathMetrics exp = m == bf.metrics.end() ? PathMetrics{} : m->second;
      ASSERT_EQ(got.reachable, exp.reachable) << v << " -> " << d;
      EXPECT_EQ(got.hops, exp.hops) << v << " -> " << d;
      EXPECT_EQ(got.delay_ns, exp.delay_ns) << v << " -> " << d;
      EXPECT_EQ(got.tx_delay_ns, exp.tx_delay_ns) << v << " -> " << d;
      EXPECT_EQ(got.bw_bps, exp.bw_bps) << v << " -> " << d;
    }
  }
  if (maxima) {
    EXPECT_EQ(r.max_rtt_ns(), bf.max_rtt);
    EXPECT_EQ(r.max_bdp_bytes(), bf.max_bdp);
  }
}

/// Two servers of two GPUs, one NVSwitch each, GPU i of every server on leaf i (rails), two spines.
/// GPUs 0-3 (server 0: 0, 1), NVSwitches 4, 5, leaves 6 (rail 0), 7 (rail 1), spines 8, 9. NVLinks
/// 400 Gb/s, the rest 100 Gb/s, all 1 µs. Ports: GPU g has 2g (NVLink), 2g+1 (NIC); NVSwitch 4: 8, 9;
/// 5: 10, 11; leaf 6: 12 (GPU 0), 13 (GPU 2), 14 (spine 8), 15 (spine 9); leaf 7: 16-19 likewise;
/// spine 8: 20 (leaf 6), 21 (leaf 7); spine 9: 22, 23.
Fabric two_tier() {
  const Time us = kUs;
  std::vector<Link> l{{0, 4, 4 * k100G, us}, {1, 4, 4 * k100G, us}, {2, 5, 4 * k100G, us}, {3, 5, 4 * k100G, us},
                      {0, 6, k100G, us},     {1, 7, k100G, us},     {2, 6, k100G, us},     {3, 7, k100G, us},
                      {6, 8, k100G, us},     {6, 9, k100G, us},     {7, 8, k100G, us},     {7, 9, k100G, us}};
  return Fabric(10, {0, 0, 0, 0, 1, 1, 1, 1, 1, 1}, {0, 0, 0, 0, 1, 1, 0, 0, 0, 0}, l);
}

}  // namespace

TEST(RoutingClasses, TwoTierKnownAnswers) {
  Fabric f = two_tier();
  Routing r;
  r.build(f.nodes, f.ports, kPayload, {});
  // Leaf 6 towards GPU 1 (rail 1): the BFS from leaf 7 meets spine 9 before spine 8 (switches
  // descending), so leaf 6 lists its port to spine 9 first.
  EXPECT_EQ(vec(r.next_hops(6, 1)), (std::vector<uint32_t>{15, 14}));
  EXPECT_EQ(vec(r.next_hops(8, 1)), (std::vector<uint32_t>{21}));
  EXPECT_EQ(vec(r.next_hops(7, 1)), (std::vector<uint32_t>{16}));  // last hop: the port to GPU 1 itself
  EXPECT_EQ(vec(r.next_hops(7, 3)), (std::vector<uint32_t>{17}));  // same class, another host
  EXPECT_EQ(vec(r.next_hops(4, 1)), (std::vector<uint32_t>{9}));
  EXPECT_TRUE(r.next_hops(5, 1).empty());  // hosts never forward: server 1's NVSwitch cannot reach GPU 1
  EXPECT_TRUE(r.next_hops(1, 1).empty());
  // GPUs: NVLink within the server (the NVSwitch rule), the NIC otherwise.
  EXPECT_EQ(vec(r.host_nics(0, 1)), (std::vector<uint32_t>{0}));
  EXPECT_EQ(vec(r.next_hops(0, 1)), (std::vector<uint32_t>{0}));
  EXPECT_EQ(vec(r.host_nics(0, 3)), (std::vector<uint32_t>{1}));
  EXPECT_EQ(vec(r.host_nics(0, 2)), (std::vector<uint32_t>{1}));
  // Metrics: 4 hops of 1 µs at 100 Gb/s (80 ns of transmission each) across rails and servers; 2 NVLink
  // hops at 400 Gb/s (20 ns each) within a server.
  EXPECT_EQ(r.pair(0, 3).hops, 4u);
  EXPECT_EQ(r.pair(0, 3).rtt_ns(), 2 * 4000u + 320u);
  EXPECT_EQ(r.pair(0, 1).rtt_ns(), 2 * 2000u + 40u);
  EXPECT_EQ(r.pair(0, 2).rtt_ns(), 2 * 2000u + 160u);
  EXPECT_EQ(r.max_rtt_ns(), 8320u);
  EXPECT_EQ(r.max_bdp_bytes(), 4040u * 400 / 8);  // the NVLink pairs: 202,000 B
  // Classes: {leaf 6}, {leaf 7} in the fabric; one per NVSwitch.
  EXPECT_EQ(r.num_components(), 3u);
  EXPECT_EQ(r.num_classes(), 4u);
  std::vector<std::pair<uint32_t, uint32_t>> links;
  for (uint32_t p = 0; p < f.ports.size(); ++p)
    if (p < f.ports[p].peer) links.emplace_back(f.ports[p].node, f.ports[f.ports[p].peer].node);
  std::vector<bool> sw(10);
  for (uint32_t v = 0; v < 10; ++v) sw[v] = f.nodes[v].is_switch;
  EXPECT_EQ(Routing::count_entries(10, sw, links), 4u * 2 + 1 + 1);
  expect_same(r, f, BruteForce(f));
}

namespace {

struct GenOptions {
  uint32_t planes = 1, leaves = 3, spines = 2, servers = 3, gpus = 4, nvswitches = 1, parallel = 1;
  bool dual_homed = false, direct_link = false, hetero = false, nvs_to_leaf = false;
};

/// A rail-optimised leaf-spine per plane with NVSwitch servers, node ids shuffled (so that the
/// visit-order rules matter), links listed in a shuffled order (so that port order does).
Fabric generate(const GenOptions& o, uint32_t seed) {
  std::mt19937 rng(seed);
  const uint32_t g = o.servers * o.gpus, w = o.servers * o.nvswitches, l = o.planes * o.leaves,
                 s = o.planes * o.spines, n = g + w + l + s;
  std::vector<uint32_t> id(n);
  std::iota(id.begin(), id.end(), 0u);
  std::shuffle(id.begin(), id.end(), rng);
  auto gpu = [&](uint32_t sv, uint32_t i) { return id[sv * o.gpus + i]; };
  auto nvs = [&](uint32_t sv, uint32_t i) { return id[g + sv * o.nvswitches + i]; };
  auto leaf = [&](uint32_t p, uint32_t i) { return id[g + w + p * o.leaves + i]; };
  auto spine = [&](uint32_t p, uint32_t i) { return id[g + w + l + p * o.spines + i]; };
  std::vector<uint8_t> sw(n, 0), nv(n, 0);
  for (uint32_t v = g; v < n; ++v) sw[id[v]] = 1;
  for (uint32_t v = g; v < g + w; ++v) nv[id[v]] = 1;
  auto rate = [&] { return o.hetero && rng() % 3 == 0 ? 2 * k100G : k100G; };
  auto delay = [&] { return o.hetero && rng() % 3 == 0 ? 2 * kUs : kUs; };
  std::vector<Link> links;
  for (uint32_t sv = 0; sv < o.servers; ++sv)
    for (uint32_t i = 0; i < o.gpus; ++i) {
      for (uint32_t k = 0; k < o.nvswitches; ++k) links.push_back({gpu(sv, i), nvs(sv, k), 4 * k100G, kUs / 2});
      for (uint32_t p = 0; p < o.planes; ++p) {
        links.push_back({gpu(sv, i), leaf(p, i % o.leaves), rate(), delay()});
        if (o.dual_homed && (sv + i) % 2 == 0) links.push_back({gpu(sv, i), leaf(p, (i + 1) % o.leaves), rate(), delay()});
        if (o.parallel > 1 && sv == 0 && i == 0) links.push_back({gpu(sv, i), leaf(p, 0), rate(), delay()});
      }
    }
  for (uint32_t p = 0; p < o.planes; ++p)
    for (uint32_t i = 0; i < o.leaves; ++i)
      for (uint32_t j = 0; j < o.spines; ++j)
        for (uint32_t m = 0; m < o.parallel; ++m) links.push_back({leaf(p, i), spine(p, j), rate(), delay()});
  if (o.direct_link) links.push_back({gpu(0, 0), gpu(o.servers - 1, o.gpus - 1), k100G, kUs});
  if (o.nvs_to_leaf) links.push_back({nvs(0, 0), leaf(0, 0), k100G, kUs});
  std::shuffle(links.begin(), links.end(), rng);
  for (Link& k : links)
    if (rng() % 2) std::swap(k.a, k.b);
  return Fabric(n, sw, nv, links);
}

void check_generated(const GenOptions& o, uint32_t seed) {
  Fabric f = generate(o, seed);
  Routing r;
  r.build(f.nodes, f.ports, kPayload, {});
  const BruteForce first(f);
  expect_same(r, f, first);
  // LINK_DOWN: the first leaf-spine port goes down and the tables are rebuilt; maxima stay.
  for (uint32_t p = 0; p < f.ports.size(); ++p)
    if (f.nodes[f.ports[p].node].is_switch && f.nodes[f.ports[f.ports[p].peer].node].is_switch) {
      f.link_down(p);
      break;
    }
  r.build(f.nodes, f.ports, kPayload, {});
  expect_same(r, f, BruteForce(f), false);
  EXPECT_EQ(r.max_rtt_ns(), first.max_rtt);
  EXPECT_EQ(r.max_bdp_bytes(), first.max_bdp);
}

}  // namespace

TEST(RoutingClasses, SameAsPerHostBfsOnRailFabrics) {
  for (uint32_t seed = 1; seed <= 4; ++seed) check_generated({}, seed);
}

TEST(RoutingClasses, SameAsPerHostBfsWithParallelLinksAndMixedRates) {
  GenOptions o;
  o.parallel = 2;
  o.hetero = true;
  for (uint32_t seed = 1; seed <= 4; ++seed) check_generated(o, seed);
}

TEST(RoutingClasses, SameAsPerHostBfsDualHomedDualPlane) {
  GenOptions o;
  o.planes = 2;
  o.dual_homed = true;
  o.hetero = true;
  o.nvswitches = 2;
  for (uint32_t seed = 1; seed <= 4; ++seed) check_generated(o, seed);
}

TEST(RoutingClasses, SameAsPerHostBfsWithDirectLinksAndOddNvSwitches) {
  GenOptions o;
  o.direct_link = true;
  o.nvs_to_leaf = true;
  o.nvswitches = 0;
  for (uint32_t seed = 1; seed <= 3; ++seed) check_generated(o, seed);
  o.nvswitches = 1;
  o.gpus = 2;
  for (uint32_t seed = 4; seed <= 6; ++seed) check_generated(o, seed);
}

// Regression: two one-GPU servers (GPUs 0, 1; NVSwitches 2, 3) on two planes, each a single leaf: leaf
// 4's plane is slow (10 Gb/s, 5 µs), leaf 5's fast. The pair (0, 1) shares both planes and neither
// NVSwitch; equal hops tie towards the higher leaf, so the slow plane is never a path and must not set
// maxRtt / maxBdp. The hosts sharing two components with GPU 1 were looked for only at its NVSwitch.
TEST(RoutingClasses, PairsSharingTwoPlanesBesideTheirNvSwitchesAreFound) {
  const Time us = kUs;
  std::vector<Link> l{{0, 2, 4 * k100G, us},      {1, 3, 4 * k100G, us},      {0, 4, k100G / 10, 5 * us},
                      {1, 4, k100G / 10, 5 * us}, {0, 5, k100G, us},          {1, 5, k100G, us}};
  Fabric f(6, {0, 0, 1, 1, 1, 1}, {0, 0, 1, 1, 0, 0}, l);
  Routing r;
  r.build(f.nodes, f.ports, kPayload, {});
  const BruteForce bf(f);
  expect_same(r, f, bf);
  // By hand: GPU 1 -> leaf 5 -> GPU 0, 2 hops of 1 µs at 100 Gb/s: RTT 2 x 2 µs + 2 x 80 ns = 4160 ns.
  EXPECT_EQ(r.max_rtt_ns(), 4160u);
}

TEST(RoutingClasses, ClassCounting) {
  // Rails: every GPU of one leaf is one fabric class; each server's NVSwitch is a component of one class.
  GenOptions o;
  o.servers = 5;
  o.leaves = 4;
  o.gpus = 4;
  Fabric f = generate(o, 7);
  Routing r;
  r.build(f.nodes, f.ports, kPayload, {});
  EXPECT_EQ(r.num_components(), 1u + 5);
  EXPECT_EQ(r.num_classes(), 4u + 5);
  // Dual-homed GPUs add the classes {leaf i, leaf i+1}.
  o.dual_homed = true;
  Fabric d = generate(o, 7);
  Routing rd;
  rd.build(d.nodes, d.ports, kPayload, {});
  EXPECT_EQ(rd.num_classes(), 4u + 4 + 5);
  // count_entries (the memory estimate) groups as build does: fabric 6 switches x 8 classes + 5 x 1.
  std::vector<std::pair<uint32_t, uint32_t>> links;
  for (uint32_t p = 0; p < d.ports.size(); ++p)
    if (p < d.ports[p].peer) links.emplace_back(d.ports[p].node, d.ports[d.ports[p].peer].node);
  std::vector<bool> sw(d.nodes.size());
  for (uint32_t v = 0; v < d.nodes.size(); ++v) sw[v] = d.nodes[v].is_switch;
  EXPECT_EQ(Routing::count_entries(static_cast<uint32_t>(d.nodes.size()), sw, links), 6u * 8 + 5);
}
