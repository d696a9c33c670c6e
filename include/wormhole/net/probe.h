// What the network lets observers see without changing a result: samples at chosen instants (the
// monitors of src/io/monitors.cpp) and every packet event at chosen nodes (the packet trace). Both
// only read the network's state; with none attached the network checks one time and one pointer.
#pragma once
#include <cstdint>

#include "wormhole/core/time.h"
#include "wormhole/net/packet.h"

namespace wh {

/// Takes samples of the network's state at instants of its own choosing.
class SampleHook {
 public:
  virtual ~SampleHook() = default;
  /// Called before the first event at or after the instant sample() last returned (and at a kernel
  /// barrier at or after it, before the barrier's work), with `t` = that event's time: the network's
  /// state is the one after every event before the sample instants up to t, so every sample due at
  /// or before t sees it. Takes them all and returns the next instant it wants (kTimeMax: none).
  virtual Time sample(Time t) = 0;
};

/// A packet event at a port (docs/network-model.md §5.4).
enum class TraceEvent : uint8_t {
  Recv = 0,  ///< its last bit reached the port (ingress)
  Enqu = 1,  ///< queued on the egress port
  Dequ = 2,  ///< left the egress port: its serialisation starts
  Drop = 3,  ///< dropped at the port
};

/// Receives the packet events of the nodes it traces.
class PacketTrace {
 public:
  virtual ~PacketTrace() = default;
  /// Whether node `n`'s events are wanted (asked once per node when attached).
  virtual bool traces(uint32_t node) const = 0;
  /// Event `ev` of packet `p` at global port `port` at time `t` (ps). `qlen`: bytes then in the port's
  /// egress queue of the packet's class (after an enqueue, after a dequeue; 0 for Recv and Drop).
  /// `cause`: for Drop, 0 buffer, 1 loss, 2 link down.
  virtual void event(Time t, TraceEvent ev, uint32_t port, const Packet& p, uint64_t qlen, uint8_t cause) = 0;
};

}  // namespace wh
