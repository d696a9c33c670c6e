// Fast-forward controller (see fast_forward.h): construction, partitions, flows' tracks, interrupts, report.
#include "wormhole/ffwd/fast_forward.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "fast_forward_internal.h"

namespace wh {

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
