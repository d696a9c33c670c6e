// Per-QP congestion-control state as plain copyable values: a snapshot is a copy.
#pragma once
#include <cstdint>
#include <variant>

#include "wormhole/core/rng.h"
#include "wormhole/net/int_header.h"

namespace wh {

/// DCQCN, Mellanox flavour (docs/network-model.md §13.1).
struct DcqcnState {
  uint64_t target_bps = 0;   ///< Rt
  double alpha = 1.0;        ///< α
  uint32_t stage = 0;        ///< rate-increase stage (m_rpTimeStage)
  bool alpha_cnp = false;    ///< CNP since the last α update
  bool decrease_cnp = false; ///< CNP since the last decrease check
  bool first_cnp = true;     ///< no CNP seen yet (timers not started)
};

/// HPCC per-hop state used with MULTI_RATE 1.
struct HpccHopState {
  double u = 1;              ///< per-hop utilisation estimate
  uint64_t rc_bps = 0;       ///< committed per-hop rate
  uint32_t inc_stage = 0;
};

/// HPCC (docs/network-model.md §13.2).
struct HpccState {
  uint64_t cur_rate_bps = 0;     ///< Rc, committed once per RTT
  uint32_t inc_stage = 0;
  double u = 1;                  ///< U (single-rate)
  uint64_t last_update_seq = 0;  ///< snd_nxt at the last full update (0 = first RTT)
  IntHop hop[IntHeader::kMaxHops];          ///< last INT records seen
  HpccHopState hops[IntHeader::kMaxHops];   ///< MULTI_RATE 1
};

/// TIMELY (docs/network-model.md §13.3).
struct TimelyState {
  uint64_t cur_rate_bps = 0;
  uint32_t inc_stage = 0;        ///< consecutive increases
  double rtt_diff = 0;           ///< EWMA of RTT differences, ns
  uint64_t last_rtt_ns = 0;
  uint64_t last_update_seq = 0;
};

/// DCTCP, rate-based hardware style (docs/network-model.md §13.4).
struct DctcpState {
  double alpha = 1;
  uint64_t last_update_seq = 0;
  uint32_t ecn_count = 0;        ///< marked ACKs in the current batch
  uint32_t batch_size = 0;       ///< packets in the batch the α update divides by
  bool cwr = false;              ///< in congestion window reduction
  uint64_t high_seq = 0;         ///< CWR ends when an ACK passes this
};

/// HPCC-PINT (docs/network-model.md §13.5).
struct HpccPintState {
  uint64_t cur_rate_bps = 0;
  uint32_t inc_stage = 0;
  uint64_t last_update_seq = 0;
  Rng rng;                       ///< ACK sampling with PINT_PROB
};

/// No congestion control: line rate.
struct NoCcState {};

/// The CC state a QP carries; one alternative per algorithm.
using CcState = std::variant<NoCcState, DcqcnState, HpccState, TimelyState, DctcpState, HpccPintState>;

// shift_cc_times() must know every absolute time a CC state keeps: a field added to a state must be
// checked there (and in tests/unit/test_shift_times.cpp).
static_assert(sizeof(DcqcnState) == 24 && sizeof(TimelyState) == 40 && sizeof(DctcpState) == 40,
              "a CC state field was added or removed: decide whether shift_cc_times() moves it");
static_assert(sizeof(HpccState) == 272 && sizeof(HpccPintState) == 40,
              "a CC state field was added or removed: decide whether shift_cc_times() moves it");

/// Moves the absolute times a CC state keeps by `delta_ps` (a fast-forward shifts a flow's
/// clock): HPCC's last INT records hold 24-bit ns switch times (moved modulo 2^24, keeping every
/// difference). Other states keep none: DCQCN's timers are the QP's (Flow::timer_at).
inline void shift_cc_times(CcState& s, int64_t delta_ps) {
  if (auto* h = std::get_if<HpccState>(&s)) {
    const uint32_t d = static_cast<uint32_t>(delta_ps / 1000);
    for (IntHop& hop : h->hop) hop.time = (hop.time + d) & ((1u << IntHop::kTimeBits) - 1);
  }
}

/// Moves the sequence numbers a CC state keeps (bytes: last_update_seq, DCTCP's high_seq) by
/// `delta` (a snapshot restored into a QP at another point of its stream). 0 means "none yet" to
/// every algorithm and stays 0; a result below 1 becomes 0 (the algorithm starts a new round).
inline void rebase_cc_seqs(CcState& s, int64_t delta) {
  auto move = [delta](uint64_t& seq) {
    if (seq == 0) return;
    const int64_t v = static_cast<int64_t>(seq) + delta;
    seq = v < 1 ? 0 : static_cast<uint64_t>(v);
  };
  if (auto* h = std::get_if<HpccState>(&s)) move(h->last_update_seq);
  if (auto* t = std::get_if<TimelyState>(&s)) move(t->last_update_seq);
  if (auto* d = std::get_if<DctcpState>(&s)) move(d->last_update_seq), move(d->high_seq);
  if (auto* p = std::get_if<HpccPintState>(&s)) move(p->last_update_seq);
}

/// Makes a CC state portable to a QP on other ports: HPCC's last INT records (absolute per-port
/// byte counters and switch clocks) mean nothing elsewhere, so they are dropped and the next ACK
/// re-learns them (last_update_seq = 0, the reference's first-RTT branch, docs/network-model.md §13.2);
/// the rates, U and stages are kept. Other states are portable as they are.
inline void make_cc_portable(CcState& s) {
  if (auto* h = std::get_if<HpccState>(&s)) {
    h->last_update_seq = 0;
    for (IntHop& hop : h->hop) hop = IntHop{};
  }
}

}  // namespace wh
