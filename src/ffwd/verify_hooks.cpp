// Fast-forward controller (see fast_forward.h): verify mode's hooks (the samples' bookkeeping: verify.cpp).
#include "wormhole/ffwd/fast_forward.h"

namespace wh {

void FastForward::finish_verification() {
  if (!verifier_.on()) return;
  for (uint32_t pid : parts_.live_ids())
    if (part(pid).verifying >= 0) end_verify(pid, true);
  close_verified();
}

bool FastForward::distrusted(uint32_t pid) {
  // Asked of every partition looked up or found steady at a tick: in an all-to-all, thousands of flows.
  if (distrusted_active_ == 0) return false;
  for (uint32_t id : parts_.flows(pid))
    if (track(id).distrusted) return true;
  return false;
}

void FastForward::begin_verify(uint32_t pid, VerifySample::Kind kind, Time dt, std::vector<double> rate) {
  const std::vector<uint32_t>& flows = parts_.flows(pid);
  std::vector<uint64_t> base(flows.size(), 0);
  for (size_t k = 0; k < flows.size(); ++k)
    if (owned(flows[k]))
      base[k] = kind == VerifySample::Kind::kReplay ? net_.flow(flows[k]).snd_nxt : net_.flow(flows[k]).snd_una;
  part(pid).verifying = static_cast<int64_t>(verifier_.begin(kind, pid, net_.now(), dt, flows, std::move(rate),
                                                              std::move(base)));
}

void FastForward::tick_verify(uint32_t pid) {
  const size_t i = static_cast<size_t>(part(pid).verifying);
  const VerifySample& v = verifier_.sample(i);
  std::vector<uint64_t> counter(v.flows.size(), 0);
  for (size_t k = 0; k < v.flows.size(); ++k)
    if (owned(v.flows[k]))
      counter[k] = v.kind == VerifySample::Kind::kReplay ? net_.flow(v.flows[k]).snd_nxt : net_.flow(v.flows[k]).snd_una;
  verifier_.tick(i, net_.now(), std::move(counter));
}

void FastForward::end_verify(uint32_t pid, bool cut) {
  Part& p = part(pid);
  const size_t i = static_cast<size_t>(p.verifying);
  p.verifying = -1;
  verifier_.end(i, cut);
}

void FastForward::close_verified() {
  for (size_t i : verifier_.close(exchange_)) {
    const VerifySample& v = verifier_.sample(i);
    if (!v.failed) continue;
    // A fast-forward's or a continuation's flows are not skipped again; a replay's or a
    // continuation's pattern (its recorded goodputs) is not replayed again.
    if (v.kind != VerifySample::Kind::kReplay)
      for (uint32_t id : v.flows)
        if (id < track_of_.size() && track_of_[id] != kNoTrack) {
          Track& t = track(id);
          if (!t.distrusted) t.distrusted = true, ++distrusted_active_;
        }
    if (v.kind != VerifySample::Kind::kFastForward && period_observer_)
      period_observer_->reject_pattern(verified_patterns_.at(i));
  }
}

}  // namespace wh
