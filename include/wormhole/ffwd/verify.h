// Verify mode: sampled fast-forwards and replays are simulated packet by packet instead, and what
// they would have credited is compared with what the flows really did.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "wormhole/core/time.h"

namespace wh {

class TickExchange;

/// One verified decision: a fast-forward or a replay the controller would have taken at `start`,
/// simulated at packet level instead. Per flow (in the partition's flow order) it predicted
/// `rate` × span bytes of progress and the simulation made `simulated`. The span is the planned one,
/// or, when the partition's membership changed before the tick that closes it (`cut`: a flow came or
/// went, possibly just after the planned end), up to the last controller tick before the change.
/// Counters are read at ticks, where every rank of a distributed run has run every event before them;
/// at the planned end, which falls between two ticks, the progress is interpolated linearly between
/// them. Compared up to the tick after the
/// change or the planned end instead, a flow that ended in between made no progress after its end
/// while its prediction ran on (on `moe-32g`: 3.4 % for flows within 0.1 %), and a replay's flows,
/// still speeding up at the end of their recorded period, outran its average rate (1.7 %).
struct VerifySample {
  /// kContinuation: the fast-forward that follows a replay at the goodputs recorded with its
  /// pattern (not measured in this run).
  enum class Kind : uint8_t { kFastForward = 0, kReplay = 1, kContinuation = 2 };
  static constexpr int kKinds = 3;
  Kind kind = Kind::kFastForward;
  uint32_t partition = 0;
  Time start = 0;                  ///< ps
  Time planned = 0;                ///< ps the skip or replay would have lasted
  Time end = -1;                   ///< ps when the span ended (-1: still running)
  bool cut = false;                ///< a flow came or went before the tick at or after the planned end
  Time tick = 0;                   ///< ps: the last tick it ran at (its span's end if it is cut next)
  Time prev_tick = 0;              ///< ps: the tick before that (the start until there is one)
  std::vector<uint32_t> flows;
  std::vector<double> rate;        ///< predicted progress, bytes/ps (goodput, recorded for a continuation; replay: recorded bytes / duration)
  /// Progress counter at `start` on the flow's sender's rank (0 elsewhere): snd_una for a
  /// fast-forward (acknowledged payload, what it credits), snd_nxt for a replay (sent payload).
  std::vector<uint64_t> base;
  std::vector<uint64_t> at_tick;   ///< the progress counters at `tick` (as `base`)
  std::vector<uint64_t> at_prev;   ///< and at `prev_tick`
  std::vector<double> predicted;   ///< bytes over the span: rate × (end − start)
  std::vector<double> simulated;   ///< bytes the packet-level simulation made over the span
  /// Σ max(0, |predicted − simulated| − one packet's payload) / Σ simulated (0 when nothing moved):
  /// a flow's progress moves in whole packets, so a difference within one is no error (a span cut
  /// after a few µs holds only a few packets).
  double error = 0;
  /// The same sum with each flow's sign kept (the bias: > 0 the acceleration runs ahead).
  double signed_error = 0;
  bool failed = false;             ///< error above the bound: not accelerated again (see FastForward)
  /// Whether anything was compared: a sample cut before its first tick has an empty span (its
  /// errors are 0 and left out of the means).
  bool compared() const { return end > start; }
};

/// Chooses which decisions are verified and keeps their samples.
///
/// `setting` (WORMHOLE_VERIFY): 0 none; a value in (0, 1] the fraction of each kind's decisions,
/// spread evenly (the n-th decision, from 0, is verified iff ⌊(n+1)·f⌋ > ⌊n·f⌋, so 1 verifies all);
/// a whole number above 1 verifies the first that many of each kind. Decisions are counted in the
/// order the controller takes them, which every rank of a distributed run shares, so the choice
/// does not depend on the rank or thread count. `bound` (WORMHOLE_ERROR_BOUND) is the largest
/// `error` a sample may have without failing; `packet` (bytes, the payload of a full packet) the
/// resolution of a flow's progress.
class Verifier {
 public:
  Verifier(double setting, double bound, double packet = 0) : setting_(setting), bound_(bound), packet_(packet) {}
  bool on() const { return setting_ > 0; }
  /// Whether the next decision of `kind` is verified (counts it).
  bool choose(VerifySample::Kind kind);
  /// Starts a sample at tick `now` (ps); returns its index. `base` as VerifySample::base.
  size_t begin(VerifySample::Kind kind, uint32_t partition, Time now, Time planned, std::vector<uint32_t> flows,
               std::vector<double> rate, std::vector<uint64_t> base);
  /// Sample `i` is still running at tick `now` (ps), where each flow's progress counter is `counter`
  /// (the sender's rank's; 0 for flows of other ranks).
  void tick(size_t i, Time now, std::vector<uint64_t> counter);
  /// Ends sample `i`: at its planned end (`cut` false; tick() has been called at the first tick at or
  /// after it), or at its last tick (`cut` true: its flows changed since). Its errors are known after
  /// the next close().
  void end(size_t i, bool cut);
  /// Completes the samples ended since the last call (their simulated bytes summed over the ranks
  /// with `x`, nullptr in one process: a collective, so every rank calls it at the same tick) and
  /// returns their indices; a sample whose error exceeds the bound is marked failed.
  std::vector<size_t> close(TickExchange* x);
  const std::vector<VerifySample>& samples() const { return samples_; }
  const VerifySample& sample(size_t i) const { return samples_[i]; }
  double bound() const { return bound_; }

 private:
  double setting_, bound_, packet_;
  uint64_t decisions_[VerifySample::kKinds] = {};
  std::vector<VerifySample> samples_;
  std::vector<size_t> ended_;       // ended since the last close()
};

}  // namespace wh
