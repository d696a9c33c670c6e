// `wormhole run`: the main job, in one process (the run plan's one-process back end, run_plan.h), and what
// the runs of both back ends share: options, output checks, summaries.
#include "run_command.h"
#include "run_plan.h"
#include "memory_check.h"
#include "monitor_session.h"
#include "progress.h"
#include "run_record.h"

#include <fmt/core.h>

#include <chrono>
#include <cstdlib>
#include <csignal>
#include <cstdio>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fcntl.h>
#include <unistd.h>

#include "wormhole/cc/factory.h"
#include "wormhole/core/interrupt.h"
#include "wormhole/ffwd/fast_forward.h"
#include "wormhole_session.h"
#include "wormhole/io/flows.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/core/input_error.h"
#include "wormhole/io/results_writer.h"
#include "wormhole/io/topology.h"
#include "wormhole/net/network.h"
#include "wormhole/version.h"

namespace wh {

void add_run_options(CLI::App& cmd, RunOptions& o) {
  cmd.add_option("scenario", o.scenario,
                 "a scenario file (.toml: topology + training workload + network, see docs/workloads.md §10) or an HPCC config.txt "
                 "(paths in it relative to its folder or the current one)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd.add_option("-s,--set", o.sets,
                 "override one setting, KEY=VALUE (repeatable), e.g. --set CC_MODE=1; in a .toml scenario also "
                 "section.key=VALUE, e.g. --set workload.iterations=2");
  cmd.add_option("--results", o.results, "HDF5 results file (default: results.h5 beside FCT_OUTPUT_FILE)");
  cmd.add_option("-o,--output-dir", o.output_dir,
                 "write every output (fct.txt, pfc.txt, results.h5; the CSV reports of a .toml scenario) into DIR "
                 "(created if missing) instead of the config's paths or the scenario's [output] dir");
  cmd.add_option("--memo", o.memo_in,
                 "warm-start Wormhole's memoization from a memo file of earlier runs (memo.h5, or one written by "
                 "'wormhole memo merge'); turns memoization on; needs Wormhole on")
      ->check(CLI::ExistingFile);
  cmd.add_option("--memo-out", o.memo_out,
                 "where memoization writes its memo file (default: memo.h5 beside the results file)");
  cmd.add_flag("-q,--quiet", o.quiet, "no progress line and no summary");
  cmd.add_option("--memory-limit", o.memory_limit,
                 "refuse (exit 2, nothing written) a run whose set-up is estimated above SIZE, e.g. 16GB or 512MiB; "
                 "none = no check (default: the machine's available memory, MemAvailable)");
  cmd.add_flag("--linear", o.linear,
               "started as several MPI ranks (mpirun -np N): cut the network in contiguous node-id blocks instead "
               "of METIS k-way");
  cmd.add_option("--rank-map", o.rank_map,
                 "started as several MPI ranks: take the cut from FILE (\"node rank\" lines, as wormhole partition "
                 "--map writes) instead of METIS")
      ->check(CLI::ExistingFile);
}

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

// Fails before anything is written if an output's directory is missing, so a bad run never
// truncates the files of a previous one.
void check_output_dir(const std::string& path, const std::pair<std::string, int>& origin, const std::string& what,
                      bool output_dir_option) {
  const auto dir = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!dir.empty() && !std::filesystem::is_directory(dir, ec))
    throw InputError(origin.first, origin.second, what + " " + path + ": directory " + dir.string() + " does not exist",
                     "create it (mkdir -p " + dir.string() + ")" + (output_dir_option ? ", or use --output-dir DIR" : ""));
  check_writable_dir(dir.empty() ? "." : dir.string(), origin, what + " " + path + ": directory");
}

void check_writable_dir(const std::string& dir, const std::pair<std::string, int>& origin, const std::string& what) {
  // With the effective ids, as the files will be created; root passes (unless read-only).
  if (::faccessat(AT_FDCWD, dir.c_str(), W_OK | X_OK, AT_EACCESS) == 0) return;
  const int err = errno;
  throw InputError(origin.first, origin.second, what + " " + dir + " is not writable: " + std::strerror(err),
                   "let this user create files in it, or choose another folder for " + what);
}

