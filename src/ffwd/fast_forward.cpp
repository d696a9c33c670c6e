// Fast-forward controller (see fast_forward.h): partitions, steady checks, skips, skip-backs.
#include "wormhole/ffwd/fast_forward.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

namespace wh {

struct FastForward::Arena {
  tbb::task_arena arena;
  explicit Arena(unsigned threads) : arena(threads ? static_cast<int>(threads) : tbb::task_arena::automatic) {}
  /// Calls fn(0) … fn(count − 1): on the arena's threads where the partitions hold `flows` flows, at
  /// least `min_flows` (WormholeSettings::parallel_min_flows), else on the calling thread (a
  /// parallel_for at every 1-µs tick costs more than a few hundred flows' work). Speed only: `fn`
  /// must not depend on the order.
  template <class Fn>
  void for_each(size_t count, uint64_t flows, uint64_t min_flows, const Fn& fn) {
    if (count > 1 && flows >= min_flows) {
      arena.execute([&] { tbb::parallel_for(size_t(0), count, fn); });
    } else {
      for (size_t i = 0; i < count; ++i) fn(i);
    }
  }
};

FastForward::FastForward(Network& net, const WormholeSettings& settings, Time run_end)
    : net_(net),
      s_(settings),
      arena_(std::make_unique<Arena>(settings.threads)),
      run_end_(run_end),
      parts_(static_cast<uint32_t>(net.ports().size())),
      coupling_(net),
      window_(window_samples(settings, net.cc().update_period())),
      timed_increase_(net.cc().update_period() > 0),
      verifier_(settings.verify, settings.error_bound, net.params().payload) {
  net_.set_skip_hooks(this);
}

FastForward::~FastForward() { net_.set_skip_hooks(nullptr); }

FastForward::Part& FastForward::part(uint32_t pid) {
  if (pid >= part_state_.size()) part_state_.resize(parts_.id_bound());
  return part_state_[pid];
}

void FastForward::sample_until(uint32_t id, Track& t, uint64_t rate_bps, Time now) {
  // Grid point k (time k·interval) samples the rate in force before the events of that instant.
  // HPCC changes rates on every ACK, mostly between two grid points: one compare, no division.
  if (now < t.next_sample_at) return;
  const uint64_t last = static_cast<uint64_t>(now / s_.sample_interval);
  t.window.append(rate_bps, last + 1 - t.next_grid);
  t.next_grid = last + 1;
  t.next_sample_at = static_cast<Time>(t.next_grid) * s_.sample_interval;
}

void FastForward::reset(uint32_t pid) {
  if (part(pid).verifying >= 0) end_verify(pid, true);
  const Time now = net_.now();
  Part& p = part(pid);
  const bool queued = p.lookup_queued;  // it stays in lookup_queue_ (once)
  p = Part{};
  p.lookup_queued = queued;
  p.reset_k = static_cast<uint64_t>(now / s_.sample_interval);
  p.epoch = ++epochs_;
  // Its tracks restart when read (track()), its line-rate window is found when read (settled()):
  // until then no check or checkpoint is due, as none is before the next grid point.
  p.due = p.checkpoint = std::numeric_limits<Time>::max();
  if (period_observer_) {
    period_observer_->period_started(pid, now);
    // Replays are skips: none when skipping is off.
    if (s_.fast_forward && !p.lookup_queued) {
      p.lookup_queued = true;
      lookup_queue_.push_back(pid);
    }
  }
}

void FastForward::restart(uint32_t id, Track& t) {
  const uint32_t pid = parts_.partition_of_flow(id);
  if (pid == PartitionSet::kNone) throw std::logic_error("fast-forward: active flow " + std::to_string(id) + " is in no partition");
  const Part& p = part_state_[pid];
  t.window.reset(window_);
  t.next_grid = p.reset_k + 1;
  t.next_sample_at = static_cast<Time>(p.reset_k + 1) * s_.sample_interval;
  t.n_marks = 0;
  t.goodput = 0;
  t.trend = 0;
  t.grain = 0;
  t.credited = 0;
  t.part = pid;
  t.epoch = p.epoch;
  ++track_restarts_;
}

FastForward::Part& FastForward::settled(uint32_t pid) {
  Part& p = part(pid);
  if (!p.window_pending) return p;
  p.window_pending = false;
  // Flows at line rate need their own time scale only (see check below); the slowest flow sets it.
  uint64_t lr = 1;
  const double payload = net_.params().payload;
  for (uint32_t id : parts_.flows(pid)) {
    const Flow& f = net_.flow(id);  // line rate and base RTT are known on every rank
    lr = std::max(lr, line_rate_window_samples(s_, f.base_rtt, f.max_rate_bps, payload));
  }
  // Flows meeting at a switch egress run into each other's queue, PFC and ECN, a course no CC rate
  // shows and a few RTTs do not settle (measured on NVSwitch ports: 4 % off over 10-µs skips): the
  // long window. (Flows sharing only their NIC take turns in its round robin: no queue between them.)
  if (lr < line_rate_window_cap() && flows_meet(pid, true)) lr = line_rate_window_cap();
  p.lr_window = lr;
  // First check after the line-rate window: flows at line rate need no more.
  p.due = static_cast<Time>(p.reset_k + lr) * s_.sample_interval;
  p.checkpoint = p.due - static_cast<Time>(lr / 2) * s_.sample_interval;
  return p;
}

std::vector<uint32_t> FastForward::leave_partition(uint32_t id) {
  const uint32_t old = parts_.partition_of_flow(id);
  std::vector<uint32_t> left = parts_.remove_flow(id);
  // Split or emptied, its tracks are no longer current: the parts are reset, an emptied one is gone.
  if (old != PartitionSet::kNone) part(old).epoch = ++epochs_;
  return left;
}

uint32_t FastForward::join_partition(uint32_t id, const std::vector<uint32_t>& ports) {
  // The partitions it merges lose their identity (one keeps its id, reset): none of their tracks is current.
  for (uint32_t pid : parts_.partitions_of_ports(ports)) part(pid).epoch = ++epochs_;
  return parts_.add_flow(id, ports);
}

void FastForward::ensure_tick() {
  if (tick_pending_) return;
  tick_pending_ = true;
  const uint64_t k = static_cast<uint64_t>(net_.now() / s_.sample_interval) + 1;
  net_.schedule_skip_tick(static_cast<Time>(k) * s_.sample_interval);
}

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

void FastForward::flow_started(uint32_t id) {
  // Flows whose ACKs cross a port this flow's data makes congestible join its queue's partition.
  const std::vector<uint32_t> changed = coupling_.add(id);
  const std::vector<uint32_t> ports = coupling_.ports(id);
  for (uint32_t f : changed) refresh_ports(f);
  settle(parts_.partitions_of_ports(ports));
  const uint32_t pid = join_partition(id, ports);
  uint32_t slot;
  if (free_tracks_.empty()) {
    slot = static_cast<uint32_t>(tracks_.size());
    tracks_.emplace_back();
    period_starts_.emplace_back();
  } else {
    slot = free_tracks_.back();
    free_tracks_.pop_back();
  }
  grow_tracks_to(id);
  track_of_.held(id) = slot;
  tracks_[slot].active_pos = static_cast<uint32_t>(active_.size());
  active_.push_back(id);
  tracks_[slot].hops = static_cast<uint32_t>(coupling_.data_path(id).size());
  // A collective hit the collective memo verifies is kept packet-exact: a skip or replay would void
  // the comparison. It stays in its partition (whose ports no other partition can then freeze).
  tracks_[slot].distrusted = net_.simulated_exactly(id);
  if (tracks_[slot].distrusted) ++distrusted_active_;
  tracks_[slot].rose_at = -1;
  tracks_[slot].err_bytes = 0;
  tracks_[slot].epoch = 0;  // restarted when first read
  period_starts_[slot].epoch = 0;  // its values are its first period's start values until they move
  reset(pid);
  stats_.max_partitions = std::max<uint64_t>(stats_.max_partitions, parts_.size());
  ensure_tick();
}

void FastForward::refresh_ports(uint32_t id) {
  const std::vector<uint32_t> ports = coupling_.ports(id);
  if (ports == parts_.flow_ports(id)) return;
  settle({parts_.partition_of_flow(id)});
  for (uint32_t p : leave_partition(id)) reset(p);
  settle(parts_.partitions_of_ports(ports));
  reset(join_partition(id, ports));
}

void FastForward::flow_finished(uint32_t id) { finished_.push_back(id); }

void FastForward::flows_forgotten(uint32_t first, uint32_t count) {
  // Whole chunks (the flow table gives back whole chunks of the same size). The index reaches only as
  // far as the highest flow started so far (a replayed flow never starts here): a chunk past it is
  // remembered, and added given back when the index grows over it (grow_tracks_to).
  constexpr size_t kChunk = FlowTable::kEntryChunk;
  for (size_t k = first / kChunk; k < (size_t{first} + count) / kChunk; ++k) {
    if (track_of_.size() > k * kChunk) {
      while (track_of_.size() < (k + 1) * kChunk) track_of_.push_back(kNoTrack);  // whole, so that it can go
      track_of_.release_chunk(k);
    } else {
      if (forgotten_.size() <= k) forgotten_.resize(k + 1, 0);
      forgotten_[k] = 1;
    }
  }
}

void FastForward::grow_tracks_to(uint32_t id) {
  constexpr size_t kChunk = FlowTable::kEntryChunk;
  while (track_of_.size() <= id) {
    const size_t k = track_of_.size() / kChunk;
    // A forgotten chunk holds no flow that starts (its flows have all finished), so never `id`'s.
    if (track_of_.size() % kChunk == 0 && k < forgotten_.size() && forgotten_[k]) track_of_.append_released_chunk();
    else track_of_.push_back(kNoTrack);
  }
}

void FastForward::remove_finished() {
  for (uint32_t id : finished_) {
    const uint32_t pid = parts_.partition_of_flow(id);
    if (pid == PartitionSet::kNone) continue;
    settle({pid});
    const uint32_t slot = track_of_[id];
    if (tracks_[slot].distrusted) --distrusted_active_;
    free_tracks_.push_back(slot);
    track_of_.held(id) = kNoTrack;
    // Swap-remove from the active list: the last active flow takes the place of this one.
    const uint32_t pos = tracks_[slot].active_pos, last = active_.back();
    active_[pos] = last;
    if (last != id) tracks_[track_of_[last]].active_pos = pos;
    active_.pop_back();
    for (uint32_t p : leave_partition(id)) reset(p);
    for (uint32_t f : coupling_.remove(id)) refresh_ports(f);  // ports it no longer makes congestible
  }
  finished_.clear();
}

void FastForward::keep_period_start_slow(uint32_t id, uint32_t slot) {
  const uint32_t pid = parts_.partition_of_flow(id);
  if (pid == PartitionSet::kNone) throw std::logic_error("fast-forward: active flow " + std::to_string(id) + " is in no partition");
  const Flow& f = net_.flow(id);
  PeriodStart& k = period_starts_[slot];
  k.part = pid;
  k.epoch = part_state_[pid].epoch;
  k.sent = f.snd_nxt;
  k.rate = f.rate_bps;
}

std::pair<uint64_t, uint64_t> FastForward::period_start(uint32_t id, uint64_t epoch) const {
  const Flow& f = net_.flow(id);
  if (id >= track_of_.size() || track_of_[id] == kNoTrack) return {f.snd_nxt, f.rate_bps};  // it ended: the period's record is void
  const PeriodStart& k = period_starts_[track_of_[id]];
  if (k.epoch == epoch && epoch != 0) return {k.sent, k.rate};
  return {f.snd_nxt, f.rate_bps};  // unmoved since the period started
}

void FastForward::rate_changed(uint32_t id, uint64_t old_rate_bps, uint64_t new_rate_bps) {
  if (id >= track_of_.size() || track_of_[id] == kNoTrack) return;
  if (period_observer_) keep_period_start(id, track_of_[id]);
  Track& t = track(id);
  sample_until(id, t, old_rate_bps, net_.now());
  if (new_rate_bps > old_rate_bps) t.rose_at = net_.now();
}

void FastForward::touched(uint32_t port) {
  const uint32_t pid = parts_.partition_of_port(port);
  if (pid == PartitionSet::kNone || !part(pid).skipping || part(pid).interrupted) return;
  // (A distributed run: only the port's rank knows; the pids are merged at the tick.)
  part(pid).interrupted = true;
  interrupted_.push_back(pid);
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

void FastForward::routes_changed() {
  // A rerouted flow leaves its partition (which may split) and joins the ones of its new path;
  // flows whose ports did not change stay where they are. Skips never run past LINK_DOWN.
  remove_finished();
  std::vector<uint32_t> active = active_;
  std::sort(active.begin(), active.end());  // flow-id order, whatever the order of starts and ends
  // Every flow's paths anew (the counts of congestible ports follow), then each flow's ports.
  for (uint32_t id : active) coupling_.remove(id);
  for (uint32_t id : active) coupling_.add(id);
  for (uint32_t id : active) {
    refresh_ports(id);
    track(id).hops = static_cast<uint32_t>(coupling_.data_path(id).size());
  }
}

void FastForward::take_marks(uint32_t pid) {
  for (uint32_t id : parts_.flows(pid)) {
    Track& t = track(id);
    const Flow& f = net_.flow(id);
    // A checkpoint only at least two RTTs after the last, so short windows still measure the
    // rate over two round trips of ACKs.
    if (t.n_marks > 0 && f.last_progress - t.marks[t.n_marks - 1].t < 2 * f.base_rtt) continue;
    if (t.n_marks == 3) t.marks[0] = t.marks[1], t.marks[1] = t.marks[2], t.n_marks = 2;
    t.marks[t.n_marks++] = {f.last_progress, f.snd_una};
  }
}

bool FastForward::lengthen(uint32_t pid, bool full, double grow, double& wait) {
  Part& p = settled(pid);
  const uint64_t cap = line_rate_window_cap();
  if (p.lr_window >= cap) return false;
  const uint64_t k = static_cast<uint64_t>(net_.now() / s_.sample_interval);
  if (full) {
    // Judged over the full window, the goodput measured as if the line-rate window were l from the
    // start: checkpoints back on the grid of l/2 + n l/4 after the reset, as without the rule.
    p.lr_window = cap;
    const uint64_t q = std::max<uint64_t>(cap / 4, 1), first = p.reset_k + cap - cap / 2;
    uint64_t next = k < first ? first : first + (k - first + q - 1) / q * q;
    if (next == k) {  // this tick's checkpoints are past: its mark now (none if one was just taken)
      take_marks(pid);
      next += q;
    }
    p.checkpoint = static_cast<Time>(next) * s_.sample_interval;
    if (p.reset_k + cap > k) wait = std::max(wait, double(p.reset_k + cap - k));
    return true;
  }
  if (grow > 0) {
    // The window asked (at least twice this one): checkpoints a quarter of it apart from now, judged
    // again when the goodput spans half of it.
    p.lr_window = static_cast<uint64_t>(std::min(double(cap), std::max(2.0 * double(p.lr_window), grow)));
    stats_.line_rate_window_max = std::max(stats_.line_rate_window_max, p.lr_window);
    p.checkpoint = static_cast<Time>(k + std::max<uint64_t>(p.lr_window / 4, 1)) * s_.sample_interval;
    wait = std::max(wait, double(std::max<uint64_t>(p.lr_window / 2, 1)));
    return true;
  }
  return false;
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

void FastForward::finish_verification() {
  if (!verifier_.on()) return;
  for (uint32_t pid : parts_.live_ids())
    if (part(pid).verifying >= 0) end_verify(pid, true);
  close_verified();
}

bool FastForward::distrusted(uint32_t pid) {
  // Asked of every partition looked up or found steady at a tick: in an all-to-all, thousands of flows.
  if (distrusted_active_ == 0) return false;
  for (uint32_t id : parts_.flows(pid))
    if (track(id).distrusted) return true;
  return false;
}

void FastForward::begin_verify(uint32_t pid, VerifySample::Kind kind, Time dt, std::vector<double> rate) {
  const std::vector<uint32_t>& flows = parts_.flows(pid);
  std::vector<uint64_t> base(flows.size(), 0);
  for (size_t k = 0; k < flows.size(); ++k)
    if (owned(flows[k]))
      base[k] = kind == VerifySample::Kind::kReplay ? net_.flow(flows[k]).snd_nxt : net_.flow(flows[k]).snd_una;
  part(pid).verifying = static_cast<int64_t>(verifier_.begin(kind, pid, net_.now(), dt, flows, std::move(rate),
                                                              std::move(base)));
}

void FastForward::tick_verify(uint32_t pid) {
  const size_t i = static_cast<size_t>(part(pid).verifying);
  const VerifySample& v = verifier_.sample(i);
  std::vector<uint64_t> counter(v.flows.size(), 0);
  for (size_t k = 0; k < v.flows.size(); ++k)
    if (owned(v.flows[k]))
      counter[k] = v.kind == VerifySample::Kind::kReplay ? net_.flow(v.flows[k]).snd_nxt : net_.flow(v.flows[k]).snd_una;
  verifier_.tick(i, net_.now(), std::move(counter));
}

void FastForward::end_verify(uint32_t pid, bool cut) {
  Part& p = part(pid);
  const size_t i = static_cast<size_t>(p.verifying);
  p.verifying = -1;
  verifier_.end(i, cut);
}

void FastForward::close_verified() {
  for (size_t i : verifier_.close(exchange_)) {
    const VerifySample& v = verifier_.sample(i);
    if (!v.failed) continue;
    // A fast-forward's or a continuation's flows are not skipped again; a replay's or a
    // continuation's pattern (its recorded goodputs) is not replayed again.
    if (v.kind != VerifySample::Kind::kReplay)
      for (uint32_t id : v.flows)
        if (id < track_of_.size() && track_of_[id] != kNoTrack) {
          Track& t = track(id);
          if (!t.distrusted) t.distrusted = true, ++distrusted_active_;
        }
    if (v.kind != VerifySample::Kind::kFastForward && period_observer_)
      period_observer_->reject_pattern(verified_patterns_.at(i));
  }
}

uint32_t FastForward::mark() {
  marks_.push_back(stats_);
  const auto m = static_cast<uint32_t>(marks_.size() - 1);
  if (period_observer_) period_observer_->mark(m);
  return m;
}

void FastForward::rewind(uint32_t m) {
  stats_ = marks_.at(m);
  if (period_observer_) period_observer_->rewind(m);
}

void FastForward::on_tick() {
  tick_pending_ = false;
  marks_.clear();  // a stop is always inside the window after the last tick
  ++stats_.ticks;
  const Time now = net_.now();
  // What happened since the last tick first: interrupts pull their partitions back now, finished
  // flows leave theirs (the Wormhole paper: fast-forwarding and skip-back's skip-back, held to the tick grid, see fast_forward.h).
  pull_back_interrupted();
  remove_finished();
  if (verifier_.on()) close_verified();
  if (period_observer_) {
    period_observer_->tick(now);  // the periods started since the last tick begin here
    lookups();
  }
  const std::vector<uint32_t> live = parts_.live_ids();
  std::vector<uint32_t> due;
  for (uint32_t pid : live) {
    Part& p = settled(pid);
    if (p.skipping && p.skip_end <= now) end_skip(pid, true);
    if (p.skipping) continue;
    if (p.verifying >= 0) {
      // Its flows are the same since the last tick (a change would have ended it): the span reaches here.
      tick_verify(pid);
      const VerifySample& v = verifier_.sample(static_cast<size_t>(p.verifying));
      if (v.start + v.planned <= now) end_verify(pid, false);
    }
    // Goodput checkpoints every quarter window from the middle of the first one, at ACK instants
    // (the last time snd_una moved): a steady ACK stream then gives its rate exactly, and the
    // flow's start-up (first RTT, ramp) is not in the estimate. Three of them give the goodput
    // over the last half window or more and its trend (the two spans between them).
    if (p.checkpoint <= now) {
      p.checkpoint = now + static_cast<Time>(std::max<uint64_t>(p.lr_window / 4, 1)) * s_.sample_interval;
      take_marks(pid);
    }
    if (p.due <= now && p.verifying < 0) due.push_back(pid);
  }
  // Samples that ended just now are judged before this tick decides: a failed one's flows must not
  // be skipped at the very tick its span ended (every rank closes them alike).
  if (verifier_.on()) close_verified();
  // Per due flow (partitions in `due` order, flows in partition order): goodput (bytes/ps), window
  // spread, bytes left before its guard, and the goodput's trend and where it holds — measured by
  // the rank that runs the flow's sender (all of them in one process) and summed over ranks, so
  // every rank decides alike.
  struct Figures {
    double goodput = 0;   // bytes/ps
    double spread = 0;    // (max − min) / mean of its rate window; +inf: waiting for its CC's timer
    double room = 0;      // bytes left before its guard
    double trend = 0;     // relative change of the goodput per ps
    double trend_at = 0;  // ps: where the trend holds
    double wait = 0;      // samples its window still needs
    double grain = 0;     // its goodput vs each half span's, relative (judged over a short line-rate window; else 0)
    double slow = 0;      // 1: a sample of its window is below its line rate
    double grow = 0;      // > 0: at line rate, its goodput too coarse for the error bound: the window it asks, samples
  };
  const double payload = net_.params().payload;
  std::vector<size_t> first(due.size() + 1, 0);
  for (size_t i = 0; i < due.size(); ++i) first[i + 1] = first[i] + parts_.flows(due[i]).size();
  const size_t n = first.back();
  std::vector<Figures> v(n);
  for (size_t i = 0; i < due.size(); ++i) {
    size_t j = first[i];
    for (uint32_t id : parts_.flows(due[i])) {
      Figures& fig = v[j++];
      if (!owned(id)) continue;
      Track& t = track(id);
      const Flow& f = net_.flow(id);
      sample_until(id, t, f.rate_bps, now);
      // A rate is only an estimate over at least two round trips of ACKs (shorter spans see the
      // ACK clock's bursts, not the rate): otherwise none, and no skip.
      // So is its trend: goodput over [m0, m1] against over [m1, now], each at least two RTTs long.
      // Without one (a short window whose checkpoints came too close) the skip's error could not be
      // bounded: no goodput, no skip, until the next checkpoint gives one.
      const Track::Mark* m = t.marks;
      if (t.n_marks < 2 || m[1].t - m[0].t < 2 * f.base_rtt || f.last_progress - m[1].t < 2 * f.base_rtt ||
          f.snd_una <= m[0].acked)
        continue;
      const double g = double(f.snd_una - m[0].acked) / double(f.last_progress - m[0].t);
      fig.goodput = g;
      fig.room = room(f, g);
      fig.trend_at = 0.5 * (double(m[0].t) + double(f.last_progress));
      const double d1 = double(m[1].t - m[0].t), d2 = double(f.last_progress - m[1].t);
      const double g1 = double(m[1].acked - m[0].acked) / d1, g2 = double(f.snd_una - m[1].acked) / d2;
      // Each span's bytes are whole packets, so a difference within a packet per span is no trend.
      const double resolution = payload * (1 / d1 + 1 / d2);
      const double apart = 0.5 * double(f.last_progress - m[0].t);  // between the two spans' middles
      fig.trend = std::max(0.0, std::fabs(g2 - g1) - resolution) / apart / g;
      // How far the goodput over the whole span is from each half's: how much it moves at this scale
      // (the ACK clock's gaps at a NIC move it by a packet from one span to the next; a NIC's round
      // robin between two QPs, not at all).
      fig.grain = 0.5 * std::fabs(g2 - g1) / g;
    }
  }
  // A CC that raises rates only on its timer (DCQCN) holds a cut rate flat until the timer fires:
  // a flow below line rate whose window saw no rise is waiting for it, not steady (measured: DCQCN
  // flows held at MIN_RATE for RP_TIMER after an incast were skipped at 1 Gb/s for 265 ms). So a
  // window spans the CC's update period (window_samples) — but a flow that sent at its line rate in
  // every sample of its window waits for no timer: its rate moves only on a CNP, which the window
  // would show. It is judged once it has its partition's line-rate window of samples (its own time
  // scale, line_rate_window_samples: tens of µs where the 905-µs window never sees a 0.5-ms flow).
  const Time window_start = now - static_cast<Time>(window_) * s_.sample_interval;
  std::vector<uint64_t> lr(due.size());
  for (size_t i = 0; i < due.size(); ++i) {
    lr[i] = settled(due[i]).lr_window;
    stats_.line_rate_window_min = std::min(stats_.line_rate_window_min, lr[i]);
    stats_.line_rate_window_max = std::max(stats_.line_rate_window_max, lr[i]);
  }
  auto check = [&](size_t i) {
    size_t j = first[i];
    for (uint32_t id : parts_.flows(due[i])) {
      if (owned(id)) {
        const Track& t = tracks_[track_of_[id]];
        const Flow& f = net_.flow(id);
        const bool waiting = timed_increase_ && f.rate_bps < f.max_rate_bps && t.rose_at < window_start;
        // The samples a flow needs before it can pass: its partition's line-rate window (l without
        // the setting) while all are its line rate; else the full window, since a sample below line
        // rate stays in it until then (a waiting flow is below line rate now, so this holds for it too).
        const bool all_line_rate = t.window.min() >= f.max_rate_bps;
        const uint64_t needed = all_line_rate ? lr[i] : window_;
        double& spread = v[j].spread;
        if (waiting) spread = std::numeric_limits<double>::infinity();
        else if (all_line_rate && t.window.count() >= needed) spread = 0.0;
        else spread = t.window.spread();
        if (t.window.count() < needed) v[j].wait = static_cast<double>(needed - t.window.count());
        v[j].slow = all_line_rate ? 0.0 : 1.0;
        // Judged over a window shorter than l, its goodput's grain counts in the skip's error and may
        // take half the bound; more asks for a window as much longer (the grain falls as the span grows).
        if (!all_line_rate || lr[i] >= line_rate_window_cap()) v[j].grain = 0;
        else if (v[j].grain > 0.5 * s_.error_bound)
          v[j].grow = std::ceil(double(lr[i]) * v[j].grain / (0.5 * s_.error_bound));
      }
      ++j;
    }
  };
  // The spreads depend only on each flow's own window, so any thread count gives the same. A
  // check is a few loads per flow.
  arena_->for_each(due.size(), n, s_.parallel_min_flows, check);
  if (exchange_ && n > 0) exchange_->sum_rows(v);
  // A partition's spread is its least steady flow's; steady ⇔ spread < θ (and every window full).
  std::vector<double> spread(due.size(), 0.0), wait(due.size(), 1.0);
  std::vector<uint8_t> lengthened(due.size(), 0);
  for (size_t i = 0; i < due.size(); ++i) {
    // Judged over a line-rate window shorter than l only if some flow cannot outlast l: a flow that
    // will still run when l samples are in keeps the accuracy of the long window at little cost.
    const Time full_at = static_cast<Time>(part(due[i]).reset_k + line_rate_window_cap()) * s_.sample_interval;
    bool slow = false, outlasts = true, unmeasured = false;
    double grow = 0;
    size_t j = first[i];
    for (uint32_t id : parts_.flows(due[i])) {
      Track& t = track(id);
      const Figures& fig = v[j++];
      t.goodput = fig.goodput, t.left = fig.room;
      t.trend = fig.trend, t.trend_at = static_cast<Time>(fig.trend_at);
      t.grain = fig.grain;
      spread[i] = std::max(spread[i], fig.spread);
      wait[i] = std::max(wait[i], fig.wait);
      slow |= fig.slow > 0;
      grow = std::max(grow, fig.grow);
      if (!(fig.goodput > 0)) unmeasured = true;
      else if (double(now) + fig.room / fig.goodput < double(full_at)) outlasts = false;
    }
    // Judged short only once every flow's goodput tells whether it outlasts l: until then undecided.
    const bool short_window = settled(due[i]).lr_window < line_rate_window_cap();
    lengthened[i] = (short_window && unmeasured && !slow) || lengthen(due[i], slow || (outlasts && !unmeasured), grow, wait[i]);
  }
  stats_.checks += due.size();
  std::vector<uint32_t> candidates;
  std::vector<Time> lengths;
  for (size_t i = 0; i < due.size(); ++i) {
    Part& p = settled(due[i]);
    stats_.min_spread = std::min(stats_.min_spread, spread[i]);
    const bool steady = spread[i] < s_.theta && !lengthened[i];
    if (steady) ++stats_.steady_found;
    if (steady && !p.converged) {
      p.converged = true;
      if (period_observer_) period_observer_->period_converged(due[i], now);
    }
    const Time dt = steady && s_.fast_forward && !distrusted(due[i]) ? skip_length(due[i]) : 0;
    if (dt > 0) candidates.push_back(due[i]), lengths.push_back(dt);
    else p.due = now + static_cast<Time>(wait[i]) * s_.sample_interval;
  }
  // Freezing needs every port of the partition free of other flows' data: each rank checks its
  // own ports. (Skipping one partition moves nothing onto another's ports, so checking them all
  // first is checking them one by one.)
  std::vector<uint8_t> freezable(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i)
    freezable[i] = net_.can_freeze(parts_.ports(candidates[i]), parts_.flows(candidates[i]));
  if (exchange_ && !candidates.empty()) exchange_->all(freezable);
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (!freezable[i]) {
      settled(candidates[i]).due = now + s_.sample_interval;
    } else if (verifier_.choose(VerifySample::Kind::kFastForward)) {
      std::vector<double> rate;
      for (uint32_t id : parts_.flows(candidates[i])) rate.push_back(track(id).goodput);
      begin_verify(candidates[i], VerifySample::Kind::kFastForward, lengths[i], std::move(rate));
    } else {
      skip(candidates[i], lengths[i]);
    }
  }
  release_followers();
  for (uint32_t pid : interrupted_) part(pid).interrupted = false;
  interrupted_.clear();
  record_timeline();
  // A tick alone keeps no run alive: the kernel holds it only before a later event (so a
  // workload's watchdog still sees an idle or stuck network).
  if (parts_.size() > 0) ensure_tick();
}

uint64_t FastForward::window_samples(const WormholeSettings& s, Time cc_period) {
  const uint64_t period = cc_period > 0 ? static_cast<uint64_t>(cc_period / s.sample_interval) + 1 : 0;
  return std::max<uint64_t>(s.window, period);
}

uint64_t FastForward::line_rate_window_samples(const WormholeSettings& s, Time base_rtt, uint64_t line_rate_bps,
                                               double payload) {
  const uint64_t l = std::max<uint64_t>(s.window, 1);
  if (!s.line_rate_window || line_rate_bps == 0) return l;
  // In samples, as doubles clamped to l before any cast (a tiny bound makes them huge).
  const auto samples = [&](double ps) { return std::ceil(ps / double(s.sample_interval)); };
  const double rtts = 4.0 * samples(2.0 * double(base_rtt));
  const double packet_ps = payload * 8.0 / double(line_rate_bps) * double(kSec);
  // Half the window holds 2 / bound packets: one packet is half the bound (FastForward::lengthen).
  const double resolution = samples(4.0 * packet_ps / s.error_bound);
  return static_cast<uint64_t>(std::clamp(std::max(rtts, resolution), 1.0, double(l)));
}

std::vector<std::string> FastForward::warnings(const WormholeSettings& s, Time max_rtt, const std::string& cc,
                                               Time cc_period) {
  std::vector<std::string> w;
  const Time span = static_cast<Time>(s.window) * s.sample_interval;
  if (const uint64_t l = window_samples(s, cc_period); l > s.window)
    w.push_back("the steady-state window (window x sample_interval = " + std::to_string(span / kNs) +
                " ns) is shorter than " + cc + "'s own update period (" + std::to_string(cc_period / kNs) +
                " ns: a rate held that long may still be waiting for the CC's next timer), so flows below their line rate are judged over " +
                std::to_string(l) + " samples (" + std::to_string(static_cast<Time>(l) * s.sample_interval / kNs) +
                " ns) instead; flows at line rate throughout are judged over the setting's " + std::to_string(s.window) +
                " samples" + (s.line_rate_window ? " or fewer (line_rate_window)" : ""));
  if (span < 2 * max_rtt)
    w.push_back("the steady-state window (window x sample_interval = " + std::to_string(span / kNs) +
                " ns) is shorter than two round trips of the network (maxRtt " + std::to_string(max_rtt / kNs) +
                " ns): a window that short cannot tell a steady state from a CC's reaction, and results may be "
                "far off (the paper's l = 2000 at 1 us covers 2 ms)");
  return w;
}

SkipReport FastForward::report() const {
  SkipReport r;
  r.settings = s_;
  r.window_samples = window_;
  r.stats = stats_;
  r.timeline = timeline_;
  r.events_executed = net_.kernel().events_executed();
  r.events_discarded = net_.events_discarded();
  r.control_bypassed = net_.packets_bypassed();
  r.packets_held = net_.packets_held();
  r.flow_bytes = net_.flow_bytes();
  for (const VerifySample& v : verifier_.samples())
    if (v.end >= 0 && v.simulated.size() == v.flows.size()) r.verify.push_back(v);
  return r;
}

void FastForward::record_timeline() {
  const PartitionSample s{net_.now(), static_cast<uint32_t>(parts_.size()), skipping_now_};
  if (timeline_.empty() || timeline_.back().partitions != s.partitions || timeline_.back().skipping != s.skipping)
    timeline_.push_back(s);
}

}  // namespace wh
