// Switch forwarding: ECMP, shared-buffer MMU with dynamic PFC thresholds, ECN marking at dequeue,
// and round-robin service of the priority classes (docs/network-model.md §10–§12).
#include <algorithm>
#include <cmath>

#include "wormhole/net/topology.h"
#include "wormhole/net/hash.h"
#include "wormhole/net/network.h"

namespace wh {

uint64_t Network::pfc_threshold(uint32_t p) const {
  const Port& pt = ports_[p];
  const Node& nd = nodes_[pt.node];
  // The reference computes this in unsigned 32-bit arithmetic: a buffer smaller than the sum of
  // headrooms and reserves wraps around and effectively disables PFC (§11.1).
  const uint32_t free = static_cast<uint32_t>(nd.buffer_bytes - nd.total_hdrm - nd.total_rsrv - nd.shared_used);
  return free >> pt.pfc_shift;
}

static inline uint64_t shared_used(const Port& in, uint32_t c) {
  return in.ingress_bytes[c] > kReserveBytes ? in.ingress_bytes[c] - kReserveBytes : 0;
}

uint32_t Network::egress(uint32_t node, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport) const {
  const auto hops = routing_.next_hops(node, dst);
  if (hops.empty()) return kNoRoute;
  if (hops.size() == 1) return hops[0];
  return hops[ecmp_hash(node_ip(src), node_ip(dst), sport, dport, node) % hops.size()];
}

void Network::switch_receive(uint32_t in_port, uint32_t pkt) {
  Packet& pk = pool_[pkt];
  const uint32_t node = ports_[in_port].node;
  const uint32_t out = egress(node, pk.src, pk.dst, pk.sport, pk.dport);
  if (out == kNoRoute) return drop(pkt, kDropLinkDown, in_port);  // no route left after LINK_DOWN
  if (!ports_[out].up) return drop(pkt, kDropLinkDown, out);
  if (kernel_.now() < ports_[out].frozen_until) {
    // The egress belongs to a partition being skipped: control traffic of other flows passes it
    // (docs/architecture.md), a data packet is an interrupt nobody announced: it waits for the pull-back.
    if (pk.type != PktType::Data) return bypass(out, pkt, ports_[out].queue_bytes[pk.pg]);
    return hold_for_pull_back(in_port, pkt, out);
  }
  const uint32_t c = pk.pg;
  Port& in = ports_[in_port];
  if (c != 0) {
    // Ingress admission: drop only when both the headroom and the shared pool are exhausted.
    const uint64_t s = pk.size;
    const uint64_t thr = pfc_threshold(in_port);
    if (s + in.hdrm_bytes[c] > in.headroom && s + shared_used(in, c) > thr) return drop(pkt, kDropBuffer, in_port);
    const uint64_t nb = in.ingress_bytes[c] + s;
    if (nb <= kReserveBytes) {
      in.ingress_bytes[c] += s;
    } else if (nb - kReserveBytes > thr) {
      in.hdrm_bytes[c] += s;
    } else {
      in.ingress_bytes[c] += s;
      nodes_[node].shared_used += std::min(s, nb - kReserveBytes);
    }
    if (!in.pause_sent[c] && (in.hdrm_bytes[c] > 0 || shared_used(in, c) >= pfc_threshold(in_port))) {
      send_pfc(in_port, c, true);
      in.pause_sent[c] = true;
    }
  }
  // Not through `pk`: send_pfc above allocates a packet, and the pool may have grown (moved) since.
  Packet& queued = pool_[pkt];
  queued.in_port = in_port;
  Port& o = ports_[out];
  o.enqueue(c, pkt, queued.size);
  if (o.bytes_total > o.peak_mark) o.peak_mark = o.bytes_total;
  if (tracer_) trace(TraceEvent::Enqu, out, pkt, o.queue_bytes[c]);
  if (o.bytes_total > max_queue_) {
    max_queue_ = o.bytes_total, max_queue_port_ = out, max_queue_event_ = kernel_.running();
    if (client_ && !node_rank_.empty()) peaks_.push_back({max_queue_event_, kernel_.events_executed(), max_queue_, out});
  }
  kick(out);
}

void Network::send_pfc(uint32_t in_port, uint32_t cls, bool pause) {
  const uint32_t pkt = pool_.alloc();
  Packet& pk = pool_[pkt];
  pk.type = PktType::Pfc;
  pk.size = kPfcBytes;
  pk.pg = 0;
  pk.pfc_class = static_cast<uint8_t>(cls);
  pk.pfc_pause = pause && cfg_.pause_time_us > 0 ? 1 : 0;
  Port& p = ports_[in_port];
  if (!p.up) return pool_.release(pkt);  // its link is down: the frame would never leave
  if (kernel_.now() < p.frozen_until) return bypass(in_port, pkt, p.queue_bytes[0]);
  p.enqueue(0, pkt, pk.size);
  if (tracer_) trace(TraceEvent::Enqu, in_port, pkt, p.queue_bytes[0]);
  kick(in_port);
}

void Network::kick(uint32_t port) {
  Port& p = ports_[port];
  if (p.busy_until < kernel_.now()) return switch_send(port);
  // Busy, or finishing exactly now: the end-of-transmission event decides, ordered as if it had
  // been scheduled when the transmission started, so arrivals caused earlier are queued first
  // (the reference's order: they were scheduled before its TransmitComplete).
  if (!p.txdone_pending) {
    p.txdone_pending = true;
    kernel_.schedule(p.busy_until, kTxDone, port, p.epoch, p.tx_cause);
  }
}

void Network::switch_send(uint32_t port) {
  Port& p = ports_[port];
  if (p.busy_until > kernel_.now() || !p.up || p.bytes_total == 0) return;
  uint32_t c = 0;
  if (p.queue[0].empty()) {
    // Round robin over classes starting after the last one served, skipping paused or empty ones.
    bool found = false;
    for (uint32_t i = 1; i <= kClasses; ++i) {
      const uint32_t q = (i + p.rr_last) % kClasses;
      if (!p.paused[q] && !p.queue[q].empty()) {
        c = q;
        found = true;
        break;
      }
    }
    if (!found) return;
    p.rr_last = static_cast<uint8_t>(c);
  }
  const uint32_t pkt = p.dequeue(c, pool_);
  const uint32_t size = pool_[pkt].size;
  if (c != 0) {
    // At dequeue, in the reference's order: buffer release (and RESUME), then ECN on what is left.
    release_ingress(pkt, c);
  }
  // Taken after release_ingress: a RESUME it sends allocates a packet, which may grow (move) the pool.
  Packet& pk = pool_[pkt];
  if (c != 0) {
    if (cfg_.enable_qcn) {
      const double prob = ecn_mark_probability(p.queue_bytes[c], p.kmin, p.kmax, p.pmax);
      if (prob >= 1.0 || (prob > 0 && p.rng.uniform() < prob)) {
        pk.ecn = 1;
        ++ecn_marks_;
        log_undo(kUndoEcn);
      }
    }
  }
  if (pk.type == PktType::Data) {
    if (int_mode_ == IntMode::Hpcc)
      pk.ih.push(to_ns(kernel_.now()), p.tx_bytes, p.bytes_total, p.rate_bps, cfg_.int_multi);
    else if (int_mode_ == IntMode::Pint)
      pint_stamp(port, pk);
  }
  p.tx_bytes += size;
  p.last_pkt_size = size;
  p.last_pkt_time = kernel_.now();
  transmit(port, pkt);
}

namespace {
// The reference's fixed-point log2 approximation for PINT (switch-node.cc, log2apprx with
// b = 20, m = 9, l = 20): keep the m most significant bits with randomised rounding.
constexpr int kPintB = 20, kPintM = 9, kPintL = 20;
int logres_shift(int b, int l) {
  static const int data[] = {0, 0, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4,
                             5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5};
  return l - data[b];
}
int log2apprx(int64_t x, Rng& rng) {
  const int64_t x0 = x;
  const int msb = static_cast<int>(std::log2(double(x))) + 1;
  if (msb > kPintM) {
    x = (x >> (msb - kPintM)) << (msb - kPintM);
    const int64_t mask = (int64_t(1) << (msb - kPintM)) - 1;
    if ((x0 & mask) > static_cast<int64_t>(rng.next() & static_cast<uint64_t>(mask))) x += int64_t(1) << (msb - kPintM);
  }
  return static_cast<int>(std::log2(double(x)) * (1 << logres_shift(kPintB, kPintL)));
}
}  // namespace

void Network::pint_stamp(uint32_t port, Packet& pk) {
  // The port's utilisation u = qlen·dt/(B·T²) + last_pkt/(B·T) + (T−dt)/T·u_prev in the log
  // domain, as the reference's "approximate calc"; the packet keeps the maximum over its hops.
  Port& p = ports_[port];
  const double T = static_cast<double>(routing_.max_rtt_ns());
  uint64_t dt = to_ns(kernel_.now()) - to_ns(p.last_pkt_time);
  if (dt > routing_.max_rtt_ns()) dt = routing_.max_rtt_ns();
  const double B = static_cast<double>(p.rate_bps / 8);
  const double fct = double(1 << logres_shift(kPintB, kPintL));
  const double log_T = std::log2(T) * fct, log_B = std::log2(B) * fct, log_1e9 = std::log2(1e9) * fct;
  double qterm = 0, byte_term = 0, u_term = 0;
  const uint64_t qlen = p.bytes_total;
  if ((qlen >> 8) > 0 && dt > 0)
    qterm = std::pow(2, (log2apprx(int64_t(dt), p.rng) + log2apprx(int64_t(qlen >> 8), p.rng) + log_1e9 - log_B - 2 * log_T) / fct) * 256;
  if (p.last_pkt_size > 0)
    byte_term = std::pow(2, (log2apprx(p.last_pkt_size, p.rng) + log_1e9 - log_B - log_T) / fct);
  if (routing_.max_rtt_ns() > dt && p.pint_u > 0)
    u_term = std::pow(2, (log2apprx(int64_t(routing_.max_rtt_ns() - dt), p.rng) +
                          log2apprx(std::llround(p.pint_u * 8192), p.rng) - log_T) / fct) / 8192;
  p.pint_u = qterm + byte_term + u_term;
  const uint16_t power = pint_.encode(p.pint_u, p.rng);
  if (power > pk.ih.pint_power) pk.ih.pint_power = power;
}

void Network::release_ingress(uint32_t pkt, uint32_t c) {
  const Packet& pk = pool_[pkt];
  Port& in = ports_[pk.in_port];
  Node& nd = nodes_[in.node];
  const uint64_t s = pk.size;
  // Headroom first, then the ingress counter (and the shared part above the reserve).
  const uint64_t from_hdrm = std::min(in.hdrm_bytes[c], s);
  const uint64_t from_shared = std::min(s - from_hdrm, shared_used(in, c));
  in.hdrm_bytes[c] -= from_hdrm;
  in.ingress_bytes[c] -= s - from_hdrm;
  nd.shared_used -= from_shared;
  if (in.pause_sent[c] && in.hdrm_bytes[c] == 0) {
    const uint64_t su = shared_used(in, c);
    if (su == 0 || su + kResumeOffset <= pfc_threshold(pk.in_port)) {
      send_pfc(pk.in_port, c, false);
      in.pause_sent[c] = false;
    }
  }
}

}  // namespace wh
