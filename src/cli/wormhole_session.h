// Wormhole for one `wormhole run`, shared by the config and scenario paths: the fast-forward
// controller (settings.enabled), its start-up warnings, memoization (settings.memo, or a memo file
// to warm-start from), and what the run writes and prints about them.
#pragma once
#include <fmt/core.h>

#include <cstdio>
#include <memory>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "progress.h"
#include "wormhole/cc/factory.h"
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
    if (!cfg.wormhole.fast_forward)
      std::fprintf(stderr, "wormhole: warning: memoization with fast_forward = false records patterns but replays "
                           "none (a replay is a skip)%s\n",
                   memo_in.empty() ? "" : ", so the --memo file is not used");
    const std::string text = describe(net, cfg);
    const uint64_t ns = memo_namespace(text);
    if (!memo_in.empty()) warm_start(memo_in, ns, text, cfg.cc_mode);
    db_.namespaces[ns] = text;
    rec_ = std::make_unique<Memoizer>(net, *ff_, db_, ns, cfg.wormhole.memo_rate_quantum_bps);
  }
  /// Where the memo file goes; set before report() (the results name it) and before any output is
  /// opened. It may be the --memo input: the file is read whole at the start and the new one holds
  /// all its patterns (with this run's hit counts).
  void set_memo_path(const std::string& path) {
    if (rec_) memo_path_ = path;
  }
  /// What the results file gets (nullptr with Wormhole off); valid until the next call.
  const SkipReport* report() {
    if (!ff_) return nullptr;
    report_ = ff_->report();
    if (rec_) {
      const MemoStats& s = rec_->stats();
      report_.memo = MemoReport{true,  s.periods,       s.hits,   s.replayed, s.converged, s.inserted, s.repeated,
                                db_.store.size(), warm_, warm_path_, memo_path_};
    }
    return &report_;
  }
  /// Writes the memo file set by set_memo_path (InputError if it cannot be created).
  void write_memo() {
    if (rec_) write_memo_file(memo_path_, db_);
  }
  const std::string& memo_path() const { return memo_path_; }
  /// Prints what Wormhole skipped and, when recording, what it memoized (nothing with Wormhole off).
  void print_summary() const {
    if (!ff_) return;
    print_skip_summary(*ff_);
    if (!rec_) return;
    const MemoStats& s = rec_->stats();
    const uint64_t ended = s.periods - s.replayed - s.converged;
    fmt::print("memo: {} unsteady periods: {} replayed ({} hits), {} simulated to convergence ({} new patterns, {} "
               "repeats), {} ended before converging (membership changed or a flow ended); {} patterns -> {}{}\n",
               s.periods, s.replayed, s.hits, s.converged, s.inserted, s.repeated, ended, db_.store.size(), memo_path_,
               warm_path_.empty() ? "" : fmt::format(" (warm start: {} patterns from {})", warm_, warm_path_));
  }

 private:
  /// Loads `path`'s entries, visible from time 0, their hit counts reset (the file this run
  /// writes counts its own hits, so merging it with `path` does not count them twice). The file
  /// must describe namespace `ns` exactly as `text` (it may hold no entry of it: a note says so),
  /// and its entries of `ns` must hold CC snapshots of this run's CC; other namespaces' entries are
  /// kept and written back, unused.
  void warm_start(const std::string& path, uint64_t ns, const std::string& text, int cc_mode) {
    MemoDb in = read_memo_file(path);
    const std::string fix = "warm-start only from runs of the same network settings (every setting but file paths, "
                            "monitors, stop time and SEED; link rates and delays) and the same theta, window, sample "
                            "interval and rate quantum; 'wormhole memo stats' lists a file's namespaces";
    size_t ours = 0;
    for (const MemoEntry* e : in.store.entries()) ours += e->ns == ns;
    auto it = in.namespaces.find(ns);
    if (it == in.namespaces.end() || it->second != text) {
      const std::string why = in.namespaces.empty() ? "it describes no settings at all"
                                                    : "its closest settings differ: " + closest_difference(in.namespaces, text);
      throw InputError(path, 0, "the memo file is not for this run's settings (" + why + ")", fix);
    }
    // Described but empty (its runs found no pattern) is a valid file: nothing to replay.
    if (ours == 0)
      std::fprintf(stderr, "wormhole: note: %s holds no pattern for this run's settings; nothing to replay from it\n",
                   path.c_str());
    const size_t kind = cc_state_kind(cc_mode);
    for (const MemoEntry* e : in.store.entries()) {
      if (e->ns != ns) continue;
      for (const CcSnapshot& c : e->value.cc)
        if (c.cc.index() != kind)
          throw InputError(path, 0,
                           "an entry of this run's namespace holds a CC state of kind " + std::to_string(c.cc.index()) +
                               " where CC_MODE " + std::to_string(cc_mode) + " keeps kind " + std::to_string(kind) +
                               " (corrupt file)",
                           "give a memo file written by wormhole (wormhole memo merge writes one)");
    }
    db_.namespaces = in.namespaces;
    for (const MemoEntry* e : in.store.entries()) db_.store.insert(e->ns, e->key, e->value, 0);
    warm_ = ours;
    warm_path_ = path;
  }
  /// Of the namespaces' texts, the one sharing the most "KEY=VALUE" items with `ours`, and its
  /// first item that differs, as "KEY=A there, KEY=B here".
  static std::string closest_difference(const std::map<uint64_t, std::string>& namespaces, const std::string& ours) {
    const std::vector<std::string> o = items(ours);
    std::string best;
    size_t best_shared = 0;
    for (const auto& [h, text] : namespaces) {
      const std::vector<std::string> t = items(text);
      size_t shared = 0;
      for (size_t i = 0; i < std::min(t.size(), o.size()); ++i) shared += t[i] == o[i];
      if (best.empty() || shared > best_shared) best = first_difference(text, ours), best_shared = shared;
    }
    return best;
  }
  static std::vector<std::string> items(const std::string& s) {
    std::vector<std::string> v;
    for (size_t a = 0, b; a < s.size(); a = b + 2) {
      b = s.find("; ", a);
      if (b == std::string::npos) b = s.size();
      v.push_back(s.substr(a, b - a));
    }
    return v;
  }
  /// The first "KEY=VALUE;" item of `theirs` and `ours` that differs, as "KEY: A there, B here".
  static std::string first_difference(const std::string& theirs, const std::string& ours) {
    const auto t = items(theirs), o = items(ours);
    for (size_t i = 0; i < std::max(t.size(), o.size()); ++i) {
      const std::string a = i < t.size() ? t[i] : "(none)", b = i < o.size() ? o[i] : "(none)";
      if (a != b) return a + " there, " + b + " here";
    }
    return "same settings text, different hash";
  }
  /// The memo namespace's text: what changes convergence — the network settings but paths,
  /// monitors, stop time and the seed (a replay stands in for another random realisation anyway),
  /// Wormhole's detection settings (θ, l, interval, rate quantum), then the distinct link (rate,
  /// delay) classes.
  static std::string describe(const Network& net, const SimConfig& cfg) {
    std::string text;
    for (const auto& [k, v] : effective_settings(cfg)) {
      // Wormhole's detection settings stay in: a period's recorded end is "steady under this θ, l
      // and interval", and the rate labels are multiples of the quantum.
      const bool detection = k == "WORMHOLE_THETA" || k == "WORMHOLE_WINDOW" || k == "WORMHOLE_SAMPLE_INTERVAL_US" ||
                             k == "WORMHOLE_MEMO_RATE_QUANTUM_GBPS";
      if (k.find("FILE") != std::string::npos || k.find("MON") != std::string::npos ||
          (k.rfind("WORMHOLE", 0) == 0 && !detection) || k == "SIMULATOR_STOP_TIME" || k == "ENABLE_TRACE" ||
          k == "EVENT_ORDER" || k == "SEED")
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
