// A .toml training scenario (docs/workloads.md): loading it (load_workload_run), its outputs, headers and
// summaries, for the run plan (run_plan.h).
#include <fmt/core.h>

#include <limits>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "memory_check.h"
#include "wormhole_session.h"
#include "monitor_session.h"
#include "progress.h"
#include "run_record.h"
#include "run_command.h"
#include "wormhole/cc/factory.h"
#include "wormhole/core/input_error.h"
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

void print_workload_summary(const WorkloadReport& r, const RunStats& s, double wall, size_t flows, size_t pfc_frames,
                            const std::string& cc) {
  const auto us = [](Time t) { return double(t) / kUs; };
  for (const IterationRecord& it : r.iterations)
    if (it.complete)
      fmt::print("iteration {}: {:.3f} us (ends at {:.3f} us)\n", it.index, us(it.end - it.start), us(it.end));
    else
      fmt::print("iteration {}: INCOMPLETE (its last work ended at {:.3f} us; see the warning or error above)\n",
                 it.index, us(it.end));
  const EndToEnd& e = r.end_to_end;
  const auto finished = [&](const GpuRecord& g) {
    return g.finish >= 0 ? fmt::format("finished at {:.3f} us", us(g.finish)) : std::string("did not finish");
  };
  if (!r.exposure_by_group) {
    // A Chakra trace: one total per GPU, ASTRA-sim's "exposed communication" (finish - GPU compute).
    fmt::print("GPU {}: compute {:.3f} us; exposed communication {:.3f} us (finish - GPU compute, as ASTRA-sim; not "
               "split by group); total {:.3f} us\n",
               r.report_gpu, us(e.total_compute), us(e.total_exposed), us(e.total));
    if (!r.per_gpu.empty()) {
      const GpuRecord& g = r.per_gpu[r.slowest_gpu];
      fmt::print("slowest GPU {}{}: compute {:.3f} us; exposed communication {:.3f} us; {} (per GPU: gpus.csv)\n",
                 r.slowest_gpu, r.slowest_gpu == r.report_gpu ? " (the GPU above)" : "", us(g.compute),
                 us(g.exposed()), finished(g));
    }
  } else {
    fmt::print("GPU {}: compute {:.3f} us; exposed communication {:.3f} us (TP {:.3f}, DP {:.3f}, EP {:.3f}, DP_EP {:.3f}{}); "
               "{}total {:.3f} us\n",
               r.report_gpu, us(e.total_compute), us(e.total_exposed), us(e.exposed_tp), us(e.exposed_dp),
               us(e.exposed_ep), us(e.exposed_dp_ep), r.pp > 1 ? fmt::format(", PP {:.3f}", us(e.exposed_pp)) : "",
               r.pp > 1 ? fmt::format("pipeline bubble {:.3f} us; ", us(e.bubble)) : "", us(e.total));
  }
  if (!r.per_gpu.empty() && r.exposure_by_group) {
    // The report GPU need not be where the time goes: name the GPU exposed longest.
    const GpuRecord& g = r.per_gpu[r.slowest_gpu];
    fmt::print("slowest GPU {}{}: compute {:.3f} us; exposed communication {:.3f} us (TP {:.3f}, DP {:.3f}, EP {:.3f}, "
               "DP_EP {:.3f}{}); {}update delays {:.3f} us; {} (per GPU: gpus.csv)\n",
               r.slowest_gpu, r.slowest_gpu == r.report_gpu ? " (the GPU above)" : "", us(g.compute), us(g.exposed()),
               us(g.exposed_tp), us(g.exposed_dp), us(g.exposed_ep), us(g.exposed_dp_ep),
               r.pp > 1 ? fmt::format(", PP {:.3f}", us(g.exposed_pp)) : "",
               r.pp > 1 ? fmt::format("pipeline bubble {:.3f} us; ", us(g.bubble)) : "", us(g.update), finished(g));
  }
  // total = compute + exposed communication + the rows' update delays (+ waits for other GPUs)
  fmt::print("collectives {}; flows {}; events {} in {:.3f} s wall ({:.2f} M events/s); CC {}; {}\n",
             r.collectives.size(), flows, s.events, wall, wall > 0 ? s.events / wall / 1e6 : 0.0, cc,
             network_counts(s, pfc_frames));
}

