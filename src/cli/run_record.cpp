// The run record of results.h5: command line, overrides, CC and the fabric (run_record.h).
#include "run_record.h"

#include <deque>

#include "wormhole/cc/factory.h"

namespace wh {

std::string quoted_command_line(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    const bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                         "0123456789_-+=./:,@%") == std::string::npos;
    if (!line.empty()) line += ' ';
    if (plain) {
      line += a;
      continue;
    }
    line += '\'';
    for (char c : a) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

void fill_run_record(RunMetadata& meta, const Network& net, int cc_mode, const Topology& topo, const std::string& command_line,
                     const std::vector<std::pair<std::string, std::string>>& overrides, bool fabric) {
  meta.cc = cc_display_name(cc_mode);
  meta.command_line = command_line;
  meta.overrides = overrides;
  meta.nodes.clear();
  meta.links.clear();
  if (!fabric) return;
  const std::vector<Node>& nodes = net.nodes();
  const std::vector<PortLink>& ports = net.links();
  // Tiers: switch hops from the nearest host (hosts never forward, so the search starts at all of them).
  std::vector<uint32_t> tier(nodes.size(), UINT32_MAX);
  std::deque<uint32_t> todo;
  for (uint32_t v = 0; v < nodes.size(); ++v)
    if (!nodes[v].is_switch) tier[v] = 0, todo.push_back(v);
  while (!todo.empty()) {
    const uint32_t v = todo.front();
    todo.pop_front();
    for (uint32_t p = nodes[v].first_port; p < nodes[v].first_port + nodes[v].num_ports; ++p) {
      const uint32_t w = ports[ports[p].peer].node;
      if (tier[w] != UINT32_MAX || !nodes[w].is_switch) continue;
      tier[w] = tier[v] + 1;
      todo.push_back(w);
    }
  }
  meta.nodes.reserve(nodes.size());
  for (uint32_t v = 0; v < nodes.size(); ++v) {
    const Node& n = nodes[v];
    meta.nodes.push_back({n.is_nvswitch ? "nvswitch" : n.is_switch ? "switch" : "host",
                          tier[v] == UINT32_MAX ? 0 : tier[v], n.num_ports, n.first_port});
  }
  // Interfaces are numbered per node in link order (Fabric::build_links): replay it.
  meta.links.reserve(topo.links.size());
  std::vector<uint32_t> used(nodes.size(), 0);
  for (const TopoLink& l : topo.links) {
    FabricLink r;
    r.a = l.a, r.b = l.b;
    r.a_if = ++used[l.a], r.b_if = ++used[l.b];
    const PortLink& pa = ports[nodes[l.a].first_port + r.a_if - 1];
    r.rate_bps = pa.rate_bps;
    r.delay = pa.delay;
    r.error_rate = pa.error_rate;
    const bool nv = nodes[l.a].is_nvswitch || nodes[l.b].is_nvswitch;
    r.kind = nv ? "nvlink" : nodes[l.a].is_switch && nodes[l.b].is_switch ? "fabric" : "nic";
    meta.links.push_back(std::move(r));
  }
}

}  // namespace wh
