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
/// priority class, behind the data queued there, so its RTT — and with windows (HAS_WIN) its
/// throughput — depends on those queues too; but only where a standing queue can form: at a
/// port carrying the data of two or more active flows, or of one flow whose NIC line rate is
/// above the port's rate (its bottleneck). Elsewhere a port's queue is at most a packet or two,
/// and the ACK passing it meets no other partition's state worth keeping together (measured:
/// a flow whose ACKs crossed two windowed flows' standing queue ran at half its line rate, and
/// as a partition of its own it was 2.75 % off packet mode; on a rail fabric, where every port
/// carries one ring flow at line rate, tying each ring's flows through their ACKs only made
/// partitions larger).
///
/// The ACKs also take a share of the port's capacity from the data leaving there: one ACK per
/// data packet, ack_bytes / data_packet_bytes of the data's rate (5.7 % with 1,000-B payloads:
/// two opposite flows on a star ran 2.8 % apart from packet mode as two partitions; 0.66 % with
/// SimAI's 9,000-B payloads). Where that share is at least the error bound, an ACK port carrying
/// any data couples too.
///
/// So a flow's partition ports are its data path's egress ports plus the switch egress ports of
/// its ACK path that couple now: congestible ones, or, when the ACK share reaches `error_bound`,
/// any that carries data. That changes as flows come and go; add() and remove() return the other
/// flows whose partition ports changed with it. Everything here depends only on the sequence of
/// calls (results sorted by flow id).
class QueueCoupling {
 public:
  /// `error_bound`: the error a skip may make (WormholeSettings::error_bound, a fraction).
  QueueCoupling(const Network& net, double error_bound);

  /// Active flow `id` starts. Returns the other active flows (ascending ids) whose partition
  /// ports changed because one of its data ports now couples their ACKs.
  std::vector<uint32_t> add(uint32_t id);
  /// Active flow `id` ends (or is rerouted). Returns the other active flows (ascending) whose
  /// partition ports changed because one of its data ports no longer couples their ACKs.
  std::vector<uint32_t> remove(uint32_t id);
  /// Flow `id`'s partition ports now: its data path and the ports of its ACK path that couple,
  /// ascending, no duplicates. Precondition: active.
  std::vector<uint32_t> ports(uint32_t id) const;
  /// Flow `id`'s data path (egress ports in path order) as recorded at add(). Precondition: active.
  const std::vector<uint32_t>& data_path(uint32_t id) const { return paths_.at(id).data; }
  /// Whether a standing queue can form at `port`: the data of two or more active flows, or of one
  /// whose line rate is above the port's rate, leaves through it.
  bool congestible(uint32_t port) const { return data_users_[port] >= 2 || over_users_[port] >= 1; }
  /// Whether the ACKs crossing `port` couple their flows with its partition (see the class).
  bool couples_acks(uint32_t port) const { return data_users_[port] >= (ack_load_counts_ ? 1u : 2u) || over_users_[port] >= 1; }

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
  bool ack_load_counts_;                             // ACK bytes / data packet bytes >= the error bound
  std::unordered_map<uint32_t, Paths> paths_;        // active flow -> its paths
  std::vector<uint32_t> data_users_, over_users_;    // per port: active flows' data leaving through it
  std::vector<std::vector<uint32_t>> ack_users_;     // per port: active flows whose ACKs leave through it
};

}  // namespace wh
