// A switch's forwarding in the Network: ECMP to the egress, the MMU's admission (SwitchModel), PFC
// frames, and sending from its egress queues (docs/network-model.md §10–§12).
#include "wormhole/net/network.h"

namespace wh {

void Network::switch_receive(uint32_t in_port, uint32_t pkt) {
  Packet& pk = fab_.pool[pkt];
  const uint32_t node = fab_.ports[in_port].node;
  const uint32_t out = fab_.egress(node, pk.src, pk.dst, pk.sport, pk.dport);
  if (out == Fabric::kNoRoute) return drop(pkt, kDropLinkDown, in_port);  // no route left after LINK_DOWN
  if (!fab_.ports[out].up) return drop(pkt, kDropLinkDown, out);
  if (kernel_.now() < fab_.ports[out].frozen_until) {
    // The egress belongs to a partition being skipped: control traffic of other flows passes it
    // (docs/architecture.md), a data packet is an interrupt nobody announced: it waits for the pull-back.
    if (pk.type != PktType::Data) return bypass(out, pkt, fab_.ports[out].queue_bytes[pk.pg]);
    return hold_for_pull_back(in_port, pkt, out);
  }
  const uint32_t c = pk.pg;
  if (c != 0) {
    const SwitchModel::Admit a = switch_.admit(in_port, c, pk.size);
    if (a == SwitchModel::Admit::Drop) return drop(pkt, kDropBuffer, in_port);
    if (a == SwitchModel::Admit::QueueAndPause) send_pfc(in_port, c, true);
  }
  // Not through `pk`: send_pfc above allocates a packet, and the pool may have grown (moved) since.
  Packet& queued = fab_.pool[pkt];
  queued.in_port = in_port;
  Port& o = fab_.ports[out];
  o.enqueue(c, pkt, queued.size);
  if (o.bytes_total > o.peak_mark) o.peak_mark = o.bytes_total;
  if (tracer_) trace(TraceEvent::Enqu, out, pkt, o.queue_bytes[c]);
  ledger_.queue_seen(o.bytes_total, out);
  kick(out);
}

void Network::send_pfc(uint32_t in_port, uint32_t cls, bool pause) {
  const uint32_t pkt = fab_.pool.alloc();
  Packet& pk = fab_.pool[pkt];
  pk.type = PktType::Pfc;
  pk.size = kPfcBytes;
  pk.pg = 0;
  pk.pfc_class = static_cast<uint8_t>(cls);
  pk.pfc_pause = pause && fab_.params.pfc_pause ? 1 : 0;
  Port& p = fab_.ports[in_port];
  if (!p.up) return fab_.pool.release(pkt);  // its link is down: the frame would never leave
  if (kernel_.now() < p.frozen_until) return bypass(in_port, pkt, p.queue_bytes[0]);
  p.enqueue(0, pkt, pk.size);
  if (tracer_) trace(TraceEvent::Enqu, in_port, pkt, p.queue_bytes[0]);
  kick(in_port);
}

void Network::kick(uint32_t port) {
  Port& p = fab_.ports[port];
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
  Port& p = fab_.ports[port];
  if (p.busy_until > kernel_.now() || !p.up || p.bytes_total == 0) return;
  const int cls = switch_.next_class(port);
  if (cls < 0) return;
  const uint32_t c = static_cast<uint32_t>(cls);
  const uint32_t pkt = p.dequeue(c, fab_.pool);
  const uint32_t size = fab_.pool[pkt].size;
  // At dequeue, in the reference's order: buffer release (and RESUME), then ECN on what is left.
  if (c != 0) release_ingress(pkt, c);
  // Taken after release_ingress: a RESUME it sends allocates a packet, which may grow (move) the pool.
  Packet& pk = fab_.pool[pkt];
  if (c != 0 && switch_.ecn_mark(port, c)) {
    pk.ecn = 1;
    ledger_.ecn_mark();
  }
  if (pk.type == PktType::Data) switch_.stamp_telemetry(port, pk, kernel_.now());
  p.tx_bytes += size;
  p.last_pkt_size = size;
  p.last_pkt_time = kernel_.now();
  transmit(port, pkt);
}

void Network::release_ingress(uint32_t pkt, uint32_t c) {
  const Packet& pk = fab_.pool[pkt];
  if (switch_.release(pk.in_port, c, pk.size)) send_pfc(pk.in_port, c, false);
}

}  // namespace wh
