// HPCC and HPCC-PINT: the reference's HandleAckHp/UpdateRateHp and HandleAckHpPint/UpdateRateHpPint.
#include "wormhole/cc/hpcc.h"

#include <algorithm>
#include <tuple>
#include <utility>

namespace wh {

namespace {
// DataRate arithmetic of the reference: integer bit/s, divisions truncated.
// NaN or an out-of-range quotient (c = 0 or a non-finite U) would be undefined behaviour in the
// cast; they clamp to 0 (then MIN_RATE) and to the largest rate.
uint64_t div_rate(uint64_t rate, double c) {
  const double q = static_cast<double>(rate) / c;
  if (!(q >= 0)) return 0;
  if (q >= 1.8e19) return UINT64_MAX / 2;
  return static_cast<uint64_t>(q);
}
uint64_t bound(uint64_t r, uint64_t lo, uint64_t hi) { return std::min(std::max(r, lo), hi); }

/// HPCC's rate step from committed rate `rc` and stage for the normalised utilisation c = U/η:
/// multiplicative decrease plus W_AI when c >= 1 or the stage reached maxStage, else additive
/// increase; bounded to [MIN_RATE, line rate]. Returns (rate, new stage).
std::pair<uint64_t, uint32_t> rate_step(const HpccParams& p, uint64_t rc, uint32_t stage, double c, uint64_t line) {
  if (c >= 1 || stage >= p.max_stage)
    return {bound(div_rate(rc, c) + p.rate_ai_bps, p.min_rate_bps, line), 0};
  return {bound(rc + p.rate_ai_bps, p.min_rate_bps, line), stage + 1};
}
}  // namespace

void Hpcc::on_start(uint32_t, Flow& f, CcHost&) {
  HpccState s;
  s.cur_rate_bps = f.max_rate_bps;
  for (auto& h : s.hops) h.rc_bps = f.max_rate_bps;
  f.cc = s;
}

void Hpcc::on_ack(uint32_t id, Flow& f, const Packet& ack, CcHost& host) {
  auto& s = std::get<HpccState>(f.cc);
  if (ack.seq > s.last_update_seq) update(id, f, ack, false, host);
  else if (p_.fast_react) update(id, f, ack, true, host);
}

void Hpcc::update(uint32_t id, Flow& f, const Packet& ack, bool fast_react, CcHost& host) {
  auto& s = std::get<HpccState>(f.cc);
  const IntHeader& ih = ack.ih;
  const uint64_t next_seq = f.snd_nxt;
  if (s.last_update_seq == 0) {  // first RTT: remember the INT, no rate change
    s.last_update_seq = next_seq;
    for (uint32_t i = 0; i < ih.nhop && i < IntHeader::kMaxHops; ++i) s.hop[i] = ih.hop[i];
    return;
  }
  if (ih.nhop <= IntHeader::kMaxHops) {
    const uint64_t T = static_cast<uint64_t>(f.base_rtt / kNs);  // ns
    double U = 0;
    uint64_t dt = 0;
    bool updated[IntHeader::kMaxHops] = {}, updated_any = false;
    for (uint32_t i = 0; i < ih.nhop; ++i) {
      if (p_.sample_feedback && fast_react && ih.hop[i].qlen == 0) continue;
      uint64_t tau = ih.hop[i].ns_since(s.hop[i]);
      // Two records of one hop at the same ns give 0/0 in the reference (a NaN rate); skip the hop.
      if (tau == 0) continue;
      updated[i] = updated_any = true;
      const double tx_rate = double(ih.hop[i].bytes_since(s.hop[i], p_.int_multi)) * 8 / (double(tau) * 1e-9);
      const double B = double(ih.hop[i].rate_bps);
      const double qlen = double(std::min(ih.hop[i].qlen_bytes(p_.int_multi), s.hop[i].qlen_bytes(p_.int_multi)));
      const double u = tx_rate / B + qlen * double(f.max_rate_bps) / B / double(f.win);
      if (!p_.multi_rate) {
        if (u > U) U = u, dt = tau;
      } else {
        if (tau > T) tau = T;
        s.hops[i].u = (s.hops[i].u * double(T - tau) + u * double(tau)) / double(T);
      }
      s.hop[i] = ih.hop[i];
    }
    uint64_t new_rate = 0;
    uint32_t new_stage = 0;
    uint64_t hop_rate[IntHeader::kMaxHops] = {};
    uint32_t hop_stage[IntHeader::kMaxHops] = {};
    if (!p_.multi_rate) {
      if (updated_any) {
        if (dt > T) dt = T;
        s.u = (s.u * double(T - dt) + U * double(dt)) / double(T);
        std::tie(new_rate, new_stage) = rate_step(p_, s.cur_rate_bps, s.inc_stage, s.u / p_.eta, f.max_rate_bps);
      }
    } else {
      new_rate = f.max_rate_bps;
      for (uint32_t i = 0; i < ih.nhop; ++i) {
        if (updated[i]) {
          std::tie(hop_rate[i], hop_stage[i]) =
              rate_step(p_, s.hops[i].rc_bps, s.hops[i].inc_stage, s.hops[i].u / p_.eta, f.max_rate_bps);
          new_rate = std::min(new_rate, hop_rate[i]);
        } else {
          new_rate = std::min(new_rate, s.hops[i].rc_bps);
        }
      }
    }
    if (updated_any) host.set_rate(id, f, new_rate, true);
    if (!fast_react) {
      if (updated_any) {
        s.cur_rate_bps = new_rate;
        s.inc_stage = new_stage;
      }
      if (p_.multi_rate)
        for (uint32_t i = 0; i < ih.nhop; ++i)
          if (updated[i]) s.hops[i].rc_bps = hop_rate[i], s.hops[i].inc_stage = hop_stage[i];
    }
  }
  if (!fast_react && next_seq > s.last_update_seq) s.last_update_seq = next_seq;
}

void HpccPint::on_start(uint32_t id, Flow& f, CcHost&) {
  HpccPintState s;
  s.cur_rate_bps = f.max_rate_bps;
  s.rng = Rng(p_.seed ^ 0x9e3779b97f4a7c15ull, id);
  f.cc = s;
}

void HpccPint::on_ack(uint32_t id, Flow& f, const Packet& ack, CcHost& host) {
  auto& s = std::get<HpccPintState>(f.cc);
  // Sample ACKs with PINT_PROB; the threshold truncated to an integer as the reference's SetPintSmplThresh.
  if (s.rng.next() % 65536 >= static_cast<uint32_t>(65536 * p_.pint_prob)) return;
  const bool fast_react = ack.seq <= s.last_update_seq;
  const uint64_t next_seq = f.snd_nxt;
  if (s.last_update_seq == 0) {
    s.last_update_seq = next_seq;
    return;
  }
  const auto [new_rate, new_stage] =
      rate_step(p_, s.cur_rate_bps, s.inc_stage, codec_.decode(ack.ih.pint_power) / p_.eta, f.max_rate_bps);
  host.set_rate(id, f, new_rate, true);
  if (!fast_react) {
    s.cur_rate_bps = new_rate;
    s.inc_stage = new_stage;
    if (next_seq > s.last_update_seq) s.last_update_seq = next_seq;
  }
}

}  // namespace wh
