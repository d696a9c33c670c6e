// Collectives -> point-to-point flows (docs/workloads.md §1.1, §5): SimAI's ns-3 backend group
// formation and its MockNccl ring / AllToAll decomposition. Pure computation: no network, no
// simulation, no time. The workload driver turns a CollectivePlan (implicit: flows are computed from its
// shape, never stored) into flows and releases each flow
// when its parent has been fully received.
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "wormhole/workload/simai_workload.h"

namespace wh {

/// The parallel layout (docs/workloads.md §1.1 last bullet, §5.1, §6): GPU count from the topology,
/// TP from the header (0 = all GPUs), PP from the header (or 1, as SimAI's ns-3 backend), DP =
/// gpus / (TP × PP), EP from the header, DP_EP = DP / EP. Ranks are laid out as Megatron-LM does
/// (order tp-dp-pp): pipeline stage s holds the consecutive GPUs s·G/PP .. (s+1)·G/PP − 1, and inside
/// a stage the TP, DP, EP and DP_EP groups are SimAI's groups of a G/PP-GPU cluster.
struct GroupLayout {
  uint32_t gpus = 0;             ///< GPU hosts of the job (ids 0..gpus-1)
  uint32_t tp = 1;               ///< tensor-parallel group size
  uint32_t pp = 1;               ///< pipeline stages (1: no pipeline)
  uint32_t stage_gpus = 0;       ///< GPUs per pipeline stage = gpus / pp
  uint32_t dp = 1;               ///< data-parallel group size = gpus / (tp × pp)
  uint32_t ep = 1;               ///< expert-parallel group size
  uint32_t dp_ep = 1;            ///< dp / ep
  uint32_t gpus_per_server = 1;  ///< from the topology header (server s = GPUs s*gps .. s*gps+gps-1)
};

/// How pipeline parallelism (the header's PP) is run (docs/workloads.md §6).
enum class PipelineSchedule {
  None,      ///< PP taken as 1, no stage-to-stage flows: SimAI's ns-3 backend
  OneFOneB,  ///< Megatron's non-interleaved one-forward-one-backward schedule (default)
  GPipe,     ///< every micro-batch's forward, then every backward (last micro-batch first)
  Interleaved  ///< Megatron's interleaved 1F1B: each stage runs several model chunks (virtual stages)
};

/// Builds the layout from a workload header and the topology's (or the job's) GPU count and GPUs
/// per server. `pipeline`: take the header's PP (true) or 1 (false, SimAI's ns-3 backend).
/// A header all_gpus that differs from gpus is not an error: as SimAI's ns-3 backend, the topology's
/// count is used (DP = gpus / (TP × PP)), and a warning ("all_gpus N differs ...") is appended to
/// `warnings` if given.
/// Throws std::invalid_argument (message says what is wrong and how to fix it) when:
///  * gpus or gpus_per_server is 0, or gpus is not a multiple of gpus_per_server;
///  * PP (when taken) is 0 or does not divide gpus ("GPU count not divisible by PP");
///  * TP (after 0 -> gpus / PP) does not divide the stage's GPUs ("GPU count not divisible by TP");
///  * TP does not divide GPUs per server and is not a multiple of it ("TP not dividing GPUs per
///    server": a TP group would cover part of a server plus part of another; TP 16 on 8-GPU servers
///    is accepted, as SimAI does, §5.3);
///  * EP is 0 or does not divide DP ("EP not dividing DP": SimAI builds no groups then, §5.1).
/// MICRO headers have TP = EP = PP = 1 as read (SimAI leaves them uninitialised; docs/workloads.md §9).
GroupLayout make_layout(const WorkloadHeader& header, uint32_t gpus, uint32_t gpus_per_server, bool pipeline = false,
                        std::vector<std::string>* warnings = nullptr);

/// The GPU of pipeline stage `stage` at the same position as `gpu` in its own stage (Megatron's
/// pipeline group: gpu mod stage_gpus + stage × stage_gpus). Requires stage < layout.pp.
inline uint32_t pipeline_peer(const GroupLayout& layout, uint32_t gpu, uint32_t stage) {
  return gpu % layout.stage_gpus + stage * layout.stage_gpus;
}

/// The GPU ids (ascending) of `gpu`'s group of kind `group`, exactly as SimAI forms them
/// (docs/workloads.md §5.1, MockNcclGroup) inside gpu's pipeline stage (b = its first GPU; the ids
/// below are relative to b; with PP 1, b = 0):
///  * TP group t = {t*TP .. t*TP + TP - 1}, t = gpu / TP (consecutive ranks);
///  * DP group i = {i, i + TP, i + 2TP, ...} (DP members), i = gpu % TP (stride TP);
///  * EP group (a, k) = {(a*EP + l)*TP + k : l = 0..EP-1}, k = gpu % TP, a = (gpu / TP) / EP
///    (position k of EP consecutive TP groups);
///  * DP_EP group (b, k) = {(b + m*EP)*TP + k : m = 0..DP_EP-1}, k = gpu % TP, b = (gpu / TP) % EP.
/// CommGroup::None returns an empty list (SimAI gives such a collective no group: nothing is sent).
/// Throws std::invalid_argument when gpu >= layout.gpus.
std::vector<uint32_t> group_members(const GroupLayout& layout, CommGroup group, uint32_t gpu);

/// Number of rings (NCCL channels) SimAI uses for a ring collective on `members` (§5.3): L = the
/// number of group ranks on the server of the lowest rank. TP 8 on 8-GPU servers -> 8; a DP group with
/// one rank per server -> 1; DP groups of TP 4 on 8-GPU servers -> 2. 0 for an empty group.
uint32_t ring_count(const GroupLayout& layout, const std::vector<uint32_t>& members);

inline constexpr uint32_t kNoParent = std::numeric_limits<uint32_t>::max();
/// Plans of this many flows or more are refused: flow indices are uint32_t and kNoParent is taken.
inline constexpr uint64_t kMaxPlanFlows = std::numeric_limits<uint32_t>::max();

/// One point-to-point flow of a collective.
struct FlowStep {
  uint32_t src = 0, dst = 0;  ///< GPU ids
  uint64_t bytes = 0;
  uint32_t step = 0;  ///< 0 .. plan.steps-1
  uint32_t ring = 0;  ///< channel, 0 .. plan.rings-1 (0 for AllToAll)
  /// Index in the plan of the one flow that must be fully received at `src` before this flow is
  /// issued (the step-1 flow of the same ring from prev(src)); kNoParent for step 0 and AllToAll.
  uint32_t parent = kNoParent;
};

/// What to do when a non-zero collective floors to a 0-byte chunk (docs/workloads.md §1.5 item 5, §5.4).
enum class ZeroChunk {
  NoFlows,        ///< as SimAI: no flows, the collective completes immediately (default)
  ClampToOneByte  ///< send 1-byte chunks so the collective still costs its latency
};

/// The flows of one collective on one group, implicit: the plan keeps only its shape (op, sorted
/// members, rings, steps, chunk) and computes flow f on demand, so its memory is 4 B a member
/// whatever its flow count (a 2048-rank ring AllReduce has 8.4 M flows). Dependencies: a flow of
/// step s on ring r from gpu g depends on the flow of step s-1 on ring r from prev_r(g), i.e. the one
/// arriving at g (its parent). Rings are independent. size() 0 = completes immediately.
///
/// Flow order (as SimAI, and as the explicit planner this replaces):
///  * ring ops: f = (c·steps + s)·R + i for ring c, step s, sender members[i] (ring-major, then
///    step, then ascending GPU id);
///  * AllToAll: f = i·(R−1) + (j < i ? j : j−1) for sender members[i], receiver members[j], j ≠ i.
/// Member index i means members[i]; "position" is a place in a ring's cycle.
struct CollectivePlan {
  Collective op = Collective::None;
  std::vector<uint32_t> members;  ///< the group, ascending GPU ids (also when it sends nothing)
  uint32_t steps = 0;             ///< 2(R-1) AllReduce, R-1 RS/AG, 1 AllToAll, 0 when no flows
  uint32_t rings = 0;             ///< channels used; 1 for AllToAll, 0 when no flows
  uint64_t chunk = 0;             ///< bytes of every flow (after rounding / clamping)
  uint32_t flows = 0;             ///< flow count, < kMaxPlanFlows

