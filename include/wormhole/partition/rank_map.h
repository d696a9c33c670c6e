// Cutting the network graph over MPI ranks: a METIS k-way partitioner and its dumb twin, a linear
// split (docs/architecture.md, "A partitioner is a pure function with a dumb twin"). Both are pure functions
// of a plain weighted graph; the simulator must give identical results for any rank map they return.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace wh {

/// The network as `partition/` sees it: nodes (hosts, GPUs, switches) joined by links.
struct NetGraph {
  /// A link between nodes `a` and `b` (undirected; parallel links between the same pair are allowed).
  struct Edge {
    uint32_t a = 0;        ///< one end, a node id in [0, num_nodes)
    uint32_t b = 0;        ///< other end, a node id in [0, num_nodes); a == b (a loop) is ignored
    uint64_t weight = 1;   ///< cost of cutting this link (e.g. its bandwidth in Gb/s or expected packets); unitless
    int64_t delay_ps = 0;  ///< propagation delay of the link in picoseconds, >= 0; bounds the lookahead if cut
  };

  uint32_t num_nodes = 0;            ///< node ids are 0 .. num_nodes-1
  /// Expected work per node (e.g. ports + flows), each >= 1; unitless. Empty means 1 for every node.
  std::vector<uint32_t> node_weight;
  std::vector<Edge> edges;           ///< one entry per link
  /// Optional (empty, or one entry per node): nodes sharing a group id other than UINT32_MAX must land
  /// on the same rank (a server's GPUs and its NVSwitch). UINT32_MAX means "no group".
  std::vector<uint32_t> group;
};

/// An assignment of nodes to ranks, with the numbers that decide whether it is any good.
struct RankMap {
  std::vector<uint32_t> rank_of;  ///< rank of each node, in [0, ranks)
  /// Number of ranks; every rank owns at least one node, unless there are more ranks than
  /// (contracted) vertices: then ranks vertices .. ranks-1 own none and idle.
  uint32_t ranks = 0;
  uint64_t edge_cut = 0;          ///< number of links whose ends are on different ranks (parallel links count each)
  int64_t lookahead_ps = INT64_MAX;  ///< minimum delay over cut links in ps; INT64_MAX when nothing is cut
  double imbalance = 1.0;         ///< max rank weight / mean rank weight (1.0 = perfect), by node_weight
};

/// Cut `g` over `ranks` ranks with METIS_PartGraphKway (edge-cut objective, default 3% imbalance
/// tolerance, fixed seed 42, so the same input always gives the same map on every rank).
/// Groups are contracted into one METIS vertex (summed weights, parallel links merged with summed
/// weights) and expanded afterwards. `ranks == 1` returns all zeros without calling METIS.
/// METIS 5.1's k-way can report success yet leave parts empty on small graphs; the same call is then
/// retried once with METIS_PartGraphRecursive, and if ranks are still empty each gets, in rank order,
/// the lightest vertex of the rank holding the most vertices (deterministic; any rank count up to the
/// number of contracted vertices works, with the cut that repair gives). More ranks than vertices:
/// one vertex per rank (the map for as many ranks as vertices), the other ranks idle.
/// Weights are scaled down if their sums would overflow METIS's 32-bit idx_t.
/// @throws std::invalid_argument on a malformed graph or `ranks == 0`.
/// @throws std::runtime_error when METIS returns anything but METIS_OK (the code is named).
RankMap partition_metis(const NetGraph& g, uint32_t ranks);

/// The dumb twin: contiguous blocks of node ids balanced by node weight. Vertices (a group counts as
/// one vertex, placed at its smallest node id) are laid out in id order and cut where the running
/// weight crosses k/ranks of the total; every rank gets at least one vertex (with more ranks than
/// vertices, one each and the rest idle). Ignores edges.
/// @throws std::invalid_argument as partition_metis.
RankMap partition_linear(const NetGraph& g, uint32_t ranks);

/// Score any rank map of `g` (edge cut, lookahead, imbalance), e.g. one read from a file or a
/// round-robin map for tests. Checks that `rank_of` has one entry per node, each < `ranks`, that
/// groups are not split and that no rank is empty (unless there are more ranks than vertices).
/// @throws std::invalid_argument when any of those checks fails.
RankMap evaluate_rank_map(const NetGraph& g, std::vector<uint32_t> rank_of, uint32_t ranks);

/// One-line human summary, e.g. "4 ranks, 16 cut links, imbalance 1.000, lookahead 1000 ns"
/// (with ", 1 idle rank" after the rank count when ranks own no node);
/// appends "WARNING: lookahead below 100 ns ..." when the lookahead is under 100 ns.
std::string describe(const RankMap& m);

}  // namespace wh
