// SimAI topology files (docs/workloads.md §2) and writers of the HPCC / SimAI topology formats.
//
//   <node_num> <gpus_per_server> <nvswitch_num> <switch_num> <link_num> <gpu_type> [<extra int>]
//   <nvswitch ids…> <switch ids…>
//   <src> <dst> <rate> <delay> <error_rate>             × link_num
//
// GPUs are node ids 0..G-1 (G = node_num − nvswitch_num − switch_num); NVSwitches and Ethernet
// switches come after them. NVLink links are ordinary links (an NVSwitch is a store-and-forward
// switch), so intra-server traffic contends like any other.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "wormhole/core/time.h"
#include "wormhole/io/topology.h"

namespace wh {

/// A SimAI cluster: the network (`topo`, where NVSwitches and Ethernet switches both have
/// is_switch = 1) and what the SimAI header adds on top of the HPCC format.
struct SimaiTopology {
  Topology topo;
  uint32_t gpus = 0;             ///< GPU hosts: node ids 0..gpus-1
  uint32_t gpus_per_server = 0;  ///< GPUs of one server (server s owns GPUs s·gps .. s·gps+gps-1)
  uint32_t nvswitches = 0;       ///< NVSwitch nodes (the first nvswitch_num ids of line 2)
  uint32_t switches = 0;         ///< Ethernet switches (excludes NVSwitches)
  std::string gpu_type;          ///< header token, e.g. "H100"; SimAI enables NVLS only for A100/A800/H100/H800

  uint32_t servers() const { return gpus_per_server ? gpus / gpus_per_server : 0; }
};

/// Reads a SimAI topology file. Line 1 is read as a line and may hold
///   * 6 tokens (`N gps nvswitch_num switch_num L gpu_type`, the generator's output),
///   * 7 tokens (the same plus one integer, read by one ns-3-alibabacloud revision; ignored), or
///   * 3 tokens (the original HPCC `N S L`, read by read_topology: gpus = the hosts, gpus_per_server = 1,
///     no NVSwitches, gpu_type empty).
/// The ids after the header are a token stream (line breaks do not matter), as are the link lines.
/// Throws InputError (file, line, fix) for: a header of another length or with a non-numeric count,
/// zero nodes or gpus_per_server, switch counts above the node count, no GPUs, a GPU count that is not
/// a whole number of servers, a switch id that is not a number, out of range, repeated or below the GPU
/// count (GPUs must be ids 0..G-1), fewer link lines than declared or text after them, a malformed link
/// line (endpoints, rate, delay, error rate in [0, 1)), a self-link, a link between two GPUs, and a GPU
/// with no link.
SimaiTopology read_simai_topology(const std::string& path);

/// "400Gbps" for 400e9: the largest of T/G/M/k that divides the rate exactly, else "<n>bps".
/// parse_data_rate reads it back to the same bit/s.
std::string format_data_rate(uint64_t rate_bps);

/// A delay in ps as exact decimal milliseconds, SimAI's style: 25'000 ps -> "0.000025ms",
/// 1'000'000 ps -> "0.001ms", 0 -> "0ms". parse_time reads it back to the same ps.
std::string format_delay_ms(Time delay_ps);

/// Writes `t` as an HPCC topology.txt (docs/network-model.md §2): "N S L", the switch ids on one line, then
/// one "a b rate delay error_rate" line per link in order. read_topology returns the same nodes,
/// switches and links (rates, delays in ps and error rates exact).
void write_hpcc_topology(const Topology& t, std::ostream& out);

/// Writes `s` in the SimAI format, byte for byte as gen_Topo_Template.py does: the 6-token header,
/// the NVSwitch ids then the switch ids ascending on one line (with a trailing space), then the
/// links in order. The NVSwitch and switch counts come from topo.is_nvswitch / topo.is_switch; an empty
/// gpu_type is written as "none". read_simai_topology reads it back when GPUs are ids 0..gpus-1.
void write_simai_topology(const SimaiTopology& s, std::ostream& out);

}  // namespace wh
