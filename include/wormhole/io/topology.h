// The HPCC topology.txt (docs/network-model.md §2): nodes, switches and full-duplex links.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "wormhole/core/time.h"
#include "wormhole/io/input_text.h"

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
  uint32_t num_switches() const;
};

/// How a topology reader names its endpoints in messages (topology.txt: hosts; SimAI: GPUs).
struct LinkLineStyle {
  const char* hosts;     ///< plural noun for non-switch nodes, e.g. "hosts"
  const char* line_fix;  ///< fix for a malformed line, with an example line
};

/// Parses one link line "a b rate delay error_rate" (the five tokens at `f`) of a topology whose
/// node count and switch flags are already in `t`: rate in bit/s (> 0), delay in ps (>= 0),
/// error rate in [0, 1). A link may join two hosts (a direct GPU–GPU link); hosts still never
/// forward, so it carries only the traffic between those two. Throws InputError(path, token line,
/// ...) for a bad endpoint, a self-link, or a bad rate, delay or error rate.
TopoLink parse_link_line(const std::string& path, const InputToken* f, const Topology& t, const LinkLineStyle& style);

/// Reads topology.txt. Only the first L link lines are read; text after them is ignored.
/// Throws InputError (file, line, fix) for: a malformed header or line, a switch id out of range
/// or repeated, a link endpoint out of range, a self-link, a bad rate,
/// delay or error rate, fewer link lines than declared, and a host with no link.
Topology read_topology(const std::string& path);

}  // namespace wh
