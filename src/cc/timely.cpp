// TIMELY and DCTCP: the reference's UpdateRateTimely and HandleAckDctcp.
#include "wormhole/cc/timely.h"

#include <algorithm>

namespace wh {

void Timely::on_start(uint32_t, Flow& f, CcHost&) {
  TimelyState s;
  s.cur_rate_bps = f.max_rate_bps;
  f.cc = s;
}

void Timely::on_ack(uint32_t id, Flow& f, const Packet& ack, CcHost& host) {
  auto& s = std::get<TimelyState>(f.cc);
  if (ack.seq <= s.last_update_seq) return;  // TIMELY has no fast react
  const uint64_t next_seq = f.snd_nxt;
  const uint64_t rtt = to_ns(host.now()) - to_ns(ack.ts);
  if (s.last_update_seq != 0) {
    const double new_diff = double(int64_t(rtt) - int64_t(s.last_rtt_ns));
    const double rtt_diff = (1 - p_.alpha) * s.rtt_diff + p_.alpha * new_diff;
    const double gradient = rtt_diff / double(p_.min_rtt_ns);
    bool inc = false;
    double c = 0;
    if (rtt < p_.t_low_ns) {
      inc = true;
    } else if (rtt > p_.t_high_ns) {
      c = 1 - p_.beta * (1 - double(p_.t_high_ns) / double(rtt));
    } else if (gradient <= 0) {
      inc = true;
    } else {
      c = std::max(0.0, 1 - p_.beta * gradient);
    }
    uint64_t rate;
    if (inc) {
      rate = std::min(s.cur_rate_bps + (s.inc_stage < 5 ? p_.rate_ai_bps : p_.rate_hai_bps), f.max_rate_bps);
      ++s.inc_stage;
    } else {
      rate = std::max(p_.min_rate_bps, static_cast<uint64_t>(double(s.cur_rate_bps) * c));
      s.inc_stage = 0;
    }
    host.set_rate(id, f, rate, false);
    s.cur_rate_bps = rate;
    s.rtt_diff = rtt_diff;
  }
  if (next_seq > s.last_update_seq) {
    s.last_update_seq = next_seq;
    s.last_rtt_ns = rtt;
  }
}

void Dctcp::on_start(uint32_t, Flow& f, CcHost&) { f.cc = DctcpState{}; }

void Dctcp::on_ack(uint32_t id, Flow& f, const Packet& ack, CcHost& host) {
  auto& s = std::get<DctcpState>(f.cc);
  bool new_batch = false;
  s.ecn_count += ack.cnp ? 1 : 0;
  if (ack.seq > s.last_update_seq) {  // a window of data acknowledged: α update
    new_batch = true;
    if (s.last_update_seq == 0) {
      s.last_update_seq = f.snd_nxt;
      s.batch_size = static_cast<uint32_t>(f.snd_nxt / p_.mtu + 1);
    } else {
      const double frac = std::min(1.0, double(s.ecn_count) / double(s.batch_size));
      s.alpha = (1 - p_.g) * s.alpha + p_.g * frac;
      s.last_update_seq = f.snd_nxt;
      s.ecn_count = 0;
      s.batch_size = static_cast<uint32_t>((f.snd_nxt - ack.seq) / p_.mtu + 1);
    }
  }
  if (s.cwr && ack.seq > s.high_seq) s.cwr = false;
  uint64_t rate = f.rate_bps;
  if (ack.cnp && !s.cwr) {
    rate = std::max(p_.min_rate_bps, static_cast<uint64_t>(double(rate) * (1 - s.alpha / 2)));
    s.cwr = true;
    s.high_seq = f.snd_nxt;
  }
  if (!s.cwr && new_batch) rate = std::min(f.max_rate_bps, rate + p_.rate_ai_bps);
  if (rate != f.rate_bps) host.set_rate(id, f, rate, false);
}

}  // namespace wh
