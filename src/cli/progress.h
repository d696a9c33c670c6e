// Shared by the run back ends (run_plan.h): collects PFC records, writes text outputs as flows finish and prints
// progress to stderr every few seconds.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "wormhole/ffwd/fast_forward.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/io/results_writer.h"
#include "wormhole/net/network.h"

namespace wh {

/// What one progress line shows.
struct ProgressFigures {
  std::string who;          ///< a prefix such as "rank 0: " ("" for one process)
  double wall_s = 0;        ///< wall time since the run started, s
  Time now = 0;             ///< simulated time, ps
  uint64_t events = 0;      ///< events executed so far
  uint64_t flows_done = 0;  ///< flows finished so far
  double fraction = -1;     ///< share of the run done, [0, 1]; < 0 = unknown: no % and no ETA
  std::string of;           ///< what the share counts, e.g. "the workload's bytes" or "trace nodes"
  /// Share of the simulated time at which the run will be cut (SIMULATOR_STOP_TIME, workload.max_time)
  /// reached, now / that time; < 0 = not cut. The run ends at the cut or when all is done, whichever
  /// comes first, so the ETA follows the larger of the two shares.
  double time_fraction = -1;
  /// Wormhole: the model's events left out (fast-forward's skips, the collective memo's replays) over
  /// those and the executed ones; < 0 = Wormhole off
  double skip_ratio = -1;
  /// Collective memo: flows its replays have ended so far, among the flows done (the skip ratio counts the
  /// events they stand for); < 0 = no collective memo.
  int64_t replayed_flows = -1;
};

/// "2 min 05 s": a wall-time span for the ETA (whole seconds below 1 min, h and min from 1 h).
inline std::string format_eta(double s) {
  const auto t = static_cast<uint64_t>(s + 0.5);
  char buf[48];
  if (t < 60) std::snprintf(buf, sizeof buf, "%lu s", static_cast<unsigned long>(t));
  else if (t < 3600) std::snprintf(buf, sizeof buf, "%lu min %02lu s", static_cast<unsigned long>(t / 60), static_cast<unsigned long>(t % 60));
  else std::snprintf(buf, sizeof buf, "%lu h %02lu min", static_cast<unsigned long>(t / 3600), static_cast<unsigned long>(t / 60 % 60));
  return buf;
}

/// The progress line (no newline): "[   10.0 s] sim 0.001234 s, 3.21 M events/s, 1234 flows done", then,
/// when the share done is known, ", 41.2 % of the flows' bytes", then ", ETA 14 s" (the rest at the pace so far,
/// of the share done or of the simulated time to a cut, whichever is further; left out until some share is
/// done), then with Wormhole on ", Wormhole skipped 63.0 % of events", and with the collective memo on
/// ", collective memo replayed 13440 flows".
inline std::string format_progress(const ProgressFigures& p) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "[%7.1f s] %ssim %.6f s, %.2f M events/s, %lu flows done", p.wall_s, p.who.c_str(),
                double(p.now) / kSec, p.wall_s > 0 ? double(p.events) / p.wall_s / 1e6 : 0.0,
                static_cast<unsigned long>(p.flows_done));
  std::string line = buf;
  if (p.fraction >= 0) {
    std::snprintf(buf, sizeof buf, ", %.1f %% of %s", 100 * std::min(p.fraction, 1.0), p.of.c_str());
    line += buf;
  }
  if (const double f = std::min(std::max(p.fraction, p.time_fraction), 1.0); f > 0)
    line += ", ETA " + format_eta(p.wall_s * (1 - f) / f);
  if (p.skip_ratio >= 0) {
    std::snprintf(buf, sizeof buf, ", Wormhole skipped %.1f %% of events", 100 * p.skip_ratio);
    line += buf;
  }
  if (p.replayed_flows >= 0) line += ", collective memo replayed " + std::to_string(p.replayed_flows) + " flows";
  return line;
}

