// The fast-forward controller's followers: partitions held while an isomorphic period that started no
// later is simulated, then replayed from it (memoization; see fast_forward.h and memo/README.md).
#include <algorithm>

#include "wormhole/ffwd/fast_forward.h"

namespace wh {

namespace {
// The longest hold, ps (about 75 min): far past any period, far from overflowing the moved events' times.
constexpr Time kMaxHold = Time(1) << 52;
}  // namespace

void FastForward::follow(const std::vector<uint32_t>& missed) {
  if (missed.empty() || verifier_.on()) return;
  // Whether each one's flows all last, even at line rate, to its first check and their end game
  // beyond (bytes left: the senders' ranks). A leader that does not is never followed (its
  // followers are refused below), so where none of a group does, no pattern is compared: in an
  // all-to-all whose flows end within microseconds, the partitions starting together each tick
  // were compared for nothing.
  std::vector<uint8_t> lasting(missed.size(), 1);
  if (missed.size() > 1) {  // a lone one has no one to follow
    std::vector<double> short_lived(missed.size(), 0.0);
    for (size_t k = 0; k < missed.size(); ++k) {
      const Time check = std::max(settled(missed[k]).due, net_.now());
      for (uint32_t id : parts_.flows(missed[k]))
        if (owned(id) && !lasts(net_.flow(id), check)) {
          short_lived[k] = 1;
          break;
        }
    }
    if (exchange_) exchange_->sum(short_lived);
    for (size_t k = 0; k < missed.size(); ++k) lasting[k] = short_lived[k] == 0 ? 1 : 0;
  }
  const std::vector<uint32_t> leader = period_observer_->find_leaders(missed, lasting, net_.now());
  std::vector<uint32_t> held, leaders;
  for (size_t i = 0; i < missed.size(); ++i)
    if (leader[i] != UINT32_MAX) held.push_back(missed[i]), leaders.push_back(leader[i]);
  if (held.empty()) return;
  // What only the senders' and the ports' ranks can tell, every rank alike: the bytes each flow may
  // be credited before its guard at line rate (a hold cannot know the rate it will be credited at);
  // whether the follower's and its leader's flows all last, even at line rate, to the leader's first
  // steady check and their end game beyond (a period that cannot converge ends in an early release,
  // which only approximates: nothing is held for it); and whether the partition can be frozen.
  const Time now = net_.now();
  std::vector<double> left, short_lived;
  std::vector<uint8_t> freezable;
  for (size_t k = 0; k < held.size(); ++k) {
    const Time check = std::max(settled(leaders[k]).due, now);
    double too_short = 0;
    for (uint32_t id : parts_.flows(held[k])) {
      double room_bytes = 0;
      if (owned(id)) {
        const Flow& f = net_.flow(id);
        room_bytes = room(f, double(f.max_rate_bps) / 8.0 / double(kSec));
        if (!lasts(f, check)) too_short = 1;
      }
      left.push_back(room_bytes);
    }
    for (uint32_t id : parts_.flows(leaders[k]))
      if (owned(id) && !lasts(net_.flow(id), check)) too_short = 1;
    short_lived.push_back(too_short);
    freezable.push_back(net_.can_freeze(parts_.ports(held[k]), parts_.flows(held[k])) ? 1 : 0);
  }
  if (exchange_) exchange_->sum(left), exchange_->sum(short_lived), exchange_->all(freezable);
  size_t j = 0;
  for (size_t k = 0; k < held.size(); ++k) {
    for (uint32_t id : parts_.flows(held[k])) track(id).left = left[j++];
    const Time check = std::max(settled(leaders[k]).due, now);
    period_observer_->follow_done(held[k], short_lived[k] == 0 && freezable[k] && hold(held[k], check - now));
  }
}

bool FastForward::hold(uint32_t pid, Time at_least) {
  const Time now = net_.now();
  Time h = std::min(run_end_ - now, kMaxHold);
  if (const Time t = net_.next_flow_start(); t >= 0) h = std::min(h, t - now);
  if (const Time t = net_.link_down_time(); t >= 0) h = std::min(h, t - now);
  // On the tick grid (a hold starts at a tick): its end is met at a tick, never run past between two.
  h = h / s_.sample_interval * s_.sample_interval;
  if (h < std::max(at_least, s_.sample_interval)) return false;
  net_.shift(parts_.ports(pid), parts_.flows(pid), h, now + h);
  for (uint32_t id : parts_.flows(pid)) {
    Track& t = track(id);
    t.credited = 0, t.skip_rate = 0, t.est_rel = 0;
  }
  begin_skip(pid, h, true);
  part(pid).following = true;
  return true;
}

void FastForward::unhold(uint32_t pid, const Replay& r, Time resume, bool restore_cc) {
  Part& p = part(pid);
  const std::vector<uint32_t>& flows = parts_.flows(pid);
  const uint32_t payload = net_.params().payload;
  const Time dt = resume - p.skip_start;
  // Unfrozen (a resume within the ns after now, between ticks, freezes nothing: freezing is a tick's).
  net_.shift(parts_.ports(pid), flows, resume - p.skip_end, 0);
  p.skip_end = resume;
  p.following = false;
  for (size_t i = 0; i < flows.size(); ++i) {
    const uint32_t id = flows[i];
    Track& t = track(id);
    const double bytes = i < r.bytes.size() ? std::min(double(r.bytes[i]), std::max(t.left, 0.0)) : 0.0;
    const uint64_t pkts = static_cast<uint64_t>(bytes) / payload;
    credit_skip(id, t, pkts, dt > 0 ? double(pkts * payload) / double(dt) : 0.0, dt, true);
    if (i < r.goodput.size()) {
      t.goodput = r.goodput[i];
      t.trend = r.trend[i];
      t.trend_at = resume - r.trend_age[i];
    }
    if (!restore_cc || i >= r.cc.size() || !owned(id)) continue;
    net_.kernel().set_barrier_context(cause::flow_context(id));
    net_.restore_flow_cc(id, r.cc[i], resume);
  }
}

void FastForward::release_early(uint32_t pid) {
  Part& p = part(pid);
  // Whole ns, rounded up, as a skip-back: no moved event may land before now.
  const Time resume = p.skip_start + (net_.now() - p.skip_start + kNs - 1) / kNs * kNs;
  const Replay r = period_observer_ ? period_observer_->release_early(pid, resume) : Replay{};
  // Possibly between ticks, where CC timers cannot be scheduled under a rank-independent cause: the
  // flows keep their own CC state (as a replay pulled back keeps the converged one).
  unhold(pid, r, resume, false);
  p.skipping = false;
  --skipping_now_;
  reset(pid);
}

void FastForward::release_followers() {
  if (!period_observer_) return;
  const Time now = net_.now();
  for (const FollowerRelease& f : period_observer_->releases(now)) {
    Part& p = part(f.pid);
    if (!p.skipping || !p.following) continue;
    if (f.converged) {
      // The replay its lookup would have found, to the end of its own period — now, as it started with
      // its leader (Replay::duration 0) — then on as a replay: fast-forward at the next tick.
      count_contended(f.pid);
      unhold(f.pid, f.replay, now, true);
      p.pattern = f.replay.pattern;
      continue;
    }
    unhold(f.pid, f.replay, now, true);
    p.skipping = false;
    --skipping_now_;
    reset(f.pid);
  }
}

}  // namespace wh
