// Path metrics (base RTT, BDP) of host pairs and their maxima over all pairs, from the class BFS of
// routing.cpp (docs/network-model.md §14). A pair's metrics are the per-host BFS's: those of the
// source's neighbour that first reaches it (an NVSwitch one if any) plus that neighbour's link.
#include <algorithm>
#include <array>
#include <numeric>
#include <unordered_map>

#include "wormhole/net/routing.h"

namespace wh {

namespace {

uint64_t pair_key(uint32_t src, uint32_t dst) { return (uint64_t(src) << 32) | dst; }

struct KeyHash {
  size_t operator()(const std::vector<uint64_t>& v) const {
    uint64_t h = 1469598103934665603ull ^ v.size();
    for (uint64_t x : v) h = (h ^ x) * 1099511628211ull, h ^= h >> 31;
    return h;
  }
};

}  // namespace

PathMetrics Routing::metrics(uint32_t src, uint32_t dst, const Cand& c) const {
  const auto& ports = *ports_;
  // The neighbour's last port to src (the reference keeps the last of parallel links).
  const uint32_t r = rev_[c.entry];
  const PortLink& last = ports[pt_[pt_off_[r + 1] - 1]];
  const uint64_t last_tx = uint64_t(payload_) * 1000000000ull * 8 / last.rate_bps;
  if (c.cls == UINT32_MAX)  // src is linked to dst itself
    return {true, 1, static_cast<uint64_t>(last.delay / kNs), last_tx, last.rate_bps};
  // dst's own link to the seed its path leaves through, then the class's offsets from that seed.
  const uint32_t seed = cls_seeds_[cls_seed_off_[c.cls] + mseed_[c.node]];
  const uint32_t f = find_entry(dst, seed);
  const PortLink& first = ports[pt_[pt_off_[f + 1] - 1]];
  PathMetrics m;
  m.reachable = true;
  m.hops = static_cast<uint32_t>(dist_[c.node]) + 1;
  m.delay_ns = static_cast<uint64_t>(first.delay / kNs) + delay_[c.node] + static_cast<uint64_t>(last.delay / kNs);
  m.tx_delay_ns = uint64_t(payload_) * 1000000000ull * 8 / first.rate_bps + tx_[c.node] + last_tx;
  m.bw_bps = std::min({first.rate_bps, bw_[c.node], last.rate_bps});
  return m;
}

void Routing::precompute_pairs(const std::vector<std::pair<uint32_t, uint32_t>>& pairs) {
  // Pairs whose path leaves through a switch wait for the BFS of dst's class there, one per class.
  std::vector<std::pair<uint32_t, uint32_t>> todo;  // (class, index in pairs)
  std::vector<Cand> cands;
  for (uint32_t i = 0; i < pairs.size(); ++i) {
    const auto [s, d] = pairs[i];
    if (pairs_.count(pair_key(s, d))) continue;
    candidates(s, d, cands);
    if (cands.empty()) pairs_[pair_key(s, d)] = PathMetrics{};  // unreachable (or s == d)
    else if (cands[0].cls == UINT32_MAX) pairs_[pair_key(s, d)] = metrics(s, d, cands[0]);
    else todo.emplace_back(cands[0].cls, i);
  }
  std::sort(todo.begin(), todo.end());
  for (size_t i = 0; i < todo.size(); ++i) {
    if (i == 0 || todo[i].first != todo[i - 1].first) class_bfs(todo[i].first, false);
    const auto [s, d] = pairs[todo[i].second];
    if (pairs_.count(pair_key(s, d))) continue;  // listed twice
    candidates(s, d, cands);
    pairs_[pair_key(s, d)] = metrics(s, d, cands[0]);
  }
}

const PathMetrics& Routing::pair(uint32_t src, uint32_t dst) {
  auto it = pairs_.find(pair_key(src, dst));
  if (it != pairs_.end()) return it->second;
  precompute_pairs({{src, dst}});
  return pairs_[pair_key(src, dst)];
}

void Routing::note_max(const PathMetrics& m) {
  max_rtt_ns_ = std::max(max_rtt_ns_, m.rtt_ns());
  max_bdp_ = std::max(max_bdp_, m.bdp_bytes());
}

uint32_t Routing::shared_components(uint32_t a, uint32_t b) const {
  uint32_t n = 0;
  for (uint32_t i = host_cls_off_[a], j = host_cls_off_[b]; i < host_cls_off_[a + 1] && j < host_cls_off_[b + 1];) {
    if (host_cls_[i] == host_cls_[j]) ++n, i += 2, j += 2;
    else if (host_cls_[i] < host_cls_[j]) i += 2;
    else j += 2;
  }
  return n;
}

template <class F>
void Routing::special_pairs(uint32_t r, const std::vector<uint32_t>& comp_hosts, F&& f) const {
  const auto& nodes = *nodes_;
  if (host_cls_off_[r + 1] - host_cls_off_[r] >= 4) {
    // A host sharing two or more components with r shares one that is not r's largest: look among the
    // hosts of r's other components. With one fabric those are the server's NVSwitch and its GPUs; a
    // host on two planes also has one plane's hosts to look at, O(N) per host. Found hosts are taken
    // once each (they may sit in several of these components) and in id order.
    uint32_t kmax = host_cls_[host_cls_off_[r]];
    for (uint32_t i = host_cls_off_[r]; i < host_cls_off_[r + 1]; i += 2)
      if (comp_hosts[host_cls_[i]] > comp_hosts[kmax]) kmax = host_cls_[i];
    std::vector<uint32_t> found;
    for (uint32_t i = host_cls_off_[r]; i < host_cls_off_[r + 1]; i += 2) {
      const uint32_t k = host_cls_[i];
      if (k == kmax) continue;
      for (uint32_t c = comp_cls_off_[k]; c < comp_cls_off_[k + 1]; ++c)
        for (uint32_t j = cls_host_off_[c]; j < cls_host_off_[c + 1]; ++j)
          if (cls_hosts_[j] != r && shared_components(r, cls_hosts_[j]) >= 2) found.push_back(cls_hosts_[j]);
    }
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
    for (uint32_t h : found) f(h);
  }
  for (uint32_t e = adj_off_[r]; e < adj_off_[r + 1]; ++e) {
    const uint32_t s = adj_nb_[e];
    if (!nodes[s].is_switch && s != r && shared_components(r, s) < 2) f(s);
  }
}

void Routing::compute_maxima() {
  const auto& ports = *ports_;
  const uint32_t n = static_cast<uint32_t>(nodes_->size());
  const uint32_t ncomp = num_components(), ncls = num_classes();
  auto hop = [&](uint32_t port) {
    const PortLink& p = ports[port];
    return std::array<uint64_t, 3>{static_cast<uint64_t>(p.delay / kNs),
                                   uint64_t(payload_) * 1000000000ull * 8 / p.rate_bps, p.rate_bps};
  };
  // Groups: hosts of one class of K whose own links to K (as destination: to the seeds; as source:
  // from its neighbours) are alike. Every pair of groups has one K-only metric.
  std::unordered_map<std::vector<uint64_t>, uint32_t, KeyHash> ids;
  std::vector<uint32_t> slot_group(host_cls_.size() / 2), g_rep, g_size, g_cls;
  std::vector<uint64_t> key;
  for (uint32_t h = 0; h < n; ++h)
    for (uint32_t i = host_cls_off_[h]; i < host_cls_off_[h + 1]; i += 2) {
      const uint32_t c = host_cls_[i + 1];
      key.assign(1, c);
      for (uint32_t j = cls_seed_off_[c]; j < cls_seed_off_[c + 1]; ++j) {
        const uint32_t e = find_entry(h, cls_seeds_[j]);
        for (uint64_t x : hop(pt_[pt_off_[e + 1] - 1])) key.push_back(x);
        for (uint64_t x : hop(pt_[pt_off_[rev_[e] + 1] - 1])) key.push_back(x);
      }
      auto [it, fresh] = ids.emplace(key, static_cast<uint32_t>(g_rep.size()));
      if (fresh) g_rep.push_back(h), g_size.push_back(0), g_cls.push_back(c);
      ++g_size[it->second];
      slot_group[i / 2] = it->second;
    }
  ids.clear();
  const uint32_t ng = static_cast<uint32_t>(g_rep.size());
  // Groups by class (ids are given in host order, so sort them) and by component.
  std::vector<uint32_t> by_cls(ng), cls_g_off(ncls + 1, 0), comp_g_off(ncomp + 1, 0);
  for (uint32_t g = 0; g < ng; ++g) by_cls[g] = g, ++cls_g_off[g_cls[g] + 1], ++comp_g_off[cls_comp_[g_cls[g]] + 1];
  std::stable_sort(by_cls.begin(), by_cls.end(), [&](uint32_t a, uint32_t b) { return g_cls[a] < g_cls[b]; });
  std::partial_sum(cls_g_off.begin(), cls_g_off.end(), cls_g_off.begin());
  std::partial_sum(comp_g_off.begin(), comp_g_off.end(), comp_g_off.begin());  // by_cls is also by comp
  std::vector<uint32_t> comp_hosts(ncomp, 0);
  for (uint32_t c = 0; c < ncls; ++c) comp_hosts[cls_comp_[c]] += cls_host_off_[c + 1] - cls_host_off_[c];
  auto group_in = [&](uint32_t h, uint32_t k) {
    for (uint32_t i = host_cls_off_[h]; i < host_cls_off_[h + 1]; i += 2)
      if (host_cls_[i] == k) return slot_group[i / 2];
    return UINT32_MAX;
  };
  // Special pairs (several shared components, or a direct link) are counted out of their groups' pairs in
  // each shared component: enumerated from the classes alone, before the table exists.
  std::unordered_map<uint64_t, uint64_t> special;  // (dst group, src group) -> pairs
  for (uint32_t r = 0; r < n; ++r) {
    if ((*nodes_)[r].is_switch) continue;
    special_pairs(r, comp_hosts, [&](uint32_t s) {
      for (uint32_t i = host_cls_off_[r]; i < host_cls_off_[r + 1]; i += 2) {
        const uint32_t gs = group_in(s, host_cls_[i]);
        if (gs != UINT32_MAX) ++special[pair_key(slot_group[i / 2], gs)];
      }
    });
  }
  // One BFS per class fills its table entries (class_bfs with lists) and gives the K-only metric of
  // every (destination group of the class, source group of K) that has a pair other than special ones.
  std::vector<Cand> cands;
  for (uint32_t k = 0; k < ncomp; ++k)
    for (uint32_t c = comp_cls_off_[k]; c < comp_cls_off_[k + 1]; ++c) {
      class_bfs(c, true);
      for (uint32_t a = cls_g_off[c]; a < cls_g_off[c + 1]; ++a) {
        const uint32_t gr = by_cls[a];
        for (uint32_t b = comp_g_off[k]; b < comp_g_off[k + 1]; ++b) {
          const uint32_t gs = by_cls[b];
          const uint64_t pairs = uint64_t(g_size[gr]) * g_size[gs] - (gr == gs ? g_size[gr] : 0);
          auto it = special.find(pair_key(gr, gs));
          if (pairs == 0 || (it != special.end() && it->second >= pairs)) continue;
          candidates(g_rep[gs], g_rep[gr], cands, k, c);
          note_max(metrics(g_rep[gs], g_rep[gr], cands[0]));
        }
      }
    }
  // The special pairs, now that the whole table exists: a direct link needs no BFS; the others need the
  // BFS of the destination's class where the path leaves the source (an NVSwitch's, for GPUs of one
  // server), run again only for classes that have such pairs.
  for (uint32_t c = 0; c < ncls; ++c) {
    bool live = false;
    for (uint32_t i = cls_host_off_[c]; i < cls_host_off_[c + 1]; ++i) {
      const uint32_t r = cls_hosts_[i];
      special_pairs(r, comp_hosts, [&](uint32_t s) {
        candidates(s, r, cands);
        if (cands.empty()) return;
        if (cands[0].cls == UINT32_MAX) {
          if (host_cls_[host_cls_off_[r] + 1] == c) note_max(metrics(s, r, cands[0]));  // once, at r's first class
        } else if (cands[0].cls == c) {
          if (!live) class_bfs(c, false), live = true;
          note_max(metrics(s, r, cands[0]));
        }
      });
    }
  }
  // Hosts with no switch at all may still be linked directly.
  for (uint32_t r = 0; r < n; ++r) {
    if ((*nodes_)[r].is_switch || host_cls_off_[r] != host_cls_off_[r + 1]) continue;
    special_pairs(r, comp_hosts, [&](uint32_t s) {
      candidates(s, r, cands);
      if (!cands.empty()) note_max(metrics(s, r, cands[0]));
    });
  }
}

}  // namespace wh
