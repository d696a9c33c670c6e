// `wormhole partition` (see partition_command.h).
#include "partition_command.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "run_command.h"
#include "wormhole/cc/factory.h"
#include "wormhole/core/input_error.h"
#include "wormhole/net/network.h"
#include "wormhole/scenario/scenario.h"
#include "wormhole/topo/simai_topology.h"

namespace wh {

void add_partition_options(CLI::App& cmd, PartitionOptions& o) {
  cmd.add_option("scenario", o.scenario, "a scenario file (.toml) or an HPCC config.txt")
      ->required()
      ->check(CLI::ExistingFile);
  cmd.add_option("-n,--ranks", o.ranks, "number of MPI ranks to cut the network over (default 2)");
  cmd.add_option("-s,--set", o.sets, "override one setting, KEY=VALUE (repeatable), as for wormhole run");
  cmd.add_flag("--linear", o.linear, "cut contiguous node-id blocks (the dumb twin) instead of METIS k-way");
  cmd.add_option("--map", o.map_file, "write the rank map to FILE: one line \"node rank\" per node");
}

RankMap cut_network(const std::string& scenario, const Topology& topo, const Fabric& fab,
                    const std::vector<CutFlow>& flows, uint32_t ranks, bool linear) {
  const NetGraph g = cut_graph(topo, fab, flows);
  try {
    return linear ? partition_linear(g, ranks) : partition_metis(g, ranks);
  } catch (const std::invalid_argument& e) {
    throw InputError(scenario, 0, fmt::format("cannot cut the network over {} ranks: {}", ranks, e.what()),
                     "use fewer ranks (a server's GPUs and NVSwitch count as one vertex)");
  } catch (const std::runtime_error& e) {
    throw InputError(scenario, 0, fmt::format("METIS could not cut the network over {} ranks: {}", ranks, e.what()),
                     "use fewer ranks, or --linear (contiguous blocks, any count up to the number of vertices)");
  }
}

RankMap read_rank_map(const std::string& path, const Topology& topo, const Fabric& fab,
                      const std::vector<CutFlow>& flows, uint32_t ranks) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "cannot read the rank map", "give a file of \"node rank\" lines (wormhole partition --map)");
  std::vector<uint32_t> rank_of(topo.num_nodes, UINT32_MAX);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos || line[line.find_first_not_of(" \t")] == '#') continue;
    std::istringstream ls(line);
    long long node = -1, rank = -1;
    std::string extra;
    if (!(ls >> node >> rank) || (ls >> extra) || node < 0 || rank < 0)
      throw InputError(path, n, "\"" + line + "\" is not \"node rank\"", "write two non-negative integers per line");
    if (node >= topo.num_nodes)
      throw InputError(path, n, fmt::format("node {} does not exist (the topology has {} nodes)", node, topo.num_nodes),
                       "use node ids 0 .. " + std::to_string(topo.num_nodes - 1));
    if (rank >= ranks)
      throw InputError(path, n, fmt::format("rank {} but the run has {} ranks", rank, ranks),
                       fmt::format("use ranks 0 .. {}, or start {} ranks", ranks - 1, rank + 1));
    if (rank_of[node] != UINT32_MAX) throw InputError(path, n, fmt::format("node {} is listed twice", node), "list each node once");
    rank_of[node] = static_cast<uint32_t>(rank);
  }
  for (uint32_t n = 0; n < topo.num_nodes; ++n)
    if (rank_of[n] == UINT32_MAX) throw InputError(path, 0, fmt::format("node {} has no rank", n), "list every node of the topology");
  try {
    return evaluate_rank_map(cut_graph(topo, fab, flows), std::move(rank_of), ranks);
  } catch (const std::invalid_argument& e) {
    throw InputError(path, 0, e.what(), "keep each server (GPUs and NVSwitches) on one rank and give every rank a node");
  }
}

void print_rank_summary(const Topology& topo, const std::vector<CutFlow>& flows, const RankMap& m,
                        const std::string& how, bool expected) {
  fmt::print("{} ({}; imbalance = heaviest rank / mean, a node weighing 1 + ports + flows + {})\n", describe(m),
             how, !flows.empty() ? "MB of flow bytes through it" : "its links' rates in 100 Gb/s");
  std::vector<uint64_t> nodes(m.ranks), hosts(m.ranks), ports(m.ranks), sent(m.ranks), cut(m.ranks);
  for (uint32_t n = 0; n < topo.num_nodes; ++n) {
    ++nodes[m.rank_of[n]];
    hosts[m.rank_of[n]] += !topo.is_switch[n];
  }
  for (const TopoLink& l : topo.links) {
    ++ports[m.rank_of[l.a]], ++ports[m.rank_of[l.b]];
    if (m.rank_of[l.a] != m.rank_of[l.b]) ++cut[m.rank_of[l.a]], ++cut[m.rank_of[l.b]];
  }
  for (const CutFlow& f : flows) ++sent[m.rank_of[f.src]];  // a flow's sender runs it
  for (uint32_t r = 0; r < m.ranks; ++r)
    fmt::print("rank {}: {} nodes ({} hosts, {} switches), {} ports, {} cut links{}\n", r, nodes[r], hosts[r],
               nodes[r] - hosts[r], ports[r], cut[r], flows.empty() ? "" : expected ? fmt::format(", {} source-destination pairs of its expected traffic", sent[r])
                                            : fmt::format(", {} flows sent", sent[r]));
}