uint32_t check_pipeline(const Workload& w, const GroupLayout& layout, PipelineSchedule schedule,
                        uint32_t virtual_stages, bool speak) {
  if (layout.pp <= 1 || schedule == PipelineSchedule::None || w.header.micro) return 1;
  const uint32_t v = schedule != PipelineSchedule::Interleaved ? 1 : virtual_stages ? virtual_stages : w.header.vpp;
  const std::string from = virtual_stages ? fmt::format("workload.virtual_stages {}", virtual_stages)
                                          : fmt::format("the header's vpp {}", w.header.vpp);
  try {
    MicroBatches mb = find_micro_batches(w, w.header.ga);
    if (v > 1) {
      if (mb.rows.size() % layout.pp != 0)
        throw InputError(w.file, 1,
                         fmt::format("the interleaved schedule needs ga ({}) to be a multiple of PP ({})",
                                     mb.rows.size(), layout.pp),
                         "use a workload whose ga is a multiple of PP, or workload.pipeline = \"1f1b\"");
      try {
        split_into_chunks(w, mb, v);
      } catch (const std::invalid_argument& e) {
        throw InputError(w.file, 1, std::string(e.what()) + " (the chunks per stage are " + from + ")",
                         "set workload.virtual_stages to a count that divides the stage's layers, or run "
                         "workload.pipeline = \"1f1b\"");
      }
    }
  } catch (const std::invalid_argument& e) {
    throw InputError(w.file, 1, e.what(),
                     "give the ga the file was generated with, or run without the pipeline (workload.pipeline = \"none\")");
  }
  if (speak && schedule == PipelineSchedule::Interleaved) {
    if (v <= 1)
      std::fprintf(stderr, "wormhole: note: %s: interleaved with 1 model chunk per stage (%s) is the plain 1F1B\n",
                   w.file.c_str(), from.c_str());
    else if (!virtual_stages)
      std::fprintf(stderr, "wormhole: note: %s: interleaved with %u model chunks per stage, %s (AICB writes a stage's "
                           "layer count there: one layer a chunk); workload.virtual_stages sets another count\n",
                   w.file.c_str(), v, from.c_str());
  }
  return v;
}

namespace {

/// The network, the workload's (or every job's) collective plans (a Chakra trace's are not counted
/// ahead), background flows and the flows (their statistics figures): check_memory before the network is
/// built.
void check_workload_memory(const RunOptions& o, const WorkloadRun& r, bool speak) {
  MemoryEstimate m;
  m.network = estimate_network_bytes(r.topo.topo, o.ranks);
  if (!r.jobs.empty()) {
    for (const JobRun& run : r.jobs) {
      const WorkloadFlowCount c = count_workload_flows(*run.workload, run.layout, run.options);
      m.plans += c.plan_bytes;
      m.programs += driver_program_bytes(*run.workload, run.layout, run.options);
      m.run_flow_count += c.flows;
    }
  } else if (r.chakra.ranks.empty()) {
    const WorkloadFlowCount c = count_workload_flows(r.workload, r.layout, r.options);
    m.plans = c.plan_bytes;
    m.programs = driver_program_bytes(r.workload, r.layout, r.options);
    m.run_flow_count = c.flows;
  }
  m.flows = r.background.flows.size() * (bytes_per_file_flow() + bytes_per_running_flow());  // they may all run at once
  m.stopped_early = r.sc.workload.max_time > 0;
  m.distributed = o.distributed;
  std::string source;
  const uint64_t limit = memory_limit(o.memory_limit, &source);
  check_memory(m, limit, source, r.sc.path, r.sc.topology.line, speak && !o.quiet);
}

}  // namespace

