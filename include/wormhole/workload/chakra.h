// Chakra execution traces (MLCommons Chakra, the input of ASTRA-sim; docs/workloads.md §8): one
// protobuf file per rank, `<prefix>.<rank>.et`, each a length-prefixed GlobalMetadata then Nodes. The
// reader keeps compute, point-to-point and collective nodes with their dependencies; ChakraDriver runs
// every rank's graph on the packet-level network, collectives through plan_collective (§5).
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "wormhole/core/chunked.h"

#include "wormhole/workload/records.h"
#include "wormhole/net/network.h"
#include "wormhole/workload/client.h"
#include "wormhole/workload/release_batches.h"
#include "wormhole/workload/collectives.h"

namespace wh {

class CollectiveMemo;

/// One node of a rank's graph, as the driver needs it.
struct ChakraNode {
  enum Kind : uint8_t { Comp, Send, Recv, Coll };
  uint64_t id = 0;
  std::string name;
  Kind kind = Comp;
  std::vector<uint64_t> deps;   ///< ctrl_deps and data_deps: nodes of the same rank that must finish first
  Time duration = 0;            ///< Comp: attr duration_nanos if given, else duration_micros (ps)
  bool cpu = false;             ///< Comp: attr is_cpu_op (CPU ops do not wait for the GPU's compute)
  Collective op = Collective::None;  ///< Coll
  uint64_t bytes = 0;           ///< Send / Recv / Coll: comm_size, bytes
  std::string group;            ///< Coll: pg_name ("" = every rank)
  uint32_t peer = 0;            ///< Send: comm_dst; Recv: comm_src
  int64_t tag = 0;              ///< Send / Recv: comm_tag
};

/// A whole trace: one graph per rank (rank r runs on GPU r) and the communication groups.
struct ChakraTrace {
  std::string prefix;
  std::vector<std::vector<ChakraNode>> ranks;        ///< per rank, file order
  std::map<std::string, std::vector<uint32_t>> groups;  ///< pg_name -> ranks, ascending
};

/// Reads `<prefix>.0.et`, `<prefix>.1.et`, ... (as many as exist, at least one) and, if
/// `comm_groups` is not empty, ASTRA-sim's communicator-group JSON ({"<pg_name>": [ranks...], ...}).
/// Node attributes read: comm_type (CollectiveCommType), comm_size, pg_name, comm_src, comm_dst,
/// comm_tag, is_cpu_op, duration_nanos (ours: ns where duration_micros is too coarse).
/// Throws InputError (the file; line 0, the node's id in the problem) for: no trace files, a file
/// that is not a Chakra trace (bad length prefix, unparsable message, gzip-compressed), a node type
/// other than COMP, COMM_SEND, COMM_RECV, COMM_COLL (or METADATA, skipped), a collective other
/// than ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL, a dependency on a node the rank lacks,
/// a send or receive peer out of range, a pg_name the groups file lacks, a group not containing the
/// rank, and a malformed groups file.
ChakraTrace read_chakra_trace(const std::string& prefix, const std::string& comm_groups = "");

/// The traffic of a trace: every collective's flows as the driver plans them (rings from `layout`)
/// and every send, summed per (source GPU, destination GPU) pair into one FlowSpec each (size_bytes
/// the pair's bytes, capped at 2^32 - 1), in (src, dst) order. What a cut of the network over MPI
/// ranks weighs (chakra_traffic.cpp; the SimAI twin is expected_traffic in driver.h).
std::vector<FlowSpec> expected_traffic(const ChakraTrace& trace, const GroupLayout& layout, ZeroChunk zero_chunk);

/// Runs a ChakraTrace: on every rank a node starts when all its dependencies have finished. A compute
/// node lasts its duration; GPU compute nodes of a rank run one at a time in the order they become
/// ready, CPU nodes (is_cpu_op) alongside. A collective is one instance per (group, k-th collective
/// of that group at a rank): its flows are plan_collective's (rings from `layout`, as the SimAI path)
/// and released as WorkloadDriver releases them; it finishes at a rank when that rank's flows have.
/// A send and the k-th receive with the same (source, destination, tag) are one flow of comm_size
/// bytes; both finish when it does. Flows start `send_latency` after release.
///
/// With a collective memo (wormhole/workload/collective_memo.h), a collective whose members have all
/// issued it before its first flow starts is offered to it, as WorkloadDriver offers a SimAI row's. A
/// trace's graph gives no rule such as SimAI's blocking TP collectives, so a replay on an NVSwitch is
/// made only where the graphs show that no rank sharing an NVSwitch with a member can issue traffic
/// to or from a member over it before the replay would end (quiet_until: the earliest issue each graph
/// allows, counting compute durations, the known ends of replays and, for collectives under way of unknown
/// end and nodes not issued yet, the least time their flows can take — the send latency and their bytes
/// at the GPUs' port rates —, sends and receives under way taken to end now, plus the send latency before
/// its flow leaves); on a fabric
/// island (a rail leaf's DP ring) the same, over every rank whose traffic can reach a member there. A
/// follower (a replay of a pattern being recorded elsewhere, its end not known until the recording's)
/// takes SimAI's rule on an NVSwitch instead: what waits for a member's own part is not searched
/// (earliest_issue). The collectives whose last members issue at one instant are decided together once
/// it is over (decide_offers): a replay's end is known to the others' look-aheads.
class ChakraDriver final : public TrainingClient {
 public:
  /// `layout.gpus` >= the trace's ranks. `forward` receives every NetObserver callback too.
  /// `memo`: the collective memo to offer collectives to (nullptr: none; one process only).
  /// `flow_tags`: report each flow's collective, ring and step (WorkloadReport::flows, /workload/flows), a
  /// send's as one of a "SendRecv" record of group "P2P" (listed with the collectives, as SimAI's pipeline
  /// transfers are); kept in files in `flow_tag_dir` beyond a few thousand (SpillVector) when it is given.
  ChakraDriver(Network& net, const ChakraTrace& trace, const GroupLayout& layout, Time send_latency,
               ZeroChunk zero_chunk, NetObserver* forward = nullptr, CollectiveMemo* memo = nullptr,
               bool flow_tags = false, const std::string& flow_tag_dir = {});
  ~ChakraDriver() override;
  /// Runs until every node of every rank has finished (or the queue is empty, or `until`, ps).
  /// Returns true when all finished; report() has one iteration (start 0, end = the last finish),
  /// the collectives (with their link-class bytes), the compute total of rank 0, and per rank its
  /// GPU compute, finish time and exposed communication as ASTRA-sim computes it (finish − GPU compute,
  /// in GpuRecord::exposed_ungrouped; exposure_by_group false; 0 for a rank that did not finish), the
  /// report GPU's (rank 0) in end_to_end.total_exposed and the GPU exposed longest in slowest_gpu.
  bool run(Time until) override;
  /// run() in two halves, for a distributed run (the engine runs the network in between): start()
  /// readies every node without dependencies (`until` unused); finish(until) writes the report
  /// (`until` unused: a trace's report names when it stopped) and returns whether every node finished.
  void start(Time until) override;
  bool finish(Time until) override;
  /// The share of the trace's nodes finished, [0, 1]; -1 for a trace without nodes.
  double progress() const override;
  const WorkloadReport& report() const { return report_; }

