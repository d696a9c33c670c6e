// The workload driver: runs a SimAI training workload on the packet-level network. Every GPU executes
// the workload's rows as SimAI's ns-3 backend does (docs/workloads.md §1.6); collectives become flows
// (plan_collective, §5) that are injected into the network only when their predecessors have finished,
// so flow arrivals are not known in advance.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "wormhole/core/chunked.h"
#include "wormhole/workload/records.h"
#include "wormhole/net/network.h"
#include "wormhole/workload/client.h"
#include "wormhole/workload/collective_memo.h"
#include "wormhole/workload/collectives.h"
#include "wormhole/workload/pipeline.h"
#include "wormhole/workload/release_batches.h"
#include "wormhole/workload/simai_workload.h"

namespace wh {

/// How the driver runs a workload.
struct DriverOptions {
  uint32_t iterations = 1;      ///< passes over the rows (training iterations), >= 1
  Time send_latency = 6 * kUs;  ///< from a flow's release to its QP start, ps (SimAI AS_SEND_LAT)
  ZeroChunk zero_chunk = ZeroChunk::NoFlows;
  uint32_t report_gpu = 0;      ///< whose per-layer view is reported (SimAI reports rank 0)
  uint32_t priority_group = 3;  ///< switch queue class of every flow (SimAI: 3)
  /// Collectives of these groups (indexed by CommGroup) complete at issue without traffic.
  std::array<bool, 5> ignore_group{};
  /// The pipeline schedule when the layout has PP > 1 (ignored with PP 1).
  PipelineSchedule pipeline = PipelineSchedule::OneFOneB;
  /// Model chunks per stage with PipelineSchedule::Interleaved (Megatron's virtual pipeline size);
  /// 1 runs the non-interleaved 1F1B.
  uint32_t virtual_stages = 1;
  /// Network host of each of the job's GPUs (job GPU g runs on host hosts[g]); empty = GPU g on
  /// host g. Lets several jobs share one network (docs/workloads.md §11).
  std::vector<uint32_t> hosts;
  /// Stop the network when this job's last GPU finishes (false when other jobs share it).
  bool stop_when_done = true;
  /// When start() runs (the job's start time), ps: iteration 0 is timed from here.
  Time start = 0;
  /// The job's index in a JobSet: the driver's client events carry aux = kind | job << 2, so the
  /// set can route them (kind 3 is the set's own).
  uint32_t job = 0;
  /// Replays collectives that run alone on an island (nullptr: none; not owned; shared by the jobs).
  class CollectiveMemo* memo = nullptr;
  /// Keeps each flow's tag for the results (WorkloadReport::flows, /workload/flows: 24 B a flow). A
  /// distributed run's ranks that do not write the results leave it off: their report has no flows.
  bool flow_tags = true;
  /// Where the tags are kept on disk but for one block (a temporary file in the outputs' folder);
  /// empty: in memory.
  std::string flow_tag_dir;
};

/// The traffic of one iteration of `w`: every collective's flows as the driver would plan them
/// (same groups, rings and chunking; groups in `o.ignore_group` and flow-less collectives left
/// out), summed per (source GPU, destination GPU) pair into one FlowSpec each (size_bytes = the
/// pair's bytes, capped at 2^32 - 1), in (src, dst) order. What a cut of the network over ranks
/// should weigh: a training workload's flows are known only as it runs.
std::vector<FlowSpec> expected_traffic(const Workload& w, const GroupLayout& layout, const DriverOptions& o);

/// How many flows a run of a workload makes, counted without planning them (for its memory estimate).
struct WorkloadFlowCount {
  /// Flows of the distinct collective plans the driver builds and keeps to the end: one plan per
  /// distinct (op, bytes, group); groups of one kind share none.
  uint64_t plan_flows = 0;
  /// Bytes of those plans with one instance of each in flight (driver_plan_bytes summed over them).
  uint64_t plan_bytes = 0;
  /// Network flows over all iterations: every collective's flows and every pipeline transfer.
  uint64_t flows = 0;
  /// Collectives over all iterations as the report lists them: one per group of two or more GPUs
  /// that sends something, and one per pipeline transfer.
  uint64_t collectives = 0;
  /// Bytes of all those network flows (what the progress line's share done counts).
  uint64_t bytes = 0;
};
/// Counts them as expected_traffic() walks the workload (same groups, rings, chunking, ignored groups
/// and MICRO rule), in O(rows + GPUs) for the group partitions: a 131,072-GPU workload is counted
/// in well under a second though its plans would hold billions of flows.
/// Calls f(op, row) for every collective one iteration issues that sends anything: each row's fwd, ig
/// and wg operation (MICRO: row 0's wg only), leaving out NONE, 0-byte and `o.ignore_group` ones.
template <class F>
void for_each_sending_op(const Workload& w, const DriverOptions& o, F&& f) {
  for (size_t row = 0; row < w.layers.size(); ++row) {
    if (w.header.micro && row > 0) break;  // MICRO issues row 0's wg collective only
    const WorkloadLayer& l = w.layers[row];
    for (const CommOp* op : {&l.fwd, &l.ig, &l.wg}) {
      if (w.header.micro && op != &l.wg) continue;
      if (op->op == Collective::None || op->bytes == 0 || o.ignore_group[static_cast<size_t>(op->group)]) continue;
      f(*op, l);
    }
  }
}

/// Throws InputError naming the workload file and the row's line when one of its collectives would
/// have kMaxPlanFlows flows or more on its groups of `layout` (a one-ring AllReduce of 46,342 ranks or
/// more, an AllToAll of 65,537): checked before the network is built, so such a run stops at once and
/// writes nothing.
void check_collective_sizes(const Workload& w, const GroupLayout& layout, const DriverOptions& o);

WorkloadFlowCount count_workload_flows(const Workload& w, const GroupLayout& layout, const DriverOptions& o);
/// Bytes the driver holds for one distinct collective plan of `ranks` members whose flows form `chains`
/// dependency chains of `chain_length` flows (CollectivePlan::chains) with one instance of it in
/// flight: the plan (plan_bytes(ranks): its member list, 4 B a member) and its cache key (the member
/// list again), and the instance's record, per member its issue flag and count of flows left (5 B),
/// and which flows finished (FinishedFlows::bytes: 4 B a ring's chain, a bit an AllToAll's flow).
/// Nothing grows with a ring's flows: a ring AllReduce of 8.4 M flows on 2048 ranks takes about 34 KB.
uint64_t driver_plan_bytes(uint32_t ranks, uint64_t chains, uint32_t chain_length);
/// Bytes the driver and its report hold for the GPUs' programs of workload `w` on `layout`: per GPU its
/// program counter, 12 B per row whose wg collective has flows (that wg's iteration and time) and its
/// report record (GpuRecord); per row its compact form and program steps, and per row and iteration (of
/// `o.iterations`) the report GPU's layer record. 784 rows with a DP wg each on 131,072 GPUs need over
/// 1.2 GB; without flows a wg keeps nothing per row.
uint64_t driver_program_bytes(const Workload& w, const GroupLayout& layout, const DriverOptions& o);

/// Executes one workload on one network. Semantics (HYBRID_TRANSFORMER* policies, per GPU, per
/// iteration p):
///   forward, rows i = 0..L-1: wait until row i's wg collective of iteration p-1 is done at this GPU;
///     compute fwd_compute; issue the fwd collective and wait for it; wait update_time.
///   backward, rows i = L-1..0: compute ig_compute; issue the ig collective and wait for it; wait
///     update_time; compute wg_compute; issue the wg collective without waiting (it completes, plus
///     update_time, in the background).
///   after the last iteration: wait for every outstanding wg collective.
/// MICRO workloads issue only row 0's wg collective, once per iteration, and wait for it
/// (docs/workloads.md §1.5 item 10).
/// A collective is one instance per (iteration, row, phase, group); it is complete at a GPU when
/// every flow the GPU sends or receives in it has finished (the sender got the last ACK, which is
/// when SimAI notifies both ends). A ring flow of step s >= 1 from GPU g is released when g has
/// issued the collective and its parent (step s-1 arriving at g) has finished; a step-0 or AllToAll
/// flow when g issues. Released flows start send_latency later. Collectives without flows (size 0,
/// group of one, 0-byte chunks) complete at issue and release their dependants.
/// Adds finished flow `f`'s bytes to `c` by the links its data crossed (CollectiveRecord's nvlink_bytes,
/// nic_bytes, fabric_hop_bytes): its first hop says NVLink (GPU -> NVSwitch) or NIC; every
/// switch-to-switch link after it adds its bytes once more to fabric_hop_bytes. Needs the flow's data
/// path (Network::data_path); a flow without one adds nothing.
void count_link_bytes(const Network& net, CollectiveRecord& c, const FlowRecord& f);

class WorkloadDriver final : public TrainingClient {
 public:
  /// `layout` from make_layout(). The driver installs itself as the network's observer and client
  /// unless `install` is false (a JobSet does it and dispatches); `forward` (optional) receives
  /// every NetObserver callback too (e.g. the fct.txt writer).
  /// Throws std::invalid_argument for a report GPU out of range, iterations 0, hosts of another
  /// size than layout.gpus, or (PP > 1) micro-batches find_micro_batches cannot find; OutputError
  /// if the tags' file cannot be made in DriverOptions::flow_tag_dir.
  WorkloadDriver(Network& net, const Workload& w, const GroupLayout& layout, const DriverOptions& o,
                 NetObserver* forward = nullptr, bool install = true);
  ~WorkloadDriver() override;

