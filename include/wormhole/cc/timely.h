// TIMELY and DCTCP (rate-based, hardware style) as the reference's rdma-hw (docs/network-model.md §13.3–13.4).
#pragma once
#include "wormhole/net/cc.h"

namespace wh {

/// TIMELY parameters (the reference's RdmaHw attributes; times in ns, rates in bit/s).
struct TimelyParams {
  double alpha = 0.875;               ///< EWMA weight of the RTT difference
  double beta = 0.8;                  ///< multiplicative decrease factor
  uint64_t t_low_ns = 50'000;         ///< below: always increase
  uint64_t t_high_ns = 500'000;       ///< above: decrease by beta·(1 − T_high/rtt)
  uint64_t min_rtt_ns = 20'000;       ///< normalises the gradient
  uint64_t rate_ai_bps = 5'000'000;   ///< RATE_AI (δ)
  uint64_t rate_hai_bps = 50'000'000; ///< RATE_HAI, after 5 consecutive increases
  uint64_t min_rate_bps = 100'000'000;
};

/// TIMELY: RTT from the data packet's send timestamp echoed in the ACK, updated once per window
/// of data (ACK seq > lastUpdateSeq), no fast react; the rate just changes (no re-timing).
class Timely final : public CongestionControl {
 public:
  explicit Timely(const TimelyParams& p) : p_(p) {}
  const char* name() const override { return "timely"; }
  IntMode int_mode() const override { return IntMode::Timestamp; }
  void on_start(uint32_t id, Flow& f, CcHost& host) override;
  void on_ack(uint32_t id, Flow& f, const Packet& ack, CcHost& host) override;

 private:
  TimelyParams p_;
};

/// DCTCP parameters (bit/s).
struct DctcpParams {
  double g = 1.0 / 16;                    ///< EWMA_GAIN
  uint64_t rate_ai_bps = 1'000'000'000;   ///< DCTCP_RATE_AI, per batch of ACKs (≈ one RTT)
  uint64_t min_rate_bps = 100'000'000;
  uint32_t mtu = 1000;                    ///< PACKET_PAYLOAD_SIZE, bytes (batch size in packets)
};

/// DCTCP, rate-based: α EWMA over the fraction of ECN-echo ACKs per batch (one window of data),
/// a cut R·(1 − α/2) on an echo outside CWR, and +DCTCP_RATE_AI per new batch outside CWR.
class Dctcp final : public CongestionControl {
 public:
  explicit Dctcp(const DctcpParams& p) : p_(p) {}
  const char* name() const override { return "dctcp"; }
  void on_start(uint32_t id, Flow& f, CcHost& host) override;
  void on_ack(uint32_t id, Flow& f, const Packet& ack, CcHost& host) override;

 private:
  DctcpParams p_;
};

}  // namespace wh
