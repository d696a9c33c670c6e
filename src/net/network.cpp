// Network construction, links, flows and event dispatch (docs/network-model.md §2, §3, §6, §12).
#include "wormhole/net/network.h"

#include <algorithm>
#include <cmath>

#include <fmt/core.h>

#include "wormhole/core/input_error.h"

namespace wh {

Network::Network(const SimConfig& cfg, const Topology& topo, std::unique_ptr<CongestionControl> cc, bool ports_by_rank)
    : cc_(std::move(cc)), fab_(NetParams::from(cfg, *cc_), topo, !ports_by_rank), switch_(fab_), nic_(fab_, flows_) {
  kernel_.set_order(fab_.params.portable_order ? EventOrder::Portable : EventOrder::Reference);
  if (fab_.params.link_down_us > 0) {
    bool linked = false;
    for (uint32_t p = 0; p < fab_.links.size(); ++p) linked |= fab_.is_link_down_port(p);
    const auto& [file, line] = fab_.params.link_down_origin;
    if (!linked)
      throw InputError(file, line,
                       "LINK_DOWN names nodes " + std::to_string(fab_.params.link_down_a) + " and " +
                           std::to_string(fab_.params.link_down_b) + ", which no link of the topology joins",
                       "give two nodes of one topology line, or LINK_DOWN 0 0 0");
    kernel_.schedule(fab_.params.link_down_time(), kLinkDown, 0);
  }
}

FlowInfo Network::make_flow(const FlowSpec& s) {
  FlowInfo f;
  f.src = s.src;
  f.dst = s.dst;
  f.pg = static_cast<uint8_t>(s.pg);
  f.dport = static_cast<uint16_t>(s.dport);
  f.size = s.size_bytes;
  f.start = s.start;
  uint32_t& sp = sport_next_.try_emplace((uint64_t(s.src) << 32) | s.dst, 10000).first->second;
  f.sport = static_cast<uint16_t>(sp++);
  return f;
}

bool Network::set_ideal_fct(FlowInfo& f) {
  const PathMetrics& m = fab_.routing.pair(f.src, f.dst);
  if (!m.reachable) return false;
  const uint64_t pkts = (f.size - 1) / fab_.params.payload + 1;
  const uint64_t total = f.size + pkts * kDataHeaderBytes;
  f.ideal_fct_ns = m.rtt_ns() + total * 8000000000ull / m.bw_bps;
  return true;
}

Time Network::lower_bound_fct(uint32_t id) const {
  // Alone on an idle path, a flow's last byte is acknowledged no sooner than: its packets
  // serialised one after the other at a bottleneck hop b, the first packet store-and-forwarded
  // over the hops before b and the last one over the hops after it, every link's delay, and the
  // last packet's ACK back over the receiver's NIC and the ACK path. The maximum over b is exact
  // for a tandem of idle FIFO links (packets of equal size, a shorter last one); headers without
  // INT and the 60-B minimum ACK, so the bound holds for every CC.
  const uint64_t size = flows_.info(id).size;
  const std::vector<uint32_t> data = data_path(id);
  if (data.empty() || size == 0) return 0;
  const uint64_t payload = fab_.params.payload;
  const uint64_t n = (size - 1) / payload + 1;
  const uint64_t full = payload + kDataHeaderBytes, last = size - (n - 1) * payload + kDataHeaderBytes;
  const uint64_t first = n > 1 ? full : last;
  Time delays = 0, best = 0;
  for (uint32_t p : data) delays += fab_.links[p].delay;
  Time before = 0;  // Σ over hops < b of the first packet's serialisation
  for (size_t b = 0; b < data.size(); ++b) {
    const PortLink& pb = fab_.links[data[b]];
    Time t = before + static_cast<Time>(n - 1) * fab_.ser(static_cast<uint32_t>(full), pb.rate_bps) +
             fab_.ser(static_cast<uint32_t>(last), pb.rate_bps);
    for (size_t h = b + 1; h < data.size(); ++h) t += fab_.ser(static_cast<uint32_t>(last), fab_.links[data[h]].rate_bps);
    best = std::max(best, t);
    before += fab_.ser(static_cast<uint32_t>(first), pb.rate_bps);
  }
  Time ack = 0;
  const PathView f = path_view(id);
  const Node& rx = fab_.nodes[f.dst];
  const uint32_t rx_nic = rx.num_ports > 1 ? f.rx_nic : rx.first_port;
  if (rx_nic != UINT32_MAX) {
    std::vector<uint32_t> back = ack_path(id);
    back.insert(back.begin(), rx_nic);
    for (uint32_t p : back) ack += fab_.links[p].delay + fab_.ser(kAckMinBytes, fab_.links[p].rate_bps);
  }
  return delays + best + ack;
}

uint32_t Network::add_flows(const std::vector<FlowSpec>& specs, const std::string& source) {
  const uint32_t first = static_cast<uint32_t>(flows_.size());
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  for (const FlowSpec& s : specs) {
    flows_.add(make_flow(s));
    pairs.emplace_back(s.src, s.dst);
  }
  // One routing pass computes the tables and these pairs' metrics (a BFS from every host is the
  // set-up's main cost on large topologies; later flows need one BFS per new destination).
  if (!fab_.routing.built()) fab_.routing.build(fab_.nodes, fab_.links, fab_.params.payload, pairs);
  else fab_.routing.precompute_pairs(pairs);
  for (uint32_t id = first; id < flows_.size(); ++id) {
    FlowInfo& f = flows_.info(id);
    if (!set_ideal_fct(f)) {
      const FlowSpec& s = specs[id - first];
      throw InputError(source, s.line,
                       "no path joins host " + std::to_string(f.src) + " and host " + std::to_string(f.dst) +
                           " (hosts never forward; their switches are not connected)",
                       "connect the two hosts' switches in the topology, or remove the flow");
    }
    start_order_.push_back(id);
  }
  // Pending starts stay in start-time order (stable: file order among equal times).
  std::stable_sort(start_order_.begin() + static_cast<long>(next_start_), start_order_.end(),
                   [&](uint32_t a, uint32_t b) { return flows_.info(a).start < flows_.info(b).start; });
  schedule_next_start();
  return first;
}

uint32_t Network::inject_flow(const FlowSpec& spec) { return inject(spec, false); }

uint32_t Network::inject(const FlowSpec& spec, bool replayed) {
  // Not appended now: the caller may be inside a handler that holds references into flows_.
  const uint32_t id = static_cast<uint32_t>(flows_.size() + injected_.size());
  // A flow that starts a QP does so at its own event, in the order of the injections. A replayed
  // flow starts nothing anyone sees: it needs an event only to be created when none is pending (the
  // first event of an instant creates every flow injected so far).
  if (!replayed || injected_.empty()) kernel_.schedule(kernel_.now(), kInject, id);
  injected_.push_back(spec);
  replay_injected_.push_back(replayed);
  return id;
}

void Network::materialize_injected() {
  routing();
  ledger_.note(RunLedger::kInject, static_cast<uint32_t>(flows_.size()));
  for (size_t i = 0; i < injected_.size(); ++i) {
    FlowInfo f = make_flow(injected_[i]);
    f.start = kernel_.now();
    f.replayed = replay_injected_[i];
    set_ideal_fct(f);  // unreachable: ideal 0, no NIC; reported as unfinished
    const uint32_t id = flows_.add(f);
    if (f.replayed) start_replayed(id);
  }
  injected_.clear();
  replay_injected_.clear();
}

void Network::schedule_next_start() {
  if (start_pending_ || next_start_ >= start_order_.size()) return;
  start_pending_ = true;
  kernel_.schedule(std::max(flows_.info(start_order_[next_start_]).start, kernel_.now()), kFlowStart, 0);
}

void Network::run(Time until) {
  routing();  // routes exist even when no flow was added
  kernel_.run(until, *this);
}

Routing& Network::routing() { return fab_.routes(); }

void Network::handle(const Event& e) {
  // Samples see the state after every event before their instant (probe.h); one compare when off.
  if (e.time >= sample_due_) sample_due_ = sampler_->sample(e.time);
  if (!node_rank_.empty()) {
    if (!owns(e)) {
      ++ledger_.foreign_events;
      return;
    }
    if (counted_elsewhere(e)) ++ledger_.foreign_events;
    else ledger_.event_counted();
  }
  switch (e.kind) {
    case kTxDone: {
      Port& p = fab_.ports[e.target];
      // Left behind by a fast-forward: another epoch, or not its time (either alone could wrap).
      if (e.aux != p.epoch || e.time != p.busy_until) {
        ++ledger_.discarded;
        break;
      }
      p.txdone_pending = false;
      if (fab_.nodes[p.node].is_switch) switch_send(e.target);
      else nic_send(e.target);
      break;
    }
    case kArrive: {
      // A distributed run keeps the far end of a cut link as a cut wire, not a port.
      // (owns() has checked that the receiving port is this rank's.)
      if (!node_rank_.empty() && node_rank_[fab_.links[e.target].node] != rank_) {
        CutWire& w = fab_.cut_wires[fab_.ports[fab_.links[e.target].peer].cut_wire];
        if (e.aux == w.epoch && !w.wire.empty() && e.time == w.wire.front().arrive) on_arrive_cut(w);
        else ++ledger_.discarded;
        break;
      }
      const Port& p = fab_.ports[e.target];
      if (e.aux == p.epoch && !p.wire.empty() && e.time == p.wire.front().arrive) on_arrive(e.target);
      else ++ledger_.discarded;
      break;
    }
    case kWake: {
      Port& p = fab_.ports[e.target];
      if (e.aux != p.epoch) {  // left behind by a fast-forward
        ++ledger_.discarded;
        break;
      }
      if (e.time != p.wake_at) break;  // superseded by an earlier retry
      p.wake_at = -1;
      nic_send(e.target);
      break;
    }
    case kFlowStart: {
      const Time t = kernel_.now();
      start_pending_ = false;
      // As the reference's flow reader, which schedules each application start at "now": the QPs
      // are created after every event already due at this instant.
      while (next_start_ < start_order_.size() && flows_.info(start_order_[next_start_]).start <= t)
        kernel_.schedule(t, kQpStart, start_order_[next_start_++]);
      schedule_next_start();
      break;
    }
    case kTimer:
      // A finished flow's timers are cancelled (flow_done); once its state is released, nothing is left
      // to do but count one a fast-forward left behind, as it would be counted with its state.
      if (!flows_.live(e.target)) {
        if (timer_epoch(e.aux) != (flows_.released_epoch(e.target) & kTimerEpochMask)) ++ledger_.discarded;
        break;
      }
      if (timer_epoch(e.aux) == (flows_.state(e.target).epoch & kTimerEpochMask)) on_timer(e.target, timer_slot(e.aux));
      else ++ledger_.discarded;
      break;
    case kQpStart: start_flow(e.target); break;
    case kInject:
      materialize_injected();  // starts the replayed flows among them
      if (!flows_.info(e.target).replayed) start_flow(e.target);
      break;
    case kReplay:
      if (islands_) islands_->replay_due(e.target);
      break;
    case kLinkDown: link_down(); break;
    case kClient:
      if (client_) client_->client_event(e.target, e.aux);
      break;
    case kBypass: receive(fab_.pool[e.target].in_port, e.target); break;
    case kHeld: deliver_held(e.target, e.time, e.aux); break;
  }
}

void Network::on_tick() {
  // A stop asked for by a signal is seen here, every 65,536 events (a few ms of wall time), not after
  // every event: the run loop's own check stays one byte (callgrind: 2 instructions an event less).
  if (interrupted() && !stopped_ && !distributed()) stop_by_signal(interrupt_signal());
  if (observer_) observer_->tick(kernel_.now(), kernel_.events_executed(), ledger_.flows_finished);
  // Between events: nothing on the stack refers to a flow (a distributed run does this at window edges).
  if (!distributed() && flows_.all_retired_chunks().size() >= release_scan_at_) release_retired_entries();
}

void Network::set_timer(uint32_t id, Flow& f, int slot, Time at) {
  f.timer_at[slot] = at;
  f.timer_cause[slot] = kernel_.cause();
  if (f.timer_ev[slot] < 0 || at < f.timer_ev[slot]) {
    f.timer_ev[slot] = at;
    kernel_.schedule(at, kTimer, id, timer_aux(f, slot), f.timer_cause[slot]);
  }
}

void Network::on_timer(uint32_t id, int slot) {
  Flow& f = flows_.state(id);
  const Time now = kernel_.now();
  if (now != f.timer_ev[slot]) return;  // superseded by an earlier event for this slot
  f.timer_ev[slot] = -1;
  if (f.timer_at[slot] < 0) return;     // cancelled
  if (f.timer_at[slot] > now) {         // moved later: wait for the new deadline
    f.timer_ev[slot] = f.timer_at[slot];
    kernel_.schedule(f.timer_at[slot], kTimer, id, timer_aux(f, slot), f.timer_cause[slot]);
    return;
  }
  f.timer_at[slot] = -1;
  if (slot == kRtoSlot) on_rto(id);
  else cc_->on_timer(id, f, slot, *this);
}

void Network::on_rto(uint32_t id) {
  Flow& f = flows_.state(id);
  if (skip_) skip_->sending(id);
  if (nic_.on_rto(f, kernel_.now())) {
    ledger_.timeout();
    if (f.nic != UINT32_MAX) nic_send(f.nic);
  }
  set_timer(id, f, kRtoSlot, f.last_progress + fab_.params.rto);
}

void Network::transmit(uint32_t port, uint32_t pkt) {
  Port& p = fab_.ports[port];
  const Time now = kernel_.now();
  const Time tx = fab_.ser(fab_.pool[pkt].size, p.rate_bps);
  p.busy_until = now + tx;
  p.sent_bytes += fab_.pool[pkt].size;
  if (tracer_) trace(TraceEvent::Dequ, port, pkt, p.queue_bytes[fab_.queue_class(port, pkt)]);
  // As the reference's TransmitStart: the end-of-transmission first, then the arrival.
  p.tx_cause = kernel_.cause();
  const Cause arrival = kernel_.cause();
  // A switch port needs its end-of-transmission event only if a packet is waiting; otherwise the
  // next arrival finds it idle and sends at once, which is the same instant the reference would
  // (this halves the events of uncongested switch hops). A host NIC may have paced QPs: always.
  if (!fab_.nodes[p.node].is_switch || p.bytes_total > 0) {
    p.txdone_pending = true;
    kernel_.schedule(p.busy_until, kTxDone, port, p.epoch, p.tx_cause);
  }
  if (p.cut) {
    // The peer's rank queues it on its copy of the wire (accept) at the next window edge: the
    // link's delay is at least the window, so it arrives after that.
    outbox_.push_back({now + tx + p.delay, arrival, port, node_rank_[fab_.links[p.peer].node], 0, fab_.pool[pkt]});
    fab_.pool.release(pkt);
    return;
  }
  const bool idle_wire = p.wire.empty();
  p.wire.push({now + tx + p.delay, arrival, pkt});
  if (idle_wire) kernel_.schedule(now + tx + p.delay, kArrive, port, p.epoch, arrival);
}

void Network::on_arrive(uint32_t port) {
  Port& p = fab_.ports[port];
  const uint32_t pkt = p.wire.pop().pkt;
  if (!p.wire.empty())
    kernel_.schedule(p.wire.front().arrive, kArrive, port, p.epoch, p.wire.front().cause);
  receive(p.peer, pkt);
}

void Network::on_arrive_cut(CutWire& w) {
  // As on_arrive: the next arrival is the sending port's event, as in one process.
  const uint32_t pkt = w.wire.pop().pkt;
  if (!w.wire.empty()) kernel_.schedule(w.wire.front().arrive, kArrive, w.sender, w.epoch, w.wire.front().cause);
  receive(w.receiver, pkt);
}

void Network::receive(uint32_t port, uint32_t pkt, bool checked) {
  // A packet behind its flow's clock waits until the clock catches up (fast-forward; never true
  // when Wormhole is off).
  Port& p = fab_.ports[port];
  const bool at_switch = fab_.nodes[p.node].is_switch;
  if (shifted_ && hold_if_owed(port, pkt, at_switch)) return;
  if (tracer_) trace(TraceEvent::Recv, port, pkt, 0);
  if (!p.up) return drop(pkt, kDropLinkDown, port);
  // (A packet released after waiting for a pull-back passed the link's loss draw already.)
  if (!checked && p.error_rate > 0 && p.rng.uniform() < p.error_rate) return drop(pkt, kDropLoss, port);
  const Packet& pk = fab_.pool[pkt];
  if (pk.type == PktType::Pfc) {
    if (kernel_.now() < p.frozen_until) return hold_for_pull_back(port, pkt, port);  // an interrupt
    handle_pfc_frame(port, pk);
    fab_.pool.release(pkt);
    return;
  }
  if (at_switch) switch_receive(port, pkt);
  else host_receive(port, pkt);
}

void Network::handle_pfc_frame(uint32_t port, const Packet& pk) {
  Port& p = fab_.ports[port];
  if (observer_) {
    PfcRecord r;
    r.time = kernel_.now();
    r.node = p.node;
    r.node_type = fab_.nodes[p.node].is_switch ? 1 : 0;
    r.if_index = p.if_index;
    r.type = pk.pfc_pause ? 1 : 0;
    r.cls = pk.pfc_class;
    observer_->pfc(r);
  }
  p.paused[pk.pfc_class] = pk.pfc_pause;
  note_paused(port);
  if (!pk.pfc_pause) {
    if (fab_.nodes[p.node].is_switch) kick(port);
    else nic_send(port);
  }
}

void Network::note_paused(uint32_t port) {
  Port& p = fab_.ports[port];
  bool any = false;
  for (uint32_t c = 0; c < kClasses; ++c) any |= p.paused[c];
  const Time now = kernel_.now();
  if (any && p.paused_since < 0) p.paused_since = now;
  if (!any && p.paused_since >= 0) p.paused_total += now - p.paused_since, p.paused_since = -1;
}

void Network::link_down() {
  std::vector<uint32_t> down;
  for (uint32_t p = 0; p < fab_.links.size(); ++p)
    if (fab_.is_link_down_port(p)) down.push_back(p);
  for (uint32_t p : down) {
    Port& pt = fab_.ports[p];
    pt.up = fab_.links[p].up = false;  // (the routes read the links)
    for (uint32_t c = 0; c < kClasses; ++c) pt.paused[c] = pt.pause_sent[c] = false;
    note_paused(p);
  }
  // Queued packets are dropped; on a switch their buffer is released (which may RESUME an
  // upstream port that is still up).
  for (uint32_t p : down) {
    Port& pt = fab_.ports[p];
    for (uint32_t c = 0; c < kClasses; ++c)
      while (!pt.queue[c].empty()) {
        const uint32_t pkt = pt.dequeue(c, fab_.pool);
        if (fab_.nodes[pt.node].is_switch && c != 0) release_ingress(pkt, c);
        drop(pkt, kDropLinkDown, p);
      }
  }
  fab_.routing.build(fab_.nodes, fab_.links, fab_.params.payload, {});
  // Reassign every running QP to a NIC (the reference's RedistributeQp), and its ACKs' NIC.
  for (uint32_t v = 0; v < fab_.nodes.size(); ++v)
    if (!fab_.nodes[v].is_switch)
      for (uint32_t p = fab_.nodes[v].first_port; p < fab_.nodes[v].first_port + fab_.nodes[v].num_ports; ++p) fab_.ports[p].qps.clear();
  for (uint32_t id : nic_.take_held()) release_state(id);  // no longer on any NIC's list
  for (uint32_t id = 0; id < flows_.size(); ++id) {
    if (!flows_.live(id) || flows_.finished(id)) continue;
    Flow& f = flows_.state(id);
    fab_.assign_nics(f.src, f.dst, f.sport, f.dport, f.nic, f.rx_nic);
    if (f.nic != UINT32_MAX) fab_.ports[f.nic].qps.push_back(id);
  }
  for (uint32_t p = 0; p < fab_.ports.size(); ++p)
    if (!fab_.nodes[fab_.ports[p].node].is_switch) nic_send(p);
  if (skip_) skip_->routes_changed();
}

FlowRecord Network::record(uint32_t id) const {
  const FlowInfo& i = flow_info(id);
  FlowRecord r;
  r.id = id;
  r.src = i.src;
  r.dst = i.dst;
  r.sport = i.sport;
  r.dport = i.dport;
  r.pg = i.pg;
  r.size_bytes = i.size;
  r.start = i.start;
  r.finish = flows_.finish(id);
  r.ideal_fct_ns = i.ideal_fct_ns;
  const bool live = flows_.live(id);
  const Flow* f = live ? &flows_.state(id) : nullptr;
  r.min_fct_ns = to_ns(live ? f->min_fct : i.min_fct);
  r.skipped = live ? f->skipped_time : i.skipped_time;
  r.skipped_bytes = live ? f->skipped_bytes : i.skipped_bytes;
  return r;
}

RunStats Network::stats() const {
  RunStats s;
  // A distributed run's client events run in the client's own time on every rank; rank 0 counts them.
  s.events = kernel_.events_executed() - ledger_.foreign_events + (rank_ == 0 ? clock_.client_events() : 0);
  s.sim_end = end_override_ >= 0 ? end_override_ : kernel_.now();
  s.last_finish = ledger_.last_finish;
  s.packets_dropped = ledger_.dropped;
  s.drops_buffer = ledger_.drops[kDropBuffer];
  s.drops_loss = ledger_.drops[kDropLoss];
  s.drops_link_down = ledger_.drops[kDropLinkDown];
  s.retransmitted_packets = ledger_.retx_packets;
  s.retransmitted_bytes = ledger_.retx_bytes;
  s.ecn_marks = ledger_.ecn_marks;
  s.max_queue_bytes = ledger_.max_queue;
  if (!fab_.links.empty()) {
    s.max_queue_node = fab_.links[ledger_.max_queue_port].node;
    s.max_queue_if = fab_.links[ledger_.max_queue_port].if_index;
  }
  s.retransmit_timeouts = ledger_.rto_fired;
  s.max_rtt_ns = fab_.routing.max_rtt_ns();
  s.max_bdp_bytes = fab_.routing.max_bdp_bytes();
  return s;
}

}  // namespace wh
