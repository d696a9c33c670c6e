// Events are small plain records ordered by (time, owner key); the kernel never sees a packet.
#pragma once
#include <cstdint>

#include "wormhole/core/time.h"

namespace wh {

/// Who owns an event. The tie-break of events at the same time is (owner class, owner id,
/// the owner's own counter), which does not depend on insertion order across owners, so the
/// order is the same however the network is split over ranks (DESIGN.md, determinism).
enum class OwnerClass : uint8_t { Global = 0, Port = 1, Flow = 2 };

/// An event: 24 bytes, ordered by (time, key). `target` indexes the owner (port or flow id);
/// `kind` and `aux` are interpreted by the model.
///
/// The key orders events of the same time: first by how long ago their cause happened (the
/// "delay" from origin to time, longer first), then by owner, then by the owner's counter.
/// Longer-delay-first reproduces what ns-3's insertion order does for same-time events (an event
/// scheduled earlier runs first) without depending on how the network is split over ranks.
/// Layout: inverse delay in ns, capped at 65,535 ns (16 bits) | owner class (2) | owner id
/// (22, modulo) | owner sequence (24, modulo). Wrapping only merges rare tie classes; the order
/// stays a deterministic function of the input.
struct Event {
  Time time = 0;     ///< ps
  uint64_t key = 0;
  uint32_t target = 0;
  uint16_t kind = 0;
  uint16_t aux = 0;

  static uint64_t make_key(OwnerClass c, uint32_t owner, uint32_t seq, Time delay = 0) {
    const uint64_t d = delay <= 0 ? 0 : static_cast<uint64_t>(delay / kNs);
    const uint64_t inv = 0xffffu - (d < 0xffffu ? d : 0xffffu);
    return (inv << 48) | (static_cast<uint64_t>(c) << 46) | (static_cast<uint64_t>(owner & 0x3fffffu) << 24) |
           (seq & 0xffffffu);
  }
  bool before(const Event& o) const { return time < o.time || (time == o.time && key < o.key); }
};
static_assert(sizeof(Event) == 24);

}  // namespace wh