  uint32_t size() const { return flows; }
  bool empty() const { return flows == 0; }
  uint32_t ranks() const { return static_cast<uint32_t>(members.size()); }
  /// Flows each member sends (and, every flow having one sender and one receiver, receives).
  uint32_t sends_per_member() const { return flows == 0 ? 0 : flows / ranks(); }
  /// The k-th flow (k < sends_per_member(), ascending flow order) member index i sends.
  uint32_t sent_flow(uint32_t i, uint32_t k) const {
    const uint32_t R = ranks();
    return op == Collective::AllToAll ? i * (R - 1) + k : k * R + i;
  }
  /// Flows each member sends that depend on no other flow: one per ring (step 0), every flow of an
  /// AllToAll.
  uint32_t roots_per_member() const {
    return flows == 0 ? 0 : op == Collective::AllToAll ? sends_per_member() : rings;
  }
  /// The r-th such flow (r < roots_per_member(), ascending flow order) member index i sends.
  uint32_t root_flow(uint32_t i, uint32_t r) const {
    return op == Collective::AllToAll ? sent_flow(i, r) : sent_flow(i, r * steps);
  }
  /// Member index of flow f's sender / receiver (f < size()).
  uint32_t src_index(uint32_t f) const;
  uint32_t dst_index(uint32_t f) const;
  /// The flow f depends on (see FlowStep::parent) / the one flow that depends on f; kNoParent if none.
  uint32_t parent(uint32_t f) const;
  uint32_t child(uint32_t f) const;
  /// Flow f in full (f < size()).
  FlowStep flow(uint32_t f) const;
  /// Ring c's cycle of GPU ids (next of element k is element k+1, wrapping); ring ops only.
  std::vector<uint32_t> ring_order(uint32_t c) const;