WorkloadRun load_workload_run(const RunOptions& o, bool speak) {
  const auto overrides = run_overrides(o, "wormhole.memo", "true");
  WorkloadRun r;
  r.overrides = overrides;
  if (!o.output_dir.empty()) r.overrides.emplace_back("output.dir", o.output_dir);
  r.sc = read_scenario(o.scenario, overrides);
  const Scenario& sc = r.sc;
  if (speak) {
    for (const std::string& w : sc.warnings) std::fprintf(stderr, "wormhole: warning: %s\n", w.c_str());
    for (const std::string& w : sc.net.warnings) std::fprintf(stderr, "wormhole: warning: %s\n", w.c_str());
    if (o.memo_in.empty()) warn_unused_wormhole(sc.net, sc.wormhole_table);  // --memo with Wormhole off: refused later
    if (!o.distributed) note_simai_monitors(sc.net, sc.path, o.quiet);  // a distributed run writes none of them
    note_simai_environment(o.quiet);
  }

  if (speak && sc.workload.virtual_stages) {
    bool interleaved = sc.workload.pipeline == PipelineSchedule::Interleaved;
    for (const JobSpec& j : sc.jobs) interleaved = interleaved || (j.pipeline_set && j.pipeline == PipelineSchedule::Interleaved);
    if (!interleaved)
      std::fprintf(stderr, "wormhole: warning: %s:%d: workload.virtual_stages %u is used only with pipeline = "
                           "\"interleaved\"; this run ignores it\n",
                   sc.path.c_str(), sc.workload.line, sc.workload.virtual_stages);
  }

  // Inputs first, all of them: nothing is written until every input has been checked.
  r.topo = build_topology(sc);
  if (speak)
    for (const std::string& w : r.topo.topo.warnings) std::fprintf(stderr, "wormhole: warning: %s\n", w.c_str());
  if (!sc.jobs.empty()) {
    load_jobs(r, speak);
  } else if (!sc.workload.chakra.empty()) {
    r.chakra = read_chakra_trace(sc.workload.chakra, sc.workload.comm_groups);
    if (r.chakra.ranks.size() > r.topo.gpus)
      throw InputError(sc.path, sc.workload.line,
                       fmt::format("the Chakra trace has {} ranks, the topology {} GPUs", r.chakra.ranks.size(), r.topo.gpus),
                       "use a topology with a GPU per rank");
    r.workload.file = sc.workload.chakra;
    r.layout.gpus = r.layout.stage_gpus = r.topo.gpus;
    r.layout.gpus_per_server = r.topo.gpus_per_server;
  } else {
    r.workload = read_simai_workload(sc.workload.file);
    if (speak)
      for (const std::string& m : r.workload.header.warnings) std::fprintf(stderr, "wormhole: warning: %s\n", m.c_str());
    try {
      std::vector<std::string> notes;
      r.layout = make_layout(r.workload.header, r.topo.gpus, r.topo.gpus_per_server,
                             sc.workload.pipeline != PipelineSchedule::None, &notes);
      if (speak)
        for (const std::string& m : notes) std::fprintf(stderr, "wormhole: warning: %s:1: %s\n", r.workload.file.c_str(), m.c_str());
    } catch (const std::invalid_argument& e) {
      // make_layout's message is "problem (fix: remedy)"; keep its remedy, it knows the numbers.
      std::string problem = e.what(), fix = "use a workload generated for this cluster, or change " + sc.path + " [topology]";
      if (const auto at = problem.find(" (fix: "); at != std::string::npos && problem.back() == ')') {
        fix = problem.substr(at + 7, problem.size() - at - 8);
        problem.resize(at);
      }
      throw InputError(r.workload.file, 1,
                       fmt::format("workload does not fit the topology ({} GPUs, {} per server): {}", r.topo.gpus,
                                   r.topo.gpus_per_server, problem),
                       fix);
    }
  }
  const uint32_t chunks =
      sc.jobs.empty() ? check_pipeline(r.workload, r.layout, sc.workload.pipeline, sc.workload.virtual_stages, speak) : 1;
  if (sc.workload.report_gpu >= r.topo.gpus)
    throw InputError(sc.path, sc.workload.line,
                     fmt::format("workload.report_gpu {} does not exist ({} GPUs)", sc.workload.report_gpu, r.topo.gpus),
                     fmt::format("give a GPU id below {}", r.topo.gpus));

  if (sc.jobs.empty()) {
    // The workload's GPUs 0 .. gpus - 1; a trace's: its ranks (rank r on GPU r), however many GPUs there are.
    const auto used = static_cast<uint32_t>(r.chakra.ranks.empty() ? r.layout.gpus : r.chakra.ranks.size());
    std::vector<uint32_t> busy(used);
    for (uint32_t g = 0; g < used; ++g) busy[g] = g;
    std::vector<std::string> notes;
    r.background = make_background(sc, r.topo, busy, &notes);
    if (speak)
      for (const std::string& m : notes) std::fprintf(stderr, "wormhole: note: %s\n", m.c_str());
  }

  // The network checks the config against the links (e.g. ECN maps) before any folder is made.
  r.cfg = sc.net;
  std::string cc_warning;
  auto cc = make_cc(r.cfg, &cc_warning);
  if (speak && !cc_warning.empty()) std::fprintf(stderr, "wormhole: warning: %s\n", cc_warning.c_str());
  r.options.iterations = sc.workload.iterations;
  r.options.send_latency = sc.workload.send_latency;
  r.options.zero_chunk = sc.workload.zero_chunk;
  r.options.report_gpu = sc.workload.report_gpu;
  r.options.pipeline = sc.workload.pipeline;
  r.options.virtual_stages = chunks;
  for (const std::string& g : sc.workload.ignore_groups)
    for (CommGroup c : {CommGroup::TP, CommGroup::DP, CommGroup::EP, CommGroup::DP_EP})
      if (g == to_string(c)) r.options.ignore_group[static_cast<size_t>(c)] = true;
  if (!r.jobs.empty()) {
    for (const JobRun& run : r.jobs) check_collective_sizes(*run.workload, run.layout, run.options);
  } else if (r.chakra.ranks.empty()) {
    check_collective_sizes(r.workload, r.layout, r.options);
  }
  if (o.check_memory) check_workload_memory(o, r, speak);
  r.net = std::make_unique<Network>(r.cfg, r.topo.topo, std::move(cc), o.distributed);
  if (!r.background.empty()) r.net->add_flows(r.background.flows, r.background.source);  // ids 0 .. n - 1
  if (r.cfg.port_mon) select_ports(*r.net, r.cfg);  // its node ids, checked before any output
  if (speak) warn_ns_truncation(r.cfg, r.topo.topo);
  if (const std::string h = r.net->headroom_warning(); speak && !h.empty())
    std::fprintf(stderr, "wormhole: warning: %s\n", h.c_str());
  r.until = r.cfg.stop_time();
  if (sc.workload.max_time > 0) r.until = std::min(r.until, sc.workload.max_time);
  return r;
}

