// Flow contention graphs (FCG): the memo key of a partition's unsteady period
// (the Wormhole paper: memoization), their canonical hash and their exact isomorphism.
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
  /// Whether vertex labels are equal (what VF2 requires of matched vertices).
  bool same_label(uint32_t a, const Fcg& other, uint32_t b) const { return label[a] == other.label[b]; }
};

/// Builds the FCG of `flows`. `rate_quantum_bps` (> 0) is the rate quantisation step: rates that
/// round to the same multiple are equal labels. Throws std::invalid_argument on a zero quantum.
/// Cost: O(Σ ports · flows sharing them).
Fcg make_fcg(const std::vector<FcgFlow>& flows, uint64_t rate_quantum_bps);

/// A Weisfeiler–Lehman hash of the FCG (`rounds` refinement rounds over vertex labels, neighbour
/// labels and edge counts, ACK couplings by direction): equal for isomorphic graphs, whatever the vertex order; unequal
/// hashes prove non-isomorphism, equal ones do not prove isomorphism (use isomorphism()).
uint64_t wl_hash(const Fcg& g, int rounds = 3);

/// An isomorphism from `a` to `b` that preserves vertex labels, shared data ports and the ACK
/// couplings with their direction, found with Boost.Graph's VF2 (vf2_graph_iso, on the graph as
/// directed arcs u → v labelled (shared data ports, u's ACK ports on v's data)): map[i] = the
/// vertex of `b` matched to vertex i of `a`; or nothing if there is none.
std::optional<std::vector<uint32_t>> isomorphism(const Fcg& a, const Fcg& b);

}  // namespace wh
