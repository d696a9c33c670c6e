// The workload driver (driver.h): progress, the stuck-run description and the run's report; the
// expected traffic of a workload.
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>
#include <fmt/core.h>

#include "wormhole/core/interrupt.h"

#include "driver_internal.h"

namespace wh {

double WorkloadDriver::progress() const {
  // By bytes: a packet run's events grow with them, while collectives differ in size by orders of
  // magnitude (GPT-175B's last DP ReduceScatter, one of 784 collectives, is most of the bytes).
  // Finished flows count whole, running ones by their bytes done (acknowledged or credited): a ring step of 682-MB flows
  // (GPT-175B's TP AllGather) runs for minutes of wall time and would otherwise count at its end only.
  if (total_bytes_ == 0) return -1;
  const double running = net_.running_bytes([this](uint32_t id) { return flow_owner_.contains(id); }).done();
  return std::min(1.0, (double(done_bytes_) + running) / double(total_bytes_));
}

void WorkloadDriver::tick(Time now, uint64_t events, uint64_t flows_finished) {
  if (forward_) forward_->tick(now, events, flows_finished);
}

std::string WorkloadDriver::describe_pending() const {
  std::string s;
  int shown = 0;
  uint64_t more = 0;  // pending collectives not shown
  // In the order they were made (their report records'), not the order of the slots they took.
  std::vector<uint32_t> pending;
  for (uint32_t id = 0; id < inst_.size(); ++id) {
    const Instance& in = inst_[id];
    if (in.plan && in.members_done < in.plan->members().size()) pending.push_back(id);  // in flight, not free
  }
  std::sort(pending.begin(), pending.end(), [&](uint32_t a, uint32_t b) { return inst_[a].record < inst_[b].record; });
  for (uint32_t id : pending) {
    const Instance& in = inst_[id];
    if (shown == 5) {
      ++more;
      continue;
    }
    ++shown;
    const CollectiveRecord& rec = report_.collectives[in.record];
    const CollectivePlan& cp = in.plan->cp;
    // A flow not finished is in flight once released: its sender issued and its parent finished.
    auto released = [&](uint32_t f) {
      const uint32_t parent = cp.parent(f);
      return in.issued[cp.src_index(f)] && (parent == kNoParent || in.finished.test(cp, parent));
    };
    uint32_t issued = 0;
    for (uint8_t i : in.issued) issued += i;
    const uint32_t waiting = cp.size() - in.released, running = in.released - in.finished_count;
    s += fmt::format("\n  iteration {} row {} ({}) {} {} on {} group of GPU {} ({} ranks): {} of {} ranks issued it, "
                     "{} flows not yet released, {} in flight",
                     rec.iteration, rec.layer, rec.layer_name, kPhaseName[int(rec.phase)], rec.op, rec.group,
                     rec.group_first, rec.ranks, issued, rec.ranks, waiting, running);
    // The first pending flows, so a user can see where the chain is stuck.
    int listed = 0;
    for (uint32_t f = 0; f < cp.size() && listed < 3; ++f) {
      if (in.finished.test(cp, f)) continue;
      const FlowStep st = cp.flow(f);
      const bool src_issued = in.issued[cp.src_index(f)];
      s += fmt::format("\n    flow GPU {} -> GPU {}, {} B, ring {} step {}: {}", st.src, st.dst, st.bytes, st.ring, st.step,
                       released(f) ? "released, not finished (waiting for its send latency, in flight, or without a path)"
                       : !src_issued         ? "its sender has not issued the collective"
                                             : "waiting for its parent flow");
      ++listed;
    }
  }
  if (more > 0) s += fmt::format("\n  ... and {} more collectives", more);
  uint32_t gpus_left = 0;
  for (const Gpu& G : gpus_) gpus_left += G.stage != kDone;
  int transfers = 0;
  for (const Transfer& t : transfers_) {
    if (t.done >= 0 || transfers++ >= 3) continue;
    s += fmt::format("\n  iteration {} pipeline {} of micro-batch {}, GPU {} -> GPU {}: {}", t.iter,
                     t.grad ? "gradient" : "activation", t.mb, t.src, t.dst,
                     t.sent < 0 ? "its sender has not reached it" : "in flight");
  }
  s += fmt::format("\n  {} of {} GPUs have not finished their program", gpus_left, layout_.gpus);
  return s;
}

void WorkloadDriver::finish_report(Time until) {
  const Time now = net_.client_now();
  if (gpus_done_ < layout_.gpus) {
    // Run dry: when the last event ran, or a program's last wg update delay ended (in its own time,
    // without an event). Stopped: at the time limit, which may be long after the last event (a max_time
    // inside the first compute phase ran nothing at all).
    const bool dry = net_.pending_events() == 0;
    Time last = now;
    for (const Gpu& G : gpus_) last = std::max(last, G.wg_local_until);
    const size_t transfers = static_cast<size_t>(
        std::count_if(transfers_.begin(), transfers_.end(), [](const Transfer& t) { return t.done < 0; }));
    // pending_ counts both.
    const std::string pending =
        fmt::format("{} collectives{} pending", pending_ - transfers,
                    transfers ? fmt::format(" and {} pipeline transfer{}", transfers, transfers == 1 ? "" : "s")
                              : std::string());
    if (net_.stopped_by_signal())
      report_.incomplete = fmt::format("interrupted by {} at {:.6f} s while {}:{}", signal_name(net_.stop_signal()),
                                       double(now) / kSec, pending, describe_pending());
    else {
      report_.stuck = dry;
      report_.incomplete = fmt::format("{} at {:.6f} s while {}:{}", dry ? "no runnable events" : "stopped by the time limit",
                                       double(dry ? last : until) / kSec, pending, describe_pending());
    }
  }
  // The iteration a GPU is in: a MICRO GPU counts the next from its collective's end, but is in the
  // collective's update delay till the delay is over.
  const auto began = [&](const Gpu& G) {
    return G.iter - (w_.header.micro && G.timer_pending && G.stage == kMicroIssue ? 1 : 0);
  };
  Time prev = o_.start;
  for (uint32_t i = 0; i < o_.iterations; ++i) {
    // An iteration no GPU began (the run stopped before) is not reported: it has no time at all.
    const bool started =
        i == 0 || std::any_of(gpus_.begin(), gpus_.end(), [&](const Gpu& G) { return G.stage == kDone || began(G) >= i; });
    if (!started) break;
    const Time end = std::max(iter_end_[i], prev);
    // Complete when every GPU's program went past it and its wg collectives of it are done.
    bool complete = true;
    for (const Gpu& G : gpus_) {
      if (G.stage == kDone) continue;
      if (began(G) <= i) complete = false;  // a MICRO iteration's update delay is part of it
      if (w_.header.micro) continue;
      for (int32_t d : G.wg_done_iter) complete = complete && d >= static_cast<int32_t>(i);
      // Without flows: every row's backward step in its stage's program, none of them past the limit.
      const std::vector<bool>& bwd = bwd_rows_[G.pp_stage];
      complete = complete && std::all_of(bwd.begin(), bwd.end(), [](bool b) { return b; }) &&
                 std::none_of(G.wg_pending.begin(), G.wg_pending.end(), [&](const Gpu::LocalWg& e) {
                   return e.iter <= i && e.ready > horizon_;
                 });
    }
    report_.iterations.push_back({i, prev, end, complete});
    prev = end;
  }
  // Rows of iterations no GPU began are not reported either (they hold only the planned compute).
  if (report_.iterations.size() < o_.iterations)
    report_.layers.resize(report_.layers.size() / o_.iterations * report_.iterations.size());
  EndToEnd& e = report_.end_to_end;
  e = {};
  for (const LayerRecord& l : report_.layers) {
    for (int p = 0; p < 3; ++p) {
      e.total_compute += l.compute[p];
      if (l.exposed[p] == 0) continue;
      const CommOp& op = op_of(l.layer, static_cast<Phase>(p));
      switch (op.group) {
        case CommGroup::TP: e.exposed_tp += l.exposed[p]; break;
        case CommGroup::DP: e.exposed_dp += l.exposed[p]; break;
        case CommGroup::EP: e.exposed_ep += l.exposed[p]; break;
        case CommGroup::DP_EP: e.exposed_dp_ep += l.exposed[p]; break;
        case CommGroup::None: break;
      }
    }
  }
  if (o_.report_gpu < report_.per_gpu.size()) {
    e.exposed_pp = report_.per_gpu[o_.report_gpu].exposed_pp;
    e.bubble = report_.per_gpu[o_.report_gpu].bubble;
    // Stopped early, the rows' planned compute is more than ran: count what the report GPU ran.
    if (!report_.incomplete.empty()) e.total_compute = report_.per_gpu[o_.report_gpu].compute;
  }
  e.total_exposed = e.exposed_dp + e.exposed_dp_ep + e.exposed_tp + e.exposed_ep + e.exposed_pp;
  e.total = prev;
  report_.find_slowest_gpu();
}

void WorkloadDriver::report_layer(uint32_t iter, uint32_t row, Phase phase, uint32_t id, Time comm) {
  LayerRecord& l = layer_record(iter, row);
  const int p = static_cast<int>(phase);
  const CollectiveRecord& rec = report_.collectives[inst_[id].record];
  l.comm[p] += comm;
  l.bytes[p] = rec.bytes;
  l.op[p] = rec.op;
  l.ranks[p] = rec.ranks;
  if (phase != Phase::Wg || w_.header.micro) l.exposed[p] += comm;
  l.finished = std::max(l.finished, net_.client_now());
}

void WorkloadDriver::count_link_bytes(size_t record, const FlowRecord& r) {
  wh::count_link_bytes(net_, report_.collectives[record], r);
}

void count_link_bytes(const Network& net, CollectiveRecord& c, const FlowRecord& r) {
  const std::vector<Node>& nodes = net.nodes();
  const std::vector<PortLink>& ports = net.links();
  if (const FlowInfo& i = net.flow_info(r.id); i.replayed) {
    // Replayed on an island: NVSwitches or a direct GPU link only, so no fabric hop, and its NIC (set
    // at its start) is its first hop — no path walk for the millions of TP flows a run replays.
    if (i.nic != UINT32_MAX) (nodes[ports[ports[i.nic].peer].node].is_nvswitch ? c.nvlink_bytes : c.nic_bytes) += r.size_bytes;
    return;
  }
  thread_local std::vector<uint32_t> path;  // once per flow: no allocation each time
  net.data_path(r.id, path);
  if (path.empty()) return;
  const Node& first = nodes[ports[ports[path[0]].peer].node];
  (first.is_nvswitch ? c.nvlink_bytes : c.nic_bytes) += r.size_bytes;
  for (size_t h = 1; h < path.size(); ++h)
    if (nodes[ports[ports[path[h]].peer].node].is_switch && !nodes[ports[path[h]].node].is_nvswitch)
      c.fabric_hop_bytes += r.size_bytes;
}

std::vector<FlowSpec> expected_traffic(const Workload& w, const GroupLayout& layout, const DriverOptions& o) {
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> bytes;
  for_each_sending_op(w, o, [&](const CommOp& op, const WorkloadLayer&) {
    std::vector<uint8_t> seen(layout.gpus, 0);  // each group once: by its members
    for (uint32_t g = 0; g < layout.gpus; ++g) {
      if (seen[g]) continue;
      const std::vector<uint32_t> members = group_members(layout, op.group, g);
      for (uint32_t m : members) seen[m] = 1;
      if (members.size() <= 1) continue;
      const uint32_t rings = op.op == Collective::AllToAll ? 1 : ring_count(layout, members);
      const CollectivePlan p = plan_collective(op.op, op.bytes, members, rings, o.zero_chunk);
      p.for_each_pair([&](uint32_t i, uint32_t j, uint32_t n) { bytes[{p.members[i], p.members[j]}] += p.chunk * n; });
    }
  });
  if (layout.pp > 1 && !w.header.micro && o.pipeline != PipelineSchedule::None) {
    // Each micro-batch's activation forward and gradient back between adjacent stages, once per model
    // chunk, and (interleaved) from the last stage round to the first once per chunk boundary.
    const uint64_t v = o.pipeline == PipelineSchedule::Interleaved ? std::max<uint32_t>(1, o.virtual_stages) : 1;
    const uint64_t per = w.header.pp_comm_bytes * std::max<uint32_t>(1, w.header.ga);
    for (uint32_t g = 0; g + layout.stage_gpus < layout.gpus; ++g) {
      bytes[{g, g + layout.stage_gpus}] += per * v;
      bytes[{g + layout.stage_gpus, g}] += per * v;
    }
    if (v > 1)
      for (uint32_t g = 0; g < layout.stage_gpus; ++g) {
        const uint32_t last = g + layout.gpus - layout.stage_gpus;
        bytes[{last, g}] += per * (v - 1);
        bytes[{g, last}] += per * (v - 1);
      }
  }
  std::vector<FlowSpec> flows;
  for (const auto& [pair, b] : bytes) {
    FlowSpec f;
    f.src = o.hosts.empty() ? pair.first : o.hosts[pair.first];
    f.dst = o.hosts.empty() ? pair.second : o.hosts[pair.second];
    f.size_bytes = std::min<uint64_t>(b, UINT32_MAX);
    flows.push_back(f);
  }
  return flows;
}

}  // namespace wh
