// What a run produces: per-flow records, PFC events and run statistics (plain data).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "wormhole/core/time.h"

namespace wh {

/// One flow's outcome. IPs follow the reference (11.(id/256).(id%256).1).
struct FlowRecord {
  uint32_t id = 0;            ///< flow index (file order)
  uint32_t src = 0, dst = 0;  ///< node ids
  uint32_t sport = 0, dport = 0;
  uint32_t pg = 0;
  uint64_t size_bytes = 0;
  Time start = 0;             ///< ps
  Time finish = -1;           ///< ps; -1 = did not finish before the stop time
  uint64_t ideal_fct_ns = 0;  ///< the reference's standalone FCT (docs/network-model.md §5.1), ns
  /// The true ideal FCT (docs/network-model.md §5.1), ns, truncated: no run of the model can finish the
  /// flow sooner (0: the flow never started)
  uint64_t min_fct_ns = 0;
  Time skipped = 0;           ///< ps of its lifetime fast-forwarded (0 in packet mode)
  uint64_t skipped_bytes = 0; ///< payload bytes credited instead of sent
  bool finished() const { return finish >= 0; }
  /// FCT in whole ns as the reference prints it (now − start, both integer ns).
  uint64_t fct_ns() const { return to_ns(finish) - to_ns(start); }
  /// The product's slowdown: FCT / true ideal FCT, >= 1 (0 if the flow never started).
  double slowdown() const { return min_fct_ns ? double(fct_ns()) / double(min_fct_ns) : 0.0; }
  /// The reference's slowdown: FCT / standalone FCT (fct.txt's column 7 / column 8; can be < 1).
  double slowdown_ref() const { return ideal_fct_ns ? double(fct_ns()) / double(ideal_fct_ns) : 0.0; }
};

/// One PFC frame received (docs/network-model.md §5.2): logged by the paused (upstream) device.
struct PfcRecord {
  Time time = 0;           ///< ps
  uint32_t node = 0;
  uint8_t node_type = 0;   ///< 0 host, 1 switch
  uint32_t if_index = 0;   ///< interface index on that node (1-based, file order)
  uint8_t type = 0;        ///< 1 PAUSE received, 0 RESUME received
  uint8_t cls = 3;         ///< paused priority class
};

/// Run-wide statistics for the summary and the HDF5 metadata.
struct RunStats {
  uint64_t events = 0;          ///< events executed
  double wall_s = 0;            ///< wall-clock seconds of the simulation loop
  Time sim_end = 0;             ///< ps, time of the last event executed (cancelled timers included)
  Time last_finish = -1;        ///< ps, when the last flow finished (-1: none)
  uint64_t packets_dropped = 0; ///< all drops: drops_buffer + drops_loss + drops_link_down
  uint64_t drops_buffer = 0;    ///< switch ingress admission refused: headroom and shared buffer full
  uint64_t drops_loss = 0;      ///< link errors: the receiving port's error rate (ERROR_RATE_PER_LINK or the topology's)
  uint64_t drops_link_down = 0; ///< LINK_DOWN: sent to or queued on a failed link, or no route left
  uint64_t ecn_marks = 0;
  uint64_t max_queue_bytes = 0;  ///< peak egress queue of any switch port (all classes), bytes
  uint32_t max_queue_node = 0, max_queue_if = 0;  ///< where it was
  uint64_t retransmit_timeouts = 0;
  uint64_t retransmitted_packets = 0;  ///< data packets sent again (go-back-N after a NACK or a timeout)
  uint64_t retransmitted_bytes = 0;    ///< their payload, bytes
  uint64_t max_rtt_ns = 0, max_bdp_bytes = 0;  ///< maxRtt / maxBdp as the reference prints
};

}  // namespace wh
