// Host NIC and queue pairs: QP creation, ACK-first then round-robin scheduling with pacing and
// windows, the receiver's ACK/NACK generation and the sender's go-back-N (docs/network-model.md §8–§9).
#include <algorithm>

#include "wormhole/net/topology.h"
#include "wormhole/net/hash.h"
#include "wormhole/net/network.h"

namespace wh {

const PathMetrics& Network::begin_flow(uint32_t id, Flow& f) {
  flows_.info(id).started = true;
  fab_.assign_nics(f.src, f.dst, f.sport, f.dport, f.nic, f.rx_nic);
  // Line rate and base RTT on every rank: a memo pattern's key is made of them (Memoizer::key_of).
  const PathMetrics& m = fab_.routing.pair(f.src, f.dst);
  f.max_rate_bps = f.nic != UINT32_MAX ? fab_.links[f.nic].rate_bps : fab_.links[fab_.nodes[f.src].first_port].rate_bps;
  f.base_rtt = static_cast<Time>(fab_.params.global_t ? fab_.routing.max_rtt_ns() : m.rtt_ns()) * kNs;
  return m;
}

void Network::start_flow(uint32_t id) {
  Flow& f = flows_.create_state(id);
  const PathMetrics& m = begin_flow(id, f);
  if (islands_) islands_->flow_started(id, f.nic, f.rx_nic != UINT32_MAX ? f.rx_nic : fab_.nodes[f.dst].first_port);
  f.min_fct = lower_bound_fct(id);
  if (!owns_node(f.src)) {
    // Another rank's sender: this rank needs only the ACK NIC (if it has the receiver), and the
    // controller's partitions, which every rank keeps alike.
    if (skip_ && f.nic != UINT32_MAX) notify_flow_started(id);
    return;
  }
  f.rate_bps = f.max_rate_bps;
  f.var_win = fab_.params.var_win;
  f.win = fab_.params.has_win ? (fab_.params.global_t ? fab_.routing.max_bdp_bytes() : m.bdp_bytes()) : 0;
  f.last_progress = kernel_.now();
  f.update_window();
  // No path: reported as unfinished at the end. No CC or RTO timers either: they would keep the
  // event queue alive for ever, and an empty queue is how a workload's watchdog sees a hang.
  if (f.nic == UINT32_MAX) return;
  cc_->on_start(id, f, *this);
  if (fab_.params.rto > 0) set_timer(id, f, kRtoSlot, kernel_.now() + fab_.params.rto);
  fab_.ports[f.nic].qps.push_back(id);
  f.next_avail = kernel_.now();
  // Partitions this flow joins are pulled back from a skip before its first packet leaves.
  if (skip_) notify_flow_started(id);
  nic_send(f.nic);
}

void Network::set_rate(uint32_t id, Flow& f, uint64_t rate_bps, bool retime) {
  // The last packet's serialisation at the new rate; the one at the old rate is cached (HPCC
  // changes the rate on every ACK, and these divisions were most of its per-ACK cost).
  const Time last_ser = f.last_pkt_size ? fab_.ser(f.last_pkt_size, rate_bps) : 0;
  if (retime && f.nic != UINT32_MAX) {
    // The reference's ChangeRate: move next_avail by the last packet's tx-time difference and
    // pull the NIC's pending retry earlier if needed.
    f.next_avail += last_ser - f.last_ser;
    Port& nic = fab_.ports[f.nic];
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
  Port& p = fab_.ports[port];
  // While its end-of-transmission event is pending (even at this very instant) the NIC waits for
  // it: the reference picks the next packet in TransmitComplete, after same-instant arrivals.
  if (!p.up || p.txdone_pending) return;
  const Time now = kernel_.now();
  // 1. ACK/NACK queue: strict priority unless its PFC class is paused.
  if (nic_.ack_first(port)) return transmit(port, p.dequeue(0, fab_.pool));
  // 2. Round robin over the QPs.
  nic_dropped_.clear();
  const NicModel::Pick pick = nic_.pick(port, now, nic_dropped_);
  uint32_t pkt = UINT32_MAX;
  if (pick.flow != UINT32_MAX) {
    uint32_t retx = 0;
    if (skip_) skip_->sending(pick.flow);
    pkt = nic_.build_data(pick.flow, now, retx);
    if (retx) ledger_.retransmit(retx);
  }
  // After the packet is built: the chosen QP may be one of those the NIC let go of.
  for (uint32_t id : nic_dropped_) release_state(id);
  if (pkt != UINT32_MAX) return transmit(port, pkt);
  // 3. Nothing eligible: retry at the earliest next send time among QPs with bytes left.
  if (p.wake_at < 0 && pick.retry != kTimeMax && pick.retry > now) {
    p.wake_at = pick.retry;
    p.wake_cause = kernel_.cause();
    kernel_.schedule(pick.retry, kWake, port, p.epoch, p.wake_cause);
  }
}

void Network::host_receive(uint32_t port, uint32_t pkt) {
  const PktType t = fab_.pool[pkt].type;
  if (t == PktType::Data) receive_data(port, pkt);
  else receive_ack(pkt);
}

void Network::receive_data(uint32_t port, uint32_t pkt) {
  Packet& pk = fab_.pool[pkt];
  // The reference has deleted the receiver's state by then (and so may have we).
  if (flows_.finished(pk.flow)) return fab_.pool.release(pkt);
  Flow& f = flows_.state(pk.flow);
  const NicModel::Received got = nic_.on_data(f, pk, kernel_.now());
  if (got.reply == NicModel::Reply::None) return fab_.pool.release(pkt);
  if (got.duplicate && !owns_node(f.src) && f.rcv_nxt >= f.end_seq()) late_acks_.push_back({pk.flow, kernel_.now()});
  // The data packet becomes its reply in place.
  const uint32_t nic = fab_.nodes[pk.dst].num_ports > 1 ? f.rx_nic : port;
  if (nic == UINT32_MAX) return drop(pkt, kDropLinkDown, port);  // no NIC left for the ACK after LINK_DOWN
  nic_.make_reply(pk, got.reply, f.rcv_nxt);
  Port& n = fab_.ports[nic];
  if (kernel_.now() < n.frozen_until) return bypass(nic, pkt, n.queue_bytes[0]);  // the NIC's partition is skipped, its ACKs are not
  n.enqueue(0, pkt, pk.size);
  if (tracer_) trace(TraceEvent::Enqu, nic, pkt, n.queue_bytes[0]);
  nic_send(nic);
}

void Network::receive_ack(uint32_t pkt) {
  const Packet& pk = fab_.pool[pkt];
  const uint32_t id = pk.flow;
  if (flows_.finished(id)) return fab_.pool.release(pkt);  // the reference no longer finds the QP
  Flow& f = flows_.state(id);
  const uint32_t nic = f.nic;
  if (skip_ && pk.type == PktType::Nack) skip_->sending(id);
  if (nic_.on_ack(f, pk, kernel_.now())) flow_done(id);  // may release f
  else cc_->on_ack(id, f, pk, *this);
  fab_.pool.release(pkt);  // before nic_send: a new data packet may grow the pool
  if (nic != UINT32_MAX) nic_send(nic);
}

void Network::flow_done(uint32_t id) {
  Flow& f = flows_.state(id);
  flows_.set_finish(id, kernel_.now());
  ledger_.finish(id);
  for (Time& t : f.timer_at) t = -1;  // cancels CC timers and the RTO
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
                      std::find(fab_.ports[f.nic].qps.begin(), fab_.ports[f.nic].qps.end(), id) != fab_.ports[f.nic].qps.end();
  if (listed) nic_.hold_until_dropped(id);
  else release_state(id);
}

void Network::release_retired_entries(const std::function<void(std::vector<uint8_t>&)>& agree) {
  const std::vector<size_t>& waiting = flows_.all_retired_chunks();
  if (waiting.empty() && !agree) return;
  std::vector<uint8_t> may_go((flows_.size() + FlowTable::kEntryChunk - 1) >> FlowTable::kEntryBits, 0);
  for (size_t k : waiting) may_go[k] = 1;
  // What still refers to a retired flow: its stale timer events (compared with its epoch), and its
  // packets still on their way (a late packet reads its clock offset, hold_if_owed).
  auto referred = [&](uint32_t id) {
    if (static_cast<size_t>(id >> FlowTable::kEntryBits) < may_go.size()) may_go[id >> FlowTable::kEntryBits] = 0;
  };
  kernel_.queue().for_each([&](const Event& e) {
    if (e.kind == kTimer) referred(e.target);
  });
  fab_.pool.for_each_live([&](const Packet& pk) {
    if (pk.type != PktType::Pfc) referred(pk.flow);
  });
  if (agree) agree(may_go);
  for (size_t k : flows_.release_entries(may_go))
    if (skip_) skip_->flows_forgotten(static_cast<uint32_t>(k << FlowTable::kEntryBits), static_cast<uint32_t>(FlowTable::kEntryChunk));
  release_scan_at_ = flows_.all_retired_chunks().size() + kReleaseBatch;
}

bool Network::release_entries_due() {
  const uint64_t due = finishes_heard_ / release_period_;
  if (due == release_due_seen_) return false;
  release_due_seen_ = due;
  return true;
}

}  // namespace wh
