// `wormhole run SCENARIO.toml` with [[job]] entries: several training jobs (and optional background
// flows) on one fabric (docs/workloads.md §11). Outputs: the fabric's fct.txt, pfc.txt, results.h5
// and jobs.csv in the output folder; each job's fct.txt and workload CSVs in a folder of its name.
#include <fmt/core.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "memory_check.h"
#include "progress.h"
#include "run_command.h"
#include "wormhole/cc/factory.h"
#include "wormhole/io/flows.h"
#include "wormhole/core/input_error.h"
#include "wormhole/io/workload_results.h"
#include "wormhole/scenario/scenario.h"
#include "wormhole/workload/jobs.h"
#include "wormhole_session.h"

namespace wh {

namespace {

namespace fs = std::filesystem;

/// The fabric's text outputs and progress, plus each job's own fct.txt (finish order, as the fabric's).
class JobOutputs final : public NetObserver {
 public:
  JobOutputs(RunObserver& fabric, std::vector<std::string> job_fct) : fabric_(fabric) {
    for (const std::string& p : job_fct) {
      files_.emplace_back(p, std::ios::binary);
      if (!files_.back()) throw InputError(p, 0, "cannot write the job's fct.txt", "choose a writable output folder");
    }
  }
  void set_jobs(const JobSet* jobs) { jobs_ = jobs; }
  void flow_finished(const FlowRecord& f) override {
    fabric_.flow_finished(f);
    const size_t j = jobs_->job_of_flow(f.id);
    if (j < files_.size()) files_[j] << fct_line(f);
  }
  void pfc(const PfcRecord& p) override { fabric_.pfc(p); }
  void tick(Time now, uint64_t events, uint64_t done) override { fabric_.tick(now, events, done); }

