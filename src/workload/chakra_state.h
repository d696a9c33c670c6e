// The Chakra driver's private state (wormhole/workload/chakra.h): what chakra.cpp (the driver) and
// chakra_memo.cpp (its offers to the collective memo) share. Not an interface.
#pragma once
#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "wormhole/workload/chakra.h"
#include "wormhole/workload/collectives.h"
#include "wormhole/workload/release_batches.h"

namespace wh {
namespace chakra_driver {

inline constexpr uint16_t kGpuDone = 0;   // target = rank: its running GPU compute node is over
inline constexpr uint16_t kCpuDone = 1;   // target = index in timers_: a CPU node is over
inline constexpr uint16_t kRelease = 2;   // target = index in releases_
inline constexpr uint16_t kDecide = 3;    // the collective memo's offers of an instant are decided (offer_pending)
inline constexpr uint32_t kP2pBit = 0x80000000u;
inline constexpr uint32_t kPriorityGroup = 3;  // every flow's switch queue class, as SimAI's
inline constexpr Time kNever = std::numeric_limits<Time>::max();

}  // namespace chakra_driver

struct ChakraDriver::Rank {
  std::vector<uint32_t> waiting;                  // per node: dependencies not finished
  std::vector<std::vector<uint32_t>> children;    // per node
  std::map<uint64_t, uint32_t> index;             // node id -> index
  std::vector<uint32_t> gpu_queue;                // ready GPU compute nodes, FIFO
  size_t gpu_head = 0;
  uint32_t gpu_running = UINT32_MAX;
  std::map<std::string, uint32_t> coll_seq;       // per group: collectives issued so far
  std::map<std::tuple<uint32_t, uint32_t, int64_t>, uint32_t> p2p_seq;  // per (src, dst, tag)
  // What the collective memo's look-ahead reads (earliest_issue): per node 0 waiting, 1 ready (running,
  // queued or issued), 2 finished; when the running GPU node and each running CPU node end (ps).
  std::vector<uint8_t> state;
  std::vector<uint32_t> active, active_pos;  // the ready nodes (any order) and each one's place there
  Time gpu_end = 0;
  std::unordered_map<uint32_t, Time> cpu_end;
  std::unordered_map<uint32_t, uint32_t> coll_at;  // an issued collective node not finished -> colls_
  std::vector<Time> min_duration;  // per node: ChakraDriver::min_duration's answer, ps (-1: not asked yet)
};

struct ChakraDriver::Coll {
  CollectivePlan cp;
  std::vector<uint32_t> members;                  // sorted
  std::vector<uint8_t> flow_state;                // 0 waiting, 1 released, 2 finished
  std::vector<int32_t> node;                      // per member: its node, -1 until it issues
  std::vector<uint32_t> remaining;                // per member: involved flows not finished
  ReleaseBatches batches;                         // released flows waiting for the send latency
  size_t record = 0;
  // With a collective memo: each member's issue time (ps; -1 not yet), how many issued, the memo's
  // handle (-1: left to the network) and the island kinds its flows cross.
  std::vector<Time> issue_time;
  uint32_t issues_seen = 0;
  int32_t memo = -1;
  uint8_t kinds = 0;
  std::vector<Time> replay_done;  // a replay of a stored pattern: when each member's part ends (known_end)
  uint64_t epoch = 0;             // moves when a member issues it or one of its flows is released or ends
  // part_end_bound's answers, per member, made at bound_now when epoch was bound_epoch.
  std::vector<Time> part_bound;
  uint64_t bound_epoch = 0;
  Time bound_now = -1;
  uint32_t index_of(uint32_t r) const {
    return static_cast<uint32_t>(std::lower_bound(members.begin(), members.end(), r) - members.begin());
  }
};

struct ChakraDriver::P2p {
  uint32_t src = 0, dst = 0;
  uint64_t bytes = 0;
  int32_t send_node = -1, recv_node = -1;
  bool done = false;
  uint8_t kinds = 0;  // island kinds its flow crosses (with a collective memo)
  size_t record = 0;  // its SendRecv record in the report's collectives (a send of bytes > 0)
};

}  // namespace wh