void check_memo_out(const std::string& path, const std::vector<std::string>& others) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError("command line", 0, "--memo-out " + path + " is a directory", "give a file name, e.g. " +
                                                                                       (std::filesystem::path(path) / "memo.h5").string());
  const auto same = [&](const std::string& other) {
    std::error_code e1, e2;
    return !other.empty() && std::filesystem::weakly_canonical(path, e1) == std::filesystem::weakly_canonical(other, e2) &&
           !e1 && !e2;
  };
  for (const std::string& other : others)
    if (same(other))
      throw InputError("command line", 0, "--memo-out " + path + " is also where the run writes " + other,
                       "give the memo file a name of its own (default: memo.h5 beside the results file)");
}

std::vector<std::pair<std::string, std::string>> parse_sets(const std::vector<std::string>& sets) {
  std::vector<std::pair<std::string, std::string>> overrides;
  for (const std::string& s : sets) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError("command line", 0, "--set \"" + s + "\" is not KEY=VALUE", "write e.g. --set CC_MODE=1");
    overrides.emplace_back(s.substr(0, eq), s.substr(eq + 1));
  }
  return overrides;
}

std::vector<std::pair<std::string, std::string>> run_overrides(const RunOptions& o, const std::string& key,
                                                               const std::string& on) {
  auto overrides = parse_sets(o.sets);
  if (o.memo_in.empty()) return overrides;
  for (const auto& [k, v] : overrides)
    if (k == "WORMHOLE_MEMO" || k == "wormhole.memo") {
      if (v == "0" || v == "false")
        throw InputError("command line", 0, "--memo " + o.memo_in + " warm-starts memoization, but --set " + k + "=" +
                                                v + " turns it off",
                         "drop one of the two");
      return overrides;  // already on: a second setting would only draw a "set twice" warning
    }
  overrides.emplace_back(key, on);  // --memo turns it on, and the results say so
  return overrides;
}

void note_simai_monitors(const SimConfig& cfg, const std::string& scenario, bool quiet) {
  if (quiet) return;
  std::string keys;
  for (const char* k : {"BW_MON_FILE", "RATE_MON_FILE", "CNP_MON_FILE"}) {
    const auto it = cfg.key_origin.find(k);
    if (it != cfg.key_origin.end() && it->second.first != scenario && it->second.first != "command line")
      keys += std::string(keys.empty() ? "" : ", ") + k;
  }
  if (!keys.empty())
    std::fprintf(stderr, "wormhole: note: %s of the base config (SimAI's monitors, at its paths) are not written; set "
                         "them in the scenario's [network] table or with --set to write them into the output folder\n",
                 keys.c_str());
}

void note_simai_environment(bool quiet) {
  if (quiet) return;
  // SimAI reads these at start-up; a SimAI user's shell or batch script may still export them.
  static constexpr std::pair<const char*, const char*> kVars[] = {
      {"AS_SEND_LAT", "set workload.send_latency in the scenario (e.g. send_latency = \"6us\")"},
      {"AS_NVLS_ENABLE", "NVLS is not modelled: an NVLink AllReduce runs as a ring"},
      {"AS_PXN_ENABLE", "PXN is not modelled: a cross-server ring hop leaves from the ring's sender"},
  };
  for (const auto& [var, what] : kVars)
    if (const char* v = std::getenv(var))
      std::fprintf(stderr, "wormhole: note: %s=%s is SimAI's environment variable and is not read: %s\n", var, v, what);
}

void warn_unused_wormhole(const SimConfig& cfg, bool table_given) {
  if (cfg.wormhole.enabled) return;
  // --set WORMHOLE=0 on a scenario that turns it on (a packet-mode baseline) is deliberate.
  if (cfg.origin_of("WORMHOLE").first == "command line") return;
  bool keys = table_given;
  for (const auto& [key, origin] : cfg.key_origin) keys |= key.rfind("WORMHOLE_", 0) == 0;
  if (keys)
    std::fprintf(stderr, "wormhole: warning: Wormhole settings are given but Wormhole is off, so they do nothing "
                         "(set WORMHOLE 1, or enabled = true under [wormhole])\n");
}

