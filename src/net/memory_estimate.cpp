// Estimates of what a Network allocates (include/wormhole/net/memory_estimate.h), from the sizes of the
// structures it builds; measured against peak RSS in docs/results.md ("Memory").
#include "wormhole/net/memory_estimate.h"

#include <vector>

#include "wormhole/net/flow_spec.h"
#include "wormhole/net/flow.h"
#include "wormhole/net/port.h"
#include "wormhole/net/results.h"
#include "wormhole/net/routing.h"

namespace wh {

namespace {

// glibc's smallest heap chunk: a vector holding one to six uint32_t still costs this much.
constexpr uint64_t kMinChunk = 32;
// One adjacency entry of routing (a neighbour id and the vector of ports to it) and its heap chunk.
constexpr uint64_t kAdjBytes = sizeof(uint32_t) + sizeof(std::vector<uint32_t>) + kMinChunk;
// Per node: the Node, the topology's switch flags, and routing's per-node vectors (adjacency list,
// table row and host index, BFS distance, delay, transmission time, bandwidth, the next-hop scratch
// with its heap chunk, the NVSwitch flag, the BFS queue and visited list).
constexpr uint64_t kNodeBytes = sizeof(Node) + 2 + sizeof(std::vector<uint32_t>) + 3 * sizeof(uint32_t) +
                                3 * sizeof(uint64_t) + sizeof(std::vector<uint32_t>) + kMinChunk + 1 +
                                2 * sizeof(uint32_t);

}  // namespace

NetworkFootprint estimate_network_bytes(const Topology& topo) {
  const uint32_t n = topo.num_nodes;
  std::vector<uint32_t> degree(n, 0);
  uint64_t ports = 0;
  for (const TopoLink& l : topo.links) {
    if (l.a >= n || l.b >= n) continue;
    ++degree[l.a], ++degree[l.b];
    ports += 2;
  }
  // Routing keeps a table row for every switch and every host with several ports, and a column per host.
  uint64_t rows = 0, hosts = 0;
  for (uint32_t v = 0; v < n; ++v) {
    const bool sw = v < topo.is_switch.size() && topo.is_switch[v];
    hosts += !sw;
    rows += sw || degree[v] > 1;
  }
  NetworkFootprint f;
  f.nodes = uint64_t(n) * kNodeBytes;
  f.ports = ports * (sizeof(Port) + kAdjBytes + sizeof(TopoLink) / 2);
  f.routing = rows * hosts * sizeof(uint32_t);
  return f;
}

uint64_t bytes_per_flow() {
  // Its FlowInfo, its spec, its start-order entry, and its pair's metrics in routing's hash map (a node
  // of key, value and link, and a bucket); at the end its result record, and the results file's row
  // and HDF5's conversion buffer for it (about 190 B a flow, measured at 131,072 flows).
  constexpr uint64_t kResultsRow = 192;
  return sizeof(FlowInfo) + sizeof(FlowSpec) + sizeof(uint32_t) + sizeof(uint64_t) + sizeof(PathMetrics) +
         2 * sizeof(void*) + sizeof(void*) + sizeof(FlowRecord) + kResultsRow;
}

uint64_t bytes_per_running_flow() { return sizeof(Flow) + sizeof(uint32_t); }  // its state and its NIC's list entry

}  // namespace wh