  void flow_finished(const FlowRecord& f) override;
  void pfc(const PfcRecord& p) override;
  void tick(Time now, uint64_t events, uint64_t flows_finished) override;
  void client_event(uint32_t target, uint16_t aux) override;

 private:
  struct Rank;
  struct Coll;
  struct P2p;
  void ready(uint32_t rank, uint32_t node);
  void finished(uint32_t rank, uint32_t node);
  void run_gpu(uint32_t rank);
  /// Flow `flow` of `owner` may go: a collective's joins its batch of flows leaving send_latency from now
  /// (ReleaseBatches), a p2p's leaves alone.
  void release(uint32_t owner, uint32_t flow);
  void inject(uint32_t owner, uint32_t flow);  ///< hands it to the network
  void on_client_event(uint32_t target, uint16_t aux);  ///< client_event's work (client_event offers after it)
  void on_flow_finished(const FlowRecord& f);           ///< flow_finished's work (likewise)
  // The collective memo (see the class comment).
  /// Offers collective `id` (every member issued it, its first flow not released yet) to the memo:
  /// CollectiveMemo::begin's handle goes to Coll::memo (-1: left to the network).
  void offer_to_memo(uint32_t id);
  /// At the end of a callback (start, a client event, a flow's end) whose events issued the last member
  /// of some collective: has them decided once the instant is over (decide_offers, 1 ps on; at once
  /// with a send latency of 1 ps or less). Only once every node an event readies is ready can the
  /// look-ahead see them (a send readied after the collective by the same node's end would be missed).
  void offer_pending();
  /// Offers the instant's collectives to the memo together (see the definition): a late one is counted
  /// as issued late; where two or more are offered, each whose stored pattern the memo would replay is
  /// taken to be replayed (assumed_) while the others' look-aheads run, dropped when its own fails.
  void decide_offers();
  /// CollectiveMemo::begin's arguments for collective `id`: its (source host, destination host) pairs
  /// and its plan key (made once while its instant is decided: offers_), the `involved` count per host.
  const std::vector<std::pair<uint32_t, uint32_t>>& pairs_of(uint32_t id);
  const std::string& key_of(uint32_t id);
  std::function<uint32_t(uint32_t, uint8_t)> involved_fn() const;
  /// Per collective of the instant's `ids`: whether the look-ahead of another of them can read the graph
  /// of one of its members (decide_offers assumes only such a one to be replayed).
  std::vector<uint8_t> read_by_another(const std::vector<uint32_t>& ids);
  /// When rank `y`'s part of collective `id` ends (ps), where that is known in advance: a replay of a
  /// stored pattern, or one taken to be replayed while an instant's offers are decided; -1 otherwise.
  Time known_end(uint32_t id, uint32_t y);
  /// CollectiveMemo::begin's `quiet_until` for collective `id` on an island of `kinds` (Island::kinds): 1 ps
  /// before the earliest time (ps) a flow of a rank can start on the members' island ports (over an
  /// NVSwitch they share, or over the fabric: the earliest issue, earliest_issue, plus the send latency),
  /// were the collective to end as `finish` says (ps after t0; nullptr: not known); INT64_MAX: never.
  /// Once a rank is found that can come before that end, its time is returned without searching the
  /// others (the memo asks only whether the island stays quiet to the end).
  Time quiet_until(uint32_t id, uint8_t kinds, Time t0, const std::vector<Time>* finish);
  /// The earliest time (ps, a lower bound) rank `y` can start a send or collective whose flows reach a
  /// member of collective `offered` or leave one over an island of `kinds` (reaches_members), its
  /// graph's collectives ending where known_end says, its other collectives under way no sooner than
  /// part_end_bound, its nodes not issued yet lasting min_duration, its sends and receives under way taken
  /// to end now,
  /// and `offered` at `done_y`; `bound` once nothing can come before it (a search by earliest end, node by
  /// node, that stops there); INT64_MAX: nothing ever.
  /// `done_y`: -1 for a non-member (it has no part of `offered`) and for a member of a follower (of a
  /// recording still running, its end not known). A follower's member on an NVSwitch island: what only
  /// y's part of `offered` can ready is not searched — SimAI's rule for its blocking TP collectives, that
  /// a member issues nothing that waits for its part onto the island before the whole collective is over
  /// (a member that does is caught as a conflict by CollectiveMemo and warned about); on a fabric island
  /// its part is taken to end now, as the SimAI driver takes it there.
  Time earliest_issue(uint32_t y, uint32_t offered, uint8_t kinds, Time done_y, Time bound);
  /// A lower bound (ps) on how long a flow of `bytes` payload bytes between ranks `a` and `b` lasts once it
  /// leaves: its bytes at the slower of the two GPUs' fastest port rates (bit/s), which it crosses both.
  Time min_transfer(uint32_t a, uint32_t b, uint64_t bytes) const;
  /// A lower bound (ps) on when rank `y`'s part of collective `id` (its flows, sent and received) can end,
  /// from its flows' states now: a flow under way ends no sooner than now; one released and waiting for
  /// its send latency no sooner than it leaves (its batch's instant) plus min_transfer; one not released
  /// yet leaves the send latency after its parent can end (or after now: a member's first flows leave
  /// when it issues) and lasts min_transfer more; and what y sends of it that
  /// has not left yet passes y's ports after now (send_time). Not below now. (Of a flow under way, how much
  /// is left is not read: a memoizer holding its partition credits what it sent only when it lets go.)
  /// Made for every member at once, kept while the time and the collective (Coll::epoch) stay as they were.
  Time part_end_bound(uint32_t id, uint32_t y);
  /// A lower bound (ps) on how long rank `y`'s port(s) take to send `sends` ((destination rank, bytes)
  /// each): per port, the bytes whose route leaves through it (Routing::host_nics, where a destination
  /// has one) at its rate, and all of them at the sum of y's port rates; 0 for none.
  Time send_time(uint32_t y, const std::vector<std::pair<uint32_t, uint64_t>>& sends);
  /// A lower bound (ps) on how long node `i` of rank `y` takes from its issue to its end, for the
  /// look-ahead: a GPU or CPU compute node its duration; a collective the least part_time of y over every
  /// (op, bytes) the group's collective nodes have on any rank (the collective is planned from the first
  /// member's node to issue, which may not say what y's says); a send the send latency plus its flow's
  /// min_transfer; 0 for a receive, a zero-byte collective or send (they can end at once). Kept per node
  /// (Rank::min_duration) once asked.
  Time min_duration(uint32_t y, uint32_t i);
  /// A lower bound (ps) on how long rank `y`'s part of a collective planned from (`op`, `bytes`, `group`)
  /// takes from y's issue: the send latency plus y's first flow's min_transfer or, if longer, plus the
  /// time y's ports take to send all its flows (send_time: none leaves before y issues); 0 without flows.
  Time part_time(uint32_t y, Collective op, uint64_t bytes, const std::string& group);
  /// The distinct (op, bytes) of group `group`'s collective nodes of more than 0 bytes, over every rank,
  /// ascending (every group's made at the first call); empty for a group with none.
  const std::vector<std::pair<Collective, uint64_t>>& group_variants(const std::string& group);
  /// The earliest issue time of collective `c` among its members (ps): its t0 for the memo.
  static Time first_issue(const Coll& c);
  /// The ranks whose GPUs share an NVSwitch with one of `members` (theirs included), ascending: whose
  /// graphs an NVSwitch island's look-ahead reads.
  std::vector<uint32_t> nvswitch_near(const std::vector<uint32_t>& members);
  /// The ranks whose GPUs share an NVSwitch with rank `r`'s (r included), ascending; from the wiring.
  const std::vector<uint32_t>& nvswitch_peers(uint32_t r);
  /// Whether node `n` of rank `y`, when it issues, can send traffic that leaves or reaches one of
  /// `members` (sorted) over an island of `kinds`: over an NVSwitch y shares with the other end, or
  /// over the fabric otherwise; a send, or a collective of a group holding such a GPU.
  bool reaches_members(uint32_t y, const ChakraNode& n, const std::vector<uint32_t>& members, uint8_t kinds);
  /// Counts (d = +1) or uncounts (−1) an unfinished collective or transfer of rank `r` whose flows cross
  /// islands of `kinds` (Island::kinds): CollectiveMemo::begin's `involved`.
  void involve(uint32_t r, uint8_t kinds, int d);

