// Flow contention graphs (FCG): the memo key of a partition's unsteady period
// (the Wormhole paper: memoization), their Weisfeiler–Lehman hash, their canonical form and their
// exact isomorphism.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

namespace wh {

/// One flow of a partition, as the FCG sees it.
struct FcgFlow {
  /// Its data path's egress ports (any order): flows whose data share one contend for it.
  std::vector<uint32_t> ports;
  /// The switch egress ports its ACKs leave through that couple it to other flows' data there
  /// (QueueCoupling): its RTT depends on their queue, their link time on its ACKs.
  std::vector<uint32_t> acks;
  uint64_t rate_bps = 0;         ///< current sending rate, bit/s
  uint64_t bottleneck_bps = 0;   ///< slowest link on its path, bit/s
  uint64_t line_bps = 0;         ///< its NIC's line rate, bit/s
  uint64_t rtt_ns = 0;           ///< its base RTT, ns
  /// Nothing sent yet (a new QP): it starts from an empty pipe, not from packets in flight, and
  /// sends about one RTT's worth of bytes less in the same time.
  bool fresh = false;
  uint32_t hops = 0;             ///< its data path's egress ports (0: the number of `ports`)
};

/// What a vertex is labelled with: everything of one flow that changes how a period unfolds
/// besides the graph's shape — its rate (in quanta), its path (bottleneck, line rate, base RTT,
/// hops; CC reacts per RTT and per hop) and whether its pipe is empty.
struct FcgLabel {
  uint64_t rate_q = 0;          ///< rate / quantum, rounded to nearest
  uint64_t bottleneck_bps = 0;  ///< bit/s
  uint64_t line_bps = 0;        ///< bit/s
  uint64_t rtt_ns = 0;          ///< ns
  uint32_t hops = 0;            ///< data-path egress ports
  uint8_t fresh = 0;            ///< 1: had sent nothing yet
  bool operator==(const FcgLabel&) const = default;
};

/// A labelled graph: a vertex per flow labelled with an FcgLabel; an edge between two flows that
/// share a data port or whose ACKs leave through the other's data ports, carrying the number of
/// each. The two couplings are told apart, and the ACKs' by direction: two flows contending for
/// one link run at half their rate each, a flow whose ACKs merely cross another's link runs at
/// its own (measured: a replay keyed without the difference predicted 0.50 MB where the flows
/// sent 0.26). Vertex i is the i-th flow given to make_fcg. Edges are stored once, u < v, sorted.
struct Fcg {
  struct Edge {
    uint32_t u = 0, v = 0;
    uint32_t weight = 0;  ///< data ports both flows' data leave through
    uint32_t u_acks = 0;  ///< ports where u's ACKs leave with v's data
    uint32_t v_acks = 0;  ///< ports where v's ACKs leave with u's data
  };
  std::vector<FcgLabel> label;  ///< per vertex
  std::vector<Edge> edges;

  size_t vertices() const { return label.size(); }
};

/// Builds the FCG of `flows`. `rate_quantum_bps` (> 0) is the rate quantisation step: rates that
/// round to the same multiple are equal labels. Throws std::invalid_argument on a zero quantum.
/// Cost: O(Σ ports · flows sharing them).
Fcg make_fcg(const std::vector<FcgFlow>& flows, uint64_t rate_quantum_bps);

/// A Weisfeiler–Lehman hash of the FCG (`rounds` refinement rounds over vertex labels, neighbour
/// labels and edge counts, ACK couplings by direction): equal for isomorphic graphs, whatever the vertex order; unequal
/// hashes prove non-isomorphism, equal ones do not prove isomorphism (use isomorphism()).
uint64_t wl_hash(const Fcg& g, int rounds = 3);

/// The canonical form of an FCG: the graph relabelled by bliss's canonical labeling (Junttila and
/// Kaski, ALENEX 2007) of its encoding as a vertex-coloured digraph — a vertex per flow coloured by its
/// FcgLabel, a vertex per edge coloured by (shared data ports, ACK ports one way, the other way), arcs
/// from the end whose ACKs are the more to the edge vertex and on to the other end (both ways when the
/// ACKs are even). Two FCGs have equal `words` exactly when they are isomorphic (labels, shared ports
/// and ACK couplings with their direction preserved), whatever their vertex order. Unlike a
/// backtracking search (VF2), the cost does not explode on the symmetric graphs that all-to-alls make
/// (measured: a 40-flow NVLink pattern, WL-indistinguishable from another, kept VF2 busy for minutes).
struct FcgCanon {
  std::vector<uint64_t> words;  ///< the relabelled graph: sizes, each vertex's colour value in canonical order, arcs
  uint64_t hash = 0;            ///< a hash of `words`
  std::vector<uint32_t> rank;   ///< rank[i]: flow vertex i's place among the flow vertices in canonical order
  std::vector<uint32_t> flow;   ///< flow[r]: the flow vertex of that place (rank's inverse)
  bool operator==(const FcgCanon& o) const { return hash == o.hash && words == o.words; }
};

/// The canonical form of `g` (see FcgCanon). Cost: bliss on n + |E| vertices (n flows), in practice
/// near-linear in the graph's size.
FcgCanon canonical_form(const Fcg& g);

/// The isomorphism between two FCGs with equal canonical forms: map[i] = the vertex of `b`'s graph
/// matched to flow vertex i of `a`'s. Precondition: a == b (std::invalid_argument otherwise).
std::vector<uint32_t> canonical_map(const FcgCanon& a, const FcgCanon& b);

/// An isomorphism from `a` to `b` that preserves vertex labels, shared data ports and the ACK
/// couplings with their direction (compared by canonical forms): map[i] = the vertex of `b` matched
/// to vertex i of `a`; or nothing if there is none.
std::optional<std::vector<uint32_t>> isomorphism(const Fcg& a, const Fcg& b);

}  // namespace wh
