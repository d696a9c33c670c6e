// Flow contention graphs: construction, Weisfeiler–Lehman hash, VF2 isomorphism (see fcg.h).
#include "wormhole/memo/fcg.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/vf2_sub_graph_iso.hpp>
#include <map>
#include <stdexcept>
#include <unordered_map>

namespace wh {

Fcg make_fcg(const std::vector<FcgFlow>& flows, uint64_t rate_quantum_bps) {
  if (rate_quantum_bps == 0) throw std::invalid_argument("make_fcg: the rate quantum must be > 0 bit/s");
  Fcg g;
  const uint32_t n = static_cast<uint32_t>(flows.size());
  g.label.resize(n);
  // port -> flows whose data (ACKs) leave through it; each pair of flows counts the ports they share.
  std::unordered_map<uint32_t, std::vector<uint32_t>> users, ack_users;
  auto unique = [](std::vector<uint32_t> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  };
  for (uint32_t i = 0; i < n; ++i) {
    const std::vector<uint32_t> ports = unique(flows[i].ports);
    FcgLabel& l = g.label[i];
    l.rate_q = (flows[i].rate_bps + rate_quantum_bps / 2) / rate_quantum_bps;
    l.bottleneck_bps = flows[i].bottleneck_bps;
    l.line_bps = flows[i].line_bps;
    l.rtt_ns = flows[i].rtt_ns;
    l.hops = flows[i].hops ? flows[i].hops : static_cast<uint32_t>(ports.size());
    l.fresh = flows[i].fresh;
    for (uint32_t p : ports) users[p].push_back(i);
    for (uint32_t p : unique(flows[i].acks)) ack_users[p].push_back(i);
  }
  std::map<std::pair<uint32_t, uint32_t>, Fcg::Edge> shared;  // ordered: edges come out sorted
  auto edge = [&](uint32_t a, uint32_t b) -> Fcg::Edge& {
    Fcg::Edge& e = shared[{std::min(a, b), std::max(a, b)}];
    e.u = std::min(a, b), e.v = std::max(a, b);
    return e;
  };
  for (const auto& [port, fs] : users)
    for (size_t a = 0; a < fs.size(); ++a)
      for (size_t b = a + 1; b < fs.size(); ++b) ++edge(fs[a], fs[b]).weight;
  for (const auto& [port, acks] : ack_users) {
    auto it = users.find(port);
    if (it == users.end()) continue;
    for (uint32_t a : acks)
      for (uint32_t d : it->second) {
        if (a == d) continue;
        Fcg::Edge& e = edge(a, d);
        ++(a == e.u ? e.u_acks : e.v_acks);
      }
  }
  for (const auto& [uv, e] : shared) g.edges.push_back(e);
  return g;
}

namespace {
// splitmix64 finaliser: a well-mixed 64-bit hash step.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
uint64_t combine(uint64_t h, uint64_t v) { return mix(h ^ mix(v)); }
}  // namespace

uint64_t wl_hash(const Fcg& g, int rounds) {
  const size_t n = g.vertices();
  // (neighbour, the edge as seen from this end: shared data ports, own ACK ports, its ACK ports)
  std::vector<std::vector<std::pair<uint32_t, uint64_t>>> adj(n);
  for (const Fcg::Edge& e : g.edges) {
    adj[e.u].push_back({e.v, combine(combine(mix(e.weight), e.u_acks), e.v_acks)});
    adj[e.v].push_back({e.u, combine(combine(mix(e.weight), e.v_acks), e.u_acks)});
  }
  std::vector<uint64_t> label(n), next(n);
  for (size_t i = 0; i < n; ++i) {
    const FcgLabel& l = g.label[i];
    label[i] = combine(combine(combine(combine(combine(mix(l.rate_q), l.bottleneck_bps), l.line_bps), l.rtt_ns), l.hops),
                       l.fresh);
  }
  for (int r = 0; r < rounds; ++r) {
    for (size_t i = 0; i < n; ++i) {
      // The multiset of (neighbour label, edge weight), order-free: sorted.
      std::vector<uint64_t> around;
      around.reserve(adj[i].size());
      for (const auto& [j, w] : adj[i]) around.push_back(combine(label[j], w));
      std::sort(around.begin(), around.end());
      uint64_t h = label[i];
      for (uint64_t a : around) h = combine(h, a);
      next[i] = h;
    }
    label.swap(next);
  }
  std::sort(label.begin(), label.end());
  uint64_t h = combine(mix(n), g.edges.size());
  for (uint64_t l : label) h = combine(h, l);
  return h;
}

std::optional<std::vector<uint32_t>> isomorphism(const Fcg& a, const Fcg& b) {
  if (a.vertices() != b.vertices() || a.edges.size() != b.edges.size()) return std::nullopt;
  // Each edge as two arcs, u -> v labelled (shared data ports, u's ACK ports on v's data) and
  // v -> u likewise: matched arcs keep the direction of the ACK coupling.
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, boost::no_property,
                                      boost::property<boost::edge_weight_t, uint64_t>>;
  auto build = [](const Fcg& f) {
    Graph g(f.vertices());
    for (const Fcg::Edge& e : f.edges) {
      boost::add_edge(e.u, e.v, (uint64_t(e.weight) << 32) | e.u_acks, g);
      boost::add_edge(e.v, e.u, (uint64_t(e.weight) << 32) | e.v_acks, g);
    }
    return g;
  };
  const Graph ga = build(a), gb = build(b);
  const auto wa = boost::get(boost::edge_weight, ga);
  const auto wb = boost::get(boost::edge_weight, gb);
  auto same_vertex = [&](auto va, auto vb) {
    return a.same_label(static_cast<uint32_t>(va), b, static_cast<uint32_t>(vb));
  };
  auto same_edge = [&](auto ea, auto eb) { return wa[ea] == wb[eb]; };
  std::optional<std::vector<uint32_t>> found;
  auto callback = [&](auto f, auto) {
    std::vector<uint32_t> map(a.vertices());
    for (uint32_t v = 0; v < a.vertices(); ++v) map[v] = static_cast<uint32_t>(boost::get(f, v));
    found = std::move(map);
    return false;  // the first isomorphism is enough
  };
  if (a.vertices() == 0) return std::vector<uint32_t>{};
  boost::vf2_graph_iso(ga, gb, callback, boost::vertex_order_by_mult(ga),
                       boost::edges_equivalent(same_edge).vertices_equivalent(same_vertex));
  return found;
}

}  // namespace wh
