// Collectives -> flows (docs/workloads.md §1.1, §5). See collectives.h for the rules.
#include "wormhole/workload/collectives.h"

#include "wormhole/core/release.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace wh {

namespace {

[[noreturn]] void fail(const std::string& problem, const std::string& fix) {
  throw std::invalid_argument(problem + " (fix: " + fix + ")");
}

std::string s(uint64_t v) { return std::to_string(v); }

}  // namespace

GroupLayout make_layout(const WorkloadHeader& h, uint32_t gpus, uint32_t gps, bool pipeline,
                        std::vector<std::string>* warnings) {
  if (gpus == 0) fail("the topology has no GPUs", "use a topology with GPU hosts");
  if (gps == 0) fail("GPUs per server is 0", "give the topology's GPUs per server (header token 2)");
  if (gpus % gps != 0)
    fail("the topology's " + s(gpus) + " GPUs are not a whole number of " + s(gps) + "-GPU servers",
         "use a GPU count that is a multiple of the GPUs per server");
  GroupLayout L;
  L.gpus = gpus;
  L.gpus_per_server = gps;
  L.pp = pipeline ? h.pp : 1;
  if (L.pp == 0) fail("PP is 0", "set pp: to 1 (no pipeline) or to the number of pipeline stages");
  if (gpus % L.pp != 0)
    fail("GPU count " + s(gpus) + " not divisible by PP " + s(L.pp),
         "use a pp: that divides the GPU count, or run without the pipeline (workload.pipeline = \"none\")");
  L.stage_gpus = gpus / L.pp;
  L.tp = h.tp == 0 ? L.stage_gpus : h.tp;  // SimAI: TP 0 = all GPUs (of the stage)
  if (L.stage_gpus % L.tp != 0)
    fail("GPU count " + s(gpus) + (L.pp > 1 ? " (" + s(L.stage_gpus) + " per pipeline stage)" : "") +
             " not divisible by TP " + s(L.tp),
         "use a TP (model_parallel_NPU_group) that divides the GPU count");
  if (gps % L.tp != 0 && L.tp % gps != 0)
    fail("TP " + s(L.tp) + " not dividing GPUs per server " + s(gps) +
             " (and not a multiple of it): a TP group would straddle servers unevenly",
         "use a TP that divides " + s(gps) + " or is a multiple of it");
  L.dp = L.stage_gpus / L.tp;
  if (h.all_gpus != 0 && h.all_gpus != gpus && warnings)
    // SimAI's ns-3 backend takes the topology's count (users place a job on a bigger cluster).
    warnings->push_back("all_gpus " + s(h.all_gpus) + " differs from the " + s(gpus) +
                        " GPUs the workload runs on: using " + s(gpus) + " (DP = " + s(L.dp) +
                        "), as SimAI's ns-3 backend does");
  L.ep = h.ep;
  if (L.ep == 0) fail("EP is 0", "set ep: to 1 (no expert parallelism) or to a divisor of DP " + s(L.dp));
  if (L.dp % L.ep != 0)
    fail("EP " + s(L.ep) + " not dividing DP " + s(L.dp) + " (DP = GPUs " + s(gpus) + " / TP " +
             s(L.tp) + ")",
         "use an ep: that divides " + s(L.dp));
  L.dp_ep = L.dp / L.ep;
  return L;
}

std::vector<uint32_t> group_members(const GroupLayout& L, CommGroup group, uint32_t gpu) {
  if (gpu >= L.gpus)
    fail("GPU " + s(gpu) + " out of range (the layout has " + s(L.gpus) + " GPUs)",
         "use a GPU id below " + s(L.gpus));
  std::vector<uint32_t> m;
  const uint32_t stage_gpus = L.stage_gpus ? L.stage_gpus : L.gpus;
  const uint32_t base = gpu - gpu % stage_gpus;  // first GPU of gpu's pipeline stage
  gpu -= base;
  const uint32_t t = gpu / L.tp;  // TP group index
  const uint32_t k = gpu % L.tp;  // position in the TP group
  switch (group) {
    case CommGroup::None:
      break;
    case CommGroup::TP:
      for (uint32_t i = 0; i < L.tp; ++i) m.push_back(t * L.tp + i);
      break;
    case CommGroup::DP:
      for (uint32_t j = 0; j < L.dp; ++j) m.push_back(k + j * L.tp);
      break;
    case CommGroup::EP: {
      const uint32_t a = t / L.ep;
      for (uint32_t l = 0; l < L.ep; ++l) m.push_back((a * L.ep + l) * L.tp + k);
      break;
    }
    case CommGroup::DP_EP: {
      const uint32_t b = t % L.ep;
      for (uint32_t j = 0; j < L.dp_ep; ++j) m.push_back((b + j * L.ep) * L.tp + k);
      break;
    }
  }
  for (uint32_t& x : m) x += base;
  return m;
}

