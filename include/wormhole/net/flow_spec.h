// A flow as the model takes it: who sends how many bytes to whom, when (io/flows.h reads HPCC's
// flow.txt into it; workload drivers make them).
#pragma once
#include <cstdint>
#include <unordered_map>

#include "wormhole/core/time.h"

namespace wh {

/// One flow: an RDMA write of `size_bytes` from host `src` to host `dst` starting at `start`.
struct FlowSpec {
  uint32_t src = 0, dst = 0;
  uint32_t pg = 3;          ///< priority group = switch queue class (1..7 in practice)
  uint32_t dport = 100;     ///< label carried in the packets
  uint64_t size_bytes = 0;  ///< bytes, < 2^32
  Time start = 0;           ///< absolute start time, ps (the file gives seconds; see reference_start_ns)
  int line = 0;             ///< line in the file (for messages); 0 for generated flows
};

/// The UDP source ports of a run's flows, as the reference's traffic generator numbers them: the
/// flows of one (src, dst) pair get 10000, 10001, ... in the order they are created. With the
/// destination port they choose a flow's ECMP path and NIC.
class SourcePorts {
 public:
  /// The source port of the next flow from host `src` to host `dst` (16 bits, wrapping as the
  /// packets' header field does).
  uint16_t next(uint32_t src, uint32_t dst) {
    uint32_t& sp = next_.try_emplace((uint64_t(src) << 32) | dst, 10000).first->second;
    return static_cast<uint16_t>(sp++);
  }

 private:
  std::unordered_map<uint64_t, uint32_t> next_;  // (src << 32 | dst) -> next source port
};

}  // namespace wh
