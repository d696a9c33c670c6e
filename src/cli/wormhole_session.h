// Wormhole for one `wormhole run`, shared by the config and scenario paths: the fast-forward
// controller (settings.enabled), its start-up warnings, memoization (settings.memo, or a memo file
// to warm-start from), and what the run writes and prints about them.
#pragma once
#include <fmt/core.h>

#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "progress.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/io/input_error.h"
#include "wormhole/memo/memoizer.h"

namespace wh {

class WormholeSession {
 public:
  /// Attaches the controller to `net` if cfg.wormhole.enabled (skips bounded by `run_end`, ps),
  /// after printing its warnings, and a memoizer if cfg.wormhole.memo or `memo_in` (a memo file
  /// whose entries of this run's namespace are hit from time 0 on). Throws InputError for a
  /// `memo_in` with Wormhole off, unreadable, or without this run's namespace.
  WormholeSession(Network& net, const SimConfig& cfg, Time run_end, const std::string& memo_in = "") {
    if (!cfg.wormhole.enabled) {
      if (!memo_in.empty())
        throw InputError(memo_in, 0, "--memo given but Wormhole is off, so nothing would use the memo file",
                         "turn Wormhole on: WORMHOLE 1 (config.txt, or --set WORMHOLE=1) or [wormhole] enabled = true");
      return;
    }
    for (const std::string& w : FastForward::warnings(cfg.wormhole, static_cast<Time>(net.routing().max_rtt_ns()) * kNs))
      std::fprintf(stderr, "wormhole: warning: %s\n", w.c_str());
    ff_ = std::make_unique<FastForward>(net, cfg.wormhole, run_end);
    if (!cfg.wormhole.memo && memo_in.empty()) return;
    const std::string text = describe(net, cfg);
    const uint64_t ns = memo_namespace(text);
    if (!memo_in.empty()) warm_start(memo_in, ns, text);
    db_.namespaces[ns] = text;
    rec_ = std::make_unique<Memoizer>(net, *ff_, db_, ns, cfg.wormhole.memo_rate_quantum_bps);
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
    const MemoStats& s = rec_->stats();
    fmt::print("memo: {} unsteady periods: {} hits ({} replayed), {} simulated to convergence: {} new patterns, {} "
               "repeats; {} patterns -> {}{}\n",
               s.periods, s.hits, s.replayed, s.converged, s.inserted, s.repeated, db_.store.size(), memo_path_,
               warm_path_.empty() ? "" : fmt::format(" (warm start: {} patterns from {})", warm_, warm_path_));
  }

 private:
  /// Loads `path`'s entries, visible from time 0. The file must know namespace `ns` (its settings
  /// text `text`); other namespaces' entries are kept and written back, unused.
  void warm_start(const std::string& path, uint64_t ns, const std::string& text) {
    MemoDb in = read_memo_file(path);
    if (!in.namespaces.count(ns)) {
      std::string why = "its runs had other settings";
      if (!in.namespaces.empty()) why += ": " + first_difference(in.namespaces.begin()->second, text);
      throw InputError(path, 0, "the memo file has no entries for this run's namespace (" + why + ")",
                       "warm-start only from runs of the same network settings (CC, rates, delays, MTU, buffers)");
    }
    db_.namespaces = in.namespaces;
    for (const MemoEntry* e : in.store.entries()) db_.store.insert(e->ns, e->key, e->value, 0).first->hits = e->hits;
    warm_ = db_.store.size();
    warm_path_ = path;
  }
  /// The first "KEY=VALUE;" item of `theirs` and `ours` that differs, as "KEY: A there, B here".
  static std::string first_difference(const std::string& theirs, const std::string& ours) {
    auto items = [](const std::string& s) {
      std::vector<std::string> v;
      for (size_t a = 0, b; a < s.size(); a = b + 2) {
        b = s.find("; ", a);
        if (b == std::string::npos) b = s.size();
        v.push_back(s.substr(a, b - a));
      }
      return v;
    };
    const auto t = items(theirs), o = items(ours);
    for (size_t i = 0; i < std::max(t.size(), o.size()); ++i) {
      const std::string a = i < t.size() ? t[i] : "(none)", b = i < o.size() ? o[i] : "(none)";
      if (a != b) return a + " there, " + b + " here";
    }
    return "same settings text, different hash";
  }
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
  std::string memo_path_, warm_path_;
  size_t warm_ = 0;
  std::unique_ptr<Memoizer> rec_;  // declared after ff_: destroyed (detached) first
};

}  // namespace wh
