// Routing tables by attachment class (wormhole/net/routing.h): the results of the reference's per-host
// BFS (CalculateRoute/SetRoutingEntries, docs/network-model.md §12) from one BFS per class.
#include "wormhole/net/routing.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace wh {

namespace {

uint64_t hash_words(const uint32_t* p, size_t n) {
  uint64_t h = 1469598103934665603ull ^ n;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull, h ^= h >> 29;
  return h;
}

struct WordsHash {
  size_t operator()(const std::vector<uint32_t>& v) const { return hash_words(v.data(), v.size()); }
};

// The reference visits neighbours in object-address order: hosts ascending, then switches descending.
uint64_t visit_rank(bool is_switch, uint32_t nb) {
  return is_switch ? (uint64_t(1) << 32) | (UINT32_MAX - nb) : nb;
}

}  // namespace

void Routing::build(const std::vector<Node>& nodes, const std::vector<PortLink>& ports, uint32_t payload,
                    const std::vector<std::pair<uint32_t, uint32_t>>& pairs) {
  nodes_ = &nodes;
  ports_ = &ports;
  payload_ = payload;
  const uint32_t n = static_cast<uint32_t>(nodes.size());
  build_adjacency();
  build_classes();
  dist_.assign(n, -1);
  delay_.assign(n, 0);
  tx_.assign(n, 0);
  bw_.assign(n, 0);
  oseed_.assign(n, 0);
  mseed_.assign(n, 0);
  nvs_hop_.assign(n, 0);
  queue_.clear();
  uint32_t widest = 0;
  for (uint32_t k = 0; k + 1 < comp_off_.size(); ++k) widest = std::max(widest, comp_off_[k + 1] - comp_off_[k]);
  scratch_.assign(widest, {});
  list_off_.assign(1, 0);
  list_data_.clear();
  list_ids_.clear();
  host_lists_.clear();
  host_list_ids_.clear();
  host_list_by_content_.clear();
  uint64_t entries = 0;
  for (uint32_t c = 0; c < cls_comp_.size(); ++c) {
    const uint32_t k = cls_comp_[c];
    cls_base_[c] = entries;
    entries += comp_off_[k + 1] - comp_off_[k];
  }
  table_.assign(entries, Entry{0, 0, 0, 0});
  // maxRtt/maxBdp are fixed at the first build, as the reference computes them once at set-up
  // (a LINK_DOWN rebuild changes routes and pair metrics, not the QPs' global T and W). The first build
  // takes them in the same BFS per class that fills the table.
  if (!built_) compute_maxima();
  else
    for (uint32_t c = 0; c < cls_comp_.size(); ++c) class_bfs(c, true);
  pairs_.clear();
  built_ = true;
  precompute_pairs(pairs);
}

void Routing::build_adjacency() {
  const auto& nodes = *nodes_;
  const auto& ports = *ports_;
  const uint32_t n = static_cast<uint32_t>(nodes.size());
  adj_off_.assign(n + 1, 0);
  adj_nb_.clear();
  pt_off_.assign(1, 0);
  pt_.clear();
  peer_.clear();
  std::vector<std::pair<uint64_t, uint32_t>> tmp;  // (visit rank of the neighbour, port)
  for (uint32_t v = 0; v < n; ++v) {
    tmp.clear();
    const Node& nd = nodes[v];
    for (uint32_t p = nd.first_port; p < nd.first_port + nd.num_ports; ++p) {
      const PortLink& pt = ports[p];
      if (!pt.up || !ports[pt.peer].up) continue;
      const uint32_t nb = ports[pt.peer].node;
      tmp.emplace_back(visit_rank(nodes[nb].is_switch, nb), p);
    }
    std::sort(tmp.begin(), tmp.end());
    for (size_t i = 0; i < tmp.size(); ++i) {
      if (i == 0 || tmp[i].first != tmp[i - 1].first) {
        if (i) pt_off_.push_back(static_cast<uint32_t>(pt_.size()));
        adj_nb_.push_back(ports[ports[tmp[i].second].peer].node);
      }
      pt_.push_back(tmp[i].second);
      peer_.push_back(ports[tmp[i].second].peer);
    }
    if (!tmp.empty()) pt_off_.push_back(static_cast<uint32_t>(pt_.size()));
    adj_off_[v + 1] = static_cast<uint32_t>(adj_nb_.size());
  }
  // rev_: the entry of a port's peer, found through a port -> entry map that is freed at once.
  std::vector<uint32_t> port_entry(ports.size(), UINT32_MAX);
  for (uint32_t e = 0; e < adj_nb_.size(); ++e)
    for (uint32_t i = pt_off_[e]; i < pt_off_[e + 1]; ++i) port_entry[pt_[i]] = e;
  rev_.resize(adj_nb_.size());
  for (uint32_t e = 0; e < adj_nb_.size(); ++e) rev_[e] = port_entry[peer_[pt_off_[e]]];
  for (auto* v : {&adj_nb_, &pt_off_, &pt_, &peer_, &rev_}) v->shrink_to_fit();
}

