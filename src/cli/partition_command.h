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

/// The METIS graph of a network: a vertex per node weighted 1 + its ports + the flows it sends or
/// receives + the expected traffic through it (MB of routed flow bytes, or its links' rates in
/// units of 100 Gb/s without flows); an edge per link weighted by the payload it is expected to carry in MB (+1), from the
/// flows' routed data paths when `net` has flows (an HPCC flow file), else by its rate in Gb/s (a
/// training workload's traffic is not known before it runs); delays in ps. An NVSwitch and the
/// GPUs linked to it form a group (one server: never split).
NetGraph network_graph(const Topology& topo, const Network* net);

/// Cuts the network of `topo` (weighted by `net`'s flows if given) over `ranks` ranks with METIS
/// k-way, or in contiguous blocks if `linear`. Throws InputError naming `scenario` when it cannot.
RankMap cut_network(const std::string& scenario, const Topology& topo, const Network* net, uint32_t ranks, bool linear);
/// Reads a rank map written by `wormhole partition --map`: one "node rank" line per node ('#'
/// comments and blank lines allowed), and scores it. Throws InputError naming the file and line for
/// a bad line, a node missing or twice, a rank >= `ranks`, a split server or an empty rank.
RankMap read_rank_map(const std::string& path, const Topology& topo, const Network* net, uint32_t ranks);
struct WorkloadRun;
/// What a training scenario is expected to send, as flows: one iteration of the workload
/// (expected_traffic), the Chakra trace's collectives and sends, or one iteration of every job on
/// its own GPUs plus the background flows.
std::vector<FlowSpec> scenario_traffic(const WorkloadRun& r);
/// A scratch network of a training scenario carrying scenario_traffic() as flows (never run): what
/// network_graph weighs its cut by.
std::unique_ptr<Network> traffic_network(const WorkloadRun& r);
/// Prints the cut (edge cut, imbalance, lookahead) and one line per rank: nodes, hosts, switches,
/// ports, cut links and, with `net`, the flows it sends (`expected`: `net` is a training scenario's
/// traffic_network, whose flows are the source-destination pairs of its expected traffic, and are named
/// so). `how`: where the map came from ("METIS k-way").
void print_rank_summary(const Topology& topo, const Network* net, const RankMap& m, const std::string& how,
                        bool expected = false);

}  // namespace wh
