// The run record of results.h5 (docs/results.md, /run and /topology): what was run, how it was
// asked for, and on what fabric — filled in by the run plan (run_plan.h) from the network it built.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "wormhole/io/hpcc_config.h"
#include "wormhole/io/results_writer.h"
#include "wormhole/io/topology.h"
#include "wormhole/net/network.h"

namespace wh {

/// The command line as a shell would take it back: argv joined by spaces, arguments with characters
/// a shell treats specially put in single quotes.
std::string quoted_command_line(int argc, char** argv);

/// Sets meta's CC name (of CC_MODE `cc_mode`), command line, overrides and, if `fabric`, its fabric (nodes
/// with their role and tier, the links of `topo` in file order with both interface indices, rate, delay,
/// error rate in force and kind) from the network built from `topo`: 48 B a link and 24 B a node, which
/// only the process writing /topology needs (rank 0 of a distributed run).
void fill_run_record(RunMetadata& meta, const Network& net, int cc_mode, const Topology& topo, const std::string& command_line,
                     const std::vector<std::pair<std::string, std::string>>& overrides, bool fabric = true);

}  // namespace wh
