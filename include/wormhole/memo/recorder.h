// Records the unsteady periods of a run into a memo store (wormhole-paper.md §6, "on a miss:
// simulate, and insert when the partition turns steady; abort if membership changes first").
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "wormhole/ffwd/fast_forward.h"
#include "wormhole/memo/memo_file.h"

namespace wh {

/// What the recorder did in a run.
struct MemoRecordStats {
  uint64_t periods = 0;     ///< unsteady periods started
  uint64_t converged = 0;   ///< of which converged with their membership unchanged
  uint64_t inserted = 0;    ///< new patterns
  uint64_t repeated = 0;    ///< converged periods whose pattern was already in the store
  uint64_t seen_at_start = 0;  ///< periods whose starting pattern was already in the store (a replay could have served them)
};

/// Observes `ff`'s partitions (attaches itself with set_period_observer; detaches on destruction)
/// and fills `db.store` under namespace `ns`: at a period's start it takes the FCG of the
/// partition (rates quantised by `rate_quantum_bps`, bottleneck = the slowest egress port on a
/// flow's data path) and each flow's acknowledged bytes; when the partition converges it inserts
/// (FCG_start → duration, bytes each flow sent, rates at convergence). Replaying hits is not done
/// here (see memo/README.md).
class MemoRecorder final : public PeriodObserver {
 public:
  MemoRecorder(Network& net, FastForward& ff, MemoDb& db, uint64_t ns, uint64_t rate_quantum_bps);
  ~MemoRecorder() override;
  MemoRecorder(const MemoRecorder&) = delete;
  MemoRecorder& operator=(const MemoRecorder&) = delete;

  void period_started(uint32_t pid, Time now) override;
  void period_converged(uint32_t pid, Time now) override;
  const MemoRecordStats& stats() const { return stats_; }

 private:
  struct Record {
    Fcg key;
    std::vector<uint32_t> flows;    // vertex i = flows[i]
    std::vector<uint64_t> acked;    // snd_una at the start
    Time start = 0;
  };
  Fcg fcg_of(const std::vector<uint32_t>& flows) const;

  Network& net_;
  FastForward& ff_;
  MemoDb& db_;
  uint64_t ns_, quantum_;
  std::unordered_map<uint32_t, Record> open_;  // partition -> its period in progress
  MemoRecordStats stats_;
};

/// The namespace of a run: a 64-bit FNV-1a hash of `description`, the text of everything that
/// changes convergence (CC and its parameters, link rates and delays, MTU, buffer, ECN, PFC).
uint64_t memo_namespace(const std::string& description);

}  // namespace wh
