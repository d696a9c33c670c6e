// Fabric (include/wormhole/net/fabric.h): wiring from the topology, switch set-up, ECMP and NIC choice.
#include "wormhole/net/fabric.h"

#include <fmt/core.h>

#include "wormhole/core/cause.h"
#include "wormhole/core/input_error.h"
#include "wormhole/net/hash.h"

namespace wh {

Fabric::Fabric(const NetParams& p, const Topology& topo, bool make_all) : params(p) {
  build_links(topo);
  configure_switches(topo);
  ports = PortArray(links.size());
  if (make_all)
    for (uint32_t p = 0; p < links.size(); ++p) make_port(p);
}

void Fabric::build_links(const Topology& topo) {
  const uint32_t n = topo.num_nodes;
  std::vector<uint32_t> degree(n, 0);
  for (const TopoLink& l : topo.links) ++degree[l.a], ++degree[l.b];
  nodes.resize(n);
  uint32_t next = 0;
  for (uint32_t v = 0; v < n; ++v) {
    nodes[v].is_switch = topo.is_switch[v];
    nodes[v].is_nvswitch = topo.nvswitch(v);
    nodes[v].first_port = next;
    next += degree[v];
  }
  if (next >= cause::kMaxContextPorts)  // the event order names a port's moved packets in 23 bits
    throw InputError(topo.file, 1,
                     "the topology has " + std::to_string(next) + " ports (two a link), more than the " +
                         std::to_string(cause::kMaxContextPorts - 1) + " the event order can tell apart",
                     "simulate a smaller fabric");
  links.resize(next);
  std::vector<uint32_t> used(n, 0);
  for (const TopoLink& l : topo.links) {
    const uint32_t pa = nodes[l.a].first_port + used[l.a]++;
    const uint32_t pb = nodes[l.b].first_port + used[l.b]++;
    for (auto [p, node, peer] : {std::tuple{pa, l.a, pb}, std::tuple{pb, l.b, pa}}) {
      PortLink& pl = links[p];
      pl.node = node;
      pl.if_index = used[node];
      pl.peer = peer;
      pl.rate_bps = l.rate_bps;
      pl.delay = l.delay;
      pl.error_rate = l.error_rate > 0 ? l.error_rate : params.error_rate_per_link;
    }
  }
  for (uint32_t v = 0; v < n; ++v) nodes[v].num_ports = used[v];
  for (uint32_t v = 0; v < n; ++v)
    if (!nodes[v].is_switch && nodes[v].num_ports > 0) {
      nic_rate = links[nodes[v].first_port].rate_bps;
      break;
    }
}

Fabric::SwitchPortSetup Fabric::switch_port_setup(uint32_t p) const {
  const PortLink& pl = links[p];
  SwitchPortSetup s;
  if (nodes[pl.node].is_nvswitch) {
    // NVLink has no ECN: SimAI's NVSwitchNode marks nothing, and its rates (e.g. 2880 Gb/s) are in no
    // ECN map. A queue never exceeds these thresholds.
    s.kmin = s.kmax = UINT64_MAX;
  } else if (auto it = params.ecn.find(pl.rate_bps); it != params.ecn.end()) {
    s.kmin = it->second.kmin_bytes;
    s.kmax = it->second.kmax_bytes;
    s.pmax = it->second.pmax;
  }  // (a rate missing from the maps is refused at construction)
  const uint64_t delay_ns = static_cast<uint64_t>(pl.delay / kNs);
  s.headroom = pl.rate_bps * delay_ns / 8 / 1000000000ull * 3;
  // What a pause needs (docs/network-model.md §11.1): the bytes on the wire towards us while the
  // pause travels and while the last sent ones arrive (2 × rate × delay), plus the packet our egress
  // is sending when the pause is due and the one the upstream has started.
  s.need = 2 * (pl.rate_bps * delay_ns / 8 / 1000000000ull) + 2 * uint64_t(params.mtu());
  if (s.headroom < s.need && params.pfc_lossless_headroom) s.headroom = s.need;
  uint64_t rate = pl.rate_bps;
  while (rate > nic_rate && s.pfc_shift > 0) --s.pfc_shift, rate /= 2;
  return s;
}

void Fabric::configure_switches(const Topology& topo) {
  for (uint32_t v = 0; v < nodes.size(); ++v) {
    Node& nd = nodes[v];
    if (!nd.is_switch) continue;
    nd.buffer_bytes = params.buffer_bytes;
    for (uint32_t p = nd.first_port; p < nd.first_port + nd.num_ports; ++p) {
      const PortLink& pl = links[p];
      if (!nd.is_nvswitch && !params.ecn.contains(pl.rate_bps)) {
        // Name the topology line of the link and the config line of the maps.
        int link_line = 0;
        uint32_t seen = 0;
        for (const TopoLink& l : topo.links)
          if ((l.a == v || l.b == v) && ++seen == pl.if_index) link_line = l.line;
        const auto& [file, line] = params.ecn_origin;
        throw InputError(file, line,
                         "link rate " + std::to_string(pl.rate_bps) + " bit/s (" + topo.file + " line " +
                             std::to_string(link_line) + ", switch " + std::to_string(v) + " interface " +
                             std::to_string(pl.if_index) + ") has no entry in KMIN_MAP/KMAX_MAP/PMAX_MAP",
                         "add " + std::to_string(pl.rate_bps) + " with its thresholds to all three maps");
      }
      const SwitchPortSetup s = switch_port_setup(p);
      if (s.headroom < s.need) short_headroom.push_back({p, s.headroom, s.need});
      nd.total_hdrm += s.headroom;
      nd.total_rsrv += kReserveBytes;
    }
  }
}

void Fabric::make_port(uint32_t p) {
  if (ports.made(p)) return;
  const PortLink& pl = links[p];
  Port& pt = ports.make(p);
  pt.node = pl.node;
  pt.if_index = pl.if_index;
  pt.peer = pl.peer;
  pt.rate_bps = pl.rate_bps;
  pt.delay = pl.delay;
  pt.up = pl.up;
  pt.error_rate = pl.error_rate;
  pt.rng = Rng(params.seed, p);
  if (!nodes[pl.node].is_switch) return;
  const SwitchPortSetup s = switch_port_setup(p);
  pt.kmin = s.kmin, pt.kmax = s.kmax, pt.pmax = s.pmax;
  pt.headroom = s.headroom;
  pt.pfc_shift = s.pfc_shift;
}

std::string Fabric::headroom_warning() const {
  if (short_headroom.empty()) return {};
  std::string list;
  size_t runs = 0, i = 0, listed = 0;
  while (i < short_headroom.size()) {
    // A run: consecutive interfaces of one switch with the same headroom and need.
    const ShortHeadroom& a = short_headroom[i];
    size_t j = i + 1;
    while (j < short_headroom.size() && short_headroom[j].port == short_headroom[j - 1].port + 1 &&
           links[short_headroom[j].port].node == links[a.port].node && short_headroom[j].headroom == a.headroom &&
           short_headroom[j].need == a.need)
      ++j;
    if (runs++ < 16) {
      const uint32_t first = links[a.port].if_index, last = links[short_headroom[j - 1].port].if_index;
      list += fmt::format("{}switch {} if {}{} ({} < {} B)", list.empty() ? "" : "; ", links[a.port].node, first,
                          last > first ? fmt::format("-{}", last) : "", a.headroom, a.need);
      listed += j - i;
    }
    i = j;
  }
  if (listed < short_headroom.size()) list += "; and " + std::to_string(short_headroom.size() - listed) + " more";
  return std::to_string(short_headroom.size()) +
         " switch port(s) have a PFC headroom (3 x rate x delay, the reference's rule) below what a lossless "
         "pause needs (2 x rate x delay + 2 x " + std::to_string(params.mtu()) +
         "-B packets), so PFC can drop packets there, as in the reference: " + list +
         ". Set PFC_LOSSLESS_HEADROOM 1 for a lossless headroom";
}

void Fabric::switch_path(uint32_t nic, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport,
                         std::vector<uint32_t>& path) const {
  uint32_t node = links[links[nic].peer].node;
  // A path longer than the node count would be a routing loop; routes are shortest paths.
  for (size_t guard = 0; nodes[node].is_switch && guard < nodes.size(); ++guard) {
    const uint32_t out = egress(node, src, dst, sport, dport);
    if (out == kNoRoute) break;
    path.push_back(out);
    node = links[links[out].peer].node;
  }
}

uint32_t Fabric::pick_nic(uint32_t src, uint32_t dst, uint32_t sip, uint32_t dip, uint16_t sport,
                          uint16_t dport) const {
  const std::span<const uint32_t> nics = routing.host_nics(src, dst);
  if (nics.empty()) return UINT32_MAX;
  if (nics.size() == 1) return nics[0];
  return nics[qp_hash(sip, dip, sport, dport) % nics.size()];
}

void Fabric::assign_nics(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport, uint32_t& nic,
                         uint32_t& rx_nic) const {
  nic = pick_nic(src, dst, node_ip(src), node_ip(dst), sport, dport);
  // The receiver's NIC for ACKs: the hash of the reverse QP (GetNicIdxOfRxQp); computed here,
  // not per packet, since routes only change on LINK_DOWN.
  if (nodes[dst].num_ports > 1) rx_nic = pick_nic(dst, src, node_ip(dst), node_ip(src), dport, sport);
}

bool Fabric::is_link_down_port(uint32_t p) const {
  const uint32_t a = links[p].node, b = links[links[p].peer].node;
  return (a == params.link_down_a && b == params.link_down_b) || (a == params.link_down_b && b == params.link_down_a);
}

}  // namespace wh
