// The settings in force for a run, defaults included, as text (HDF5 /run/settings).
#include <fmt/core.h>

#include "wormhole/io/hpcc_config.h"

namespace wh {

std::vector<std::pair<std::string, std::string>> effective_settings(const SimConfig& c) {
  std::vector<std::pair<std::string, std::string>> s;
  auto add = [&](const char* k, const std::string& v) { s.emplace_back(k, v); };
  auto num = [](double v) { return fmt::format("{}", v); };
  auto u = [](uint64_t v) { return std::to_string(v); };
  auto rate = [](uint64_t bps) { return std::to_string(bps) + "bps"; };
  add("ENABLE_QCN", u(c.enable_qcn));
  add("USE_DYNAMIC_PFC_THRESHOLD", u(c.use_dynamic_pfc_threshold));
  add("PAUSE_TIME", num(c.pause_time_us));
  add("PACKET_PAYLOAD_SIZE", u(c.packet_payload_size));
  add("TOPOLOGY_FILE", c.topology_file);
  add("FLOW_FILE", c.flow_file);
  add("TRACE_FILE", c.trace_file);
  add("TRACE_OUTPUT_FILE", c.trace_output_file);
  add("FCT_OUTPUT_FILE", c.fct_output_file);
  add("PFC_OUTPUT_FILE", c.pfc_output_file);
  add("SIMULATOR_STOP_TIME", num(c.simulator_stop_time_s));
  add("CC_MODE", std::to_string(c.cc_mode));
  add("ALPHA_RESUME_INTERVAL", num(c.alpha_resume_interval_us));
  add("RATE_DECREASE_INTERVAL", num(c.rate_decrease_interval_us));
  add("CLAMP_TARGET_RATE", u(c.clamp_target_rate));
  add("RP_TIMER", num(c.rp_timer_us));
  add("EWMA_GAIN", num(c.ewma_gain));
  add("FAST_RECOVERY_TIMES", u(c.fast_recovery_times));
  add("RATE_AI", rate(c.rate_ai_bps));
  add("RATE_HAI", rate(c.rate_hai_bps));
  add("MIN_RATE", rate(c.min_rate_bps));
  add("DCTCP_RATE_AI", rate(c.dctcp_rate_ai_bps));
  add("ERROR_RATE_PER_LINK", num(c.error_rate_per_link));
  add("L2_CHUNK_SIZE", u(c.l2_chunk_size));
  add("L2_ACK_INTERVAL", u(c.l2_ack_interval));
  add("L2_BACK_TO_ZERO", u(c.l2_back_to_zero));
  add("HAS_WIN", u(c.has_win));
  add("GLOBAL_T", u(c.global_t));
  add("VAR_WIN", u(c.var_win));
  add("FAST_REACT", u(c.fast_react));
  add("U_TARGET", num(c.u_target));
  add("MI_THRESH", u(c.mi_thresh));
  add("INT_MULTI", u(c.int_multi));
  add("MULTI_RATE", u(c.multi_rate));
  add("SAMPLE_FEEDBACK", u(c.sample_feedback));
  add("PINT_LOG_BASE", num(c.pint_log_base));
  add("PINT_PROB", num(c.pint_prob));
  add("RATE_BOUND", u(c.rate_bound));
  add("ACK_HIGH_PRIO", u(c.ack_high_prio));
  add("LINK_DOWN", fmt::format("{} {} {}", c.link_down_us, c.link_down_a, c.link_down_b));
  add("ENABLE_TRACE", u(c.enable_trace));
  std::string kmin = std::to_string(c.ecn.size()), kmax = kmin, pmax = kmin;
  for (const auto& [r, e] : c.ecn) {
    kmin += fmt::format(" {} {}", r, e.kmin_bytes / 1000);
    kmax += fmt::format(" {} {}", r, e.kmax_bytes / 1000);
    pmax += fmt::format(" {} {}", r, e.pmax);
  }
  add("KMAX_MAP", kmax);
  add("KMIN_MAP", kmin);
  add("PMAX_MAP", pmax);
  add("BUFFER_SIZE", num(c.buffer_size_mb));
  add("QLEN_MON_FILE", c.qlen_mon_file);
  add("QLEN_MON_START", u(c.qlen_mon_start_ns));
  add("QLEN_MON_END", u(c.qlen_mon_end_ns));
  add("PORT_MON", u(c.port_mon));
  add("PORT_MON_INTERVAL", u(c.port_mon_interval_ns));
  add("PORT_MON_START", u(c.port_mon_start_ns));
  add("PORT_MON_END", u(c.port_mon_end_ns));
  std::string nodes = c.port_mon_nodes;
  if (nodes == "list") {
    nodes = std::to_string(c.port_mon_node_ids.size());
    for (uint32_t n : c.port_mon_node_ids) nodes += fmt::format(" {}", n);
  }
  add("PORT_MON_NODES", nodes);
  add("BW_MON_FILE", c.bw_mon_file);
  add("RATE_MON_FILE", c.rate_mon_file);
  add("CNP_MON_FILE", c.cnp_mon_file);
  add("MON_START", u(c.mon_start_us));
  add("MON_END", u(c.mon_end_us));
  add("BW_MON_INTERVAL", u(c.bw_mon_interval_us));
  add("QP_MON_INTERVAL", u(c.qp_mon_interval_us));
  add("RTO_US", num(c.rto_us));
  add("NS_TRUNCATION", u(c.ns_truncation));
  add("PFC_LOSSLESS_HEADROOM", u(c.pfc_lossless_headroom));
  add("SEED", u(c.seed));
  add("EVENT_ORDER", c.portable_order ? "portable" : "reference");
  add("WORMHOLE", u(c.wormhole.enabled));
  if (c.wormhole.enabled) {
    add("WORMHOLE_THETA", num(c.wormhole.theta));
    add("WORMHOLE_WINDOW", u(c.wormhole.window));
    add("WORMHOLE_LINE_RATE_WINDOW", u(c.wormhole.line_rate_window));
    add("WORMHOLE_SAMPLE_INTERVAL_US", num(double(c.wormhole.sample_interval) / kUs));
    add("WORMHOLE_FAST_FORWARD", u(c.wormhole.fast_forward));
    add("WORMHOLE_SKIP_BACK", u(c.wormhole.skip_back));
    add("WORMHOLE_THREADS", u(c.wormhole.threads));
    add("WORMHOLE_MEMO", u(c.wormhole.memo));
    add("WORMHOLE_MEMO_RATE_QUANTUM_GBPS", num(double(c.wormhole.memo_rate_quantum_bps) / 1e9));
    add("WORMHOLE_VERIFY", num(c.wormhole.verify));
    add("WORMHOLE_ERROR_BOUND", num(c.wormhole.error_bound));
    add("WORMHOLE_COLLECTIVE_MEMO", u(c.wormhole.collective_memo));
  }
  return s;
}

}  // namespace wh
