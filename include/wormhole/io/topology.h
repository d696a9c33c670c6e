// The HPCC topology.txt (hpcc-model.md §2): nodes, switches and full-duplex links.
#pragma once
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
  std::vector<TopoLink> links;
  std::string file;                ///< source file (for messages)
  uint32_t num_switches() const;
};

/// Reads topology.txt. Only the first L link lines are read; text after them is ignored.
/// Throws InputError (file, line, fix) for: a malformed header or line, a switch id out of range
/// or repeated, a link endpoint out of range, a self-link, a link between two hosts, a bad rate,
/// delay or error rate, fewer link lines than declared, and a host with no link.
Topology read_topology(const std::string& path);

}  // namespace wh
