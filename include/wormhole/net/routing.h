// Routes: BFS hop-count shortest paths over switches, ECMP next-hop sets, per-pair RTT and BDP, kept
// per attachment class so that set-up is O(N·ports) in time and memory (docs/architecture.md, "Routing").
#pragma once
#include <cstdint>
#include <deque>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "wormhole/net/port.h"

namespace wh {

/// Base RTT, bandwidth and BDP of a host pair along the BFS path (docs/network-model.md §14).
struct PathMetrics {
  bool reachable = false;
  uint32_t hops = 0;
  uint64_t delay_ns = 0;     ///< one-way propagation, ns
  uint64_t tx_delay_ns = 0;  ///< Σ per hop of payload·8/rate, integer ns per hop
  uint64_t bw_bps = 0;       ///< bottleneck rate, bit/s
  uint64_t rtt_ns() const { return 2 * delay_ns + tx_delay_ns; }
  uint64_t bdp_bytes() const {
    return static_cast<uint64_t>(static_cast<unsigned __int128>(rtt_ns()) * bw_bps / 1000000000u / 8u);
  }
};

/// Next-hop tables with the results of the reference's per-host BFS (docs/network-model.md §12): from
/// every host H a BFS by hop count that expands only switches; every neighbour on a shortest path
/// towards H is a next hop, listed in BFS dequeue order with neighbours visited hosts-ascending then
/// switches-descending (the reference binary's pointer order). Parallel links are all kept as separate
/// next hops (the reference keeps only the last one: a deliberate difference).
///
/// Storage. Switches split into components connected by switch-switch links (the fabric; each
/// server's NVSwitch). Since hosts never forward, a BFS from H only enters H's own components, and
/// within component K it depends on H only through H's attachment to K (its neighbour multiset of K's
/// switches): hosts with one attachment form a class. One BFS per (component, class) gives every
/// switch of K its distance, dequeue order and next hops towards the class; the last hop (a switch
/// next to H) is resolved from the adjacency, and a multi-NIC host's next hops from its neighbours'
/// entries. Memory: Σ_K switches(K)·classes(K) entries of 12 B plus O(ports) adjacency.
class Routing {
 public:
  /// (Re)builds all tables over the ports that are up; maxRtt/maxBdp are set by the first build only.
  /// `payload` is PACKET_PAYLOAD_SIZE (bytes, for the per-hop transmission delay of the base RTT).
  /// `pairs` lists (src, dst) host pairs whose metrics are precomputed; others on first use.
  void build(const std::vector<Node>& nodes, const std::vector<PortLink>& ports, uint32_t payload,
             const std::vector<std::pair<uint32_t, uint32_t>>& pairs);

  /// Ports (global indices) of node `n` on shortest paths to host `dst`, in the reference's order;
  /// empty if unreachable, if n == dst, or if `n` is a single-NIC host (use host_nics()). For a
  /// multi-port host the list is computed on first use and kept (each distinct list once, and an
  /// index per (host, dst) pair asked about).
  std::span<const uint32_t> next_hops(uint32_t n, uint32_t dst) const;
  /// The NICs (port indices) host `h` may use towards host `dst` (a host; empty if unreachable), in the
  /// reference's order. A multi-port host's list is next_hops()'s, kept after first use; the span
  /// stays valid as long as the routing (a rebuild after LINK_DOWN invalidates it).
  std::span<const uint32_t> host_nics(uint32_t h, uint32_t dst) const;

  /// Computes and caches the metrics of many (src, dst) host pairs with one BFS per distinct
  /// destination class.
  void precompute_pairs(const std::vector<std::pair<uint32_t, uint32_t>>& pairs);
  /// Metrics of the path from host `src` to host `dst` (cached; default = unreachable).
  const PathMetrics& pair(uint32_t src, uint32_t dst);
  bool built() const { return built_; }
  /// Maxima over all reachable ordered host pairs of the base RTT (ns) and BDP (bytes), first build.
  uint64_t max_rtt_ns() const { return max_rtt_ns_; }
  uint64_t max_bdp_bytes() const { return max_bdp_; }

  /// Number of (component, attachment class) pairs, i.e. BFS runs of a build.
  uint32_t num_classes() const { return static_cast<uint32_t>(cls_comp_.size()); }
  /// Number of switch-only components.
  uint32_t num_components() const { return static_cast<uint32_t>(comp_off_.size()) - 1; }
  /// Bytes held by the tables and adjacency (capacity, without the pair cache).
  uint64_t table_bytes() const;

  /// Table entries Σ_K switches(K)·classes(K) of a topology given as node flags and links (a, b)
  /// (one per link, parallel links repeated), counted the way build() groups them, in O(nodes + links).
  static uint64_t count_entries(uint32_t num_nodes, const std::vector<bool>& is_switch,
                                const std::vector<std::pair<uint32_t, uint32_t>>& links);
  /// Bytes of one table entry (see table_bytes()).
  static constexpr uint64_t kEntryBytes = 12;

