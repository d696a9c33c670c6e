// CC_MODE -> implementation (docs/network-model.md §1, §13).
#include "wormhole/cc/factory.h"

#include "wormhole/cc/dcqcn.h"
#include "wormhole/cc/hpcc.h"
#include "wormhole/cc/timely.h"
#include "wormhole/core/input_error.h"

namespace wh {

namespace {
class NoCc final : public CongestionControl {
 public:
  const char* name() const override { return "none"; }
  void on_start(uint32_t, Flow& f, CcHost&) override { f.cc = NoCcState{}; }
  void on_ack(uint32_t, Flow&, const Packet&, CcHost&) override {}
};

Time us(double v) { return static_cast<Time>(v * 1e6 + 0.5); }

// Settings the reference accepts but that silently break a CC (a division by zero, a rate of 0).
void check_cc_settings(const SimConfig& cfg) {
  auto fail = [&](const char* key, const std::string& problem, const std::string& fix) {
    const auto [file, line] = cfg.origin_of(key);
    throw InputError(file, line, problem, fix);
  };
  const int m = cfg.cc_mode;
  const bool rate_based = m == 1 || m == 3 || m == 7 || m == 8 || m == 10;
  if (rate_based && cfg.min_rate_bps == 0)
    fail("MIN_RATE", "MIN_RATE is 0: a flow cut to it would never send again", "give MIN_RATE > 0, e.g. 1000Mb/s");
  if ((m == 3 || m == 10) && !(cfg.u_target > 0))
    fail("U_TARGET", "U_TARGET must be > 0 with HPCC (the rate is divided by U/U_TARGET)", "use e.g. U_TARGET 0.95");
  if (m == 3 && !cfg.has_win)
    fail("HAS_WIN", "HPCC (CC_MODE 3) with HAS_WIN 0: its utilisation divides the queue by the window, which is then 0",
         "set HAS_WIN 1 (run.py's hp uses HAS_WIN 1 and VAR_WIN 1)");
  if (m == 10 && !(cfg.pint_log_base > 1))
    fail("PINT_LOG_BASE", "PINT_LOG_BASE must be > 1 (it is the base of PINT's logarithmic code)",
         "use e.g. PINT_LOG_BASE 1.05");
}
}  // namespace

std::unique_ptr<CongestionControl> make_cc(const SimConfig& cfg, std::string* warning) {
  check_cc_settings(cfg);
  switch (cfg.cc_mode) {
    case 1: {
      // A zero period would re-arm a timer at the same instant forever (the reference hangs).
      // Periods below ns-3's 1 ns resolution would re-arm the timer at the same instant forever.
      for (auto [key, v] : {std::pair{"RP_TIMER", cfg.rp_timer_us}, {"ALPHA_RESUME_INTERVAL", cfg.alpha_resume_interval_us},
                            {"RATE_DECREASE_INTERVAL", cfg.rate_decrease_interval_us}})
        if (!(us(v) >= kNs)) {
          const auto [file, line] = cfg.origin_of(key);
          throw InputError(file, line, std::string(key) + (cfg.key_origin.count(key) ? " is below 1 ns" : " is not set (default 0)") +
                                           " with CC_MODE 1 (DCQCN): its timer would fire forever at one instant",
                           std::string("set ") + key + " to a period in us > 0 (run.py uses RP_TIMER 300, "
                           "ALPHA_RESUME_INTERVAL 1, RATE_DECREASE_INTERVAL 4)");
        }
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
    case 3:
    case 10: {
      HpccParams p;
      p.eta = cfg.u_target;
      p.max_stage = cfg.mi_thresh;
      p.rate_ai_bps = cfg.rate_ai_bps;
      p.min_rate_bps = cfg.min_rate_bps;
      p.fast_react = cfg.fast_react;
      p.multi_rate = cfg.multi_rate;
      p.sample_feedback = cfg.sample_feedback;
      p.int_multi = cfg.int_multi;
      p.pint_log_base = cfg.pint_log_base;
      p.pint_prob = cfg.pint_prob;
      p.seed = cfg.seed;
      if (cfg.cc_mode == 3) return std::make_unique<Hpcc>(p);
      return std::make_unique<HpccPint>(p);
    }
    case 7: {
      TimelyParams p;
      p.rate_ai_bps = cfg.rate_ai_bps;
      p.rate_hai_bps = cfg.rate_hai_bps;
      p.min_rate_bps = cfg.min_rate_bps;
      return std::make_unique<Timely>(p);
    }
    case 8: {
      if (warning && cfg.ewma_gain == 0)
        *warning = "EWMA_GAIN is 0 with DCTCP (CC_MODE 8): alpha stays at 1 and every cut halves the rate "
                   "(run.py uses EWMA_GAIN 0.0625)";
      DctcpParams p;
      p.g = cfg.ewma_gain;
      p.rate_ai_bps = cfg.dctcp_rate_ai_bps;
      p.min_rate_bps = cfg.min_rate_bps;
      p.mtu = cfg.packet_payload_size;
      return std::make_unique<Dctcp>(p);
    }
    default:
      if (warning)
        *warning = "CC_MODE " + std::to_string(cfg.cc_mode) +
                   " is not a CC of the reference (1 DCQCN, 3 HPCC, 7 TIMELY, 8 DCTCP, 10 HPCC-PINT): running "
                   "without congestion control at line rate, as the reference does";
      return std::make_unique<NoCc>();
  }
}

size_t cc_state_kind(int cc_mode) {
  switch (cc_mode) {
    case 1: return CcState(std::in_place_type<DcqcnState>).index();
    case 3: return CcState(std::in_place_type<HpccState>).index();
    case 7: return CcState(std::in_place_type<TimelyState>).index();
    case 8: return CcState(std::in_place_type<DctcpState>).index();
    case 10: return CcState(std::in_place_type<HpccPintState>).index();
    default: return CcState(std::in_place_type<NoCcState>).index();
  }
}

std::string cc_display_name(int cc_mode) {
  const char* name = cc_mode == 1    ? "DCQCN"
                     : cc_mode == 3  ? "HPCC"
                     : cc_mode == 7  ? "TIMELY"
                     : cc_mode == 8  ? "DCTCP"
                     : cc_mode == 10 ? "HPCC-PINT"
                                     : "none, line rate";
  return std::string(name) + " (CC_MODE " + std::to_string(cc_mode) + ")";
}

}  // namespace wh