  Network& net_;
  const ChakraTrace& trace_;
  GroupLayout layout_;
  Time send_latency_;
  ZeroChunk zero_chunk_;
  NetObserver* forward_;
  bool flow_tags_;
  std::vector<Rank> ranks_;
  std::vector<Coll> colls_;
  std::vector<P2p> p2p_;
  std::map<std::pair<std::string, uint32_t>, uint32_t> coll_of_;                 // (group, k) -> colls_
  std::map<std::tuple<uint32_t, uint32_t, int64_t, uint32_t>, uint32_t> p2p_of_;  // (src, dst, tag, k)
  // Owners whose flows start at each instant (owner's top bit: a p2p); a collective's takes its oldest
  // batch (Coll::batches). One event per instant, its target a count never reused (WorkloadDriver::due_).
  DueReleases due_;
  uint32_t due_events_ = 0;
  std::vector<std::pair<uint32_t, uint32_t>> timers_;    // (rank, node) of running CPU nodes
  ChunkedSlots<std::pair<uint32_t, uint32_t>> flow_owner_;  // running flow id -> (owner, flow)
  uint64_t left_ = 0;  // nodes not finished
  uint64_t total_ = 0;  // nodes of the trace
  std::vector<uint64_t> left_of_;  // per rank: its nodes not finished
  Time last_ = 0;
  WorkloadReport report_;
  CollectiveMemo* memo_ = nullptr;
  std::vector<std::array<uint32_t, 2>> involved_;  // per rank, per island kind: its unfinished comm reaching one
  std::vector<uint64_t> max_rate_;                  // per rank: its GPU's fastest port, bit/s (min_transfer)
  std::vector<uint64_t> sum_rate_;                  // per rank: its GPU's ports together, bit/s (send_time)
  // min_duration's plans of collectives not issued yet: (op, bytes, group) -> what ready() will plan.
  std::map<std::tuple<Collective, uint64_t, std::string>, CollectivePlan> plans_;
  std::map<std::string, std::vector<std::pair<Collective, uint64_t>>> variants_;  // group_variants
  bool variants_made_ = false;
  std::vector<std::vector<uint32_t>> nv_peers_;     // nvswitch_peers, made on first use
  std::vector<uint8_t> nv_peers_made_;
  std::vector<uint32_t> pending_offers_;            // collectives to offer when the instant is over
  Time decide_at_ = -1;                             // when the pending offers' decision is scheduled (-1: none)
  struct Assumed {
    const std::vector<Time>* finish;  // the stored pattern's completions (ps after the first issue)
    uint8_t kinds;                    // its island's kinds
    std::vector<Time> done;           // when each member's part ends (ps)
  };
  std::unordered_map<uint32_t, Assumed> assumed_;   // decide_offers: collectives taken to be replayed
  struct Offer {
    std::vector<std::pair<uint32_t, uint32_t>> pairs;
    std::string key;
  };
  std::unordered_map<uint32_t, Offer> offers_;      // decide_offers: pairs_of's and key_of's, per collective
  uint32_t depth_ = 0;                              // callbacks under way (start, client events, flow ends)
  std::vector<std::vector<uint32_t>> seen_;        // earliest_issue's marks, per rank and node
  uint32_t stamp_ = 0;
};

}  // namespace wh
