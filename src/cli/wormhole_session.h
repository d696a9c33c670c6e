// Wormhole for one `wormhole run`, shared by the config and scenario paths: the fast-forward
// controller (settings.enabled), its start-up warnings, memo recording (settings.memo), and what
// the run writes and prints about them.
#pragma once
#include <fmt/core.h>

#include <cstdio>
#include <memory>
#include <set>
#include <string>

#include "progress.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/memo/recorder.h"

namespace wh {

class WormholeSession {
 public:
  /// Attaches the controller to `net` if cfg.wormhole.enabled (skips bounded by `run_end`, ps),
  /// after printing its warnings, and a memo recorder if cfg.wormhole.memo too.
  WormholeSession(Network& net, const SimConfig& cfg, Time run_end) {
    if (!cfg.wormhole.enabled) return;
    for (const std::string& w : FastForward::warnings(cfg.wormhole, static_cast<Time>(net.routing().max_rtt_ns()) * kNs))
      std::fprintf(stderr, "wormhole: warning: %s\n", w.c_str());
    ff_ = std::make_unique<FastForward>(net, cfg.wormhole, run_end);
    if (!cfg.wormhole.memo) return;
    const std::string text = describe(net, cfg);
    const uint64_t ns = memo_namespace(text);
    db_.namespaces[ns] = text;
    rec_ = std::make_unique<MemoRecorder>(net, *ff_, db_, ns, cfg.wormhole.memo_rate_quantum_bps);
  }
  /// What the results file gets (nullptr with Wormhole off); valid until the next call.
  const SkipReport* report() {
    if (!ff_) return nullptr;
    report_ = ff_->report();
    return &report_;
  }
  /// Writes the memo file `memo_path` when recording (InputError if it cannot be created).
  void write_memo(const std::string& memo_path) {
    if (!rec_) return;
    write_memo_file(memo_path, db_);
    memo_path_ = memo_path;
  }
  /// Prints what Wormhole skipped and, when recording, what it memoized (nothing with Wormhole off).
  void print_summary() const {
    if (!ff_) return;
    print_skip_summary(*ff_);
    if (!rec_) return;
    const MemoRecordStats& s = rec_->stats();
    fmt::print("memo: {} unsteady periods, {} converged: {} new patterns, {} repeats; {} started on a known pattern; "
               "{} patterns -> {}\n",
               s.periods, s.converged, s.inserted, s.repeated, s.seen_at_start, db_.store.size(), memo_path_);
  }

 private:
  /// The memo namespace's text: what changes convergence — the network settings but paths,
  /// monitors, stop time and Wormhole's own, then the distinct link (rate, delay) classes.
  static std::string describe(const Network& net, const SimConfig& cfg) {
    std::string text;
    for (const auto& [k, v] : effective_settings(cfg)) {
      if (k.find("FILE") != std::string::npos || k.find("MON") != std::string::npos || k.rfind("WORMHOLE", 0) == 0 ||
          k == "SIMULATOR_STOP_TIME" || k == "ENABLE_TRACE" || k == "EVENT_ORDER")
        continue;
      text += k + "=" + v + "; ";
    }
    std::set<std::pair<uint64_t, Time>> links;
    for (const Port& p : net.ports()) links.insert({p.rate_bps, p.delay});
    text += "links:";
    for (const auto& [r, d] : links) text += fmt::format(" {}bps/{}ps", r, d);
    return text;
  }

  std::unique_ptr<FastForward> ff_;
  SkipReport report_;
  MemoDb db_;
  std::string memo_path_;
  std::unique_ptr<MemoRecorder> rec_;  // declared after ff_: destroyed (detached) first
};

}  // namespace wh
