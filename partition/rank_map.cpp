// METIS k-way partitioner and linear twin over a plain weighted graph (rank_map.h).
#include "wormhole/partition/rank_map.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include <metis.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>

namespace wh {
namespace {

// Redirects the process's stdout to /dev/null while alive: METIS writes diagnostics there that are
// noise to a user (its failures are reported by return code, which we turn into messages).
struct StdoutSilenced {
  int saved = -1;
  StdoutSilenced() {
    std::fflush(stdout);
    saved = ::dup(1);
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) {
      ::dup2(null, 1);
      ::close(null);
    }
  }
  ~StdoutSilenced() {
    std::fflush(stdout);
    if (saved >= 0) {
      ::dup2(saved, 1);
      ::close(saved);
    }
  }
  StdoutSilenced(const StdoutSilenced&) = delete;
  StdoutSilenced& operator=(const StdoutSilenced&) = delete;
};

static_assert(sizeof(idx_t) == 4, "libmetis-dev is built with IDXTYPEWIDTH 32");

constexpr uint32_t kNoGroup = UINT32_MAX;
constexpr uint64_t kMetisSumLimit = uint64_t{1} << 30;  // keep every weight sum well inside int32

/// Groups contracted: vertex_of[node], vertex weights, and the vertex count.
struct Contracted {
  std::vector<uint32_t> vertex_of;
  std::vector<uint64_t> weight;  // per vertex, sum of its nodes' weights
  uint32_t vertices() const { return static_cast<uint32_t>(weight.size()); }
};

uint32_t node_weight(const NetGraph& g, uint32_t n) { return g.node_weight.empty() ? 1u : g.node_weight[n]; }

void check_graph(const NetGraph& g) {
  if (!g.node_weight.empty() && g.node_weight.size() != g.num_nodes)
    throw std::invalid_argument("NetGraph: node_weight has " + std::to_string(g.node_weight.size()) +
                                " entries for " + std::to_string(g.num_nodes) + " nodes");
  for (uint32_t n = 0; n < g.node_weight.size(); ++n)
    if (g.node_weight[n] == 0)
      throw std::invalid_argument("NetGraph: node " + std::to_string(n) + " has weight 0; weights must be >= 1");
  if (!g.group.empty() && g.group.size() != g.num_nodes)
    throw std::invalid_argument("NetGraph: group has " + std::to_string(g.group.size()) + " entries for " +
                                std::to_string(g.num_nodes) + " nodes");
  for (size_t i = 0; i < g.edges.size(); ++i) {
    const auto& e = g.edges[i];
    if (e.a >= g.num_nodes || e.b >= g.num_nodes)
      throw std::invalid_argument("NetGraph: link " + std::to_string(i) + " joins " + std::to_string(e.a) + " and " +
                                  std::to_string(e.b) + ", but there are only " + std::to_string(g.num_nodes) +
                                  " nodes");
    if (e.delay_ps < 0)
      throw std::invalid_argument("NetGraph: link " + std::to_string(i) + " has negative delay " +
                                  std::to_string(e.delay_ps) + " ps");
  }
}

/// Validate the graph and the rank count, and contract groups (vertices numbered by smallest node id).
Contracted contract(const NetGraph& g, uint32_t ranks) {
  check_graph(g);
  Contracted c;
  c.vertex_of.resize(g.num_nodes);
  std::unordered_map<uint32_t, uint32_t> vertex_of_group;
  for (uint32_t n = 0; n < g.num_nodes; ++n) {
    const uint32_t grp = g.group.empty() ? kNoGroup : g.group[n];
    uint32_t v = c.vertices();
    if (grp != kNoGroup) v = vertex_of_group.try_emplace(grp, v).first->second;
    if (v == c.vertices()) c.weight.push_back(0);
    c.vertex_of[n] = v;
    c.weight[v] += node_weight(g, n);
  }
  if (ranks == 0) throw std::invalid_argument("cannot split a graph over 0 ranks; use at least 1 rank");
  return c;
}

/// Edge cut, lookahead and imbalance of a complete, valid map.
RankMap score(const NetGraph& g, std::vector<uint32_t> rank_of, uint32_t ranks) {
  RankMap m;
  m.rank_of = std::move(rank_of);
  m.ranks = ranks;
  for (const auto& e : g.edges) {
    if (m.rank_of[e.a] == m.rank_of[e.b]) continue;
    ++m.edge_cut;
    m.lookahead_ps = std::min(m.lookahead_ps, e.delay_ps);
  }
  std::vector<uint64_t> load(ranks, 0);
  uint64_t total = 0;
  for (uint32_t n = 0; n < g.num_nodes; ++n) {
    load[m.rank_of[n]] += node_weight(g, n);
    total += node_weight(g, n);
  }
  const uint64_t max_load = *std::max_element(load.begin(), load.end());
  m.imbalance = total == 0 ? 1.0 : static_cast<double>(max_load) * ranks / static_cast<double>(total);
  return m;
}

/// Ranks that own no node, as "3, 7" (empty string when every rank owns one).
std::string empty_ranks(const std::vector<uint32_t>& rank_of, uint32_t ranks) {
  std::vector<bool> used(ranks, false);
  for (uint32_t r : rank_of) used[r] = true;
  std::string out;
  for (uint32_t r = 0; r < ranks; ++r)
    if (!used[r]) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return out;
}

/// Divisor that brings a sum of weights under kMetisSumLimit.
uint64_t scale_for(uint64_t sum) { return sum <= kMetisSumLimit ? 1 : (sum + kMetisSumLimit - 1) / kMetisSumLimit; }

const char* metis_code_name(int rc) {
  switch (rc) {
    case METIS_ERROR_INPUT: return "METIS_ERROR_INPUT";
    case METIS_ERROR_MEMORY: return "METIS_ERROR_MEMORY";
    case METIS_ERROR: return "METIS_ERROR";
    default: return "an unknown METIS code";
  }
}

}  // namespace

