// A flow and its queue pair: the sender QP state, the receiver state and the CC state.
#pragma once
#include <cstdint>

#include "wormhole/cc/state.h"
#include "wormhole/core/event.h"
#include "wormhole/core/time.h"

namespace wh {

/// Timer slot of the retransmission timeout (slots 0-2 belong to the CC).
constexpr int kRtoSlot = 3;

/// The state of one running flow = one RDMA QP (docs/network-model.md §8–9): sender, receiver and CC
/// state. It exists from the flow's start until it has finished and nothing refers to it any more
/// (FlowTable); what outlives it is the flow's FlowInfo. Sequence numbers are byte offsets.
struct Flow {
  // identity (a copy of the flow's FlowInfo, for the packet path's locality)
  uint32_t src = 0, dst = 0;      ///< hosts
  uint16_t sport = 0, dport = 0;
  uint8_t pg = 3;
  uint64_t size = 0;              ///< bytes
  Time start = 0;                 ///< ps
  uint64_t ideal_fct_ns = 0;      ///< standalone FCT (docs/network-model.md §5.1)
  Time min_fct = 0;               ///< ps: the true ideal FCT, a lower bound (§5.1), set when the flow starts; 0 before

  // sender
  uint32_t nic = UINT32_MAX;      ///< global port index of the NIC serving it (none: no route)
  uint32_t rx_nic = UINT32_MAX;   ///< multi-NIC receiver: the NIC its ACKs leave from
  uint64_t snd_nxt = 0, snd_una = 0;
  uint64_t snd_high = 0;          ///< highest snd_nxt so far: data below it sent again is a retransmission
  uint64_t rate_bps = 0;          ///< current sending (pacing) rate
  uint64_t max_rate_bps = 0;      ///< NIC line rate
  Time next_avail = 0;            ///< pacing: earliest time of the next packet, ps
  uint32_t last_pkt_size = 0;     ///< wire bytes of the last packet sent
  Time last_ser = 0;              ///< its serialisation time at the current rate, ps
  uint64_t win = 0;               ///< in-flight window W in bytes (0 = none)
  uint64_t win_now = 0;           ///< window() for the current rate (see update_window)
  bool var_win = false;
  Time base_rtt = 0;              ///< T (ps): maxRtt (GLOBAL_T) or the pair's RTT
  Time last_progress = 0;         ///< last time snd_una advanced (RTO)
  bool rto_recovery = false;      ///< an RTO went back and snd_una has not moved since
  uint32_t cnps = 0;              ///< ACKs/NACKs received with the CNP (ECN echo) flag: SimAI's qp_cnp (CNP_MON_FILE)
  /// Timers (slots 0-2: CC, 3: RTO). timer_at = deadline (ps, -1 = not armed); timer_ev = time of
  /// the one pending kernel event for the slot (-1 = none). Re-arming later only moves the
  /// deadline; the pending event then re-schedules itself, so stale events do not pile up.
  Time timer_at[4] = {-1, -1, -1, -1};
  Time timer_ev[4] = {-1, -1, -1, -1};
  Cause timer_cause[4];           ///< who set the deadline (the cause of a deferred event)
  CcState cc;

  // receiver
  uint64_t rcv_nxt = 0;           ///< ReceiverNextExpectedSeq
  uint64_t milestone = 0;         ///< m_milestone_rx
  Time nack_timer = 0;            ///< earliest time of the next NACK for the same expected seq
  uint64_t last_nack = 0;

  // fast-forward (src/ffwd)
  uint64_t skipped_bytes = 0;     ///< payload credited by fast-forwards: the flow's tail is never sent
  Time skipped_time = 0;          ///< ps of the flow's lifetime spent fast-forwarded
  Time clock_offset = 0;          ///< ps: Σ of the time shifts its partition made (see Packet::offset)
  uint16_t epoch = 0;             ///< carried by its timer events (see Port::epoch)

