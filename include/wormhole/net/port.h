// Ports (one per interface; a link is a pair of ports) and nodes.
#pragma once
#include <cstdint>
#include <vector>

#include "wormhole/core/event.h"
#include "wormhole/core/ring.h"
#include "wormhole/core/rng.h"
#include "wormhole/core/time.h"
#include "wormhole/net/packet.h"

namespace wh {

/// Switch MMU constants (docs/network-model.md §11.1), bytes.
constexpr uint64_t kReserveBytes = 4096;  ///< per (ingress port, class)
constexpr uint64_t kResumeOffset = 3072;

/// A packet on the wire: it reaches the far end at `arrive` (ps).
struct WireSlot {
  Time arrive;
  Cause cause;  ///< the arrival event's cause: the transmission start
  uint32_t pkt;
};

/// Moves the arrival times of the packets on `wire`, and their events' causes, by `delta` ps (fast-forward's
/// clock shift of the wire's partition).
inline void shift_wire_times(Ring<WireSlot>& wire, Time delta) {
  for (uint32_t i = 0; i < wire.size(); ++i) {
    WireSlot& s = wire.at(i);
    s.arrive += delta;
    s.cause.origin += delta;
  }
}

/// The far end of a cut link as the rank at the near end keeps it (a distributed run): the packets the
/// far end's rank sent on the link, queued until they arrive here. The sending port's state is its own
/// rank's; this is all of it the receiving rank needs. (A whole Port here would cost 768 B, and a page of
/// the ports' address space among the other rank's ports: 67–76 MiB a rank on a 131,072-GPU fabric cut in
/// two.) Its arrival events are the sending port's, as in one process: target `sender`, aux `epoch`.
struct CutWire {
  Ring<WireSlot> wire;    ///< transmitted by the far end, not yet arrived
  uint32_t sender = 0;    ///< global index of the far end's port
  uint32_t receiver = 0;  ///< global index of this rank's port at the near end
  /// As the sending port's Port::epoch: moved wherever that port's is (Network::shift), so that its
  /// arrival events carry the same aux in every process.
  uint16_t epoch = 0;
  /// Fast-forward moved the sending port's partition's clock by `delta` ps: the packets' arrivals and
  /// their events' causes (as Port::shift_times does for a port's wire).
  void shift_times(Time delta) { shift_wire_times(wire, delta); }
};

/// How one interface is wired. The fabric keeps one for every port in every process: routes, paths,
/// the partitioning and the outputs read them, where a Port's state exists only where it is
/// simulated (PortArray). A Port repeats the fields its packet path reads.
struct PortLink {
  uint64_t rate_bps = 0;  ///< link rate, bit/s
  Time delay = 0;         ///< propagation delay, ps
  double error_rate = 0;  ///< drop probability of packets received by this port
  uint32_t node = 0;      ///< owning node
  uint32_t peer = 0;      ///< global index of the port at the other end of the link
  uint32_t if_index = 0;  ///< 1-based interface index on the node (file order)
  bool up = true;         ///< false once LINK_DOWN took the link down
};

/// One interface of a node and the transmit direction of its link. It holds the egress queues
/// (8 classes), the packets on the wire (a FIFO: one pending arrival event per port at a time),
/// the PFC state received from the peer, and, on switches, the MMU's per-ingress counters of
/// packets that arrived through this port.
struct alignas(64) Port {
  // Fields are grouped by how often the per-packet path touches them, hottest first, and the struct
  // starts on a cache line: at 1,024 GPUs the ports (several MB) no longer fit the core's cache, and
  // each line a packet's hop reads is a miss.

  // Every transmission, arrival and end of transmission.
  Time busy_until = 0;      ///< ps: serializing a packet until then
  Time frozen_until = 0;    ///< ps; fast-forward, below
  uint64_t bytes_total = 0; ///< queued, all classes
  uint64_t rate_bps = 0;    ///< link rate, bit/s
  Time delay = 0;           ///< propagation delay, ps
  uint32_t node = 0;        ///< owning node
  uint32_t peer = 0;        ///< global index of the port at the other end of the link
  // Fast-forward (src/ffwd): the port's pending events carry `epoch` in their aux field; shifting
  // the port's events bumps it, so the events left behind at the old times are ignored. While
  // now < frozen_until the port belongs to a partition that is being skipped.
  uint16_t epoch = 0;
  bool up = true;
  bool cut = false;         ///< distributed run: the peer's node is on another rank (set once at wire-up)
  bool txdone_pending = false;  ///< a kTxDone event is scheduled at busy_until
  uint8_t rr_last = 0;      ///< switch: last class served (round robin)
  uint8_t pfc_shift = 3;    ///< switch ingress: the dynamic PFC threshold's shift
  bool paused[kClasses] = {};  ///< PFC pause received from the peer, per class

  Cause tx_cause;           ///< the end-of-transmission event's cause (scheduled lazily on switches)
  uint64_t tx_bytes = 0;    ///< bytes sent (all packets), for INT
  uint64_t sent_bytes = 0;  ///< every byte this port has started to transmit (all packets; monitors and islands read it)
  Time last_pkt_time = 0;          ///< HPCC-PINT: when the previous packet was sent, ps
  uint32_t last_pkt_size = 0;      ///< HPCC-PINT: the previous packet sent, bytes
  uint32_t if_index = 0;    ///< 1-based interface index on the node (file order)
  double error_rate = 0;    ///< drop probability of packets received by this port