 private:
  struct Entry {
    uint32_t list;   // next-hop list id; kDirect = the switch is next to the destination
    uint32_t order;  // dequeue position in the class's BFS
    uint16_t dist;   // hops from the destination host (1 = next to it)
    uint16_t seed;   // index, in the class's seed list, of the first-discovery ancestor at distance 1
  };
  static_assert(sizeof(Entry) == kEntryBytes);
  static constexpr uint32_t kDirect = UINT32_MAX;
  struct Cand {
    uint32_t node, entry;  // the neighbour, and the adjacency entry (h -> node)
    uint32_t cls;          // destination's class in node's component (UINT32_MAX: node is dst)
    uint32_t seed_node, order;
  };

  // routing.cpp: adjacency, components, classes and the table.
  void build_adjacency();
  void build_classes();
  uint32_t class_of(uint32_t dst, uint32_t comp) const;
  const Entry& entry(uint32_t cls, uint32_t sw) const { return table_[cls_base_[cls] + local_[sw]]; }
  uint32_t find_entry(uint32_t v, uint32_t nb) const;
  /// BFS of class `cls` over its component, leaving distances, seeds and metric offsets (from the seed)
  /// in the scratch arrays; lists = also gather the next-hop lists and write the class's table entries.
  void class_bfs(uint32_t cls, bool lists);
  uint32_t intern(const std::vector<uint32_t>& l);
  /// Neighbours of host `h` on shortest paths to `dst` in the reference's order (NVSwitch rule
  /// applied); only component `only` if not UINT32_MAX (then `dst`'s class there is `only_cls`).
  void candidates(uint32_t h, uint32_t dst, std::vector<Cand>& out, uint32_t only = UINT32_MAX,
                  uint32_t only_cls = UINT32_MAX) const;
  void host_list(uint32_t h, uint32_t dst, std::vector<uint32_t>& out) const;

  // routing_metrics.cpp: path metrics and maxima.
  /// Metrics of src from dst given its chosen neighbour; the BFS of c.cls must be the live one.
  PathMetrics metrics(uint32_t src, uint32_t dst, const Cand& c) const;
  /// First build only: fills the table (one class_bfs per class) and takes maxRtt/maxBdp in the same
  /// pass, by (destination group, source group) per component, then the special pairs one by one.
  void compute_maxima();
  /// Calls f(S) for every host S whose path from `r` is not that of its classes alone: S shares two or
  /// more components with r, or is linked to r directly.
  template <class F>
  void special_pairs(uint32_t r, const std::vector<uint32_t>& comp_hosts, F&& f) const;
  uint32_t shared_components(uint32_t a, uint32_t b) const;
  void note_max(const PathMetrics& m);

  const std::vector<Node>* nodes_ = nullptr;
  const std::vector<PortLink>* ports_ = nullptr;  // how every port is wired
  uint32_t payload_ = 1000;
  // Adjacency over up links, CSR: node v's entries adj_off_[v]..adj_off_[v+1] (neighbours hosts
  // ascending then switches descending); entry e's ports pt_off_[e]..pt_off_[e+1] (v's ports to the
  // neighbour, ascending) with their peers; rev_[e] = the neighbour's entry back to v.
  std::vector<uint32_t> adj_off_, adj_nb_, pt_off_, pt_, peer_, rev_;
  // Components: switches of K are comp_sw_[comp_off_[K]..comp_off_[K+1]); local_[sw] = index there.
  std::vector<uint32_t> comp_, local_, comp_off_, comp_sw_;
  // Classes: component, seeds (attached switches, descending), table base; host -> (comp, class).
  std::vector<uint32_t> comp_cls_off_;  // classes of K: comp_cls_off_[K]..comp_cls_off_[K+1]
  std::vector<uint32_t> cls_comp_, cls_seed_off_, cls_seeds_, cls_host_off_, cls_hosts_;
  std::vector<uint64_t> cls_base_;
  std::vector<uint32_t> host_cls_off_, host_cls_;  // per node; pairs (comp, class) sorted by comp
  std::vector<Entry> table_;
  std::vector<uint32_t> list_off_, list_data_;               // interned next-hop lists, CSR
  std::unordered_map<uint64_t, std::vector<uint32_t>> list_ids_;  // content hash -> ids
  // Multi-port hosts' lists, made on first use: each distinct list once (a deque: spans stay valid),
  // then an index per (host, dst) pair a flow used (about 40 B a pair).
  mutable std::deque<std::vector<uint32_t>> host_lists_;
  mutable std::unordered_map<uint64_t, std::vector<uint32_t>> host_list_by_content_;  // content hash -> indices
  mutable std::unordered_map<uint64_t, uint32_t> host_list_ids_;  // (host, dst) -> host_lists_ index
  std::unordered_map<uint64_t, PathMetrics> pairs_;
  uint64_t max_rtt_ns_ = 0, max_bdp_ = 0;
  bool built_ = false;
  // BFS scratch, per node (reset through queue_).
  std::vector<int32_t> dist_;
  std::vector<uint64_t> delay_, tx_, bw_;
  std::vector<uint16_t> oseed_, mseed_;
  std::vector<uint8_t> nvs_hop_;
  std::vector<uint32_t> queue_;
  std::vector<std::vector<uint32_t>> scratch_;  // per local switch index of the component
};

}  // namespace wh