  /// Starts every GPU at time 0 and runs the network until all collectives are done, the queue is
  /// empty, or `until` (ps). Returns true if the workload completed. When the event queue runs dry
  /// with collectives pending (the watchdog), report().incomplete says "no runnable events while N
  /// collectives pending" and lists the first of them with their pending flows.
  bool run(Time until) override;
  /// run() in two halves, for a distributed run (the engine runs the network in between): start(until)
  /// starts every GPU at time 0 (`until`, ps: the time limit the network will run to; no program runs
  /// ahead past it); finish(until) writes the report (`until`: the same limit) and returns whether the
  /// workload completed.
  void start(Time until) override;
  bool finish(Time until) override;

  const WorkloadReport& report() const { return report_; }
  /// The share of the run's network bytes done, [0, 1]: the bytes of its flows finished, and those
  /// done so far of its running flows (Network::running_bytes: acknowledged, or credited by Wormhole;
  /// estimated over ranks), over those of all its collectives' and pipeline transfers' flows
  /// (count_workload_flows); -1 when the workload sends none. A scan of the running flows: for the progress line, every few seconds.
  double progress() const override;
  /// Whether every GPU of the job has finished its program.
  bool done() const { return gpus_done_ == layout_.gpus; }
  /// Whether running network flow `id` is one of this driver's (false once it has finished and this
  /// driver has heard of it).
  bool owns_flow(uint32_t id) const;
  /// Slots of collective instances made so far: the most collectives in flight at once, since a finished
  /// collective's slot is taken by the next (each slot: the instance and its per-member state).
  size_t instance_slots() const { return inst_.size(); }

