// Chakra execution traces (chakra.h): the driver that runs every rank's graph on the network (the
// reader is chakra_trace.cpp, the collective memo's offers chakra_memo.cpp).
#include "wormhole/workload/chakra.h"

#include <algorithm>
#include <fmt/core.h>

#include "wormhole/core/interrupt.h"
#include "wormhole/workload/collective_memo.h"
#include "wormhole/workload/driver.h"
#include "chakra_state.h"

namespace wh {

using namespace chakra_driver;

ChakraDriver::ChakraDriver(Network& net, const ChakraTrace& trace, const GroupLayout& layout, Time send_latency,
                           ZeroChunk zero_chunk, NetObserver* forward, CollectiveMemo* memo, bool flow_tags,
                           const std::string& flow_tag_dir)
    : net_(net), trace_(trace), layout_(layout), send_latency_(send_latency), zero_chunk_(zero_chunk), forward_(forward),
      flow_tags_(flow_tags), memo_(memo) {
  if (flow_tags_ && !flow_tag_dir.empty()) report_.flows.spill_to(flow_tag_dir, "the workload's flow tags");
  const auto R = static_cast<uint32_t>(trace_.ranks.size());
  if (R > layout_.gpus)
    throw std::invalid_argument(fmt::format("the trace has {} ranks, the topology {} GPUs", R, layout_.gpus));
  ranks_.resize(R);
  for (uint32_t r = 0; r < R; ++r) {
    Rank& k = ranks_[r];
    const auto& nodes = trace_.ranks[r];
    for (uint32_t i = 0; i < nodes.size(); ++i) k.index[nodes[i].id] = i;
    k.waiting.assign(nodes.size(), 0);
    k.state.assign(nodes.size(), 0);
    if (memo) k.active_pos.assign(nodes.size(), 0);
    k.children.assign(nodes.size(), {});
    for (uint32_t i = 0; i < nodes.size(); ++i)
      for (uint64_t d : nodes[i].deps) {
        ++k.waiting[i];
        k.children[k.index.at(d)].push_back(i);
      }
    left_ += nodes.size();
  }
  report_.workload_file = trace_.prefix;
  report_.gpus = R;
  // A trace's graph says when a node may run, not which collective a GPU is blocked on: exposure is
  // one total per rank, ASTRA-sim's (finished()), not split by group.
  report_.exposure_by_group = false;
  report_.per_gpu.assign(R, GpuRecord{});  // compute counts when a node finishes (kGpuDone): a stopped run's is what ran
  left_of_.assign(R, 0);
  for (uint32_t r = 0; r < R; ++r) left_of_[r] = trace_.ranks[r].size();
  total_ = left_;
  if (memo_) {
    // The fastest port of each rank's GPU, and all its ports together: no flow it sends or receives goes
    // faster than the one, nor all it sends faster than the other (min_transfer, send_time).
    const Fabric& fab = net_.fabric();
    max_rate_.assign(R, 0);
    sum_rate_.assign(R, 0);
    for (uint32_t r = 0; r < R; ++r)
      for (uint32_t q = fab.nodes[r].first_port; q < fab.nodes[r].first_port + fab.nodes[r].num_ports; ++q) {
        max_rate_[r] = std::max(max_rate_[r], fab.ports[q].rate_bps);
        sum_rate_[r] += fab.ports[q].rate_bps;
      }
    involved_.assign(R, {0, 0});
    nv_peers_.resize(R);
    nv_peers_made_.assign(R, 0);
    seen_.resize(R);
  }
  net_.set_observer(this);
  net_.set_client(this);
}

ChakraDriver::~ChakraDriver() {
  net_.set_observer(nullptr);
  net_.set_client(nullptr);
}

bool ChakraDriver::run(Time until) {
  start(until);
  if (left_ > 0) net_.run(until);
  return finish(until);
}

void ChakraDriver::start(Time) {
  ++depth_;
  for (uint32_t r = 0; r < ranks_.size(); ++r)
    for (uint32_t i = 0; i < ranks_[r].waiting.size(); ++i)
      if (ranks_[r].waiting[i] == 0) ready(r, i);
  if (--depth_ == 0) offer_pending();
}

double ChakraDriver::progress() const { return total_ == 0 ? -1.0 : double(total_ - left_) / double(total_); }

bool ChakraDriver::finish(Time) {
  if (!report_.per_gpu.empty()) report_.end_to_end.total_compute = report_.per_gpu[0].compute;  // rank 0's, as ASTRA-sim
  report_.iterations.push_back({0, 0, last_, left_ == 0});
  report_.end_to_end.total = last_;
  report_.end_to_end.total_exposed = report_.per_gpu[report_.report_gpu].exposed();
  report_.find_slowest_gpu();
  if (left_ > 0) {
    report_.stuck = !net_.stopped_by_signal() && net_.pending_events() == 0;
    report_.incomplete = fmt::format("{} at {:.6f} s with {} trace nodes not finished",
                                     net_.stopped_by_signal() ? "interrupted by " + signal_name(net_.stop_signal())
                                     : report_.stuck          ? std::string("no runnable events")
                                                              : std::string("stopped by the time limit"),
                                     double(net_.client_now()) / kSec, left_);
  }
  return left_ == 0;
}

void ChakraDriver::ready(uint32_t r, uint32_t i) {
  const ChakraNode& n = trace_.ranks[r][i];
  const Time now = net_.client_now();
  ranks_[r].state[i] = 1;
  if (memo_) {
    ranks_[r].active_pos[i] = static_cast<uint32_t>(ranks_[r].active.size());
    ranks_[r].active.push_back(i);
  }
  switch (n.kind) {
    case ChakraNode::Comp:
      if (n.cpu) {
        if (n.duration <= 0) return finished(r, i);
        if (memo_) ranks_[r].cpu_end[i] = now + n.duration;
        timers_.emplace_back(r, i);
        net_.schedule_client(now + n.duration, static_cast<uint32_t>(timers_.size() - 1), kCpuDone);
        return;
      }
      ranks_[r].gpu_queue.push_back(i);
      return run_gpu(r);
    case ChakraNode::Send:
    case ChakraNode::Recv: {
      const bool send = n.kind == ChakraNode::Send;
      const uint32_t src = send ? r : n.peer, dst = send ? n.peer : r;
      const uint32_t k = ranks_[r].p2p_seq[{src, dst, n.tag}]++;
      auto [it, fresh] = p2p_of_.emplace(std::make_tuple(src, dst, n.tag, k), static_cast<uint32_t>(p2p_.size()));
      if (fresh) p2p_.push_back({src, dst, 0, -1, -1, false});
      P2p& p = p2p_[it->second];
      (send ? p.send_node : p.recv_node) = static_cast<int32_t>(i);
      if (send) {
        p.bytes = n.bytes;
        if (n.bytes == 0) {
          p.done = true;
          finished(r, i);
          if (p2p_[it->second].recv_node >= 0) finished(dst, static_cast<uint32_t>(p2p_[it->second].recv_node));
          return;
        }
        if (memo_) {
          p.kinds = net_.island_kinds(src, dst);
          involve(src, p.kinds, +1), involve(dst, p.kinds, +1);
        }
        CollectiveRecord rec;  // listed with the collectives, as a SimAI pipeline transfer is
        rec.layer_name = n.name;
        rec.op = "SendRecv";
        rec.group = "P2P";
        rec.group_first = std::min(src, dst);
        rec.ranks = 2;
        rec.bytes = rec.flow_bytes = n.bytes;
        rec.flows = 1;
        rec.start = rec.end = now;
        p.record = report_.collectives.size();
        report_.collectives.push_back(std::move(rec));
        release(kP2pBit | it->second, 0);
      } else if (p.done) {
        finished(r, i);
      }
      return;
    }
    case ChakraNode::Coll: {
      const std::string group = n.group;
      std::vector<uint32_t> members;
      if (group.empty())
        for (uint32_t m = 0; m < ranks_.size(); ++m) members.push_back(m);
      else
        members = trace_.groups.at(group);
      if (members.size() <= 1 || n.bytes == 0) return finished(r, i);
      const uint32_t k = ranks_[r].coll_seq[group]++;
      auto [it, fresh] = coll_of_.emplace(std::make_pair(group, k), static_cast<uint32_t>(colls_.size()));
      const uint32_t id = it->second;
      if (fresh) {
        Coll c;
        const uint32_t rings = n.op == Collective::AllToAll ? 1 : ring_count(layout_, members);
        c.cp = plan_collective(n.op, n.bytes, members, rings, zero_chunk_);
        c.members = c.cp.members;  // sorted
        c.flow_state.assign(c.cp.size(), 0);
        c.node.assign(members.size(), -1);
        c.remaining.assign(members.size(), 2 * c.cp.sends_per_member());  // each sends and receives as many
        CollectiveRecord rec;
        rec.layer_name = n.name;
        rec.op = to_string(n.op);
        rec.group = group.empty() ? "all" : group;
        rec.group_first = members.front();
        rec.ranks = static_cast<uint32_t>(members.size());
        rec.bytes = n.bytes;
        rec.flows = c.cp.size();
        rec.flow_bytes = c.cp.chunk * rec.flows;
        rec.start = rec.end = now;
        c.record = report_.collectives.size();
        report_.collectives.push_back(std::move(rec));
        if (memo_ && c.cp.sends_per_member() > 0) {
          for (auto [a, b] : collective_member_pairs(c.cp)) c.kinds |= net_.island_kinds(c.members[a], c.members[b]);
          for (uint32_t m : c.members) involve(m, c.kinds, +1);
          c.issue_time.assign(c.members.size(), -1);
        }
        colls_.push_back(std::move(c));
      }
      Coll& c = colls_[id];
      const uint32_t mi = c.index_of(r);
      c.node[mi] = static_cast<int32_t>(i);
      if (memo_) ranks_[r].coll_at[i] = id;
      if (!c.issue_time.empty()) {
        ++c.epoch;
        c.issue_time[mi] = now;
        if (++c.issues_seen == c.members.size()) pending_offers_.push_back(id);  // offer_pending
      }
      for (uint32_t k = 0, n = c.cp.sends_per_member(); k < n; ++k) {
        const uint32_t f = c.cp.sent_flow(mi, k), parent = c.cp.parent(f);
        if (parent == kNoParent || c.flow_state[parent] == 2) release(id, f);
      }
      if (colls_[id].remaining[mi] == 0) finished(r, i);
      return;
    }
  }
}

void ChakraDriver::run_gpu(uint32_t r) {
  Rank& k = ranks_[r];
  while (k.gpu_running == UINT32_MAX && k.gpu_head < k.gpu_queue.size()) {
    const uint32_t i = k.gpu_queue[k.gpu_head++];
    const Time d = trace_.ranks[r][i].duration;
    if (d <= 0) {
      finished(r, i);
      continue;
    }
    k.gpu_running = i;
    k.gpu_end = net_.client_now() + d;
    net_.schedule_client(k.gpu_end, r, kGpuDone);
  }
}

void ChakraDriver::release(uint32_t owner, uint32_t f) {
  const Time at = net_.client_now() + send_latency_;
  if (!(owner & kP2pBit)) {
    Coll& c = colls_[owner];
    if (c.flow_state[f] != 0) return;
    c.flow_state[f] = 1;
    ++c.epoch;
    if (!c.batches.add(at, f)) return;  // joins the instant's batch, which is due already
  }
  if (due_.add(at, owner)) net_.schedule_client(at, due_events_++, kRelease, true);
}

void ChakraDriver::inject(uint32_t owner, uint32_t f) {
  FlowSpec spec;
  spec.pg = kPriorityGroup;
  FlowTag ft;
  if (owner & kP2pBit) {
    const P2p& p = p2p_[owner & ~kP2pBit];
    spec.src = p.src, spec.dst = p.dst, spec.size_bytes = p.bytes;
    ft = {0, static_cast<uint32_t>(p.record), 0, 0, p.src, p.dst};
  } else {
    const FlowStep s = colls_[owner].cp.flow(f);
    spec.src = s.src, spec.dst = s.dst, spec.size_bytes = s.bytes;
    ft = {0, static_cast<uint32_t>(colls_[owner].record), s.ring, s.step, s.src, s.dst};
  }
  const int32_t h = owner & kP2pBit ? -1 : colls_[owner].memo;
  const uint32_t id = h >= 0 && memo_->replaying(h) ? net_.replay_flow(spec) : net_.inject_flow(spec);
  if (h >= 0) memo_->released(h, f, id);
  flow_owner_.set(id, std::pair{owner, f});
  if (flow_tags_) ft.flow = id, report_.flows.push_back(ft);
}

void ChakraDriver::finished(uint32_t r, uint32_t i) {
  Rank& rk = ranks_[r];
  rk.state[i] = 2;
  if (memo_) {  // off the ready list: the last one takes its place
    rk.coll_at.erase(i);
    const uint32_t pos = rk.active_pos[i], last = rk.active.back();
    rk.active[pos] = last;
    rk.active_pos[last] = pos;
    rk.active.pop_back();
  }
  --left_;
  last_ = std::max(last_, net_.client_now());
  if (--left_of_[r] == 0) {
    // ASTRA-sim's exposed communication (Workload::report): the rank's finish minus its GPU compute.
    GpuRecord& g = report_.per_gpu[r];
    g.finish = net_.client_now();
    g.exposed_ungrouped = g.finish - g.compute;
  }
  // Children in file order; a child's ready() may finish more nodes (recursion is bounded by the graph).
  const std::vector<uint32_t> children = ranks_[r].children[i];
  for (uint32_t c : children)
    if (--ranks_[r].waiting[c] == 0) ready(r, c);
  if (left_ == 0) net_.stop();
}

void ChakraDriver::client_event(uint32_t target, uint16_t aux) {
  ++depth_;
  on_client_event(target, aux);
  if (--depth_ == 0) offer_pending();
}

void ChakraDriver::on_client_event(uint32_t target, uint16_t aux) {
  switch (aux) {
    case kGpuDone: {
      Rank& k = ranks_[target];
      const uint32_t i = k.gpu_running;
      k.gpu_running = UINT32_MAX;
      report_.per_gpu[target].compute += trace_.ranks[target][i].duration;
      finished(target, i);
      run_gpu(target);
      break;
    }
    case kCpuDone:
      if (memo_) ranks_[timers_[target].first].cpu_end.erase(timers_[target].second);
      finished(timers_[target].first, timers_[target].second);
      break;
    case kDecide:
      decide_offers();
      break;
    case kRelease: {
      // In WorkloadDriver's order (by first GPU), so that a converted SimAI workload runs alike.
      // (first GPU, a p2p after that GPU's collectives)
      const auto key = [&](uint32_t o) {
        return std::pair<uint32_t, bool>{o & kP2pBit ? p2p_[o & ~kP2pBit].src : colls_[o].members.front(), (o & kP2pBit) != 0};
      };
      for (uint32_t owner : due_.take(key)) {
        if (owner & kP2pBit) inject(owner, 0);
        else
          for (uint32_t fl : colls_[owner].batches.take()) inject(owner, fl);  // the instant's batch (release)
      }
      break;
    }
  }
}

void ChakraDriver::flow_finished(const FlowRecord& rec) {
  ++depth_;
  on_flow_finished(rec);
  if (--depth_ == 0) offer_pending();
}

void ChakraDriver::on_flow_finished(const FlowRecord& rec) {
  if (forward_) forward_->flow_finished(rec);
  std::pair<uint32_t, uint32_t> slot;
  if (!flow_owner_.take(rec.id, slot)) return;
  const auto [owner, f] = slot;
  if (owner & kP2pBit) {
    P2p& p = p2p_[owner & ~kP2pBit];
    p.done = true;
    const int32_t s = p.send_node, d = p.recv_node;
    const uint32_t src = p.src, dst = p.dst;
    report_.collectives[p.record].end = net_.client_now();
    count_link_bytes(net_, report_.collectives[p.record], rec);
    if (memo_) involve(src, p.kinds, -1), involve(dst, p.kinds, -1);
    finished(src, static_cast<uint32_t>(s));
    if (d >= 0) finished(dst, static_cast<uint32_t>(d));
    return;
  }
  uint32_t done[2], n = 0;
  {
    Coll& c = colls_[owner];
    c.flow_state[f] = 2;
    ++c.epoch;
    if (c.memo >= 0) memo_->finished(c.memo, f, rec.skipped, rec.skipped_bytes);
    const uint32_t ch = c.cp.child(f);
    if (ch != kNoParent && c.node[c.cp.src_index(ch)] >= 0) release(owner, ch);
    for (uint32_t m : {c.cp.src_index(f), c.cp.dst_index(f)})
      if (--c.remaining[m] == 0) {
        if (memo_) involve(c.members[m], c.kinds, -1);
        if (c.node[m] >= 0) done[n++] = m;
      }
    report_.collectives[c.record].end = net_.client_now();
    count_link_bytes(net_, report_.collectives[c.record], rec);
  }
  for (uint32_t k = 0; k < n; ++k) {
    const Coll& c = colls_[owner];
    finished(c.members[done[k]], static_cast<uint32_t>(c.node[done[k]]));
  }
}

void ChakraDriver::pfc(const PfcRecord& p) {
  if (forward_) forward_->pfc(p);
}

void ChakraDriver::tick(Time now, uint64_t events, uint64_t flows_finished) {
  if (forward_) forward_->tick(now, events, flows_finished);
}

}  // namespace wh
