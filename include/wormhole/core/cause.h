// What scheduled an event, and every bit layout that encodes it: the event keys of both orders, the
// child-index ranges of the model and its client, the contexts of work done at a barrier and the
// packet identity mixed into a parent. Kept in one place so that the ranges are checked together.
#pragma once
#include <cstdint>

#include "wormhole/core/time.h"

namespace wh {

/// What scheduled an event: when (origin, ps), which event was running (its key or execution
/// number; 0 = set-up) and which of that event's children this one is. An event whose scheduling
/// the model defers (a packet's arrival queued behind earlier ones on a wire, an end-of-transmission
/// decided later) keeps the cause it would have had, so its place in the order does not change.
struct Cause {
  Time origin = 0;
  uint64_t parent = 0;
  uint32_t index = 0;
};

namespace cause {

// ---- Portable order (EventOrder::Portable): key = delay code | lineage | child ----------------------
/// Bits of the inverse delay code (ns exact to 2,047 ns, then 64-ns steps to 133 µs, then capped).
inline constexpr unsigned kDelayBits = 12;
/// Bits of the parent's key kept in a child's key: the parent's bits kChildShift.. (its delay code
/// and lineage), about three generations of ancestors' delays.
inline constexpr unsigned kLineageBits = 44;
/// Bits of the child index.
inline constexpr unsigned kChildBits = 8;
/// Where the lineage starts in a key, and the part of a parent that a child keeps (bits 20..63).
inline constexpr unsigned kLineageShift = kChildBits, kParentShift = 64 - kLineageBits;
static_assert(kDelayBits + kLineageBits + kChildBits == 64, "a portable key is 64 bits");

/// Child indices: the model's children of an event are 0 .. kClientChildBase-1 and a client's (the
/// workload driver's) kClientChildBase | j, so a rank that does not run the client numbers the
/// model's children alike. Indices wrap within kChildBits: ties of wrapped indices fall to the
/// owner order (Event::before), which is still total.
inline constexpr uint32_t kClientChildBase = 1u << (kChildBits - 1);

/// The portable key of an event at `at` (ps) caused by `c` (docs: Event).
constexpr uint64_t portable_key(Time at, const Cause& c) {
  const Time delay = at - c.origin;
  const uint64_t d = delay <= 0 ? 0 : static_cast<uint64_t>(delay / kNs);
  constexpr uint64_t kCodes = uint64_t(1) << kDelayBits;  // 4096 codes: 2048 exact ns, 2047 steps, cap
  const uint64_t code = d < kCodes / 2 ? d : kCodes / 2 + ((d - kCodes / 2) >> 6 < kCodes / 2 - 1 ? (d - kCodes / 2) >> 6 : kCodes / 2 - 1);
  return ((kCodes - 1 - code) << (64 - kDelayBits)) | ((c.parent >> kParentShift) << kLineageShift) |
         (c.index & ((1u << kChildBits) - 1));
}

// ---- Reference order (EventOrder::Reference): key = execution number | child ------------------------
/// Bits of the child index in a reference key; the scheduling event's execution number (ns-3's
/// global count) takes the 44 bits above.
inline constexpr unsigned kRefChildBits = 20;
/// ns-3's global insertion order: (execution number of the scheduling event, child index).
constexpr uint64_t reference_key(const Cause& c) {
  return (c.parent << kRefChildBits) | (c.index & ((1u << kRefChildBits) - 1));
}

// ---- Barrier contexts (Kernel::set_barrier_context) -----------------------------------------------------
// Work done at a barrier is caused by a context, not by the barrier, so that every rank numbers its
// share alike. A context is < 2^kLineageBits and becomes the parent's lineage (context << kParentShift).
// Two rooms, disjoint: a port's moved packets below 2^43, a flow's restored CC state at and above.
inline constexpr uint64_t kContextLimit = uint64_t(1) << kLineageBits;
inline constexpr unsigned kMovedBits = 20;  ///< packets moved off one port at one barrier (wraps)
inline constexpr uint64_t kFlowContextBase = uint64_t(1) << 43;
/// Ports a port context can name: port + 1 must stay below the flow room.
inline constexpr uint64_t kMaxContextPorts = (kFlowContextBase >> kMovedBits) - 1;

/// The context of the `moved`-th packet a barrier moves off `port` (fast-forward evacuation).
/// Precondition: port < kMaxContextPorts (2^23 - 1).
constexpr uint64_t port_move_context(uint32_t port, uint64_t moved) {
  return (uint64_t(port + 1) << kMovedBits) | (moved & ((uint64_t(1) << kMovedBits) - 1));
}
/// The context of what restoring flow `id`'s CC state schedules (a memo replay's timers).
constexpr uint64_t flow_context(uint32_t id) { return kFlowContextBase | id; }
static_assert(port_move_context(uint32_t(kMaxContextPorts - 1), ~uint64_t(0)) < kFlowContextBase,
              "port contexts stay below the flow room");
static_assert(flow_context(UINT32_MAX) < kContextLimit, "flow contexts fit the lineage");

// ---- Packet identity (Network::packet_cause) --------------------------------------------------------------
/// Mixes `identity` (a packet's own: flow, seq, type, port) into a parent's lineage bits, so two
/// rank-local events caused by events of equal key do not tie (splitmix64 finaliser).
constexpr uint64_t mix_identity(uint64_t parent, uint64_t identity) {
  uint64_t x = identity + 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return parent ^ (x << kParentShift);  // the key keeps the parent's bits kParentShift..63
}

}  // namespace cause
}  // namespace wh