// The reference truncates serialisation to whole ns; at high rates that runs links visibly fast.
void warn_ns_truncation(const SimConfig& cfg, const Topology& topo) {
  if (!cfg.ns_truncation) return;
  uint64_t fastest = 0;
  for (const TopoLink& l : topo.links) fastest = std::max(fastest, l.rate_bps);
  if (fastest == 0) return;
  const double exact = 8.0 * (cfg.packet_payload_size + kDataHeaderBytes) * 1e9 / double(fastest);
  const double err = (exact - std::floor(exact)) / exact;
  if (err > 0.02)  // 100 G loses 1 % (83.84 -> 83 ns), which every reference run has
    std::fprintf(stderr,
                 "wormhole: warning: at %.0f Gb/s a %u-B packet takes %.2f ns; NS_TRUNCATION 1 (the reference's whole-ns "
                 "timing) makes it %.0f ns, %.1f %% fast. Set NS_TRUNCATION 0 for exact timing.\n",
                 fastest / 1e9, cfg.packet_payload_size + kDataHeaderBytes, exact, std::floor(exact), err * 100);
}

ConfigRun load_config_run(const RunOptions& o, bool speak) {
  auto overrides = run_overrides(o, "WORMHOLE_MEMO", "1");
  ConfigRun r;
  r.results = o.results;
  if (!o.output_dir.empty()) {
    r.output_dir = o.output_dir;  // made by check_config_outputs, once every input has been checked
    // Absolute: relative output settings are resolved against the config's folder, -o against the shell's.
    const std::filesystem::path d = std::filesystem::absolute(o.output_dir);
    overrides.emplace_back("FCT_OUTPUT_FILE", (d / "fct.txt").string());
    overrides.emplace_back("PFC_OUTPUT_FILE", (d / "pfc.txt").string());
    if (r.results.empty()) r.results = (d / "results.h5").string();
  }
  r.overrides = overrides;
  if (std::filesystem::path(o.scenario).extension() == ".et")
    throw InputError(o.scenario, 0, "a Chakra execution trace is not a scenario or an HPCC config",
                     "run the traces from a .toml scenario: [workload] chakra = \"PREFIX\" for PREFIX.0.et, PREFIX.1.et, ... "
                     "(docs/workloads.md §8)");
  r.cfg = read_hpcc_config(o.scenario, overrides);
  if (!o.output_dir.empty()) {
    // -o DIR puts every output there: the monitor and trace files keep their names.
    const std::filesystem::path d = std::filesystem::absolute(o.output_dir);
    for (auto [key, path] : {std::pair{"QLEN_MON_FILE", &r.cfg.qlen_mon_file}, {"TRACE_OUTPUT_FILE", &r.cfg.trace_output_file},
                             {"BW_MON_FILE", &r.cfg.bw_mon_file}, {"RATE_MON_FILE", &r.cfg.rate_mon_file},
                             {"CNP_MON_FILE", &r.cfg.cnp_mon_file}})
      if (!path->empty()) {
        *path = (d / std::filesystem::path(*path).filename()).string();
        r.overrides.emplace_back(key, *path);
      }
  }
  const SimConfig& cfg = r.cfg;
  if (speak)
    for (const std::string& w : cfg.warnings) std::fprintf(stderr, "wormhole: warning: %s\n", w.c_str());
  // (--memo with Wormhole off is refused later, saying what to do; the WORMHOLE_MEMO it implies is no setting
  // the user gave, so no warning about it.)
  if (speak && o.memo_in.empty()) warn_unused_wormhole(cfg, false);
  // A flow-file run writes the SimAI monitors its config names (MonitorSession::plan).
  check_input_files(cfg);
  r.topo = read_topology(cfg.topology_file);
  if (speak)
    for (const std::string& w : r.topo.warnings) std::fprintf(stderr, "wormhole: warning: %s\n", w.c_str());
  std::vector<std::string> notes;
  r.specs = read_flows(cfg.flow_file, r.topo, &notes);
  if (speak)
    for (const std::string& n : notes) std::fprintf(stderr, "wormhole: note: %s\n", n.c_str());
  if (!cfg.trace_file.empty()) read_trace_nodes(cfg.trace_file, r.topo.num_nodes);  // checked before any output
  std::string warning;
  auto cc = make_cc(cfg, &warning);
  if (speak && !warning.empty()) std::fprintf(stderr, "wormhole: warning: %s\n", warning.c_str());
  if (speak && cfg.enable_trace && (cfg.trace_file.empty() || cfg.trace_output_file.empty()))
    std::fprintf(stderr, "wormhole: note: ENABLE_TRACE 1 without %s: no packet trace is written\n",
                 cfg.trace_file.empty() ? "TRACE_FILE (the nodes to trace)" : "TRACE_OUTPUT_FILE");
  if (speak && !r.specs.empty() && r.specs.front().start > cfg.stop_time())
    std::fprintf(stderr, "wormhole: warning: every flow starts after SIMULATOR_STOP_TIME %g s; nothing will run\n",
                 cfg.simulator_stop_time_s);
  if (o.check_memory) {
    MemoryEstimate m;
    m.network = estimate_network_bytes(r.topo, o.ranks);
    m.flows = r.specs.size() * (bytes_per_file_flow() + bytes_per_running_flow());  // they may all run at once
    std::string source;
    const uint64_t limit = memory_limit(o.memory_limit, &source);
    const auto [file, line] = cfg.origin_of("TOPOLOGY_FILE");
    check_memory(m, limit, source, file, line, speak && !o.quiet);
  }
  r.net = std::make_unique<Network>(cfg, r.topo, std::move(cc), o.distributed);
  if (speak) warn_ns_truncation(cfg, r.topo);
  if (const std::string h = r.net->headroom_warning(); speak && !h.empty())
    std::fprintf(stderr, "wormhole: warning: %s\n", h.c_str());
  r.net->add_flows(r.specs, cfg.flow_file);
  if (cfg.port_mon) select_ports(*r.net, cfg);  // its node ids, checked before any output
  if (r.results.empty())
    r.results = (std::filesystem::path(cfg.fct_output_file).parent_path() / "results.h5").string();
  return r;
}

