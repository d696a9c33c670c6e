// Islands and replayed flows: what the collective memo needs of the network (wormhole/net/island.h).
#include <algorithm>
#include <tuple>
#include <unordered_map>

#include "wormhole/net/network.h"

namespace wh {

uint32_t Island::local_port(uint32_t p) const {
  const auto it = std::find(ports.begin(), ports.end(), p);
  return it == ports.end() ? UINT32_MAX : static_cast<uint32_t>(it - ports.begin());
}

bool Network::find_island(const std::vector<std::pair<uint32_t, uint32_t>>& pairs, Island& out, std::string& why) {
  routing();
  out = Island{};
  std::unordered_map<uint32_t, uint32_t> seen;  // node -> discovered
  std::vector<uint32_t> host_ports;
  auto add_node = [&](uint32_t n) {
    if (!seen.emplace(n, 1).second) return;
    (fab_.nodes[n].is_switch ? out.switches : out.hosts).push_back(n);
  };
  for (auto [a0, b0] : pairs) {
    for (int dir = 0; dir < 2; ++dir) {
      const uint32_t a = dir ? b0 : a0, b = dir ? a0 : b0;
      add_node(a);
      add_node(b);
      const std::span<const uint32_t> nics = fab_.routing.host_nics(a, b);
      if (nics.size() != 1) {
        why = nics.empty() ? "no path" : "more than one NIC";
        return false;
      }
      uint32_t p = nics[0];
      host_ports.push_back(p);
      out.path_ports.push_back(p);
      uint32_t n = fab_.ports[fab_.ports[p].peer].node;
      for (uint32_t hops = 0; n != b; ++hops) {
        if (!fab_.nodes[n].is_switch || hops > fab_.nodes.size()) {
          why = "no path";
          return false;
        }
        out.kinds |= fab_.nodes[n].is_nvswitch ? kIslandNvSwitch : kIslandFabric;
        add_node(n);
        const auto next = fab_.routing.next_hops(n, b);
        if (next.size() != 1) {
          why = "more than one path";
          return false;
        }
        out.path_ports.push_back(next[0]);
        n = fab_.ports[fab_.ports[next[0]].peer].node;
      }
    }
  }
  // Closure: an NVSwitch of the island links only to the island's switches and to hosts; a fabric
  // switch's links to other switches (a leaf's uplinks) leave it open.
  for (size_t i = 0; i < out.switches.size(); ++i) {
    const Node& sw = fab_.nodes[out.switches[i]];
    for (uint32_t q = sw.first_port; q < sw.first_port + sw.num_ports; ++q) {
      const uint32_t m = fab_.ports[fab_.ports[q].peer].node;
      if (fab_.nodes[m].is_switch && !seen.count(m)) {
        if (sw.is_nvswitch) {
          why = "an NVSwitch of the paths links to another switch";
          return false;
        }
        out.open = true;
      }
      if (!fab_.nodes[m].is_switch) add_node(m);
      out.ports.push_back(q);
    }
  }
  for (uint32_t s : out.switches) {
    const Node& sw = fab_.nodes[s];
    for (uint32_t q = sw.first_port; q < sw.first_port + sw.num_ports; ++q)
      if (!fab_.nodes[fab_.ports[fab_.ports[q].peer].node].is_switch) host_ports.push_back(fab_.ports[q].peer);
  }
  // Host ports in host order, then interface order; direct host links bring their peers too.
  for (size_t i = 0, n = host_ports.size(); i < n; ++i)
    if (!fab_.nodes[fab_.ports[fab_.ports[host_ports[i]].peer].node].is_switch) host_ports.push_back(fab_.ports[host_ports[i]].peer);
  std::unordered_map<uint32_t, uint32_t> host_pos;
  for (uint32_t i = 0; i < out.hosts.size(); ++i) host_pos[out.hosts[i]] = i;
  std::sort(host_ports.begin(), host_ports.end(), [&](uint32_t x, uint32_t y) {
    const uint32_t hx = host_pos.at(fab_.ports[x].node), hy = host_pos.at(fab_.ports[y].node);
    return hx != hy ? hx < hy : x < y;
  });
  host_ports.erase(std::unique(host_ports.begin(), host_ports.end()), host_ports.end());
  out.ports.insert(out.ports.end(), host_ports.begin(), host_ports.end());
  return true;
}

uint8_t Network::island_kinds(uint32_t a, uint32_t b) {
  routing();
  uint8_t kinds = 0;
  for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}})
    for (uint32_t p : fab_.routing.host_nics(x, y)) {
      const Node& n = fab_.nodes[fab_.ports[fab_.ports[p].peer].node];
      if (n.is_switch) kinds |= n.is_nvswitch ? kIslandNvSwitch : kIslandFabric;
    }
  return kinds;
}