/// The progress line on stderr, at most every 5 s of wall time: simulated time, event rate, flows done,
/// and where the run can tell them the share done with an ETA and Wormhole's skip ratio.
class ProgressLine {
 public:
  using Clock = std::chrono::steady_clock;
  /// `who`: a prefix such as "rank 0: " ("" for one process).
  explicit ProgressLine(const char* who = "") : who_(who), start_(Clock::now()), last_(start_) {}
  /// The share of the run done, [0, 1] (< 0: unknown), asked at each line; `of` names what it counts.
  void set_fraction(std::function<double()> fraction, std::string of) {
    fraction_ = std::move(fraction);
    of_ = std::move(of);
  }
  /// The model's events Wormhole left out so far (skipped and replayed), asked at each line.
  void set_skipped(std::function<uint64_t()> skipped) { skipped_ = std::move(skipped); }
  /// The simulated time (ps) at which the run is cut; kTimeMax (the default) or 0 = not cut.
  void set_end(Time end) { end_ = end; }
  /// The flows the collective memo's replays have ended so far, asked at each line.
  void set_replayed(std::function<uint64_t()> replayed) { replayed_ = std::move(replayed); }
  void tick(Time now, uint64_t events, uint64_t done) {
    const auto t = Clock::now();
    if (t - last_ < std::chrono::seconds(5)) return;
    last_ = t;
    ProgressFigures p;
    p.who = who_;
    p.wall_s = std::chrono::duration<double>(t - start_).count();
    p.now = now, p.events = events, p.flows_done = done;
    if (fraction_) p.fraction = fraction_(), p.of = of_;
    if (end_ > 0 && end_ < kTimeMax) p.time_fraction = double(now) / double(end_);
    if (skipped_) {
      const uint64_t skipped = skipped_();
      p.skip_ratio = events + skipped > 0 ? double(skipped) / double(events + skipped) : 0.0;
    }
    if (replayed_) p.replayed_flows = static_cast<int64_t>(replayed_());
    std::fprintf(stderr, "%s\n", format_progress(p).c_str());
  }

 private:
  const char* who_;
  Clock::time_point start_, last_;
  std::function<double()> fraction_;
  std::string of_;
  Time end_ = kTimeMax;
  std::function<uint64_t()> skipped_;
  std::function<uint64_t()> replayed_;
};

class RunObserver final : public NetObserver {
 public:
  RunObserver(TextOutputs& out, bool quiet) : out_(out), quiet_(quiet) {}
  void flow_finished(const FlowRecord& f) override {
    out_.flow_finished(f);
    finished_bytes_ += f.size_bytes;
  }
  /// Bytes of the flows finished so far.
  uint64_t finished_bytes() const { return finished_bytes_; }
  void pfc(const PfcRecord& p) override {
    out_.pfc(p);
    pfc_.push_back(p);
  }
  void tick(Time now, uint64_t events, uint64_t done) override {
    if (!quiet_) progress_.tick(now, events, done);
  }
  ProgressLine& progress() { return progress_; }
  std::vector<PfcRecord> pfc_;

 private:
  TextOutputs& out_;
  bool quiet_;
  uint64_t finished_bytes_ = 0;
  ProgressLine progress_;
};

/// Verify mode's line: per kind, how many decisions were simulated instead, their errors, and how
/// many failed the bound.
inline void print_verify_summary(const SkipReport& r) {
  std::string line = "verify:";
  static const char* const kNames[] = {"fast-forwards", "replays", "replay continuations"};
  for (int kind = 0; kind < VerifySample::kKinds; ++kind) {
    size_t n = 0, compared = 0, failed = 0;
    double sum = 0, max = 0, signed_sum = 0;
    for (const VerifySample& v : r.verify) {
      if (static_cast<int>(v.kind) != kind) continue;
      ++n, failed += v.failed;
      if (!v.compared()) continue;  // cut before its first tick: no span to compare over
      ++compared, sum += v.error, signed_sum += v.signed_error, max = std::max(max, v.error);
    }
    char buf[384];
    if (n == 0) {  // no mean over nothing
      std::snprintf(buf, sizeof buf, "%s 0 %s simulated instead", kind == 0 ? "" : ";", kNames[kind]);
      line += buf;
      continue;
    }
    std::snprintf(buf, sizeof buf,
                  "%s %zu %s simulated instead (byte error mean %.3f %%, signed mean %+.3f %%, max %.3f %%; %zu above "
                  "the %.3g %% bound%s%s)",
                  kind == 0 ? "" : ";", n, kNames[kind], compared ? 100 * sum / double(compared) : 0.0,
                  compared ? 100 * signed_sum / double(compared) : 0.0, 100 * max, failed, 100 * r.settings.error_bound,
                  failed == 0 ? "" : kind == 0 ? ": their flows are not skipped again"
                                  : kind == 1 ? ": those patterns are rejected"
                                              : ": their flows are not skipped again, their patterns rejected",
                  compared == n ? "" : ("; " + std::to_string(n - compared) + " cut before a tick, nothing to compare").c_str());
    line += buf;
  }
  std::printf("%s\n", line.c_str());
}

