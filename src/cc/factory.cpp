// CC_MODE -> implementation (hpcc-model.md §1, §13).
#include "wormhole/cc/factory.h"

#include "wormhole/cc/dcqcn.h"
#include "wormhole/io/input_error.h"

namespace wh {

namespace {
class NoCc final : public CongestionControl {
 public:
  const char* name() const override { return "none"; }
  void on_start(uint32_t, Flow& f, CcHost&) override { f.cc = NoCcState{}; }
  void on_ack(uint32_t, Flow&, const Packet&, CcHost&) override {}
};

Time us(double v) { return static_cast<Time>(v * 1e6 + 0.5); }
}  // namespace

std::unique_ptr<CongestionControl> make_cc(const SimConfig& cfg, std::string* warning) {
  switch (cfg.cc_mode) {
    case 1: {
      // A zero period would re-arm a timer at the same instant forever (the reference hangs).
      for (auto [key, v] : {std::pair{"RP_TIMER", cfg.rp_timer_us}, {"ALPHA_RESUME_INTERVAL", cfg.alpha_resume_interval_us},
                            {"RATE_DECREASE_INTERVAL", cfg.rate_decrease_interval_us}})
        if (!(v > 0))
          throw InputError(cfg.path, 0, std::string(key) + " is " + std::to_string(v) + " with CC_MODE 1 (DCQCN)",
                           std::string("set ") + key + " to a period in µs > 0 (run.py uses RP_TIMER 300, "
                           "ALPHA_RESUME_INTERVAL 1, RATE_DECREASE_INTERVAL 4)");
      DcqcnParams p;
      p.alpha_interval = us(cfg.alpha_resume_interval_us);
      p.decrease_interval = us(cfg.rate_decrease_interval_us);
      p.rp_timer = us(cfg.rp_timer_us);
      p.g = cfg.ewma_gain;
      p.fast_recovery_times = cfg.fast_recovery_times;
      p.rate_ai_bps = cfg.rate_ai_bps;
      p.rate_hai_bps = cfg.rate_hai_bps;
      p.min_rate_bps = cfg.min_rate_bps;
      p.clamp_target_rate = cfg.clamp_target_rate;
      return std::make_unique<Dcqcn>(p);
    }
    default:
      if (warning)
        *warning = "CC_MODE " + std::to_string(cfg.cc_mode) +
                   (cfg.cc_mode == 3 || cfg.cc_mode == 7 || cfg.cc_mode == 8 || cfg.cc_mode == 10
                        ? " is not implemented yet: running without congestion control (line rate)"
                        : " is not a CC of the reference: running without congestion control (line rate), as the reference does");
      return std::make_unique<NoCc>();
  }
}

}  // namespace wh