RankMap partition_metis(const NetGraph& g, uint32_t ranks) {
  const Contracted c = contract(g, ranks);
  // More ranks than vertices: one vertex per rank, the ranks left over idle.
  if (ranks > c.vertices()) return score(g, partition_metis(g, c.vertices()).rank_of, ranks);
  if (ranks == 1) return score(g, std::vector<uint32_t>(g.num_nodes, 0), 1);
  const uint32_t nv = c.vertices();
  if (nv > static_cast<uint32_t>(std::numeric_limits<idx_t>::max()))
    throw std::invalid_argument("partition_metis: " + std::to_string(nv) + " vertices exceed METIS's 32-bit idx_t");

  // Both directions of every link between distinct vertices, merged per vertex pair (summed weights).
  std::vector<std::tuple<uint32_t, uint32_t, uint64_t>> arcs;
  arcs.reserve(2 * g.edges.size());
  for (const auto& e : g.edges) {
    const uint32_t u = c.vertex_of[e.a], v = c.vertex_of[e.b];
    if (u == v) continue;
    arcs.emplace_back(u, v, e.weight);
    arcs.emplace_back(v, u, e.weight);
  }
  std::sort(arcs.begin(), arcs.end());
  std::vector<std::tuple<uint32_t, uint32_t, uint64_t>> merged;
  for (const auto& [u, v, w] : arcs) {
    if (!merged.empty() && std::get<0>(merged.back()) == u && std::get<1>(merged.back()) == v)
      std::get<2>(merged.back()) += w;
    else
      merged.emplace_back(u, v, w);
  }
  if (merged.size() > static_cast<size_t>(std::numeric_limits<idx_t>::max()))
    throw std::invalid_argument("partition_metis: too many links for METIS's 32-bit idx_t");

  // CSR arrays, weights scaled so METIS's internal int32 sums cannot overflow; a weight is never below 1.
  uint64_t edge_sum = 0, vertex_sum = 0;
  for (const auto& a : merged) edge_sum += std::get<2>(a);
  for (uint64_t w : c.weight) vertex_sum += w;
  const uint64_t edge_div = scale_for(edge_sum), vertex_div = scale_for(vertex_sum);
  std::vector<idx_t> xadj(nv + 1, 0), adjncy, adjwgt, vwgt(nv);
  adjncy.reserve(merged.size());
  adjwgt.reserve(merged.size());
  for (const auto& [u, v, w] : merged) {
    ++xadj[u + 1];
    adjncy.push_back(static_cast<idx_t>(v));
    adjwgt.push_back(static_cast<idx_t>(std::max<uint64_t>(1, w / edge_div)));
  }
  for (uint32_t v = 0; v < nv; ++v) {
    xadj[v + 1] += xadj[v];
    vwgt[v] = static_cast<idx_t>(std::max<uint64_t>(1, c.weight[v] / vertex_div));
  }

  idx_t nvtxs = static_cast<idx_t>(nv), ncon = 1, nparts = static_cast<idx_t>(ranks), objval = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 42;  // deterministic: same input, same map, on every rank
  std::vector<idx_t> part(nv, 0);
  std::vector<uint32_t> rank_of(g.num_nodes);
  // METIS 5.1's direct k-way can return METIS_OK with empty parts on small graphs (even everything in
  // part 0; KarypisLab/METIS#29, #81): then try recursive bisection once, with the same options.
  for (const bool kway : {true, false}) {
    // METIS takes non-const pointers but does not modify the graph.
    const auto run = kway ? METIS_PartGraphKway : METIS_PartGraphRecursive;
    const StdoutSilenced quiet;  // METIS prints "***Cannot bisect ..." to stdout on its way to failing
    const int rc = run(&nvtxs, &ncon, xadj.data(), adjncy.data(), vwgt.data(), nullptr, adjwgt.data(), &nparts,
                       nullptr, nullptr, options, &objval, part.data());
    if (rc != METIS_OK)
      throw std::runtime_error(std::string(kway ? "METIS_PartGraphKway" : "METIS_PartGraphRecursive") +
                               " failed with " + metis_code_name(rc) + " (" + std::to_string(rc) + ") cutting " +
                               std::to_string(nv) + " vertices over " + std::to_string(ranks) + " ranks");
    for (uint32_t n = 0; n < g.num_nodes; ++n) rank_of[n] = static_cast<uint32_t>(part[c.vertex_of[n]]);
    if (empty_ranks(rank_of, ranks).empty()) return score(g, std::move(rank_of), ranks);
  }
  // Both left ranks empty (rank counts near the vertex count): give each empty rank, in rank
  // order, the lightest vertex (lowest index on ties) of the rank holding the most vertices. A
  // pure function of METIS's answer, so still deterministic; the cut is what it is.
  std::vector<uint32_t> count(ranks, 0);
  for (uint32_t v = 0; v < nv; ++v) ++count[static_cast<uint32_t>(part[v])];
  for (uint32_t r = 0; r < ranks; ++r) {
    if (count[r] > 0) continue;
    const uint32_t from = static_cast<uint32_t>(std::max_element(count.begin(), count.end()) - count.begin());
    uint32_t pick = nv;
    for (uint32_t v = 0; v < nv; ++v)
      if (static_cast<uint32_t>(part[v]) == from && (pick == nv || c.weight[v] < c.weight[pick])) pick = v;
    part[pick] = static_cast<idx_t>(r);
    --count[from], ++count[r];
  }
  for (uint32_t n = 0; n < g.num_nodes; ++n) rank_of[n] = static_cast<uint32_t>(part[c.vertex_of[n]]);
  return score(g, std::move(rank_of), ranks);
}

