// The run plan (run_plan.h): what a `wormhole run` does that depends on its kind of scenario.
#include "run_plan.h"

#include <fmt/core.h>

#include <cstdio>
#include <filesystem>

#include "progress.h"
#include "run_record.h"
#include "wormhole/io/workload_results.h"
#include "wormhole/version.h"

namespace wh {

RunPlan RunPlan::load(const RunOptions& o, bool speak) {
  RunPlan p;
  if (std::filesystem::path(o.scenario).extension() == ".toml")
    p.workload_ = std::make_unique<WorkloadRun>(load_workload_run(o, speak));
  else
    p.config_ = std::make_unique<ConfigRun>(load_config_run(o, speak));
  return p;
}

void RunPlan::name_outputs(const RunOptions& o) {
  if (training()) make_workload_outputs(o, *workload_, false);
}

void RunPlan::make_outputs(const RunOptions& o) {
  namespace fs = std::filesystem;
  // --memo-out's folder may be the one -o is about to make; any other must exist before anything is made.
  const fs::path memo_dir = fs::path(o.memo_out).parent_path();
  const bool in_output_dir =
      !memo_dir.empty() && fs::weakly_canonical(memo_dir) == fs::weakly_canonical(fs::path(results()).parent_path());
  if (!o.memo_out.empty() && !in_output_dir) check_output_dir(o.memo_out, {"command line", 0}, "--memo-out file", false);
  if (training()) make_workload_outputs(o, *workload_, true);
  else check_config_outputs(*config_);
  if (!o.memo_out.empty()) {  // its folder may be the one -o just made; and it may name one just made
    check_output_dir(o.memo_out, {"command line", 0}, "--memo-out file", false);
    wh::check_memo_out(o.memo_out, output_files());
  }
  if (training()) write_topology_copy(*workload_);
}

std::string RunPlan::memo_path(const RunOptions& o) const {
  return o.memo_out.empty() ? (std::filesystem::path(results()).parent_path() / "memo.h5").string() : o.memo_out;
}

std::vector<std::string> RunPlan::output_files() const {
  namespace fs = std::filesystem;
  std::vector<std::string> files = {results(), fct(), pfc()};
  const MonitorSession::Plan m = monitor_plan();
  for (const std::string* p : {&m.qlen, &m.trace, &m.ports, &m.bw, &m.rate, &m.cnp})
    if (!p->empty()) files.push_back(*p);
  if (!training()) return files;
  const WorkloadRun& r = *workload_;
  const auto csvs = [&files](const fs::path& dir) {
    for (const std::string& name : workload_csv_names()) files.push_back((dir / name).string());
  };
  if (r.jobs.empty()) csvs(r.out);
  else files.push_back((fs::path(r.out) / "jobs.csv").string());
  for (const std::string& d : r.job_dirs) files.push_back((fs::path(d) / "fct.txt").string()), csvs(d);
  if (!r.sc.topology.write.empty()) files.push_back((fs::path(r.out) / r.sc.topology.write).string());
  return files;
}

void RunPlan::check_memo_out(const RunOptions& o) const {
  if (!o.memo_out.empty()) wh::check_memo_out(o.memo_out, output_files());
}

MonitorSession::Plan RunPlan::monitor_plan() const {
  if (training()) return workload_->monitors;
  return MonitorSession::plan(cfg(), results(), static_cast<uint32_t>(net().nodes().size()));
}

TrainingWork RunPlan::make_work(NetObserver& forward, CollectiveMemo* collective_memo, bool writes_outputs) {
  TrainingWork w;
  if (!training()) {
    net().set_observer(&forward);  // the flows' completions come straight from the network
    return w;
  }
  WorkloadRun& r = *workload_;
  std::unique_ptr<JobFctFiles> job_files;
  if (!r.jobs.empty()) {
    std::vector<std::string> paths;  // each job's own fct.txt
    if (writes_outputs)
      for (const std::string& d : r.job_dirs) paths.push_back((std::filesystem::path(d) / "fct.txt").string());
    job_files = std::make_unique<JobFctFiles>(forward, paths);
  }
  r.options.memo = collective_memo;
  const std::string folder = std::filesystem::path(results()).parent_path().string();
  r.options.flow_tags = writes_outputs, r.options.flow_tag_dir = folder;
  for (JobRun& j : r.jobs) j.options.flow_tags = writes_outputs, j.options.flow_tag_dir = folder;
  w = make_training_work(r, job_files ? job_files.get() : &forward);
  if (job_files) job_files->set_jobs(w.jobs);
  w.job_files = std::move(job_files);
  return w;
}

CollectiveMemo* RunPlan::collective_memo(WormholeSession& wormhole) {
  if (!training()) {
    WormholeSession::collective_unused(cfg(), "a flow file's flows are no collectives (it replays a training workload's)");
    return nullptr;
  }
  const WorkloadRun& r = *workload_;
  const SimConfig& c = cfg();
  if (!r.jobs.empty()) WormholeSession::collective_unused(c, "several jobs share the fabric (one workload per run uses it)");
  else if (!r.background.empty()) WormholeSession::collective_unused(c, "background flows share the fabric");
  else return wormhole.collective_memo(net(), c);
  return nullptr;
}

void RunPlan::set_progress(ProgressLine& line, const TrainingWork& work, std::function<uint64_t()> finished) const {
  if (TrainingClient* client = work.client.get()) {
    // A workload runs from 0 s, so its share of the time to a cut is a pace. A flow file's is not: by the
    // reference's convention its flows start at 2 s and SIMULATOR_STOP_TIME (4 s) is only a bound, so
    // the time's share would claim half the run done at its first flow.
    line.set_end(until());
    line.set_fraction([client] { return client->progress(); },
                      workload_->chakra.ranks.empty() ? "the workload's bytes" : "trace nodes");
    return;
  }
  // By bytes, as a workload's: the flows of a flow file differ in size by orders of magnitude, and a
  // set of long flows that end together would read 0 % until they do.
  const Network* n = &net();
  line.set_fraction(
      [n, finished] {
        return n->flow_bytes() == 0 ? -1.0
                                    : std::min(1.0, (double(finished()) + n->running_bytes().done()) / double(n->flow_bytes()));
      },
      "the flows' bytes");
}

void RunPlan::print_header(const MonitorSession& monitors) {
  if (training()) {
    print_training_header(*workload_);
    if (monitors.any()) monitors.print_estimate(run_traffic(*workload_));
    return;
  }
  std::printf("maxRtt=%lu maxBdp=%lu\n", static_cast<unsigned long>(net().routing().max_rtt_ns()),
              static_cast<unsigned long>(net().routing().max_bdp_bytes()));
  monitors.print_estimate(config_->specs);
}

MonitorEnds RunPlan::monitor_ends(Time now, Time last_finish, bool all_finished, bool cut) const {
  if (training() || cut) return {now, now, false};
  const SimConfig& c = cfg();
  if (c.port_mon_end_ns) return {c.stop_time(), c.stop_time(), false};
  // Its finished flows' cancelled timers run on to their deadlines: rows past the last flow hold nothing.
  if (all_finished && last_finish >= 0) return {c.stop_time(), last_finish, true};
  return {c.stop_time(), now, false};
}

RunMetadata RunPlan::run_record(const RunStats& stats, const std::string& command_line, bool fabric) const {
  RunMetadata meta;
  meta.scenario = origin();
  meta.version = WORMHOLE_VERSION;
  meta.settings = effective_settings(cfg());
  meta.stats = stats;
  fill_run_record(meta, net(), cfg().cc_mode, topo(), command_line,
                  training() ? workload_->overrides : config_->overrides, fabric);
  if (training()) meta.scenario_keys = scenario_values(workload_->sc);
  return meta;
}

std::vector<JobReport> RunPlan::job_reports(const TrainingWork& work) const {
  return work.jobs ? wh::job_reports(*workload_, *work.jobs) : std::vector<JobReport>{};
}

void RunPlan::write_reports(const TrainingWork& work, const FlowResults& flows) const {
  if (work.jobs) write_jobs_reports(*workload_, *work.jobs, flows);
  else if (work.report) write_workload_csvs(workload_->out, *work.report);
}

std::string RunPlan::interrupted_outputs() const {
  if (!training()) return fct() + " and " + pfc();
  return std::string("fct.txt, pfc.txt and the CSVs") + (workload_->jobs.empty() ? "" : ", jobs.csv and the jobs' CSVs") +
         " in " + workload_->out;
}

void RunPlan::print_outcome(bool complete, const TrainingWork& work, const FlowResults& flows,
                            const SlowdownStats& slowdown, const RunStats& stats, size_t pfc_frames,
                            const std::string& cc, bool quiet, const Network* net) const {
  if (!training()) {
    size_t no_path = 0;  // what LINK_DOWN left without a route (known in one process)
    if (net)
      for (uint32_t id = 0; id < net->flow_count(); ++id)
        if (!net->flow_finished(id) && net->flow_info(id).started && net->flow(id).nic == UINT32_MAX) ++no_path;
    print_unfinished(*config_, flows, stats, no_path);
    if (!quiet) print_run_summary(slowdown, stats, pfc_frames, stats.wall_s, cc);
    return;
  }
  const WorkloadRun& r = *workload_;
  if (work.jobs) {  // says which jobs are incomplete, quiet or not
    print_jobs_summary(r, *work.jobs, flows, slowdown, stats, pfc_frames, stats.wall_s, cc, quiet, net);
    return;
  }
  // A run its time limit or a signal stopped did as asked (exit status 3 still says it is incomplete);
  // one whose events ran dry with work pending could never have finished.
  if (!complete)
    std::fprintf(stderr, "wormhole: %s: workload incomplete: %s\n", work.report->stuck ? "error" : "warning",
                 work.report->incomplete.c_str());
  if (quiet) return;
  print_workload_summary(*work.report, stats, stats.wall_s, flows.size(), pfc_frames, cc);
  if (!r.background.empty()) fmt::print("{}\n", background_summary(r.background, flows, net));
}

std::string RunPlan::outputs_line(const std::string& memo, const MonitorSession& monitors) const {
  if (!training())
    return fmt::format("outputs: {} {} {}{}{}", fct(), pfc(), results(), memo.empty() ? "" : " " + memo, monitors.outputs());
  const std::string& out = workload_->out;
  const std::string m = memo.empty() ? "" : " (memo file " + memo + ")";
  const std::string mon = monitors.any() ? " (monitors:" + monitors.outputs() + ")" : "";
  if (!workload_->jobs.empty()) return fmt::format("outputs: {} (jobs.csv; per job: {}/<job>/){}{}", out, out, m, mon);
  return fmt::format("outputs: {}{}{}", out, m, mon);
}

}  // namespace wh
