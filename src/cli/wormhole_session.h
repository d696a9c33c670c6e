// Wormhole for one `wormhole run`, shared by the config and scenario paths: the fast-forward
// controller (settings.enabled), its start-up warnings, memoization (settings.memo, or a memo file
// to warm-start from), and what the run writes and prints about them.
#pragma once
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <array>
#include <cstdio>
#include <optional>
#include <memory>
#include <set>
#include <string>

#include "progress.h"
#include "wormhole/cc/factory.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/core/input_error.h"
#include "wormhole/memo/memo_file.h"
#include "wormhole/memo/memoizer.h"
#include "wormhole/workload/collective_memo.h"

namespace wh {

class WormholeSession {
 public:
  /// Attaches the controller to `net` if cfg.wormhole.enabled (skips bounded by `run_end`, ps),
  /// after printing its warnings, and a memoizer if cfg.wormhole.memo or `memo_in` (a memo file
  /// whose entries of this run's namespace are hit from time 0 on). Throws InputError for a
  /// `memo_in` with Wormhole off, unreadable, or without this run's namespace.
  /// `warn`: print the warnings (a distributed run's rank 0 only). A distributed run's rank `rank` of
  /// `ranks` holds only its shard of the memo store (Memoizer::set_shard; of a warm start's file too);
  /// the collective patterns a warm start loaded stay with rank 0 (the collective memo is not used over
  /// ranks; they go back into the merged memo file).
  WormholeSession(Network& net, const SimConfig& cfg, Time run_end, const std::string& memo_in = "",
                  bool warn = true, uint32_t rank = 0, uint32_t ranks = 1) {
    if (!cfg.wormhole.enabled) {
      if (!memo_in.empty())
        throw InputError(memo_in, 0, "--memo given but Wormhole is off, so nothing would use the memo file",
                         "turn Wormhole on: WORMHOLE 1 (config.txt, or --set WORMHOLE=1) or [wormhole] enabled = true");
      return;
    }
    for (const std::string& w : FastForward::warnings(cfg.wormhole, static_cast<Time>(net.routing().max_rtt_ns()) * kNs,
                                                      net.cc().name(), net.cc().update_period()))
      if (warn) std::fprintf(stderr, "wormhole: warning: %s\n", w.c_str());
    ff_ = std::make_unique<FastForward>(net, cfg.wormhole, run_end);
    if (!cfg.wormhole.memo && memo_in.empty()) return;
    if (!cfg.wormhole.fast_forward && warn)
      std::fprintf(stderr, "wormhole: warning: memoization with fast_forward = false records unsteady periods but "
                           "replays none (a replay is a skip)%s\n",
                   memo_in.empty() ? ""
                   : cfg.wormhole.collective_memo
                       ? ", so of the --memo file only the collective patterns recorded without skips are used"
                       : ", so the --memo file is not used");
    const std::string text = describe(net, cfg);
    const uint64_t ns = ns_ = memo_namespace(text);
    if (!memo_in.empty()) warm_start(memo_in, ns, text, cfg.cc_mode, warn, rank, ranks);
    db_.namespaces[ns] = text;
    rec_ = std::make_unique<Memoizer>(net, *ff_, db_, ns, cfg.wormhole.memo_rate_quantum_bps);
    if (ranks > 1) {
      rec_->set_shard(rank, ranks);
      if (rank != 0) db_.collectives.clear();
    }
  }
  /// Where the memo file goes; set before report() (the results name it) and before any output is
  /// opened. It may be the --memo input: the file is read whole at the start and the new one holds
  /// all its patterns (with this run's hit counts).
  void set_memo_path(const std::string& path) {
    if (rec_) memo_path_ = path;
  }
  /// The collective memo of a one-process workload run (nullptr with Wormhole or the collective memo
  /// off); created on the first call. Drivers take it in DriverOptions::memo.
  /// With memoization on, its patterns are the memo file's (this run's namespace): a warm start replays
  /// them from the first collective, and memo.h5 keeps the new ones.
  /// Returns nullptr, with a warning, for HPCC-PINT (its per-flow sampling generator is seeded by the
  /// flow id, a random draw the memo cannot see) and with LINK_DOWN (routes change under a replay).
  CollectiveMemo* collective_memo(Network& net, const SimConfig& cfg) {
    if (!ff_ || !cfg.wormhole.collective_memo) return nullptr;
    if (cfg.cc_mode == 10 || cfg.link_down_a != cfg.link_down_b) {
      collective_unused(cfg, cfg.cc_mode == 10 ? "HPCC-PINT (CC_MODE 10) samples INT with a generator per flow"
                                               : "LINK_DOWN changes routes under a replay");
      return nullptr;
    }
    if (!collective_)
      collective_ = std::make_unique<CollectiveMemo>(net, cfg.wormhole.verify,
                                                     cfg.wormhole.fast_forward ? cfg.wormhole.error_bound : 0.0,
                                                     rec_ ? &db_.collectives[ns_] : nullptr);
    return collective_.get();
  }
  /// Warns that collective_memo is set but this run does not use it (`why`: a distributed run, several
  /// jobs, Chakra traces, ...); nothing when it is not set or Wormhole is off.
  static void collective_unused(const SimConfig& cfg, const char* why) {
    if (cfg.wormhole.enabled && cfg.wormhole.collective_memo)
      std::fprintf(stderr, "wormhole: warning: the collective memo is not used in this run: %s\n", why);
  }
  /// The controller (nullptr with Wormhole off).
  FastForward* controller() { return ff_.get(); }
  /// A distributed run's network counters, summed over the ranks by the caller: they replace this
  /// rank's in report() (the controller's own figures are alike on every rank).
  void set_rank_totals(uint64_t executed, uint64_t discarded, uint64_t bypassed, uint64_t held) {
    totals_ = {executed, discarded, bypassed, held};
  }
  /// This rank's shard's own figures, {new patterns, repeats, patterns held} (no memoization: zeros).
  std::array<uint64_t, 3> memo_shard_counts() const {
    if (!rec_) return {0, 0, 0};
    return {rec_->stats().inserted, rec_->stats().repeated, db_.store.size()};
  }
  /// A distributed run's memo figures summed over its shards, and each rank's patterns held: they
  /// replace this rank's in report() and the summary.
  void set_memo_totals(uint64_t inserted, uint64_t repeated, std::vector<uint64_t> patterns_per_rank) {
    memo_totals_ = MemoTotals{inserted, repeated, std::move(patterns_per_rank)};
  }
  /// Writes this rank's shard of the memo store to shard_path(rank, token) (InputError if it cannot be created).
  void write_memo_shard(uint32_t rank, const std::string& token) {
    if (rec_) write_memo_file(shard_path(rank, token), db_);
  }
  /// Removes what write_memo_shard wrote or began (a run that failed at the end).
  void remove_memo_shard(uint32_t rank, const std::string& token) {
    if (rec_) std::remove(shard_path(rank, token).c_str());
  }
  /// Merges the shards of `ranks` ranks into the memo file set by set_memo_path, as `wormhole memo merge`
  /// does, and removes them, also when that fails (InputError if one cannot be read or the file cannot be
  /// created).
  void merge_memo_shards(uint32_t ranks, const std::string& token) {
    if (!rec_) return;
    std::vector<std::string> shards;
    for (uint32_t r = 0; r < ranks; ++r) shards.push_back(shard_path(r, token));
    const auto remove = [&] {
      for (const std::string& p : shards) std::remove(p.c_str());
    };
    try {
      write_memo_file(memo_path_, merge_memo_files(shards));
    } catch (...) {
      remove();
      throw;
    }
    remove();
  }
  /// Where rank `rank`'s shard of the run named `token` goes: beside the memo file, "memo.h5" ->
  /// "memo.h5.rank3-<token>.part".
  std::string shard_path(uint32_t rank, const std::string& token) const {
    return memo_path_ + ".rank" + std::to_string(rank) + "-" + token + ".part";
  }
  /// What the results file gets (nullptr with Wormhole off); valid until the next call.
  const SkipReport* report() {
    if (!ff_) return nullptr;
    if (!verification_done_) ff_->finish_verification(), verification_done_ = true;  // collective: once
    report_ = ff_->report();
    if (collective_) report_.collective = collective_->stats(), report_.collective.on = true;
    if (totals_) {
      report_.events_executed = (*totals_)[0], report_.events_discarded = (*totals_)[1];
      report_.control_bypassed = (*totals_)[2], report_.packets_held = (*totals_)[3];
    }
    if (rec_) {
      const MemoStats s = memo_stats();
      report_.memo = MemoReport{true,  s.periods,       s.hits,        s.replayed, s.converged, s.inserted, s.repeated,
                                patterns(), warm_ - warm_collective_, s.rejected, s.followed, s.follows_cut, warm_path_, memo_path_};
    }
    return &report_;
  }
  /// Writes the memo file set by set_memo_path (InputError if it cannot be created).
  void write_memo() {
    if (rec_) write_memo_file(memo_path_, db_);
  }
  const std::string& memo_path() const { return memo_path_; }
  /// Prints only Wormhole's warnings (stderr), for a quiet run (nothing with Wormhole off).
  void print_warnings() {
    if (ff_) print_skip_warnings(*report());
  }
  /// Prints what Wormhole skipped and, when recording, what it memoized (nothing with Wormhole off).
  void print_summary() {
    if (!ff_) return;
    print_skip_summary(*report());
    if (!rec_) return;
    const MemoStats s = memo_stats();
    const uint64_t ended = s.periods - s.replayed - s.followed - s.converged;
    // Followers only where there were any: the line stays as it was for runs without.
    const std::string followed =
        s.followed + s.follows_cut == 0
            ? ""
            : fmt::format(", {} followed an isomorphic period simulated beside them{}", s.followed,
                          s.follows_cut ? fmt::format(" ({} more released before it converged)", s.follows_cut) : "");
    fmt::print("memo: {} unsteady periods: {} replayed ({} hits){}, {} simulated to convergence ({} new patterns, {} "
               "repeats), {} ended before converging (membership changed or a flow ended); {} -> {}{}\n",
               s.periods, s.replayed, s.hits, followed, s.converged, s.inserted, s.repeated, ended,
               collective_ ? fmt::format("{} patterns and {} collective patterns", patterns(), db_.collective_patterns())
                           : std::to_string(patterns()) + " patterns" + shards(),
               memo_path_,
               warm_path_.empty() ? ""
               : warm_collective_ ? fmt::format(" (warm start: {} patterns and {} collective patterns from {})",
                                                warm_ - warm_collective_, warm_collective_, warm_path_)
                                  : fmt::format(" (warm start: {} patterns from {})", warm_, warm_path_));
  }

