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
/// With `ns_truncation` (the reference model's behaviour, docs/network-model.md §6) the delay is whole
/// nanoseconds computed as ns-3.17 does it: Seconds(double(bytes) * 8 / rate) — the double quotient q
/// taken to 64.64 fixed point (its fraction truncated to 2^-64), times 10^9, truncated. That is
/// floor(bytes × 8e9 / rate) (1048 B at 100 Gb/s -> 83 ns) except where the quotient is a whole number
/// of ns and the double lies just below it: 1050 B at 400 Gb/s is 21 ns exactly, the reference (and so
/// this) gives 20 ns. Without it, the delay is truncated to whole ps in integer arithmetic (exact for
/// bytes < 2^21, else 128-bit).
inline Time serialization_time(uint64_t bytes, uint64_t rate_bps, bool ns_truncation) {
  if (ns_truncation) {
    const double q = static_cast<double>(bytes) * 8 / static_cast<double>(rate_bps);  // s, as DataRate::CalculateTxTime
    const double whole = static_cast<double>(static_cast<uint64_t>(q));               // floor: q >= 0
    const auto frac = static_cast<uint64_t>((q - whole) * 18446744073709551616.0);    // int64x64_t(double): x 2^64, truncated
    const auto ns = static_cast<uint64_t>(whole) * 1000000000ull +
                    static_cast<uint64_t>((static_cast<unsigned __int128>(frac) * 1000000000u) >> 64);
    return static_cast<Time>(ns) * kNs;
  }
  if (bytes < (1ull << 21)) return static_cast<Time>(bytes * 8'000'000'000'000ull / rate_bps);
  const unsigned __int128 bits = static_cast<unsigned __int128>(bytes) * 8u;
  return static_cast<Time>(bits * 1000000000000ull / rate_bps);
}

/// Whole nanoseconds of a time (truncating), as the reference prints them.
inline uint64_t to_ns(Time t) { return static_cast<uint64_t>(t / kNs); }

}  // namespace wh