uint32_t ring_count(const GroupLayout& L, const std::vector<uint32_t>& members) {
  if (members.empty()) return 0;
  const uint32_t server = *std::min_element(members.begin(), members.end()) / L.gpus_per_server;
  return static_cast<uint32_t>(std::count_if(members.begin(), members.end(), [&](uint32_t g) {
    return g / L.gpus_per_server == server;
  }));
}

namespace {

// How many flows a collective of R ranks on C rings has, and their size (bytes), by §5.3–§5.7; none for
// 0 bytes, a group of one, op None, no ring, or a 0-B chunk under ZeroChunk::NoFlows (1 B otherwise).
// No checks: plan_collective() makes them.
struct FlowShape {
  uint64_t count = 0, chunk = 0;
};
FlowShape flow_shape(Collective op, uint64_t S, uint32_t R, uint32_t C, ZeroChunk zero_chunk) {
  if (R <= 1 || op == Collective::None || S == 0) return {};
  FlowShape f;
  if (op == Collective::AllToAll) {  // §5.7: `rings` is ignored
    f.chunk = S / R;
    f.count = uint64_t(R) * (R - 1);
  } else {  // ring ops, §5.3 / §5.4
    if (C == 0) return {};
    const uint64_t steps = op == Collective::AllReduce ? 2 * uint64_t(R - 1) : R - 1;
    f.chunk = S / R / C;
    f.count = uint64_t(C) * steps * R;
  }
  if (f.chunk == 0) {
    if (zero_chunk == ZeroChunk::NoFlows) return {};
    f.chunk = 1;
  }
  return f;
}

}  // namespace

CollectivePlan plan_collective(Collective op, uint64_t S, const std::vector<uint32_t>& members,
                               uint32_t C, ZeroChunk zero_chunk) {
  CollectivePlan p;
  p.op = op;
  p.members = members;
  std::sort(p.members.begin(), p.members.end());
  const auto R = static_cast<uint32_t>(members.size());
  if (R <= 1 || op == Collective::None || S == 0) return p;
  if (std::adjacent_find(p.members.begin(), p.members.end()) != p.members.end())
    fail("a collective's group lists a GPU twice", "pass each group member once");

  uint32_t steps = 1, rings = 1;  // AllToAll (§5.7): `rings` is ignored
  if (op != Collective::AllToAll) {  // ring ops, §5.3 / §5.4
    if (C == 0 || R % C != 0)
      fail("ring count " + s(C) + " does not divide the group size " + s(R),
           "use ring_count() (the group's ranks per server)");
    steps = op == Collective::AllReduce ? 2 * (R - 1) : R - 1;
    rings = C;
  }
  const FlowShape shape = flow_shape(op, S, R, C, zero_chunk);
  if (shape.count == 0) return p;  // 0-B chunks under ZeroChunk::NoFlows
  const uint64_t chunk = shape.chunk, count = shape.count;
  // Flow indices are uint32_t (kNoParent = 2^32 - 1 is taken): a ring AllReduce reaches this at
  // 46,342 ranks on one ring, an AllToAll at 65,537.
  if (count >= kMaxPlanFlows)
    fail("a " + std::string(to_string(op)) + " on " + s(R) + " GPUs (" + s(rings) + " rings) would have " +
             s(count) + " flows, more than the 4294967294 a collective can have",
         "use smaller groups (a larger TP or EP, fewer GPUs)");
  p.steps = steps;
  p.rings = rings;
  p.chunk = chunk;
  p.flows = static_cast<uint32_t>(count);
  return p;
}

uint32_t CollectivePlan::src_index(uint32_t f) const {
  const uint32_t R = ranks();
  return op == Collective::AllToAll ? f / (R - 1) : f % R;
}

uint32_t CollectivePlan::dst_index(uint32_t f) const {
  const uint32_t R = ranks();
  if (op == Collective::AllToAll) {
    const uint32_t i = f / (R - 1), k = f % (R - 1);
    return k < i ? k : k + 1;  // receivers ascending, the sender skipped
  }
  const uint32_t c = f / R / steps;
  return at_position(c, (position(c, f % R) + 1) % R);
}

