// NetParams (include/wormhole/net/net_params.h): the model's values taken from the settings and the CC.
#include "wormhole/net/net_params.h"

#include <algorithm>

#include "wormhole/net/packet.h"

namespace wh {

NetParams NetParams::from(const SimConfig& cfg, const CongestionControl& cc) {
  NetParams p;
  p.payload = cfg.packet_payload_size;
  p.data_extra = cc.int_bytes();
  p.ack_bytes = std::max(kAckMinBytes, kAckHeaderBytes + cc.int_bytes());
  p.int_mode = cc.int_mode();
  p.int_multi = cfg.int_multi;
  p.pint_log_base = cfg.pint_log_base;
  p.ns_trunc = cfg.ns_truncation;
  p.l2_chunk_size = cfg.l2_chunk_size;
  p.l2_ack_interval = cfg.l2_ack_interval;
  p.l2_back_to_zero = cfg.l2_back_to_zero;
  p.has_win = cfg.has_win;
  p.var_win = cfg.var_win;
  p.global_t = cfg.global_t;
  p.rate_bound = cfg.rate_bound;
  p.ack_class = cfg.ack_high_prio ? 0 : 3;
  p.rto = static_cast<Time>(cfg.rto_us * 1e6 + 0.5);
  p.enable_qcn = cfg.enable_qcn;
  p.pfc_pause = cfg.pause_time_us > 0;
  p.buffer_bytes = static_cast<uint64_t>(cfg.buffer_size_mb * 1024 * 1024);
  p.pfc_lossless_headroom = cfg.pfc_lossless_headroom;
  p.ecn = cfg.ecn;
  p.ecn_origin = cfg.origin_of("KMAX_MAP");
  p.error_rate_per_link = cfg.error_rate_per_link;
  p.seed = cfg.seed;
  p.link_down_us = cfg.link_down_us;
  p.link_down_a = cfg.link_down_a;
  p.link_down_b = cfg.link_down_b;
  p.link_down_origin = cfg.origin_of("LINK_DOWN");
  p.portable_order = cfg.portable_order;
  return p;
}

uint32_t NetParams::mtu() const { return payload + kDataHeaderBytes + data_extra; }

}  // namespace wh
