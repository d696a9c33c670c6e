// Flow contention graphs: hand-built graphs, relabelled isomorphic ones hit with the right map,
// WL-indistinguishable non-isomorphic ones told apart by their canonical forms, also where they are
// strongly regular and where a backtracking search (VF2) ran for minutes.
#include <gtest/gtest.h>

#include <malloc.h>

#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "memo_fixtures.h"
#include "wormhole/memo/fcg.h"

using namespace wh;
using namespace wh::test;

namespace {

/// Two disjoint triangles, or one hexagon: both 2-regular on 6 equal vertices, so WL hashing
/// cannot tell them apart; they are not isomorphic.
std::vector<FcgFlow> two_triangles() {
  return {fl({1, 2}), fl({1, 3}), fl({2, 3}), fl({11, 12}), fl({11, 13}), fl({12, 13})};
}
std::vector<FcgFlow> hexagon() {
  std::vector<FcgFlow> f;
  for (uint32_t i = 0; i < 6; ++i) f.push_back(fl({20 + (i + 5) % 6, 20 + i}));
  return f;
}

/// Flows coupled exactly along `edges` of a graph on `n` vertices: each edge is a port the two share.
std::vector<FcgFlow> flows_of_graph(uint32_t n, const std::vector<std::pair<uint32_t, uint32_t>>& edges) {
  std::vector<FcgFlow> f(n, fl({}));
  for (size_t k = 0; k < edges.size(); ++k)
    for (uint32_t v : {edges[k].first, edges[k].second}) f[v].ports.push_back(static_cast<uint32_t>(100 + k));
  for (FcgFlow& x : f) x.hops = 3;  // equal labels, whatever each vertex's degree
  return f;
}

/// The 4 x 4 rook's graph (cells adjacent in a row or column) and the Shrikhande graph (cells of the
/// 4 x 4 torus adjacent along rows, columns and one diagonal): both strongly regular with parameters
/// (16, 6, 2, 2), so colour refinement (WL) cannot tell them apart; they are not isomorphic (Shrikhande,
/// 1959). `shift` renumbers the cells, for an isomorphic copy listed in another order.
std::vector<std::pair<uint32_t, uint32_t>> rook_edges(uint32_t shift = 0) {
  std::vector<std::pair<uint32_t, uint32_t>> e;
  auto id = [&](uint32_t r, uint32_t c) { return (4 * r + c + shift) % 16; };
  for (uint32_t r = 0; r < 4; ++r)
    for (uint32_t c = 0; c < 4; ++c)
      for (uint32_t k = c + 1; k < 4; ++k) e.push_back({id(r, c), id(r, k)}), e.push_back({id(c, r), id(k, r)});
  return e;
}
std::vector<std::pair<uint32_t, uint32_t>> shrikhande_edges() {
  std::vector<std::pair<uint32_t, uint32_t>> e;
  for (uint32_t r = 0; r < 4; ++r)
    for (uint32_t c = 0; c < 4; ++c)
      for (auto [dr, dc] : {std::pair{0u, 1u}, {1u, 0u}, {1u, 1u}}) e.push_back({4 * r + c, 4 * ((r + dr) % 4) + (c + dc) % 4});
  return e;
}

/// Whether `map` carries a's labels and edges (with their ACK directions) onto b's.
bool preserves(const Fcg& a, const Fcg& b, const std::vector<uint32_t>& map) {
  std::set<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t>> eb;
  for (const Fcg::Edge& e : b.edges) eb.insert({e.u, e.v, e.weight, e.u_acks, e.v_acks});
  for (uint32_t i = 0; i < a.vertices(); ++i)
    if (!(a.label[i] == b.label[map[i]])) return false;
  for (const Fcg::Edge& e : a.edges) {
    uint32_t u = map[e.u], v = map[e.v], ua = e.u_acks, va = e.v_acks;
    if (u > v) std::swap(u, v), std::swap(ua, va);
    if (!eb.count({u, v, e.weight, ua, va})) return false;
  }
  return true;
}

/// The graphs of tests/data/memo/ep_alltoall_fcg_pair.txt (its header gives the format).
std::vector<Fcg> read_pair() {
  std::ifstream in(WH_TEST_DATA "/memo/ep_alltoall_fcg_pair.txt");
  std::vector<Fcg> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("GRAPH", 0) != 0) continue;
    Fcg g;
    std::istringstream tokens(line.substr(5));
    std::string t;
    while (tokens >> t) {
      char sep;
      std::istringstream v(t.substr(1));
      if (t[0] == 'L') {
        FcgLabel l;
        unsigned fresh = 0;
        v >> l.rate_q >> sep >> l.bottleneck_bps >> sep >> l.line_bps >> sep >> l.rtt_ns >> sep >> l.hops >> sep >> fresh;
        l.fresh = static_cast<uint8_t>(fresh);
        g.label.push_back(l);
      } else {
        Fcg::Edge e;
        v >> e.u >> sep >> e.v >> sep >> e.weight >> sep >> e.u_acks >> sep >> e.v_acks;
        g.edges.push_back(e);
      }
    }
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace

TEST(Fcg, EdgesWeighSharedPortsAndRatesAreQuantised) {
  // A {1,2,3}, B {3,4}, C {2,3,5}: A–B share port 3, A–C ports 2 and 3, B–C port 3.
  const Fcg g = make_fcg({fl({1, 2, 3}, 49'600'000'000), fl({3, 4, 4}, 50'400'000'000), fl({5, 3, 2}, 48'400'000'000)}, kG);
  ASSERT_EQ(g.vertices(), 3u);
  EXPECT_EQ(g.label[0].rate_q, 50u);
  EXPECT_EQ(g.label[1].rate_q, 50u);
  EXPECT_EQ(g.label[2].rate_q, 48u);
  ASSERT_EQ(g.edges.size(), 3u);
  const uint32_t want[3][3] = {{0, 1, 1}, {0, 2, 2}, {1, 2, 1}};  // (u, v, shared ports)
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(g.edges[i].u, want[i][0]);
    EXPECT_EQ(g.edges[i].v, want[i][1]);
    EXPECT_EQ(g.edges[i].weight, want[i][2]);
  }
  EXPECT_THROW(make_fcg({fl({1})}, 0), std::invalid_argument);
}

TEST(Fcg, RelabelledFlowsAreIsomorphicWithTheRightMap) {
  // The same contention pattern on other ports, flows listed in another order (C, A, B), one of
  // them at another rate so the map is forced: A -> 1, B -> 2, C -> 0.
  const Fcg a = make_fcg({fl({1, 2, 3}, 30 * kG), fl({3, 4}), fl({2, 3, 5})}, kG);
  const Fcg b = make_fcg({fl({72, 73, 75}), fl({71, 72, 73}, 30 * kG), fl({73, 74})}, kG);
  EXPECT_EQ(wl_hash(a), wl_hash(b));
  const auto map = isomorphism(a, b);
  ASSERT_TRUE(map.has_value());
  EXPECT_EQ(*map, (std::vector<uint32_t>{1, 2, 0}));
}

TEST(Fcg, EqualWlHashButNotIsomorphic) {
  const Fcg t = make_fcg(two_triangles(), kG), h = make_fcg(hexagon(), kG);
  EXPECT_EQ(t.edges.size(), 6u);
  EXPECT_EQ(h.edges.size(), 6u);
  EXPECT_EQ(wl_hash(t), wl_hash(h));
  EXPECT_FALSE(isomorphism(t, h).has_value());
  EXPECT_TRUE(isomorphism(t, t).has_value());
}

TEST(Fcg, StronglyRegularGraphsToldApartAndARelabelledOneMapped) {
  const Fcg rook = make_fcg(flows_of_graph(16, rook_edges()), kG);
  const Fcg shrikhande = make_fcg(flows_of_graph(16, shrikhande_edges()), kG);
  const Fcg rook_again = make_fcg(flows_of_graph(16, rook_edges(5)), kG);
  ASSERT_EQ(rook.edges.size(), 48u);
  ASSERT_EQ(shrikhande.edges.size(), 48u);
  EXPECT_EQ(wl_hash(rook), wl_hash(shrikhande));
  EXPECT_FALSE(isomorphism(rook, shrikhande).has_value());
  EXPECT_FALSE(canonical_form(rook) == canonical_form(shrikhande));
  const auto map = isomorphism(rook, rook_again);
  ASSERT_TRUE(map.has_value());
  EXPECT_TRUE(preserves(rook, rook_again, *map));
  EXPECT_THROW(canonical_map(canonical_form(rook), canonical_form(shrikhande)), std::invalid_argument);
}

TEST(Fcg, SymmetricAllToAllPatternsOfARunAreDecidedAtOnce) {
  // Two 40-flow NVLink patterns that met at one tick of deepseek16b-128g: equal WL hashes, each flow
  // on 14 edges. VF2 searched them for minutes and kept the run from ending (and from an interrupt).
  const std::vector<Fcg> pair = read_pair();
  ASSERT_EQ(pair.size(), 2u);
  ASSERT_EQ(pair[0].vertices(), 40u);
  ASSERT_EQ(pair[0].edges.size(), 280u);
  EXPECT_EQ(wl_hash(pair[0]), wl_hash(pair[1]));
  const auto t0 = std::chrono::steady_clock::now();
  const auto map = isomorphism(pair[0], pair[1]);
  const auto map_back = isomorphism(pair[1], pair[0]);
  ASSERT_TRUE(map.has_value());  // the same pattern on two servers
  ASSERT_TRUE(map_back.has_value());
  EXPECT_TRUE(preserves(pair[0], pair[1], *map));
  EXPECT_TRUE(preserves(pair[1], pair[0], *map_back));
  // Not a timing assertion on this machine's speed: a bound four orders above what it takes (< 10 ms),
  // far below the minutes of the search it replaces.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(60));
}

TEST(Fcg, CanonicalFormsLeaveNoMemoryBehind) {
  // A 30-flow pattern without symmetry, its form made 2,000 times: with the library's component
  // recursion on, bliss 0.73 lost about 3.3 KB a call (6.6 MB here); the heap in use must not grow.
  std::vector<FcgFlow> flows;
  for (uint32_t i = 0; i < 30; ++i) flows.push_back(fl({i % 7, 10 + (i * i) % 11, 30 + (i * 5) % 13}, (40 + i % 3) * kG));
  const Fcg g = make_fcg(flows, kG);
  ASSERT_GT(g.edges.size(), 30u);
  const FcgCanon first = canonical_form(g);
  const size_t before = mallinfo2().uordblks;
  for (int k = 0; k < 2000; ++k) ASSERT_TRUE(canonical_form(g) == first);
  EXPECT_LT(mallinfo2().uordblks, before + 256 * 1024);
}

TEST(Fcg, LabelsAndWeightsMustMatch) {
  const Fcg base = make_fcg({fl({1, 2}), fl({1, 2})}, kG);           // one edge of weight 2
  const Fcg lighter = make_fcg({fl({1, 2}), fl({1, 3})}, kG);        // weight 1
  const Fcg slower = make_fcg({fl({1, 2}), fl({1, 2}, 20 * kG)}, kG);  // another rate label
  const Fcg narrower = make_fcg({fl({1, 2}), fl({1, 2}, 50 * kG, 25 * kG)}, kG);  // another bottleneck
  FcgFlow fresh = fl({1, 2});
  fresh.fresh = true;
  const Fcg newer = make_fcg({fl({1, 2}), fresh}, kG);  // one flow has sent nothing yet
  FcgFlow far = fl({1, 2});
  far.rtt_ns = 9000;
  const Fcg farther = make_fcg({fl({1, 2}), far}, kG);  // another base RTT
  FcgFlow slow_nic = fl({1, 2});
  slow_nic.line_bps = 25 * kG;
  const Fcg smaller_nic = make_fcg({fl({1, 2}), slow_nic}, kG);  // another line rate
  const Fcg longer = make_fcg({fl({1, 2}), fl({1, 2, 5})}, kG);  // one more hop (its port 5 shared by nobody)
  for (const Fcg* other : {&lighter, &slower, &narrower, &newer, &farther, &smaller_nic}) {
    EXPECT_NE(wl_hash(base), wl_hash(*other));
    EXPECT_FALSE(isomorphism(base, *other).has_value());
  }
  // One more hop, the same two shared ports: the edge is the same, the label is not.
  EXPECT_EQ(longer.edges.size(), 1u);
  EXPECT_EQ(longer.edges[0].weight, 2u);
  EXPECT_FALSE(isomorphism(base, longer).has_value());
  // Rates within half a quantum of each other are the same label.
  EXPECT_TRUE(isomorphism(base, make_fcg({fl({7, 8}, 50'400'000'000), fl({7, 8}, 49'700'000'000)}, kG)).has_value());
}

TEST(Fcg, ContendingAndAckCouplingAreDifferentEdgesAndAckCouplingHasADirection) {
  auto with_acks = [](FcgFlow f, std::vector<uint32_t> acks) {
    f.acks = std::move(acks);
    return f;
  };
  // Two flows sending through port 1 contend for it (each at about half its rate); a flow whose ACKs
  // leave through another's data port 2 only waits behind it: one edge each, not the same edge.
  const Fcg contend = make_fcg({fl({1, 2}), fl({1, 3})}, kG);
  const Fcg crossing = make_fcg({with_acks(fl({1, 4}), {2}), fl({2, 3})}, kG);
  ASSERT_EQ(contend.edges.size(), 1u);
  ASSERT_EQ(crossing.edges.size(), 1u);
  EXPECT_EQ(contend.edges[0].weight, 1u);
  EXPECT_EQ(crossing.edges[0].weight, 0u);
  EXPECT_EQ(crossing.edges[0].u_acks, 1u);  // flow 0's ACKs leave with flow 1's data
  EXPECT_EQ(crossing.edges[0].v_acks, 0u);
  EXPECT_NE(wl_hash(contend), wl_hash(crossing));
  EXPECT_FALSE(isomorphism(contend, crossing).has_value());
  // ACK ports carrying nobody's data couple nothing.
  EXPECT_TRUE(make_fcg({with_acks(fl({1}), {9}), with_acks(fl({2}), {9})}, kG).edges.empty());
  // The direction decides the map: A (ACKs on B's data) and B, against B' and A' listed the other way
  // round, with equal labels: A must map to A'.
  const Fcg a = make_fcg({with_acks(fl({1, 4}), {2}), fl({2, 3})}, kG);
  const Fcg b = make_fcg({fl({12, 13}), with_acks(fl({11, 14}), {12})}, kG);
  const auto map = isomorphism(a, b);
  ASSERT_TRUE(map.has_value());
  EXPECT_EQ(*map, (std::vector<uint32_t>{1, 0}));
  EXPECT_EQ(wl_hash(a), wl_hash(b));
  // Both ways coupled (a ring of two) is a third pattern.
  const Fcg both = make_fcg({with_acks(fl({1, 4}), {2}), with_acks(fl({2, 3}), {1})}, kG);
  EXPECT_EQ(both.edges[0].u_acks + both.edges[0].v_acks, 2u);
  EXPECT_FALSE(isomorphism(a, both).has_value());
}

TEST(Fcg, EmptyAndLoneFlow) {
  EXPECT_TRUE(isomorphism(Fcg{}, Fcg{}).has_value());
  const Fcg one = make_fcg({fl({3})}, kG);
  EXPECT_EQ(one.edges.size(), 0u);
  EXPECT_EQ(*isomorphism(one, make_fcg({fl({9})}, kG)), std::vector<uint32_t>{0});
  EXPECT_FALSE(isomorphism(one, Fcg{}).has_value());
}
