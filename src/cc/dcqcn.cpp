// DCQCN (Mellanox flavour): the reference's cnp_received_mlx, UpdateAlphaMlx, CheckRateDecreaseMlx
// and RateIncEventTimerMlx, with DataRate arithmetic in integer bit/s (results truncated).
#include "wormhole/cc/dcqcn.h"

#include <algorithm>

namespace wh {

enum : int { kAlphaTimer = 0, kDecreaseTimer = 1, kIncreaseTimer = 2 };

void Dcqcn::on_start(uint32_t, Flow& f, CcHost&) {
  DcqcnState s;
  s.target_bps = f.max_rate_bps;
  f.cc = s;
}

void Dcqcn::on_ack(uint32_t id, Flow& f, const Packet& ack, CcHost& host) {
  if (!ack.cnp) return;
  auto& s = std::get<DcqcnState>(f.cc);
  s.alpha_cnp = true;
  s.decrease_cnp = true;
  if (s.first_cnp) {
    s.alpha = 1;
    s.alpha_cnp = false;
    host.set_timer(id, f, kAlphaTimer, host.now() + p_.alpha_interval);
    // +1 ns so that the decrease check runs after the α update of the same period.
    host.set_timer(id, f, kDecreaseTimer, host.now() + p_.decrease_interval + kNs);
    s.target_bps = f.rate_bps;  // rate on first CNP = 1.0 × current rate
    s.first_cnp = false;
  }
}

void Dcqcn::on_timer(uint32_t id, Flow& f, int slot, CcHost& host) {
  auto& s = std::get<DcqcnState>(f.cc);
  const Time now = host.now();
  if (slot == kAlphaTimer) {
    s.alpha = s.alpha_cnp ? (1 - p_.g) * s.alpha + p_.g : (1 - p_.g) * s.alpha;
    s.alpha_cnp = false;
    host.set_timer(id, f, kAlphaTimer, now + p_.alpha_interval);
  } else if (slot == kDecreaseTimer) {
    host.set_timer(id, f, kDecreaseTimer, now + p_.decrease_interval);
    if (s.decrease_cnp) {
      if (s.stage != 0 || p_.clamp_target_rate) s.target_bps = f.rate_bps;
      const uint64_t cut = static_cast<uint64_t>(static_cast<double>(f.rate_bps) * (1 - s.alpha / 2));
      host.set_rate(id, f, std::max(p_.min_rate_bps, cut), false);
      s.stage = 0;
      s.decrease_cnp = false;
      host.set_timer(id, f, kIncreaseTimer, now + p_.rp_timer);
    }
  } else if (slot == kIncreaseTimer) {
    host.set_timer(id, f, kIncreaseTimer, now + p_.rp_timer);
    if (s.stage == p_.fast_recovery_times) {
      s.target_bps = std::min(s.target_bps + p_.rate_ai_bps, f.max_rate_bps);
    } else if (s.stage > p_.fast_recovery_times) {
      s.target_bps = std::min(s.target_bps + p_.rate_hai_bps, f.max_rate_bps);
    }
    host.set_rate(id, f, f.rate_bps / 2 + s.target_bps / 2, false);
    ++s.stage;
  }
}

}  // namespace wh
