// The host NIC's decisions on the fabric's and the QPs' state: what it sends next (its ACKs first, then
// a QP by round robin with pacing and windows), the data packet, the receiver's go-back-N reply, the
// sender's reading of an ACK and its retransmission timeout. Sending and events are the Network's
// (docs/network-model.md §8–§9). The per-packet choices are defined in this header, to inline.
#pragma once
#include <algorithm>
#include <cstdint>
#include <unordered_set>
#include <vector>

#include "wormhole/core/time.h"
#include "wormhole/net/fabric.h"
#include "wormhole/net/flow_table.h"

namespace wh {

/// The NIC model of HPCC ns-3's RdmaHw and QbbNetDevice, acting on `fabric`'s host ports (a NIC's
/// QP list and round-robin position) and on the QP state in `flows`. Every function is a decision of
/// one NIC at one instant; none schedules an event or moves a packet.
class NicModel {
 public:
  NicModel(Fabric& fabric, FlowTable& flows) : fab_(fabric), flows_(flows) {}
  NicModel(const NicModel&) = delete;  // it refers to its fabric and flow table
  NicModel& operator=(const NicModel&) = delete;

  /// Whether NIC `port` sends an ACK/NACK of its queue next: they have strict priority unless the
  /// ACKs' PFC class (3, or 0 with ACK_HIGH_PRIO) is paused.
  bool ack_first(uint32_t port) const {
    const Port& p = fab_.ports[port];
    return !p.queue[0].empty() && !p.paused[fab_.params.ack_class];
  }
  /// The QP NIC `port` sends a data packet of now, or when it can next.
  struct Pick {
    uint32_t flow = UINT32_MAX;  ///< the chosen QP's flow id; UINT32_MAX: none is eligible now
    Time retry = kTimeMax;       ///< none eligible: the earliest next send time (ps) of a QP with bytes left
  };
  /// Round robin over the NIC's QPs after the last one served (rr_qp): the first whose class is not
  /// paused, with bytes left, not window-bound and due (next_avail <= now, ps). Finished QPs are
  /// compacted out of the list as the reference's GetNextQindex does, which shifts round-robin
  /// positions the same way. QPs held past their finish (hold_until_dropped) that leave the list are
  /// appended to `dropped`: their state can be released once the chosen QP's packet is built (the
  /// chosen QP may be one of them).
  Pick pick(uint32_t port, Time now, std::vector<uint32_t>& dropped);
  /// Builds the next data packet of flow `id` (its payload: PACKET_PAYLOAD_SIZE or the bytes left)
  /// at `now` and advances the QP (snd_nxt, pacing: next_avail at the CC rate under RATE_BOUND, else
  /// at line rate). Returns the packet's pool index; `retx_payload` is its payload in bytes if
  /// go-back-N sends it again, else 0.
  uint32_t build_data(uint32_t id, Time now, uint32_t& retx_payload);

  /// The receiver's reply to a data packet (the reference's ReceiverCheckSeq).
  enum class Reply : uint8_t { None, Ack, Nack };
  struct Received {
    Reply reply = Reply::None;
    bool duplicate = false;  ///< the packet was below rcv_nxt (acknowledged only if a timeout resent it)
  };
  /// Data packet `pk` of flow `f` reaches its receiver at `now` (ps). In order, rcv_nxt advances and an
  /// ACK is due once rcv_nxt reaches L2_ACK_INTERVAL bytes — the reference resets its milestone to the
  /// interval on every packet, so from then on every in-order packet is acknowledged — or at an
  /// L2_CHUNK_SIZE boundary. Ahead of rcv_nxt: a NACK at most every 500 µs for one rcv_nxt (rewinding
  /// to the chunk's start under L2_BACK_TO_ZERO). Below it: an ACK only if a retransmission timeout
  /// resent it.
  Received on_data(Flow& f, const Packet& pk, Time now) const;
  /// Turns data packet `pk` into its reply `r` (Ack or Nack) in place, acknowledging `rcv_nxt`
  /// (bytes): addresses and ports swapped, CE echoed as the CNP flag, send time and INT kept.
  void make_reply(Packet& pk, Reply r, uint64_t rcv_nxt) const;
  /// The sender reads ACK/NACK `pk` of flow `f` at `now` (ps): snd_una advances (to the chunk
  /// boundary under L2_BACK_TO_ZERO). Returns true when the flow is complete; otherwise a NACK
  /// rewinds snd_nxt to snd_una (go-back-N) and CNPs are counted, and the CC's reaction is the caller's.
  bool on_ack(Flow& f, const Packet& pk, Time now) const;

  /// The retransmission timer of flow `f` fired at `now` (ps; RTO_US): with no progress for a whole
  /// timeout and data outstanding, the sender goes back to snd_una (returns true; the packets are
  /// marked as resent by a timeout until snd_una moves). The progress clock restarts either way.
  bool on_rto(Flow& f, Time now) const {
    bool back = false;
    if (now - f.last_progress >= fab_.params.rto) {
      if (f.snd_nxt > f.snd_una) {
        f.snd_nxt = f.snd_una;
        f.rto_recovery = true;
        back = true;
      }
      f.last_progress = now;
    }
    return back;
  }

