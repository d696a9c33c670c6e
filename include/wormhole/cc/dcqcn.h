// DCQCN, Mellanox flavour, exactly as the reference's rdma-hw (docs/network-model.md §13.1).
#pragma once
#include "wormhole/net/cc.h"

namespace wh {

/// DCQCN parameters (from config.txt; times in ps, rates in bit/s).
struct DcqcnParams {
  Time alpha_interval = 55 * kUs;     ///< ALPHA_RESUME_INTERVAL
  Time decrease_interval = 4 * kUs;   ///< RATE_DECREASE_INTERVAL
  Time rp_timer = 1500 * kUs;         ///< RP_TIMER (rate-increase period)
  double g = 1.0 / 16;                ///< EWMA_GAIN
  uint32_t fast_recovery_times = 5;   ///< F
  uint64_t rate_ai_bps = 5'000'000;   ///< RATE_AI
  uint64_t rate_hai_bps = 50'000'000; ///< RATE_HAI
  uint64_t min_rate_bps = 100'000'000;
  bool clamp_target_rate = false;
};

/// Rate-based DCQCN: α EWMA timer, decrease check timer, timer-driven increase with fast
/// recovery (stage < F), additive increase (stage == F) and hyper increase (stage > F).
/// No byte counter. Timer slots: 0 α update, 1 decrease check, 2 rate increase.
class Dcqcn final : public CongestionControl {
 public:
  explicit Dcqcn(const DcqcnParams& p) : p_(p) {}
  const char* name() const override { return "dcqcn"; }
  void on_start(uint32_t id, Flow& f, CcHost& host) override;
  void on_ack(uint32_t id, Flow& f, const Packet& ack, CcHost& host) override;
  void on_timer(uint32_t id, Flow& f, int slot, CcHost& host) override;
  /// RP_TIMER plus RATE_DECREASE_INTERVAL: a decrease re-arms the increase timer, so after the
  /// last decrease a flow's rate stays flat for up to RP_TIMER before it rises again, and the
  /// decrease check that could have cut it runs every RATE_DECREASE_INTERVAL.
  Time update_period() const override { return p_.rp_timer + p_.decrease_interval; }
  const DcqcnParams& params() const { return p_; }

 private:
  DcqcnParams p_;
};

}  // namespace wh
