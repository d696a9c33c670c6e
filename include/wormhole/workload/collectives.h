// Collectives -> point-to-point flows (docs/workloads.md §1.1, §5): SimAI's ns-3 backend group
// formation and its MockNccl ring / AllToAll decomposition. Pure computation: no network, no
// simulation, no time. The workload driver turns a CollectivePlan into flows and releases each flow
// when its parent has been fully received.
#pragma once
#include <cstdint>
#include <limits>
#include <vector>

#include "wormhole/workload/simai_workload.h"

namespace wh {

/// The parallel layout the ns-3 backend of SimAI uses (docs/workloads.md §1.1 last bullet, §5.1):
/// GPU count from the topology, TP from the header (0 = all GPUs), PP forced to 1, DP = gpus / TP,
/// EP from the header, DP_EP = DP / EP.
struct GroupLayout {
  uint32_t gpus = 0;             ///< GPU hosts of the topology (ids 0..gpus-1)
  uint32_t tp = 1;               ///< tensor-parallel group size
  uint32_t dp = 1;               ///< data-parallel group size = gpus / tp
  uint32_t ep = 1;               ///< expert-parallel group size
  uint32_t dp_ep = 1;            ///< dp / ep
  uint32_t gpus_per_server = 1;  ///< from the topology header (server s = GPUs s*gps .. s*gps+gps-1)
};

/// Builds the layout from a workload header and the topology's GPU count and GPUs per server.
/// Throws std::invalid_argument (message says what is wrong and how to fix it) when:
///  * gpus or gpus_per_server is 0, or gpus is not a multiple of gpus_per_server;
///  * the header's all_gpus is non-zero and differs from gpus ("GPU counts differ"; SimAI's ns-3
///    backend ignores all_gpus, but a mismatch means the workload was made for another cluster);
///  * TP (after 0 -> gpus) does not divide gpus ("GPU count not divisible by TP");
///  * TP does not divide GPUs per server and is not a multiple of it ("TP not dividing GPUs per
///    server": a TP group would cover part of a server plus part of another; TP 16 on 8-GPU servers
///    is accepted, as SimAI does, §5.3);
///  * EP is 0 or does not divide DP ("EP not dividing DP": SimAI builds no groups then, §5.1).
/// The header's PP is ignored (forced to 1 as in the ns-3 backend); MICRO headers have TP = EP = 1
/// as read (SimAI leaves them uninitialised; see the report / docs/workloads.md §9).
GroupLayout make_layout(const WorkloadHeader& header, uint32_t gpus, uint32_t gpus_per_server);

/// The GPU ids (ascending) of `gpu`'s group of kind `group`, exactly as SimAI forms them
/// (docs/workloads.md §5.1, MockNcclGroup):
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

/// One point-to-point flow of a collective.
struct FlowStep {
  uint32_t src = 0, dst = 0;  ///< GPU ids
  uint64_t bytes = 0;
  uint32_t step = 0;  ///< 0 .. plan.steps-1
  uint32_t ring = 0;  ///< channel, 0 .. plan.rings-1 (0 for AllToAll)
  /// Index in plan.flows of the one flow that must be fully received at `src` before this flow is
  /// issued (the step-1 flow of the same ring from prev(src)); kNoParent for step 0 and AllToAll.
  uint32_t parent = kNoParent;
};

/// What to do when a non-zero collective floors to a 0-byte chunk (docs/workloads.md §1.5 item 5, §5.4).
enum class ZeroChunk {
  NoFlows,        ///< as SimAI: no flows, the collective completes immediately (default)
  ClampToOneByte  ///< send 1-byte chunks so the collective still costs its latency
};

/// The flows of one collective on one group. Dependencies: a flow of step s on ring r from gpu g
/// depends on the flow of step s-1 on ring r from prev_r(g), i.e. the one arriving at g (`parent`).
/// Rings are independent. Empty `flows` = the collective completes immediately.
struct CollectivePlan {
  std::vector<FlowStep> flows;  ///< order: ring-major, then step, then ring position (as SimAI)
  uint32_t steps = 0;           ///< 2(R-1) AllReduce, R-1 RS/AG, 1 AllToAll, 0 when no flows
  uint32_t rings = 0;           ///< channels used; 1 for AllToAll, 0 when no flows
  uint64_t chunk = 0;           ///< bytes of every flow (after rounding / clamping)
  /// ring_order[r] = the ring's cycle of GPU ids (next of ring_order[r][i] is [i+1], wrapping).
  /// Empty for AllToAll and when no flows.
  std::vector<std::vector<uint32_t>> ring_order;
};

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
CollectivePlan plan_collective(Collective op, uint64_t bytes_per_rank,
                               const std::vector<uint32_t>& members, uint32_t rings,
                               ZeroChunk zero_chunk = ZeroChunk::NoFlows);

}  // namespace wh