void check_config_outputs(const ConfigRun& r) {
  if (!r.output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(r.output_dir, ec);
    if (ec)
      throw InputError("command line", 0, "--output-dir " + r.output_dir + ": " + ec.message(), "choose a writable folder");
    check_writable_dir(r.output_dir, {"command line", 0}, "--output-dir");
  }
  check_output_dir(r.cfg.fct_output_file, r.cfg.origin_of("FCT_OUTPUT_FILE"), "FCT_OUTPUT_FILE");
  check_output_dir(r.cfg.pfc_output_file, r.cfg.origin_of("PFC_OUTPUT_FILE"), "PFC_OUTPUT_FILE");
  check_output_dir(r.results, {"command line", 0}, "results file");
  if (!r.cfg.qlen_mon_file.empty())
    check_output_dir(r.cfg.qlen_mon_file, r.cfg.origin_of("QLEN_MON_FILE"), "QLEN_MON_FILE");
  if (r.cfg.enable_trace && !r.cfg.trace_file.empty() && !r.cfg.trace_output_file.empty())
    check_output_dir(r.cfg.trace_output_file, r.cfg.origin_of("TRACE_OUTPUT_FILE"), "TRACE_OUTPUT_FILE");
  for (auto [key, path] : {std::pair{"BW_MON_FILE", &r.cfg.bw_mon_file}, {"RATE_MON_FILE", &r.cfg.rate_mon_file},
                           {"CNP_MON_FILE", &r.cfg.cnp_mon_file}})
    if (!path->empty()) check_output_dir(*path, r.cfg.origin_of(key), key);
}

