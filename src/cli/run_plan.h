// One `wormhole run`, whatever its scenario: an HPCC config.txt with its flow file, or a .toml training
// scenario (a SimAI workload, Chakra traces, or several jobs, with background flows). The plan knows
// everything that depends on the kind of scenario; the two back ends — one process (run_command.cpp)
// and the distributed engine over MPI ranks (run_distributed.cpp) — each run the same sequence on it:
// load, Wormhole, outputs, monitors, the training work, run, monitors' ends, run record, results,
// reports, summary.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "monitor_session.h"
#include "run_command.h"
#include "wormhole_session.h"

namespace wh {

class ProgressLine;

/// A loaded scenario of either kind with its network built, and each step of a run that depends on the
/// kind. The output paths (results(), fct(), pfc()) of a training scenario are set by name_outputs: call it
/// right after load.
class RunPlan {
 public:
  /// Loads the scenario `o.scenario` names (load_config_run, or load_workload_run for a .toml file)
  /// and builds its network. `speak`: print the set-up warnings and the memory estimate. Throws
  /// InputError on bad input and for a run that cannot fit, before any output is made.
  static RunPlan load(const RunOptions& o, bool speak);

  /// A .toml training scenario (its flows come from a training client as it runs); else a flow file.
  bool training() const { return workload_ != nullptr; }
  /// The network the scenario built, its settings and its topology.
  Network& net() { return training() ? *workload_->net : *config_->net; }
  const Network& net() const { return training() ? *workload_->net : *config_->net; }
  const SimConfig& cfg() const { return training() ? workload_->cfg : config_->cfg; }
  const Topology& topo() const { return training() ? workload_->topo.topo : config_->topo; }
  /// The scenario file the run record names.
  const std::string& origin() const { return training() ? workload_->sc.path : config_->cfg.path; }
  /// Output paths: the HDF5 results file, fct.txt and pfc.txt ("" for a training scenario before name_outputs).
  const std::string& results() const { return training() ? workload_->results : config_->results; }
  const std::string& fct() const { return cfg().fct_output_file; }
  const std::string& pfc() const { return cfg().pfc_output_file; }
  /// ps: the run's end: the stop time, or a workload's max_time if earlier.
  Time until() const { return training() ? workload_->until : config_->cfg.stop_time(); }
  /// The training scenario (training() only).
  WorkloadRun& workload() { return *workload_; }
  const WorkloadRun& workload() const { return *workload_; }
  /// The one-process latency a training client keeps between a completion and the flows it releases
  /// (the distributed engine's client lookahead, ps); kTimeMax without a client.
  Time client_lookahead() const { return training() ? workload_->options.send_latency : kTimeMax; }

  /// Sets the output paths without touching the disk (a distributed run's other ranks need them).
  void name_outputs(const RunOptions& o);
  /// Creates the output folders and checks they can be written (InputError naming what to change),
  /// then writes the topology copy a scenario asks for. Called once every input has been checked.
  void make_outputs(const RunOptions& o);
  /// Where memoization writes (--memo-out, or memo.h5 beside the results).
  std::string memo_path(const RunOptions& o) const;
  /// Every file the run writes: results, fct.txt, pfc.txt, the monitors' files, a training scenario's
  /// CSVs (each job's fct.txt and CSVs, jobs.csv) and its topology copy. After name_outputs.
  std::vector<std::string> output_files() const;
  /// Checks --memo-out against every file the run writes (check_memo_out); nothing without it.
  void check_memo_out(const RunOptions& o) const;
  /// The monitors this scenario asks for (MonitorSession::plan); after name_outputs.
  MonitorSession::Plan monitor_plan() const;

  /// The training work on the network as its client (empty for a flow file), forwarding to `forward`.
  /// `collective_memo`: the collective memo the drivers use (nullptr: none). `writes_outputs`: this
  /// process writes the run's outputs (one process, or rank 0 of a distributed run), so it writes
  /// each job's fct.txt as flows finish and its drivers keep each flow's tag for /workload/flows
  /// (DriverOptions::flow_tags); the other ranks do neither. Throws as make_training_work and
  /// JobFctFiles do.
  TrainingWork make_work(NetObserver& forward, CollectiveMemo* collective_memo, bool writes_outputs);
  /// The collective memo for this run's one-process back end: Wormhole's, for one training workload
  /// alone on the fabric; nullptr (with the warning saying why) for jobs, background flows, Chakra traces
  /// and flow files.
  CollectiveMemo* collective_memo(WormholeSession& wormhole);
  /// The progress line's share done: a client's progress, or the bytes of the flows finished
  /// (`finished`, bytes) and done of the running ones (Network::running_bytes) over the flows' bytes.
  void set_progress(ProgressLine& line, const TrainingWork& work, std::function<uint64_t()> finished) const;
  /// The start-up lines on stdout: a training scenario's header, the packet trace's estimate, and for a
  /// flow file the reference's maxRtt / maxBdp line.
  void print_header(const MonitorSession& monitors);
  /// Where MonitorSession::finish ends the monitors (ps): a training run's both at its end `now`; a flow
  /// file's queue monitor at the stop time and its port monitor at the last flow's end `last_finish`,
  /// through the interval holding it, when `all_finished` (else at `now`; at the stop time with
  /// PORT_MON_END set); both `now` when a signal cut the run.
  MonitorEnds monitor_ends(Time now, Time last_finish, bool all_finished, bool cut) const;
  /// The run record: scenario, version, settings, `stats`, CC, command line, overrides, fabric, and a
  /// training scenario's keys.
  RunMetadata run_record(const RunStats& stats, const std::string& command_line, bool fabric = true) const;
  /// The jobs' reports for results.h5 (empty without jobs).
  std::vector<JobReport> job_reports(const TrainingWork& work) const;
  /// A training run's CSVs (each job's, and jobs.csv); `flows`: every flow's record. InputError if a
  /// file cannot be written.
  void write_reports(const TrainingWork& work, const FlowResults& flows) const;
  /// What an interrupted run leaves, for print_interrupted.
  std::string interrupted_outputs() const;
  /// The summary after a whole run: unfinished flows (stderr), an incomplete workload (stderr), the
  /// jobs', the workload's or the flows' summary lines (stdout, unless `quiet`). `net`: the run's network
  /// in one process (running flows' progress, unfinished flows without a path), nullptr over ranks.
  void print_outcome(bool complete, const TrainingWork& work, const FlowResults& flows, const SlowdownStats& slowdown,
                     const RunStats& stats, size_t pfc_frames, const std::string& cc, bool quiet,
                     const Network* net) const;
  /// The last line: "outputs: ..." with the memo file and the monitors' files.
  std::string outputs_line(const std::string& memo, const MonitorSession& monitors) const;
  /// The exit status of a run that was not interrupted: 0, or 3 for a workload left incomplete.
  static int exit_status(bool complete) { return complete ? 0 : 3; }

 private:
  std::unique_ptr<ConfigRun> config_;
  std::unique_ptr<WorkloadRun> workload_;
};

}  // namespace wh
