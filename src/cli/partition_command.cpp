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

NetGraph network_graph(const Topology& topo, const Network* net) {
  NetGraph g;
  g.num_nodes = topo.num_nodes;
  g.node_weight.assign(topo.num_nodes, 1);
  for (const TopoLink& l : topo.links) ++g.node_weight[l.a], ++g.node_weight[l.b];  // a port at each end
  // Work grows with the packets a node handles: add the expected traffic through it (routed flow
  // bytes in MB, or — a workload's traffic being unknown — its links' rates in units of 100 Gb/s).
  std::vector<uint64_t> link_bytes(topo.links.size(), 0);
  const bool by_traffic = net && net->flow_count() > 0;
  if (by_traffic) {
    // Port -> link: interface i of a node is its i-th link in file order (topology.h).
    std::vector<std::vector<uint32_t>> links_of(topo.num_nodes);
    for (uint32_t k = 0; k < topo.links.size(); ++k) links_of[topo.links[k].a].push_back(k), links_of[topo.links[k].b].push_back(k);
    std::vector<uint32_t> link_of_port(net->ports().size(), 0);
    for (uint32_t p = 0; p < net->ports().size(); ++p) {
      const Port& port = net->ports()[p];
      link_of_port[p] = links_of[port.node].at(port.if_index - 1);
    }
    std::vector<uint64_t> node_bytes(topo.num_nodes, 0);
    for (uint32_t id = 0; id < net->flow_count(); ++id) {
      const FlowInfo& f = net->flow_info(id);
      ++g.node_weight[f.src], ++g.node_weight[f.dst];
      node_bytes[f.dst] += f.size;
      for (uint32_t p : net->data_path(id)) {
        link_bytes[link_of_port[p]] += f.size;
        node_bytes[net->ports()[p].node] += f.size;
      }
    }
    for (uint32_t n = 0; n < topo.num_nodes; ++n) g.node_weight[n] += static_cast<uint32_t>(node_bytes[n] / 1'000'000);
  } else {
    for (const TopoLink& l : topo.links) {
      const auto w = static_cast<uint32_t>(l.rate_bps / 100'000'000'000ull);
      g.node_weight[l.a] += w, g.node_weight[l.b] += w;
    }
  }
  for (uint32_t k = 0; k < topo.links.size(); ++k) {
    const TopoLink& l = topo.links[k];
    const uint64_t w = by_traffic ? link_bytes[k] / 1'000'000 + 1 : std::max<uint64_t>(1, l.rate_bps / 1'000'000'000);
    g.edges.push_back({l.a, l.b, w, l.delay});
  }
  if (!topo.is_nvswitch.empty()) {
    // A server = its NVSwitches and the GPUs linked to them, which may span several NVSwitches
    // (union-find over NVSwitch-GPU links; a group is named by its smallest node id).
    std::vector<uint32_t> up(topo.num_nodes);
    for (uint32_t n = 0; n < topo.num_nodes; ++n) up[n] = n;
    auto root = [&](uint32_t n) {
      while (up[n] != n) n = up[n] = up[up[n]];
      return n;
    };
    std::vector<uint8_t> in_server(topo.num_nodes, 0);
    for (const TopoLink& l : topo.links)
      for (auto [sw, gpu] : {std::pair{l.a, l.b}, std::pair{l.b, l.a}})
        if (topo.nvswitch(sw) && !topo.is_switch[gpu]) {
          const uint32_t a = root(sw), b = root(gpu);
          up[std::max(a, b)] = std::min(a, b);
          in_server[sw] = in_server[gpu] = 1;
        }
    g.group.assign(topo.num_nodes, UINT32_MAX);
    for (uint32_t n = 0; n < topo.num_nodes; ++n)
      if (in_server[n]) g.group[n] = root(n);
  }
  return g;
}

RankMap cut_network(const std::string& scenario, const Topology& topo, const Network* net, uint32_t ranks, bool linear) {
  const NetGraph g = network_graph(topo, net);
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

RankMap read_rank_map(const std::string& path, const Topology& topo, const Network* net, uint32_t ranks) {
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
    return evaluate_rank_map(network_graph(topo, net), std::move(rank_of), ranks);
  } catch (const std::invalid_argument& e) {
    throw InputError(path, 0, e.what(), "keep each server (GPUs and NVSwitches) on one rank and give every rank a node");
  }
}

void print_rank_summary(const Topology& topo, const Network* net, const RankMap& m, const std::string& how,
                        bool expected) {
  fmt::print("{} ({}; imbalance = heaviest rank / mean, a node weighing 1 + ports + flows + {})\n", describe(m),
             how, net ? "MB of flow bytes through it" : "its links' rates in 100 Gb/s");
  std::vector<uint64_t> nodes(m.ranks), hosts(m.ranks), ports(m.ranks), flows(m.ranks), cut(m.ranks);
  for (uint32_t n = 0; n < topo.num_nodes; ++n) {
    ++nodes[m.rank_of[n]];
    hosts[m.rank_of[n]] += !topo.is_switch[n];
  }
  for (const TopoLink& l : topo.links) {
    ++ports[m.rank_of[l.a]], ++ports[m.rank_of[l.b]];
    if (m.rank_of[l.a] != m.rank_of[l.b]) ++cut[m.rank_of[l.a]], ++cut[m.rank_of[l.b]];
  }
  if (net)
    for (uint32_t id = 0; id < net->flow_count(); ++id) ++flows[m.rank_of[net->flow_info(id).src]];  // a flow's sender runs it
  for (uint32_t r = 0; r < m.ranks; ++r)
    fmt::print("rank {}: {} nodes ({} hosts, {} switches), {} ports, {} cut links{}\n", r, nodes[r], hosts[r],
               nodes[r] - hosts[r], ports[r], cut[r], !net ? "" : expected ? fmt::format(", {} source-destination pairs of its expected traffic", flows[r])
                                            : fmt::format(", {} flows sent", flows[r]));
}

std::vector<FlowSpec> scenario_traffic(const WorkloadRun& r) {
  if (!r.chakra.ranks.empty()) return expected_traffic(r.chakra, r.layout, r.options.zero_chunk);
  if (r.jobs.empty()) return expected_traffic(r.workload, r.layout, r.options);
  // Every job's iteration on its own GPUs (DriverOptions::hosts), and the background flows.
  std::vector<FlowSpec> flows;
  for (const JobRun& j : r.jobs) {
    const std::vector<FlowSpec> f = expected_traffic(*j.workload, j.layout, j.options);
    flows.insert(flows.end(), f.begin(), f.end());
  }
  flows.insert(flows.end(), r.background.flows.begin(), r.background.flows.end());
  return flows;
}

std::unique_ptr<Network> traffic_network(const WorkloadRun& r) {
  auto net = std::make_unique<Network>(r.cfg, r.topo.topo, make_cc(r.cfg, nullptr));
  const std::vector<FlowSpec> flows = scenario_traffic(r);
  if (!flows.empty()) net->add_flows(flows, r.sc.path);
  return net;
}

int partition_command(const PartitionOptions& o) {
  const auto overrides = parse_sets(o.sets);
  Topology topo;
  std::unique_ptr<Network> net;
  std::string what;
  const bool training = std::filesystem::path(o.scenario).extension() == ".toml";
  if (training) {
    RunOptions ro;
    ro.scenario = o.scenario;
    ro.sets = o.sets;
    ro.check_memory = false;  // a scratch network without the workload's plans
    const WorkloadRun r = load_workload_run(ro, true);
    topo = r.topo.topo;
    net = traffic_network(r);
    const std::string source = !r.jobs.empty()         ? fmt::format("one iteration of each of the {} jobs' collectives{}",
                                                                        r.jobs.size(), r.background.empty() ? "" : " and the background flows")
                               : !r.chakra.ranks.empty() ? fmt::format("the collectives and sends of the Chakra trace {}", r.sc.workload.chakra)
                                                         : fmt::format("one iteration of {}'s collectives", r.sc.workload.file);
    what = net->flow_count() == 0 ? "link weights: rates (the workload has no traffic)"
                                : fmt::format("link weights: bytes of {} ({} source-destination pairs) routed over them", source,
                                              net->flow_count());
  } else {
    const SimConfig cfg = read_hpcc_config(o.scenario, overrides);
    topo = read_topology(cfg.topology_file);
    const std::vector<FlowSpec> specs = read_flows(cfg.flow_file, topo);
    net = std::make_unique<Network>(cfg, topo, make_cc(cfg, nullptr));
    net->add_flows(specs, cfg.flow_file);
    what = specs.empty() ? "link weights: rates (the flow file has no flow)"
                         : fmt::format("link weights: bytes of the {} flows of {} routed over them", specs.size(), cfg.flow_file);
  }
  if (o.ranks == 0) throw InputError("command line", 0, "--ranks 0", "give at least 1 rank");
  if (!o.map_file.empty()) check_output_dir(o.map_file, {"command line", 0}, "--map file");
  const RankMap m = cut_network(o.scenario, topo, net.get(), o.ranks, o.linear);
  fmt::print("{}: {} nodes, {} links; {}\n", o.scenario, topo.num_nodes, topo.links.size(), what);
  print_rank_summary(topo, net.get(), m, o.linear ? "linear" : "METIS k-way", training);
  if (!o.map_file.empty()) {
    std::ofstream f(o.map_file);
    if (!f) throw InputError(o.map_file, 0, "cannot write the rank map", "check that its folder exists and is writable");
    for (uint32_t n = 0; n < topo.num_nodes; ++n) f << n << ' ' << m.rank_of[n] << '\n';
  }
  return 0;
}

}  // namespace wh
