// A flow as the model takes it: who sends how many bytes to whom, when (io/flows.h reads HPCC's
// flow.txt into it; workload drivers make them).
#pragma once
#include <cstdint>

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

}  // namespace wh
