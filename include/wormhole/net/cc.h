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
  virtual void cancel_timer(Flow& f, int slot) = 0;
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
  /// Bytes added to every data packet (INT, timestamp), hpcc-model.md §7.
  virtual uint32_t data_extra_bytes() const { return 0; }
  /// Bytes of the ACK before padding to 60 B (INT copied from the data packet).
  virtual uint32_t ack_extra_bytes() const { return 0; }
  /// Initialises f.cc when the QP is created (the rate is already line rate).
  virtual void on_start(uint32_t id, Flow& f, CcHost& host) = 0;
  /// An ACK or NACK (after snd_una moved); `cnp` is the ECN-echo flag.
  virtual void on_ack(uint32_t id, Flow& f, const Packet& ack, CcHost& host) = 0;
  /// Timer `slot` fired.
  virtual void on_timer(uint32_t id, Flow& f, int slot, CcHost& host) {}
};

}  // namespace wh
