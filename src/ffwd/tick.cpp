// Fast-forward controller (see fast_forward.h): the tick: goodput checkpoints, steady checks, skip decisions.
#include <algorithm>
#include <cmath>
#include <limits>

#include "wormhole/ffwd/fast_forward.h"
#include "fast_forward_internal.h"

namespace wh {

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

}  // namespace wh