Island Network::sub_island(const Island& whole, const std::vector<uint32_t>& hosts) const {
  Island out;
  out.shared = true;
  out.kinds = whole.kinds;
  out.switches = whole.switches;
  out.path_ports = whole.path_ports;
  auto member = [&](uint32_t node) { return std::find(hosts.begin(), hosts.end(), node) != hosts.end(); };
  for (uint32_t h : whole.hosts)
    if (member(h)) out.hosts.push_back(h);
  for (uint32_t q : whole.ports) {
    const Port& p = fab_.ports[q];
    if (member(p.node) || member(fab_.ports[p.peer].node)) out.ports.push_back(q);
  }
  return out;
}

uint64_t Network::take_shared_peak(uint32_t sw) {
  Node& n = fab_.nodes[sw];
  const uint64_t peak = std::max(n.shared_peak, n.shared_used);
  n.shared_peak = n.shared_used;
  return peak;
}

bool Network::below_pfc_thresholds(uint32_t sw, uint64_t bound) const {
  const Node& n = fab_.nodes[sw];
  // No pause is pending and no headroom used anywhere on the switch: a resume's timing follows the
  // threshold, which traffic a replay stands for would have lowered.
  for (uint32_t q = n.first_port; q < n.first_port + n.num_ports; ++q)
    for (uint32_t c = 0; c < kClasses; ++c)
      if (fab_.ports[q].pause_sent[c] || fab_.ports[q].hdrm_bytes[c] != 0) return false;
  // A packet is admitted, or sent to headroom with a PAUSE, against the use before it: one more full
  // packet (or the resume offset) of slack. Beyond 2^32 the reference's threshold wraps (§11.1).
  const uint64_t use = bound + std::max<uint64_t>(fab_.params.mtu(), kResumeOffset);
  if (use + n.total_hdrm + n.total_rsrv >= n.buffer_bytes || n.buffer_bytes - n.total_hdrm - n.total_rsrv > UINT32_MAX)
    return false;
  for (uint32_t q = n.first_port; q < n.first_port + n.num_ports; ++q)
    if (use >= SwitchModel::pfc_threshold_at(n, fab_.ports[q], use)) return false;
  return true;
}

bool Network::island_quiet(const Island& is) const {
  const Time now = kernel_.now();
  for (uint32_t s : is.switches)
    if (!is.shared && fab_.nodes[s].shared_used != 0) return false;
  for (uint32_t q : is.ports) {
    const Port& p = fab_.ports[q];
    if (p.bytes_total != 0 || !p.wire.empty() || p.txdone_pending || p.busy_until > now || p.wake_at >= 0 ||
        p.frozen_until > now || p.paused_since >= 0 || !p.up)
      return false;
    for (uint32_t c = 0; c < kClasses; ++c)
      if (p.paused[c] || p.pause_sent[c] || p.ingress_bytes[c] != 0 || p.hdrm_bytes[c] != 0) return false;
    for (uint32_t id : p.qps)
      if (!flows_.finished(id)) return false;
  }
  for (const Held& h : held_)
    if (h.due >= 0 && is.local_port(h.port) != UINT32_MAX) return false;
  return true;
}

