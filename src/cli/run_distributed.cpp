// `wormhole run` started as several MPI ranks: the distributed engine on an HPCC config.txt
// scenario. Every rank reads the inputs and builds the whole network, cuts it with the same
// deterministic map, runs its own nodes (partition/engine.h); rank 0 writes the outputs in the
// order one process would have written them.
#include <fmt/core.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "partition_command.h"
#include "progress.h"
#include "run_command.h"
#include "wormhole/io/input_error.h"
#include "wormhole/io/results_writer.h"
#include "wormhole/partition/engine.h"

namespace wh {

namespace {

/// A record and the event that made it: sorting by the event (then by the record's place in its
/// event) gives the order one process writes them in.
struct TaggedFlow {
  Event at;
  FlowRecord rec;
};
struct TaggedPfc {
  Event at;
  uint64_t seq;  // this rank's count: orders several frames of one event
  PfcRecord rec;
};

class RankObserver final : public NetObserver {
 public:
  RankObserver(const Network& net, bool progress) : net_(net), progress_(progress) {}
  void flow_finished(const FlowRecord& f) override { flows.push_back({net_.kernel().running(), f}); }
  void pfc(const PfcRecord& p) override { pfc_.push_back({net_.kernel().running(), pfc_.size(), p}); }
  void tick(Time now, uint64_t events, uint64_t done) override {
    if (!progress_) return;
    const auto t = std::chrono::steady_clock::now();
    if (t - last_ < std::chrono::seconds(5)) return;
    last_ = t;
    const double wall = std::chrono::duration<double>(t - start_).count();
    std::fprintf(stderr, "[%7.1f s] rank 0: sim %.6f s, %.2f M events/s, %lu of its flows done\n", wall,
                 double(now) / kSec, double(events) / wall / 1e6, static_cast<unsigned long>(done));
  }
  std::vector<TaggedFlow> flows;
  std::vector<TaggedPfc> pfc_;

