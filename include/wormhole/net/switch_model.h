// The shared-buffer switch's decisions on the fabric's state: ingress admission and PFC (the MMU),
// which class an egress port serves next, ECN marking at dequeue, and the telemetry stamped into data
// packets (HPCC INT, PINT). Sending frames and packets is the Network's (docs/network-model.md §10–§11).
// The per-packet decisions are defined here, in the header: they run on every hop and must inline
// (PINT's stamp, rarer and longer, is in switch_model.cpp).
#pragma once
#include <algorithm>
#include <cstdint>

#include "wormhole/core/time.h"
#include "wormhole/net/fabric.h"

namespace wh {

/// The switch model of HPCC ns-3's SwitchNode and SwitchMmu, acting on `fabric`'s switch nodes and
/// ports (the shared buffer of a Node, the per-ingress counters and egress queues of a Port). Every
/// function is a decision of one switch at one instant; none schedules an event or moves a packet.
class SwitchModel {
 public:
  explicit SwitchModel(Fabric& fabric) : fab_(fabric) {}
  SwitchModel(const SwitchModel&) = delete;  // it refers to its fabric
  SwitchModel& operator=(const SwitchModel&) = delete;

  /// What ingress admission decided for a packet.
  enum class Admit : uint8_t {
    Drop,           ///< headroom and the shared pool are both exhausted: drop it
    Queue,          ///< counted against the ingress port: queue it
    QueueAndPause,  ///< counted, and the class crossed its PFC threshold: queue it and send a PAUSE upstream
  };
  /// Counts `size` bytes (a packet of class `cls` ≠ 0) arriving through switch port `in_port` into the
  /// MMU, as SwitchMmu::CheckIngressAdmission and UpdateIngressAdmission: the 4,096-B reserve first,
  /// then the shared pool up to the PFC threshold, then the port's headroom. A PAUSE is due when the
  /// class uses headroom or its shared bytes reach the threshold and none was sent (`pause_sent` is set).
  Admit admit(uint32_t in_port, uint32_t cls, uint64_t size) {
    Port& in = fab_.ports[in_port];
    // Drop only when both the headroom and the shared pool are exhausted.
    const uint64_t thr = pfc_threshold(in_port);
    if (size + in.hdrm_bytes[cls] > in.headroom && size + shared_used(in, cls) > thr) return Admit::Drop;
    const uint64_t nb = in.ingress_bytes[cls] + size;
    if (nb <= kReserveBytes) {
      in.ingress_bytes[cls] += size;
    } else if (nb - kReserveBytes > thr) {
      in.hdrm_bytes[cls] += size;
    } else {
      in.ingress_bytes[cls] += size;
      Node& nd = fab_.nodes[in.node];
      nd.shared_used += std::min(size, nb - kReserveBytes);
      nd.shared_peak = std::max(nd.shared_peak, nd.shared_used);
    }
    if (!in.pause_sent[cls] && (in.hdrm_bytes[cls] > 0 || shared_used(in, cls) >= pfc_threshold(in_port))) {
      in.pause_sent[cls] = true;
      return Admit::QueueAndPause;
    }
    return Admit::Queue;
  }
  /// Returns a departing (or dropped) packet's `size` bytes of class `cls` ≠ 0 to the counters of the
  /// port it arrived through: headroom first, then the ingress counter and its shared part. True when a
  /// RESUME is due: a PAUSE was sent, the headroom is empty and the shared bytes fell to 0 or to
  /// 3,072 B below the threshold (`pause_sent` is cleared).
  bool release(uint32_t in_port, uint32_t cls, uint64_t size) {
    Port& in = fab_.ports[in_port];
    Node& nd = fab_.nodes[in.node];
    // Headroom first, then the ingress counter (and the shared part above the reserve).
    const uint64_t from_hdrm = std::min(in.hdrm_bytes[cls], size);
    const uint64_t from_shared = std::min(size - from_hdrm, shared_used(in, cls));
    in.hdrm_bytes[cls] -= from_hdrm;
    in.ingress_bytes[cls] -= size - from_hdrm;
    nd.shared_used -= from_shared;
    if (in.pause_sent[cls] && in.hdrm_bytes[cls] == 0) {
      const uint64_t su = shared_used(in, cls);
      if (su == 0 || su + kResumeOffset <= pfc_threshold(in_port)) {
        in.pause_sent[cls] = false;
        return true;
      }
    }
    return false;
  }
  /// PFC threshold of switch ingress port `p` now (docs/network-model.md §11.1), bytes: the switch's
  /// free shared buffer (in the reference's unsigned 32-bit arithmetic) shifted right by the port's
  /// pfc_shift (α = 1/8 at the NIC rate, doubled per doubling of the port's rate).
  uint64_t pfc_threshold(uint32_t p) const {
    const Port& pt = fab_.ports[p];
    return pfc_threshold_at(fab_.nodes[pt.node], pt, fab_.nodes[pt.node].shared_used);
  }
  /// The PFC threshold of ingress port `pt` of switch `nd` were `shared_used` bytes of its shared
  /// buffer in use (bytes).
  static uint64_t pfc_threshold_at(const Node& nd, const Port& pt, uint64_t shared_used) {
    // The reference computes this in unsigned 32-bit arithmetic: a buffer smaller than the sum of
    // headrooms and reserves wraps around and effectively disables PFC (§11.1).
    const uint32_t free = static_cast<uint32_t>(nd.buffer_bytes - nd.total_hdrm - nd.total_rsrv - shared_used);
    return free >> pt.pfc_shift;
  }

