// The workload driver (driver.h): what it tells the collective memo — the island kinds a collective's
// flows can enter, which GPUs are involved, and how long an island stays quiet (the programs' look-ahead).
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "driver_internal.h"

namespace wh {

uint8_t WorkloadDriver::island_kinds(const Plan& p) {
  if (p.island_kinds < 0) {
    uint8_t k = 0;
    for (auto [a, b] : collective_member_pairs(p.cp))
      if ((k |= net_.island_kinds(host_of(p.cp.members[a]), host_of(p.cp.members[b]))) == (kIslandNvSwitch | kIslandFabric))
        break;
    p.island_kinds = static_cast<int8_t>(k);
  }
  return static_cast<uint8_t>(p.island_kinds);
}

void WorkloadDriver::involve(uint32_t g, uint8_t kinds, int d) {
  for (uint32_t k = 0; k < 2; ++k)
    if (kinds & (1u << k)) involved_[g][k] += static_cast<uint32_t>(d);
}

uint32_t WorkloadDriver::involvement(uint32_t g, uint8_t kinds) const {
  uint32_t n = 0;
  for (uint32_t k = 0; k < 2; ++k)
    if (kinds & (1u << k)) n = std::max(n, involved_[g][k]);
  return n;
}

bool WorkloadDriver::issues_onto(uint32_t x, uint32_t row, Phase phase, uint8_t kinds, const std::vector<uint32_t>& near) {
  const CommOp& op = op_of(row, phase);
  if (op.op == Collective::None || op.bytes == 0 || o_.ignore_group[static_cast<size_t>(op.group)]) return false;
  const std::vector<uint32_t> members = group_members(layout_, op.group, x);
  if (members.size() <= 1) return false;
  if (std::none_of(members.begin(), members.end(), [&](uint32_t m) { return std::binary_search(near.begin(), near.end(), m); }))
    return false;  // its flows never reach those GPUs' ports
  const std::shared_ptr<const Plan> plan = plan_for(op, members);
  return plan->cp.sends_per_member() > 0 && (island_kinds(*plan) & kinds);
}

Time WorkloadDriver::earliest_issue(uint32_t x, uint8_t kinds, const Instance& offered, Time done_x) {
  const Gpu& G = gpus_[x];
  // A program waiting for its timer has run ahead to G.at.
  Time t = G.timer_pending ? std::max(net_.client_now(), G.at) : net_.client_now();
  // Pipelines (whose transfers come from GPUs in no group of the members) and MICRO runs: not followed.
  if (layout_.pp > 1 || G.stage == kRecvWait || G.stage == kMicroIssue || G.stage == kMicroComm) return t;
  // Blocked on the offered collective itself (fwd, ig): nothing before its part of it is done.
  if (done_x >= 0 && ((G.stage == kFwdComm && offered.phase == Phase::Fwd) || (G.stage == kIgComm && offered.phase == Phase::Ig)))
    t = std::max(t, done_x);
  if (G.stage == kDone || G.stage == kEndWait) return kNoIssue;
  const std::vector<ProgramStep>& prog = programs_[G.pp_stage];
  uint32_t iter = G.iter, pc = G.pc;
  // The first phase of step pc still ahead (0 fwd, 1 ig, 2 wg); the compute of a phase under way (or over,
  // in a program parked at its issue at G.at) counts 0.
  uint32_t from = 0;
  bool running = false;
  // (A ...Issue stage with no timer pending is issuing now: a wg moves on to the next step at once.)
  switch (G.stage) {
    case kFwdIssue: running = true; break;
    case kFwdComm: case kFwdNext: ++pc; break;
    case kIgBegin: from = 1; break;
    case kIgIssue: from = 1, running = true; break;
    case kIgComm: case kWgBegin: from = 2; break;
    case kWgIssue: G.timer_pending ? (from = 2, running = true) : ++pc; break;
    case kIterEnd: pc = static_cast<uint32_t>(prog.size()); break;
    default: break;  // kStepBegin, kFwdBegin: the step's compute is all ahead
  }
  // Waits (blocking collectives, update delays, last iteration's wg) only make an issue later: the sum of
  // the compute before it is a lower bound. A whole iteration without such an issue has none after it.
  for (size_t seen = 0; seen <= prog.size(); ++seen, ++pc, from = 0, running = false) {
    if (pc >= prog.size()) {
      if (++iter >= o_.iterations) return kNoIssue;
      pc = 0;
    }
    const ProgramStep& s = prog[pc];
    const bool fwd = s.kind == ProgramStep::Fwd;
    // A row's forward waits for its wg of the iteration before: the offered one ends at done_x here.
    if (fwd && done_x >= 0 && offered.phase == Phase::Wg && offered.row == s.arg && offered.iter + 1 == iter &&
        G.wg_done_iter[rows_[s.arg].wg_slot] < static_cast<int32_t>(offered.iter))
      t = std::max(t, done_x);
    for (uint32_t ph = fwd ? 0 : std::max(from, 1u); ph < (fwd ? 1u : 3u); ++ph) {  // a backward step: ig, wg
      const Phase phase = fwd ? Phase::Fwd : ph == 1 ? Phase::Ig : Phase::Wg;
      if (!(running && ph == from))
        t += rows_[s.arg].compute[ph];
      if (issues_onto(x, s.arg, phase, kinds, offered.plan->cp.members)) return t;
    }
  }
  return kNoIssue;
}

Time WorkloadDriver::quiet_until(uint32_t id, uint8_t kinds, Time t0, const std::vector<Time>* finish) {
  const Instance& in = inst_[id];
  const CollectivePlan& cp = in.plan->cp;
  // Pipeline transfers come from the members' peers in other stages, in no group of theirs, whenever
  // those stages' programs send: not followed, so an island they can reach is never quiet.
  if (layout_.pp > 1)
    for (uint32_t g : cp.members)
      for (uint32_t stage = 0; stage < layout_.pp; ++stage)
        if (const uint32_t peer = pipeline_peer(layout_, g, stage); peer != g && (net_.island_kinds(host_of(g), host_of(peer)) & kinds))
          return net_.client_now();
  // An NVSwitch's collectives block their GPUs (TP): only rail leaves need the programs followed.
  if (!(kinds & kIslandFabric)) return kNoIssue;
  // When each member's part of it is done, were it to end as `finish` says (-1: not known).
  const std::vector<Time> done = member_done_times(cp, t0, finish);
  // Flows reach a member's island ports from the groups it belongs to: their GPUs' next issues.
  std::vector<uint32_t> gpus;
  for (uint32_t g : cp.members)
    for (CommGroup grp : {CommGroup::TP, CommGroup::DP, CommGroup::EP, CommGroup::DP_EP})
      for (uint32_t x : group_members(layout_, grp, g)) gpus.push_back(x);
  std::sort(gpus.begin(), gpus.end());
  gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
  Time t = kNoIssue;
  for (uint32_t x : gpus) {
    const auto m = std::lower_bound(cp.members.begin(), cp.members.end(), x);
    const Time done_x = m != cp.members.end() && *m == x ? done[static_cast<size_t>(m - cp.members.begin())] : -1;
    t = std::min(t, earliest_issue(x, kinds, in, done_x));
  }
  return t;
}

void WorkloadDriver::offer_to_memo(uint32_t id) {
  Instance& in = inst_[id];
  const Plan& p = *in.plan;
  // Before its first flow is released (send_latency after the first issue) or never: the memo
  // decides for the whole collective.
  if (net_.client_now() - *std::min_element(in.issue_time.begin(), in.issue_time.end()) >= o_.send_latency) {
    o_.memo->count_late_issue();
    return;
  }
  const CollectivePlan& cp = p.cp;
  const std::vector<std::pair<uint32_t, uint32_t>> idx = collective_member_pairs(cp);
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  pairs.reserve(idx.size());
  for (auto [a, b] : idx) pairs.emplace_back(host_of(cp.members[a]), host_of(cp.members[b]));
  std::vector<uint32_t> hosts;
  hosts.reserve(cp.members.size());
  for (uint32_t g : cp.members) hosts.push_back(host_of(g));
  in.memo = o_.memo->begin(pairs, [&]() -> const std::string& { return memo_key(p); }, hosts, in.issue_time,
                           cp.size(), [&](uint32_t host, uint8_t kinds) {
                             const auto g = gpu_at_host_.find(host);
                             return g == gpu_at_host_.end() ? UINT32_MAX : involvement(g->second, kinds);  // another job's
                           },
                           [&](uint8_t kinds, Time t0, const std::vector<Time>* finish) {
                             return quiet_until(id, kinds, t0, finish);
                           });
}

}  // namespace wh
