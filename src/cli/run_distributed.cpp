// `wormhole run` started as several MPI ranks: the distributed engine on an HPCC config.txt
// scenario or a training scenario (a SimAI workload, Chakra traces, or several jobs), with Wormhole
// if it is on. Every rank reads the inputs and builds the whole network, cuts it with the same
// deterministic map, runs its own nodes (partition/engine.h) and keeps a replica of the training
// work (TrainingClient); rank 0 writes the outputs in the order one process would have written them.
#include <fmt/core.h>
#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <thread>

#include "partition_command.h"
#include "progress.h"
#include "run_command.h"
#include "run_record.h"
#include "wormhole/io/hdf5_collective.h"
#include "wormhole/core/input_error.h"
#include "wormhole/io/results_writer.h"
#include "wormhole/io/workload_results.h"
#include "wormhole/partition/engine.h"
#include "wormhole/version.h"
#include "wormhole_session.h"

namespace wh {

namespace {

/// A PFC record and the event that made it: sorting by the event (then by the record's place in
/// its event) gives the order one process writes them in.
struct TaggedPfc {
  Event at;
  uint64_t exec;  // the event's execution number on its rank (identical events tell apart)
  uint64_t seq;   // this rank's count: orders several frames of one event
  uint32_t rank;  // who recorded it (and writes its row)
  PfcRecord rec;
};

/// Each rank's observer: hears every completion of the run, in order (Network::deliver), and the
/// PFC frames of its own ports. Rank 0 writes fct.txt as the completions come.
class RankObserver final : public NetObserver {
 public:
  RankObserver(const Network& net, TextOutputs* out, bool progress) : net_(net), out_(out), progress_(progress) {}
  void flow_finished(const FlowRecord& f) override {
    ++finished_;
    if (out_) out_->flow_finished(f);
  }
  void pfc(const PfcRecord& p) override {
    pfc_.push_back({net_.kernel().running(), net_.kernel().events_executed(), pfc_.size(), 0, p});
  }
  void tick(Time now, uint64_t events, uint64_t done) override {
    if (progress_) line_.tick(now, events, finished_);  // every completion reaches every rank
  }
  ProgressLine& progress() { return line_; }
  uint64_t finished() const { return finished_; }
  std::vector<TaggedPfc> pfc_;

