// The settings a run is made of: the HPCC ns-3 config.txt keys with the reference's defaults, plus
// ours (docs/network-model.md §1). Plain values: io/hpcc_config.h reads them, the model reads them.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "wormhole/config/wormhole_settings.h"
#include "wormhole/core/time.h"

namespace wh {

/// ECN marking thresholds of one link rate (KMIN_MAP / KMAX_MAP / PMAX_MAP, docs/network-model.md §11.3).
struct EcnThresholds {
  uint64_t kmin_bytes = 0;  ///< K_min in bytes (the config gives units of 1000 B)
  uint64_t kmax_bytes = 0;  ///< K_max in bytes
  double pmax = 0;          ///< marking probability at K_max
};

/// Every setting of the reference's config.txt, with the reference program's defaults
/// (docs/network-model.md §1; "broken" defaults are kept as the reference has them), plus wormhole's
/// own extensions (marked "ours"). Units are in the member names.
struct SimConfig {
  // --- reference keys ---
  bool enable_qcn = true;                  ///< ENABLE_QCN: ECN marking at switch dequeue
  bool use_dynamic_pfc_threshold = true;   ///< USE_DYNAMIC_PFC_THRESHOLD (read, unused, as the reference)
  double pause_time_us = 5;                ///< PAUSE_TIME: only non-zero matters
  std::string data_rate, link_delay;       ///< DATA_RATE, LINK_DELAY: parsed and ignored
  uint32_t packet_payload_size = 1000;     ///< PACKET_PAYLOAD_SIZE, bytes
  uint32_t l2_chunk_size = 0;              ///< L2_CHUNK_SIZE, bytes
  uint32_t l2_ack_interval = 0;            ///< L2_ACK_INTERVAL, bytes
  bool l2_back_to_zero = false;            ///< L2_BACK_TO_ZERO
  std::string topology_file, flow_file, trace_file;  ///< resolved paths
  /// The folder relative input and output paths were resolved against: the config's when its
  /// TOPOLOGY_FILE is found there, else "" (the working folder, as the reference).
  std::string inputs_dir;
  std::string trace_output_file;           ///< TRACE_OUTPUT_FILE: the packet trace (docs/network-model.md §5.4)
  std::string fct_output_file = "fct.txt"; ///< FCT_OUTPUT_FILE
  std::string pfc_output_file = "pfc.txt"; ///< PFC_OUTPUT_FILE
  /// SIMULATOR_STOP_TIME, seconds. Values above 9.2e6 s (the longest a Time holds; SimAI.conf ships
  /// 4e13 s meaning "never") are clamped to 9.2e6 s, silently.
  double simulator_stop_time_s = 3.01;
  int cc_mode = 1;                         ///< CC_MODE: 1 DCQCN, 3 HPCC, 7 TIMELY, 8 DCTCP, 10 HPCC-PINT
  double alpha_resume_interval_us = 55;    ///< ALPHA_RESUME_INTERVAL, µs
  double rate_decrease_interval_us = 4;    ///< RATE_DECREASE_INTERVAL, µs
  bool clamp_target_rate = false;          ///< CLAMP_TARGET_RATE
  double rp_timer_us = 0;                  ///< RP_TIMER, µs (the reference never initialises it)
  double ewma_gain = 0;                    ///< EWMA_GAIN (g of DCQCN/DCTCP)
  uint32_t fast_recovery_times = 5;        ///< FAST_RECOVERY_TIMES (F)
  uint64_t rate_ai_bps = 0;                ///< RATE_AI, bit/s (must be set)
  uint64_t rate_hai_bps = 0;               ///< RATE_HAI, bit/s (must be set)
  uint64_t min_rate_bps = 100'000'000;     ///< MIN_RATE, bit/s
  uint64_t dctcp_rate_ai_bps = 1'000'000'000;  ///< DCTCP_RATE_AI, bit/s
  double error_rate_per_link = 0;          ///< ERROR_RATE_PER_LINK, drop probability
  bool has_win = true;                     ///< HAS_WIN
  bool global_t = true;                    ///< GLOBAL_T
  bool var_win = false;                    ///< VAR_WIN
  bool fast_react = true;                  ///< FAST_REACT (HPCC)
  double u_target = 0.95;                  ///< U_TARGET (HPCC eta)
  uint32_t mi_thresh = 5;                  ///< MI_THRESH (HPCC maxStage)
  uint32_t int_multi = 1;                  ///< INT_MULTI
  bool multi_rate = true;                  ///< MULTI_RATE (HPCC)
  bool sample_feedback = false;            ///< SAMPLE_FEEDBACK (HPCC)
  double pint_log_base = 1.05;             ///< PINT_LOG_BASE
  double pint_prob = 1.0;                  ///< PINT_PROB
  bool rate_bound = true;                  ///< RATE_BOUND: pace at the CC rate
  bool ack_high_prio = false;              ///< ACK_HIGH_PRIO (host side only)
  uint64_t link_down_us = 0;               ///< LINK_DOWN a: at 2 s + a µs (0 = none)
  uint32_t link_down_a = 0, link_down_b = 0;  ///< LINK_DOWN b c: the link's end nodes
  bool enable_trace = true;                ///< ENABLE_TRACE: write the packet trace of TRACE_FILE's nodes (§5.4)
  std::map<uint64_t, EcnThresholds> ecn;   ///< KMIN/KMAX/PMAX maps keyed by link rate in bit/s
  double buffer_size_mb = 16;              ///< BUFFER_SIZE, MiB per switch
  std::string qlen_mon_file;               ///< QLEN_MON_FILE: the reference's qlen.txt (docs/network-model.md §5.3)
  uint64_t qlen_mon_start_ns = 2'000'000'000, qlen_mon_end_ns = 2'100'000'000;  ///< QLEN_MON_START / _END, ns
  /// SimAI's monitors (its ns-3 frontend's common.h, docs/network-model.md §5.7): BW_MON_FILE (per-port
  /// transmit bandwidth), RATE_MON_FILE (per-QP sending rate), CNP_MON_FILE (per-QP CNPs received); ""
  /// = not written. Samples at MON_START + k × interval (µs), the bandwidth every BW_MON_INTERVAL µs,
  /// QP rates and CNPs every QP_MON_INTERVAL µs, up to MON_END µs (0 = the run's end). SimAI's own
  /// QLEN_MON_INTERVAL is checked and ignored (QLEN_MON_FILE means the reference's qlen.txt here).
  std::string bw_mon_file, rate_mon_file, cnp_mon_file;
  uint64_t mon_start_us = 0, mon_end_us = 0;
  uint64_t bw_mon_interval_us = 10'000, qp_mon_interval_us = 100;