 private:
  RunObserver& fabric_;
  const JobSet* jobs_ = nullptr;
  std::vector<std::ofstream> files_;
};

std::string us(Time t) { return fmt::format("{:.3f}", double(t) / kUs); }

}  // namespace

int run_jobs_scenario(const RunOptions& o) {
  const auto overrides = run_overrides(o, "wormhole.memo", "true");
  Scenario sc = read_scenario(o.scenario, overrides);
  for (const std::string& w : sc.warnings) std::fprintf(stderr, "wormhole: warning: %s\n", w.c_str());
  for (const std::string& w : sc.net.warnings) std::fprintf(stderr, "wormhole: warning: %s\n", w.c_str());
  warn_unused_wormhole(sc.net, sc.wormhole_table);

  // Inputs first, all of them: nothing is written until every input has been checked.
  const SimaiTopology topo = build_topology(sc);
  std::vector<Workload> workloads;
  std::vector<PlacementRequest> requests;
  for (const JobSpec& j : sc.jobs) {
    workloads.push_back(read_simai_workload(j.workload));
    for (const std::string& m : workloads.back().header.warnings) std::fprintf(stderr, "wormhole: warning: %s\n", m.c_str());
    requests.push_back({j.gpus, j.count, j.policy});
  }
  std::vector<std::vector<uint32_t>> hosts;
  try {
    hosts = place_jobs(requests, topo.gpus, topo.gpus_per_server);
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();  // "job K: ..."
    const size_t k = std::stoul(what.substr(4));
    throw InputError(sc.path, sc.jobs[k].line, "[[job]] " + sc.jobs[k].name + ": " + what.substr(what.find(": ") + 2),
                     "give each job GPUs of its own, within the topology's " + std::to_string(topo.gpus));
  }
  std::vector<JobRun> runs;
  for (size_t k = 0; k < sc.jobs.size(); ++k) {
    const JobSpec& j = sc.jobs[k];
    JobRun run;
    run.workload = &workloads[k];
    const PipelineSchedule pipeline = j.pipeline_set ? j.pipeline : sc.workload.pipeline;
    const auto n = static_cast<uint32_t>(hosts[k].size());
    std::vector<std::string> notes;
    try {
      // The job's own numbering counts servers of gcd(GPUs, GPUs per server): a 4-GPU job on 8-GPU servers
      // is one server of 4 (rings and groups follow the job's numbering, docs/workloads.md §11).
      run.layout = make_layout(workloads[k].header, n, std::gcd(n, topo.gpus_per_server),
                               pipeline != PipelineSchedule::None, &notes);
    } catch (const std::invalid_argument& e) {
      throw InputError(workloads[k].file, 1, fmt::format("workload does not fit job {} ({} GPUs): {}", j.name, n, e.what()),
                       "give the job a GPU count the workload's TP, PP and EP divide");
    }
    for (const std::string& m : notes)
      std::fprintf(stderr, "wormhole: warning: %s:1: %s\n", workloads[k].file.c_str(), m.c_str());
    const uint32_t chunks = check_pipeline(workloads[k], run.layout, pipeline, sc.workload.virtual_stages);
    DriverOptions& d = run.options;
    d.iterations = j.iterations ? j.iterations : sc.workload.iterations;
    d.send_latency = sc.workload.send_latency;
    d.zero_chunk = sc.workload.zero_chunk;
    d.pipeline = pipeline;
    d.virtual_stages = chunks;
    d.start = j.start;
    d.hosts = hosts[k];
    for (const std::string& g : sc.workload.ignore_groups)
      for (CommGroup c : {CommGroup::TP, CommGroup::DP, CommGroup::EP, CommGroup::DP_EP})
        if (g == to_string(c)) d.ignore_group[static_cast<size_t>(c)] = true;
    runs.push_back(std::move(run));
  }
  std::vector<FlowSpec> background;
  if (!sc.background.file.empty()) {
    std::vector<std::string> notes;
    background = read_flows(sc.background.file, topo.topo, &notes);
    for (const std::string& m : notes) std::fprintf(stderr, "wormhole: note: %s\n", m.c_str());
    if (!background.empty()) {
      const Time shift = sc.background.begin - background.front().start;  // starts are sorted
      for (FlowSpec& f : background) f.start += shift;
    }
  }

  if (o.check_memory) {  // before the network is built: the fabric, the background flows, each job's plans
    MemoryEstimate m;
    m.network = estimate_network_bytes(topo.topo);
    m.flows = background.size() * (bytes_per_flow() + bytes_per_running_flow());  // they may all run at once
    for (const JobRun& run : runs) {
      const WorkloadFlowCount c = count_workload_flows(*run.workload, run.layout, run.options);
      m.plans += c.plan_bytes;
      m.run_flows += c.flows * bytes_per_flow();
      m.run_flow_count += c.flows;
    }
    std::string source;
    const uint64_t limit = memory_limit(o.memory_limit, &source);
    check_memory(m, limit, source, sc.path, sc.topology.line, !o.quiet);
  }
  SimConfig cfg = sc.net;
  std::string cc_warning;
  auto cc = make_cc(cfg, &cc_warning);
  if (!cc_warning.empty()) std::fprintf(stderr, "wormhole: warning: %s\n", cc_warning.c_str());
  Network net(cfg, topo.topo, std::move(cc));
  warn_ns_truncation(cfg, topo.topo);
  if (const std::string h = net.headroom_warning(); !h.empty()) std::fprintf(stderr, "wormhole: warning: %s\n", h.c_str());
  if (!background.empty()) net.add_flows(background, sc.background.file);
  Time until = cfg.stop_time();
  if (sc.workload.max_time > 0) until = std::min(until, sc.workload.max_time);
  WormholeSession wormhole(net, cfg, until, o.memo_in);
  WormholeSession::collective_unused(cfg, "several jobs share the fabric (one workload per run uses it)");

  // Outputs.
  const std::string dir = o.output_dir.empty() ? sc.output_dir : o.output_dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(sc.path, 0, "output folder " + dir + ": " + ec.message(), "choose a writable folder ([output] dir or -o)");
  const std::string out = fs::absolute(dir).string();
  cfg.fct_output_file = (fs::path(out) / "fct.txt").string();
  cfg.pfc_output_file = (fs::path(out) / "pfc.txt").string();
  const std::string results = o.results.empty() ? (fs::path(out) / "results.h5").string() : o.results;
  check_output_dir(results, {"command line", 0}, "results file");
  if (!o.memo_out.empty()) check_memo_out(o.memo_out, {results, cfg.fct_output_file, cfg.pfc_output_file});
  wormhole.set_memo_path(o.memo_out.empty() ? (fs::path(results).parent_path() / "memo.h5").string() : o.memo_out);
  std::vector<std::string> job_fct;
  for (const JobSpec& j : sc.jobs) {
    fs::create_directories(fs::path(out) / j.name, ec);
    if (ec) throw InputError(sc.path, j.line, "output folder for job " + j.name + ": " + ec.message(), "choose a writable folder");
    job_fct.push_back((fs::path(out) / j.name / "fct.txt").string());
  }
  TextOutputs text(cfg.fct_output_file, cfg.pfc_output_file, sc.path);
  RunObserver fabric(text, o.quiet);
  JobOutputs outputs(fabric, job_fct);
  JobSet jobs(net, std::move(runs), &outputs);
  outputs.set_jobs(&jobs);
  if (!o.quiet) {
    fmt::print("{}: {} jobs on {} GPUs ({} per server), {} nodes, {} links{}\n", sc.name, sc.jobs.size(), topo.gpus,
               topo.gpus_per_server, topo.topo.num_nodes, topo.topo.links.size(),
               background.empty() ? "" : fmt::format(", {} background flows", background.size()));
    for (size_t k = 0; k < sc.jobs.size(); ++k)
      fmt::print("  job {}: GPUs {}-{} ({} GPUs), start {} us\n", sc.jobs[k].name, hosts[k].front(), hosts[k].back(),
                 hosts[k].size(), us(sc.jobs[k].start));
  }
  const auto t0 = std::chrono::steady_clock::now();
  const bool complete = jobs.run(until);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  text.flush();

  auto [records, meta] = collect_results(net, cfg, sc.path, wall);
  write_hdf5_results(results, records, fabric.pfc_, meta, nullptr, wormhole.report());
  wormhole.write_memo();
  // jobs.csv: one row per job.
  std::vector<size_t> flows(sc.jobs.size() + 1, 0);
  for (uint32_t id = 0; id < net.flow_count(); ++id) ++flows[jobs.job_of_flow(id)];
  std::ofstream csv(fs::path(out) / "jobs.csv");
  csv << "job,gpus,first_gpu,last_gpu,start_us,iterations,end_us,mean_iteration_us,flows,exposed_comm_us,bubble_us,complete\n";
  for (size_t k = 0; k < sc.jobs.size(); ++k) {
    const WorkloadReport& rep = jobs.report(k);
    write_workload_csvs((fs::path(out) / sc.jobs[k].name).string(), rep);
    const Time end = rep.iterations.empty() ? 0 : rep.iterations.back().end;
    const Time mean = rep.iterations.empty() ? 0 : (end - sc.jobs[k].start) / Time(rep.iterations.size());
    csv << sc.jobs[k].name << ',' << hosts[k].size() << ',' << hosts[k].front() << ',' << hosts[k].back() << ','
        << us(sc.jobs[k].start) << ',' << rep.iterations.size() << ',' << us(end) << ',' << us(mean) << ','
        << flows[k] << ',' << us(rep.end_to_end.total_exposed) << ',' << us(rep.end_to_end.bubble) << ','
        << (rep.complete() ? 1 : 0) << '\n';
  }
  for (size_t k = 0; k < sc.jobs.size(); ++k) {
    const WorkloadReport& rep = jobs.report(k);
    if (!rep.complete())
      std::fprintf(stderr, "wormhole: error: job %s incomplete: %s\n", sc.jobs[k].name.c_str(), rep.incomplete.c_str());
    if (o.quiet) continue;
    fmt::print("job {}:", sc.jobs[k].name);
    for (const IterationRecord& it : rep.iterations)
      fmt::print(" iteration {} {} us{};", it.index, us(it.end - it.start), it.complete ? "" : " (INCOMPLETE)");
    fmt::print(" exposed communication {} us{}; {} flows\n", us(rep.end_to_end.total_exposed),
               rep.pp > 1 ? fmt::format(", bubble {} us", us(rep.end_to_end.bubble)) : "", flows[k]);
  }
  if (!o.quiet) {
    size_t bg_done = 0;
    for (uint32_t id = 0; id < net.flow_count(); ++id)
      bg_done += jobs.job_of_flow(id) == sc.jobs.size() && net.flow_info(id).finished();
    if (!background.empty()) fmt::print("background: {} of {} flows finished\n", bg_done, background.size());
    print_run_summary(records, meta.stats, fabric.pfc_.size(), wall, cc_display_name(cfg.cc_mode));
    wormhole.print_summary();
    fmt::print("outputs: {} (jobs.csv; per job: {}/<job>/)\n", out, out);
  } else {
    wormhole.print_warnings();
  }
  return complete ? 0 : 3;
}

}  // namespace wh
