// `wormhole run SCENARIO.toml`: a training workload on a GPU cluster (README, "Training workloads").
#include <fmt/core.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "wormhole_session.h"
#include "progress.h"
#include "run_command.h"
#include "wormhole/cc/factory.h"
#include "wormhole/io/input_error.h"
#include "wormhole/io/results_writer.h"
#include "wormhole/io/workload_results.h"
#include "wormhole/net/network.h"
#include "wormhole/scenario/scenario.h"
#include "wormhole/topo/simai_topology.h"
#include "wormhole/version.h"
#include "wormhole/workload/collectives.h"
#include "wormhole/workload/driver.h"
#include "wormhole/workload/simai_workload.h"

namespace wh {

namespace {

void print_summary(const WorkloadReport& r, const RunStats& s, double wall, size_t flows, size_t pfc_frames) {
  const auto us = [](Time t) { return double(t) / kUs; };
  for (const IterationRecord& it : r.iterations)
    if (it.complete)
      fmt::print("iteration {}: {:.3f} us (ends at {:.3f} us)\n", it.index, us(it.end - it.start), us(it.end));
    else
      fmt::print("iteration {}: INCOMPLETE (the run stopped at {:.3f} us; see the error above)\n", it.index, us(it.end));
  const EndToEnd& e = r.end_to_end;
  fmt::print("GPU {}: compute {:.3f} us; exposed communication {:.3f} us (TP {:.3f}, DP {:.3f}, EP {:.3f}, DP_EP {:.3f}); "
             "total {:.3f} us\n",
             r.report_gpu, us(e.total_compute), us(e.total_exposed), us(e.exposed_tp), us(e.exposed_dp),
             us(e.exposed_ep), us(e.exposed_dp_ep), us(e.total));
  // total = compute + exposed communication + the rows' update delays (+ waits for other GPUs)
  fmt::print("collectives {}; flows {}; events {} in {:.3f} s wall ({:.2f} M events/s); PFC frames {}; ECN marks {}; "
             "drops {}; peak switch queue {} B (node {} if {})\n",
             r.collectives.size(), flows, s.events, wall, wall > 0 ? s.events / wall / 1e6 : 0.0, pfc_frames,
             s.ecn_marks, s.packets_dropped, s.max_queue_bytes, s.max_queue_node, s.max_queue_if);
}

}  // namespace

int run_workload_scenario(const RunOptions& o) {
  auto overrides = parse_sets(o.sets);
  if (!o.memo_in.empty()) overrides.emplace_back("wormhole.memo", "true");  // --memo turns it on, and the results say so
  Scenario sc = read_scenario(o.scenario, overrides);
  for (const std::string& w : sc.warnings) std::fprintf(stderr, "wormhole: warning: %s\n", w.c_str());
  for (const std::string& w : sc.net.warnings) std::fprintf(stderr, "wormhole: warning: %s\n", w.c_str());
  warn_unused_wormhole(sc.net, sc.wormhole_table);

  // Inputs first, all of them: nothing is written until every input has been checked.
  const SimaiTopology topo = build_topology(sc);
  const Workload w = read_simai_workload(sc.workload.file);
  for (const std::string& m : w.header.warnings) std::fprintf(stderr, "wormhole: warning: %s\n", m.c_str());
  GroupLayout layout;
  try {
    layout = make_layout(w.header, topo.gpus, topo.gpus_per_server);
  } catch (const std::invalid_argument& e) {
    // make_layout's message is "problem (fix: remedy)"; keep its remedy, it knows the numbers.
    std::string problem = e.what(), fix = "use a workload generated for this cluster, or change " + sc.path + " [topology]";
    if (const auto at = problem.find(" (fix: "); at != std::string::npos && problem.back() == ')') {
      fix = problem.substr(at + 7, problem.size() - at - 8);
      problem.resize(at);
    }
    throw InputError(w.file, 1,
                     fmt::format("workload does not fit the topology ({} GPUs, {} per server): {}", topo.gpus,
                                 topo.gpus_per_server, problem),
                     fix);
  }
  if (sc.workload.report_gpu >= topo.gpus)
    throw InputError(sc.path, sc.workload.line,
                     fmt::format("workload.report_gpu {} does not exist ({} GPUs)", sc.workload.report_gpu, topo.gpus),
                     fmt::format("give a GPU id below {}", topo.gpus));

  // The network checks the config against the links (e.g. ECN maps) before any folder is made.
  SimConfig cfg = sc.net;
  std::string cc_warning;
  auto cc = make_cc(cfg, &cc_warning);
  if (!cc_warning.empty()) std::fprintf(stderr, "wormhole: warning: %s\n", cc_warning.c_str());
  Network net(cfg, topo.topo, std::move(cc));
  warn_ns_truncation(cfg, topo.topo);
  Time until = cfg.stop_time();
  if (sc.workload.max_time > 0) until = std::min(until, sc.workload.max_time);
  // Before any output is made: a bad memo file must not cost the previous run's outputs.
  WormholeSession wormhole(net, cfg, until, o.memo_in);

  const std::string dir = o.output_dir.empty() ? sc.output_dir : o.output_dir;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(sc.path, 0, "output folder " + dir + ": " + ec.message(), "choose a writable folder ([output] dir or -o)");
  const std::filesystem::path out = std::filesystem::absolute(dir);
  cfg.fct_output_file = (out / "fct.txt").string();
  cfg.pfc_output_file = (out / "pfc.txt").string();
  const std::string results = o.results.empty() ? (out / "results.h5").string() : o.results;
  check_output_dir(results, {"command line", 0}, "results file");
  wormhole.set_memo_path(o.memo_out.empty() ? (std::filesystem::path(results).parent_path() / "memo.h5").string()
                                            : o.memo_out);
  if (!o.memo_out.empty()) check_output_dir(o.memo_out, {"command line", 0}, "--memo-out file");

  if (!sc.topology.write.empty()) {
    const std::filesystem::path p = out / sc.topology.write;
    std::ofstream f(p);
    if (!f) throw InputError(sc.path, sc.topology.line, "cannot write the topology to " + p.string(), "check topology.write");
    if (sc.topology.write_format == "hpcc")
      write_hpcc_topology(topo.topo, f);
    else
      write_simai_topology(topo, f);
  }
  TextOutputs text(cfg.fct_output_file, cfg.pfc_output_file, sc.path);
  RunObserver obs(text, o.quiet);
  DriverOptions opt;
  opt.iterations = sc.workload.iterations;
  opt.send_latency = sc.workload.send_latency;
  opt.zero_chunk = sc.workload.zero_chunk;
  opt.report_gpu = sc.workload.report_gpu;
  for (const std::string& g : sc.workload.ignore_groups)
    for (CommGroup c : {CommGroup::TP, CommGroup::DP, CommGroup::EP, CommGroup::DP_EP})
      if (g == to_string(c)) opt.ignore_group[static_cast<size_t>(c)] = true;
  WorkloadDriver driver(net, w, layout, opt, &obs);
  if (!o.quiet)
    fmt::print("{}: {} GPUs ({} per server, TP {} DP {} EP {}), {} rows x {} iteration(s), {} nodes, {} links\n",
               sc.name, layout.gpus, layout.gpus_per_server, layout.tp, layout.dp, layout.ep, w.layers.size(),
               opt.iterations, topo.topo.num_nodes, topo.topo.links.size());
  const auto t0 = std::chrono::steady_clock::now();
  const bool complete = driver.run(until);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  text.flush();

  auto [records, meta] = collect_results(net, cfg, sc.path, wall);
  const WorkloadReport& rep = driver.report();
  write_hdf5_results(results, records, obs.pfc_, meta, &rep, wormhole.report());
  wormhole.write_memo();
  write_workload_csvs(out.string(), rep);

  if (!complete) std::fprintf(stderr, "wormhole: error: workload incomplete: %s\n", rep.incomplete.c_str());
  if (!o.quiet) {
    print_summary(rep, meta.stats, wall, records.size(), obs.pfc_.size());
    wormhole.print_summary();
    fmt::print("outputs: {}{}\n", out.string(), wormhole.memo_path().empty() ? "" : " (memo file " + wormhole.memo_path() + ")");
  }
  return complete ? 0 : 3;
}

}  // namespace wh
