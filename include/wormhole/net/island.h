// Islands: parts of the fabric that only a known set of hosts can reach (a server's NVSwitch with its
// GPUs, or GPUs linked directly), where a collective's outcome depends on nothing but its own flows
// and the island's state when it starts. The collective memo (wormhole/workload/collective_memo.h)
// replays such collectives; the network gives it what it needs here.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "wormhole/core/time.h"

namespace wh {

/// Appends the bytes of `v` (a plain value) to `key`: keys compared byte for byte.
template <class T>
void append_key(std::string& key, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  key.append(b, sizeof(T));
}

/// An island: the switches the flows between some host pairs cross (each pair has exactly one path,
/// both ways), plus the hosts attached to them. Closed when every port of those switches leads to one
/// of them or to a host (a server's NVSwitch): traffic can then enter only from its hosts' island
/// ports, so a collective whose flows are its only users runs there exactly as it would alone. Open
/// when a fabric switch of it also links to switches off the paths (a rail leaf with its uplinks to the
/// spines): only a sub-island of it can be used, and only where the paths stay on the switch ports
/// facing the pairs' hosts (`path_ports`): other traffic then reaches those ports only by being sent to
/// or by one of those hosts, which the collective memo sees as a flow starting on the island.
/// Orders are canonical: switches and hosts in order of discovery from the pairs (in the pairs'
/// order), ports switch by switch in interface order, then each host's island ports in host order —
/// two islands built alike from equivalent pairs list equivalent elements at equal positions.
struct Island {
  std::vector<uint32_t> switches;  ///< node ids
  std::vector<uint32_t> hosts;     ///< node ids: the pairs' hosts first, then the others attached
  std::vector<uint32_t> ports;     ///< global port indices: every switch port, then the hosts' island ports
  /// Every port the pairs' paths send through (each host's NIC, then each switch's egress), both ways:
  /// all of them must be island ports of the (sub-)island a collective runs on.
  std::vector<uint32_t> path_ports;
  /// A sub-island (Network::sub_island): the part of a shared island that some of its hosts use — the
  /// switch ports facing them and their own island ports. Other hosts' traffic crosses its switches,
  /// touching it only through their shared buffer.
  bool shared = false;
  /// A fabric switch of it links to a switch off the paths: usable only as a sub-island.
  bool open = false;
  /// Which kinds of switch its paths cross (kIslandNvSwitch, kIslandFabric; 0 for direct host links).
  uint8_t kinds = 0;
  /// Position of global port `p` in `ports`, or UINT32_MAX.
  uint32_t local_port(uint32_t p) const;
};

/// Island kinds (Island::kinds, Network::island_kinds): a server's NVSwitch, a switch of the fabric
/// (a leaf: what a NIC links to).
inline constexpr uint8_t kIslandNvSwitch = 1, kIslandFabric = 2;

/// What a port of an island keeps from one collective to the next when it is quiet: the round-robin
/// positions, the finished QPs a NIC has not compacted away yet (global flow ids, in its order), and
/// the counters monitors and INT read.
struct IslandPortState {
  uint8_t rr_last = 0;
  uint32_t rr_qp = 0;
  std::vector<uint32_t> qps;
  uint64_t tx_bytes = 0, sent_bytes = 0;
  Time paused_total = 0;
  uint64_t rng0 = 0, rng1 = 0;  ///< the port's ECN / error generator
  uint16_t epoch = 0;           ///< fast-forward's epoch: moves when a skip freezes or shifts the port
};

/// What the collective memo did in a run.
struct CollectiveMemoStats {
  bool on = false;              ///< a collective memo took part in the run
  uint64_t considered = 0;      ///< collectives offered (every member issued)
  uint64_t not_island = 0;      ///< their flows leave an island (a NIC, a leaf, several paths) or it has other hosts
  uint64_t late_issue = 0;      ///< a member issued after the first flow was released
  uint64_t busy = 0;            ///< the island was not quiet, or another collective held it
  uint64_t overlaps = 0;        ///< replays on a fabric island left to the network: the members' groups could issue
                                ///< more traffic onto it before the replay would end
  uint64_t recorded = 0;        ///< simulated and kept as a new pattern
  uint64_t not_kept = 0;        ///< simulated, not kept (disturbed, not quiet at its end, a random draw, a skip)
  uint64_t repeats = 0;         ///< simulated while its pattern was being recorded elsewhere, compared with it
  uint64_t replayed = 0;        ///< replayed from a pattern, or following its recording on another island
  uint64_t replayed_flows = 0;  ///< flows of the replayed collectives
  uint64_t verified = 0;        ///< hits simulated instead and compared
  uint64_t verify_failures = 0; ///< verified hits and repeats differing from the pattern in any completion
  uint64_t conflicts = 0;       ///< other flows that started on a replayed island's ports
  uint64_t margin_violations = 0; ///< replays on a shared NVSwitch whose buffer came near a PFC threshold meanwhile
  uint64_t follow_failures = 0; ///< replays that followed a recording which was then not kept (disturbed)
  uint64_t patterns = 0;        ///< distinct patterns held
  /// Events the replays stand for (estimated as fast-forward estimates its own: 4 per data packet and hop;
  /// SkipStats::events_skipped)
  uint64_t events_replayed = 0;
  uint64_t approximate = 0;     ///< of the recorded: patterns fast-forward skipped part of (CollectivePattern::skips)
  uint64_t approximate_replays = 0;  ///< of the replayed: replays of such patterns (or following such a recording)
  /// Σ over the flows those replays ended of the estimated error fast-forward gave their recordings' flows, bytes
  /// (added to the run's estimate: SkipReport::estimated_error)
  double estimated_error_bytes = 0;
  /// Verified hits of such patterns (simulated without skips instead): the largest difference of a completion,
  /// |recorded − simulated| / simulated, both measured from the collective's first issue (0: none verified)
  double verify_max_error = 0;
};

/// What fast-forward did to one flow of a collective while it was recorded.
struct FlowSkip {
  Time time = 0;          ///< ps of the flow's lifetime fast-forwarded
  uint64_t bytes = 0;     ///< payload bytes credited instead of sent
  double error = 0;       ///< the skips' estimated error, bytes (FastForward's per-flow share)
  bool operator==(const FlowSkip& o) const { return time == o.time && bytes == o.bytes; }  // not the estimate
};

/// A recorded collective on an island (the collective memo's value; memo files keep them): what its
/// flows did and what it left on the island.
struct CollectivePattern {
  std::vector<Time> finish;     ///< per plan flow: completion, ps after the collective's first issue
  std::vector<uint32_t> order;  ///< plan flows by completion, equal-time ones in the order they ended
  // What the island holds after it, per island port (Island::ports order).
  std::vector<uint8_t> rr_last;
  std::vector<uint32_t> rr_qp;
  std::vector<std::vector<uint32_t>> qps;  ///< finished QPs left on a NIC, as plan flows
  std::vector<uint64_t> tx_delta, sent_delta;  ///< bytes the ports sent during it
  /// A sub-island's pattern: the most bytes of its switch's shared buffer in use while it was recorded
  /// (its own and other simulated traffic's; a bound on what its replay stands for). 0 on whole islands.
  uint64_t shared_peak = 0;
  /// Recorded with fast-forward skipping part of it (an approximate pattern, as exact as those skips):
  /// per plan flow, what it skipped. Empty for a pattern simulated packet for packet (an exact one).
  std::vector<FlowSkip> skips;
  double error_bound = 0;  ///< an approximate pattern's: the error bound its skips were held to (a fraction)
  bool approximate() const { return !skips.empty(); }
  uint64_t hits = 0;
  bool rejected = false;  ///< simulated again and found different: not replayed any more (not written to files)
  bool operator==(const CollectivePattern& o) const {
    return finish == o.finish && order == o.order && rr_last == o.rr_last && rr_qp == o.rr_qp && qps == o.qps &&
           tx_delta == o.tx_delta && sent_delta == o.sent_delta && skips == o.skips;  // hits are not the pattern
  }
};

/// Told by the network of what concerns islands (the collective memo implements it).
class IslandHooks {
 public:
  virtual ~IslandHooks() = default;
  /// Flow `id` got its QP now (replayed flows are not announced): it sends from NIC port `nic` and its
  /// ACKs leave port `ack_nic` (UINT32_MAX: none).
  virtual void flow_started(uint32_t id, uint32_t nic, uint32_t ack_nic) = 0;
  /// The event the hook scheduled with Network::schedule_replay(at, slot) is due.
  virtual void replay_due(uint32_t slot) = 0;
  /// Whether flow `id`, which got its QP now, is simulated to be compared packet for packet (a verified
  /// hit): fast-forward must not touch it, or the comparison would be void (Network::simulated_exactly).
  virtual bool simulated_exactly(uint32_t id) const = 0;
};

}  // namespace wh