 private:
  const Network& net_;
  TextOutputs* out_;
  bool progress_;
  uint64_t finished_ = 0;
  ProgressLine line_{"rank 0: "};
};

/// Runs `step` on every rank; if it throws on any, every rank learns it (no rank is left waiting in
/// a collective), the ranks that failed print their message and all return its exit status.
template <class F>
std::optional<int> agree(int rank, F&& step) {
  int status = 0;
  std::string message;
  try {
    step();
  } catch (const InputError& e) {
    status = 2, message = e.what();
  } catch (const std::exception& e) {
    status = 1, message = e.what();
  }
  int worst = 0;
  MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (worst == 0) return std::nullopt;
  // Each input error is the same on every rank: rank 0 says it; a rank-local one is said by its rank.
  int first = status ? rank : INT32_MAX, reporter = 0;
  MPI_Allreduce(&first, &reporter, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == reporter)
    std::fprintf(stderr, "wormhole: error%s: %s\n", reporter ? fmt::format(" (rank {})", rank).c_str() : "",
                 message.c_str());
  return worst;
}


/// What both kinds of scenario share once loaded: the network, the cut, the engine, the outputs.
struct Shared {
  Shared(const RunOptions& opts, int r, int n) : o(opts), rank(r), ranks(n) {}
  const RunOptions& o;
  int rank = 0, ranks = 1;
  Network* net = nullptr;
  const Topology* topo = nullptr;
  RankMap map;
  const Network* weights = nullptr;  ///< what the cut was weighed by (flows sent per rank), if anything
  std::string fct, pfc, results, origin;
};

/// The run's results after the engine ran: on rank 0 every flow record in id order (for the
/// summary); on every rank its own flows' records, and every PFC row in the run's order (those
/// after a client's stop left out) with the rank that recorded it; the statistics; rank 0 also
/// every rank's times.
struct Gathered {
  std::vector<FlowRecord> records, mine;
  std::vector<PfcRecord> pfc;
  std::vector<uint64_t> my_pfc_rows;
  std::vector<PfcRecord> my_pfc;
  std::vector<LateAck> late;
  std::vector<RankTimes> times;
  RunStats stats;
};

Gathered gather_results(const Shared& s, const DistributedEngine& engine, const RankObserver& obs, double wall) {
  Network& net = *s.net;
  Gathered g;
  g.stats = reduce_stats(MPI_COMM_WORLD, net);
  MPI_Allreduce(&wall, &g.stats.wall_s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  for (uint32_t id = 0; id < net.flow_count(); ++id)
    if (net.owns_node(net.flow_info(id).src)) g.mine.push_back(net.record(id));
  g.records = gather_to_root(MPI_COMM_WORLD, g.mine);
  g.late = gather_to_root(MPI_COMM_WORLD, net.late_acks());
  g.times = gather_to_root(MPI_COMM_WORLD, std::vector<RankTimes>{engine.times()});
  std::sort(g.records.begin(), g.records.end(), [](const FlowRecord& a, const FlowRecord& b) { return a.id < b.id; });
  // Every rank learns every PFC row's place (rows are few): each writes its own into /pfc.
  std::vector<TaggedPfc> mine = obs.pfc_;
  for (TaggedPfc& p : mine) p.rank = static_cast<uint32_t>(s.rank);
  std::vector<TaggedPfc> pfc = gather_to_all(MPI_COMM_WORLD, mine);
  std::sort(pfc.begin(), pfc.end(), [](const TaggedPfc& a, const TaggedPfc& b) {
    return a.at.before(b.at) || (!b.at.before(a.at) && a.seq < b.seq);
  });
  for (const TaggedPfc& p : pfc) {
    if (engine.stopped() && net.client_clock().after_stop(p.at, p.exec)) continue;
    if (p.rank == static_cast<uint32_t>(s.rank)) g.my_pfc.push_back(p.rec), g.my_pfc_rows.push_back(g.pfc.size());
    g.pfc.push_back(p.rec);
  }
  return g;
}

void print_rank_times(const Gathered& g) {
  for (size_t k = 0; k < g.times.size(); ++k) {
    const RankTimes& t = g.times[k];
    fmt::print("rank {}: {} events; compute {:.3f} s, wait {:.3f} s, communicate {:.3f} s; {} windows; cut-link "
               "packets {} sent, {} received\n",
               k, t.events, t.compute_s, t.wait_s, t.comm_s, t.windows, t.packets_sent, t.packets_received);
  }
}

/// One process drops a retransmitted duplicate once its sender has finished; a receiver on another
/// rank cannot know that in time. Says so if it happened (it needs an RTO).
void warn_late_acks(const Gathered& g) {
  size_t diverged = 0;
  for (const LateAck& a : g.late)
    if (g.records[a.flow].finished() && g.records[a.flow].finish <= a.at) ++diverged;
  if (diverged)
    std::fprintf(stderr,
                 "wormhole: warning: %zu retransmitted duplicates were acknowledged after their flow had finished (one "
                 "process drops them): the results may differ from a single-process run\n",
                 diverged);
}

/// Cuts the network (or reads the map), prints the start-up summary on rank 0.
RankMap cut(const RunOptions& o, const std::string& scenario, const Topology& topo, const Network* net, int ranks) {
  return o.rank_map.empty() ? cut_network(scenario, topo, net, static_cast<uint32_t>(ranks), o.linear)
                            : read_rank_map(o.rank_map, topo, net, static_cast<uint32_t>(ranks));
}

void print_start(const Shared& s) {
  fmt::print("distributed run over {} ranks (EVENT_ORDER portable: the results of one process run with --set "
             "EVENT_ORDER=portable): ",
             s.ranks);
  print_rank_summary(*s.topo, s.weights, s.map,
                     !s.o.rank_map.empty() ? "rank map " + s.o.rank_map : s.o.linear ? "linear" : "METIS k-way");
  std::printf("maxRtt=%lu maxBdp=%lu\n", static_cast<unsigned long>(s.net->routing().max_rtt_ns()),
              static_cast<unsigned long>(s.net->routing().max_bdp_bytes()));
  std::fflush(stdout);
}

}  // namespace

int run_distributed(const RunOptions& o, int rank, int ranks) {
  // A signal on any rank stops every rank at the next window edge (DistributedEngine::run), and the
  // outputs are written as far as the run got, as one process does. (mpirun sends the ranks SIGTERM
  // a grace time after a Ctrl-C and SIGKILL as long after; Slurm SIGTERM, then SIGKILL after KillWait:
  // docs/results.md.)
  install_interrupt_handlers();
  const bool lead = rank == 0, speak = lead && !o.quiet;
  const bool workload = std::filesystem::path(o.scenario).extension() == ".toml";
  ConfigRun cr;
  WorkloadRun wr;
  Shared s(o, rank, ranks);
  std::unique_ptr<Network> traffic;
  if (auto failed = agree(rank, [&] {
        // Same-time events in the order that does not depend on the cut (Event::make_key).
        RunOptions portable = o;
        bool given = false;
        for (const auto& [key, value] : parse_sets(o.sets))
          if (key == "EVENT_ORDER" || key == "network.EVENT_ORDER") {
            if (value == "reference")  // other values: the config reader names what is wrong
              throw InputError("command line", 0,
                               "--set " + key + "=" + value + ": a distributed run orders same-time events portably",
                               "drop it, or set EVENT_ORDER=portable; the reference order needs one process");
            given = true;
          }
        if (!o.rank_map.empty() && o.linear)
          throw InputError("command line", 0, "--linear and --rank-map both choose the cut",
                           "give one of them (--rank-map FILE takes the cut from FILE)");
        if (!given) {
          // The scenario's own EVENT_ORDER reference (if any) is replaced: say so (rank 0).
          const SimConfig asked = workload ? read_scenario(o.scenario, parse_sets(o.sets)).net
                                           : read_hpcc_config(o.scenario, parse_sets(o.sets));
          const bool file_says_reference = !asked.portable_order && asked.key_origin.count("EVENT_ORDER");
          if (file_says_reference && lead)
            std::fprintf(stderr, "wormhole: note: %s asks for EVENT_ORDER reference; a distributed run orders same-time "
                                 "events portably (its results are those of one process run with --set "
                                 "EVENT_ORDER=portable)\n",
                         o.scenario.c_str());
          portable.sets.push_back(workload ? "network.EVENT_ORDER=portable" : "EVENT_ORDER=portable");
        }
        const SimConfig* cfg = nullptr;
        if (workload) {
          wr = load_workload_run(portable, lead);
          make_workload_outputs(o, wr, false);  // the paths; the folder once every input is checked
          s.net = wr.net.get(), s.topo = &wr.topo.topo, cfg = &wr.cfg;
          s.results = wr.results, s.origin = wr.sc.path;
        } else {
          cr = load_config_run(portable, lead);
          s.net = cr.net.get(), s.topo = &cr.topo, cfg = &cr.cfg;
          s.results = cr.results, s.origin = cr.cfg.path;
        }
        s.fct = cfg->fct_output_file, s.pfc = cfg->pfc_output_file;
        if (!cfg->portable_order)  // e.g. a quoted "reference" on the command line
          throw InputError("command line", 0, "EVENT_ORDER reference: a distributed run orders same-time events portably",
                           "drop it, or set EVENT_ORDER=portable; the reference order needs one process");
        // A training scenario's cut is weighed by its expected traffic (its flows exist only as it
        // runs): the workload's, the trace's, or every job's and the background flows.
        if (workload) traffic = traffic_network(wr);
        const Network* weights = workload ? traffic.get() : s.net;
        s.map = cut(o, o.scenario, *s.topo, weights->flow_count() == 0 ? nullptr : weights, ranks);
        s.weights = weights->flow_count() == 0 ? nullptr : weights;
        // Outputs last, by rank 0 (the others write only results.h5, after many collectives).
        if (lead) {
          if (workload) make_workload_outputs(o, wr, true);
          else check_config_outputs(cr);
        }
      }))
    return *failed;
  const SimConfig& cfg = workload ? wr.cfg : cr.cfg;
  Network& net = *s.net;
  std::optional<DistributedEngine> engine;
  std::unique_ptr<TextOutputs> text;
  // Wormhole's controller (and memoizer) on every rank, alike; its ticks are held between windows
  // (engine.h). Every rank reads a --memo file; rank 0 writes the memo file (the store is the same
  // on every rank: the ranks take the same decisions).
  std::optional<WormholeSession> wormhole;
  // The monitors: each rank samples and traces its own nodes, rank 0 writes the files (monitor_exchange.h).
  std::unique_ptr<MonitorSession> monitors;
  if (auto failed = agree(rank, [&] {
        engine.emplace(net, MPI_COMM_WORLD, s.map, workload ? wr.options.send_latency : kTimeMax);
        wormhole.emplace(net, cfg, workload ? wr.until : cfg.stop_time(), o.memo_in, speak);
        if (wormhole->controller()) wormhole->controller()->set_exchange(&*engine);
        if (lead && workload) WormholeSession::collective_unused(cfg, "a distributed run does not have it yet");
        wormhole->set_memo_path(o.memo_out.empty()
                                    ? (std::filesystem::path(s.results).parent_path() / "memo.h5").string()
                                    : o.memo_out);
        if (lead && !o.memo_out.empty()) check_memo_out(o.memo_out, {s.results, s.fct, s.pfc});
        if (lead) {
          if (workload) write_topology_copy(wr);
          text = std::make_unique<TextOutputs>(s.fct, s.pfc, s.origin);
        }
        // After the cut (the engine gave the network its ranks); files by rank 0, after the others.
        MonitorSession::Plan plan =
            workload ? wr.monitors : MonitorSession::plan(cfg, s.results, static_cast<uint32_t>(net.nodes().size()));
        monitors = std::make_unique<MonitorSession>(net, cfg, std::move(plan), MPI_COMM_WORLD, s.map.rank_of);
        engine->set_window_hook(monitors->window_hook());
      }))
    return *failed;
  if (speak) {
    if (workload) print_training_header(wr);
    if (workload && monitors->any())
      monitors->print_estimate(run_traffic(wr));
    else if (!workload)
      monitors->print_estimate(cr.specs);
    print_start(s);
    if (engine->lookahead() < s.map.lookahead_ps)
      std::printf("windows of %.3f ns: the workload's send latency, shorter than the cut's lookahead%s\n",
                  double(engine->lookahead()) / kNs,
                  engine->lookahead() < 100 * kNs ? " (WARNING: below 100 ns, the ranks synchronise very often)" : "");
  }
  if (speak && cfg.wormhole.enabled && cfg.wormhole.threads != 1) {
    // mpirun binds each rank to one core by default (up to 2 ranks): its oneTBB threads then share it.
    cpu_set_t cpus;
    if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) == 1 &&
        std::thread::hardware_concurrency() > static_cast<unsigned>(ranks))
      std::fprintf(stderr, "wormhole: note: rank 0 is bound to one CPU (mpirun's default binding), so Wormhole's "
                           "threads share it; mpirun --bind-to none (or srun --cpus-per-task=N) lets them spread\n");
  }
  RankObserver obs(net, text.get(), speak);
  // The training work on every rank, alike (TrainingClient): it hears every completion at the window
  // edges, in the run's order. Rank 0 also writes each job's fct.txt as its flows finish.
  TrainingWork work;
  std::unique_ptr<JobFctFiles> job_files;
  if (auto failed = agree(rank, [&] {
        if (!workload) return;
        NetObserver* forward = &obs;
        if (!wr.jobs.empty()) {
          std::vector<std::string> paths;
          if (lead)
            for (const std::string& d : wr.job_dirs) paths.push_back((std::filesystem::path(d) / "fct.txt").string());
          job_files = std::make_unique<JobFctFiles>(obs, paths);
          forward = job_files.get();
        }
        work = make_training_work(wr, forward);
        if (job_files) job_files->set_jobs(work.jobs);
      }))
    return *failed;
  TrainingClient* const client = work.client.get();
  if (!client) net.set_observer(&obs);
  // Every rank holds every flow and hears every completion, so rank 0 can tell the share done.
  if (client)
    obs.progress().set_fraction([client] { return client->progress(); },
                                wr.chakra.ranks.empty() ? "the workload's bytes" : "trace nodes");
  else
    obs.progress().set_fraction(
        [&obs, &net] { return net.flow_count() == 0 ? -1.0 : double(obs.finished()) / double(net.flow_count()); }, "flows");
  MPI_Barrier(MPI_COMM_WORLD);  // the wall clock starts together
  const auto t0 = std::chrono::steady_clock::now();
  if (client) client->start();
  engine->run(workload ? wr.until : cfg.stop_time());
  const bool complete = client ? client->finish(wr.until) : true;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Gathered g = gather_results(s, *engine, obs, wall);
  // The monitors' ends as one process has them: the reference's queue monitor to the stop time, the
  // port monitor (PORT_MON_END 0) to the last finish; a workload's both to its end.
  if (auto failed = agree(rank, [&] {
        const Time now = net.client_now(), last = g.stats.last_finish;
        const Time ports_end = workload ? now : cfg.port_mon_end_ns ? cfg.stop_time() : last >= 0 ? last : now;
        monitors->finish(workload ? now : cfg.stop_time(), ports_end, engine->stopped());
      }))
    return *failed;
  if (wormhole->controller()) {
    uint64_t c[3] = {net.events_discarded(), net.packets_bypassed(), net.packets_held()};
    MPI_Allreduce(MPI_IN_PLACE, c, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    wormhole->set_rank_totals(g.stats.events, c[0], c[1], c[2]);
  }

  RunMetadata meta;
  meta.scenario = s.origin;
  meta.version = WORMHOLE_VERSION;
  meta.settings = effective_settings(cfg);
  meta.stats = g.stats;
  fill_run_record(meta, net, cfg.cc_mode, *s.topo, o.command_line, workload ? wr.overrides : cr.overrides);
  if (workload) meta.scenario_keys = scenario_values(wr.sc);
  const int stopped = note_interrupt(meta, net, g.stats.sim_end);
  // One results file, each rank writing its own rows through MPI-IO.
  const std::vector<JobReport> jobs = work.jobs ? job_reports(wr, *work.jobs) : std::vector<JobReport>{};
  if (auto failed = agree(rank, [&] {
        try {
          write_hdf5_results_collective(MPI_COMM_WORLD, s.results, g.mine, net.flow_count(), g.my_pfc,
                                        g.my_pfc_rows, g.pfc.size(), meta, work.report, wormhole->report(),
                                        work.jobs ? &jobs : nullptr);
        } catch (const InputError&) {
          throw;  // agreed by every rank (the file cannot be created or written): said once
        } catch (const std::invalid_argument&) {
          throw;  // agreed too
        } catch (const std::exception& e) {
          // An HDF5 failure inside a collective call may have left other ranks waiting in it.
          std::fprintf(stderr, "wormhole: error (rank %d): writing %s: %s\n", rank, s.results.c_str(), e.what());
          MPI_Abort(MPI_COMM_WORLD, 1);
        }
      }))
    return *failed;
  std::optional<int> failed = agree(rank, [&] {
    if (!lead) return;
    for (const PfcRecord& p : g.pfc) text->pfc(p);
    text->flush();
    if (work.report) write_workload_csvs(wr.out, *work.report);
    wormhole->write_memo();
    warn_late_acks(g);
    const FlowResults flows(std::move(g.records));
    if (work.jobs) write_jobs_reports(wr, *work.jobs, flows);
    if (stopped) {
      print_interrupted(meta, obs.finished(), flows.size(),
                        workload ? "fct.txt, pfc.txt and the CSVs in " + wr.out : s.fct + " and " + s.pfc);
      return;
    }
    if (!workload) print_unfinished(cr, flows, g.stats, 0);
    if (!complete && work.report)
      std::fprintf(stderr, "wormhole: error: workload incomplete: %s\n", work.report->incomplete.c_str());
    if (work.jobs)  // says which jobs are incomplete, quiet or not
      print_jobs_summary(wr, *work.jobs, flows, slowdown_stats(flows), g.stats, g.pfc.size(), g.stats.wall_s, meta.cc, o.quiet, nullptr);
    if (o.quiet) {
      wormhole->print_warnings();
      return;
    }
    if (work.report) {
      print_workload_summary(*work.report, g.stats, g.stats.wall_s, flows.size(), g.pfc.size(), meta.cc);
      if (!wr.background.empty()) fmt::print("{}\n", background_summary(wr.background, flows, nullptr));
    }
    else if (!workload) print_run_summary(slowdown_stats(flows), g.stats, g.pfc.size(), g.stats.wall_s, meta.cc);
    wormhole->print_summary();
    print_rank_times(g);
    const std::string& memo = wormhole->memo_path();  // as one process says it
    const std::string mon = monitors->any() ? " (monitors:" + monitors->outputs() + ")" : "";
    if (work.jobs) fmt::print("outputs: {} (jobs.csv; per job: {}/<job>/){}{}\n", wr.out, wr.out, memo.empty() ? "" : " (memo file " + memo + ")", mon);
    else if (workload) fmt::print("outputs: {}{}{}\n", wr.out, memo.empty() ? "" : " (memo file " + memo + ")", mon);
    else fmt::print("outputs: {} {} {}{}{}\n", s.fct, s.pfc, s.results, memo.empty() ? "" : " " + memo, monitors->outputs());
  });
  if (failed) return *failed;
  if (stopped) return stopped;
  return complete ? 0 : 3;
}

}  // namespace wh
