// HPCC-PINT's log-scale utilisation code (the reference's Pint class, pint.cc).
#pragma once
#include <cmath>
#include <cstdint>

#include "wormhole/core/rng.h"

namespace wh {

/// HPCC-PINT's log-scale utilisation code (the reference's Pint class): u is scaled by
/// max_concurrent = 512, encoded as a power of PINT_LOG_BASE with randomised rounding.
struct PintCodec {
  static constexpr double kMaxConcurrent = 512;
  double log_base = 1.05;
  uint16_t encode(double u, Rng& rng) const {
    uint32_t ui = static_cast<uint32_t>(std::ceil(u * kMaxConcurrent));
    if (ui == 0) ui = 1;
    const double power = std::log(double(ui)) / std::log(log_base);
    const uint16_t hi = static_cast<uint16_t>(std::ceil(power)), lo = static_cast<uint16_t>(std::floor(power));
    double upper = std::pow(log_base, hi);
    const double lower = std::pow(log_base, lo);
    if (hi == lo) upper *= log_base;
    return double(rng.next() % 65536) < (ui - lower) / (upper - lower) * 65536 ? hi : lo;
  }
  double decode(uint16_t p) const { return std::pow(log_base, p) / kMaxConcurrent; }
};

}  // namespace wh