uint32_t CollectivePlan::parent(uint32_t f) const {
  if (op == Collective::AllToAll) return kNoParent;
  const uint32_t R = ranks(), t = f / R;  // t = c·steps + s
  if (t % steps == 0) return kNoParent;
  const uint32_t c = t / steps;
  const uint32_t prev = at_position(c, (position(c, f % R) + R - 1) % R);  // who sends to f's sender
  return (t - 1) * R + prev;
}

uint32_t CollectivePlan::child(uint32_t f) const {
  if (op == Collective::AllToAll) return kNoParent;
  const uint32_t R = ranks(), t = f / R;
  if (t % steps + 1 == steps) return kNoParent;
  return (t + 1) * R + dst_index(f);  // f's receiver sends the next step of the ring
}

FlowStep CollectivePlan::flow(uint32_t f) const {
  FlowStep s;
  s.src = members[src_index(f)];
  s.dst = members[dst_index(f)];
  s.bytes = chunk;
  if (op != Collective::AllToAll) {
    const uint32_t t = f / ranks();
    s.step = t % steps;
    s.ring = t / steps;
  }
  s.parent = parent(f);
  return s;
}

std::vector<uint32_t> CollectivePlan::ring_order(uint32_t c) const {
  std::vector<uint32_t> ring;
  if (op == Collective::AllToAll || c >= rings) return ring;
  ring.reserve(members.size());
  for (uint32_t pos = 0; pos < ranks(); ++pos) ring.push_back(members[at_position(c, pos)]);
  return ring;
}

std::pair<uint32_t, uint32_t> CollectivePlan::chain_of(uint32_t f) const {
  if (op == Collective::AllToAll) return {f, 0};
  // Called for every finished flow: three divisions, the remainders by subtraction (position() and the
  // modulo R below would take four more).
  const uint32_t R = ranks(), C = rings;
  const uint32_t t = f / R, i = f - t * R;  // t = c·steps + s, i the sender's index
  const uint32_t c = t / steps, step = t - c * steps;
  const uint32_t block = i / C, in_block = i - block * C;
  const uint32_t rotated = in_block + C - c >= C ? in_block - c : in_block + C - c;  // (in_block + C − c) mod C
  const uint32_t pos = block * C + rotated;                                         // position(c, i)
  // Each step moves one position along ring c: the chain began `step` positions back (step < 2R).
  const uint32_t back = step >= R ? step - R : step;
  const uint32_t start = pos >= back ? pos - back : pos + R - back;
  return {c * R + start, step};
}

void FinishedFlows::reset(const CollectivePlan& p) {
  clear();
  if (p.chain_length() == 1) bits_.assign(p.chains(), false);
  else done_.assign(p.chains(), 0);
}

void FinishedFlows::clear() {
  release_storage(bits_);
  release_storage(done_);
}

void FinishedFlows::set(const CollectivePlan& p, uint32_t f) {
  const auto [chain, place] = p.chain_of(f);
  if (!bits_.empty()) {
    if (bits_[chain]) throw std::logic_error("workload driver (a bug): collective flow " + s(f) + " finished twice");
    bits_[chain] = true;
    return;
  }
  if (done_[chain] != place)
    throw std::logic_error("workload driver (a bug): collective flow " + s(f) + " (place " + s(place) +
                           " of its chain) finished after " + s(done_[chain]) + " of its chain's flows");
  ++done_[chain];
}

bool FinishedFlows::test(const CollectivePlan& p, uint32_t f) const {
  const auto [chain, place] = p.chain_of(f);
  return bits_.empty() ? done_[chain] > place : bool(bits_[chain]);
}

uint64_t FinishedFlows::bytes(uint64_t chains, uint32_t chain_length) {
  return chain_length == 1 ? (chains + 63) / 64 * 8 : chains * sizeof(uint32_t);
}

std::vector<FlowStep> explicit_flows(const CollectivePlan& p) {
  std::vector<FlowStep> out;
  out.reserve(p.size());
  for (uint32_t f = 0; f < p.size(); ++f) out.push_back(p.flow(f));
  return out;
}

uint64_t plan_bytes(uint32_t ranks) { return sizeof(CollectivePlan) + uint64_t(ranks) * sizeof(uint32_t); }

uint64_t collective_flow_count(Collective op, uint64_t S, uint32_t R, uint32_t C, ZeroChunk zero_chunk) {
  return flow_shape(op, S, R, C, zero_chunk).count;
}

uint64_t collective_flow_bytes(Collective op, uint64_t S, uint32_t R, uint32_t C, ZeroChunk zero_chunk) {
  return flow_shape(op, S, R, C, zero_chunk).chunk;
}

}  // namespace wh