void Routing::build_classes() {
  const auto& nodes = *nodes_;
  const uint32_t n = static_cast<uint32_t>(nodes.size());
  // Components of the switch-only graph, numbered in order of their smallest switch.
  comp_.assign(n, UINT32_MAX);
  local_.assign(n, UINT32_MAX);
  uint32_t ncomp = 0;
  std::vector<uint32_t> stack;
  for (uint32_t s = 0; s < n; ++s) {
    if (!nodes[s].is_switch || comp_[s] != UINT32_MAX) continue;
    comp_[s] = ncomp;
    stack.assign(1, s);
    while (!stack.empty()) {
      const uint32_t v = stack.back();
      stack.pop_back();
      for (uint32_t e = adj_off_[v]; e < adj_off_[v + 1]; ++e) {
        const uint32_t w = adj_nb_[e];
        if (nodes[w].is_switch && comp_[w] == UINT32_MAX) comp_[w] = ncomp, stack.push_back(w);
      }
    }
    ++ncomp;
  }
  comp_off_.assign(ncomp + 1, 0);
  for (uint32_t s = 0; s < n; ++s)
    if (comp_[s] != UINT32_MAX) ++comp_off_[comp_[s] + 1];
  std::partial_sum(comp_off_.begin(), comp_off_.end(), comp_off_.begin());
  comp_sw_.assign(comp_off_.back(), 0);
  {
    std::vector<uint32_t> fill(comp_off_.begin(), comp_off_.end() - 1);
    for (uint32_t s = 0; s < n; ++s)
      if (comp_[s] != UINT32_MAX) local_[s] = fill[comp_[s]] - comp_off_[comp_[s]], comp_sw_[fill[comp_[s]]++] = s;
  }
  // Attachment classes: a host's (switch, port count) neighbours within one component, in visit order
  // (switches descending), keyed with the component.
  std::unordered_map<std::vector<uint32_t>, uint32_t, WordsHash> ids;
  std::vector<std::vector<uint32_t>> keys;
  std::vector<std::pair<uint32_t, uint32_t>> slots;  // (host, provisional class)
  std::vector<uint32_t> key;
  for (uint32_t h = 0; h < n; ++h) {
    if (nodes[h].is_switch) continue;
    // Switch entries come after host entries and are grouped by component only after sorting.
    std::vector<uint32_t> sw;
    for (uint32_t e = adj_off_[h]; e < adj_off_[h + 1]; ++e)
      if (nodes[adj_nb_[e]].is_switch) sw.push_back(e);
    std::stable_sort(sw.begin(), sw.end(), [&](uint32_t a, uint32_t b) { return comp_[adj_nb_[a]] < comp_[adj_nb_[b]]; });
    for (size_t i = 0; i < sw.size();) {
      const uint32_t k = comp_[adj_nb_[sw[i]]];
      key.assign(1, k);
      for (; i < sw.size() && comp_[adj_nb_[sw[i]]] == k; ++i)
        key.push_back(adj_nb_[sw[i]]), key.push_back(pt_off_[sw[i] + 1] - pt_off_[sw[i]]);
      auto [it, fresh] = ids.emplace(key, static_cast<uint32_t>(keys.size()));
      if (fresh) keys.push_back(key);
      slots.emplace_back(h, it->second);
    }
  }
  // Renumber classes by (component, first appearance) so that a component's classes are contiguous.
  std::vector<uint32_t> order(keys.size()), renum(keys.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return keys[a][0] < keys[b][0]; });
  for (uint32_t i = 0; i < order.size(); ++i) renum[order[i]] = i;
  const uint32_t ncls = static_cast<uint32_t>(keys.size());
  cls_comp_.resize(ncls);
  cls_base_.assign(ncls, 0);
  cls_seed_off_.assign(ncls + 1, 0);
  cls_seeds_.clear();
  comp_cls_off_.assign(ncomp + 1, 0);
  for (uint32_t i = 0; i < ncls; ++i) {
    const std::vector<uint32_t>& k = keys[order[i]];
    cls_comp_[i] = k[0];
    ++comp_cls_off_[k[0] + 1];
    for (size_t j = 1; j < k.size(); j += 2) cls_seeds_.push_back(k[j]);
    cls_seed_off_[i + 1] = static_cast<uint32_t>(cls_seeds_.size());
    if (k.size() / 2 > UINT16_MAX) throw std::runtime_error("routing: a host attached to more than 65535 switches");
  }
  std::partial_sum(comp_cls_off_.begin(), comp_cls_off_.end(), comp_cls_off_.begin());
  // Host -> (component, class) pairs, sorted by component; class -> hosts.
  host_cls_off_.assign(n + 1, 0);
  host_cls_.clear();
  cls_host_off_.assign(ncls + 1, 0);
  for (auto [h, c] : slots) ++host_cls_off_[h + 1], ++cls_host_off_[renum[c] + 1];
  std::partial_sum(host_cls_off_.begin(), host_cls_off_.end(), host_cls_off_.begin());
  std::partial_sum(cls_host_off_.begin(), cls_host_off_.end(), cls_host_off_.begin());
  host_cls_.reserve(2 * slots.size());
  cls_hosts_.assign(slots.size(), 0);
  std::vector<uint32_t> fill(cls_host_off_.begin(), cls_host_off_.end() - 1);
  for (auto [h, c] : slots) {  // slots are host-ascending, and per host component-ascending
    host_cls_.push_back(cls_comp_[renum[c]]);
    host_cls_.push_back(renum[c]);
    cls_hosts_[fill[renum[c]]++] = h;
  }
  for (uint32_t v = 0; v <= n; ++v) host_cls_off_[v] *= 2;
}

