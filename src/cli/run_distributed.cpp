// `wormhole run` started as several MPI ranks: the distributed engine on an HPCC config.txt
// scenario or a training scenario (a SimAI workload, Chakra traces, or several jobs), with Wormhole
// if it is on. Every rank reads the inputs and wires the whole network, cuts it with the same
// deterministic map, makes the state of its own nodes' ports and a wire for the far end of each cut link,
// runs its own nodes (partition/engine.h) and keeps a replica of the training
// work (TrainingClient); rank 0 writes the outputs in the order one process would have written them.
#include <fmt/core.h>
#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <exception>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <array>
#include <unistd.h>
#include <memory>
#include <optional>
#include <thread>

#include "partition_command.h"
#include "progress.h"
#include "run_command.h"
#include "run_plan.h"
#include "run_record.h"
#include "wormhole/io/hdf5_collective.h"
#include "wormhole/io/slowdown_collective.h"
#include "wormhole/core/input_error.h"
#include "wormhole/core/release.h"
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
    ++finished_, finished_bytes_ += f.size_bytes;
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
  uint64_t finished_bytes() const { return finished_bytes_; }
  std::vector<TaggedPfc> pfc_;

 private:
  const Network& net_;
  TextOutputs* out_;
  bool progress_;
  uint64_t finished_ = 0, finished_bytes_ = 0;
  ProgressLine line_{"rank 0: "};
};