  /// Calls fn(src_index, dst_index, n) for the plan's flows grouped by their two members: once per
  /// ring and member for a ring op (n = steps flows to its next on that ring), once per flow for an
  /// AllToAll (n = 1). O(ranks × rings) for a ring op, where walking its flows is O(ranks² × rings).
  template <class F>
  void for_each_pair(F&& fn) const {
    if (flows == 0) return;
    if (op == Collective::AllToAll) {
      for (uint32_t f = 0; f < flows; ++f) fn(src_index(f), dst_index(f), 1u);
      return;
    }
    const uint32_t R = ranks();
    for (uint32_t c = 0; c < rings; ++c)
      for (uint32_t pos = 0; pos < R; ++pos) fn(at_position(c, pos), at_position(c, (pos + 1) % R), steps);
  }

  // Dependency chains: following child() from a root gives a chain of `steps` flows (one per ring and
  // starting member); an AllToAll's flows are chains of one. A flow is released only once its parent
  // has finished, so the flows of a chain finish in chain order.
  /// Chains in the plan: ranks × rings for a ring op, flows for an AllToAll, 0 without flows.
  uint32_t chains() const { return flows == 0 ? 0 : op == Collective::AllToAll ? flows : ranks() * rings; }
  /// Flows in each chain: steps for a ring op, 1 for an AllToAll.
  uint32_t chain_length() const { return op == Collective::AllToAll ? 1 : steps; }
  /// Flow f's chain (< chains()) and its place in it (< chain_length(); parent(f) is at the place
  /// before, in the same chain).
  std::pair<uint32_t, uint32_t> chain_of(uint32_t f) const;

  // Ring arithmetic (ring ops, c < rings): members are R/C blocks of C consecutive indices; ring c
  // visits each block rotated to start at its c-th member, blocks in order.
  /// Position in ring c of member index i.
  uint32_t position(uint32_t c, uint32_t i) const {
    const uint32_t C = rings;
    return i / C * C + (i % C + C - c) % C;
  }
  /// Member index at position pos of ring c (inverse of position()).
  uint32_t at_position(uint32_t c, uint32_t pos) const {
    const uint32_t C = rings;
    return pos / C * C + (c + pos % C) % C;
  }
};

/// Which flows of one running instance of a plan have finished, in memory per dependency chain
/// rather than per flow: a ring's chain finishes in order, so a count per chain (4 B) says which of its
/// flows have finished, where a bit per flow took 2(R − 1) bits per chain — 67 MB for a 16,384-rank
/// ring AllReduce against 64 KB. An AllToAll (chains of one flow) keeps a bit per flow.
class FinishedFlows {
 public:
  /// None of `p`'s flows finished.
  void reset(const CollectivePlan& p);
  /// Gives the memory back (the instance is over).
  void clear();
  /// Flow f of `p` finished. Throws std::logic_error if it already had, or if the flow before it in
  /// its chain (its parent) had not: a driver bug, as a flow is released only after its parent finished.
  void set(const CollectivePlan& p, uint32_t f);
  /// Whether flow f of `p` finished.
  bool test(const CollectivePlan& p, uint32_t f) const;
  /// Bytes of the state for a plan of `chains` chains of `chain_length` flows (whole 64-bit words
  /// of bits for chains of one).
  static uint64_t bytes(uint64_t chains, uint32_t chain_length);