uint32_t Routing::class_of(uint32_t dst, uint32_t comp) const {
  for (uint32_t i = host_cls_off_[dst]; i < host_cls_off_[dst + 1]; i += 2)
    if (host_cls_[i] == comp) return host_cls_[i + 1];
  return UINT32_MAX;
}

uint32_t Routing::find_entry(uint32_t v, uint32_t nb) const {
  for (uint32_t e = adj_off_[v]; e < adj_off_[v + 1]; ++e)
    if (adj_nb_[e] == nb) return e;
  return UINT32_MAX;
}

void Routing::class_bfs(uint32_t cls, bool lists) {
  const auto& nodes = *nodes_;
  const auto& ports = *ports_;
  for (uint32_t v : queue_) dist_[v] = -1;  // reset the previous BFS
  queue_.clear();
  for (uint32_t i = cls_seed_off_[cls]; i < cls_seed_off_[cls + 1]; ++i) {
    // The seeds are the switches next to the destination (distance 1) in its visit order; offsets of
    // delay, transmission time and bandwidth are from the seed, the host's own link is added per host.
    const uint32_t s = cls_seeds_[i];
    dist_[s] = 1;
    oseed_[s] = mseed_[s] = static_cast<uint16_t>(i - cls_seed_off_[cls]);
    delay_[s] = tx_[s] = 0;
    bw_[s] = UINT64_MAX;
    nvs_hop_[s] = 0;
    if (lists) scratch_[local_[s]].clear();
    queue_.push_back(s);
  }
  for (size_t i = 0; i < queue_.size(); ++i) {
    const uint32_t now = queue_[i];
    const int32_t d = dist_[now];
    const bool nvs_now = nodes[now].is_nvswitch;
    // Hosts never forward (their lists come from their neighbours): only the switch entries, which
    // follow the host entries.
    const uint32_t first_sw = static_cast<uint32_t>(
        std::partition_point(adj_nb_.begin() + adj_off_[now], adj_nb_.begin() + adj_off_[now + 1],
                             [&](uint32_t nb) { return !nodes[nb].is_switch; }) -
        adj_nb_.begin());
    for (uint32_t e = first_sw; e < adj_off_[now + 1]; ++e) {
      const uint32_t next = adj_nb_[e];
      // With parallel links the reference's neighbour table keeps the last line's link.
      const PortLink& link = ports[pt_[pt_off_[e + 1] - 1]];
      if (dist_[next] < 0) {
        dist_[next] = d + 1;
        delay_[next] = delay_[now] + static_cast<uint64_t>(link.delay / kNs);
        tx_[next] = tx_[now] + uint64_t(payload_) * 1000000000ull * 8 / link.rate_bps;
        bw_[next] = std::min(bw_[now], link.rate_bps);
        oseed_[next] = oseed_[now];
        mseed_[next] = mseed_[now];
        nvs_hop_[next] = 0;
        if (lists) scratch_[local_[next]].clear();
        queue_.push_back(next);
      }
      if (dist_[next] == d + 1 && nvs_now && !nvs_hop_[next]) {
        // SimAI's rule (docs/workloads.md §2): an equal-hop next hop through an NVSwitch replaces all
        // others, and re-times the node (the dequeue order, hence oseed_, stays).
        nvs_hop_[next] = 1;
        if (lists) scratch_[local_[next]].clear();
        delay_[next] = delay_[now] + static_cast<uint64_t>(link.delay / kNs);
        tx_[next] = tx_[now] + uint64_t(payload_) * 1000000000ull * 8 / link.rate_bps;
        bw_[next] = std::min(bw_[now], link.rate_bps);
        mseed_[next] = mseed_[now];
      } else if (nvs_hop_[next] && !nvs_now) {
        continue;
      }
      if (lists && dist_[next] == d + 1)
        scratch_[local_[next]].insert(scratch_[local_[next]].end(), peer_.begin() + pt_off_[e],
                                      peer_.begin() + pt_off_[e + 1]);
    }
  }
  if (!lists) return;
  // The class's table entries. A switch's list towards most classes is the one it has towards the
  // previous class of its component (a leaf's uplinks towards every remote leaf): compared first, it
  // spares hashing.
  const bool has_prev = cls > comp_cls_off_[cls_comp_[cls]];
  for (uint32_t i = 0; i < queue_.size(); ++i) {
    const uint32_t v = queue_[i];
    if (dist_[v] > UINT16_MAX) throw std::runtime_error("routing: a path of more than 65535 switches");
    uint32_t l = kDirect;
    if (dist_[v] != 1) {
      const std::vector<uint32_t>& now = scratch_[local_[v]];
      const uint32_t prev = has_prev ? table_[cls_base_[cls - 1] + local_[v]].list : kDirect;
      l = prev != kDirect && std::equal(now.begin(), now.end(), list_data_.begin() + list_off_[prev],
                                        list_data_.begin() + list_off_[prev + 1])
              ? prev
              : intern(now);
    }
    table_[cls_base_[cls] + local_[v]] = Entry{l, i, static_cast<uint16_t>(dist_[v]), oseed_[v]};
  }
}

