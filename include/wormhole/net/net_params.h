// The parameters the packet model reads, taken once from the run's settings and its congestion
// control: the model keeps these values, not the settings (docs/network-model.md §1 gives each key).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "wormhole/config/sim_config.h"
#include "wormhole/core/time.h"
#include "wormhole/net/cc.h"

namespace wh {

/// Where a setting was given, for error messages: (file or "command line", line; 0 if not given).
using SettingOrigin = std::pair<std::string, int>;

/// What the network model (Fabric, SwitchModel, NicModel, Network) reads of a run's settings: each
/// field is a config key's value, or one derived from it and the congestion control (INT header
/// sizes), with its unit in its comment. The defaults are SimConfig's (the reference's).
struct NetParams {
  // packets
  uint32_t payload = 1000;       ///< PACKET_PAYLOAD_SIZE, bytes of a full data packet's payload
  uint32_t data_extra = 0;       ///< INT bytes each data packet carries (the CC's int_bytes())
  uint32_t ack_bytes = 60;       ///< an ACK's size: max(60, header + INT bytes), bytes
  IntMode int_mode = IntMode::None;  ///< what switches stamp into data packets (the CC's)
  uint32_t int_multi = 1;        ///< INT_MULTI: multiplies INT's byte-counter and queue-length units (128 B, 80 B)
  double pint_log_base = 1.05;   ///< PINT_LOG_BASE
  bool ns_trunc = true;          ///< NS_TRUNCATION: serialization truncated to whole ns
  // receiver and sender (docs/network-model.md §8–§9)
  uint32_t l2_chunk_size = 0;    ///< L2_CHUNK_SIZE, bytes (0: none)
  uint32_t l2_ack_interval = 0;  ///< L2_ACK_INTERVAL, bytes
  bool l2_back_to_zero = false;  ///< L2_BACK_TO_ZERO: a NACK rewinds to the chunk's start
  bool has_win = true;           ///< HAS_WIN: a window of one BDP bounds bytes in flight
  bool var_win = false;          ///< VAR_WIN: the window follows the rate
  bool global_t = true;          ///< GLOBAL_T: every flow uses the fabric's max RTT and BDP
  bool rate_bound = true;        ///< RATE_BOUND: a QP is paced at its CC rate
  uint8_t ack_class = 3;         ///< the class a host's PFC must leave open for its ACKs (0 with ACK_HIGH_PRIO)
  Time rto = 10'000 * kUs;       ///< RTO_US as ps (0: off)
  // switches (docs/network-model.md §10–§11)
  bool enable_qcn = true;        ///< ENABLE_QCN: ECN marking at dequeue
  bool pfc_pause = true;         ///< PAUSE_TIME > 0: a PAUSE frame pauses (0: every frame resumes)
  uint64_t buffer_bytes = 16u << 20;  ///< BUFFER_SIZE as bytes, per switch
  bool pfc_lossless_headroom = false;  ///< PFC_LOSSLESS_HEADROOM
  std::map<uint64_t, EcnThresholds> ecn;  ///< KMIN/KMAX/PMAX maps by link rate (bit/s)
  SettingOrigin ecn_origin;      ///< where KMAX_MAP was given
  // links
  double error_rate_per_link = 0;  ///< ERROR_RATE_PER_LINK, drop probability
  uint64_t seed = 1;             ///< SEED of the per-port random streams
  uint64_t link_down_us = 0;     ///< LINK_DOWN: at 2 s + this many µs (0: none)
  uint32_t link_down_a = 0, link_down_b = 0;  ///< LINK_DOWN's end nodes
  SettingOrigin link_down_origin;  ///< where LINK_DOWN was given
  bool portable_order = false;   ///< EVENT_ORDER portable

  /// The values of `cfg`, with the INT sizes of `cc`.
  static NetParams from(const SimConfig& cfg, const CongestionControl& cc);
  /// The time LINK_DOWN happens (ps), or -1 if none.
  Time link_down_time() const { return link_down_us > 0 ? 2 * kSec + static_cast<Time>(link_down_us) * kUs : -1; }
  /// A full data packet's size on the wire, bytes: payload, headers and INT.
  uint32_t mtu() const;
};

}  // namespace wh
