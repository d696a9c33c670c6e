// BFS routing as the reference's CalculateRoute/SetRoutingEntries (docs/network-model.md §12, §14).
#include "wormhole/net/routing.h"

#include <algorithm>

namespace wh {

static uint64_t pair_key(uint32_t src, uint32_t dst) { return (uint64_t(src) << 32) | dst; }

void Routing::build(const std::vector<Node>& nodes, const std::vector<Port>& ports, uint32_t payload,
                    const std::vector<std::pair<uint32_t, uint32_t>>& pairs) {
  nodes_ = &nodes;
  ports_ = &ports;
  payload_ = payload;
  const uint32_t n = static_cast<uint32_t>(nodes.size());
  adj_.assign(n, {});
  for (uint32_t v = 0; v < n; ++v) {
    const Node& nd = nodes[v];
    for (uint32_t p = nd.first_port; p < nd.first_port + nd.num_ports; ++p) {
      const Port& pt = ports[p];
      if (!pt.up || !ports[pt.peer].up) continue;
      const uint32_t nb = ports[pt.peer].node;
      auto it = std::find_if(adj_[v].begin(), adj_[v].end(), [&](const Adj& a) { return a.nb == nb; });
      if (it == adj_[v].end()) adj_[v].push_back({nb, {p}});
      else it->ports.push_back(p);
    }
    // The reference visits neighbours in object-address order: hosts ascending, then switches
    // descending (docs/network-model.md §12).
    std::sort(adj_[v].begin(), adj_[v].end(), [&](const Adj& a, const Adj& b) {
      const bool sa = nodes[a.nb].is_switch, sb = nodes[b.nb].is_switch;
      if (sa != sb) return !sa;
      return sa ? a.nb > b.nb : a.nb < b.nb;
    });
  }
  host_idx_.assign(n, UINT32_MAX);
  row_of_.assign(n, -1);
  num_hosts_ = 0;
  int32_t rows = 0;
  for (uint32_t v = 0; v < n; ++v) {
    if (!nodes[v].is_switch) host_idx_[v] = num_hosts_++;
    if (nodes[v].is_switch || nodes[v].num_ports > 1) row_of_[v] = rows++;
  }
  lists_.assign(1, {});  // list 0 = empty (unreachable)
  list_ids_.clear();
  list_ids_[{}] = 0;
  table_.assign(static_cast<size_t>(rows) * num_hosts_, 0);
  pairs_.clear();
  wanted_.clear();
  for (auto [s, d] : pairs) wanted_[d].push_back(s);
  for (auto& [d, srcs] : wanted_) std::sort(srcs.begin(), srcs.end());
  // maxRtt/maxBdp are fixed at the first build, as the reference computes them once at set-up
  // (a LINK_DOWN rebuild changes routes and pair metrics, not the QPs' global T and W).
  const bool first = !built_;
  dist_.assign(n, -1);
  delay_.assign(n, 0);
  tx_.assign(n, 0);
  bw_.assign(n, 0);
  scratch_.assign(n, {});
  nvs_hop_.assign(n, 0);
  for (uint32_t h = 0; h < n; ++h)
    if (!nodes[h].is_switch) bfs(h, true, first);
  wanted_.clear();
  built_ = true;
}

uint32_t Routing::intern(const std::vector<uint32_t>& l) {
  auto [it, fresh] = list_ids_.emplace(l, static_cast<uint32_t>(lists_.size()));
  if (fresh) lists_.push_back(l);
  return it->second;
}

void Routing::bfs(uint32_t root, bool build_tables, bool maxima) {
  const auto& nodes = *nodes_;
  const auto& ports = *ports_;
  queue_.clear();
  visited_.clear();
  queue_.push_back(root);
  visited_.push_back(root);
  dist_[root] = 0;
  delay_[root] = tx_[root] = 0;
  bw_[root] = UINT64_MAX;
  for (size_t i = 0; i < queue_.size(); ++i) {
    const uint32_t now = queue_[i];
    const int32_t d = dist_[now];
    for (const Adj& a : adj_[now]) {
      const uint32_t next = a.nb;
      if (dist_[next] < 0) {
        // With parallel links the reference's neighbour table keeps the last line's link.
        const Port& link = ports[a.ports.back()];
        dist_[next] = d + 1;
        delay_[next] = delay_[now] + static_cast<uint64_t>(link.delay / kNs);
        tx_[next] = tx_[now] + uint64_t(payload_) * 1000000000ull * 8 / link.rate_bps;
        bw_[next] = std::min(bw_[now], link.rate_bps);
        visited_.push_back(next);
        if (nodes[next].is_switch) queue_.push_back(next);  // hosts never forward
      }
      if (dist_[next] == d + 1 && nodes[now].is_nvswitch && !nvs_hop_[next]) {
        // SimAI's rule (docs/workloads.md §2): an equal-hop next hop through an NVSwitch replaces
        // all others, so GPUs of one server always talk over NVLink. Only hosts sit behind an
        // NVSwitch and hosts never forward, so re-timing `next` changes no other node's metrics.
        nvs_hop_[next] = 1;
        scratch_[next].clear();
        const Port& link = ports[a.ports.back()];
        delay_[next] = delay_[now] + static_cast<uint64_t>(link.delay / kNs);
        tx_[next] = tx_[now] + uint64_t(payload_) * 1000000000ull * 8 / link.rate_bps;
        bw_[next] = std::min(bw_[now], link.rate_bps);
      } else if (nvs_hop_[next] && !nodes[now].is_nvswitch) {
        continue;
      }
      if (build_tables && dist_[next] == d + 1)
        for (uint32_t p : a.ports) scratch_[next].push_back(ports[p].peer);
    }
  }
  const uint32_t hidx = host_idx_[root];
  auto wanted = wanted_.find(root);
  for (uint32_t v : visited_) {
    if (v == root) continue;
    if (!nodes[v].is_switch) {
      const PathMetrics m{true, static_cast<uint32_t>(dist_[v]), delay_[v], tx_[v], bw_[v]};
      if (maxima) {
        max_rtt_ns_ = std::max(max_rtt_ns_, m.rtt_ns());
        max_bdp_ = std::max(max_bdp_, m.bdp_bytes());
      }
      if (wanted != wanted_.end() &&
          std::binary_search(wanted->second.begin(), wanted->second.end(), v))
        pairs_[pair_key(v, root)] = m;
    }
    if (build_tables && row_of_[v] >= 0)
      table_[static_cast<size_t>(row_of_[v]) * num_hosts_ + hidx] = intern(scratch_[v]);
  }
  for (uint32_t v : visited_) {
    dist_[v] = -1;
    nvs_hop_[v] = 0;
    scratch_[v].clear();
  }
}

std::vector<uint32_t> Routing::host_nics(uint32_t h, uint32_t dst) const {
  const Node& nd = (*nodes_)[h];
  if (row_of_[h] >= 0) {
    auto s = next_hops(h, dst);
    return {s.begin(), s.end()};
  }
  // Single-NIC host: its NIC if the switch behind it reaches dst.
  const Port& nic = (*ports_)[nd.first_port];
  if (!nic.up) return {};
  const uint32_t sw = (*ports_)[nic.peer].node;
  if (sw == dst || !next_hops(sw, dst).empty()) return {nd.first_port};
  return {};
}

void Routing::precompute_pairs(const std::vector<std::pair<uint32_t, uint32_t>>& pairs) {
  wanted_.clear();
  for (auto [s, d] : pairs)
    if (!pairs_.count(pair_key(s, d))) wanted_[d].push_back(s);
  std::vector<uint32_t> dsts;
  for (auto& [d, srcs] : wanted_) {
    std::sort(srcs.begin(), srcs.end());
    dsts.push_back(d);
  }
  std::sort(dsts.begin(), dsts.end());  // deterministic BFS order (max values are order-free anyway)
  for (uint32_t d : dsts) bfs(d, false, false);
  wanted_.clear();
}

const PathMetrics& Routing::pair(uint32_t src, uint32_t dst) {
  auto it = pairs_.find(pair_key(src, dst));
  if (it != pairs_.end()) return it->second;
  wanted_[dst] = {src};
  bfs(dst, false, false);
  wanted_.clear();
  return pairs_[pair_key(src, dst)];  // default (unreachable) if the BFS did not reach src
}

}  // namespace wh
