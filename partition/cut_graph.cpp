// The cut's graph: nodes and links weighed by the bytes of the expected flows routed over them.
#include "wormhole/partition/cut_graph.h"

#include <algorithm>
#include <map>
#include <span>

#include "wormhole/net/network.h"

namespace wh {

std::vector<CutFlow> cut_flows(const std::vector<FlowSpec>& pairs) {
  std::vector<CutFlow> flows;
  flows.reserve(pairs.size());
  for (const FlowSpec& s : pairs) flows.push_back({s.src, s.dst, s.size_bytes, 0, 0, true});
  return flows;
}

std::vector<CutFlow> cut_flows(const Network& net) {
  std::vector<CutFlow> flows;
  flows.reserve(net.flow_count());
  for (uint32_t id = 0; id < net.flow_count(); ++id) {
    const FlowInfo& f = net.flow_info(id);
    flows.push_back({f.src, f.dst, f.size, f.sport, f.dport, false});
  }
  return flows;
}

namespace {

/// Every node's ports weighed 1 each, and the servers (NVSwitches and their GPUs) as groups.
void add_nodes_and_groups(const Topology& topo, NetGraph& g) {
  g.num_nodes = topo.num_nodes;
  g.node_weight.assign(topo.num_nodes, 1);
  for (const TopoLink& l : topo.links) ++g.node_weight[l.a], ++g.node_weight[l.b];  // a port at each end
  if (topo.is_nvswitch.empty()) return;
  // A server = its NVSwitches and the GPUs linked to them, which may span several NVSwitches
  // (union-find over NVSwitch-GPU links; a group is named by its smallest node id).
  std::vector<uint32_t> up(topo.num_nodes);
  for (uint32_t n = 0; n < topo.num_nodes; ++n) up[n] = n;
  auto root = [&](uint32_t n) {
    while (up[n] != n) n = up[n] = up[up[n]];
    return n;
  };
  std::vector<uint8_t> in_server(topo.num_nodes, 0);
  for (const TopoLink& l : topo.links)
    for (auto [sw, gpu] : {std::pair{l.a, l.b}, std::pair{l.b, l.a}})
      if (topo.nvswitch(sw) && !topo.is_switch[gpu]) {
        const uint32_t a = root(sw), b = root(gpu);
        up[std::max(a, b)] = std::min(a, b);
        in_server[sw] = in_server[gpu] = 1;
      }
  g.group.assign(topo.num_nodes, UINT32_MAX);
  for (uint32_t n = 0; n < topo.num_nodes; ++n)
    if (in_server[n]) g.group[n] = root(n);
}

/// Calls add(port, bytes) for every port `f` sends out of: its own path, or spread (CutFlow).
template <class Add>
void route(const Fabric& fab, const CutFlow& f, std::vector<uint32_t>& path, Add add) {
  if (!f.spread) {
    uint32_t nic = Fabric::kNoRoute, rx_nic = Fabric::kNoRoute;
    fab.assign_nics(f.src, f.dst, f.sport, f.dport, nic, rx_nic);
    if (nic == Fabric::kNoRoute) return;
    path.assign(1, nic);
    fab.switch_path(nic, f.src, f.dst, f.sport, f.dport, path);
    for (uint32_t p : path) add(p, double(f.bytes));
    return;
  }
  const std::span<const uint32_t> nics = fab.routing.host_nics(f.src, f.dst);
  if (nics.empty()) return;
  // Routes are shortest paths: every next hop is one step nearer dst, so the nodes a step from the
  // sender form one level, and what reaches a node is split once, whichever way it came.
  std::map<uint32_t, double> level, next;
  for (uint32_t nic : nics) {
    const double share = double(f.bytes) / double(nics.size());
    add(nic, share);
    level[fab.links[fab.links[nic].peer].node] += share;
  }
  for (size_t guard = 0; !level.empty() && guard < fab.nodes.size(); ++guard) {
    next.clear();
    for (const auto& [node, bytes] : level) {
      if (!fab.nodes[node].is_switch) continue;  // dst (hosts do not forward)
      const std::span<const uint32_t> hops = fab.routing.next_hops(node, f.dst);
      for (uint32_t p : hops) {
        const double share = bytes / double(hops.size());
        add(p, share);
        next[fab.links[fab.links[p].peer].node] += share;
      }
    }
    level.swap(next);
  }
}

}  // namespace

NetGraph cut_graph(const Topology& topo, const Fabric& fab, const std::vector<CutFlow>& flows) {
  NetGraph g;
  add_nodes_and_groups(topo, g);
  std::vector<double> link_bytes(topo.links.size(), 0);  // exact for integers below 2^53
  if (!flows.empty()) {
    // Port -> link: interface i of a node is its i-th link in file order (topology.h).
    std::vector<std::vector<uint32_t>> links_of(topo.num_nodes);
    for (uint32_t k = 0; k < topo.links.size(); ++k) links_of[topo.links[k].a].push_back(k), links_of[topo.links[k].b].push_back(k);
    std::vector<uint32_t> link_of_port(fab.links.size(), 0);
    for (uint32_t p = 0; p < fab.links.size(); ++p)
      link_of_port[p] = links_of[fab.links[p].node].at(fab.links[p].if_index - 1);
    std::vector<double> node_bytes(topo.num_nodes, 0);
    std::vector<uint32_t> path;
    for (const CutFlow& f : flows) {
      ++g.node_weight[f.src], ++g.node_weight[f.dst];
      node_bytes[f.dst] += double(f.bytes);
      route(fab, f, path, [&](uint32_t p, double bytes) {
        link_bytes[link_of_port[p]] += bytes;
        node_bytes[fab.links[p].node] += bytes;
      });
    }
    for (uint32_t n = 0; n < topo.num_nodes; ++n) g.node_weight[n] += static_cast<uint32_t>(node_bytes[n] / 1e6);
  } else {
    for (const TopoLink& l : topo.links) {
      const auto w = static_cast<uint32_t>(l.rate_bps / 100'000'000'000ull);
      g.node_weight[l.a] += w, g.node_weight[l.b] += w;
    }
  }
  for (uint32_t k = 0; k < topo.links.size(); ++k) {
    const TopoLink& l = topo.links[k];
    const uint64_t w = !flows.empty() ? static_cast<uint64_t>(link_bytes[k] / 1e6) + 1 : std::max<uint64_t>(1, l.rate_bps / 1'000'000'000);
    g.edges.push_back({l.a, l.b, w, l.delay});
  }
  return g;
}

}  // namespace wh
