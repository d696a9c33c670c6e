// The network's side of fast-forwarding (the Wormhole paper: fast-forwarding and skip-back): moving a partition's pending
// events and absolute times by ΔT, freezing its ports, letting other flows' control packets pass
// them and holding its own packets that arrive while it is frozen. Decisions are src/ffwd's.
#include <algorithm>

#include "wormhole/net/network.h"

namespace wh {

namespace {
bool is_flow_packet(const Packet& pk) { return pk.type != PktType::Pfc; }
// Whether `pk` belongs to one of `members` (sorted flow ids).
bool of_members(const Packet& pk, const std::vector<uint32_t>& members) {
  return is_flow_packet(pk) && std::binary_search(members.begin(), members.end(), pk.flow);
}
// A packet on a shifted partition's ports moves with its flow's clock.
void move_with_partition(Packet& pk, Time delta) {
  if (!is_flow_packet(pk)) return;
  pk.shift_times(delta);
  pk.offset += delta;
}
}  // namespace

Network::PathView Network::path_view(uint32_t id) const {
  const FlowInfo& i = flow_info(id);
  if (!flows_.live(id)) return {i.src, i.dst, i.nic, i.rx_nic, i.sport, i.dport};
  const Flow& f = flows_.state(id);
  return {f.src, f.dst, f.nic, f.rx_nic, f.sport, f.dport};
}

std::vector<uint32_t> Network::data_path(uint32_t id) const {
  std::vector<uint32_t> path;
  data_path(id, path);
  return path;
}

void Network::data_path(uint32_t id, std::vector<uint32_t>& path) const {
  const PathView f = path_view(id);
  path.clear();
  if (f.nic == UINT32_MAX) return;
  path.push_back(f.nic);
  fab_.switch_path(f.nic, f.src, f.dst, f.sport, f.dport, path);
}

std::vector<uint32_t> Network::ack_path(uint32_t id) const {
  const PathView f = path_view(id);
  std::vector<uint32_t> path;
  const Node& rx = fab_.nodes[f.dst];
  if (f.nic == UINT32_MAX || rx.num_ports == 0) return path;
  const uint32_t nic = rx.num_ports > 1 ? f.rx_nic : rx.first_port;
  if (nic == UINT32_MAX) return path;
  fab_.switch_path(nic, f.dst, f.src, f.dport, f.sport, path);  // the ACK's header: addresses and ports swapped
  return path;
}

Time Network::link_down_time() const {
  const Time t = fab_.params.link_down_time();
  return t >= 0 && t >= kernel_.now() ? t : -1;
}

Time Network::next_flow_start() const {
  return next_start_ < start_order_.size() ? flows_.info(start_order_[next_start_]).start : -1;
}

void Network::credit(uint32_t id, int64_t bytes, Time time) {
  Flow& f = flows_.state(id);
  f.skipped_bytes = static_cast<uint64_t>(static_cast<int64_t>(f.skipped_bytes) + bytes);
  f.skipped_time += time;
  if (ledger_.journaling()) {
    ledger_.note(RunLedger::kCredit, static_cast<uint32_t>(credit_undo_.size()));
    credit_undo_.push_back({id, bytes, time});
  }
}

void Network::notify_flow_started(uint32_t id) {
  if (ledger_.journaling()) ledger_.note(RunLedger::kSkipHook, skip_->mark());
  skip_->flow_started(id);
}

Cause Network::packet_cause(Cause c, uint32_t pkt) const {
  if (kernel_.order() != EventOrder::Portable) return c;  // execution numbers are unique: no ties
  // Events whose owner is a slot of this rank (kBypass: a pool index, kHeld: a held slot) cannot
  // break key ties by their owner the same way on every rank; two such events caused by two events
  // of equal key (the same ps, lineage and child index, on different ports) would tie. Mixing the
  // packet's own identity into the parent makes their keys differ, whichever rank makes them.
  const Packet& pk = fab_.pool[pkt];
  const uint64_t identity =
      pk.type == PktType::Pfc
          ? (uint64_t(1) << 63) | (uint64_t(pk.in_port) << 16) | (uint64_t(pk.pfc_class) << 1) | pk.pfc_pause
          : (uint64_t(pk.flow) << 32) ^ (pk.seq * 0x9e3779b97f4a7c15ull) ^ (uint64_t(pk.type) << 60) ^ pk.in_port;
  c.parent = cause::mix_identity(c.parent, identity);
  return c;
}

void Network::bypass(uint32_t port, uint32_t pkt, uint64_t ahead) {
  const Port& p = fab_.ports[port];
  if (!p.up) return drop(pkt);
  fab_.pool[pkt].in_port = p.peer;
  ++ledger_.bypassed;
  const Time at = kernel_.now() + fab_.ser(ahead + fab_.pool[pkt].size, p.rate_bps) + p.delay;
  const Cause c = packet_cause(kernel_.cause(), pkt);
  if (p.cut) {
    // The peer's rank schedules the same event (Network::accept); the link's delay covers the window.
    outbox_.push_back({at, c, port, node_rank_[fab_.links[p.peer].node], 1, fab_.pool[pkt]});
    fab_.pool.release(pkt);
    return;
  }
  kernel_.schedule(at, kBypass, pkt, 0, c);
}

bool Network::hold_if_owed(uint32_t port, uint32_t pkt, bool at_switch) {
  const Time now = kernel_.now();
  // On its way through switches a packet behind its flow's clock only matters where it could
  // enter its own frozen partition; at the host it acts on its flow.
  if (at_switch && now >= freeze_horizon_) return false;
  Packet& pk = fab_.pool[pkt];
  if (!is_flow_packet(pk)) return false;
  const Time offset = flows_.live(pk.flow) ? flows_.state(pk.flow).clock_offset : flows_.released_clock_offset(pk.flow);
  const Time owed = offset - pk.offset;
  if (owed <= 0) return false;
  pk.offset = offset;
  hold(port, pkt, now + owed, false);
  return true;
}

uint32_t Network::hold(uint32_t port, uint32_t pkt, Time due, bool interrupt) {
  uint32_t slot;
  if (free_held_.empty()) {
    slot = static_cast<uint32_t>(held_.size());
    held_.emplace_back();
  } else {
    slot = free_held_.back();
    free_held_.pop_back();
  }
  Held& h = held_[slot];
  h.pkt = pkt;
  h.port = port;
  h.arrived = kernel_.now();
  h.due = due;
  h.interrupt = interrupt;
  h.cause = packet_cause(kernel_.cause(), pkt);
  ++h.gen;
  ++ledger_.held;
  kernel_.schedule(h.due, kHeld, slot, h.gen, h.cause);
  return slot;
}

void Network::hold_for_pull_back(uint32_t port, uint32_t pkt, uint32_t frozen) {
  skip_->touched(frozen);
  // The tick is pending while any partition exists (FastForward::ensure_tick).
  hold(port, pkt, std::min(kernel_.barrier(), fab_.ports[frozen].frozen_until), true);
}

void Network::deliver_held(uint32_t slot, Time at, uint16_t gen) {
  Held& h = held_[slot];
  if (h.due != at || h.gen != gen) {  // re-timed by a later shift of its partition
    ++ledger_.discarded;
    return;
  }
  const uint32_t pkt = h.pkt, port = h.port;
  const bool interrupt = h.interrupt;
  // In its partition's clock the packet arrives now: its timestamps move with it. (An interrupt's
  // packet only waited for the pull-back: its flow's clock did not move.)
  if (!h.interrupt) fab_.pool[pkt].shift_times(h.due - h.arrived);
  h.due = -1;
  free_held_.push_back(slot);
  receive(port, pkt, interrupt);
}

bool Network::can_freeze(const std::vector<uint32_t>& ports, const std::vector<uint32_t>& flows) const {
  auto foreign_data = [&](uint32_t pkt) {
    const Packet& pk = fab_.pool[pkt];
    return pk.type == PktType::Data && !std::binary_search(flows.begin(), flows.end(), pk.flow);
  };
  for (uint32_t port : ports) {
    if (const CutWire* w = inbound_cut_wire(port)) {  // only its wire is here
      for (uint32_t i = 0; i < w->wire.size(); ++i)
        if (foreign_data(w->wire.at(i).pkt)) return false;
      continue;
    }
    if (!fab_.ports.made(port)) continue;  // not simulated here: its rank answers for it
    const Port& p = fab_.ports[port];
    for (uint32_t c = 0; c < kClasses; ++c)  // class 0 too: a flow may use priority group 0
      for (uint32_t i = 0; i < p.queue[c].size(); ++i)
        if (foreign_data(p.queue[c].at(i))) return false;
    for (uint32_t i = 0; i < p.wire.size(); ++i)
      if (foreign_data(p.wire.at(i).pkt)) return false;
  }
  return true;
}

void Network::evacuate(uint32_t port, const std::vector<uint32_t>& members) {
  ++evacuated_;
  Port& p = fab_.ports[port];
  const bool sw = fab_.nodes[p.node].is_switch;
  uint64_t moved = 0;
  for (uint32_t c = 0; c < kClasses; ++c) {
    uint64_t ahead = 0;  // bytes before it in the class's FIFO
    for (uint32_t n = p.queue[c].size(); n > 0; --n) {
      const uint32_t pkt = p.queue[c].pop();
      if (of_members(fab_.pool[pkt], members)) {
        ahead += fab_.pool[pkt].size;
        p.queue[c].push(pkt);
        continue;
      }
      // Freezing happens at ticks only (kernel barriers): each moved packet is its own cause, which
      // only the port's rank has (a bypass's key must not depend on what other ports moved first).
      kernel_.set_barrier_context(cause::port_move_context(port, moved++));
      const uint32_t size = fab_.pool[pkt].size;
      p.queue_bytes[c] -= size;
      p.bytes_total -= size;
      if (sw && c != 0) release_ingress(pkt, c);  // it leaves the switch now
      bypass(port, pkt, ahead);
      ahead += size;
    }
  }
  evacuate_wire(p.wire, p.peer, members);
}

void Network::evacuate_wire(Ring<WireSlot>& wire, uint32_t receiver, const std::vector<uint32_t>& members) {
  // Packets of other flows already on the wire arrive when they would have.
  for (uint32_t n = wire.size(); n > 0; --n) {
    const WireSlot s = wire.pop();
    if (of_members(fab_.pool[s.pkt], members)) {
      wire.push(s);
      continue;
    }
    fab_.pool[s.pkt].in_port = receiver;
    ++ledger_.bypassed;
    kernel_.schedule(s.arrive, kBypass, s.pkt, 0, packet_cause(s.cause, s.pkt));
  }
}

void Network::shift_cut_wire(CutWire& w, const std::vector<uint32_t>& flows, Time delta, bool freezing) {
  // As shift() does for a port whose queues are its rank's: only the wire is here.
  ++w.epoch;
  if (freezing) {
    ++evacuated_;  // counted as a port's evacuation: monitors key their barrier rows by the count
    evacuate_wire(w.wire, w.receiver, flows);
  }
  w.shift_times(delta);
  for (uint32_t i = 0; i < w.wire.size(); ++i) move_with_partition(fab_.pool[w.wire.at(i).pkt], delta);
  if (!w.wire.empty()) kernel_.schedule(w.wire.front().arrive, kArrive, w.sender, w.epoch, w.wire.front().cause);
}

void Network::shift(const std::vector<uint32_t>& ports, const std::vector<uint32_t>& flows, Time delta,
                    Time frozen_until) {
  const Time now = kernel_.now();
  const bool freezing = frozen_until > now;
  shifted_ = true;
  for (uint32_t id : flows) {
    Flow& f = flows_.state(id);
    ++f.epoch;
    f.clock_offset += delta;  // every rank's switches compare packets with it
    if (owns_node(f.dst)) f.shift_receiver_times(delta);
    if (!owns_node(f.src)) continue;  // its sender's state lives on another rank
    f.shift_sender_times(delta);
    for (int slot = 0; slot <= kRtoSlot; ++slot)
      if (f.timer_ev[slot] >= 0) kernel_.schedule(f.timer_ev[slot], kTimer, id, timer_aux(f, slot), f.timer_cause[slot]);
  }
  // A port not made here (a partition spans ranks) is its rank's to shift: nothing of it is here.
  if (freezing)
    for (uint32_t p : ports)
      if (fab_.ports.made(p)) fab_.ports[p].frozen_until = frozen_until;  // before evacuating: PFC frames bypass too
  for (uint32_t port : ports) {
    if (CutWire* w = inbound_cut_wire(port)) {  // the far end of a cut link: only its wire is here
      shift_cut_wire(*w, flows, delta, freezing);
      continue;
    }
    if (!fab_.ports.made(port)) continue;
    Port& p = fab_.ports[port];
    ++p.epoch;
    if (freezing) evacuate(port, flows);
    p.shift_times(delta);
    if (p.txdone_pending) kernel_.schedule(p.busy_until, kTxDone, port, p.epoch, p.tx_cause);
    for (uint32_t i = 0; i < p.wire.size(); ++i) move_with_partition(fab_.pool[p.wire.at(i).pkt], delta);
    if (!p.wire.empty()) kernel_.schedule(p.wire.front().arrive, kArrive, port, p.epoch, p.wire.front().cause);
    for (uint32_t c = 0; c < kClasses; ++c)
      for (uint32_t i = 0; i < p.queue[c].size(); ++i) move_with_partition(fab_.pool[p.queue[c].at(i)], delta);
    if (p.wake_at >= 0) kernel_.schedule(p.wake_at, kWake, port, p.epoch, p.wake_cause);
    if (!freezing) p.frozen_until = 0;
  }
  // Packets of these flows held from an earlier skip belong to the same clock.
  for (uint32_t slot = 0; slot < held_.size(); ++slot) {
    Held& h = held_[slot];
    if (h.due < 0 || h.interrupt || !std::binary_search(flows.begin(), flows.end(), fab_.pool[h.pkt].flow)) continue;
    h.shift_times(delta);
    fab_.pool[h.pkt].offset += delta;
    ++h.gen;
    kernel_.schedule(h.due, kHeld, slot, h.gen, h.cause);
  }
  freeze_horizon_ = std::max(freeze_horizon_, frozen_until);
}

}  // namespace wh