RankMap partition_linear(const NetGraph& g, uint32_t ranks) {
  const Contracted c = contract(g, ranks);
  if (ranks > c.vertices()) return score(g, partition_linear(g, c.vertices()).rank_of, ranks);
  const uint32_t nv = c.vertices();
  uint64_t total = 0;
  for (uint64_t w : c.weight) total += w;
  // Vertex v goes to the rank whose share [k, k+1) * total / ranks holds its weight's midpoint, kept
  // monotone, stepping by at most one rank, and leaving enough vertices for the ranks still to come.
  std::vector<uint32_t> rank_of_vertex(nv);
  uint64_t before = 0;  // weight of vertices 0 .. v-1
  uint32_t prev = 0;
  for (uint32_t v = 0; v < nv; ++v) {
    const unsigned __int128 mid2 = 2 * static_cast<unsigned __int128>(before) + c.weight[v];
    const auto ideal = static_cast<uint32_t>(mid2 * ranks / (2 * static_cast<unsigned __int128>(total)));
    const uint32_t lo = std::max<uint32_t>(prev, ranks - std::min(ranks, nv - v));
    const uint32_t hi = v == 0 ? 0 : prev + 1;
    prev = rank_of_vertex[v] = std::clamp(ideal, lo, hi);
    before += c.weight[v];
  }
  std::vector<uint32_t> rank_of(g.num_nodes);
  for (uint32_t n = 0; n < g.num_nodes; ++n) rank_of[n] = rank_of_vertex[c.vertex_of[n]];
  return score(g, std::move(rank_of), ranks);
}

