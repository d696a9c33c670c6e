// Events are small plain records ordered by (time, owner key); the kernel never sees a packet.
#pragma once
#include <cstdint>

#include "wormhole/core/time.h"

namespace wh {

/// Who owns an event. The tie-break of events at the same time is (owner class, owner id,
/// the owner's own counter), which does not depend on insertion order across owners, so the
/// order is the same however the network is split over ranks (DESIGN.md, determinism).
enum class OwnerClass : uint8_t { Global = 0, Port = 1, Flow = 2 };

/// An event: 32 bytes. `target` indexes the owner (port or flow id); `kind` is interpreted by the
/// model; `gen` lets the owner invalidate an event without searching the queue (lazy cancel).
struct Event {
  Time time = 0;     ///< ps
  uint64_t key = 0;  ///< tie-break: owner class (2 bits) | owner id (30 bits) | owner sequence (32 bits)
  uint32_t target = 0;
  uint16_t kind = 0;
  uint16_t aux = 0;
  uint32_t gen = 0;
  uint32_t pad = 0;

  static uint64_t make_key(OwnerClass c, uint32_t owner, uint32_t seq) {
    return (static_cast<uint64_t>(c) << 62) | (static_cast<uint64_t>(owner & 0x3fffffffu) << 32) | seq;
  }
  bool before(const Event& o) const { return time < o.time || (time == o.time && key < o.key); }
};
static_assert(sizeof(Event) == 32);

}  // namespace wh
