// In-band network telemetry carried by data packets and echoed in ACKs (docs/network-model.md §7, §10).
#pragma once
#include <cstdint>

namespace wh {

/// What switches write into data packets, chosen by the CC (the reference's IntHeader::mode).
enum class IntMode : uint8_t { None, Hpcc, Pint, Timestamp };

/// One hop's record, quantised as the reference does: time in 24-bit ns (wraps), tx bytes in
/// 20-bit units of 128 B × INT_MULTI (wraps), queue in 17-bit units of 80 B × INT_MULTI (bits
/// above 17 are lost, as in the reference's bit field). The link rate is kept exactly in bit/s:
/// the reference encodes only 25/50/100/200/400 Gb/s and reads any other rate as 25 Gb/s, which
/// wrecks HPCC on 800 Gb/s and faster ports (a deliberate difference).
struct IntHop {
  static constexpr uint32_t kTimeBits = 24, kBytesBits = 20, kQlenBits = 17;
  static constexpr uint32_t kByteUnit = 128, kQlenUnit = 80;
  uint32_t time = 0, bytes = 0, qlen = 0;
  uint64_t rate_bps = 0;

  void set(uint64_t now_ns, uint64_t tx_bytes, uint64_t qlen_bytes, uint64_t rate, uint32_t multi) {
    time = static_cast<uint32_t>(now_ns & ((1u << kTimeBits) - 1));
    bytes = static_cast<uint32_t>((tx_bytes / (kByteUnit * multi)) & ((1u << kBytesBits) - 1));
    qlen = static_cast<uint32_t>((qlen_bytes / (kQlenUnit * multi)) & ((1u << kQlenBits) - 1));
    rate_bps = rate;
  }
  uint64_t qlen_bytes(uint32_t multi) const { return uint64_t(qlen) * kQlenUnit * multi; }
  /// Bytes sent since record `b` (handles one wrap), bytes.
  uint64_t bytes_since(const IntHop& b, uint32_t multi) const {
    const uint64_t d = bytes >= b.bytes ? bytes - b.bytes : bytes + (1u << kBytesBits) - b.bytes;
    return d * kByteUnit * multi;
  }
  /// Time since record `b` (handles one wrap), ns.
  uint64_t ns_since(const IntHop& b) const {
    return time >= b.time ? time - b.time : time + (1u << kTimeBits) - b.time;
  }
};

/// The INT header: up to 5 hop records (further hops overwrite from the start while the count
/// keeps growing; a receiver ignores feedback with more than 5 hops), or the PINT power field.
struct IntHeader {
  static constexpr uint32_t kMaxHops = 5;
  IntHop hop[kMaxHops];
  uint16_t nhop = 0;
  uint16_t pint_power = 0;  ///< HPCC-PINT: encoded max utilisation along the path
  void push(uint64_t now_ns, uint64_t tx_bytes, uint64_t qlen_bytes, uint64_t rate, uint32_t multi) {
    hop[nhop % kMaxHops].set(now_ns, tx_bytes, qlen_bytes, rate, multi);
    ++nhop;
  }
};

}  // namespace wh

