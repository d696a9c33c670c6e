// count_workload_flows (driver.h): a workload's plan and network flows, counted for its memory estimate;
// check_collective_sizes, the same walk, for collectives too large to plan.
#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "wormhole/core/input_error.h"
#include "wormhole/workload/collectives.h"
#include "wormhole/workload/driver.h"

namespace wh {

namespace {

/// A kind of group's partition of the job's GPUs, as (ranks, rings) -> how many groups have them.
using Partition = std::map<std::pair<uint32_t, uint32_t>, uint64_t>;

Partition partition(const GroupLayout& layout, CommGroup group) {
  Partition out;
  std::vector<uint8_t> seen(layout.gpus, 0);  // each group once: by its members
  for (uint32_t g = 0; g < layout.gpus; ++g) {
    if (seen[g]) continue;
    const std::vector<uint32_t> members = group_members(layout, group, g);
    for (uint32_t m : members) seen[m] = 1;
    if (members.size() <= 1) continue;
    ++out[{static_cast<uint32_t>(members.size()), ring_count(layout, members)}];
  }
  return out;
}

/// One shape of the groups a collective runs on: `count` groups of `ranks` members on `rings` rings (1
/// for an AllToAll), each instance of `flows` flows (collective_flow_count).
struct GroupShape {
  uint32_t ranks, rings;
  uint64_t count, flows;
};

/// Calls f(op, row, shapes) for every collective one iteration issues (for_each_sending_op), with the
/// shapes of its groups; each kind of group is partitioned once.
template <class F>
void for_each_collective_shapes(const Workload& w, const GroupLayout& layout, const DriverOptions& o, F&& f) {
  std::map<CommGroup, Partition> groups;  // made on first use
  std::vector<GroupShape> shapes;
  for_each_sending_op(w, o, [&](const CommOp& op, const WorkloadLayer& row) {
    auto it = groups.find(op.group);
    if (it == groups.end()) it = groups.emplace(op.group, partition(layout, op.group)).first;
    shapes.clear();
    for (const auto& [shape, count] : it->second) {
      const uint32_t rings = op.op == Collective::AllToAll ? 1 : shape.second;
      const uint64_t flows = collective_flow_count(op.op, op.bytes, shape.first, rings, o.zero_chunk);
      shapes.push_back({shape.first, rings, count, flows});
    }
    f(op, row, shapes);
  });
}

}  // namespace

void check_collective_sizes(const Workload& w, const GroupLayout& layout, const DriverOptions& o) {
  using Shapes = std::vector<GroupShape>;
  for_each_collective_shapes(w, layout, o, [&](const CommOp& op, const WorkloadLayer& row, const Shapes& shapes) {
    for (const GroupShape& g : shapes) {
      if (g.flows < kMaxPlanFlows) continue;
      const std::string ring_text =
          op.op == Collective::AllToAll ? "" : fmt::format(" ({} ring{})", g.rings, g.rings == 1 ? "" : "s");
      // How the header's parallelism shrinks this kind of group (docs/workloads.md §1.1).
      const char* smaller = op.group == CommGroup::TP   ? "a smaller TP"
                            : op.group == CommGroup::EP ? "a smaller EP"
                            : op.group == CommGroup::DP ? "a larger TP or PP, or fewer GPUs"
                                                        : "a larger EP, TP or PP, or fewer GPUs";
      throw InputError(w.file, row.line,
                       fmt::format("row {}: {} on its {}-GPU {} groups{} would have {} flows, more than the {} a "
                                   "collective can have",
                                   row.name, op.raw, g.ranks, to_string(op.group),
                                   ring_text, g.flows, kMaxPlanFlows - 1),
                       fmt::format("make its {} groups smaller ({}), or leave them out with workload.ignore_groups",
                                   to_string(op.group), smaller));
    }
  });
}

WorkloadFlowCount count_workload_flows(const Workload& w, const GroupLayout& layout, const DriverOptions& o) {
  std::set<std::tuple<int, uint64_t, CommGroup>> planned;  // the plans already counted
  WorkloadFlowCount c;
  uint64_t per_iteration = 0, collectives = 0, bytes_per_iteration = 0;  // of one iteration
  using Shapes = std::vector<GroupShape>;
  for_each_collective_shapes(w, layout, o, [&](const CommOp& op, const WorkloadLayer&, const Shapes& shapes) {
    uint64_t flows = 0, bytes = 0;
    for (const GroupShape& g : shapes) {
      flows += g.count * g.flows;
      // A ring's flows form ranks × rings chains of flows / chains flows; an AllToAll's, chains of one.
      const uint64_t chains = g.flows == 0 || op.op == Collective::AllToAll ? g.flows : uint64_t(g.ranks) * g.rings;
      bytes += g.count * driver_plan_bytes(g.ranks, chains, g.flows == 0 ? 0 : static_cast<uint32_t>(g.flows / chains));
      bytes_per_iteration += g.count * g.flows * collective_flow_bytes(op.op, op.bytes, g.ranks, g.rings, o.zero_chunk);
      collectives += g.count;
    }
    per_iteration += flows;
    if (planned.emplace(static_cast<int>(op.op), op.bytes, op.group).second) c.plan_flows += flows, c.plan_bytes += bytes;
  });
  if (layout.pp > 1 && !w.header.micro && o.pipeline != PipelineSchedule::None) {
    // Each micro-batch's activation forward and gradient back across every boundary between the
    // P·v virtual stages: one transfer per GPU of a stage, of one flow unless pp_comm is 0.
    const uint64_t v = o.pipeline == PipelineSchedule::Interleaved ? std::max<uint32_t>(1, o.virtual_stages) : 1;
    const uint64_t boundaries = uint64_t(layout.pp) * v - 1;
    const uint64_t transfers = 2 * boundaries * layout.stage_gpus * std::max<uint32_t>(1, w.header.ga);
    collectives += transfers;
    if (w.header.pp_comm_bytes > 0) per_iteration += transfers, bytes_per_iteration += transfers * w.header.pp_comm_bytes;
  }
  c.flows = per_iteration * o.iterations;
  c.bytes = bytes_per_iteration * o.iterations;
  c.collectives = collectives * o.iterations;
  return c;
}

}  // namespace wh