/// Wormhole's warnings on stderr (printed also by quiet runs): verify mode found a decision above the
/// error bound; decisions froze flows contending for a port.
inline void print_skip_warnings(const SkipReport& r) {
  const SkipStats& s = r.stats;
  size_t failed = 0;
  for (const VerifySample& v : r.verify) failed += v.failed;
  if (failed > 0)
    std::fprintf(stderr,
                 "wormhole: warning: verify mode found %zu decisions above the %.3g %% error bound (simulated instead; "
                 "not accelerated again)%s\n",
                 failed, 100 * r.settings.error_bound,
                 r.settings.verify == 1 ? "" : ": this run's unverified decisions may be as far off");
  const CollectiveMemoStats& c = r.collective;
  if (c.verify_failures > 0)
    std::fprintf(stderr,
                 "wormhole: warning: %lu of %lu collectives simulated again (verified hits, repeats) differ from their "
                 "recorded pattern (not replayed again): the collective memo's key misses some state, or a --memo file "
                 "is not what it says, so unverified replays may be off; turn it off (WORMHOLE_COLLECTIVE_MEMO 0)\n",
                 static_cast<unsigned long>(c.verify_failures), static_cast<unsigned long>(c.verified + c.repeats));
  if (c.follow_failures > 0)
    std::fprintf(stderr,
                 "wormhole: warning: %lu collectives were replayed after another island's simulation of the same pattern, "
                 "which another flow then disturbed: their completions may be off (WORMHOLE_COLLECTIVE_MEMO 0 simulates "
                 "them)\n",
                 static_cast<unsigned long>(c.follow_failures));
  if (c.margin_violations > 0)
    std::fprintf(stderr,
                 "wormhole: warning: %lu collectives were replayed on an NVSwitch shared with other traffic whose buffer "
                 "use, with what the replay stood for, came near a PFC threshold: a pause the replay could not see may "
                 "have been due (WORMHOLE_COLLECTIVE_MEMO 0 simulates them)\n",
                 static_cast<unsigned long>(c.margin_violations));
  if (c.conflicts > 0)
    std::fprintf(stderr,
                 "wormhole: warning: %lu flows started on an island while a replayed collective held it: they ran as if "
                 "its traffic were not there (WORMHOLE_COLLECTIVE_MEMO 0 simulates such collectives)\n",
                 static_cast<unsigned long>(c.conflicts));
  if (s.contended_decisions > 0)
    std::fprintf(stderr,
                 "wormhole: warning: %lu skips or replays froze flows contending for a port: there the answer can be off "
                 "by more than any one decision's error (a skip leaves queues and CC state as it found them, and a "
                 "congested run then takes another course). Judge it against packet mode (WORMHOLE 0) with perturbed "
                 "runs: scripts/bench_accuracy.py, or wh_analyze.py compare --noise\n",
                 static_cast<unsigned long>(s.contended_decisions));
}

