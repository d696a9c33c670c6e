// The workload driver's private state (wormhole/workload/driver.h): what driver.cpp and its parts
// (driver_program.cpp, driver_memo.cpp, driver_pipeline.cpp, driver_report.cpp) share. Not an interface.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "wormhole/workload/driver.h"
#include "wormhole/workload/release_batches.h"

namespace wh {
namespace workload_driver {

// aux codes of the driver's client events
inline constexpr uint16_t kProgram = 0;   // target = GPU: its program's own time reached (a delay over, or a step that meets the network)
inline constexpr uint16_t kRelease = 1;   // target = a count of instants: the oldest of due_ is over its send latency
inline constexpr uint16_t kWgUpdate = 2;  // target = index in wg_updates_: a wg collective's update delay is over
// In flow_owner_ and due_, an instance index with this bit set is a pipeline transfer's index.
inline constexpr uint32_t kPpBit = 0x80000000u;

}  // namespace workload_driver

/// A collective's plan, shared by identical collectives. Its flows, their ends, parents and
/// children are computed from the CollectivePlan's shape; nothing is kept per flow.
struct WorkloadDriver::Plan {
  CollectivePlan cp;  // cp.members: sorted GPU ids
  // The collective memo's key of its flows (member-relative), made on the first offer to the memo
  // that finds an island: most collectives (DP rings across the fabric) never need it, and it is
  // 20 B a flow.
  mutable std::string memo_key;
  mutable bool keyed = false;
  // Collective memo: which kinds of island some flow of it can enter (-1: not known yet).
  mutable int8_t island_kinds = -1;
  const std::vector<uint32_t>& members() const { return cp.members; }
  uint32_t index_of(uint32_t gpu) const {
    return static_cast<uint32_t>(std::lower_bound(cp.members.begin(), cp.members.end(), gpu) - cp.members.begin());
  }
};

/// One pipeline send: the activation (forward) or gradient (backward) of one micro-batch, from
/// `src` to `dst` (adjacent stages), as one flow of pp_comm bytes.
struct WorkloadDriver::Transfer {
  uint32_t iter = 0, mb = 0;
  bool grad = false;
  uint32_t src = 0, dst = 0;  // job GPUs
  Time sent = -1;             // the sender issued it
  uint8_t involves = 0;       // island kinds counted in involved_ (collective memo: its flow can enter them)
  Time done = -1;             // its flow finished (or, without bytes, when it was sent)
  Time waiting_since = -1;    // the receiver blocked on it
  size_t record = 0;          // index in report_.collectives
};

struct WorkloadDriver::Instance {
  uint32_t iter = 0, row = 0;
  Phase phase = Phase::Fwd;
  std::shared_ptr<const Plan> plan;
  std::vector<uint8_t> issued;       // per member
  std::vector<uint32_t> remaining;   // per member: involved flows not finished
  // Which flows finished (the stuck-run report). A flow is released exactly once, when both its sender
  // has issued and its parent (if any) has finished, whichever comes last (ready_before_issue holds
  // those waiting for the issue).
  FinishedFlows finished;
  // Per member that has not issued yet: its flows whose parent has finished (released at its issue).
  // Kept apart so that an issue looks at its own roots and these, not at every flow it sends (a
  // 16,384-rank ring AllReduce has 262,136 a member).
  std::unordered_map<uint32_t, std::vector<uint32_t>> ready_before_issue;
  uint32_t released = 0, finished_count = 0;  // flows released / finished so far (the stuck-run report)
  uint32_t members_done = 0;
  size_t record = 0;                 // index in report_.collectives
  std::vector<Time> issue_time;      // per member (collective memo)
  int32_t memo = -1;                 // collective memo handle
  uint32_t issues_seen = 0;          // members that issued (collective memo)
  ReleaseBatches batches;             // flows released, waiting for their send latency
};
enum WorkloadDriver::Stage : uint8_t {
  kStepBegin,  // the next step of the stage's program
  kRecvWait,   // blocked on a pipeline transfer
  kFwdBegin,   // row: wait for last iteration's wg of this row, then compute
  kFwdIssue,   // issue the fwd collective
  kFwdComm,    // blocked on it
  kFwdNext,    // update delay over: next row
  kIgBegin,    // compute ig
  kIgIssue,
  kIgComm,
  kWgBegin,    // update delay of ig over: compute wg
  kWgIssue,    // issue wg (non-blocking), next row
  kIterEnd,    // the iteration's program is over
  kEndWait,    // wait for outstanding wg collectives
  kMicroIssue, // MICRO: issue row 0's wg
  kMicroComm,
  kDone,
};

struct WorkloadDriver::Gpu {
  uint32_t iter = 0;
  int32_t row = 0;
  uint32_t pc = 0;                  // index of the current step in its stage's program
  uint32_t pp_stage = 0;            // pipeline stage
  Stage stage = kStepBegin;
  Time blocked_since = -1;          // waiting for a wg collective since
  bool timer_pending = false;       // the program waits for the client's clock to reach `at` (kProgram event)
  Time at = 0;                      // the program's own time (ps): where its kProgram event is while timer_pending
  // Per row whose wg collective has flows (Row::wg_slot): the last iteration whose wg completed here,
  // and when its communication completed (ps; -1: none).
  std::vector<int32_t> wg_done_iter;
  std::vector<Time> wg_time;
  // A wg without flows is done when its row's step issues it, its update delay over in the program's own
  // time: only the delays not known to be over where the program stands are kept (a few: the GPU's
  // state does not grow with the rows). One past the time limit stays, never over.
  struct LocalWg {
    uint32_t row, iter;
    Time ready;  // ps
  };
  std::vector<LocalWg> wg_pending;
  Time wg_local_until = 0;          // when the last update delay of a wg without flows is over (ps)
  uint32_t wg_outstanding = 0;      // wg collectives whose end the client's clock brings
  std::map<uint32_t, Time> issued_at;  // instance -> issue time (collectives in flight at this GPU)
};

}  // namespace wh
