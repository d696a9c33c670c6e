// `wormhole run`: load a scenario, simulate it, write fct.txt, pfc.txt, the HDF5 results and a summary.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

#include <fstream>
#include <memory>

#include "monitor_session.h"
#include "wormhole/core/interrupt.h"
#include "wormhole/io/flows.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/io/results_writer.h"
#include "wormhole/io/topology.h"
#include "wormhole/net/network.h"
#include "wormhole/scenario/background.h"
#include "wormhole/scenario/scenario.h"
#include "wormhole/topo/simai_topology.h"
#include "wormhole/workload/chakra.h"
#include "wormhole/workload/driver.h"
#include "wormhole/workload/jobs.h"
#include "wormhole/workload/simai_workload.h"

namespace wh {

struct RunOptions {
  std::string scenario;                 ///< HPCC config.txt
  std::vector<std::string> sets;        ///< KEY=VALUE overrides
  std::string results;                  ///< HDF5 path ("" = results.h5 beside FCT_OUTPUT_FILE)
  std::string output_dir;               ///< if set: fct.txt, pfc.txt, results.h5 go there (created)
  std::string memo_in;                  ///< memo file to warm-start the memoization from ("" = none)
  std::string memo_out;                 ///< memo file to write ("" = memo.h5 beside the results)
  bool quiet = false;
  std::string memory_limit;             ///< --memory-limit: a size, "none", or "" = MemAvailable
  bool check_memory = true;             ///< estimate memory at set-up, refuse a run that cannot fit (partition: off)
  // distributed runs (several MPI ranks)
  bool distributed = false;             ///< set by run_distributed: this process is one of several ranks
  uint32_t ranks = 1;                   ///< set by run_distributed: how many (each makes its share of the ports)
  bool linear = false;                  ///< cut contiguous node-id blocks instead of METIS
  std::string rank_map;                 ///< read the rank map from this file ("node rank" lines)
  std::string command_line;             ///< the command as given (for the run record)
};

void add_run_options(CLI::App& cmd, RunOptions& o);
/// Runs the scenario (an HPCC config.txt, or a .toml training scenario) in one process (run_plan.h's
/// one-process back end); returns the process exit status: 0, 3 when a workload (a job) was left
/// incomplete (watchdog or stop time), 128 + signal when interrupted. Throws InputError on bad input.
int run_command(const RunOptions& o);
/// With PP > 1 run as a pipeline: throws InputError (the workload's line 1) when the rows hold no `ga`
/// micro-batches find_micro_batches can find or, interleaved, when ga is not a multiple of PP or the
/// micro-batches cannot be cut into the model chunks — before any output is made. Returns the model
/// chunks per stage the driver runs (DriverOptions::virtual_stages): with "interleaved" `virtual_stages`,
/// or the header's vpp when it is 0 (as SimAI's analytical model reads vpp); otherwise 1. `speak`: note on
/// stderr where an interleaved run's count came from (the header's vpp) or that 1 chunk is the plain 1F1B.
uint32_t check_pipeline(const Workload& w, const GroupLayout& layout, PipelineSchedule schedule,
                        uint32_t virtual_stages, bool speak);
/// "1F1B", "GPipe" or "interleaved 1F1B, v chunks per stage": the schedule the driver runs.
std::string pipeline_name(const DriverOptions& o);

/// An HPCC config.txt scenario read and checked, its network built with its flows (a RunPlan's flow-file
/// kind, run_plan.h).
struct ConfigRun {
  SimConfig cfg;
  Topology topo;
  std::vector<FlowSpec> specs;
  std::unique_ptr<Network> net;
  std::string results;  ///< the HDF5 results path
  std::string output_dir;  ///< --output-dir, created by check_config_outputs ("" = the config's paths)
  std::vector<std::pair<std::string, std::string>> overrides;  ///< applied to the config, in order
};
/// Reads the config named by `o` with its overrides (and --output-dir), the topology and flows,
/// estimates the memory (memory_check.h) and builds the network. `speak`: print the set-up warnings
/// and the estimate (rank 0 only in a distributed run). Throws InputError on bad input and for a run
/// whose set-up cannot fit the memory limit, before the network is built and any output is opened.
ConfigRun load_config_run(const RunOptions& o, bool speak);
/// Creates --output-dir, then throws InputError if an output's folder is missing (fct.txt, pfc.txt,
/// results). Called once every input has been checked: a refused run makes no folder.
void check_config_outputs(const ConfigRun& r);
/// Names (stderr) up to 10 unfinished flows with their flow-file lines, and why where known.
void print_unfinished(const ConfigRun& r, const FlowResults& flows, const RunStats& stats, size_t no_path);
/// The two summary lines: flows finished with slowdown and FCT statistics; the CC, events, PFC, ECN,
/// drops by cause, retransmissions, timeouts, peak queue.
void print_run_summary(const SlowdownStats& slowdown, const RunStats& s, size_t pfc_frames, double wall_s,
                       const std::string& cc);
/// "PFC frames ...; ECN marks ...; drops ... (by cause); retransmitted ...; retransmission timeouts ...;
/// peak switch queue ..." of a run's statistics (both summaries end with it).
std::string network_counts(const RunStats& s, size_t pfc_frames);
struct WorkloadRun;
/// The background's summary lines: finished flows and their slowdown and FCT; given the run's `net` (one
/// process) also the offered and achieved load (background_outcome); without it (over ranks, where a
/// running flow's progress is on its own rank) what `flows` (every flow's record; the background's are
/// ids 0 .. n - 1) say.
std::string background_summary(const Background& b, const FlowResults& flows, const Network* net);
/// What a loaded training run sends, per (source, destination) pair, for the packet trace's size estimate:
/// the workload's every iteration (expected_traffic × iterations), each job's on its GPUs, or a Chakra
/// trace's, plus the background flows. Sizes in bytes.
std::vector<FlowSpec> run_traffic(const WorkloadRun& r);

/// A .toml training-workload scenario read and checked, its network built (run_workload.cpp; a
/// RunPlan's training kind): one
/// SimAI workload, Chakra traces, or several jobs with background flows.
struct WorkloadRun {
  Scenario sc;
  SimaiTopology topo;
  Workload workload;
  ChakraTrace chakra;  ///< with workload.chakra: the traces (then `workload` is empty)
  GroupLayout layout;
  /// A [[job]] scenario (sc.jobs not empty; `workload` and `layout` unused): each job's workload,
  /// its run (layout, options with its hosts and start; JobRun::workload points into
  /// job_workloads, whose elements stay put when the WorkloadRun is moved) and its topology GPUs.
  std::vector<Workload> job_workloads;
  std::vector<JobRun> jobs;
  std::vector<std::vector<uint32_t>> hosts;
  std::vector<std::string> job_dirs;  ///< each job's output folder (make_workload_outputs)
  SimConfig cfg;  ///< the scenario's network settings, output paths set by make_workload_outputs
  std::unique_ptr<Network> net;
  Time until = 0;  ///< ps: the stop time or the workload's max_time
  DriverOptions options;
  std::string out, results;  ///< the output folder and the HDF5 results path
  std::vector<std::pair<std::string, std::string>> overrides;  ///< applied to the scenario, in order
  MonitorSession::Plan monitors;  ///< set by make_workload_outputs
  Background background;          ///< [background] flows, added to `net` before any workload's or job's (ids from 0)
};
/// Reads the scenario, its topology and workload (or traces, or jobs and background flows),
/// estimates the memory (memory_check.h) and builds the network (with the background flows).
/// `speak`: print the set-up warnings and the estimate. Throws InputError on bad input and for a
/// run whose set-up cannot fit the memory limit, before any output is made.
WorkloadRun load_workload_run(const RunOptions& o, bool speak);
/// A [[job]] scenario's part of load_workload_run (run_jobs.cpp): reads each job's workload, places
/// the jobs (place_jobs), sets up each job's layout and options and reads the background flows.
/// Throws InputError naming the [[job]] (placement, a workload that does not fit its GPUs).
void load_jobs(WorkloadRun& r, bool speak);
/// Sets the output paths (fct.txt, pfc.txt, results; each job's folder) from -o or the scenario's
/// [output] dir, and plans the monitors (MonitorSession::plan: InputError for a bad TRACE_FILE, even
/// without `write`); with `write`, creates the folders and checks the results file's folder
/// (InputError if it cannot).
void make_workload_outputs(const RunOptions& o, WorkloadRun& r, bool write);
/// Writes the generated topology if the scenario asks for it (topology.write).
void write_topology_copy(const WorkloadRun& r);
/// The line naming the scenario, its GPUs, parallelism, rows and network size.
void print_workload_header(const WorkloadRun& r);
/// The start-up lines of any training run: print_workload_header, the traces' line, or the jobs'
/// lines (one per job: its GPUs and start).
void print_training_header(const WorkloadRun& r);

/// Each job's fct.txt (its flows, in finish order as the fabric's fct.txt), between a JobSet and the
/// observer it forwards to: every callback goes on to `next`.
class JobFctFiles final : public NetObserver {
 public:
  /// Opens one file per path (none: only forwards). Throws InputError if one cannot be created.
  JobFctFiles(NetObserver& next, const std::vector<std::string>& paths);
  /// The set whose flows are written (set once it exists: it needs this observer first).
  void set_jobs(const JobSet* jobs) { jobs_ = jobs; }
  void flow_finished(const FlowRecord& f) override;
  void pfc(const PfcRecord& p) override { next_.pfc(p); }
  void tick(Time now, uint64_t events, uint64_t done) override { next_.tick(now, events, done); }