uint32_t Routing::intern(const std::vector<uint32_t>& l) {
  std::vector<uint32_t>& ids = list_ids_[hash_words(l.data(), l.size())];
  for (uint32_t id : ids)
    if (std::equal(l.begin(), l.end(), list_data_.begin() + list_off_[id], list_data_.begin() + list_off_[id + 1]))
      return id;
  const uint32_t id = static_cast<uint32_t>(list_off_.size() - 1);
  list_data_.insert(list_data_.end(), l.begin(), l.end());
  list_off_.push_back(static_cast<uint32_t>(list_data_.size()));
  ids.push_back(id);
  return id;
}

void Routing::candidates(uint32_t h, uint32_t dst, std::vector<Cand>& out, uint32_t only, uint32_t only_cls) const {
  const auto& nodes = *nodes_;
  out.clear();
  if (h == dst && only == UINT32_MAX) return;  // (a class's own hosts stand for each other below)
  uint32_t best = UINT32_MAX;
  for (uint32_t e = adj_off_[h]; e < adj_off_[h + 1]; ++e) {
    const uint32_t nb = adj_nb_[e];
    uint32_t d;
    Cand c{nb, e, UINT32_MAX, 0, 0};
    if (nb == dst) {
      if (only != UINT32_MAX) continue;
      d = 0;
    } else if (nodes[nb].is_switch) {
      const uint32_t k = comp_[nb];
      if (only != UINT32_MAX && k != only) continue;
      c.cls = only != UINT32_MAX ? only_cls : class_of(dst, k);
      if (c.cls == UINT32_MAX) continue;
      const Entry& en = entry(c.cls, nb);
      d = en.dist;
      c.seed_node = cls_seeds_[cls_seed_off_[c.cls] + en.seed];
      c.order = en.order;
    } else {
      continue;  // another host: hosts never forward
    }
    if (d < best) best = d, out.clear();
    if (d == best) out.push_back(c);
  }
  // SimAI's NVSwitch rule, as for switches in class_bfs().
  if (std::any_of(out.begin(), out.end(), [&](const Cand& c) { return nodes[c.node].is_nvswitch; }))
    std::erase_if(out, [&](const Cand& c) { return !nodes[c.node].is_nvswitch; });
  // Dequeue order of the per-host BFS: within a component the class BFS order; across components the
  // order of the distance-1 ancestors, i.e. seeds descending (they differ, components being disjoint).
  std::sort(out.begin(), out.end(), [](const Cand& a, const Cand& b) {
    return a.seed_node != b.seed_node ? a.seed_node > b.seed_node : a.order < b.order;
  });
}