void Network::island_signature(const Island& is, std::string& key) const {
  for (uint32_t s : is.switches) {
    const Node& n = fab_.nodes[s];
    append_key(key, n.num_ports), append_key(key, n.buffer_bytes), append_key(key, n.total_hdrm), append_key(key, n.total_rsrv);
  }
  for (uint32_t q : is.ports) {
    const Port& p = fab_.ports[q];
    append_key(key, is.local_port(p.peer));
    append_key(key, p.if_index), append_key(key, p.rate_bps), append_key(key, p.delay), append_key(key, p.error_rate);
    append_key(key, p.kmin), append_key(key, p.kmax), append_key(key, p.pmax), append_key(key, p.headroom), append_key(key, p.pfc_shift);
    append_key(key, p.rr_last), append_key(key, p.rr_qp), append_key(key, static_cast<uint32_t>(p.qps.size()));
    // INT reports the port's byte counter in units of 128·INT_MULTI bytes: its remainder shapes HPCC.
    if (fab_.params.int_mode == IntMode::Hpcc) append_key(key, p.tx_bytes % (128 * uint64_t(std::max<uint32_t>(1, fab_.params.int_multi))));
  }
}

IslandPortState Network::port_state(uint32_t q) const {
  const Port& p = fab_.ports[q];
  IslandPortState s;
  s.rr_last = p.rr_last;
  s.rr_qp = p.rr_qp;
  s.qps = p.qps;
  s.tx_bytes = p.tx_bytes;
  s.sent_bytes = p.sent_bytes;
  s.paused_total = p.paused_total;
  std::tie(s.rng0, s.rng1) = p.rng.state();
  s.epoch = p.epoch;
  return s;
}

void Network::set_port_state(uint32_t q, uint8_t rr_last, uint32_t rr_qp, std::vector<uint32_t> qps, uint64_t tx_delta,
                             uint64_t sent_delta) {
  Port& p = fab_.ports[q];
  p.rr_last = rr_last;
  p.rr_qp = rr_qp;
  p.qps = std::move(qps);
  p.tx_bytes += tx_delta;
  p.sent_bytes += sent_delta;
}

uint32_t Network::replay_flow(const FlowSpec& spec) { return inject(spec, true); }

void Network::start_replayed(uint32_t id) {
  // No QP state: a replayed flow sends nothing, and its record, path and bound read its FlowInfo.
  FlowInfo& i = flows_.info(id);
  i.started = true;
  // Replayed flows repeat few (pair, size) combinations, each on its one island path: the bound's
  // path walk, and the NICs where a host has one towards the other, are found once per combination
  // (millions of replayed flows: the route lookups were a twentieth of a full GPT-7B run).
  const auto [it, fresh] = replay_pairs_.try_emplace({(uint64_t(i.src) << 32) | i.dst, i.size});
  ReplayPair& r = it->second;
  if (!fresh && r.fixed_nics) {
    i.nic = r.nic, i.rx_nic = r.rx_nic;
  } else {
    fab_.assign_nics(i.src, i.dst, i.sport, i.dport, i.nic, i.rx_nic);
  }
  if (fresh) {
    r.fixed_nics = fab_.routing.host_nics(i.src, i.dst).size() <= 1 &&
                   (fab_.nodes[i.dst].num_ports <= 1 || fab_.routing.host_nics(i.dst, i.src).size() <= 1);
    r.nic = i.nic, r.rx_nic = i.rx_nic;
    r.min_fct = lower_bound_fct(id);
  }
  i.min_fct = r.min_fct;
}

void Network::finish_replayed(uint32_t id, Time skipped, uint64_t skipped_bytes) {
  FlowInfo& i = flows_.info(id);
  i.skipped_time = skipped, i.skipped_bytes = skipped_bytes;
  flows_.set_finish(id, kernel_.now());
  ledger_.finish(id);
  const FlowRecord r = record(id);  // once for both: millions of replayed flows end this way
  if (observer_) observer_->flow_finished(r);
  retire_to_sink(id, r);  // never in a partition or on a NIC's list: nothing refers to it
}

}  // namespace wh