  /// The class switch port `port` sends from next: class 0 (PFC frames) first, then round robin over
  /// classes after the last one served, skipping paused and empty ones (rr_last is updated); -1 when
  /// nothing can be sent.
  int next_class(uint32_t port) {
    Port& p = fab_.ports[port];
    if (!p.queue[0].empty()) return 0;
    // Round robin over classes starting after the last one served, skipping paused or empty ones.
    for (uint32_t i = 1; i <= kClasses; ++i) {
      const uint32_t q = (i + p.rr_last) % kClasses;
      if (!p.paused[q] && !p.queue[q].empty()) {
        p.rr_last = static_cast<uint8_t>(q);
        return static_cast<int>(q);
      }
    }
    return -1;
  }
  /// Whether the packet leaving class `cls` ≠ 0 of `port` now is ECN-marked (ENABLE_QCN): RED between
  /// the port's K_min and K_max on the bytes left in the class, with the port's random stream
  /// (ecn_mark_probability, docs/network-model.md §11.3).
  bool ecn_mark(uint32_t port, uint32_t cls) {
    if (!fab_.params.enable_qcn) return false;
    Port& p = fab_.ports[port];
    const double prob = ecn_mark_probability(p.queue_bytes[cls], p.kmin, p.kmax, p.pmax);
    return prob >= 1.0 || (prob > 0 && p.rng.uniform() < prob);
  }
  /// Stamps data packet `pk`, leaving `port` at `now`, with the port's telemetry: an HPCC INT hop
  /// (time in ns, bytes sent, queue bytes, rate) or the PINT utilisation power; nothing for other CCs.
  void stamp_telemetry(uint32_t port, Packet& pk, Time now) {
    if (fab_.params.int_mode == IntMode::Hpcc) {
      const Port& p = fab_.ports[port];
      pk.ih.push(to_ns(now), p.tx_bytes, p.bytes_total, p.rate_bps, fab_.params.int_multi);
    } else if (fab_.params.int_mode == IntMode::Pint) {
      pint_stamp(port, pk, now);
    }
  }

 private:
  /// Bytes of class `c` that arrived through `in` above its reserve: its share of the shared pool.
  static uint64_t shared_used(const Port& in, uint32_t c) {
    return in.ingress_bytes[c] > kReserveBytes ? in.ingress_bytes[c] - kReserveBytes : 0;
  }
  void pint_stamp(uint32_t port, Packet& pk, Time now);
  Fabric& fab_;
};

}  // namespace wh