/// Runs `step` on every rank; if it throws on any, every rank learns it (no rank is left waiting in
/// a collective), the lowest rank that failed prints its message and all return the highest exit
/// status over the ranks (2: InputError, 4: OutputError, 1: anything else).
template <class F>
std::optional<int> agree(int rank, F&& step) {
  int status = 0;
  std::string message;
  try {
    step();
  } catch (const InputError& e) {
    status = 2, message = e.what();
  } catch (const OutputError& e) {
    status = 4, message = e.what();
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


/// The run's cut: the rank map and what it was weighed by.
struct Cut {
  RankMap map;
  /// What the cut was weighed by: a flow file's flows, or a training scenario's expected traffic (its
  /// flows come as it runs); the flows sent per rank are printed from it.
  std::vector<CutFlow> flows;
};

/// The run's results after the engine ran, besides each rank's own flow records (on disk, FlowResults):
/// on rank 0 every flow record (streamed to `records`, on disk) and their slowdown statistics (for the
/// results file and the summary); on every rank every PFC row in the run's order (those after a
/// client's stop left out) with the rank that recorded it; the statistics; rank 0 also every rank's times.
struct Gathered {
  SlowdownStats slowdown;
  std::vector<PfcRecord> pfc;
  std::vector<uint64_t> my_pfc_rows;
  std::vector<PfcRecord> my_pfc;
  std::vector<LateAck> late;
  size_t diverged = 0;  ///< rank 0: late acknowledgements that came after their flow had finished
  std::vector<RankTimes> times;
  RunStats stats;
};

/// Collective. `retired`: the records of this rank's flows the network retired as it ran, to which
/// those it still holds are added. `records`: rank 0's sink for every flow's record (nullptr elsewhere).
/// Throws once every collective is done: on rank 0 if the records' file cannot be written (OutputError)
/// or the ranks' flow ids are not exactly 0 .. n - 1 (std::logic_error); on a rank whose own records
/// cannot be read back (OutputError); on every rank if any of these happened, or as
/// slowdown_stats_collective does.
Gathered gather_results(Network& net, int rank, const DistributedEngine& engine, const RankObserver& obs, double wall,
                        FlowResults& retired, FlowResults* records) {
  Gathered g;
  g.stats = reduce_stats(MPI_COMM_WORLD, net);
  MPI_Allreduce(&wall, &g.stats.wall_s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  add_held_flows(net, retired);
  g.late = gather_to_root(MPI_COMM_WORLD, net.late_acks());
  g.times = gather_to_root(MPI_COMM_WORLD, std::vector<RankTimes>{engine.times()});
  // Every rank learns every PFC row's place (rows are few): each writes its own into /pfc.
  std::vector<TaggedPfc> mine = obs.pfc_;
  for (TaggedPfc& p : mine) p.rank = static_cast<uint32_t>(rank);
  std::vector<TaggedPfc> pfc = gather_to_all(MPI_COMM_WORLD, mine);
  std::sort(pfc.begin(), pfc.end(), [](const TaggedPfc& a, const TaggedPfc& b) {
    return a.at.before(b.at) || (!b.at.before(a.at) && a.seq < b.seq);
  });
  for (const TaggedPfc& p : pfc) {
    if (engine.stopped() && net.client_clock().after_stop(p.at, p.exec)) continue;
    if (p.rank == static_cast<uint32_t>(rank)) g.my_pfc.push_back(p.rec), g.my_pfc_rows.push_back(g.pfc.size());
    g.pfc.push_back(p.rec);
  }
  // Last, so that a failure to write them leaves no rank inside a collective. Each record passing is
  // checked against the late acknowledgements of its flow (rank 0 has them all by now).
  const auto by_flow = [](const LateAck& a, const LateAck& b) { return a.flow < b.flow; };
  std::sort(g.late.begin(), g.late.end(), by_flow);
  std::exception_ptr failed;
  const auto own = [&retired](const auto& give) { retired.for_each(give); };
  try {
    // Rounds of 2^15 records (2.6 MB on rank 0, a 1/ranks share of it on each rank).
    gather_to_root_in_chunks<FlowRecord>(MPI_COMM_WORLD, retired.size(), own, 1 << 15, [&](const FlowRecord& r) {
      const auto [lo, hi] = std::equal_range(g.late.begin(), g.late.end(), LateAck{r.id, 0}, by_flow);
      for (auto a = lo; a != hi; ++a) g.diverged += r.finished() && r.finish <= a->at;
      if (failed) return;
      try {
        records->flow_retired(r);
      } catch (...) {
        failed = std::current_exception();
      }
    });
  } catch (...) {  // this rank's records could not be read back: it took part in every round all the same
    if (!failed) failed = std::current_exception();
  }
  // Collective, so every rank takes part before one says its failure (every rank then throws).
  try {
    g.slowdown = slowdown_stats_collective(MPI_COMM_WORLD, retired, failed ? nullptr : records, failed != nullptr);
  } catch (...) {
    if (!failed) throw;
  }
  if (failed) std::rethrow_exception(failed);
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
  if (g.diverged)
    std::fprintf(stderr,
                 "wormhole: warning: %zu retransmitted duplicates were acknowledged after their flow had finished (one "
                 "process drops them): the results may differ from a single-process run\n",
                 g.diverged);
}

/// Cuts the network (or reads the map): weighed by the flows of a flow file, or by the expected traffic
/// of a training scenario (the workload's, the trace's or every job's, and its background flows).
Cut cut(const RunOptions& o, RunPlan& plan, int ranks) {
  Cut c;
  c.flows = cut_traffic(plan.net(), plan.training() ? &plan.workload() : nullptr);
  plan.net().routing();  // the routes the flows will take (built once: the run uses them)
  const Fabric& fab = plan.net().fabric();
  c.map = o.rank_map.empty() ? cut_network(o.scenario, plan.topo(), fab, c.flows, static_cast<uint32_t>(ranks), o.linear)
                             : read_rank_map(o.rank_map, plan.topo(), fab, c.flows, static_cast<uint32_t>(ranks));
  return c;
}

/// The options of a distributed run: same-time events in the order that does not depend on the cut
/// (Event::make_key). Throws InputError for EVENT_ORDER reference and for --linear with --rank-map; notes
/// (`speak`) that the scenario's own EVENT_ORDER reference is replaced.
RunOptions portable_options(const RunOptions& o, int ranks, bool speak) {
  RunOptions portable = o;
  portable.distributed = true;
  portable.ranks = static_cast<uint32_t>(ranks);
  const bool training = std::filesystem::path(o.scenario).extension() == ".toml";
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
  if (given) return portable;
  const SimConfig asked =
      training ? read_scenario(o.scenario, parse_sets(o.sets)).net : read_hpcc_config(o.scenario, parse_sets(o.sets));
  if (!asked.portable_order && asked.key_origin.count("EVENT_ORDER") && speak)
    std::fprintf(stderr, "wormhole: note: %s asks for EVENT_ORDER reference; a distributed run orders same-time "
                         "events portably (its results are those of one process run with --set "
                         "EVENT_ORDER=portable)\n",
                 o.scenario.c_str());
  portable.sets.push_back(training ? "network.EVENT_ORDER=portable" : "EVENT_ORDER=portable");
  return portable;
}

void print_start(const RunOptions& o, const RunPlan& plan, const Cut& c, int ranks) {
  fmt::print("distributed run over {} ranks (EVENT_ORDER portable: the results of one process run with --set "
             "EVENT_ORDER=portable): ",
             ranks);
  print_rank_summary(plan.topo(), c.flows, c.map,
                     !o.rank_map.empty() ? "rank map " + o.rank_map : o.linear ? "linear" : "METIS k-way", plan.training());
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
  std::optional<RunPlan> plan;
  Cut c;
  std::optional<DistributedEngine> engine;
  // Wormhole's controller (and memoizer) on every rank, alike; its ticks are held between windows
  // (engine.h). The memo store is sharded over the ranks: every rank reads a --memo file and keeps its
  // shard, writes that shard at the end, and rank 0 merges the shards into the memo file.
  std::optional<WormholeSession> wormhole;
  if (auto failed = agree(rank, [&] {
        plan.emplace(RunPlan::load(portable_options(o, ranks, lead), lead));
        plan->name_outputs(o);  // the paths; the folders once every input is checked
        if (!plan->cfg().portable_order)  // e.g. a quoted "reference" on the command line
          throw InputError("command line", 0, "EVENT_ORDER reference: a distributed run orders same-time events portably",
                           "drop it, or set EVENT_ORDER=portable; the reference order needs one process");
        c = cut(o, *plan, ranks);
      }))
    return *failed;
  // A step of its own: the engine's constructor is collective, so no rank may have failed alone before it.
  if (auto failed = agree(rank, [&] {
        engine.emplace(plan->net(), MPI_COMM_WORLD, c.map, plan->client_lookahead());
        wormhole.emplace(plan->net(), plan->cfg(), plan->until(), o.memo_in, speak, static_cast<uint32_t>(rank),
                         static_cast<uint32_t>(ranks));
        if (wormhole->controller()) wormhole->controller()->set_exchange(&*engine);
        if (lead) plan->check_memo_out(o);
      }))
    return *failed;
  const SimConfig& cfg = plan->cfg();
  Network& net = plan->net();
  std::unique_ptr<TextOutputs> text;
  // The monitors: each rank samples and traces its own nodes, rank 0 writes the files (monitor_exchange.h).
  std::unique_ptr<MonitorSession> monitors;
  if (auto failed = agree(rank, [&] {
        // Outputs last, by rank 0 (the others write only results.h5, after many collectives).
        if (lead) plan->make_outputs(o);
        if (lead && plan->training())
          WormholeSession::collective_unused(cfg, "a distributed run does not have it yet");
        wormhole->set_memo_path(plan->memo_path(o));
        // After the cut (the engine gave the network its ranks); files by rank 0, after the others, and
        // before fct.txt and pfc.txt are truncated (a monitor file that cannot be made leaves them as they were).
        monitors = std::make_unique<MonitorSession>(net, cfg, plan->monitor_plan(), MPI_COMM_WORLD, c.map.rank_of);
        engine->set_window_hook(monitors->window_hook());
        if (lead) text = std::make_unique<TextOutputs>(plan->fct(), plan->pfc(), plan->origin());
      }))
    return *failed;
  if (speak) {
    plan->print_header(*monitors);
    print_start(o, *plan, c, ranks);
    if (engine->lookahead() < c.map.lookahead_ps)
      std::printf("windows of %.3f ns: the workload's send latency, shorter than the cut's lookahead%s\n",
                  double(engine->lookahead()) / kNs,
                  engine->lookahead() < 100 * kNs ? " (WARNING: below 100 ns, the ranks synchronise very often)" : "");
  }
  release_storage(c.flows);  // the cut is made
  if (speak && cfg.wormhole.enabled && cfg.wormhole.threads != 1) {
    // mpirun binds each rank to one core by default (up to 2 ranks): its oneTBB threads then share it.
    cpu_set_t cpus;
    if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) == 1 &&
        std::thread::hardware_concurrency() > static_cast<unsigned>(ranks))
      std::fprintf(stderr, "wormhole: note: rank 0 is bound to one CPU (mpirun's default binding), so Wormhole's "
                           "threads share it; mpirun --bind-to none (or srun --cpus-per-task=N) lets them spread\n");
  }
  // Each rank's finished flows leave it once their window stands, their records (of the flows it
  // sends) to a file of its own beside the results.
  std::unique_ptr<FlowResults> retired;
  if (auto failed = agree(rank, [&] {
        retired = std::make_unique<FlowResults>(std::filesystem::path(plan->results()).parent_path().string());
        retired->hold_some();
        net.retire_flows_to(retired.get());
      }))
    return *failed;
  RankObserver obs(net, text.get(), speak);
  // The training work on every rank, alike (TrainingClient): it hears every completion at the window
  // edges, in the run's order. Rank 0 also writes each job's fct.txt as its flows finish.
  TrainingWork work;
  if (auto failed = agree(rank, [&] { work = plan->make_work(obs, nullptr, lead); })) return *failed;
  TrainingClient* const client = work.client.get();
  // Every rank holds every flow and hears every completion, so rank 0 can tell the share done.
  plan->set_progress(obs.progress(), work, [&obs] { return obs.finished_bytes(); });
  MPI_Barrier(MPI_COMM_WORLD);  // the wall clock starts together
  const auto t0 = std::chrono::steady_clock::now();
  if (client) client->start(plan->until());
  engine->run(plan->until());
  const bool complete = client ? client->finish(plan->until()) : true;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Every flow's record, streamed to rank 0 into a file of its own beside the results (as one process
  // spills them), for the summary and the reports.
  std::unique_ptr<FlowResults> records;
  Gathered g;
  if (auto failed = agree(rank, [&] {
        // Ranges of 2^15 ids: reading them back (the summary, the reports) holds one range, 2.6 MB.
        if (lead)
          records = std::make_unique<FlowResults>(std::filesystem::path(plan->results()).parent_path().string(), 15);
      }))
    return *failed;
  if (auto failed = agree(rank, [&] { g = gather_results(net, rank, *engine, obs, wall, *retired, records.get()); })) return *failed;
  // The monitors' ends as one process has them.
  if (auto failed = agree(rank, [&] {
        monitors->finish(plan->monitor_ends(net.client_now(), g.stats.last_finish,
                                            g.slowdown.finished == g.slowdown.total, net.stopped_by_signal()),
                         engine->stopped());
      }))
    return *failed;
  if (wormhole->controller()) {
    uint64_t counts[3] = {net.events_discarded(), net.packets_bypassed(), net.packets_held()};
    MPI_Allreduce(MPI_IN_PLACE, counts, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    wormhole->set_rank_totals(g.stats.events, counts[0], counts[1], counts[2]);
    // The memo shards' own figures, summed; what each shard holds, for the summary.
    const std::array<uint64_t, 3> m = wormhole->memo_shard_counts();
    uint64_t sums[2] = {m[0], m[1]};
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    std::vector<uint64_t> held(static_cast<size_t>(ranks));
    MPI_Allgather(&m[2], 1, MPI_UINT64_T, held.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
    wormhole->set_memo_totals(sums[0], sums[1], std::move(held));
  }

  // Nothing reads a flow's state or an event from here on (print_outcome is given no network).
  net.release_run_state();
  trim_heap();
  RunMetadata meta = plan->run_record(g.stats, o.command_line, lead);  // only rank 0 writes /topology
  const int stopped = note_interrupt(meta, net, g.stats.sim_end);
  // One results file, each rank writing its own rows through MPI-IO.
  const std::vector<JobReport> jobs = plan->job_reports(work);
  if (auto failed = agree(rank, [&] {
        try {
          const OwnedFlows mine{retired->size(), [&](const auto& take) { retired->for_each(take); }};
          write_hdf5_results_collective(MPI_COMM_WORLD, plan->results(), mine, net.flow_count(), g.my_pfc,
                                        g.my_pfc_rows, g.pfc.size(), meta, g.slowdown, work.report, wormhole->report(),
                                        work.jobs ? &jobs : nullptr);
        } catch (const InputError&) {
          throw;  // agreed by every rank (the file cannot be created or written): said once
        } catch (const std::invalid_argument&) {
          throw;  // agreed too
        } catch (const std::exception& e) {
          // An HDF5 failure inside a collective call may have left other ranks waiting in it.
          std::fprintf(stderr, "wormhole: error (rank %d): writing %s: %s\n", rank, plan->results().c_str(), e.what());
          MPI_Abort(MPI_COMM_WORLD, 1);
        }
      }))
    return *failed;
  // pfc.txt before the memo file, as one process writes them.
  if (auto failed = agree(rank, [&] {
        if (!lead) return;
        for (const PfcRecord& p : g.pfc) text->pfc(p);
        text->flush();
      }))
    return *failed;
  // Each rank's memo shard, a file of its own beside the memo file named for this run (rank 0's pid:
  // another run's shards or a user's file of a like name are never taken), merged by rank 0 below.
  long run_token = static_cast<long>(::getpid());
  MPI_Bcast(&run_token, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  const std::string token = std::to_string(run_token);
  if (auto failed = agree(rank, [&] { wormhole->write_memo_shard(static_cast<uint32_t>(rank), token); })) {
    wormhole->remove_memo_shard(static_cast<uint32_t>(rank), token);
    return *failed;
  }
  std::optional<int> failed = agree(rank, [&] {
    if (!lead) return;
    wormhole->merge_memo_shards(static_cast<uint32_t>(ranks), token);
    const FlowResults& flows = *records;
    warn_late_acks(g);
    plan->write_reports(work, flows);
    if (stopped) {
      print_interrupted(meta, obs.finished(), flows.size(), plan->interrupted_outputs());
      return;
    }
    plan->print_outcome(complete, work, flows, g.slowdown, g.stats, g.pfc.size(), meta.cc, o.quiet, nullptr);
    if (o.quiet) {
      wormhole->print_warnings();
      return;
    }
    wormhole->print_summary();
    print_rank_times(g);
    fmt::print("{}\n", plan->outputs_line(wormhole->memo_path(), *monitors));
  });
  if (failed) return *failed;
  if (stopped) return stopped;
  return RunPlan::exit_status(complete);
}

}  // namespace wh