 private:
  const Network& net_;
  bool progress_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_ = start_;
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

}  // namespace

int run_distributed(const RunOptions& o, int rank, int ranks) {
  const bool lead = rank == 0, speak = lead && !o.quiet;
  ConfigRun r;
  RankMap map;
  if (auto failed = agree(rank, [&] {
        if (std::filesystem::path(o.scenario).extension() == ".toml")
          throw InputError(o.scenario, 0,
                           "training-workload scenarios (.toml) do not run distributed yet: only HPCC config.txt "
                           "scenarios (topology + flow file) do",
                           "run it in one process (without mpirun, or mpirun -np 1)");
        if (!o.memo_in.empty() || !o.memo_out.empty())
          throw InputError("command line", 0, "--memo/--memo-out need Wormhole, which does not run distributed yet",
                           "run Wormhole in one process");
        // Same-time events in the order that does not depend on the cut (Event::make_key).
        RunOptions portable = o;
        portable.sets.push_back("EVENT_ORDER=portable");
        r = load_config_run(portable, lead);
        if (r.cfg.wormhole.enabled) {
          const auto [file, line] = r.cfg.origin_of("WORMHOLE");
          throw InputError(file, line,
                           "Wormhole (steady-state fast-forward) does not run distributed yet: a distributed run is "
                           "packet-level only",
                           "set WORMHOLE 0 (--set WORMHOLE=0), or run it in one process");
        }
        map = o.rank_map.empty() ? cut_network(o.scenario, r.topo, r.net.get(), static_cast<uint32_t>(ranks), o.linear)
                                 : read_rank_map(o.rank_map, r.topo, r.net.get(), static_cast<uint32_t>(ranks));
        check_config_outputs(r);
      }))
    return *failed;

  const SimConfig& cfg = r.cfg;
  Network& net = *r.net;
  std::optional<DistributedEngine> engine;
  if (auto failed = agree(rank, [&] { engine.emplace(net, MPI_COMM_WORLD, map); })) return *failed;
  if (speak) {
    fmt::print("distributed run over {} ranks (EVENT_ORDER portable: the results of one process run with --set "
               "EVENT_ORDER=portable): ",
               ranks);
    print_rank_summary(r.topo, r.net.get(), map,
                       !o.rank_map.empty() ? "rank map " + o.rank_map : o.linear ? "linear" : "METIS k-way");
    std::printf("maxRtt=%lu maxBdp=%lu\n", static_cast<unsigned long>(net.routing().max_rtt_ns()),
                static_cast<unsigned long>(net.routing().max_bdp_bytes()));
    std::fflush(stdout);
  }
  RankObserver obs(net, speak);
  net.set_observer(&obs);
  MPI_Barrier(MPI_COMM_WORLD);  // the wall clock starts together
  const auto t0 = std::chrono::steady_clock::now();
  engine->run(cfg.stop_time());
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // Results: each rank holds the records of the flows it sent and the PFC frames its ports got.
  RunMetadata meta;
  meta.scenario = cfg.path;
  meta.version = WORMHOLE_VERSION;
  meta.settings = effective_settings(cfg);
  meta.stats = reduce_stats(MPI_COMM_WORLD, net);
  double wall_max = wall;
  MPI_Allreduce(&wall, &wall_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  meta.stats.wall_s = wall_max;
  std::vector<FlowRecord> mine;
  for (uint32_t id = 0; id < net.flows().size(); ++id)
    if (net.owns_node(net.flow(id).src)) mine.push_back(net.record(id));
  std::vector<FlowRecord> records = gather_to_root(MPI_COMM_WORLD, mine);
  std::vector<TaggedFlow> finished = gather_to_root(MPI_COMM_WORLD, obs.flows);
  std::vector<TaggedPfc> pfc = gather_to_root(MPI_COMM_WORLD, obs.pfc_);
  std::vector<LateAck> late = gather_to_root(MPI_COMM_WORLD, net.late_acks());
  std::vector<RankTimes> times = gather_to_root(MPI_COMM_WORLD, std::vector<RankTimes>{engine->times()});

  std::optional<int> failed = agree(rank, [&] {
    if (!lead) return;
    std::sort(records.begin(), records.end(), [](const FlowRecord& a, const FlowRecord& b) { return a.id < b.id; });
    std::sort(finished.begin(), finished.end(), [](const TaggedFlow& a, const TaggedFlow& b) { return a.at.before(b.at); });
    std::stable_sort(pfc.begin(), pfc.end(), [](const TaggedPfc& a, const TaggedPfc& b) {
      return a.at.before(b.at) || (!b.at.before(a.at) && a.seq < b.seq);
    });
    TextOutputs out(cfg.fct_output_file, cfg.pfc_output_file, cfg.path);
    for (const TaggedFlow& f : finished) out.flow_finished(f.rec);
    std::vector<PfcRecord> pfc_rows;
    for (const TaggedPfc& p : pfc) out.pfc(p.rec), pfc_rows.push_back(p.rec);
    out.flush();
    write_hdf5_results(r.results, records, pfc_rows, meta);
    // One process drops a retransmitted duplicate once its sender has finished; a receiver on
    // another rank cannot know that in time. Say so if it happened (it needs an RTO).
    size_t diverged = 0;
    for (const LateAck& a : late)
      if (records[a.flow].finished() && records[a.flow].finish <= a.at) ++diverged;
    if (diverged)
      std::fprintf(stderr,
                   "wormhole: warning: %zu retransmitted duplicates were acknowledged after their flow had finished "
                   "(one process drops them): the results may differ from a single-process run\n",
                   diverged);
    print_unfinished(r, records, meta.stats, 0);
    if (o.quiet) return;
    print_run_summary(records, meta.stats, pfc_rows.size(), wall_max);
    for (int k = 0; k < ranks; ++k) {
      const RankTimes& t = times[k];
      fmt::print("rank {}: {} events; compute {:.3f} s, wait {:.3f} s, communicate {:.3f} s; {} windows; cut-link "
                 "packets {} sent, {} received\n",
                 k, t.events, t.compute_s, t.wait_s, t.comm_s, t.windows, t.packets_sent, t.packets_received);
    }
    fmt::print("outputs: {} {} {}\n", cfg.fct_output_file, cfg.pfc_output_file, r.results);
  });
  return failed ? *failed : 0;
}

}  // namespace wh
