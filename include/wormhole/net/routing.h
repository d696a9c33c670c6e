// Routes: BFS hop-count shortest paths over switches, ECMP next-hop sets, per-pair RTT and BDP.
#pragma once
#include <cstdint>
#include <map>
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

/// Next-hop tables as the reference builds them (docs/network-model.md §12): from every host H a BFS by
/// hop count that expands only switches; every neighbour on a shortest path towards H is a next
/// hop, listed in BFS dequeue order with neighbours visited hosts-ascending then switches-descending
/// (the reference binary's pointer order). Parallel links between two nodes are all kept as
/// separate next hops (the reference keeps only the last one: a deliberate difference).
/// Tables are stored for switches and multi-NIC hosts only; identical lists are shared.
class Routing {
 public:
  /// (Re)builds all tables over the ports that are up; maxRtt/maxBdp are set by the first build only. `payload` is PACKET_PAYLOAD_SIZE (bytes,
  /// for the per-hop transmission delay of the base RTT). `pairs` lists (src, dst) host pairs whose
  /// metrics are precomputed; others are computed on first use.
  void build(const std::vector<Node>& nodes, const std::vector<Port>& ports, uint32_t payload,
             const std::vector<std::pair<uint32_t, uint32_t>>& pairs);

  /// Ports (global indices) of node `n` on shortest paths to host `dst`; empty if unreachable
  /// or if `n` is a single-NIC host (use host_nics()).
  std::span<const uint32_t> next_hops(uint32_t n, uint32_t dst) const {
    const int32_t row = row_of_[n];
    if (row < 0) return {};
    const uint32_t l = table_[static_cast<size_t>(row) * num_hosts_ + host_idx_[dst]];
    return {lists_[l].data(), lists_[l].size()};
  }
  /// The NICs host `h` may use towards host `dst` (empty if unreachable).
  std::vector<uint32_t> host_nics(uint32_t h, uint32_t dst) const;

  /// Computes and caches the metrics of many (src, dst) pairs with one BFS per distinct dst.
  void precompute_pairs(const std::vector<std::pair<uint32_t, uint32_t>>& pairs);
  /// Metrics of the path from host `src` to host `dst` (cached).
  const PathMetrics& pair(uint32_t src, uint32_t dst);
  bool built() const { return built_; }
  uint64_t max_rtt_ns() const { return max_rtt_ns_; }
  uint64_t max_bdp_bytes() const { return max_bdp_; }

 private:
  struct Adj {
    uint32_t nb;
    std::vector<uint32_t> ports;  // this node's ports to nb, file order
  };
  /// BFS from host `root`: next-hop tables (build_tables), wanted pair metrics, and maxRtt/maxBdp (maxima).
  void bfs(uint32_t root, bool build_tables, bool maxima);
  uint32_t intern(const std::vector<uint32_t>& l);

  const std::vector<Node>* nodes_ = nullptr;
  const std::vector<Port>* ports_ = nullptr;
  uint32_t payload_ = 1000;
  std::vector<std::vector<Adj>> adj_;
  std::vector<int32_t> row_of_;     // node -> table row, -1 = no table
  std::vector<uint32_t> host_idx_;  // node -> dense host index
  uint32_t num_hosts_ = 0;
  std::vector<uint32_t> table_;     // rows x hosts -> list id
  std::vector<std::vector<uint32_t>> lists_;
  std::map<std::vector<uint32_t>, uint32_t> list_ids_;
  std::unordered_map<uint64_t, PathMetrics> pairs_;
  std::unordered_map<uint32_t, std::vector<uint32_t>> wanted_;  // dst -> srcs to record
  uint64_t max_rtt_ns_ = 0, max_bdp_ = 0;
  bool built_ = false;
  // BFS scratch
  std::vector<int32_t> dist_;
  std::vector<uint64_t> delay_, tx_, bw_;
  std::vector<std::vector<uint32_t>> scratch_;
  std::vector<uint8_t> nvs_hop_;  // BFS: node has a next hop through an NVSwitch
  std::vector<uint32_t> queue_, visited_;
};

}  // namespace wh
