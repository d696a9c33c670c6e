// Several training jobs sharing one fabric (docs/workloads.md §11): where each job's GPUs go, and a
// JobSet that runs one WorkloadDriver per job on the same network, routing the network's callbacks
// and client events to the driver they belong to.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "wormhole/net/network.h"
#include "wormhole/workload/client.h"
#include "wormhole/workload/driver.h"

namespace wh {

/// One job's GPU request: explicit topology GPU ids, or `count` GPUs placed by `policy`.
struct PlacementRequest {
  std::vector<uint32_t> gpus;  ///< explicit ids (any order); empty with a count
  uint32_t count = 0;
  std::string policy = "packed";  ///< "packed" or "spread"
};

/// The topology GPU ids of each job, ascending (job GPU i runs on the i-th). Explicit requests are
/// taken first, then counts in request order from the GPUs still free:
///  * packed: the lowest free ids (whole servers first when the free GPUs allow);
///  * spread: round robin over servers — GPU slot 0 of every server, then slot 1, ... (server s, slot k
///    = GPU s·gpus_per_server + k) — so the job covers as many servers as it can.
/// Throws std::invalid_argument (the message names the job by its index and says how to fix it)
/// for an id at or above `gpus`, a GPU two jobs claim, or a count larger than the GPUs left free.
std::vector<std::vector<uint32_t>> place_jobs(const std::vector<PlacementRequest>& requests, uint32_t gpus,
                                              uint32_t gpus_per_server);

/// One job of a JobSet: its workload (kept alive by the caller), layout (make_layout on its GPU
/// count) and options (options.hosts = its placement; start, iterations, pipeline ...).
struct JobRun {
  const Workload* workload = nullptr;
  GroupLayout layout;
  DriverOptions options;
};

/// Runs several jobs on one network. Each job is a WorkloadDriver (not installed on the network);
/// the set is the network's observer and client: a client event goes to the driver whose index its
/// aux carries (DriverOptions::job), a finished flow to the driver that owns it (background flows
/// to none), every record to `forward` as well. A job with a start time > 0 starts then. The network
/// stops when every job is done; background flows still running then stay unfinished. A distributed
/// run keeps an identical set on every rank (TrainingClient).
class JobSet final : public TrainingClient {
 public:
  /// Throws std::invalid_argument as WorkloadDriver's constructor does, naming the job's index.
  JobSet(Network& net, std::vector<JobRun> jobs, NetObserver* forward = nullptr);
  ~JobSet() override;

  /// Starts the jobs and runs the network until every job is done, the queue is empty, or `until`
  /// (ps). Returns true if every job completed.
  bool run(Time until) override;
  /// run() in two halves, for a distributed run (the engine runs the network in between): start(until)
  /// starts the jobs of start time 0 and schedules the others' starts (`until`, ps: the time limit the
  /// network will run to, passed to each job's driver); finish(until) writes every job's report and
  /// returns whether every job completed.
  void start(Time until) override;
  bool finish(Time until) override;
  /// The mean over the jobs of the share of their collectives done (jobs without any left out),
  /// [0, 1]; -1 if no job has collectives.
  double progress() const override;
  size_t size() const { return drivers_.size(); }
  const WorkloadReport& report(size_t job) const { return drivers_[job]->report(); }
  /// The job that owns running network flow `id` (until its driver heard of its finish; called before
  /// that by JobSet::flow_finished's forward), or size() for a flow of no job (background traffic).
  size_t job_of_flow(uint32_t id) const;

  void flow_finished(const FlowRecord& f) override;
  void pfc(const PfcRecord& p) override;
  void tick(Time now, uint64_t events, uint64_t flows_finished) override;
  void client_event(uint32_t target, uint16_t aux) override;

 private:
  void stop_if_done();

  Network& net_;
  std::vector<JobRun> jobs_;
  NetObserver* forward_;
  std::vector<std::unique_ptr<WorkloadDriver>> drivers_;
  bool stopped_ = false;
  Time until_ = INT64_MAX;  // the run's time limit (ps), for the jobs started later
};

}  // namespace wh