 private:
  std::vector<bool> bits_;       // chains of one: per flow
  std::vector<uint32_t> done_;   // longer chains: per chain, how many of its flows finished
};

/// Every flow of `p` as a vector, in flow order (p.flow(0) .. p.flow(size-1)): for tests and small
/// plans only — this is the 32 B a flow the implicit plan avoids.
std::vector<FlowStep> explicit_flows(const CollectivePlan& p);

/// Bytes a CollectivePlan of `ranks` members holds (its record and member list), in O(1). Its flow
/// count does not enter: flows are computed, not stored.
uint64_t plan_bytes(uint32_t ranks);

/// Decomposes one collective of `bytes_per_rank` (the row's size S: the full gathered output for
/// AllGather, the full input for ReduceScatter) on the group `members` (any order; sorted here) into
/// flows, following docs/workloads.md §5.3, §5.4 and §5.7 (ring algorithm; NVLS and PXN not modelled):
///  * R = members.size(). R <= 1, op None, or bytes_per_rank 0 -> no flows.
///  * Ring ops (AllReduce, ReduceScatter, AllGather), C = `rings` channels (use ring_count()):
///    chunk = floor(S / R / C) (integer division twice, which equals floor(S / (R*C))); steps =
///    2(R-1) for AllReduce (R-1 reduce-scatter then R-1 all-gather steps), R-1 for RS/AG; in every
///    step every rank sends one chunk to its ring next, per channel -> C * steps * R flows.
///    Ring order (§5.3): the sorted ranks are taken as R/C "servers" of C ranks each (block m =
///    sorted[m*C .. m*C+C-1], which is SimAI's "local list + m*delta" for every §5.1 group);
///    channel c visits block 0 rotated to start at its c-th rank, then block 1 rotated the same way,
///    ..., block R/C-1, then wraps. Requires 1 <= C and C dividing R (std::invalid_argument otherwise).
///  * AllToAll: R(R-1) direct flows members[i] -> members[j], i != j, of floor(S / R) bytes each,
///    step 0, ring 0, no parents; `rings` is ignored.
///  * A chunk that floors to 0 (S > 0): `zero_chunk` decides (SimAI: no flows).
/// Throws std::invalid_argument also for a plan of kMaxPlanFlows (2^32 − 1) flows or more (the
/// message names the group size and says how to fix it). O(R): nothing per flow is built.
CollectivePlan plan_collective(Collective op, uint64_t bytes_per_rank,
                               const std::vector<uint32_t>& members, uint32_t rings,
                               ZeroChunk zero_chunk = ZeroChunk::NoFlows);

/// plan_collective(op, bytes_per_rank, members, rings, zero_chunk).size() for a group of `ranks`
/// members, in O(1) without planning: 0 for ranks <= 1, op None, 0 bytes or a 0-byte chunk with
/// ZeroChunk::NoFlows; AllToAll ranks·(ranks−1); ring ops rings·steps·ranks. For sizing a run before it
/// starts (its memory estimate); does not check that `rings` divides `ranks` (plan_collective does).
uint64_t collective_flow_count(Collective op, uint64_t bytes_per_rank, uint32_t ranks, uint32_t rings,
                               ZeroChunk zero_chunk = ZeroChunk::NoFlows);
/// The size of each of those flows (bytes): plan_collective(...).chunk, in O(1); 0 where there are none.
uint64_t collective_flow_bytes(Collective op, uint64_t bytes_per_rank, uint32_t ranks, uint32_t rings,
                               ZeroChunk zero_chunk = ZeroChunk::NoFlows);

}  // namespace wh
