// The HPCC flow.txt (docs/network-model.md §3) and trace.txt (§4).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "wormhole/io/topology.h"
#include "wormhole/net/flow_spec.h"

namespace wh {

/// Whole ns of a start time of `seconds` as HPCC ns-3 schedules it: floor(v × 10^9) of the binary
/// double v the text reads as (Seconds(double) through ns-3.17's 64.64 fixed point, truncated).
/// "2.000001" is the double 2.00000099999999991773 and starts at 2000000999 ns, not 2000001000.
/// 0 for v <= 0. Exact for v below 2^63 s (callers keep starts below 9e6 s).
uint64_t reference_start_ns(double seconds);

/// Reads flow.txt: a count F, then F lines "src dst pg dport size start_s". Only the first F
/// lines are read (the reference does the same; extra lines are ignored with a note: appended to
/// `notes` if given, else printed to stderr).
/// Throws InputError (file, line, fix) for: a malformed line, fewer lines than declared, an endpoint
/// out of range or a switch, src == dst, size 0 or >= 2^32, pg > 7, a negative start time, or a
/// start time earlier than the previous line's.
std::vector<FlowSpec> read_flows(const std::string& path, const Topology& topo,
                                 std::vector<std::string>* notes = nullptr);

/// Reads trace.txt: a count n then n node ids; ids >= num_nodes are skipped as the reference does.
/// Throws InputError for a malformed file.
std::vector<uint32_t> read_trace_nodes(const std::string& path, uint32_t num_nodes);

}  // namespace wh
