// A scenario with [[job]] entries: several training jobs (and optional background flows) on one fabric
// (docs/workloads.md §11) — their set-up and their reports: the fabric's outputs plus /jobs in results.h5,
// jobs.csv, and each job's fct.txt and workload CSVs in a folder of its name. Both back ends of the run plan
// (run_plan.h) use them alike.
#include <fmt/core.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "run_command.h"
#include "wormhole/core/input_error.h"
#include "wormhole/io/results_writer.h"
#include "wormhole/io/workload_results.h"
#include "wormhole/scenario/background.h"
#include "wormhole/scenario/scenario.h"
#include "wormhole/workload/jobs.h"

namespace wh {

namespace {

namespace fs = std::filesystem;

}  // namespace

JobFctFiles::JobFctFiles(NetObserver& next, const std::vector<std::string>& paths) : next_(next) {
  for (const std::string& p : paths) {
    files_.emplace_back(p, std::ios::binary);
    if (!files_.back()) throw InputError(p, 0, "cannot write the job's fct.txt", "choose a writable output folder");
  }
}

void JobFctFiles::flow_finished(const FlowRecord& f) {
  next_.flow_finished(f);
  if (files_.empty()) return;
  const size_t j = jobs_->job_of_flow(f.id);
  if (j < files_.size()) files_[j] << FctLine(f).view();
}

void load_jobs(WorkloadRun& r, bool speak) {
  const Scenario& sc = r.sc;
  const SimaiTopology& topo = r.topo;
  std::vector<PlacementRequest> requests;
  r.job_workloads.reserve(sc.jobs.size());  // JobRun::workload points into it
  for (const JobSpec& j : sc.jobs) {
    r.job_workloads.push_back(read_simai_workload(j.workload));
    if (speak)
      for (const std::string& m : r.job_workloads.back().header.warnings)
        std::fprintf(stderr, "wormhole: warning: %s\n", m.c_str());
    requests.push_back({j.gpus, j.count, j.policy});
  }
  try {
    r.hosts = place_jobs(requests, topo.gpus, topo.gpus_per_server);
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();  // "job K: ..."
    const size_t k = std::stoul(what.substr(4));
    throw InputError(sc.path, sc.jobs[k].line, "[[job]] " + sc.jobs[k].name + ": " + what.substr(what.find(": ") + 2),
                     "give each job GPUs of its own, within the topology's " + std::to_string(topo.gpus));
  }
  for (size_t k = 0; k < sc.jobs.size(); ++k) {
    const JobSpec& j = sc.jobs[k];
    const Workload& w = r.job_workloads[k];
    JobRun run;
    run.workload = &w;
    const PipelineSchedule pipeline = j.pipeline_set ? j.pipeline : sc.workload.pipeline;
    const auto n = static_cast<uint32_t>(r.hosts[k].size());
    std::vector<std::string> notes;
    try {
      // The job's own numbering counts servers of gcd(GPUs, GPUs per server): a 4-GPU job on 8-GPU servers
      // is one server of 4 (rings and groups follow the job's numbering, docs/workloads.md §11).
      run.layout = make_layout(w.header, n, std::gcd(n, topo.gpus_per_server), pipeline != PipelineSchedule::None, &notes);
    } catch (const std::invalid_argument& e) {
      throw InputError(w.file, 1, fmt::format("workload does not fit job {} ({} GPUs): {}", j.name, n, e.what()),
                       "give the job a GPU count the workload's TP, PP and EP divide");
    }
    if (speak)
      for (const std::string& m : notes) std::fprintf(stderr, "wormhole: warning: %s:1: %s\n", w.file.c_str(), m.c_str());
    const uint32_t chunks = check_pipeline(w, run.layout, pipeline, sc.workload.virtual_stages, speak);
    DriverOptions& d = run.options;
    d.iterations = j.iterations ? j.iterations : sc.workload.iterations;
    d.send_latency = sc.workload.send_latency;
    d.zero_chunk = sc.workload.zero_chunk;
    d.pipeline = pipeline;
    d.virtual_stages = chunks;
    d.start = j.start;
    d.hosts = r.hosts[k];
    for (const std::string& g : sc.workload.ignore_groups)
      for (CommGroup c : {CommGroup::TP, CommGroup::DP, CommGroup::EP, CommGroup::DP_EP})
        if (g == to_string(c)) d.ignore_group[static_cast<size_t>(c)] = true;
    r.jobs.push_back(std::move(run));
  }
  std::vector<uint32_t> busy;  // the jobs' GPUs: "free" background hosts are the others
  for (const auto& h : r.hosts) busy.insert(busy.end(), h.begin(), h.end());
  std::vector<std::string> notes;
  r.background = make_background(sc, topo, busy, &notes);
  if (speak)
    for (const std::string& m : notes) std::fprintf(stderr, "wormhole: note: %s\n", m.c_str());
}

std::vector<JobReport> job_reports(const WorkloadRun& r, const JobSet& jobs) {
  std::vector<JobReport> out;
  for (size_t k = 0; k < r.sc.jobs.size(); ++k)
    out.push_back({r.sc.jobs[k].name, &jobs.report(k), r.sc.jobs[k].start, r.hosts[k]});
  return out;
}

namespace {

/// Flows per job (each job's report lists its flows, some of which a stop may have kept from being made;
/// the last entry: the others, background flows).
std::vector<size_t> flows_per_job(const JobSet& jobs, const FlowResults& records) {
  std::vector<size_t> flows(jobs.size() + 1, 0);
  size_t jobs_flows = 0;
  for (size_t k = 0; k < jobs.size(); ++k) {
    const auto& tags = jobs.report(k).flows;
    for (size_t i = 0; i < tags.size(); ++i) flows[k] += tags[i].flow < records.size();
    jobs_flows += flows[k];
  }
  flows.back() = records.size() > jobs_flows ? records.size() - jobs_flows : 0;
  return flows;
}

}  // namespace

void write_jobs_reports(const WorkloadRun& r, const JobSet& jobs, const FlowResults& records) {
  const Scenario& sc = r.sc;
  const std::vector<size_t> flows = flows_per_job(jobs, records);
  const fs::path path = fs::path(r.out) / "jobs.csv";
  std::ofstream csv(path);
  if (!csv) throw InputError(path.string(), 0, "cannot write jobs.csv", "choose a writable output folder");
  csv << "job,gpus,first_gpu,last_gpu,start_us,iterations,end_us,mean_iteration_us,flows,exposed_comm_us,bubble_us,"
         "slowest_gpu,slowest_exposed_comm_us,complete\n";
  for (size_t k = 0; k < sc.jobs.size(); ++k) {
    const WorkloadReport& rep = jobs.report(k);
    write_workload_csvs(r.job_dirs[k], rep);
    const std::vector<uint32_t>& hosts = r.hosts[k];
    const Time end = rep.iterations.empty() ? 0 : rep.iterations.back().end;
    // Over the complete iterations only: an interrupted run also lists the one it stopped in.
    Time sum = 0, done = 0;
    for (const IterationRecord& it : rep.iterations)
      if (it.complete) sum += it.end - it.start, ++done;
    const Time mean = done ? sum / done : 0;
    csv << sc.jobs[k].name << ',' << hosts.size() << ',' << hosts.front() << ',' << hosts.back() << ','
        << format_us(sc.jobs[k].start) << ',' << rep.iterations.size() << ',' << format_us(end) << ','
        << format_us(mean) << ','
        << flows[k] << ',' << format_us(rep.end_to_end.total_exposed) << ',' << format_us(rep.end_to_end.bubble) << ',';
    // The report GPU's figures above; the GPU exposed longest (by its topology id) need not be it.
    if (rep.per_gpu.empty()) csv << ",,";
    else csv << hosts[rep.slowest_gpu] << ',' << format_us(rep.per_gpu[rep.slowest_gpu].exposed()) << ',';
    csv << (rep.complete() ? 1 : 0) << '\n';
  }
  csv.close();
  if (!csv) throw InputError(path.string(), 0, "cannot write jobs.csv", "check the disk has room");
}

void print_jobs_summary(const WorkloadRun& r, const JobSet& jobs, const FlowResults& records,
                        const SlowdownStats& slowdown, const RunStats& s, size_t pfc_frames, double wall_s, const std::string& cc, bool quiet,
                        const Network* net) {
  const Scenario& sc = r.sc;
  const std::vector<size_t> flows = flows_per_job(jobs, records);
  for (size_t k = 0; k < sc.jobs.size(); ++k) {
    const WorkloadReport& rep = jobs.report(k);
    // As for one workload: a job the time limit or a signal stopped did as asked; one whose events ran dry
    // with work pending could never have finished.
    if (!rep.complete())
      std::fprintf(stderr, "wormhole: %s: job %s incomplete: %s\n", rep.stuck ? "error" : "warning",
                   sc.jobs[k].name.c_str(), rep.incomplete.c_str());
    if (quiet) continue;
    fmt::print("job {}:", sc.jobs[k].name);
    for (const IterationRecord& it : rep.iterations)
      fmt::print(" iteration {} {} us{};", it.index, format_us(it.end - it.start), it.complete ? "" : " (INCOMPLETE)");
    fmt::print(" exposed communication {} us{}; {} flows\n", format_us(rep.end_to_end.total_exposed),
               rep.pp > 1 ? fmt::format(", bubble {} us", format_us(rep.end_to_end.bubble)) : "", flows[k]);
  }
  if (quiet) return;
  if (!r.background.empty()) fmt::print("{}\n", background_summary(r.background, records, net));
  print_run_summary(slowdown, s, pfc_frames, wall_s, cc);
}

}  // namespace wh
