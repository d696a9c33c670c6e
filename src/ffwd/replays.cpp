// Fast-forward controller (see fast_forward.h): the memo's replays: lookups, replaying, going on to fast-forward.
#include <algorithm>

#include "wormhole/ffwd/fast_forward.h"
#include "fast_forward_internal.h"

namespace wh {

bool FastForward::continue_replay(uint32_t pid) {
  // Every rank alike (a tick): bytes left from the senders' ranks, freezability from the ports'.
  const std::vector<uint32_t>& flows = parts_.flows(pid);
  std::vector<double> left(flows.size(), 0.0);
  for (size_t k = 0; k < flows.size(); ++k)
    if (owned(flows[k])) left[k] = room(net_.flow(flows[k]), track(flows[k]).goodput);
  std::vector<uint8_t> freezable{net_.can_freeze(parts_.ports(pid), flows) ? uint8_t(1) : uint8_t(0)};
  if (exchange_) exchange_->sum(left), exchange_->all(freezable);
  for (size_t k = 0; k < flows.size(); ++k) track(flows[k]).left = left[k];
  const Time dt = skip_length(pid);
  if (dt <= 0 || !freezable[0]) return false;
  if (verifier_.choose(VerifySample::Kind::kContinuation)) {
    // Simulated instead from here (windows anew), against the recorded goodputs it would credit.
    std::vector<double> rate;
    for (uint32_t id : flows) rate.push_back(track(id).goodput);
    const uint64_t pattern = part(pid).pattern;
    reset(pid);
    begin_verify(pid, VerifySample::Kind::kContinuation, dt, std::move(rate));
    verified_patterns_[verifier_.samples().size() - 1] = pattern;
    return true;
  }
  skip(pid, dt);
  return true;
}

void FastForward::lookups() {
  if (lookup_queue_.empty()) return;
  // In queue order (the order in which partitions were first reset since the last tick:
  // deterministic); a partition that died is skipped, a reused id is looked up with its newest period.
  std::vector<uint32_t> pids;
  for (uint32_t pid : lookup_queue_) {
    Part& p = part(pid);
    p.lookup_queued = false;
    if (!p.skipping && !p.interrupted && p.verifying < 0 && parts_.live(pid) && !distrusted(pid)) pids.push_back(pid);
  }
  lookup_queue_.clear();
  if (pids.empty()) return;
  std::vector<std::optional<Replay>> found(pids.size());  // (nothing: simulated, or held as a follower)
  auto find = [&](size_t i) { found[i] = period_observer_->find_replay(pids[i], net_.now()); };
  // Each lookup reads only its own partition's record and the store (no insert in between), so
  // the hits do not depend on the thread count. Most return before building a key (a pattern size
  // the store cannot hold, a period not begun): handing a few small ones to threads at every tick
  // costs more than it saves (the scheduler and oneTBB's spinning workers: about 1.3 % of a MoE run's
  // samples, perf).
  uint64_t n = 0;
  for (uint32_t pid : pids) n += parts_.flows(pid).size();
  arena_->for_each(pids.size(), n, s_.parallel_min_flows, find);
  if (exchange_) period_observer_->lookups_done(pids, found);
  // What only the senders' and the ports' ranks can tell: the share of its recorded bytes each flow
  // has room for before its guard (measured by its sender's rank, summed over the ranks), and whether
  // the partition can be frozen (ANDed over the ranks).
  std::vector<size_t> first(pids.size() + 1, 0);
  for (size_t i = 0; i < pids.size(); ++i) first[i + 1] = first[i] + (found[i] ? parts_.flows(pids[i]).size() : 0);
  std::vector<double> share(first.back(), 0.0);
  std::vector<uint8_t> fits(pids.size(), 0);
  for (size_t i = 0; i < pids.size(); ++i) {
    if (!found[i]) continue;
    const Replay& r = *found[i];
    const std::vector<uint32_t>& flows = parts_.flows(pids[i]);
    if (r.bytes.size() != flows.size() || r.cc.size() != flows.size() || r.goodput.size() != flows.size()) continue;
    const Time dt = std::max<Time>(r.duration / kNs * kNs, 1);  // as try_replay's
    for (size_t k = 0; k < flows.size(); ++k) {
      if (!owned(flows[k])) continue;
      const double rate = r.goodput[k] > 0 ? r.goodput[k] : double(r.bytes[k]) / double(dt);
      const double room_k = room(net_.flow(flows[k]), rate);
      // A flow that sends nothing in the period still must not be inside its guard already.
      share[first[i] + k] = r.bytes[k] == 0 ? (room_k >= 0 ? 1.0 : 0.0) : std::clamp(room_k / double(r.bytes[k]), 0.0, 1.0);
    }
    fits[i] = net_.can_freeze(parts_.ports(pids[i]), flows);
  }
  if (exchange_ && !share.empty()) exchange_->sum(share);  // as `found`: alike on every rank
  if (exchange_) exchange_->all(fits);
  for (size_t i = 0; i < pids.size(); ++i) {
    if (!found[i]) continue;
    const Replay& r = *found[i];
    // A flow that would come within its guard of its end inside the period cuts the replay short
    // there: the period's first part, its bytes in proportion to the time (as a replay pulled back by
    // an interrupt keeps them). That holds where the flows' bytes are spread evenly over the period:
    // where no two of them send through one port. A cut in a contended partition (whose split the
    // CC's oscillation decides), or one shorter than a sample interval, is refused.
    double part_kept = first[i + 1] > first[i] ? 1.0 : 0.0;
    for (size_t j = first[i]; j < first[i + 1]; ++j) part_kept = std::min(part_kept, share[j]);
    if (part_kept < 1.0 && flows_meet(pids[i], false)) part_kept = 0.0;
    const Time full = r.duration / kNs * kNs;
    const Time dt = part_kept >= 1.0 ? full : static_cast<Time>(part_kept * double(full)) / kNs * kNs;
    if (!fits[i] || (dt < full && dt < s_.sample_interval)) {
      ++stats_.replays_refused;
      period_observer_->replay_done(pids[i], false);
      continue;
    }
    if (verifier_.choose(VerifySample::Kind::kReplay)) {
      // Simulated instead, as a repeat of the pattern: the recorded bytes spread over its duration.
      std::vector<double> rate;
      for (uint64_t b : r.bytes) rate.push_back(double(b) / double(std::max<Time>(full, kNs)));
      begin_verify(pids[i], VerifySample::Kind::kReplay, std::max<Time>(dt, kNs), std::move(rate));
      verified_patterns_[verifier_.samples().size() - 1] = r.pattern;
      period_observer_->replay_done(pids[i], false);
      continue;
    }
    const bool applied = try_replay(pids[i], r, dt);
    if (!applied) ++stats_.replays_refused;
    else if (dt < full) ++stats_.replays_cut;
    period_observer_->replay_done(pids[i], applied);
  }
  std::vector<uint32_t> missed;
  for (size_t i = 0; i < pids.size(); ++i)
    if (!found[i]) missed.push_back(pids[i]);
  follow(missed);
}

bool FastForward::try_replay(uint32_t pid, const Replay& r, Time dt) {
  const Time now = net_.now();
  const uint32_t payload = net_.params().payload;
  const std::vector<uint32_t>& flows = parts_.flows(pid);
  const Time full = r.duration / kNs * kNs;  // whole ns: INT clocks move by whole ns
  if (dt <= 0 || full <= 0 || dt > full) return false;
  // Skips never run past what is known to come (a skip-back would undo most of the replay).
  // Compared as distances from now: no sum can overflow whatever a memo file holds.
  if (dt > run_end_ - now) return false;
  if (const Time t = net_.next_flow_start(); t >= 0 && t - now < dt) return false;
  if (const Time t = net_.link_down_time(); t >= 0 && t - now < dt) return false;
  count_contended(pid);
  net_.shift(parts_.ports(pid), flows, dt, now + dt);
  for (size_t i = 0; i < flows.size(); ++i) {
    const uint32_t id = flows[i];
    Track& t = track(id);
    const uint64_t bytes = dt == full ? r.bytes[i] : static_cast<uint64_t>(double(r.bytes[i]) * double(dt) / double(full));
    const uint64_t pkts = bytes / payload;
    credit_skip(id, t, pkts, double(pkts * payload) / double(dt), dt, true);
    t.goodput = r.goodput[i];
    // The continuation skips at this goodput: bounded by its recorded trend, as a fresh skip by its own.
    t.trend = r.trend[i];
    t.trend_at = now + dt - r.trend_age[i];
    if (!owned(id)) continue;  // its CC state lives on its sender's rank
    // What the restore schedules (CC timers) is caused by the flow, not by the tick: the same key
    // whichever rank restores it.
    net_.kernel().set_barrier_context(cause::flow_context(id));
    net_.restore_flow_cc(id, r.cc[i], now + dt);
  }
  begin_skip(pid, dt, true);
  part(pid).pattern = r.pattern;
  ++stats_.replays;
  return true;
}

}  // namespace wh