std::vector<FlowSpec> scenario_traffic(const WorkloadRun& r) {
  if (!r.chakra.ranks.empty()) return expected_traffic(r.chakra, r.layout, r.options.zero_chunk);
  if (r.jobs.empty()) return expected_traffic(r.workload, r.layout, r.options);
  // Every job's iteration on its own GPUs (DriverOptions::hosts).
  std::vector<FlowSpec> flows;
  for (const JobRun& j : r.jobs) {
    const std::vector<FlowSpec> f = expected_traffic(*j.workload, j.layout, j.options);
    flows.insert(flows.end(), f.begin(), f.end());
  }
  return flows;
}

std::vector<CutFlow> cut_traffic(const Network& net, const WorkloadRun* r) {
  std::vector<CutFlow> flows = cut_flows(net);
  if (r) {
    const std::vector<CutFlow> pairs = cut_flows(scenario_traffic(*r));
    flows.insert(flows.end(), pairs.begin(), pairs.end());
  }
  return flows;
}

int partition_command(const PartitionOptions& o) {
  const auto overrides = parse_sets(o.sets);
  Topology topo;
  std::unique_ptr<Network> net;  // the fabric and its routes (and a flow file's flows)
  std::vector<CutFlow> flows;
  std::string what;
  const bool training = std::filesystem::path(o.scenario).extension() == ".toml";
  if (training) {
    RunOptions ro;
    ro.scenario = o.scenario;
    ro.sets = o.sets;
    ro.check_memory = false;  // a scratch network without the workload's plans
    ro.distributed = true;    // nor any port's state: its wiring is what a cut reads
    WorkloadRun r = load_workload_run(ro, true);
    topo = r.topo.topo;
    net = std::move(r.net);  // its background flows, if any, already added
    const size_t background = net->flow_count();
    flows = cut_traffic(*net, &r);
    const size_t pairs = flows.size() - background;
    const std::string source = !r.jobs.empty()         ? fmt::format("one iteration of each of the {} jobs' collectives", r.jobs.size())
                               : !r.chakra.ranks.empty() ? fmt::format("the collectives and sends of the Chakra trace {}", r.sc.workload.chakra)
                                                         : fmt::format("one iteration of {}'s collectives", r.sc.workload.file);
    what = flows.empty() ? "link weights: rates (the workload has no traffic)"
                         : fmt::format("link weights: bytes of {} ({} source-destination pairs, spread over their ECMP paths){} "
                                       "routed over them",
                                       source, pairs,
                                       background ? fmt::format(" and of the {} background flows", background) : "");
  } else {
    const SimConfig cfg = read_hpcc_config(o.scenario, overrides);
    topo = read_topology(cfg.topology_file);
    for (const std::string& w : topo.warnings) std::fprintf(stderr, "wormhole: warning: %s\n", w.c_str());
    const std::vector<FlowSpec> specs = read_flows(cfg.flow_file, topo);
    net = std::make_unique<Network>(cfg, topo, make_cc(cfg, nullptr), true);  // wiring only: what a cut reads
    net->add_flows(specs, cfg.flow_file);  // checks that every flow has a route
    flows = cut_flows(*net);
    what = specs.empty() ? "link weights: rates (the flow file has no flow)"
                         : fmt::format("link weights: bytes of the {} flows of {} routed over them", specs.size(), cfg.flow_file);
  }
  if (o.ranks == 0) throw InputError("command line", 0, "--ranks 0", "give at least 1 rank");
  if (!o.map_file.empty()) check_output_dir(o.map_file, {"command line", 0}, "--map file", false);
  net->routing();
  const RankMap m = cut_network(o.scenario, topo, net->fabric(), flows, o.ranks, o.linear);
  fmt::print("{}: {} nodes, {} links; {}\n", o.scenario, topo.num_nodes, topo.links.size(), what);
  print_rank_summary(topo, flows, m, o.linear ? "linear" : "METIS k-way", training);
  if (!o.map_file.empty()) {
    std::ofstream f(o.map_file);
    if (!f) throw InputError(o.map_file, 0, "cannot write the rank map", "check that its folder exists and is writable");
    for (uint32_t n = 0; n < topo.num_nodes; ++n) f << n << ' ' << m.rank_of[n] << '\n';
  }
  return 0;
}

}  // namespace wh
