// Memo recording for one `wormhole run` (settings.memo): the recorder, its namespace and the file.
#pragma once
#include <fmt/core.h>

#include <memory>
#include <set>
#include <string>

#include "wormhole/io/hpcc_config.h"
#include "wormhole/memo/recorder.h"

namespace wh {

class MemoSession {
 public:
  /// Starts recording if `ff` is set and cfg.wormhole.memo.
  MemoSession(Network& net, FastForward* ff, const SimConfig& cfg) {
    if (!ff || !cfg.wormhole.memo) return;
    const std::string text = describe(net, cfg);
    ns_ = memo_namespace(text);
    db_.namespaces[ns_] = text;
    rec_ = std::make_unique<MemoRecorder>(net, *ff, db_, ns_, cfg.wormhole.memo_rate_quantum_bps);
  }
  /// Writes the memo file `path` and prints a summary line (unless quiet). No-op when not recording.
  void finish(const std::string& path, bool quiet) {
    if (!rec_) return;
    write_memo_file(path, db_);
    if (quiet) return;
    const MemoRecordStats& s = rec_->stats();
    fmt::print("memo: {} unsteady periods, {} converged: {} new patterns, {} repeats; {} started on a known pattern; "
               "{} patterns -> {}\n",
               s.periods, s.converged, s.inserted, s.repeated, s.seen_at_start, db_.store.size(), path);
  }

 private:
  /// What changes convergence, as text: the network settings but paths, monitors, stop time and
  /// Wormhole's own, then the distinct link (rate, delay) classes.
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

  MemoDb db_;
  uint64_t ns_ = 0;
  std::unique_ptr<MemoRecorder> rec_;
};

}  // namespace wh
