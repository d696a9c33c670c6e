// Simulation time: a signed 64-bit count of picoseconds, and the conversions the models need.
#pragma once
#include <cstdint>

namespace wh {

/// Simulation time in picoseconds (ps). 2^63 ps is about 106 days of simulated time.
using Time = int64_t;

constexpr Time kPs = 1;
constexpr Time kNs = 1000;
constexpr Time kUs = 1000 * kNs;
constexpr Time kMs = 1000 * kUs;
constexpr Time kSec = 1000 * kMs;
constexpr Time kTimeMax = INT64_MAX;

/// Serialization time of `bytes` bytes at `rate_bps` bit/s.
/// With `ns_truncation` (the reference model's behaviour, docs/network-model.md §6) the delay is truncated
/// to whole nanoseconds (1048 B at 100 Gb/s -> 83 ns); otherwise it is truncated to whole ps.
/// Integer arithmetic, exact for bytes < 2^31 and rates > 0.
inline Time serialization_time(uint64_t bytes, uint64_t rate_bps, bool ns_truncation) {
  // Packets are small: a 64-bit division is exact and several times cheaper than a 128-bit one.
  if (ns_truncation && bytes < (1ull << 31)) return static_cast<Time>(bytes * 8'000'000'000ull / rate_bps) * kNs;
  if (!ns_truncation && bytes < (1ull << 21)) return static_cast<Time>(bytes * 8'000'000'000'000ull / rate_bps);
  const unsigned __int128 bits = static_cast<unsigned __int128>(bytes) * 8u;
  if (ns_truncation)
    return static_cast<Time>(bits * 1000000000u / rate_bps) * kNs;
  return static_cast<Time>(bits * 1000000000000ull / rate_bps);
}

/// Whole nanoseconds of a time (truncating), as the reference prints them.
inline uint64_t to_ns(Time t) { return static_cast<uint64_t>(t / kNs); }

}  // namespace wh