  // NetObserver / EventClient
  void flow_finished(const FlowRecord& f) override;
  void pfc(const PfcRecord& p) override;
  void tick(Time now, uint64_t events, uint64_t flows_finished) override;
  void client_event(uint32_t target, uint16_t aux) override;

 private:
  friend uint64_t driver_plan_bytes(uint32_t, uint64_t, uint32_t);  // sizes the Plan and the Instance
  friend uint64_t driver_program_bytes(const Workload&, const GroupLayout&, const DriverOptions&);  // the Gpu, the Row
  struct Plan;        // a CollectivePlan with its per-rank indices (shared by identical collectives)
  struct Instance;    // one collective in flight
  struct Gpu;         // one GPU's program counter
  struct Transfer;    // one pipeline send (activation or gradient of one micro-batch)
  enum Stage : uint8_t;

  void advance(uint32_t gpu);
  void advance_loop(uint32_t gpu);
  /// Whether the collective of (row, phase) may have flows, at any GPU: not NONE, not 0 B, not an
  /// ignored group, a group of more than one GPU (else it completes at issue without an instance). One
  /// whose chunks are 0 B (ZeroChunk::NoFlows) has none all the same: issue() finds that.
  bool sends(uint32_t row, Phase phase) const;
  /// GPU `gpu`'s wg collective of (row, iter), which has no flows, issued at its program's time `t`, is
  /// done with its update delay at `at` (ps, the program's own time).
  void wg_done_locally(uint32_t gpu, uint32_t row, uint32_t iter, Time t, Time at);
  /// Forgets G's update delays of wg collectives without flows that are over by the program's time `t` (ps).
  void forget_over(Gpu& G, Time t) const;
  /// Whether G's wg of (row, iter) is done by the program's time `t` (ps), moved to when its update
  /// delay ends if that is later.
  bool wg_ready(Gpu& G, uint32_t row, uint32_t iter, Time& t) const;
  void issue(uint32_t gpu, Phase phase);
  void offer_to_memo(uint32_t inst);  // every member issued: the collective memo may take it
  /// Plan flow `flow` of instance `inst` may go: it joins the instance's batch of flows leaving
  /// send_latency from now.
  void release(uint32_t inst, uint32_t flow);
  /// Puts a new collective instance in a finished one's slot (rank_done frees them), or in a new slot;
  /// returns its id (index in inst_).
  uint32_t place(Instance&& in);
  /// Hands plan flow `flow` of `inst` (a pipeline transfer's index with kPpBit: its one flow) to the
  /// network, or to the collective memo's replay.
  void inject(uint32_t inst, uint32_t flow);
  void rank_done(uint32_t inst, uint32_t gpu);
  void collective_done_at(uint32_t gpu, uint32_t inst);
  void wg_done_at(uint32_t gpu, uint32_t row, uint32_t iter, Time completed);
  // The transfer of an activation / gradient of micro-batch mb to model chunk `chunk` of `receiver`.
  uint32_t transfer_of(uint32_t iter, bool grad, uint32_t mb, uint32_t chunk, uint32_t receiver);
  void pp_send(uint32_t gpu, const ProgramStep& s);
  bool pp_recv(uint32_t gpu, const ProgramStep& s);  // true: the data is there
  void transfer_done(uint32_t t);
  uint32_t host_of(uint32_t gpu) const { return o_.hosts.empty() ? gpu : o_.hosts[gpu]; }
  uint16_t tag(uint16_t kind) const { return static_cast<uint16_t>(kind | (o_.job << 2)); }
  const CommOp& op_of(uint32_t row, Phase phase) const;
  std::shared_ptr<const Plan> plan_for(const CommOp& op, const std::vector<uint32_t>& members);
  const std::string& memo_key(const Plan& p) const;  // made on first use, kept in the plan
  void note_time(uint32_t iteration, Time t);
  /// GPU g was blocked `t` ps on the collective of (row, phase): its group's exposed time grows.
  void add_exposed(uint32_t g, uint32_t row, Phase phase, Time t);
  /// The report GPU's layer record of (iter, row) takes instance `id`'s phase, `comm` ps long.
  void report_layer(uint32_t iter, uint32_t row, Phase phase, uint32_t id, Time comm);
  /// Adds finished flow r's bytes to collective record `record` by the links its data crossed.
  void count_link_bytes(size_t record, const FlowRecord& r);
  LayerRecord& layer_record(uint32_t iter, uint32_t row);  // the report GPU's record of a row
  void finish(uint32_t gpu);                               // the GPU's program is over
  void finish_report(Time until);
  std::string describe_pending() const;

