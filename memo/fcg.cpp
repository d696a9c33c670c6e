// Flow contention graphs: construction, Weisfeiler–Lehman hash, canonical form and isomorphism
// (see fcg.h).
#include "wormhole/memo/fcg.h"

#include <algorithm>
#include <array>
#include <bliss/graph.hh>
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

FcgCanon canonical_form(const Fcg& g) {
  const size_t n = g.vertices(), m = g.edges.size();
  // Each vertex's colour value: kind (0 flow, 1 edge), then its label. Colours are the ranks of the
  // distinct values, so isomorphic graphs (equal value multisets) colour alike; the values go into the
  // words, so graphs with other values never compare equal.
  using Value = std::array<uint64_t, 7>;
  std::vector<Value> value(n + m);
  for (size_t i = 0; i < n; ++i) {
    const FcgLabel& l = g.label[i];
    value[i] = {0, l.rate_q, l.bottleneck_bps, l.line_bps, l.rtt_ns, l.hops, l.fresh};
  }
  for (size_t k = 0; k < m; ++k) {
    const Fcg::Edge& e = g.edges[k];
    value[n + k] = {1, e.weight, std::max(e.u_acks, e.v_acks), std::min(e.u_acks, e.v_acks), 0, 0, 0};
  }
  std::vector<Value> distinct = value;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  auto colour = [&](const Value& v) {
    return static_cast<unsigned>(std::lower_bound(distinct.begin(), distinct.end(), v) - distinct.begin());
  };
  FcgCanon c;
  c.words = {n, m, distinct.size()};
  for (const Value& v : distinct) c.words.insert(c.words.end(), v.begin(), v.end());
  c.rank.resize(n);
  c.flow.resize(n);
  if (n + m > 0) {
    bliss::Digraph d;
    // bliss 0.73 (Debian 12's) leaks about 24 B a vertex per search with component recursion on (its
    // 0.74 changelog: "fixed a memory leak"); off, it leaks nothing and the forms stay canonical.
    d.set_component_recursion(false);
    for (const Value& v : value) d.add_vertex(colour(v));
    std::vector<std::pair<uint32_t, uint32_t>> arcs;
    arcs.reserve(4 * m);
    for (size_t k = 0; k < m; ++k) {
      const Fcg::Edge& e = g.edges[k];
      const uint32_t x = static_cast<uint32_t>(n + k);
      const uint32_t from = e.u_acks >= e.v_acks ? e.u : e.v, to = from == e.u ? e.v : e.u;
      arcs.push_back({from, x}), arcs.push_back({x, to});
      if (e.u_acks == e.v_acks) arcs.push_back({to, x}), arcs.push_back({x, from});
    }
    for (const auto& [s, t] : arcs) d.add_edge(s, t);
    bliss::Stats stats;
    const unsigned* lab = d.canonical_form(stats, nullptr, nullptr);  // lab[v]: v's canonical place
    std::vector<uint32_t> at(n + m);
    for (size_t v = 0; v < n + m; ++v) at[lab[v]] = static_cast<uint32_t>(v);
    for (uint32_t v : at) c.words.push_back(colour(value[v]));
    std::vector<uint64_t> placed;
    placed.reserve(arcs.size());
    for (const auto& [s, t] : arcs) placed.push_back(uint64_t{lab[s]} << 32 | lab[t]);
    std::sort(placed.begin(), placed.end());
    c.words.insert(c.words.end(), placed.begin(), placed.end());
    uint32_t r = 0;
    for (uint32_t v : at)
      if (v < n) c.rank[v] = r, c.flow[r] = v, ++r;
  }
  c.hash = mix(c.words.size());
  for (uint64_t w : c.words) c.hash = combine(c.hash, w);
  return c;
}

std::vector<uint32_t> canonical_map(const FcgCanon& a, const FcgCanon& b) {
  if (!(a == b)) throw std::invalid_argument("canonical_map: the graphs' canonical forms differ");
  std::vector<uint32_t> map(a.rank.size());
  for (size_t i = 0; i < map.size(); ++i) map[i] = b.flow[a.rank[i]];
  return map;
}

std::optional<std::vector<uint32_t>> isomorphism(const Fcg& a, const Fcg& b) {
  if (a.vertices() != b.vertices() || a.edges.size() != b.edges.size()) return std::nullopt;
  const FcgCanon ca = canonical_form(a), cb = canonical_form(b);
  if (!(ca == cb)) return std::nullopt;
  return canonical_map(ca, cb);
}

}  // namespace wh