void print_unfinished(const ConfigRun& r, const FlowResults& flows, const RunStats& stats, size_t no_path) {
  const SimConfig& cfg = r.cfg;
  size_t unfinished = 0, never_ran = 0;
  // An unfinished flow is never in a streamed range (those hold finished flows only).
  flows.for_each_kept([&](const FlowRecord& rec) {
    if (!rec.finished()) {
      const bool late = rec.start > cfg.stop_time();  // the stop came first (as the set-up warning judges)
      never_ran += late;
      if (unfinished++ >= 10) return;
      std::fprintf(stderr, "wormhole: flow %u (%u -> %u, %lu B, line %d of %s) ", rec.id, rec.src, rec.dst,
                   static_cast<unsigned long>(rec.size_bytes), r.specs[rec.id].line, cfg.flow_file.c_str());
      if (late)
        std::fprintf(stderr, "starts at %.12g s, after SIMULATOR_STOP_TIME %g s: it never ran\n",
                     static_cast<double>(rec.start) * 1e-12, cfg.simulator_stop_time_s);
      else std::fprintf(stderr, "did not finish by %g s\n", cfg.simulator_stop_time_s);
    }
  });
  if (unfinished > 10) {
    // The two kinds counted apart: a flow that never ran says nothing about the network.
    const size_t ran = unfinished - never_ran;
    std::string parts;
    if (ran) parts = fmt::format("{} did not finish by {:g} s", ran, cfg.simulator_stop_time_s);
    if (never_ran)
      parts += fmt::format("{}{} {} after SIMULATOR_STOP_TIME and never ran", ran ? ", " : "", never_ran,
                           never_ran == 1 ? "starts" : "start");
    std::fprintf(stderr, "wormhole: ... %zu flows without an FCT in all: %s\n", unfinished, parts.c_str());
  }
  if (unfinished == 0) return;
  // Say why, where the run knows.
  if (no_path) std::fprintf(stderr, "wormhole: %zu of them had no path left after LINK_DOWN\n", no_path);
  if (stats.packets_dropped > 0 && cfg.rto_us <= 0)
    std::fprintf(stderr, "wormhole: %lu packets were dropped and RTO_US is 0: a lost tail packet stalls its flow "
                         "forever, as in the reference (set RTO_US, e.g. 10000)\n",
                 static_cast<unsigned long>(stats.packets_dropped));
}

std::string network_counts(const RunStats& s, size_t pfc_frames) {
  std::string drops = fmt::format("drops {}", s.packets_dropped);
  if (s.packets_dropped)
    drops += fmt::format(" (buffer {}, loss {}, link down {})", s.drops_buffer, s.drops_loss, s.drops_link_down);
  std::string retx = fmt::format("retransmitted {} packets", s.retransmitted_packets);
  if (s.retransmitted_packets) retx += fmt::format(" ({} B of payload)", s.retransmitted_bytes);
  return fmt::format("PFC frames {}; ECN marks {}; {}; {}; retransmission timeouts {}; peak switch queue {} B (node {} if {})",
                     pfc_frames, s.ecn_marks, drops, retx, s.retransmit_timeouts, s.max_queue_bytes, s.max_queue_node,
                     s.max_queue_if);
}

void print_run_summary(const SlowdownStats& st, const RunStats& s, size_t pfc_frames, double wall,
                       const std::string& cc) {
  if (st.finished == 0)
    fmt::print("flows finished 0/{}\n", st.total);
  else
    fmt::print("flows finished {}/{}; slowdown mean {:.4f} p50 {:.4f} p99 {:.4f} (over the true ideal FCT; over the "
               "reference's standalone FCT: mean {:.4f}); FCT mean {:.3f} us p99 {:.3f} us; last flow finished at {:.6f} s\n",
               st.finished, st.total, st.mean, st.p50, st.p99, st.ref_mean, st.fct_mean_us, st.fct_p99_us,
               double(s.last_finish) / kSec);
  fmt::print("events {} in {:.3f} s wall ({:.2f} M events/s); CC {}; {}\n", s.events, wall,
             wall > 0 ? s.events / wall / 1e6 : 0.0, cc, network_counts(s, pfc_frames));
}

int note_interrupt(RunMetadata& meta, const Network& net, Time now) {
  const int sig = net.stop_signal();  // 0 for a signal as the run ended: its outputs are whole
  if (!sig) return 0;
  meta.incomplete = fmt::format("interrupted by {} at simulated time {:.9f} s after {} events", signal_name(sig),
                                double(now) / kSec, meta.stats.events);
  return 128 + sig;
}

int interrupted_in_setup() {
  const int sig = interrupt_signal();
  if (!sig) return 0;
  std::fprintf(stderr, "wormhole: interrupted by %s during the set-up: nothing was written\n", signal_name(sig).c_str());
  return 128 + sig;
}

