// Verify mode's bookkeeping (see verify.h): which decisions are verified, and their errors.
#include "wormhole/ffwd/verify.h"

#include <algorithm>
#include <cmath>

#include "wormhole/ffwd/fast_forward.h"

namespace wh {

bool Verifier::choose(VerifySample::Kind kind) {
  if (setting_ <= 0) return false;
  const uint64_t n = decisions_[static_cast<int>(kind)]++;
  if (setting_ > 1) return double(n) < setting_;
  // Decisions 0, ⌈1/f⌉, ...: the first is verified, so a run with few decisions still checks one.
  return std::ceil(double(n + 1) * setting_) > std::ceil(double(n) * setting_);
}

size_t Verifier::begin(VerifySample::Kind kind, uint32_t partition, Time now, Time planned,
                       std::vector<uint32_t> flows, std::vector<double> rate, std::vector<uint64_t> base) {
  VerifySample s;
  s.kind = kind;
  s.partition = partition;
  s.start = now;
  s.planned = planned;
  s.flows = std::move(flows);
  s.rate = std::move(rate);
  s.base = std::move(base);
  s.tick = s.prev_tick = now;
  s.at_tick = s.at_prev = s.base;
  samples_.push_back(std::move(s));
  return samples_.size() - 1;
}

void Verifier::tick(size_t i, Time now, std::vector<uint64_t> counter) {
  VerifySample& s = samples_[i];
  s.prev_tick = s.tick;
  s.at_prev = std::move(s.at_tick);
  s.tick = now;
  s.at_tick = std::move(counter);
}

void Verifier::end(size_t i, bool cut) {
  VerifySample& s = samples_[i];
  s.cut = cut;
  // At the planned end, the share of the last tick interval before it (1 when it falls on a tick).
  double w = 1;
  if (cut) {
    s.end = s.tick;
  } else {
    s.end = std::min(s.tick, s.start + s.planned);
    // Every verifying partition is ticked at every tick, so prev_tick < the planned end <= tick.
    if (s.tick > s.prev_tick) w = std::clamp(double(s.end - s.prev_tick) / double(s.tick - s.prev_tick), 0.0, 1.0);
  }
  const double span = double(s.end - s.start);
  s.predicted.resize(s.flows.size());
  s.simulated.resize(s.flows.size());
  for (size_t k = 0; k < s.flows.size(); ++k) {
    s.predicted[k] = s.rate[k] * span;
    // Only the sender's rank has a counter: the others add 0 when the ranks sum at close().
    const double at = double(s.at_tick[k]), before = cut ? at : double(s.at_prev[k]);
    s.simulated[k] = std::max(0.0, before + w * (at - before) - double(s.base[k]));
  }
  ended_.push_back(i);
}

std::vector<size_t> Verifier::close(TickExchange* x) {
  if (x) {
    std::vector<double> v;
    for (size_t i : ended_) v.insert(v.end(), samples_[i].simulated.begin(), samples_[i].simulated.end());
    if (!v.empty()) x->sum(v);
    size_t at = 0;
    for (size_t i : ended_)
      for (double& b : samples_[i].simulated) b = v[at++];
  }
  for (size_t i : ended_) {
    VerifySample& s = samples_[i];
    double sim = 0, abs_diff = 0, diff = 0;
    for (size_t k = 0; k < s.flows.size(); ++k) {
      sim += s.simulated[k];
      // Within one packet's payload is no error, for the bias as for the magnitude.
      const double d = s.predicted[k] - s.simulated[k];
      const double beyond = std::max(0.0, std::fabs(d) - packet_);
      abs_diff += beyond;
      diff += d < 0 ? -beyond : beyond;
    }
    // Nothing moved (paused, stalled) while more than a packet was predicted: entirely wrong.
    s.error = sim > 0 ? abs_diff / sim : abs_diff > 0 ? 1.0 : 0.0;
    s.signed_error = sim > 0 ? diff / sim : diff > 0 ? 1.0 : diff < 0 ? -1.0 : 0.0;
    s.failed = s.error > bound_;
  }
  std::vector<size_t> closed;
  closed.swap(ended_);
  return closed;
}

}  // namespace wh