  /// One past the last byte that is sent: the size less the bytes fast-forwarding credited.
  uint64_t end_seq() const { return size - skipped_bytes; }
  uint64_t bytes_left() const { return end_seq() - snd_nxt; }
  /// The window in force (docs/network-model.md §8): W, or W·rate/line rate (>= 1 B) with VAR_WIN;
  /// cached in win_now by update_window() whenever the rate or W changes (the NIC checks it for
  /// every QP it scans, and the division is not cheap).
  uint64_t window() const {
    if (win == 0) return 0;
    if (!var_win) return win;
    // W·rate fits 64 bits for any realistic W and rate; the 128-bit division is several times slower.
    const uint64_t w = win < (UINT64_MAX / (rate_bps | 1))
                           ? win * rate_bps / max_rate_bps
                           : static_cast<uint64_t>(static_cast<unsigned __int128>(win) * rate_bps / max_rate_bps);
    return w == 0 ? 1 : w;
  }
  void update_window() { win_now = window(); }
  bool window_bound() const { return win_now != 0 && snd_nxt - snd_una >= win_now; }

  /// Fast-forward moved the flow's clock by `delta` ps (Network::shift): moves every absolute time
  /// the sender keeps — pacing (next_avail), RTO progress, the timers' deadlines, their pending
  /// events' times and causes, the CC's INT times. Re-scheduling the pending timer events is the
  /// caller's. `start` stays: it is the flow's arrival in global time, and clock_offset (also the
  /// caller's, kept on every rank) is what turns the clock back into global time.
  void shift_sender_times(Time delta) {
    for (int slot = 0; slot <= kRtoSlot; ++slot) {
      if (timer_at[slot] >= 0) timer_at[slot] += delta;
      if (timer_ev[slot] >= 0) timer_ev[slot] += delta;
      timer_cause[slot].origin += delta;
    }
    next_avail += delta;
    last_progress += delta;
    shift_cc_times(cc, delta);
  }
  /// The receiver's part of shift_sender_times(): the NACK gate (0 = none yet). The rank that owns
  /// the flow's destination moves it, which in a distributed run is not always the sender's.
  void shift_receiver_times(Time delta) {
    if (nack_timer > 0) nack_timer += delta;
  }
};
// shift_sender_times() and shift_receiver_times() list every absolute time: a new field that holds
// one must be added there (and to tests/unit/test_shift_times.cpp).
static_assert(sizeof(Flow) == 672, "a Flow field was added or removed: decide whether Flow::shift_*_times() moves it");

/// What the run keeps of a flow from its creation until its result record has gone out (88 B, where
/// the QP state is 672 B; FlowTable): its identity and its outcome. Identity fields are set when the
/// flow is created; `started` is always current (its finish is kept in the FlowTable's entry); the others (NICs, bound, skipped bytes
/// and time, clock offset, epoch) are copied from the state when it is released and are current only
/// then (Network::record() and Network::data_path() read the state before). A replayed flow never has
/// QP state: its NICs and bound are set here when it starts.
struct FlowInfo {
  uint32_t src = 0, dst = 0;      ///< hosts
  uint16_t sport = 0, dport = 0;
  uint8_t pg = 3;
  bool started = false;
  bool replayed = false;          ///< never simulated: a collective memo replays it (Network::replay_flow)
  uint32_t nic = UINT32_MAX, rx_nic = UINT32_MAX;  ///< as Flow's, once released
  uint16_t epoch = 0;             ///< once released: its timer events' epoch (a stale one is a discarded event)
  uint64_t size = 0;              ///< bytes
  Time start = 0;                 ///< ps
  uint64_t ideal_fct_ns = 0;      ///< standalone FCT (docs/network-model.md §5.1)
  Time min_fct = 0;               ///< ps, once released
  Time skipped_time = 0;          ///< ps, once released
  uint64_t skipped_bytes = 0;     ///< once released
  Time clock_offset = 0;          ///< ps, once released (stale packets of the flow are compared with it)
};

}  // namespace wh
