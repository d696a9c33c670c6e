// Fast-forward controller (see fast_forward.h): skips: their length and credit, their end, skip-backs.
#include <algorithm>

#include "wormhole/ffwd/fast_forward.h"

namespace wh {

void FastForward::end_skip(uint32_t pid, bool may_continue) {
  Part& p = part(pid);
  if (p.following) return release_early(pid);  // held to its horizon, or its membership changes
  p.skipping = false;
  --skipping_now_;
  // A replay ends where the memoized period converged: the partition is steady, go on to
  // fast-forward (when the recorded goodputs allow it and nothing ends too soon).
  if (may_continue && p.replaying && s_.fast_forward && continue_replay(pid)) return;
  reset(pid);  // after an interrupt the partition must prove itself steady again
}

void FastForward::skip_back(uint32_t pid) {
  Part& p = part(pid);
  if (p.following) return release_early(pid);
  const Time now = net_.now();
  // Whole ns, rounded up: INT clocks move by whole ns, and no moved event may land before now.
  const Time kept = (now - p.skip_start + kNs - 1) / kNs * kNs;
  const Time back = kept - (p.skip_end - p.skip_start);
  const uint32_t payload = net_.params().payload;
  net_.shift(parts_.ports(pid), parts_.flows(pid), back, 0);
  for (uint32_t id : parts_.flows(pid)) {
    Track& t = track(id);
    int64_t keep = t.credited;
    if (s_.skip_back)
      keep = std::min<int64_t>(t.credited,
                               static_cast<int64_t>(static_cast<uint64_t>(t.skip_rate * double(kept)) / payload) * payload);
    const int64_t pkts_back = (t.credited - keep) / payload;
    stats_.packets_skipped -= static_cast<uint64_t>(pkts_back);
    stats_.events_skipped -= static_cast<uint64_t>(pkts_back) * 4 * t.hops;
    stats_.skipped_flow_time += back;
    if (p.replaying) stats_.replayed_flow_time += back;
    net_.credit(id, keep - t.credited, back);
    const double returned = t.est_rel * double(t.credited - keep);  // the run's and the flow's estimate
    stats_.estimated_error_bytes -= returned;
    t.err_bytes -= returned;
    t.credited = keep;
  }
  ++(p.replaying ? stats_.replay_backs : stats_.skip_backs);
  end_skip(pid, false);
}

void FastForward::settle(const std::vector<uint32_t>& pids) {
  for (uint32_t pid : pids) {
    if (part(pid).verifying >= 0) end_verify(pid, true);  // the membership changes: its span ends here
    if (!part(pid).skipping) continue;
    if (net_.now() < part(pid).skip_end) skip_back(pid);
    else end_skip(pid, false);  // its membership is about to change: no fast-forward now
  }
}

void FastForward::pull_back_interrupted() {
  // In partition-id order: the same on every rank, whichever rank saw the interrupt first.
  if (exchange_) exchange_->merge(interrupted_);
  std::sort(interrupted_.begin(), interrupted_.end());
  interrupted_.erase(std::unique(interrupted_.begin(), interrupted_.end()), interrupted_.end());
  for (uint32_t pid : interrupted_) {
    Part& p = part(pid);
    p.interrupted = false;
    if (!p.skipping) continue;
    if (net_.now() < p.skip_end) skip_back(pid);
    else end_skip(pid, false);  // it ran its course while the interrupt waited: no fast-forward now
    // Its interrupting packet is released only after this tick: a replay now would freeze the
    // partition again in front of it (can_freeze does not see held packets).
    part(pid).interrupted = true;
  }
}

Time FastForward::skip_length(uint32_t pid) {
  const Time now = net_.now();
  Time dt = run_end_ - now;
  if (const Time t = net_.next_flow_start(); t >= 0) dt = std::min(dt, t - now);
  if (const Time t = net_.link_down_time(); t >= 0) dt = std::min(dt, t - now);
  for (uint32_t id : parts_.flows(pid)) {
    const Track& t = track(id);
    if (t.goodput <= 0 || t.left <= 0) return 0;
    dt = std::min(dt, static_cast<Time>(t.left / t.goodput));
    // skip_error(t, dt) <= bound: grain + trend × (now − trend_at + dt/2) <= bound.
    const double budget = s_.error_bound - t.grain;
    if (budget <= 0) return 0;
    if (t.trend > 0) {
      const double cap = 2 * (budget / t.trend - double(now - t.trend_at));
      if (cap <= 0) return 0;
      if (cap < double(dt)) dt = static_cast<Time>(cap);
    }
  }
  dt = dt / kNs * kNs;
  return dt < s_.sample_interval ? 0 : dt;
}

double FastForward::skip_error(const Track& t, Time dt) const {
  return t.grain + t.trend * (double(net_.now() - t.trend_at) + 0.5 * double(dt));
}

void FastForward::skip(uint32_t pid, Time dt) {
  const Time now = net_.now();
  const uint32_t payload = net_.params().payload;
  count_contended(pid);
  net_.shift(parts_.ports(pid), parts_.flows(pid), dt, now + dt);
  for (uint32_t id : parts_.flows(pid)) {
    Track& t = track(id);
    credit_skip(id, t, static_cast<uint64_t>(t.goodput * double(dt)) / payload, t.goodput, dt, false);
    t.est_rel = skip_error(t, dt);
    const double err = t.est_rel * double(t.credited);  // the run's and the flow's estimate
    stats_.estimated_error_bytes += err;
    t.err_bytes += err;
  }
  begin_skip(pid, dt, false);
  ++stats_.skips;
}

bool FastForward::flows_meet(uint32_t pid, bool at_a_switch) const {
  // The data paths recorded at add() are every rank's alike: no exchange needed.
  const std::vector<uint32_t>& flows = parts_.flows(pid);
  if (flows.size() < 2) return false;
  std::vector<uint32_t> ports;
  for (uint32_t id : flows)
    for (uint32_t p : coupling_.data_path(id))
      if (!at_a_switch || net_.nodes()[net_.links()[p].node].is_switch) ports.push_back(p);
  std::sort(ports.begin(), ports.end());
  return std::adjacent_find(ports.begin(), ports.end()) != ports.end();
}

void FastForward::count_contended(uint32_t pid) {
  if (flows_meet(pid, false)) ++stats_.contended_decisions;
}

void FastForward::credit_skip(uint32_t id, Track& t, uint64_t packets, double rate, Time dt, bool replay) {
  t.est_rel = 0;  // a replay's error is not estimated (verify mode measures it)
  t.credited = static_cast<int64_t>(packets * net_.params().payload);
  t.skip_rate = rate;
  net_.credit(id, t.credited, dt);
  stats_.packets_skipped += packets;
  stats_.events_skipped += packets * 4 * t.hops;
  stats_.skipped_flow_time += dt;
  if (replay) stats_.replayed_flow_time += dt;
}

void FastForward::begin_skip(uint32_t pid, Time dt, bool replay) {
  Part& p = part(pid);
  p.skipping = true;
  p.replaying = replay;
  p.skip_start = net_.now();
  p.skip_end = net_.now() + dt;
  ++skipping_now_;
}

double FastForward::guard(const Flow& f, double rate) const {
  // The flow's last base RTT at its rate, plus one packet, is left to packet-level simulation.
  return rate * double(f.base_rtt) + net_.params().payload;
}

}  // namespace wh
