// Which egress ports tie a flow to other flows' partitions: the queues whose occupancy its
// throughput depends on (see QueueCoupling).
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "wormhole/net/network.h"

namespace wh {

/// The ports each active flow shares queues through, for partitioning.
///
/// A flow's data packets wait in the egress queues of its data path: those ports always couple
/// it with the other flows there. Its ACKs (and NACKs) wait at switches in the flow's own
/// priority class, behind the data queued there and the packet on the wire, so its RTT — and
/// with windows (HAS_WIN) its throughput — depends on the data leaving those ports; and the ACKs
/// take their share of the data's link time. So a switch egress port of its ACK path couples it
/// with the flows whose data leaves there. Measured: a flow whose ACKs crossed two windowed flows'
/// standing queue ran at half its line rate, and as a partition of its own it was 2.75 % off
/// packet mode; on a rail fabric's DP rings (SimAI's 9,000-B packets, windows) each ring flow's
/// ACKs leave through the port of the previous flow's data: with every flow a partition of its
/// own, flows simulated beside frozen neighbours ran at 50.0 GB/s where the ring runs at 48.0
/// (4 %), and the iteration came out 5.1 % long. A port that carries only ACKs couples nothing.
///
/// So a flow's partition ports are its data path's egress ports plus the switch egress ports of
/// its ACK path that carry some active flow's data. That changes as flows come and go; add() and
/// remove() return the other flows whose partition ports changed with it. Everything here
/// depends only on the sequence of calls (results sorted by flow id).
class QueueCoupling {
 public:
  explicit QueueCoupling(const Network& net);

  /// Active flow `id` starts. Returns the other active flows (ascending ids) whose partition
  /// ports changed because one of its data ports now couples their ACKs.
  std::vector<uint32_t> add(uint32_t id);
  /// Active flow `id` ends (or is rerouted). Returns the other active flows (ascending) whose
  /// partition ports changed because one of its data ports no longer couples their ACKs.
  /// Throws std::logic_error if `id` is not active (a caller's bookkeeping error).
  std::vector<uint32_t> remove(uint32_t id);
  /// Flow `id`'s partition ports now: its data path and the ports of its ACK path that couple,
  /// ascending, no duplicates. Precondition: active.
  std::vector<uint32_t> ports(uint32_t id) const;
  /// Flow `id`'s data path (egress ports in path order) as recorded at add(). Precondition: active.
  const std::vector<uint32_t>& data_path(uint32_t id) const { return paths_.at(id).data; }
  /// Whether the ACKs crossing `port` couple their flows with its partition: some active flow's
  /// data leaves through it.
  bool couples_acks(uint32_t port) const { return data_users_[port] > 0; }

 private:
  struct Paths {
    std::vector<uint32_t> data, ack;
  };
  /// Counts `id`'s data users on its data ports (+1 or −1) and returns the ports whose
  /// couples_acks() flipped.
  std::vector<uint32_t> count(uint32_t id, const Paths& p, int sign);
  /// The other active flows whose ACKs cross one of `flipped` (ascending, unique, without `id`).
  std::vector<uint32_t> ack_users_of(const std::vector<uint32_t>& flipped, uint32_t id) const;

  const Network& net_;
  std::unordered_map<uint32_t, Paths> paths_;        // active flow -> its paths
  std::vector<uint32_t> data_users_;                 // per port: active flows whose data leaves through it
  std::vector<std::vector<uint32_t>> ack_users_;     // per port: active flows whose ACKs leave through it
};

}  // namespace wh