  Network& net_;
  const Workload& w_;
  GroupLayout layout_;
  DriverOptions o_;
  NetObserver* forward_;
  std::vector<Gpu> gpus_;
  MicroBatches mb_;                                  // with PP > 1
  std::vector<std::vector<ProgramStep>> programs_;  // per pipeline stage
  // The collectives in flight: a finished one's slot goes to free_inst_ and is taken again, so this holds
  // the most collectives in flight at once, not every one the run made (grows without copies). What
  // still grows with the run: report_'s records (the outputs) and the pipeline transfers.
  ChunkedVector<Instance, 8> inst_;
  std::vector<uint32_t> free_inst_;
  std::vector<Transfer> transfers_;
  // (iter, grad, mb, receiving chunk, receiver)
  std::map<std::tuple<uint32_t, bool, uint32_t, uint32_t, uint32_t>, uint32_t> transfer_of_;
  // (iter, row, phase, first GPU) -> the instance, while in flight
  std::map<std::tuple<uint32_t, uint32_t, uint8_t, uint32_t>, uint32_t> inst_of_;
  std::map<std::tuple<int, uint64_t, uint32_t, std::vector<uint32_t>>, std::shared_ptr<const Plan>> plans_;
  // Running network flow id -> (inst, plan flow); a finished flow's entry goes (memory follows what runs).
  ChunkedSlots<std::pair<uint32_t, uint32_t>> flow_owner_;  // running flow id -> (instance, plan flow)
  // Collectives (instance ids) and pipeline transfers (kPpBit | transfer) whose flows start at each
  // instant, one event per instant (its target counts instants and is never reused: a distributed
  // run's client appends while the network's time takes, and the target orders events whose keys
  // coincide).
  DueReleases due_;
  uint32_t due_events_ = 0;
  /// The flows of `sender` (an instance, or kPpBit | transfer) start at `at` (ps).
  void due_at(Time at, uint32_t sender);
  /// The oldest instant is due: its collectives' and transfers' flows start now, in DueReleases' order.
  void release_due();
  // Collective memo only: per GPU, the collectives and pipeline transfers in which it has flows not
  // finished (another collective's flows may reach an island while one is replayed there), and the
  // GPU of each network host.
  // Counted per island kind: [0] NVSwitch, [1] fabric switch (wormhole/net/island.h).
  std::vector<std::array<uint32_t, 2>> involved_;
  std::unordered_map<uint32_t, uint32_t> gpu_at_host_;
  /// Which kinds of island some flow of plan `p` (or its ACKs) can enter (cached in the plan).
  uint8_t island_kinds(const Plan& p);
  /// Counts (d = +1) or uncounts (d = -1) GPU g's involvement in the island kinds `kinds`.
  void involve(uint32_t g, uint8_t kinds, int d);
  /// GPU g's involvement in the island kinds `kinds`: the most over them (see involved_).
  uint32_t involvement(uint32_t g, uint8_t kinds) const;
  static constexpr Time kNoIssue = INT64_MAX;
  /// Whether GPU x's collective of `phase` in `row` has a member in `near` (sorted GPUs) and flows that
  /// can enter an island of `kinds`.
  bool issues_onto(uint32_t x, uint32_t row, Phase phase, uint8_t kinds, const std::vector<uint32_t>& near);
  /// A lower bound of the client time (ps) at which GPU x next issues a collective whose flows can enter
  /// an island of `kinds`: now plus the compute of its program before that issue (other waits only
  /// delay it), and not before `done_x` (ps; -1: unknown) where it waits on its part of `offered` (a
  /// blocking fwd or ig, or the next iteration's forward of a wg's row); kNoIssue if none is left; now
  /// in pipelined runs and MICRO workloads (not followed).
  Time earliest_issue(uint32_t x, uint8_t kinds, const Instance& offered, Time done_x);
  /// The earliest of earliest_issue over the GPUs sharing a group with a member of instance `id`, were
  /// it to start at t0 and its plan flows end at `finish` (ps after t0; nullptr: not known): before it,
  /// no flow of this job but its own can start on the members' island ports of `kinds`. Now where a
  /// member's pipeline peer can reach those kinds; kNoIssue for NVSwitches otherwise (not followed:
  /// their TP collectives block the GPUs, and a member busy with another is refused at the offer).
  Time quiet_until(uint32_t id, uint8_t kinds, Time t0, const std::vector<Time>* finish);
  struct WgUpdate {
    uint32_t gpu, row, iter;
    Time completed;  // communication completed at (ps), -1 = none
  };
  std::vector<WgUpdate> wg_updates_;                        // pending wg update delays
  uint32_t advancing_ = UINT32_MAX;                         // the GPU whose program is running
  static constexpr uint32_t kNoSlot = UINT32_MAX;
  /// What a GPU's program reads of a row, compact: every GPU runs through all rows each iteration.
  struct Row {
    std::array<Time, 3> compute{};  // per Phase, ps
    Time update = 0;                // after each of the row's collectives, ps
    uint8_t sends = 0;              // bit Phase: that collective has flows (issue() makes an instance)
    bool sends_in(Phase p) const { return sends >> static_cast<uint32_t>(p) & 1; }
    uint32_t wg_slot = kNoSlot;     // its wg with flows' index in a GPU's per-wg state (kNoSlot: none)
  };
  std::vector<Row> rows_;
  uint32_t wg_slots_ = 0;                   // rows whose wg collective has flows
  std::vector<std::vector<bool>> bwd_rows_;  // per pipeline stage: the rows its program has a backward step of
  Time horizon_ = INT64_MAX;  // the run's time limit (ps): programs never run ahead past it
  std::vector<Time> iter_end_;
  uint64_t pending_ = 0;   // collectives and pipeline transfers not complete at every member
  uint64_t total_bytes_ = 0;  // of the whole run's flows (count_workload_flows), for progress()
  uint64_t done_bytes_ = 0;   // of its flows finished so far
  bool installed_ = false;
  uint32_t gpus_done_ = 0;
  WorkloadReport report_;
};

}  // namespace wh