  // --- ours ---
  /// RTO_US: retransmission timeout in µs; a QP whose snd_una has not moved for this long
  /// goes back to snd_una (a lost tail packet would stall it forever in the reference). 0 = off.
  double rto_us = 10000;
  /// NS_TRUNCATION: 1 truncates serialization and pacing delays to whole ns as the reference
  /// (docs/network-model.md §6); 0 keeps picoseconds (exact; truncation runs a link up to 1 ns per
  /// packet fast, several % at 400 Gb/s and above).
  bool ns_truncation = true;
  /// PFC_LOSSLESS_HEADROOM: 0 keeps the reference's per-port headroom of 3 × rate × delay, which at
  /// low rates or short links is below what a pause needs and lets PFC drop; 1 raises it to at least
  /// 2 × rate × delay + 2 largest data packets (docs/network-model.md §11.1), so PFC never drops.
  bool pfc_lossless_headroom = false;
  /// SEED: seed of the per-port random streams (ECN marking, link errors).
  uint64_t seed = 1;
  /// EVENT_ORDER: "reference" orders same-instant events exactly as ns-3 (byte-identical outputs;
  /// one process); "portable" orders them independently of how the network is split over ranks.
  bool portable_order = false;
  /// PORT_MON (0/1): sample per-port utilisation, queue and PFC-paused time into monitor.h5 (§5.6),
  /// every PORT_MON_INTERVAL ns from PORT_MON_START to PORT_MON_END (absolute ns; 0 = the run's end),
  /// on the ports of PORT_MON_NODES: "switches", "hosts", "all", or "list" (the ids in port_mon_node_ids).
  bool port_mon = false;
  uint64_t port_mon_interval_ns = 10'000;
  uint64_t port_mon_start_ns = 0, port_mon_end_ns = 0;
  std::string port_mon_nodes = "switches";
  std::vector<uint32_t> port_mon_node_ids;
  /// WORMHOLE (0/1), WORMHOLE_THETA, WORMHOLE_WINDOW (samples), WORMHOLE_SAMPLE_INTERVAL_US,
  /// WORMHOLE_FAST_FORWARD (0: detect only), WORMHOLE_SKIP_BACK, WORMHOLE_THREADS: steady-state
  /// detection and fast-forwarding (src/ffwd; the scenario's [wormhole] section sets the same).
  WormholeSettings wormhole;

  /// Keys seen in the file, in order (for the run metadata).
  std::vector<std::pair<std::string, std::string>> raw;
  /// Where each key was last set: (file or "command line", line), for messages.
  std::map<std::string, std::pair<std::string, int>> key_origin;
  /// Non-fatal remarks found while reading (e.g. a key given twice), for stderr.
  std::vector<std::string> warnings;

  /// (file, line) of a key, or (the config file, 0) if it was not given.
  std::pair<std::string, int> origin_of(const std::string& key) const {
    auto it = key_origin.find(key);
    return it == key_origin.end() ? std::pair<std::string, int>{path, 0} : it->second;
  }
  std::string path;  ///< the config file itself

  Time stop_time() const { return static_cast<Time>(simulator_stop_time_s * 1e12 + 0.5); }
};

}  // namespace wh
