// Small FCG flows and memo values shared by the memo tests.
#pragma once
#include <cstdint>
#include <vector>

#include "wormhole/memo/store.h"

namespace wh::test {

constexpr uint64_t kG = 1'000'000'000ull;

/// A flow on `ports` at `rate` (bit/s) whose slowest link is `bottleneck` (bit/s), on a 100-Gb/s NIC.
inline FcgFlow fl(std::vector<uint32_t> ports, uint64_t rate = 50 * kG, uint64_t bottleneck = 100 * kG) {
  FcgFlow f;
  f.ports = std::move(ports);
  f.rate_bps = rate;
  f.bottleneck_bps = bottleneck;
  f.line_bps = 100 * kG;
  return f;
}

/// A value for `n` flows: bytes first, first + 1, ...; end rates 40 Gb/s + i; goodputs
/// (i + 1) / 1000 bytes/ps; DCQCN snapshots with target 30 Gb/s + i and one timer armed 55 µs on;
/// `duration` ps.
inline MemoValue value_for(size_t n, uint64_t first, Time duration = 77 * kUs) {
  MemoValue v;
  v.duration = duration;
  for (size_t i = 0; i < n; ++i) {
    v.bytes.push_back(first + i);
    v.end_rate_bps.push_back(40 * kG + i);
    v.goodput.push_back(double(i + 1) / 1000);
    CcSnapshot s;
    DcqcnState d;
    d.target_bps = 30 * kG + i;
    d.alpha = 0.25;
    d.first_cnp = false;
    s.cc = d;
    s.rate_bps = 40 * kG + i;
    s.timer_in[1] = 55 * kUs;
    s.snd_nxt = 1000 * i;
    v.cc.push_back(s);
  }
  return v;
}

}  // namespace wh::test
