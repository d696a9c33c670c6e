// The congestion-control interface: algorithms act on a flow's CC state through the network.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "wormhole/core/time.h"
#include "wormhole/net/flow.h"
#include "wormhole/net/packet.h"

namespace wh {

/// What a CC algorithm may do to the network: read the clock, arm/cancel the flow's timers and
/// change its sending rate. Implemented by Network.
class CcHost {
 public:
  virtual ~CcHost() = default;
  virtual Time now() const = 0;
  /// Arms timer `slot` (0..2) of flow `id` to fire at `at` (ps), replacing a pending one.
  virtual void set_timer(uint32_t id, Flow& f, int slot, Time at) = 0;
  /// Sets the pacing rate (bit/s). With `retime` the pending next_avail moves by the difference
  /// of the last packet's serialization time at the old and new rates (the reference's ChangeRate,
  /// used by HPCC); without it the rate just changes (DCQCN, TIMELY, DCTCP).
  virtual void set_rate(uint32_t id, Flow& f, uint64_t rate_bps, bool retime) = 0;
};

/// A congestion-control algorithm: parameters live in the object, per-flow state in Flow::cc.
/// One instance serves all flows of a run.
class CongestionControl {
 public:
  virtual ~CongestionControl() = default;
  virtual const char* name() const = 0;
  /// What switches write into data packets (docs/network-model.md §10).
  virtual IntMode int_mode() const { return IntMode::None; }
  /// Bytes the INT header adds to every data packet and to its ACK before the ACK is padded to
  /// 60 B (docs/network-model.md §7): 42 for HPCC, 8 for TIMELY's timestamp, 2 for PINT.
  uint32_t int_bytes() const {
    switch (int_mode()) {
      case IntMode::Hpcc: return 42;
      case IntMode::Timestamp: return 8;
      case IntMode::Pint: return 2;
      default: return 0;
    }
  }
  /// Initialises f.cc when the QP is created (the rate is already line rate).
  virtual void on_start(uint32_t id, Flow& f, CcHost& host) = 0;
  /// An ACK or NACK (after snd_una moved); `cnp` is the ECN-echo flag.
  virtual void on_ack(uint32_t id, Flow& f, const Packet& ack, CcHost& host) = 0;
  /// Timer `slot` fired.
  virtual void on_timer(uint32_t id, Flow& f, int slot, CcHost& host) {}
  /// The longest time (ps) the algorithm can hold a rate unchanged while a change is still due
  /// without any new feedback: a rate that stayed flat for less than this may just be waiting for
  /// the CC's next own update, not settled (DCQCN at its minimum rate waits RP_TIMER after its last
  /// decrease before it increases). Steady-state detection never judges a flow over a shorter span
  /// (the Wormhole paper's guidance: the window must cover the CC's own period). 0 for algorithms
  /// that update on every ACK or once per RTT, which the two-RTT rule of the steady check covers.
  virtual Time update_period() const { return 0; }
};

}  // namespace wh

namespace wh {

/// Everything congestion control keeps for one QP, as a value: the algorithm's state, the
/// pacing rate and the armed CC timers relative to the snapshot time. Memoization stores these
/// and restores them into another QP (docs/architecture.md: "CC state is a value").
struct CcSnapshot {
  CcState cc;
  uint64_t rate_bps = 0;
  Time timer_in[3] = {-1, -1, -1};  ///< ps from the snapshot time to each armed CC timer; -1 = none
  uint64_t snd_nxt = 0;             ///< the QP's snd_nxt (bytes) the state's sequence numbers refer to
};

/// Takes the snapshot of `f`'s congestion control at time `now` (ps).
inline CcSnapshot snapshot_cc(const Flow& f, Time now) {
  CcSnapshot s;
  s.cc = f.cc;
  s.rate_bps = f.rate_bps;
  for (int i = 0; i < 3; ++i) s.timer_in[i] = f.timer_at[i] < 0 ? -1 : f.timer_at[i] - now;
  s.snd_nxt = f.snd_nxt;
  return s;
}

/// Restores `s` into flow `id` as of time `at` (ps; default: the host's now): the state and rate
/// are copied, the timers re-armed at the same distances from `at` (and those the snapshot has
/// off cancelled), and the state's sequence
/// numbers moved by f.snd_nxt − s.snd_nxt (rebase_cc_seqs), so a snapshot of one QP means the
/// same thing in another at a different point of its stream. The flow's line rate must be the
/// snapshot's.
inline void restore_cc(uint32_t id, Flow& f, const CcSnapshot& s, CcHost& host, Time at = -1) {
  if (at < 0) at = host.now();
  f.cc = s.cc;
  rebase_cc_seqs(f.cc, static_cast<int64_t>(f.snd_nxt) - static_cast<int64_t>(s.snd_nxt));
  host.set_rate(id, f, s.rate_bps, false);
  for (int i = 0; i < 3; ++i) {
    if (s.timer_in[i] >= 0) host.set_timer(id, f, i, at + s.timer_in[i]);
    else f.timer_at[i] = -1;  // not armed in the snapshot: cancelled (a pending timer event finds it so)
  }
}

}  // namespace wh