RankMap evaluate_rank_map(const NetGraph& g, std::vector<uint32_t> rank_of, uint32_t ranks) {
  check_graph(g);
  if (ranks == 0) throw std::invalid_argument("a rank map needs at least 1 rank");
  if (rank_of.size() != g.num_nodes)
    throw std::invalid_argument("rank map has " + std::to_string(rank_of.size()) + " entries for " +
                                std::to_string(g.num_nodes) + " nodes");
  std::unordered_map<uint32_t, uint32_t> rank_of_group, first_of_group;  // group -> rank, -> its first node
  for (uint32_t n = 0; n < g.num_nodes; ++n) {
    if (rank_of[n] >= ranks)
      throw std::invalid_argument("node " + std::to_string(n) + " is on rank " + std::to_string(rank_of[n]) +
                                  " of only " + std::to_string(ranks));
    const uint32_t grp = g.group.empty() ? kNoGroup : g.group[n];
    if (grp == kNoGroup) continue;
    const uint32_t r = rank_of_group.try_emplace(grp, rank_of[n]).first->second;
    const uint32_t first = first_of_group.try_emplace(grp, n).first->second;
    if (r != rank_of[n])
      throw std::invalid_argument("nodes " + std::to_string(first) + " and " + std::to_string(n) +
                                  " belong to one server (group " + std::to_string(grp) +
                                  ": an NVSwitch and its GPUs, never split) but are on ranks " + std::to_string(r) +
                                  " and " + std::to_string(rank_of[n]));
  }
  // A rank may idle only when there are more ranks than (contracted) vertices to own.
  if (const std::string empty = empty_ranks(rank_of, ranks); !empty.empty() && ranks <= contract(g, ranks).vertices())
    throw std::invalid_argument("rank(s) " + empty + " own no node");
  return score(g, std::move(rank_of), ranks);
}

std::string describe(const RankMap& m) {
  char buf[256];
  std::string la;
  if (m.lookahead_ps == INT64_MAX) {
    la = "lookahead unbounded (no cut links)";
  } else {
    std::snprintf(buf, sizeof buf, "lookahead %.3f ns", static_cast<double>(m.lookahead_ps) / 1000.0);
    la = buf;
    // Trim "1000.000" to "1000" and "12.500" to "12.5".
    const size_t dot = la.find('.'), end = la.rfind(" ns");
    size_t keep = la.find_last_not_of('0', end - 1);
    if (keep == dot) --keep;
    la.erase(keep + 1, end - keep - 1);
  }
  std::snprintf(buf, sizeof buf, "%" PRIu32 " rank%s, %" PRIu64 " cut link%s, imbalance %.3f, ", m.ranks,
                m.ranks == 1 ? "" : "s", m.edge_cut, m.edge_cut == 1 ? "" : "s", m.imbalance);
  std::string out = buf + la;
  std::vector<bool> used(m.ranks, false);
  for (uint32_t r : m.rank_of) used[r] = true;
  const auto idle = static_cast<uint32_t>(std::count(used.begin(), used.end(), false));
  if (idle > 0) {
    const size_t at = out.find(',');
    out.insert(at, ", " + std::to_string(idle) + " idle rank" + (idle == 1 ? "" : "s") + " (more ranks than nodes to own)");
  }
  if (m.lookahead_ps < 100 * 1000)
    out += "; WARNING: lookahead below 100 ns, synchronisation windows will be very short";
  return out;
}

}  // namespace wh