/// Wormhole's summary on stdout: what it skipped and replayed, verify mode's line, the estimated error
/// and how many decisions froze contention; warnings on stderr when verify mode found a decision
/// above the error bound or a decision froze flows contending for a port.
inline void print_skip_summary(const SkipReport& r) {
  const SkipStats& s = r.stats;
  const double total = double(r.events_executed - r.events_discarded + s.events_skipped);
  // No check made (a warm start that replayed everything): no spread was seen, rather than "inf".
  char spread[32] = "none";
  if (s.checks > 0) std::snprintf(spread, sizeof spread, "%.4f", s.min_spread);
  std::printf("wormhole: %lu skips (%lu pulled back), %lu steady checks (%lu steady, smallest spread %s), "
              "%lu packets credited, ~%lu events skipped "
              "(%.2f %% of the model's executed + skipped), %.6f s of flow time fast-forwarded, at most %lu partitions",
              static_cast<unsigned long>(s.skips), static_cast<unsigned long>(s.skip_backs),
              static_cast<unsigned long>(s.checks), static_cast<unsigned long>(s.steady_found), spread,
              static_cast<unsigned long>(s.packets_skipped),
              static_cast<unsigned long>(s.events_skipped), total > 0 ? 100.0 * double(s.events_skipped) / total : 0.0,
              double(s.skipped_flow_time) / kSec, static_cast<unsigned long>(s.max_partitions));
  // With line_rate_window, partitions at line rate may be judged over their flows' own time scale.
  if (r.settings.line_rate_window && s.line_rate_window_max > 0)
    std::printf("; line-rate window %lu-%lu samples", static_cast<unsigned long>(s.line_rate_window_min),
                static_cast<unsigned long>(s.line_rate_window_max));
  std::printf("\n");
  if (s.replays + s.replays_refused > 0)
    std::printf("wormhole: %lu memoized periods replayed (%lu pulled back, %lu cut short where a flow neared its end, "
                "%lu refused), %.6f s of flow time replayed\n",
                static_cast<unsigned long>(s.replays), static_cast<unsigned long>(s.replay_backs),
                static_cast<unsigned long>(s.replays_cut), static_cast<unsigned long>(s.replays_refused),
                double(s.replayed_flow_time) / kSec);
  if (const CollectiveMemoStats& c = r.collective; c.on)
    std::printf("wormhole: collective memo: %lu collectives, %lu replayed (%lu flows), %lu simulated and kept as "
                "patterns, %lu simulated beside their pattern's recording, %lu simulated not kept; %lu not on an island, "
                "%lu issued late, %lu met a busy island, %lu could meet later traffic; %lu verified, %lu simulations differing from their pattern, "
                "%lu conflicts, %lu follow failures, %lu margin violations\n",
                static_cast<unsigned long>(c.considered), static_cast<unsigned long>(c.replayed),
                static_cast<unsigned long>(c.replayed_flows), static_cast<unsigned long>(c.recorded),
                static_cast<unsigned long>(c.repeats), static_cast<unsigned long>(c.not_kept), static_cast<unsigned long>(c.not_island),
                static_cast<unsigned long>(c.late_issue), static_cast<unsigned long>(c.busy),
                static_cast<unsigned long>(c.overlaps),
                static_cast<unsigned long>(c.verified), static_cast<unsigned long>(c.verify_failures),
                static_cast<unsigned long>(c.conflicts), static_cast<unsigned long>(c.follow_failures),
                static_cast<unsigned long>(c.margin_violations));
  if (const CollectiveMemoStats& c = r.collective; c.on && c.replayed > 0) {
    const double all = total + double(c.events_replayed);
    std::printf("wormhole: collective memo: its replays stand for ~%lu events; with fast-forward's, %.2f %% of the "
                "model's executed + skipped\n",
                static_cast<unsigned long>(c.events_replayed),
                all > 0 ? 100.0 * double(s.events_skipped + c.events_replayed) / all : 0.0);
  }
  if (const CollectiveMemoStats& c = r.collective; c.on && (c.approximate + c.approximate_replays > 0 || c.verify_max_error > 0)) {
    // A warm start replays patterns an earlier run recorded with skips: the two counts are apart.
    std::printf("wormhole: collective memo: %lu patterns recorded with skips in this run, %lu replays of patterns "
                "recorded with skips (estimated error %.0f bytes carried over)",
                static_cast<unsigned long>(c.approximate), static_cast<unsigned long>(c.approximate_replays),
                c.estimated_error_bytes);
    if (c.verify_max_error > 0) std::printf("; verified: largest completion error %.4f %%", 100 * c.verify_max_error);
    std::printf("\n");
  }
  if (r.settings.verify > 0) print_verify_summary(r);
  // Each skip is shortened so that its own estimate stays within the bound, so the run's estimate
  // never exceeds it: it says how much the skips leaned on their goodput trends, not the answer's error.
  std::printf("wormhole: estimated error %.3f %% of the flows' bytes (goodput trends carried over the skips; bound %.3g %%)\n",
              100 * r.estimated_error(), 100 * r.settings.error_bound);
  // A follower released when its leader converged is replayed from it, and counted with the others.
  const uint64_t decisions = s.skips + s.replays + r.memo.followed;
  if (decisions > 0)
    std::printf("wormhole: %lu of %lu skips and replays froze contention (two or more flows sending through one port)\n",
                static_cast<unsigned long>(s.contended_decisions), static_cast<unsigned long>(decisions));
  print_skip_warnings(r);
}

}  // namespace wh
