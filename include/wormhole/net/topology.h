// The fabric the model is built from: nodes, switches and full-duplex links (io/topology.h reads
// HPCC's topology.txt into it, src/topo generates it), and the reference's node addresses.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "wormhole/core/time.h"

namespace wh {

/// One full-duplex point-to-point link, as one line of topology.txt.
struct TopoLink {
  uint32_t a = 0, b = 0;     ///< end node ids
  uint64_t rate_bps = 0;     ///< bit/s
  Time delay = 0;            ///< one-way propagation delay, ps
  double error_rate = 0;     ///< per-packet drop probability at the receiver; 0 = ERROR_RATE_PER_LINK
  int line = 0;              ///< line in the file (for messages)
};

/// A topology: node ids 0..num_nodes-1, a switch flag per node, links in file order
/// (interface indices 1, 2, ... of each node follow this order; parallel links are kept).
struct Topology {
  uint32_t num_nodes = 0;
  std::vector<uint8_t> is_switch;  ///< size num_nodes
  /// Size num_nodes, or empty when there are none. An NVSwitch (SimAI topologies) is a switch
  /// (is_switch = 1) that never ECN-marks and whose paths win routing ties (docs/workloads.md §2).
  std::vector<uint8_t> is_nvswitch;
  bool nvswitch(uint32_t v) const { return v < is_nvswitch.size() && is_nvswitch[v]; }
  std::vector<TopoLink> links;
  std::string file;                ///< source file (for messages)
  /// What its reader warns of ("file:line: text"): link rates or delays written without a unit, which
  /// ns-3 reads as bit/s and seconds.
  std::vector<std::string> warnings;
  uint32_t num_switches() const {
    return static_cast<uint32_t>(std::count_if(is_switch.begin(), is_switch.end(), [](uint8_t s) { return s != 0; }));
  }
};

/// The reference's IPv4 address of a node: 0x0b000001 + (id/256)·0x10000 + (id%256)·0x100.
inline uint32_t node_ip(uint32_t node) { return 0x0b000001u + (node / 256) * 0x10000u + (node % 256) * 0x100u; }

}  // namespace wh
