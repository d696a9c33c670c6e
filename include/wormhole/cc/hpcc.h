// HPCC and HPCC-PINT, as the reference's rdma-hw (docs/network-model.md §13.2, §13.5).
#pragma once
#include "wormhole/net/cc.h"
#include "wormhole/net/pint.h"

namespace wh {

/// Parameters shared by HPCC and HPCC-PINT (rates in bit/s).
struct HpccParams {
  double eta = 0.95;                  ///< U_TARGET
  uint32_t max_stage = 5;             ///< MI_THRESH
  uint64_t rate_ai_bps = 50'000'000;  ///< RATE_AI (W_AI as a rate)
  uint64_t min_rate_bps = 100'000'000;
  bool fast_react = true;             ///< FAST_REACT
  bool multi_rate = true;             ///< MULTI_RATE
  bool sample_feedback = false;       ///< SAMPLE_FEEDBACK
  uint32_t int_multi = 1;             ///< INT_MULTI
  double pint_log_base = 1.05;        ///< PINT_LOG_BASE
  double pint_prob = 1.0;             ///< PINT_PROB
  uint64_t seed = 1;                  ///< PINT's ACK sampling stream
};

/// HPCC: per-hop utilisation from INT (txRate/B + min(qlen, qlen_prev)·NIC rate/(B·W)), EWMA over
/// the base RTT T, multiplicative decrease to η with additive increase W_AI, rate committed once
/// per RTT (the ACK passing lastUpdateSeq) and applied on every ACK with FAST_REACT. Rate changes
/// re-time the pacing (the reference's ChangeRate); the window follows with VAR_WIN.
class Hpcc final : public CongestionControl {
 public:
  explicit Hpcc(const HpccParams& p) : p_(p) {}
  const char* name() const override { return "hpcc"; }
  IntMode int_mode() const override { return IntMode::Hpcc; }
  void on_start(uint32_t id, Flow& f, CcHost& host) override;
  void on_ack(uint32_t id, Flow& f, const Packet& ack, CcHost& host) override;
  const HpccParams& params() const { return p_; }

 private:
  void update(uint32_t id, Flow& f, const Packet& ack, bool fast_react, CcHost& host);
  HpccParams p_;
};

/// HPCC-PINT: switches encode the path's maximum utilisation in a log-scale field; the sender
/// samples ACKs with PINT_PROB and applies HPCC's single-rate update with that U.
class HpccPint final : public CongestionControl {
 public:
  explicit HpccPint(const HpccParams& p) : p_(p) { codec_.log_base = p.pint_log_base; }
  const char* name() const override { return "hpcc-pint"; }
  IntMode int_mode() const override { return IntMode::Pint; }
  void on_start(uint32_t id, Flow& f, CcHost& host) override;
  void on_ack(uint32_t id, Flow& f, const Packet& ack, CcHost& host) override;

 private:
  HpccParams p_;
  PintCodec codec_;
};

}  // namespace wh