  /// Keeps finished flow `id`'s state until its NIC drops it from its QP list (acknowledged past
  /// snd_nxt, it still has bytes its NIC may send, as the reference's does).
  void hold_until_dropped(uint32_t id) { held_.insert(id); }
  /// The flows held so (LINK_DOWN clears every QP list), emptied.
  std::vector<uint32_t> take_held();

 private:
  Fabric& fab_;
  FlowTable& flows_;
  std::unordered_set<uint32_t> held_;  // finished flows with bytes left, until their NIC drops them
};

// The QP choice and the data packet run for every packet a NIC sends: defined here, to inline.

[[gnu::always_inline]] inline NicModel::Pick NicModel::pick(uint32_t port, Time now, std::vector<uint32_t>& dropped) {
  Port& p = fab_.ports[port];
  auto& qps = p.qps;
  const uint32_t n = static_cast<uint32_t>(qps.size());
  int64_t res = -1;
  uint32_t min_finished = UINT32_MAX;
  // idx = (rr_qp + i) % n for i = 1 .. n, without a division per step (its latency lay on the path to
  // the QP's state at every packet a NIC sends). rr_qp may be n or more: a stale pick past a compaction,
  // a replayed island's recorded position, a list LINK_DOWN emptied; then the one division below.
  uint32_t idx = p.rr_qp < n ? p.rr_qp : (n ? p.rr_qp % n : 0);
  for (uint32_t i = 1; i <= n; ++i) {
    if (++idx >= n) idx = 0;
    const bool finished = flows_.finished(qps[idx]);
    // A released QP had no bytes left (Network::release_done_flow): only compacted.
    if (finished && !flows_.live(qps[idx])) {
      min_finished = std::min(min_finished, idx);
      continue;
    }
    const Flow& f = flows_.state(qps[idx]);
    if (!p.paused[f.pg] && f.bytes_left() > 0 && !f.window_bound()) {
      if (f.next_avail > now) continue;
      res = idx;
      break;
    } else if (finished) {
      min_finished = std::min(min_finished, idx);
    }
  }
  uint32_t stale = UINT32_MAX;
  if (min_finished != UINT32_MAX) {
    if (!held_.empty())
      for (uint32_t i = min_finished; i < n; ++i)
        if (flows_.finished(qps[i]) && held_.erase(qps[i])) dropped.push_back(qps[i]);
    uint32_t nxt = min_finished;
    for (uint32_t i = min_finished + 1; i < n; ++i)
      if (!flows_.finished(qps[i])) {
        if (static_cast<int64_t>(i) == res) res = nxt;
        qps[nxt++] = qps[i];
      }
    // A chosen QP that was finished (bytes left: ACKs overtook a go-back) is not remapped: the
    // reference then reads its stale index, here read before the list shrinks (same element).
    if (res >= static_cast<int64_t>(nxt)) stale = qps[res];
    qps.resize(nxt);
  }
  Pick r;
  if (res >= 0) {
    p.rr_qp = static_cast<uint32_t>(res);
    r.flow = res < static_cast<int64_t>(qps.size()) ? qps[res] : stale;
    return r;
  }
  for (uint32_t id : qps)
    if (flows_.live(id) && flows_.state(id).bytes_left() > 0) r.retry = std::min(r.retry, flows_.state(id).next_avail);
  return r;
}

[[gnu::always_inline]] inline uint32_t NicModel::build_data(uint32_t id, Time now, uint32_t& retx_payload) {
  Flow& f = flows_.state(id);
  const uint32_t payload = static_cast<uint32_t>(std::min<uint64_t>(fab_.params.payload, f.bytes_left()));
  const uint32_t pkt = fab_.pool.alloc();
  Packet& pk = fab_.pool[pkt];
  pk.type = PktType::Data;
  pk.flow = id;
  pk.seq = f.snd_nxt;
  pk.payload = payload;
  pk.size = payload + kDataHeaderBytes + fab_.params.data_extra;
  pk.src = f.src;
  pk.dst = f.dst;
  pk.sport = f.sport;
  pk.dport = f.dport;
  pk.pg = f.pg;
  pk.ts = now;
  pk.retx = f.rto_recovery;
  pk.offset = f.clock_offset;
  retx_payload = f.snd_nxt < f.snd_high ? payload : 0;  // go-back-N sends it again
  f.snd_nxt += payload;
  f.snd_high = std::max(f.snd_high, f.snd_nxt);
  f.last_pkt_size = pk.size;
  f.last_ser = fab_.ser(pk.size, f.rate_bps);
  f.next_avail = now + (fab_.params.rate_bound ? f.last_ser : fab_.ser(pk.size, f.max_rate_bps));
  return pkt;
}

}  // namespace wh
