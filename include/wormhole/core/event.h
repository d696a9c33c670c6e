// Events are small plain records ordered by (time, key); the kernel never sees a packet.
#pragma once
#include <cstdint>

#include "wormhole/core/cause.h"
#include "wormhole/core/time.h"

namespace wh {

/// An event: 24 bytes, ordered by (time, key). `target` indexes the owner (a port or a flow);
/// `kind` and `aux` are interpreted by the model.
///
/// Events at the same time run in the order ns-3 would run them, which is the order they were
/// scheduled in: first the one whose cause was earlier (longer delay), then, among events
/// scheduled at the same instant, in the order of the events that scheduled them, then in the
/// order they were scheduled by that event. The key encodes this without any global counter, so
/// it is the same however the network is later split over ranks:
///   inverse delay code (12 bits: ns exact to 2 µs, then 64-ns steps to 133 µs) | the parent's
///   key >> 20 (44 bits, i.e. the delays of about three generations of ancestors) | child index (8).
/// Keys of two lineages that had the same delays for longer than the key remembers can coincide;
/// then the owner (target, kind) decides, so the order is total and a function of the input.
struct Event {
  Time time = 0;     ///< ps
  uint64_t key = 0;
  uint32_t target = 0;
  uint16_t kind = 0;
  uint16_t aux = 0;

  /// The key in EventOrder::Portable (layout: core/cause.h).
  static uint64_t make_key(Time at, const Cause& c) { return cause::portable_key(at, c); }
  /// The total order: (time, key), then the owner (target, kind, aux) when keys coincide.
  /// The key in EventOrder::Reference: `parent` is the execution number of the scheduling event
  /// (44 bits), then the child index (20 bits) — ns-3's global insertion order (core/cause.h).
  static uint64_t reference_key(const Cause& c) { return cause::reference_key(c); }

  bool before(const Event& o) const {
    if (time != o.time) return time < o.time;
    if (key != o.key) return key < o.key;
    return (uint64_t(target) << 32 | uint64_t(kind) << 16 | aux) < (uint64_t(o.target) << 32 | uint64_t(o.kind) << 16 | o.aux);
  }
};
static_assert(sizeof(Event) == 24);

}  // namespace wh