void make_workload_outputs(const RunOptions& o, WorkloadRun& r, bool write) {
  const Scenario& sc = r.sc;
  const std::string dir = o.output_dir.empty() ? sc.output_dir : o.output_dir;
  if (write) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      // Named after where the folder came from: the scenario's [output] dir, or -o on the command line.
      if (o.output_dir.empty())
        throw InputError(sc.path, 0, "output folder " + dir + ": " + ec.message(), "choose a writable folder ([output] dir or -o)");
      throw InputError("command line", 0, "--output-dir " + dir + ": " + ec.message(), "choose a writable folder");
    }
    if (o.output_dir.empty()) check_writable_dir(dir, {sc.path, 0}, "[output] dir");
    else check_writable_dir(dir, {"command line", 0}, "--output-dir");
  }
  r.out = std::filesystem::absolute(dir).string();
  r.cfg.fct_output_file = (std::filesystem::path(r.out) / "fct.txt").string();
  r.cfg.pfc_output_file = (std::filesystem::path(r.out) / "pfc.txt").string();
  r.results = o.results.empty() ? (std::filesystem::path(r.out) / "results.h5").string() : o.results;
  if (write) check_output_dir(r.results, {"command line", 0}, "results file");
  r.job_dirs.clear();
  for (const JobSpec& j : sc.jobs) {
    r.job_dirs.push_back((std::filesystem::path(r.out) / j.name).string());
    std::error_code ec;
    if (write) std::filesystem::create_directories(r.job_dirs.back(), ec);
    if (ec) throw InputError(sc.path, j.line, "output folder for job " + j.name + ": " + ec.message(), "choose a writable folder");
    if (write) check_writable_dir(r.job_dirs.back(), {sc.path, j.line}, "the output folder of job " + j.name);
  }
  // The scenario's own monitor and trace keys: a base config's (SimAI.conf's) are SimAI's monitors.
  r.monitors = MonitorSession::plan(r.cfg, r.results, r.topo.topo.num_nodes, sc.path, r.out);
}

void write_topology_copy(const WorkloadRun& r) {
  const Scenario& sc = r.sc;
  if (sc.topology.write.empty()) return;
  const std::filesystem::path p = std::filesystem::path(r.out) / sc.topology.write;
  std::ofstream f(p);
  if (!f) throw InputError(sc.path, sc.topology.line, "cannot write the topology to " + p.string(), "check topology.write");
  if (sc.topology.write_format == "hpcc")
    write_hpcc_topology(r.topo.topo, f);
  else
    write_simai_topology(r.topo, f);
}

