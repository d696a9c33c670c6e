// `wormhole partition`: how a scenario's network would be cut over MPI ranks (METIS), before a
// distributed run — the start-up report of the distributed engine, on its own.
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "wormhole/io/flows.h"
#include "wormhole/io/topology.h"
#include "wormhole/partition/cut_graph.h"
#include "wormhole/partition/rank_map.h"

namespace wh {

class Network;

struct PartitionOptions {
  std::string scenario;             ///< a .toml scenario or an HPCC config.txt
  std::vector<std::string> sets;    ///< KEY=VALUE overrides
  uint32_t ranks = 2;
  bool linear = false;              ///< the dumb twin (contiguous node ids) instead of METIS
  std::string map_file;             ///< if set: write "node rank" lines here
};

void add_partition_options(CLI::App& cmd, PartitionOptions& o);
/// Runs the command; returns the exit status. Throws InputError for bad input (a rank count of
/// 0 or above the number of servers and switches names the command line).
int partition_command(const PartitionOptions& o);

/// Cuts the network of `topo` (wired as `fab`, its routes built), weighed by `flows` (cut_graph),
/// over `ranks` ranks with METIS k-way, or in contiguous blocks if `linear`. Throws InputError naming
/// `scenario` when it cannot.
RankMap cut_network(const std::string& scenario, const Topology& topo, const Fabric& fab,
                    const std::vector<CutFlow>& flows, uint32_t ranks, bool linear);
/// Reads a rank map written by `wormhole partition --map`: one "node rank" line per node ('#'
/// comments and blank lines allowed), and scores it on cut_graph(topo, fab, flows). Throws InputError
/// naming the file and line for a bad line, a node missing or twice, a rank >= `ranks`, a split server
/// or an empty rank.
RankMap read_rank_map(const std::string& path, const Topology& topo, const Fabric& fab,
                      const std::vector<CutFlow>& flows, uint32_t ranks);
struct WorkloadRun;
/// What a training scenario is expected to send, as source-destination pairs with their bytes: one
/// iteration of the workload (expected_traffic), the Chakra trace's collectives and sends, or one
/// iteration of every job on its own GPUs. Its background flows are the network's (added before the
/// run: cut_flows(Network)).
std::vector<FlowSpec> scenario_traffic(const WorkloadRun& r);
/// What a cut is weighed by: the flows `net` holds before the run (a flow file's, or a training
/// scenario's background flows), then, for a training scenario `r` (nullptr: none), its expected
/// traffic spread over its paths (cut_flows).
std::vector<CutFlow> cut_traffic(const Network& net, const WorkloadRun* r);
/// Prints the cut (edge cut, imbalance, lookahead) and one line per rank: nodes, hosts, switches,
/// ports, cut links and, with `flows` (what the cut was weighed by), the flows each rank sends
/// (`expected`: the flows are the source-destination pairs of a training scenario's expected traffic,
/// and are named so). `how`: where the map came from ("METIS k-way").
void print_rank_summary(const Topology& topo, const std::vector<CutFlow>& flows, const RankMap& m,
                        const std::string& how, bool expected = false);

}  // namespace wh
