// Small, fast, seedable random streams (one per port), so results do not depend on call order
// across ports or on how the network is split over ranks.
#pragma once
#include <cstdint>
#include <utility>

namespace wh {

/// splitmix64: used to derive independent stream seeds from (run seed, stream id).
inline uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// xoroshiro128+ (Blackman & Vigna): 16 bytes of state, uniform doubles in [0, 1).
class Rng {
 public:
  Rng() = default;
  Rng(uint64_t seed, uint64_t stream) {
    uint64_t x = seed * 0x2545f4914f6cdd1dull + stream;
    s0_ = splitmix64(x);
    s1_ = splitmix64(x);
  }
  uint64_t next() {
    const uint64_t a = s0_;
    uint64_t b = s1_;
    const uint64_t r = a + b;
    b ^= a;
    s0_ = ((a << 24) | (a >> 40)) ^ b ^ (b << 16);
    s1_ = (b << 37) | (b >> 27);
    return r;
  }
  /// The generator's whole state (two words), and a generator continuing from one (memo files).
  std::pair<uint64_t, uint64_t> state() const { return {s0_, s1_}; }
  static Rng from_state(uint64_t s0, uint64_t s1) {
    Rng r;
    r.s0_ = s0, r.s1_ = s1;
    return r;
  }
  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t s0_ = 1, s1_ = 2;
};

}  // namespace wh