 private:
  /// Loads a warm-start file (read_warm_start_file) into the run's database; `warn`: note an empty one.
  void warm_start(const std::string& path, uint64_t ns, const std::string& text, int cc_mode, bool warn, uint32_t rank,
                  uint32_t ranks) {
    db_ = read_warm_start_file(path, ns, text, cc_state_kind(cc_mode), "CC_MODE " + std::to_string(cc_mode), &warm_,
                               rank, ranks);
    const auto c = db_.collectives.find(ns);
    warm_collective_ = c == db_.collectives.end() ? 0 : c->second.size();
    if (warm_ == 0 && warn)
      std::fprintf(stderr, "wormhole: note: %s holds no pattern for this run's settings; nothing to replay from it\n",
                   path.c_str());
    warm_path_ = path;
  }
  /// The memo namespace's text: what changes convergence — the network settings but paths,
  /// monitors, stop time and the seed (a replay stands in for another random realisation anyway),
  /// Wormhole's detection settings (θ, l, interval, rate quantum; with the line-rate window on, it and
  /// the error bound it is derived from), the fabric (a hash of every
  /// node's role and every port's ends, rate and delay), then the distinct link (rate, delay) classes.
  static std::string describe(const Network& net, const SimConfig& cfg) {
    std::string text;
    for (const auto& [k, v] : effective_settings(cfg)) {
      // Wormhole's detection settings stay in: a period's recorded end is "steady under this θ, l,
      // line-rate window and interval", and the rate labels are multiples of the quantum.
      // With the line-rate window, the error bound sets windows too; without it neither is named, so
      // memo files written before the setting existed still match.
      const bool detection = k == "WORMHOLE_THETA" || k == "WORMHOLE_WINDOW" || k == "WORMHOLE_SAMPLE_INTERVAL_US" ||
                             k == "WORMHOLE_MEMO_RATE_QUANTUM_GBPS" ||
                             (cfg.wormhole.line_rate_window && (k == "WORMHOLE_LINE_RATE_WINDOW" || k == "WORMHOLE_ERROR_BOUND"));
      if (k.find("FILE") != std::string::npos || k.find("MON") != std::string::npos ||
          (k.rfind("WORMHOLE", 0) == 0 && !detection) || k == "SIMULATOR_STOP_TIME" || k == "ENABLE_TRACE" ||
          k == "EVENT_ORDER" || k == "SEED")
        continue;
      text += k + "=" + v + "; ";
    }
    // The fabric itself: a pattern's outcome depends on what its flows' ACKs and neighbours meet,
    // so a file recorded on another topology (same link classes, other wiring) must not replay.
    std::string wiring;
    size_t switches = 0;
    for (const Node& n : net.nodes()) switches += n.is_switch, wiring += n.is_switch ? 'S' : 'H';
    for (const PortLink& p : net.links())
      wiring += fmt::format(" {}-{}:{}/{}", p.node, net.links()[p.peer].node, p.rate_bps, p.delay);
    text += fmt::format("FABRIC={:016x} ({} nodes, {} switches, {} ports); ", memo_namespace(wiring), net.nodes().size(),
                        switches, net.links().size());
    std::set<std::pair<uint64_t, Time>> links;
    for (const PortLink& p : net.links()) links.insert({p.rate_bps, p.delay});
    text += "links:";
    for (const auto& [r, d] : links) text += fmt::format(" {}bps/{}ps", r, d);
    return text;
  }

