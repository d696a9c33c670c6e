// `wormhole run`: the main job on an HPCC config.txt scenario.
#include "run_command.h"

#include <fmt/core.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "wormhole/cc/factory.h"
#include "wormhole/io/flows.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/io/input_error.h"
#include "wormhole/io/results_writer.h"
#include "wormhole/io/topology.h"
#include "wormhole/net/network.h"
#include "wormhole/version.h"

namespace wh {

void add_run_options(CLI::App& cmd, RunOptions& o) {
  cmd.add_option("scenario", o.scenario, "HPCC config.txt (paths in it relative to its folder or the current one)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd.add_option("-s,--set", o.sets, "override one setting, KEY=VALUE (repeatable), e.g. --set CC_MODE=1");
  cmd.add_option("--results", o.results, "HDF5 results file (default: results.h5 beside FCT_OUTPUT_FILE)");
  cmd.add_flag("-q,--quiet", o.quiet, "no progress line and no summary");
}

namespace {

using Clock = std::chrono::steady_clock;

/// Collects results, writes text outputs as flows finish and prints progress every few seconds.
class RunObserver final : public NetObserver {
 public:
  RunObserver(TextOutputs& out, bool quiet) : out_(out), quiet_(quiet), start_(Clock::now()), last_(start_) {}
  void flow_finished(const FlowRecord& f) override { out_.flow_finished(f); }
  void pfc(const PfcRecord& p) override {
    out_.pfc(p);
    pfc_.push_back(p);
  }
  void tick(Time now, uint64_t events, uint64_t done) override {
    if (quiet_) return;
    const auto t = Clock::now();
    if (t - last_ < std::chrono::seconds(5)) return;
    last_ = t;
    const double wall = std::chrono::duration<double>(t - start_).count();
    std::fprintf(stderr, "[%7.1f s] sim %.6f s, %.2f M events/s, %lu flows done\n", wall, double(now) / kSec,
                 double(events) / wall / 1e6, static_cast<unsigned long>(done));
  }
  std::vector<PfcRecord> pfc_;

 private:
  TextOutputs& out_;
  bool quiet_;
  Clock::time_point start_, last_;
};

}  // namespace

int run_command(const RunOptions& o) {
  std::vector<std::pair<std::string, std::string>> overrides;
  for (const std::string& s : o.sets) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError("command line", 0, "--set \"" + s + "\" is not KEY=VALUE", "write e.g. --set CC_MODE=1");
    overrides.emplace_back(s.substr(0, eq), s.substr(eq + 1));
  }
  const SimConfig cfg = read_hpcc_config(o.scenario, overrides);
  for (auto [key, path] : {std::pair{"TOPOLOGY_FILE", &cfg.topology_file}, {"FLOW_FILE", &cfg.flow_file}})
    if (path->empty())
      throw InputError(cfg.path, 0, std::string(key) + " is not set", std::string("add ") + key + " <path>");
  const Topology topo = read_topology(cfg.topology_file);
  const std::vector<FlowSpec> specs = read_flows(cfg.flow_file, topo);
  std::string warning;
  auto cc = make_cc(cfg, &warning);
  if (!warning.empty()) std::fprintf(stderr, "wormhole: warning: %s\n", warning.c_str());
  if (cfg.enable_trace && !o.quiet)
    std::fprintf(stderr, "wormhole: note: ENABLE_TRACE 1: the binary packet trace (mix.tr) is not written\n");

  std::string results = o.results;
  if (results.empty())
    results = (std::filesystem::path(cfg.fct_output_file).parent_path() / "results.h5").string();
  TextOutputs out(cfg.fct_output_file, cfg.pfc_output_file, cfg.path);
  {  // fail on an unwritable results path before simulating, not after
    const auto dir = std::filesystem::path(results).parent_path();
    if (!dir.empty() && !std::filesystem::is_directory(dir))
      throw InputError(cfg.path, 0, "results directory " + dir.string() + " does not exist",
                       "create it or pass --results PATH");
  }

  Network net(cfg, topo, std::move(cc));
  net.add_flows(specs);
  RunObserver obs(out, o.quiet);
  net.set_observer(&obs);
  if (!o.quiet)
    std::printf("maxRtt=%lu maxBdp=%lu\n", static_cast<unsigned long>(net.routing().max_rtt_ns()),
                static_cast<unsigned long>(net.routing().max_bdp_bytes()));
  const auto t0 = Clock::now();
  net.run(cfg.stop_time());
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  out.flush();

  std::vector<FlowRecord> records;
  records.reserve(net.flows().size());
  for (uint32_t id = 0; id < net.flows().size(); ++id) records.push_back(net.record(id));
  RunMetadata meta;
  meta.scenario = cfg.path;
  meta.version = WORMHOLE_VERSION;
  meta.settings = cfg.raw;
  meta.stats = net.stats();
  meta.stats.wall_s = wall;
  write_hdf5_results(results, records, obs.pfc_, meta);

  const SlowdownStats st = slowdown_stats(records);
  size_t unfinished = 0;
  for (const FlowRecord& r : records)
    if (!r.finished()) {
      if (unfinished++ < 10)
        std::fprintf(stderr, "wormhole: flow %u (%u -> %u, %lu B, line %d of %s) did not finish by %.3f s\n", r.id, r.src,
                     r.dst, static_cast<unsigned long>(r.size_bytes), specs[r.id].line, cfg.flow_file.c_str(),
                     cfg.simulator_stop_time_s);
    }
  if (unfinished > 10) std::fprintf(stderr, "wormhole: ... %zu flows did not finish in all\n", unfinished);
  if (!o.quiet) {
    const RunStats& s = meta.stats;
    if (st.finished == 0)
      fmt::print("flows finished 0/{}\n", st.total);
    else
      fmt::print("flows finished {}/{}; slowdown mean {:.4f} p50 {:.4f} p99 {:.4f}; FCT mean {:.3f} us p99 {:.3f} us\n",
                 st.finished, st.total, st.mean, st.p50, st.p99, st.fct_mean_us, st.fct_p99_us);
    fmt::print("events {} in {:.3f} s wall ({:.2f} M events/s); last flow finished at {:.6f} s; PFC frames {}; ECN marks {}; drops {}\n",
               s.events, wall, wall > 0 ? s.events / wall / 1e6 : 0.0, double(s.last_finish) / kSec, obs.pfc_.size(),
               s.ecn_marks, s.packets_dropped);
    fmt::print("peak switch queue {} B (node {} interface {})\n", s.max_queue_bytes, s.max_queue_node, s.max_queue_if);
    fmt::print("outputs: {} {} {}\n", cfg.fct_output_file, cfg.pfc_output_file, results);
  }
  return 0;
}

}  // namespace wh