  Ring<WireSlot> wire;      ///< transmitted, not yet arrived
  // Switch egress: ECN thresholds for this port's rate (bytes) and probability.
  uint64_t kmin = 0, kmax = 0;
  double pmax = 0;
  mutable uint64_t peak_mark = 0;  ///< switch: the largest bytes_total since a monitor last reset it (monitors read it)
  uint64_t queue_bytes[kClasses] = {};
  Ring<uint32_t> queue[kClasses];  ///< egress FIFOs; a host NIC keeps its ACK queue in class 0

  // Switch ingress accounting (docs/network-model.md §11), for packets that arrived through this port.
  uint64_t headroom = 0;
  bool pause_sent[kClasses] = {};
  uint64_t ingress_bytes[kClasses] = {};
  uint64_t hdrm_bytes[kClasses] = {};

  // Host NIC: the QPs it serves (round robin) and its pacing retry timer.
  std::vector<uint32_t> qps;
  uint32_t rr_qp = 0;
  Time wake_at = -1;  ///< pending retry time, -1 = none (the reference's m_nextSend)
  Cause wake_cause;   ///< the pending retry event's cause (a fast-forward re-schedules it)

  Rng rng;  ///< ECN marking and receive errors

  // Not touched by a hop without HPCC-PINT or a PFC pause: PINT's estimate (every dequeue under PINT), and
  // the pause time monitors and the collective memo read (written when a pause starts or ends).
  double pint_u = 0;               ///< HPCC-PINT: the port's utilisation estimate
  Time paused_total = 0;    ///< ps with some class paused by the peer's PFC, up to paused_since
  Time paused_since = -1;   ///< ps: some class paused since then (-1: none)
  /// Distributed run, a cut port: its slot in Fabric::cut_wires, the wire of the link's other direction
  /// (packets the far end's rank sends here); UINT32_MAX otherwise.
  uint32_t cut_wire = UINT32_MAX;
  /// Unused: the fields fill 764 bytes, and with these the struct fills its 12 cache lines exactly,
  /// so a new field grows it and trips the size check below (alignment alone would pad a new 4-byte
  /// field into the same 768 bytes unnoticed).
  uint32_t spare_ = 0;

  /// Appends packet `pkt` of `size` bytes to class `c`.
  void enqueue(uint32_t c, uint32_t pkt, uint32_t size) {
    queue[c].push(pkt);
    queue_bytes[c] += size;
    bytes_total += size;
  }
  /// Fast-forward moved the clock of the partition this port belongs to by `delta` ps
  /// (Network::shift): moves every absolute time the port keeps for the model — the end of the
  /// transmission in progress, the packets' arrivals on the wire, the NIC's retry time, HPCC-PINT's
  /// last send — and the causes of their pending events (so their keys, and the order of events at
  /// equal times, are those they would have had). Re-scheduling those events and moving the packets'
  /// own times are the caller's. The monitors' `paused_since` stays: pause time is counted in global
  /// time, across the skip.
  void shift_times(Time delta) {
    busy_until += delta;
    tx_cause.origin += delta;
    shift_wire_times(wire, delta);
    if (wake_at >= 0) {
      wake_at += delta;
      wake_cause.origin += delta;
    }
    last_pkt_time += delta;
  }
  /// Removes the head of class `c` (precondition: not empty) and returns it.
  uint32_t dequeue(uint32_t c, const PacketPool& pool) {
    const uint32_t pkt = queue[c].pop();
    queue_bytes[c] -= pool[pkt].size;
    bytes_total -= pool[pkt].size;
    return pkt;
  }
};

// Port::shift_times() lists every absolute time: a new field that holds one must be added there (and
// to tests/unit/test_shift_times.cpp).
static_assert(sizeof(Port) == 768 && sizeof(WireSlot) == 40,
              "a Port or WireSlot field was added or removed: decide whether Port::shift_times() moves it");

/// RED-like ECN marking probability at dequeue (docs/network-model.md §11.3): 1 above K_max, a linear
/// ramp to p_max between K_min and K_max, 0 at or below K_min. `q` = the class's egress bytes
/// after the departing packet left; thresholds in bytes.
inline double ecn_mark_probability(uint64_t q, uint64_t kmin, uint64_t kmax, double pmax) {
  if (q > kmax) return 1.0;
  if (q > kmin) return pmax * double(q - kmin) / double(kmax - kmin);
  return 0.0;
}

/// A host or a switch; its ports are ports[first_port .. first_port + num_ports).
struct Node {
  bool is_switch = false;
  bool is_nvswitch = false;  ///< an NVSwitch: a switch that never ECN-marks, preferred by routing
  uint32_t first_port = 0, num_ports = 0;
  // Switch shared buffer (docs/network-model.md §11.1), bytes.
  uint64_t buffer_bytes = 0, total_hdrm = 0, total_rsrv = 0, shared_used = 0;
  uint64_t shared_peak = 0;  ///< highest shared_used since the collective memo last read it (Network::take_shared_peak)
};

}  // namespace wh