void print_interrupted(const RunMetadata& meta, size_t finished, size_t flows, const std::string& outputs) {
  std::fprintf(stderr, "wormhole: %s: %zu of %zu flows had finished; %s hold what finished (whole lines) and "
                       "results.h5 is marked incomplete\n",
               meta.incomplete.c_str(), finished, flows, outputs.c_str());
}

int run_command(const RunOptions& o) {
  // A Ctrl-C or a batch system's SIGTERM stops the run after the running event; the outputs are
  // then written as far as the run got (docs/results.md, "Stopping a run").
  install_interrupt_handlers();
  RunPlan plan = RunPlan::load(o, true);
  Network& net = plan.net();
  const SimConfig& cfg = plan.cfg();
  // Before any output is made: a bad memo file must not cost the previous run's outputs.
  WormholeSession wormhole(net, cfg, plan.until(), o.memo_in);
  plan.name_outputs(o);
  plan.check_memo_out(o);

  // Outputs last: every input has been checked by now.
  if (const int status = interrupted_in_setup()) return status;
  plan.make_outputs(o);
  wormhole.set_memo_path(plan.memo_path(o));
  MonitorSession monitors(net, cfg, plan.monitor_plan());
  TextOutputs text(plan.fct(), plan.pfc(), plan.origin());
  RunObserver obs(text, o.quiet);
  // results.h5 is open from now on: the finished flows' records go to its /flows as their ranges of
  // ids complete, or to a temporary file beside it while they wait, unless the run has background
  // flows, whose report reads them again after the run.
  ResultsFile results(plan.results());
  FlowResults flows(std::filesystem::path(plan.results()).parent_path().string());
  if (!plan.training() || plan.workload().background.empty()) flows.stream_to(&results);
  net.retire_flows_to(&flows);
  TrainingWork work = plan.make_work(obs, plan.collective_memo(wormhole), true);
  plan.set_progress(obs.progress(), work, [&obs] { return obs.finished_bytes(); });
  FastForward* ff = wormhole.controller();
  CollectiveMemo* memo = plan.training() ? plan.workload().options.memo : nullptr;
  if (ff || memo)
    obs.progress().set_skipped([ff, memo] {
      return (ff ? ff->stats().events_skipped : 0) + (memo ? memo->events_replayed() : 0);
    });
  if (memo) obs.progress().set_replayed([memo] { return memo->replayed_flows_ended(); });
  if (!o.quiet) {
    plan.print_header(monitors);
    std::fflush(stdout);
  }
  const auto t0 = Clock::now();
  bool complete = true;
  if (work.client) complete = work.client->run(plan.until());
  else net.run(plan.until());
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  text.flush();
  // The reference's queue monitor samples up to the stop time; the port monitor (PORT_MON_END 0)
  // until the last flow finished; both as far as an interrupted run got.
  monitors.finish(plan.monitor_ends(net.client_now(), net.stats().last_finish, net.flows_finished() == net.flow_count(),
                                    net.stopped_by_signal()));

  add_held_flows(net, flows);
  RunStats stats = net.stats();
  stats.wall_s = wall;
  RunMetadata meta = plan.run_record(stats, o.command_line);
  const int stopped = note_interrupt(meta, net, net.kernel().now());
  const std::vector<JobReport> reports = plan.job_reports(work);
  const SlowdownStats slowdown =
      results.finish(flows, obs.pfc_, meta, work.report, wormhole.report(), work.jobs ? &reports : nullptr);
  wormhole.write_memo();
  plan.write_reports(work, flows);
  if (stopped) {
    print_interrupted(meta, net.flows_finished(), flows.size(), plan.interrupted_outputs());
    return stopped;
  }
  plan.print_outcome(complete, work, flows, slowdown, meta.stats, obs.pfc_.size(), meta.cc, o.quiet, &net);
  if (!o.quiet) {
    wormhole.print_summary();
    fmt::print("{}\n", plan.outputs_line(wormhole.memo_path(), monitors));
  } else {
    wormhole.print_warnings();
  }
  return RunPlan::exit_status(complete);
}

}  // namespace wh
