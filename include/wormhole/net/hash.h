// The hashes the reference uses to pick paths: MurmurHash3 x86 32-bit (docs/network-model.md §12).
#pragma once
#include <cstddef>
#include <cstdint>

namespace wh {

/// MurmurHash3_x86_32 over `len` bytes with `seed` (Austin Appleby's public-domain algorithm).
uint32_t murmur3_32(const void* key, size_t len, uint32_t seed);

/// The switch ECMP hash: key = three little-endian uint32 words [sip, dip, sport | dport << 16],
/// seed = the switch's node id; the next hop is list[hash % list.size()] (docs/network-model.md §12).
inline uint32_t ecmp_hash(uint32_t sip, uint32_t dip, uint32_t sport, uint32_t dport, uint32_t seed) {
  const uint32_t k[3] = {sip, dip, (sport & 0xffffu) | (dport << 16)};
  return murmur3_32(k, 12, seed);
}

/// The host NIC choice of ns-3's Hash32 (Murmur3, seed 0x8BADF00D) over {sip, dip, sport u16, dport u16}.
inline uint32_t qp_hash(uint32_t sip, uint32_t dip, uint32_t sport, uint32_t dport) {
  const uint32_t k[3] = {sip, dip, (sport & 0xffffu) | (dport << 16)};
  return murmur3_32(k, 12, 0x8BADF00Du);
}

}  // namespace wh