void Routing::host_list(uint32_t h, uint32_t dst, std::vector<uint32_t>& out) const {
  std::vector<Cand> cands;
  candidates(h, dst, cands);
  out.clear();
  for (const Cand& c : cands) {
    const uint32_t r = rev_[c.entry];  // the neighbour's ports to h, mapped to h's ports
    out.insert(out.end(), peer_.begin() + pt_off_[r], peer_.begin() + pt_off_[r + 1]);
  }
}

std::span<const uint32_t> Routing::next_hops(uint32_t n, uint32_t dst) const {
  const auto& nodes = *nodes_;
  if (n == dst || nodes[dst].is_switch) return {};
  if (!nodes[n].is_switch) {
    if (nodes[n].num_ports <= 1) return {};
    const uint64_t key = (uint64_t(n) << 32) | dst;
    auto it = host_list_ids_.find(key);
    if (it == host_list_ids_.end()) {
      std::vector<uint32_t> l;
      host_list(n, dst, l);
      std::vector<uint32_t>& same = host_list_by_content_[hash_words(l.data(), l.size())];
      uint32_t id = UINT32_MAX;
      for (uint32_t i : same)
        if (host_lists_[i] == l) id = i;
      if (id == UINT32_MAX) {
        id = static_cast<uint32_t>(host_lists_.size());
        host_lists_.push_back(std::move(l));
        same.push_back(id);
      }
      it = host_list_ids_.emplace(key, id).first;
    }
    return host_lists_[it->second];
  }
  const uint32_t c = class_of(dst, comp_[n]);
  if (c == UINT32_MAX) return {};
  const Entry& e = entry(c, n);
  if (e.list == kDirect) {  // the last hop: this switch's ports to dst, in dst's port order
    const uint32_t f = find_entry(dst, n);
    return {peer_.data() + pt_off_[f], pt_off_[f + 1] - pt_off_[f]};
  }
  return {list_data_.data() + list_off_[e.list], list_off_[e.list + 1] - list_off_[e.list]};
}

std::span<const uint32_t> Routing::host_nics(uint32_t h, uint32_t dst) const {
  const Node& nd = (*nodes_)[h];
  if (nd.num_ports > 1) return next_hops(h, dst);
  // Single-NIC host: its NIC if the switch behind it reaches dst (the span is the node's own field).
  const PortLink& nic = (*ports_)[nd.first_port];
  if (!nic.up) return {};
  const uint32_t sw = (*ports_)[nic.peer].node;
  if (sw == dst || !next_hops(sw, dst).empty()) return {&nd.first_port, 1};
  return {};
}

uint64_t Routing::table_bytes() const {
  auto b = [](const auto& v) { return uint64_t(v.capacity()) * sizeof(v[0]); };
  uint64_t s = b(adj_off_) + b(adj_nb_) + b(pt_off_) + b(pt_) + b(peer_) + b(rev_) + b(comp_) + b(local_) +
               b(comp_off_) + b(comp_sw_) + b(comp_cls_off_) + b(cls_comp_) + b(cls_seed_off_) + b(cls_seeds_) +
               b(cls_base_) + b(cls_host_off_) + b(cls_hosts_) + b(host_cls_off_) + b(host_cls_) + b(table_) +
               b(list_off_) + b(list_data_);
  for (const auto& [h, ids] : list_ids_) s += 48 + b(ids);
  // Multi-port hosts' lists (grown as flows start): a hash node of about 32 B and a bucket per entry.
  for (const auto& l : host_lists_) s += sizeof(l) + b(l);
  for (const auto& [h, ids] : host_list_by_content_) s += 48 + b(ids);
  s += host_list_ids_.size() * 40;
  return s;
}

}  // namespace wh