 private:
  NetObserver& next_;
  const JobSet* jobs_ = nullptr;
  std::vector<std::ofstream> files_;
};
/// The scenario's training work installed on its network as the network's client: a
/// WorkloadDriver, a ChakraDriver or a JobSet. One process runs it with client->run(); a
/// distributed run keeps one on every rank (TrainingClient).
struct TrainingWork {
  std::unique_ptr<JobFctFiles> job_files;  ///< each job's fct.txt, between the jobs and the observer (RunPlan::make_work)
  std::unique_ptr<TrainingClient> client;  ///< declared after job_files: destroyed first
  const WorkloadReport* report = nullptr;  ///< one workload's or trace's report; null for jobs
  JobSet* jobs = nullptr;                  ///< the jobs (owned by `client`); null otherwise
};
/// Builds it for `r` on r.net; `forward` receives every observer callback (the text outputs).
/// Throws std::invalid_argument as the drivers' constructors do.
TrainingWork make_training_work(WorkloadRun& r, NetObserver* forward);

/// Each job's report as results.h5's /jobs group holds it.
std::vector<JobReport> job_reports(const WorkloadRun& r, const JobSet& jobs);
/// jobs.csv (one row per job) in r.out and each job's workload CSVs in its folder. `flows`: every
/// flow's record. Throws InputError if a file cannot be written.
void write_jobs_reports(const WorkloadRun& r, const JobSet& jobs, const FlowResults& flows);
/// Says on stderr which jobs are incomplete; unless `quiet`, one line per job (iteration times,
/// exposed communication, flows), the background flows finished and, given the run's `net` (one
/// process; nullptr over ranks, where running flows' progress is on other ranks), their slowdown and
/// offered / achieved load, then the run summary (with `slowdown`, over every flow).
void print_jobs_summary(const WorkloadRun& r, const JobSet& jobs, const FlowResults& flows,
                        const SlowdownStats& slowdown, const RunStats& s, size_t pfc_frames, double wall_s, const std::string& cc, bool quiet,
                        const Network* net);
/// Iterations, the report GPU's and the slowest GPU's compute/exposed communication, and the run's counts.
void print_workload_summary(const WorkloadReport& r, const RunStats& s, double wall_s, size_t flows, size_t pfc_frames,
                            const std::string& cc);

/// Runs the scenario (an HPCC config.txt or a .toml training scenario) over the MPI ranks of
/// MPI_COMM_WORLD (run_plan.h's distributed back end, run_distributed.cpp); collective.
/// Returns the exit status; input errors are agreed on by all ranks and reported by rank 0.
int run_distributed(const RunOptions& o, int rank, int ranks);

/// After a run: if a signal stopped it before its end (Network::stop_signal(), the same on every rank
/// of a distributed run), sets meta.incomplete ("interrupted by SIGINT at simulated time ... s after
/// N events", `now` in ps) and returns the exit status 128 + signal; else 0.
int note_interrupt(RunMetadata& meta, const Network& net, Time now);
/// Before any output is made: if a SIGINT / SIGTERM came during the set-up, says so (nothing is
/// written) and returns the exit status 128 + signal; else 0.
int interrupted_in_setup();
/// The stderr line of an interrupted run: when it stopped, how many flows finished, what was written.
void print_interrupted(const RunMetadata& meta, size_t finished, size_t flows, const std::string& outputs);

/// Warns on stderr when Wormhole settings were given (WORMHOLE_* keys, or `table_given`: keys of a
/// scenario's [wormhole] table) but Wormhole is off, so they do nothing.
void warn_unused_wormhole(const SimConfig& cfg, bool table_given);

/// Notes on stderr (unless quiet) which of SimAI's monitor files (BW_MON_FILE, RATE_MON_FILE,
/// CNP_MON_FILE) a base config such as SimAI.conf names but the scenario `scenario` does not ask for:
/// they are not written (their paths are SimAI's), and how to ask for them.
void note_simai_monitors(const SimConfig& cfg, const std::string& scenario, bool quiet);

/// Notes on stderr (unless quiet) each of SimAI's environment variables that is set (AS_SEND_LAT,
/// AS_NVLS_ENABLE, AS_PXN_ENABLE): wormhole reads none of them; says which scenario key is their
/// counterpart, if any (docs/workloads.md §4).
void note_simai_environment(bool quiet);

/// Warns on stderr when NS_TRUNCATION 1 makes the fastest link's packets > 2 % fast.
void warn_ns_truncation(const SimConfig& cfg, const Topology& topo);

/// --set values as (KEY, VALUE). Throws InputError for an entry without '='.
std::vector<std::pair<std::string, std::string>> parse_sets(const std::vector<std::string>& sets);
/// --set values plus what `--memo FILE` implies: memoization on (`key` = "WORMHOLE_MEMO" or
/// "wormhole.memo", set to `on`) unless the user set it already. Throws InputError when the user
/// turned memoization off with either spelling, which --memo contradicts.
std::vector<std::pair<std::string, std::string>> run_overrides(const RunOptions& o, const std::string& key,
                                                               const std::string& on);
/// Throws InputError (naming `origin`) if `path`'s folder does not exist or this user cannot create
/// files in it, before anything is written. `output_dir_option`: the command has --output-dir, and
/// the hint names it.
void check_output_dir(const std::string& path, const std::pair<std::string, int>& origin, const std::string& what,
                      bool output_dir_option = true);
/// Throws InputError naming `origin` and `what` if this user cannot create files in the existing
/// folder `dir` (faccessat(2) with W_OK | X_OK, effective ids), with the fix: let the user write there
/// or choose another folder for `what`.
void check_writable_dir(const std::string& dir, const std::pair<std::string, int>& origin, const std::string& what);
/// Checks `--memo-out PATH` before any output is made: it is not a directory, and it is none of the
/// run's other outputs (`others`: results.h5, fct.txt, pfc.txt, which it would overwrite). Its folder is
/// checked (check_output_dir) once the run's own folders are made: -o may be making it. Throws
/// InputError naming what to change.
void check_memo_out(const std::string& path, const std::vector<std::string>& others);

}  // namespace wh