  /// The memoizer's figures, a distributed run's shard figures summed (set_memo_totals).
  MemoStats memo_stats() const {
    MemoStats s = rec_->stats();
    if (memo_totals_) s.inserted = memo_totals_->inserted, s.repeated = memo_totals_->repeated;
    return s;
  }
  uint64_t patterns() const {
    if (!memo_totals_) return db_.store.size();
    uint64_t n = 0;
    for (uint64_t k : memo_totals_->per_rank) n += k;
    return n;
  }
  /// " (held over 3 ranks: 5, 2, 4)" for a distributed run's summary.
  std::string shards() const {
    if (!memo_totals_ || memo_totals_->per_rank.size() < 2) return "";
    return fmt::format(" (held over {} ranks: {})", memo_totals_->per_rank.size(), fmt::join(memo_totals_->per_rank, ", "));
  }
  struct MemoTotals {
    uint64_t inserted = 0, repeated = 0;
    std::vector<uint64_t> per_rank;  // patterns each rank's shard held at the end
  };
  std::optional<MemoTotals> memo_totals_;

  std::unique_ptr<FastForward> ff_;
  bool verification_done_ = false;
  SkipReport report_;
  std::optional<std::array<uint64_t, 4>> totals_;
  MemoDb db_;
  std::string memo_path_, warm_path_;
  size_t warm_ = 0;             // patterns of this run's namespace loaded: unsteady periods' and collective ones
  size_t warm_collective_ = 0;  // of which collective patterns
  uint64_t ns_ = 0;  // this run's memo namespace
  std::unique_ptr<Memoizer> rec_;  // declared after ff_: destroyed (detached) first
  std::unique_ptr<CollectiveMemo> collective_;
};

}  // namespace wh
