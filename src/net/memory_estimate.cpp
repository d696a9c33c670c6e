// Estimates of what a Network allocates (include/wormhole/net/memory_estimate.h), from the sizes of the
// structures it builds; measured against peak RSS in docs/results.md ("Memory").
#include "wormhole/net/memory_estimate.h"

#include <algorithm>
#include <vector>

#include "wormhole/net/flow_spec.h"
#include "wormhole/net/flow.h"
#include "wormhole/net/port.h"
#include "wormhole/net/results.h"
#include "wormhole/net/routing.h"

namespace wh {

namespace {

// Per node: the Node, the topology's switch flags, and routing's per-node arrays (adjacency offset,
// component, index in it, class-slot offset; BFS distance, delay, transmission time, bandwidth, two
// seed indices and the NVSwitch flag).
constexpr uint64_t kNodeBytes = sizeof(Node) + 2 + 4 * sizeof(uint32_t) + sizeof(int32_t) + 3 * sizeof(uint64_t) +
                                2 * sizeof(uint16_t) + 1;
// Per port: routing's CSR adjacency keeps the port and its peer, and at most one adjacency entry
// (neighbour, port offset, reverse entry).
constexpr uint64_t kAdjBytes = 2 * sizeof(uint32_t) + 3 * sizeof(uint32_t);
// Per host-switch link at most one class slot of its host (component, class) and its place in the
// class's host list.
constexpr uint64_t kSlotBytes = 3 * sizeof(uint32_t);

}  // namespace

NetworkFootprint estimate_network_bytes(const Topology& topo, uint32_t ranks) {
  const uint32_t n = topo.num_nodes;
  uint64_t ports = 0;
  for (const TopoLink& l : topo.links)
    if (l.a < n && l.b < n) ports += 2;
  // Routing keeps, per switch-only component, one 12-byte entry per (switch, attachment class of the
  // hosts next to the component): Routing::count_entries groups the links as Routing::build does.
  std::vector<bool> sw(n, false);
  std::vector<std::pair<uint32_t, uint32_t>> links;
  links.reserve(topo.links.size());
  uint64_t host_links = 0;
  for (uint32_t v = 0; v < n && v < topo.is_switch.size(); ++v) sw[v] = topo.is_switch[v];
  for (const TopoLink& l : topo.links) {
    if (l.a >= n || l.b >= n) continue;
    links.emplace_back(l.a, l.b);
    host_links += sw[l.a] != sw[l.b];
  }
  NetworkFootprint f;
  f.nodes = uint64_t(n) * kNodeBytes;
  const uint64_t made = (ports + std::max<uint32_t>(ranks, 1) - 1) / std::max<uint32_t>(ranks, 1);
  f.ports = made * sizeof(Port) + ports * (sizeof(PortLink) + kAdjBytes + sizeof(TopoLink) / 2);
  f.routing = Routing::count_entries(n, sw, links) * Routing::kEntryBytes + host_links * kSlotBytes;
  return f;
}

namespace {

// Its three figures of the summary statistics (SlowdownCollector: two slowdowns and its FCT).
constexpr uint64_t kFigures = 2 * sizeof(double) + sizeof(uint64_t);
// Its entry in the flow table and Wormhole's track index: given back by chunks of 16,384 flows once
// they were all retired and nothing refers to them (Network::release_retired_entries).
constexpr uint64_t kEntry = 16 + sizeof(uint32_t);
constexpr uint64_t kEveryFlow = kEntry + kFigures;
}  // namespace

uint64_t figure_bytes_per_flow() { return kFigures; }

uint64_t bytes_per_file_flow() {
  // Made at set-up, so every FlowInfo is held from the start; besides, its spec, its start-order entry
  // and its pair's metrics in routing's hash map (a node of key, value and link, and a bucket), counted
  // as if every flow had a pair of its own.
  return kEveryFlow + sizeof(FlowInfo) + sizeof(FlowSpec) + sizeof(uint32_t) + sizeof(uint64_t) +
         sizeof(PathMetrics) + 2 * sizeof(void*) + sizeof(void*);
}

uint64_t bytes_per_running_flow() { return sizeof(Flow) + sizeof(uint32_t); }  // its state and its NIC's list entry

}  // namespace wh