std::string pipeline_name(const DriverOptions& o) {
  if (o.pipeline == PipelineSchedule::GPipe) return "GPipe";
  if (o.pipeline == PipelineSchedule::Interleaved && o.virtual_stages > 1)
    return fmt::format("interleaved 1F1B, {} chunks per stage", o.virtual_stages);
  return "1F1B";
}

void print_workload_header(const WorkloadRun& r) {
  fmt::print("{}: {} GPUs ({} per server, TP {} DP {} EP {}{}), {} rows x {} iteration(s), {} nodes, {} links\n",
             r.sc.name, r.layout.gpus, r.layout.gpus_per_server, r.layout.tp, r.layout.dp, r.layout.ep,
             r.layout.pp > 1 ? fmt::format(" PP {} {}", r.layout.pp, pipeline_name(r.options)) : std::string(),
             r.workload.layers.size(), r.options.iterations, r.topo.topo.num_nodes, r.topo.topo.links.size());
}

std::string background_summary(const Background& b, const FlowResults& flows, const Network* net) {
  if (net) return format_background_outcome(b, background_outcome(b, flows, *net, 0, net->client_now()));
  // Over ranks: what finished is in every rank's records (ids 0 .. n - 1); a running flow's progress is not.
  BackgroundOutcome o;
  o.total = b.flows.size();
  flows.for_each([&](const FlowRecord& f) { o.finished += f.finished(); }, 0, b.flows.size());
  o.slowdown = slowdown_stats(flows, 0, static_cast<uint32_t>(b.flows.size()));
  o.offered_load = o.achieved_load = std::numeric_limits<double>::quiet_NaN();
  return format_background_outcome(b, o);
}

std::vector<FlowSpec> run_traffic(const WorkloadRun& r) {
  std::vector<FlowSpec> flows = r.background.flows;
  const auto add = [&](std::vector<FlowSpec> more, uint64_t times) {
    for (FlowSpec& f : more) f.size_bytes *= times, flows.push_back(f);
  };
  if (!r.jobs.empty())
    for (const JobRun& run : r.jobs) add(expected_traffic(*run.workload, run.layout, run.options), run.options.iterations);
  else if (!r.chakra.ranks.empty())
    add(expected_traffic(r.chakra, r.layout, r.options.zero_chunk), 1);
  else
    add(expected_traffic(r.workload, r.layout, r.options), r.options.iterations);
  return flows;
}

void print_training_header(const WorkloadRun& r) {
  if (!r.jobs.empty()) {
    fmt::print("{}: {} jobs on {} GPUs ({} per server), {} nodes, {} links\n", r.sc.name, r.jobs.size(), r.topo.gpus,
               r.topo.gpus_per_server, r.topo.topo.num_nodes, r.topo.topo.links.size());
    for (size_t k = 0; k < r.jobs.size(); ++k)
      fmt::print("  job {}: GPUs {}-{} ({} GPUs), start {:.3f} us\n", r.sc.jobs[k].name, r.hosts[k].front(),
                 r.hosts[k].back(), r.hosts[k].size(), double(r.sc.jobs[k].start) / kUs);
  } else if (!r.chakra.ranks.empty()) {
    fmt::print("{}: Chakra trace {} ({} ranks) on {} GPUs ({} per server), {} nodes, {} links\n", r.sc.name,
               r.sc.workload.chakra, r.chakra.ranks.size(), r.topo.gpus, r.topo.gpus_per_server, r.topo.topo.num_nodes,
               r.topo.topo.links.size());
  } else {
    print_workload_header(r);
  }
  if (!r.background.empty()) fmt::print("{}\n", r.background.describe());
}

TrainingWork make_training_work(WorkloadRun& r, NetObserver* forward) {
  TrainingWork w;
  Network& net = *r.net;
  if (!r.jobs.empty()) {
    auto jobs = std::make_unique<JobSet>(net, r.jobs, forward);
    w.jobs = jobs.get();
    w.client = std::move(jobs);
  } else if (!r.chakra.ranks.empty()) {
    auto chakra = std::make_unique<ChakraDriver>(net, r.chakra, r.layout, r.options.send_latency, r.options.zero_chunk, forward,
                                                 r.options.memo, r.options.flow_tags, r.options.flow_tag_dir);
    w.report = &chakra->report();
    w.client = std::move(chakra);
  } else {
    auto driver = std::make_unique<WorkloadDriver>(net, r.workload, r.layout, r.options, forward);
    w.report = &driver->report();
    w.client = std::move(driver);
  }
  return w;
}

}  // namespace wh
