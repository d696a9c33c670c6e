// What a training-workload run produces beyond the per-flow table: iteration times, per-layer
// compute / communication (the columns of SimAI's detailed and EndToEnd reports, docs/workloads.md §6)
// and one row per collective. Plain data: the workload driver fills it, the writers write it.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "wormhole/core/chunked.h"
#include "wormhole/core/spill_vector.h"

#include "wormhole/core/time.h"

namespace wh {

/// The three phases of a layer row (docs/workloads.md §1.6): forward, input gradient, weight gradient.
enum class Phase : uint8_t { Fwd = 0, Ig = 1, Wg = 2 };
inline constexpr const char* kPhaseName[3] = {"fwd", "ig", "wg"};

/// One collective on one group in one iteration (all of the group's ranks together).
struct CollectiveRecord {
  uint32_t iteration = 0;
  uint32_t layer = 0;        ///< row index in the workload file (0-based)
  std::string layer_name;    ///< the row's name (not unique)
  Phase phase = Phase::Fwd;
  std::string op;            ///< "AllReduce", "AllGather", "ReduceScatter", "AllToAll"
  std::string group;         ///< "TP", "DP", "EP", "DP_EP" or "None"
  uint32_t group_first = 0;  ///< lowest GPU id of the group (identifies it)
  uint32_t ranks = 0;        ///< group size
  uint64_t bytes = 0;        ///< per-rank collective size S (the row's size), bytes
  uint32_t flows = 0;        ///< point-to-point flows it became (0: completed at once)
  uint64_t flow_bytes = 0;   ///< bytes of all its flows
  Time start = 0;            ///< first rank issued it, ps
  Time end = 0;              ///< last rank saw it complete (its last flow finished), ps
  /// Payload bytes of its finished flows by the way they went: GPU -> NVSwitch -> GPU (NVLink), or out
  /// of the GPU's NIC into the Ethernet fabric; and Σ bytes × switch-to-switch links crossed.
  uint64_t nvlink_bytes = 0, nic_bytes = 0, fabric_hop_bytes = 0;
  /// Algorithm bandwidth S / (end - start) in GiB/s (2^30 B/s, as SimAI); 0 when end == start.
  double algbw_gibps() const;
  /// algbw × busbw_factor(op, ranks), GiB/s.
  double busbw_gibps() const;
};

/// One workload row in one iteration, seen from the reporting GPU (SimAI reports rank 0).
/// Compute times are the file's; communication times are measured from issue to completion at
/// that GPU (0 when the phase has no collective or the GPU is not in its group).
struct LayerRecord {
  uint32_t iteration = 0;
  uint32_t layer = 0;
  std::string name;
  std::array<Time, 3> compute{};       ///< per Phase, ps
  std::array<Time, 3> comm{};          ///< per Phase: issue -> complete at the reporting GPU, ps
  /// Per Phase: time the reporting GPU was blocked on this collective, ps. Fwd and ig collectives
  /// block, so exposed == comm; a wg collective is exposed only while the GPU waits for it (at the
  /// next iteration's forward of the same row, or at the end of the run).
  std::array<Time, 3> exposed{};
  std::array<uint64_t, 3> bytes{};     ///< per Phase, per-rank size, bytes
  std::array<std::string, 3> op{};     ///< per Phase, op name ("" = none)
  std::array<uint32_t, 3> ranks{};     ///< per Phase, group size
  Time finished = 0;                   ///< when the row's last phase completed at the GPU, ps
  /// S / comm of a phase in GiB/s (0 if no communication).
  double algbw_gibps(Phase p) const;
  double busbw_gibps(Phase p) const;
};

/// Per iteration: from the run's start (iteration 0) or the previous iteration's end, to the time
/// every GPU has completed all of this iteration's compute and collectives.
struct IterationRecord {
  uint32_t index = 0;
  Time start = 0, end = 0;  ///< ps; for an incomplete iteration, end = the last thing that did finish
                            ///< (iterations no GPU began are not reported)
  bool complete = true;     ///< false when the run stopped before every GPU finished this iteration
};

/// One point-to-point flow of a collective (/workload/flows): which collective, group and step it is.
struct FlowTag {
  uint32_t flow = 0;        ///< network flow id (the /flows row)
  uint32_t collective = 0;  ///< index in WorkloadReport::collectives
  uint32_t ring = 0;        ///< ring (channel) of the collective's plan; 0 for AllToAll
  uint32_t step = 0;        ///< step within the ring (0 .. steps-1); 0 for AllToAll
  uint32_t src_gpu = 0, dst_gpu = 0;
};

/// One GPU's totals over the run (/workload/gpus, gpus.csv), ps. compute + exposed + bubble + update,
/// plus what it waited for other GPUs' wg collectives outside its own exposure, is its finish time.
struct GpuRecord {
  Time compute = 0;             ///< its compute phases (the workload file's times)
  Time exposed_tp = 0, exposed_dp = 0, exposed_ep = 0, exposed_dp_ep = 0;  ///< blocked on collectives, by group
  /// Blocked on a pipeline transfer after its peer stage sent it (exposed PP communication); 0 without a pipeline.
  Time exposed_pp = 0;
  /// Waited for a pipeline transfer its peer stage had not sent yet (the pipeline bubble); not exposure.
  Time bubble = 0;
  Time update = 0;              ///< update delays it waited for: after fwd and ig collectives, and what it waited
                                ///< of a wg collective's (before the next iteration's forward, at the end), ps
  Time finish = -1;             ///< when its program ended (all its collectives done); -1 if it did not
  /// Exposed communication not attributed to a group: a Chakra trace's, which is ASTRA-sim's figure
  /// (astra-sim workload/Workload.cc, report(): finish − the GPU compute nodes' durations); 0 otherwise.
  Time exposed_ungrouped = 0;
  /// Exposed communication, all groups, PP and ungrouped (as EndToEnd::total_exposed is for the report GPU).
  Time exposed() const { return exposed_tp + exposed_dp + exposed_ep + exposed_dp_ep + exposed_pp + exposed_ungrouped; }
};

/// SimAI's EndToEnd columns for the reporting GPU, summed over all iterations, ps.
struct EndToEnd {
  Time exposed_dp = 0, exposed_dp_ep = 0, exposed_tp = 0, exposed_ep = 0, exposed_pp = 0;
  /// Pipeline bubble: time the reporting GPU waited for a pipeline transfer its peer stage had not
  /// sent yet (docs/workloads.md §6); 0 without a pipeline. Not part of total_exposed.
  Time bubble = 0;
  Time total_compute = 0;
  Time total_exposed = 0;   ///< sum of the exposed columns
  Time total = 0;           ///< end of the last iteration
};

/// Everything the workload driver reports.
struct WorkloadReport {
  std::string workload_file;
  uint32_t gpus = 0, tp = 0, dp = 0, ep = 0, dp_ep = 0, pp = 1;
  uint32_t report_gpu = 0;
  std::vector<IterationRecord> iterations;
  std::vector<LayerRecord> layers;            ///< iteration-major, then row order
  std::vector<CollectiveRecord> collectives;  ///< in order of first issue
  /// One per flow the collectives became, in flow id order (millions of rows: kept on disk but for a
  /// block when the driver is given a folder, DriverOptions::flow_tag_dir).
  SpillVector<FlowTag, 14> flows;
  std::vector<GpuRecord> per_gpu;             ///< by GPU id
  /// The GPU exposed longest to communication, PP included (GpuRecord::exposed; the lowest id among
  /// equals): where the run's time went.
  uint32_t slowest_gpu = 0;
  /// Sets slowest_gpu from per_gpu (0 if empty).
  void find_slowest_gpu() {
    slowest_gpu = 0;
    for (uint32_t g = 1; g < per_gpu.size(); ++g)
      if (per_gpu[g].exposed() > per_gpu[slowest_gpu].exposed()) slowest_gpu = g;
  }
  /// False when exposed communication is a total per GPU, not split by group (a Chakra trace: its graph
  /// does not say which collective a GPU waits for, so each GPU's exposure is ASTRA-sim's finish − GPU
  /// compute, in GpuRecord::exposed_ungrouped). Then the per-group exposed figures, bubble and update
  /// are 0 and mean nothing: the CSVs leave those cells empty.
  bool exposure_by_group = true;
  EndToEnd end_to_end;
  /// Set when the run ended with collectives still pending (watchdog or stop time): a message
  /// naming how many and which.
  std::string incomplete;
  /// Of an incomplete run: its events ran dry with work pending (the watchdog: it could never finish),
  /// not a time limit or a signal that stopped it as asked.
  bool stuck = false;
  bool complete() const { return incomplete.empty(); }
};

}  // namespace wh
