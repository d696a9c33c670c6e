// Host NIC and queue pairs: QP creation, ACK-first then round-robin scheduling with pacing and
// windows, the receiver's ACK/NACK generation and the sender's go-back-N (docs/network-model.md §8–§9).
#include <algorithm>

#include "wormhole/net/topology.h"
#include "wormhole/net/hash.h"
#include "wormhole/net/network.h"

namespace wh {

uint32_t Network::pick_nic(uint32_t src, uint32_t dst, uint32_t sip, uint32_t dip, uint16_t sport,
                           uint16_t dport) const {
  const std::span<const uint32_t> nics = routing_.host_nics(src, dst);
  if (nics.empty()) return UINT32_MAX;
  if (nics.size() == 1) return nics[0];
  return nics[qp_hash(sip, dip, sport, dport) % nics.size()];
}

void Network::assign_nics(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport, uint32_t& nic,
                          uint32_t& rx_nic) const {
  nic = pick_nic(src, dst, node_ip(src), node_ip(dst), sport, dport);
  // The receiver's NIC for ACKs: the hash of the reverse QP (GetNicIdxOfRxQp); computed here,
  // not per packet, since routes only change on LINK_DOWN.
  if (nodes_[dst].num_ports > 1) rx_nic = pick_nic(dst, src, node_ip(dst), node_ip(src), dport, sport);
}

const PathMetrics& Network::begin_flow(uint32_t id, Flow& f) {
  flows_.info(id).started = true;
  assign_nics(f.src, f.dst, f.sport, f.dport, f.nic, f.rx_nic);
  // Line rate and base RTT on every rank: a memo pattern's key is made of them (Memoizer::key_of).
  const PathMetrics& m = routing_.pair(f.src, f.dst);
  f.max_rate_bps = f.nic != UINT32_MAX ? ports_[f.nic].rate_bps : ports_[nodes_[f.src].first_port].rate_bps;
  f.base_rtt = static_cast<Time>(cfg_.global_t ? routing_.max_rtt_ns() : m.rtt_ns()) * kNs;
  return m;
}

void Network::start_flow(uint32_t id) {
  Flow& f = flows_.create_state(id);
  const PathMetrics& m = begin_flow(id, f);
  if (islands_) islands_->flow_started(id, f.nic, f.rx_nic != UINT32_MAX ? f.rx_nic : nodes_[f.dst].first_port);
  f.min_fct = lower_bound_fct(id);
  if (!owns_node(f.src)) {
    // Another rank's sender: this rank needs only the ACK NIC (if it has the receiver), and the
    // controller's partitions, which every rank keeps alike.
    if (skip_ && f.nic != UINT32_MAX) notify_flow_started(id);
    return;
  }
  f.rate_bps = f.max_rate_bps;
  f.var_win = cfg_.var_win;
  f.win = cfg_.has_win ? (cfg_.global_t ? routing_.max_bdp_bytes() : m.bdp_bytes()) : 0;
  f.last_progress = kernel_.now();
  f.update_window();
  // No path: reported as unfinished at the end. No CC or RTO timers either: they would keep the
  // event queue alive for ever, and an empty queue is how a workload's watchdog sees a hang.
  if (f.nic == UINT32_MAX) return;
  cc_->on_start(id, f, *this);
  if (rto_ > 0) set_timer(id, f, kRtoSlot, kernel_.now() + rto_);
  ports_[f.nic].qps.push_back(id);
  f.next_avail = kernel_.now();
  // Partitions this flow joins are pulled back from a skip before its first packet leaves.
  if (skip_) notify_flow_started(id);
  nic_send(f.nic);
}

void Network::set_rate(uint32_t id, Flow& f, uint64_t rate_bps, bool retime) {
  // The last packet's serialisation at the new rate; the one at the old rate is cached (HPCC
  // changes the rate on every ACK, and these divisions were most of its per-ACK cost).
  const Time last_ser = f.last_pkt_size ? ser(f.last_pkt_size, rate_bps) : 0;
  if (retime && f.nic != UINT32_MAX) {
    // The reference's ChangeRate: move next_avail by the last packet's tx-time difference and
    // pull the NIC's pending retry earlier if needed.
    f.next_avail += last_ser - f.last_ser;
    Port& nic = ports_[f.nic];
    if (nic.wake_at >= 0 && f.next_avail < nic.wake_at) {
      const Time at = std::max(f.next_avail, kernel_.now());
      nic.wake_at = at;
      nic.wake_cause = kernel_.cause();
      kernel_.schedule(at, kWake, f.nic, nic.epoch, nic.wake_cause);
    }
  }
  if (skip_) skip_->rate_changed(id, f.rate_bps, rate_bps);
  f.rate_bps = rate_bps;
  f.last_ser = last_ser;
  f.update_window();
}

void Network::nic_send(uint32_t port) {
  Port& p = ports_[port];
  // While its end-of-transmission event is pending (even at this very instant) the NIC waits for
  // it: the reference picks the next packet in TransmitComplete, after same-instant arrivals.
  if (!p.up || p.txdone_pending) return;
  const Time now = kernel_.now();
  // 1. ACK/NACK queue: strict priority unless its PFC class is paused.
  if (!p.queue[0].empty() && !p.paused[ack_class_]) {
    return transmit(port, p.dequeue(0, pool_));
  }
  // 2. Round robin over QPs after the last one served; finished QPs are compacted out as the
  //    reference's GetNextQindex does (this shifts round-robin positions the same way).
  auto& qps = p.qps;
  const uint32_t n = static_cast<uint32_t>(qps.size());
  int64_t res = -1;
  uint32_t min_finished = UINT32_MAX;
  for (uint32_t i = 1; i <= n; ++i) {
    const uint32_t idx = (i + p.rr_qp) % n;
    const bool finished = flows_.finished(qps[idx]);
    // A released QP had no bytes left (release_done_flow): only compacted.
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
  // Finished QPs that kept their state until they left the NIC (release_done_flow) give it back once
  // the packet below is built: the chosen QP may be one of them.
  std::vector<uint32_t> dropped;
  uint32_t stale = UINT32_MAX;
  if (min_finished != UINT32_MAX) {
    if (!unsent_finished_.empty())
      for (uint32_t i = min_finished; i < n; ++i)
        if (flows_.finished(qps[i]) && unsent_finished_.erase(qps[i])) dropped.push_back(qps[i]);
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
  auto release_dropped = [&] {
    for (uint32_t id : dropped) release_state(id);
  };
  if (res >= 0) {
    p.rr_qp = static_cast<uint32_t>(res);
    const uint32_t id = res < static_cast<int64_t>(qps.size()) ? qps[res] : stale;
    Flow& f = flows_.state(id);
    const uint32_t payload = static_cast<uint32_t>(std::min<uint64_t>(cfg_.packet_payload_size, f.bytes_left()));
    const uint32_t pkt = pool_.alloc();
    Packet& pk = pool_[pkt];
    pk.type = PktType::Data;
    pk.flow = id;
    pk.seq = f.snd_nxt;
    pk.payload = payload;
    pk.size = payload + kDataHeaderBytes + data_extra_;
    pk.src = f.src;
    pk.dst = f.dst;
    pk.sport = f.sport;
    pk.dport = f.dport;
    pk.pg = f.pg;
    pk.ts = now;
    pk.retx = f.rto_recovery;
    pk.offset = f.clock_offset;
    if (f.snd_nxt < f.snd_high) {  // go-back-N sends it again
      ++retx_packets_;
      retx_bytes_ += payload;
      log_undo(kUndoRetx, payload);
    }
    f.snd_nxt += payload;
    f.snd_high = std::max(f.snd_high, f.snd_nxt);
    f.last_pkt_size = pk.size;
    f.last_ser = ser(pk.size, f.rate_bps);
    f.next_avail = now + (cfg_.rate_bound ? f.last_ser : ser(pk.size, f.max_rate_bps));
    release_dropped();
    return transmit(port, pkt);
  }
  release_dropped();
  // 3. Nothing eligible: retry at the earliest next_avail among QPs with bytes left.
  Time t = kTimeMax;
  for (uint32_t id : qps)
    if (flows_.live(id) && flows_.state(id).bytes_left() > 0) t = std::min(t, flows_.state(id).next_avail);
  if (p.wake_at < 0 && t != kTimeMax && t > now) {
    p.wake_at = t;
    p.wake_cause = kernel_.cause();
    kernel_.schedule(t, kWake, port, p.epoch, p.wake_cause);
  }
}

void Network::host_receive(uint32_t port, uint32_t pkt) {
  const PktType t = pool_[pkt].type;
  if (t == PktType::Data) receive_data(port, pkt);
  else receive_ack(pkt);
}

void Network::receive_data(uint32_t port, uint32_t pkt) {
  Packet& pk = pool_[pkt];
  // The reference has deleted the receiver's state by then (and so may have we).
  if (flows_.finished(pk.flow)) return pool_.release(pkt);
  Flow& f = flows_.state(pk.flow);
  f.milestone = cfg_.l2_ack_interval;  // reset on every packet, as the reference does (§1)
  int action;  // 1 ACK, 2 NACK, 0 nothing
  if (pk.seq == f.rcv_nxt) {
    f.rcv_nxt += pk.payload;
    if (f.rcv_nxt >= f.milestone) {
      f.milestone += cfg_.l2_ack_interval;
      action = 1;
    } else {
      action = (cfg_.l2_chunk_size && f.rcv_nxt % cfg_.l2_chunk_size == 0) ? 1 : 0;
    }
  } else if (pk.seq > f.rcv_nxt) {
    const Time now = kernel_.now();
    if (now >= f.nack_timer || f.last_nack != f.rcv_nxt) {
      f.nack_timer = now + 500 * kUs;
      f.last_nack = f.rcv_nxt;
      if (cfg_.l2_back_to_zero) f.rcv_nxt = f.rcv_nxt / cfg_.l2_chunk_size * cfg_.l2_chunk_size;
      action = 2;
    } else {
      action = 0;
    }
  } else {
    // A duplicate is dropped silently, as the reference does, unless it was resent by a
    // retransmission timeout: then the ACK covering it was lost, and only a new one ends the stall.
    action = pk.retx ? 1 : 0;
    if (action && !owns_node(f.src) && f.rcv_nxt >= f.end_seq()) late_acks_.push_back({pk.flow, kernel_.now()});
  }
  if (action == 0) return pool_.release(pkt);
  // The data packet becomes its ACK in place: addresses and ports swapped, the CE mark echoed as
  // the CNP flag, the send time and the INT kept (the reference copies them into the ACK).
  const uint32_t nic = nodes_[pk.dst].num_ports > 1 ? f.rx_nic : port;
  if (nic == UINT32_MAX) return drop(pkt, kDropLinkDown, port);  // no NIC left for the ACK after LINK_DOWN
  const bool frozen_nic = kernel_.now() < ports_[nic].frozen_until;
  pk.type = action == 1 ? PktType::Ack : PktType::Nack;
  pk.seq = f.rcv_nxt;
  pk.size = ack_bytes_;
  pk.payload = 0;
  std::swap(pk.src, pk.dst);
  std::swap(pk.sport, pk.dport);
  pk.cnp = pk.ecn;
  pk.ecn = 0;
  pk.retx = 0;
  if (frozen_nic) return bypass(nic, pkt, ports_[nic].queue_bytes[0]);  // the NIC's partition is skipped, its ACKs are not
  ports_[nic].enqueue(0, pkt, pk.size);
  if (tracer_) trace(TraceEvent::Enqu, nic, pkt, ports_[nic].queue_bytes[0]);
  nic_send(nic);
}

void Network::receive_ack(uint32_t pkt) {
  const Packet& pk = pool_[pkt];
  const uint32_t id = pk.flow;
  if (flows_.finished(id)) return pool_.release(pkt);  // the reference no longer finds the QP
  Flow& f = flows_.state(id);
  const uint64_t acked = cfg_.l2_back_to_zero ? pk.seq / cfg_.l2_chunk_size * cfg_.l2_chunk_size : pk.seq;
  if (acked > f.snd_una) {
    f.snd_una = acked;
    f.last_progress = kernel_.now();
    f.rto_recovery = false;
  }
  const uint32_t nic = f.nic;
  if (f.snd_una >= f.end_seq()) {
    flow_done(id);  // may release f
  } else {
    if (pk.type == PktType::Nack) f.snd_nxt = f.snd_una;  // go-back-N
    f.cnps += pk.cnp;
    cc_->on_ack(id, f, pk, *this);
  }
  pool_.release(pkt);  // before nic_send: a new data packet may grow the pool
  if (nic != UINT32_MAX) nic_send(nic);
}

void Network::flow_done(uint32_t id) {
  Flow& f = flows_.state(id);
  flows_.set_finish(id, kernel_.now());
  last_finish_ = kernel_.now();
  log_undo(kUndoFinish, id);
  for (Time& t : f.timer_at) t = -1;  // cancels CC timers and the RTO
  ++flows_finished_;
  if (!node_rank_.empty()) {
    // Every rank's observer and client hear of it at the next window edge (deliver).
    completions_.push_back({kernel_.running(), kernel_.events_executed(), record(id)});
  } else {
    if (skip_) skip_->flow_finished(id);
    if (observer_) observer_->flow_finished(record(id));
  }
  finished_with(id);
}

void Network::release_done_flow(uint32_t id) {
  const Flow& f = flows_.state(id);
  // A flow acknowledged past snd_nxt (ACKs overtaking a go-back) still has "bytes left": its NIC may
  // send them until it drops the finished QP from its list, as the reference's does. Until then it
  // keeps its state.
  const bool listed = f.bytes_left() > 0 && f.nic != UINT32_MAX && owns_node(f.src) &&
                      std::find(ports_[f.nic].qps.begin(), ports_[f.nic].qps.end(), id) != ports_[f.nic].qps.end();
  if (listed) unsent_finished_.insert(id);
  else release_state(id);
}

}  // namespace wh
