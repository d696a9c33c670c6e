// Packets and their pool: plain records addressed by 32-bit index, never heap-allocated one by one.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "wormhole/core/time.h"
#include "wormhole/net/int_header.h"

namespace wh {

enum class PktType : uint8_t { Data = 0, Ack = 1, Nack = 2, Pfc = 3 };

/// Wire sizes of the reference model (docs/network-model.md §7), bytes.
constexpr uint32_t kDataHeaderBytes = 48;  ///< 14 PPP + 20 IPv4 + 8 UDP + 6 (seq, pg)
constexpr uint32_t kAckMinBytes = 60;      ///< ACK/NACK padded to at least this
constexpr uint32_t kAckHeaderBytes = 46;   ///< 14 + 20 + 12 (sport, dport, flags, pg, seq)
constexpr uint32_t kPfcBytes = 43;         ///< 14 + 20 + 9 (time, qlen, class)
constexpr uint32_t kClasses = 8;           ///< priority classes per port; class 0 = control

/// One packet in flight or in a queue.
struct Packet {
  uint64_t seq = 0;       ///< data: first payload byte offset; ACK/NACK: next expected byte
  Time ts = 0;            ///< data: time it left the QP (ps), echoed in its ACK
  uint32_t flow = 0;      ///< flow id (data/ACK/NACK)
  uint32_t size = 0;      ///< wire bytes
  uint32_t payload = 0;   ///< data payload bytes
  uint32_t src = 0;       ///< sending host (data: flow source; ACK: flow destination)
  uint32_t dst = 0;       ///< receiving host
  uint32_t in_port = 0;   ///< ingress port (global index) at the switch holding it
  uint16_t sport = 0, dport = 0;  ///< this packet's own ports (ACKs have them swapped)
  PktType type = PktType::Data;
  uint8_t pg = 3;         ///< priority class
  uint8_t ecn = 0;        ///< CE mark (set by a switch at dequeue)
  uint8_t cnp = 0;        ///< ACK/NACK: the ECN echo flag (the reference's CNP)
  uint8_t pfc_class = 0;  ///< PFC: class to pause/resume
  uint8_t pfc_pause = 0;  ///< PFC: 1 pause, 0 resume
  uint8_t retx = 0;       ///< data sent after a retransmission timeout (ours, see RTO_US)
  IntHeader ih;           ///< INT written by switches into data packets, copied into their ACK
  /// Fast-forward: the clock offset of its flow (Flow::clock_offset) this packet's times are in.
  /// A packet that was outside its partition's ports when the partition moved is behind by the
  /// difference and is held that long when it next reaches a host (or a switch during a skip).
  Time offset = 0;

  /// Back to a fresh packet without clearing the INT hop records: they are written before they
  /// are read (nhop counts them), and zeroing them would cost a 100-byte memset per packet.
  void reset() {
    seq = 0;
    ts = 0;
    flow = size = payload = src = dst = in_port = 0;
    sport = dport = 0;
    type = PktType::Data;
    pg = 3;
    ecn = cnp = pfc_class = pfc_pause = retx = 0;
    ih.nhop = 0;
    ih.pint_power = 0;
    offset = 0;
  }
  /// Moves the absolute times the packet carries by `delta` ps (its flow's clock moved, see
  /// Network::shift): the send timestamp and the INT hop times. INT times are 24-bit ns counters
  /// (IntHop::kTimeBits), moved by whole ns modulo 2^24 so that every difference between them is
  /// kept. `offset` is left to the caller: it names the clock the times are in, which a held
  /// packet's delivery moves without changing.
  void shift_times(Time delta) {
    ts += delta;
    const uint32_t d = static_cast<uint32_t>(static_cast<int64_t>(delta / kNs));
    const uint32_t n = ih.nhop < IntHeader::kMaxHops ? ih.nhop : IntHeader::kMaxHops;
    for (uint32_t i = 0; i < n; ++i) ih.hop[i].time = (ih.hop[i].time + d) & ((1u << IntHop::kTimeBits) - 1);
  }
};
// reset() lists every field and shift_times() every absolute time: a new field must be added to the
// first and, if it holds a time, to the second (and to tests/unit/test_shift_times.cpp).
static_assert(sizeof(Packet) == 192,
              "a Packet field was added or removed: update Packet::reset() and Packet::shift_times()");

/// Fixed-record pool with a free list; indices stay valid until release().
class PacketPool {
 public:
  uint32_t alloc() {
    if (free_.empty()) {
      pkts_.emplace_back();
      return static_cast<uint32_t>(pkts_.size() - 1);
    }
    const uint32_t i = free_.back();
    free_.pop_back();
    pkts_[i].reset();
    return i;
  }
  void release(uint32_t i) { free_.push_back(i); }
  Packet& operator[](uint32_t i) { return pkts_[i]; }
  const Packet& operator[](uint32_t i) const { return pkts_[i]; }
  size_t live() const { return pkts_.size() - free_.size(); }
  /// Where packet `i` (< capacity()) lies, live or not: for prefetching.
  const Packet* address(uint32_t i) const { return pkts_.data() + i; }
  /// Calls f(const Packet&) for every packet allocated now (not released), in index order: O(capacity),
  /// for occasional scans, not per event.
  template <class F>
  void for_each_live(F&& f) const {
    std::vector<bool> released(pkts_.size(), false);
    for (uint32_t i : free_) released[i] = true;
    for (size_t i = 0; i < pkts_.size(); ++i)
      if (!released[i]) f(pkts_[i]);
  }
  size_t capacity() const { return pkts_.size(); }

 private:
  std::vector<Packet> pkts_;
  std::vector<uint32_t> free_;
};

}  // namespace wh
