// The workload driver (driver.h): per-GPU programs, collective instances and flow release. Its parts:
// driver_program.cpp (running a GPU's program), driver_memo.cpp (what it tells the collective memo),
// driver_pipeline.cpp (pipeline transfers), driver_report.cpp (progress and the run's report).
#include "wormhole/workload/driver.h"


#include <algorithm>
#include <array>
#include <stdexcept>
#include <fmt/core.h>

#include "driver_internal.h"

namespace wh {

using namespace workload_driver;

uint64_t driver_plan_bytes(uint32_t ranks, uint64_t chains, uint32_t chain_length) {
  using I = WorkloadDriver::Instance;
  const uint64_t plan = sizeof(WorkloadDriver::Plan) - sizeof(CollectivePlan) + plan_bytes(ranks) +
                        uint64_t(ranks) * sizeof(uint32_t);  // + the plans_ key's member list
  const uint64_t instance = sizeof(I) + uint64_t(ranks) * (sizeof(I::issued[0]) + sizeof(I::remaining[0])) +
                            FinishedFlows::bytes(chains, chain_length);
  return plan + instance;
}
uint64_t driver_program_bytes(const Workload& w, const GroupLayout& layout, const DriverOptions& o) {
  const uint64_t rows = w.layers.size();
  // Per GPU: its program counter, per row whose wg collective has flows that wg's iteration and time, its
  // report record.
  uint64_t wg_rows = 0;
  for (const WorkloadLayer& l : w.layers)
    wg_rows += l.wg.op != Collective::None && l.wg.bytes > 0 && !o.ignore_group[static_cast<size_t>(l.wg.group)];
  const uint64_t per_gpu = sizeof(WorkloadDriver::Gpu) + wg_rows * (sizeof(int32_t) + sizeof(Time)) + sizeof(GpuRecord);
  // Per row: what the programs read of it, its steps in each stage's program (forward and backward), and
  // the report GPU's record of it in each iteration (MICRO: row 0's only), with its name.
  uint64_t names = 0;
  for (const WorkloadLayer& l : w.layers) names += l.name.size() >= 16 ? l.name.size() + 1 : 0;  // past the inline 15
  const uint64_t shown = w.header.micro ? std::min<uint64_t>(1, rows) : rows;
  const uint64_t per_rows = rows * (sizeof(WorkloadDriver::Row) + 2 * uint64_t(std::max<uint32_t>(1, layout.pp)) * sizeof(ProgramStep)) +
                            uint64_t(o.iterations) * (shown * sizeof(LayerRecord) + (shown == rows ? names : 0));
  return uint64_t(layout.gpus) * per_gpu + per_rows;
}

WorkloadDriver::WorkloadDriver(Network& net, const Workload& w, const GroupLayout& layout, const DriverOptions& o,
                               NetObserver* forward, bool install)
    : net_(net), w_(w), layout_(layout), o_(o), forward_(forward) {
  if (o_.iterations == 0) throw std::invalid_argument("iterations must be at least 1");
  if (o_.job >= (1u << 14)) throw std::invalid_argument("at most 16384 jobs");
  if (o_.report_gpu >= layout_.gpus)
    throw std::invalid_argument(fmt::format("report GPU {} does not exist ({} GPUs)", o_.report_gpu, layout_.gpus));
  if (!o_.hosts.empty() && o_.hosts.size() != layout_.gpus)
    throw std::invalid_argument(fmt::format("{} hosts given for {} GPUs", o_.hosts.size(), layout_.gpus));
  if (layout_.stage_gpus == 0) layout_.stage_gpus = layout_.gpus;
  if (o_.flow_tags && !o_.flow_tag_dir.empty()) report_.flows.spill_to(o_.flow_tag_dir, "the workload's flow tags");
  total_bytes_ = count_workload_flows(w_, layout_, o_).bytes;
  const size_t rows = w_.layers.size();
  if (!w_.header.micro) {
    if (layout_.pp > 1) {
      mb_ = find_micro_batches(w_, w_.header.ga);
      if (o_.pipeline == PipelineSchedule::Interleaved) split_into_chunks(w_, mb_, o_.virtual_stages);
    }
    for (uint32_t s = 0; s < layout_.pp; ++s) programs_.push_back(stage_program(w_, layout_, mb_, o_.pipeline, s));
  }
  rows_.resize(rows);
  for (uint32_t r = 0; r < rows; ++r) {
    const WorkloadLayer& l = w_.layers[r];
    Row& R = rows_[r];
    R.compute = {Time(l.fwd_compute_ns) * kNs, Time(l.ig_compute_ns) * kNs, Time(l.wg_compute_ns) * kNs};
    R.update = Time(l.update_ns) * kNs;
    // A group's size does not depend on which of its GPUs asks (group_members): GPU 0's tells for all.
    for (Phase p : {Phase::Fwd, Phase::Ig, Phase::Wg}) {
      const CommOp& op = op_of(r, p);
      const bool none = op.op == Collective::None || op.bytes == 0 || o_.ignore_group[static_cast<size_t>(op.group)];
      if (!none && layout_.gpus > 0 && group_members(layout_, op.group, 0).size() > 1)
        R.sends |= static_cast<uint8_t>(1u << static_cast<uint32_t>(p));
    }
    if (R.sends_in(Phase::Wg)) R.wg_slot = wg_slots_++;
  }
  // Which rows each stage's program runs a backward step of (issues a wg collective of).
  for (const std::vector<ProgramStep>& prog : programs_) {
    bwd_rows_.emplace_back(rows, false);
    for (const ProgramStep& st : prog)
      if (st.kind == ProgramStep::Bwd) bwd_rows_.back()[st.arg] = true;
  }
  gpus_.resize(layout_.gpus);
  if (o_.memo) {
    involved_.assign(layout_.gpus, {0, 0});
    for (uint32_t g = 0; g < layout_.gpus; ++g) gpu_at_host_.emplace(host_of(g), g);
  }
  for (uint32_t i = 0; i < layout_.gpus; ++i) {
    Gpu& g = gpus_[i];
    g.wg_done_iter.assign(wg_slots_, -1);
    g.wg_time.assign(wg_slots_, -1);
    g.pp_stage = i / layout_.stage_gpus;
    g.stage = w_.header.micro ? kMicroIssue : kStepBegin;
  }
  iter_end_.assign(o_.iterations, 0);
  report_.per_gpu.assign(layout_.gpus, GpuRecord{});
  report_.workload_file = w_.file;
  report_.gpus = layout_.gpus;
  report_.tp = layout_.tp;
  report_.dp = layout_.dp;
  report_.ep = layout_.ep;
  report_.dp_ep = layout_.dp_ep;
  report_.report_gpu = o_.report_gpu;
  report_.pp = layout_.pp;
  const uint32_t shown_rows = w_.header.micro ? std::min<uint32_t>(1, rows) : rows;
  for (uint32_t it = 0; it < o_.iterations; ++it)
    for (uint32_t r = 0; r < shown_rows; ++r) {
      LayerRecord l;
      l.iteration = it;
      l.layer = r;
      l.name = w_.layers[r].name;
      const WorkloadLayer& row = w_.layers[r];
      if (!w_.header.micro) {
        l.compute = {Time(row.fwd_compute_ns) * kNs, Time(row.ig_compute_ns) * kNs, Time(row.wg_compute_ns) * kNs};
      }
      report_.layers.push_back(std::move(l));
    }
  if (install) {
    net_.set_observer(this);
    net_.set_client(this);
    installed_ = true;
  }
}

WorkloadDriver::~WorkloadDriver() {
  if (!installed_) return;
  net_.set_observer(nullptr);
  net_.set_client(nullptr);
}

const CommOp& WorkloadDriver::op_of(uint32_t row, Phase phase) const {
  const WorkloadLayer& l = w_.layers[row];
  return phase == Phase::Fwd ? l.fwd : phase == Phase::Ig ? l.ig : l.wg;
}

std::shared_ptr<const WorkloadDriver::Plan> WorkloadDriver::plan_for(const CommOp& op,
                                                                     const std::vector<uint32_t>& members) {
  const uint32_t rings = op.op == Collective::AllToAll ? 1 : ring_count(layout_, members);
  auto key = std::make_tuple(static_cast<int>(op.op), op.bytes, rings, members);
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second;
  auto p = std::make_shared<Plan>();
  p->cp = plan_collective(op.op, op.bytes, members, rings, o_.zero_chunk);
  plans_.emplace(std::move(key), p);
  return p;
}

// Member-relative and keyed alike by every driver (collective_plan_key); made once per plan.
const std::string& WorkloadDriver::memo_key(const Plan& p) const {
  if (!p.keyed) p.memo_key = collective_plan_key(p.cp, o_.send_latency, o_.priority_group), p.keyed = true;
  return p.memo_key;
}

bool WorkloadDriver::owns_flow(uint32_t id) const {
  return flow_owner_.contains(id);
}

bool WorkloadDriver::run(Time until) {
  start(until);
  if (gpus_done_ < layout_.gpus) net_.run(until);
  return finish(until);
}

void WorkloadDriver::start(Time until) {
  horizon_ = until;
  for (uint32_t g = 0; g < layout_.gpus; ++g) advance(g);
}

bool WorkloadDriver::finish(Time until) {
  finish_report(until);
  return report_.complete();
}

LayerRecord& WorkloadDriver::layer_record(uint32_t iter, uint32_t row) {
  // One record per row and iteration; MICRO reports its one row per iteration.
  const size_t per_iteration = report_.layers.size() / o_.iterations;
  return report_.layers[iter * per_iteration + row];
}

void WorkloadDriver::finish(uint32_t g) {
  gpus_[g].stage = kDone;
  report_.per_gpu[g].finish = net_.client_now();
  if (++gpus_done_ == layout_.gpus && o_.stop_when_done) net_.stop();
}

void WorkloadDriver::add_exposed(uint32_t g, uint32_t row, Phase phase, Time t) {
  GpuRecord& r = report_.per_gpu[g];
  switch (op_of(row, phase).group) {
    case CommGroup::TP: r.exposed_tp += t; break;
    case CommGroup::DP: r.exposed_dp += t; break;
    case CommGroup::EP: r.exposed_ep += t; break;
    case CommGroup::DP_EP: r.exposed_dp_ep += t; break;
    case CommGroup::None: break;
  }
}

void WorkloadDriver::note_time(uint32_t iteration, Time t) {
  if (iteration < iter_end_.size()) iter_end_[iteration] = std::max(iter_end_[iteration], t);
}

// GPU g issues its current row's collective of `phase`; creates the instance on first issue.
void WorkloadDriver::issue(uint32_t g, Phase phase) {
  Gpu& G = gpus_[g];
  const uint32_t row = static_cast<uint32_t>(G.row);
  const CommOp& op = op_of(row, phase);
  const Time now = net_.client_now();
  // Nothing to send (or a group the user chose not to simulate): no instance; the GPU moves on at
  // once (after the update delay). The group's members are listed only when they may send.
  const bool none = op.op == Collective::None || op.bytes == 0 || o_.ignore_group[static_cast<size_t>(op.group)];
  const std::vector<uint32_t> members = none ? std::vector<uint32_t>{} : group_members(layout_, op.group, g);
  if (members.size() <= 1) {
    collective_done_at(g, UINT32_MAX);
    return;
  }
  const auto key = std::make_tuple(G.iter, row, static_cast<uint8_t>(phase), members.front());
  auto [it, fresh] = inst_of_.emplace(key, 0u);
  if (fresh) {
    Instance in;
    in.iter = G.iter;
    in.row = row;
    in.phase = phase;
    in.plan = plan_for(op, members);
    const CollectivePlan& cp = in.plan->cp;
    const size_t m = cp.members.size();
    in.issued.assign(m, 0);
    in.remaining.assign(m, 2 * cp.sends_per_member());  // every member sends and receives as many
    if (o_.memo && cp.sends_per_member() > 0)
      for (const uint8_t k = island_kinds(*in.plan); uint32_t g : cp.members) involve(g, k, +1);
    in.finished.reset(cp);
    CollectiveRecord rec;
    rec.iteration = G.iter;
    rec.layer = row;
    rec.layer_name = w_.layers[row].name;
    rec.phase = phase;
    rec.op = to_string(op.op);
    rec.group = to_string(op.group);
    rec.group_first = members.front();
    rec.ranks = static_cast<uint32_t>(m);
    rec.bytes = op.bytes;
    rec.flows = cp.size();
    rec.flow_bytes = cp.chunk * rec.flows;
    rec.start = rec.end = now;
    in.record = report_.collectives.size();
    report_.collectives.push_back(std::move(rec));
    it->second = place(std::move(in));
    ++pending_;
  }
  const uint32_t id = it->second;
  G.issued_at[id] = now;
  Instance& in = inst_[id];
  const uint32_t mi = in.plan->index_of(g);
  in.issued[mi] = 1;
  if (o_.memo) {
    if (in.issue_time.empty()) in.issue_time.assign(in.plan->members().size(), -1);
    in.issue_time[mi] = now;
    if (++in.issues_seen == in.plan->members().size()) offer_to_memo(id);
  }
  const CollectivePlan& cp = in.plan->cp;
  // The flows this member can send now: those depending on nothing, and those whose parent already
  // finished; in ascending flow order, the order flows are created in (their ids follow it).
  std::vector<uint32_t> now_ready;
  now_ready.reserve(cp.roots_per_member());
  for (uint32_t r = 0, n = cp.roots_per_member(); r < n; ++r) now_ready.push_back(cp.root_flow(mi, r));
  if (auto early = in.ready_before_issue.find(mi); early != in.ready_before_issue.end()) {
    now_ready.insert(now_ready.end(), early->second.begin(), early->second.end());
    in.ready_before_issue.erase(early);
    std::sort(now_ready.begin(), now_ready.end());
  }
  for (uint32_t f : now_ready) release(id, f);
  if (in.remaining[mi] == 0) rank_done(id, g);
}
void WorkloadDriver::release(uint32_t inst, uint32_t f) {
  // Called once per flow (see Instance::finished); a pipeline transfer's flow leaves alone (pp_send).
  if (inst & kPpBit) throw std::logic_error("workload driver: a pipeline transfer released as a collective's flow");
  Instance& in = inst_[inst];
  ++in.released;
  // On time: it injects flows, so a distributed run must see it in the network's time; it is
  // send_latency ahead, the client lookahead of a distributed run.
  const Time at = net_.client_now() + o_.send_latency;
  if (in.batches.add(at, f)) due_at(at, inst);  // else it joins the instant's batch, already due
}

void WorkloadDriver::due_at(Time at, uint32_t sender) {
  if (due_.add(at, sender)) net_.schedule_client(at, due_events_++, tag(kRelease), true);
}

void WorkloadDriver::release_due() {
  // By first GPU, then by what the collective is (iteration, layer, phase) or the transfer (after the
  // GPU's collectives: iteration, micro-batch, direction, receiver). No two collectives in flight share a
  // key (it is their (iteration, layer, phase, first GPU), issue()'s), so the order does not depend on
  // which slot an instance took.
  const auto key = [&](uint32_t s) {
    if (s & kPpBit) {
      const Transfer& t = transfers_[s & ~kPpBit];
      return std::array<uint32_t, 6>{t.src, 1, t.iter, t.mb, t.grad, t.dst};
    }
    const Instance& in = inst_[s];
    return std::array<uint32_t, 6>{in.plan->members().front(), 0, in.iter, in.row, static_cast<uint32_t>(in.phase), 0};
  };
  for (uint32_t s : due_.take(key)) {
    if (s & kPpBit) {
      inject(s, 0);
      continue;
    }
    for (uint32_t fl : inst_[s].batches.take()) inject(s, fl);
  }
}

void WorkloadDriver::client_event(uint32_t target, uint16_t aux) {
  switch (aux & 3) {
    case kProgram:
      gpus_[target].timer_pending = false;
      advance(target);
      break;
    case kRelease:
      release_due();
      break;
    case kWgUpdate: {
      const WgUpdate u = wg_updates_[target];
      wg_done_at(u.gpu, u.row, u.iter, u.completed);
      break;
    }
  }
}

void WorkloadDriver::inject(uint32_t inst, uint32_t f) {
  FlowSpec spec;
  spec.pg = o_.priority_group;
  FlowTag ft;  // a pipeline transfer is a one-flow collective: ring 0, step 0
  if (inst & kPpBit) {
    const Transfer& t = transfers_[inst & ~kPpBit];
    ft = {0, static_cast<uint32_t>(t.record), 0, 0, t.src, t.dst};
    spec.size_bytes = w_.header.pp_comm_bytes;
  } else {
    const FlowStep s = inst_[inst].plan->cp.flow(f);
    ft = {0, static_cast<uint32_t>(inst_[inst].record), s.ring, s.step, s.src, s.dst};
    spec.size_bytes = s.bytes;
  }
  spec.src = host_of(ft.src_gpu);
  spec.dst = host_of(ft.dst_gpu);
  const int32_t memo = inst & kPpBit ? -1 : inst_[inst].memo;
  ft.flow = memo >= 0 && o_.memo->replaying(memo) ? net_.replay_flow(spec) : net_.inject_flow(spec);
  if (memo >= 0) o_.memo->released(memo, f, ft.flow);
  flow_owner_.set(ft.flow, std::pair{inst, f});
  if (o_.flow_tags) report_.flows.push_back(ft);
}

void WorkloadDriver::flow_finished(const FlowRecord& r) {
  if (forward_) forward_->flow_finished(r);
  std::pair<uint32_t, uint32_t> owner;
  if (!flow_owner_.take(r.id, owner)) return;
  done_bytes_ += r.size_bytes;
  const auto [id, f] = owner;
  if (id & kPpBit) {
    count_link_bytes(transfers_[id & ~kPpBit].record, r);
    transfer_done(id & ~kPpBit);
    return;
  }
  count_link_bytes(inst_[id].record, r);
  if (inst_[id].memo >= 0) o_.memo->finished(inst_[id].memo, f, r.skipped, r.skipped_bytes);
  const std::shared_ptr<const Plan> plan = inst_[id].plan;
  uint32_t done[2], n = 0;
  {
    // rank_done may run a GPU's program, which creates instances: inst_ grows in chunks, so `in`
    // stays valid, but its scope ends before that all the same.
    Instance& in = inst_[id];
    const CollectivePlan& cp = plan->cp;
    in.finished.set(cp, f);
    ++in.finished_count;
    const uint32_t c = cp.child(f);
    if (c != kNoParent) {
      if (in.issued[cp.src_index(c)]) release(id, c);
      else in.ready_before_issue[cp.src_index(c)].push_back(c);
    }
    for (uint32_t mi : {cp.src_index(f), cp.dst_index(f)})
      if (--in.remaining[mi] == 0) {
        if (o_.memo && plan->island_kinds > 0) involve(cp.members[mi], static_cast<uint8_t>(plan->island_kinds), -1);
        if (in.issued[mi]) done[n++] = cp.members[mi];
      }
  }
  for (uint32_t i = 0; i < n; ++i) rank_done(id, done[i]);
}

uint32_t WorkloadDriver::place(Instance&& in) {
  if (free_inst_.empty()) return static_cast<uint32_t>(inst_.push_back(std::move(in)));
  const uint32_t id = free_inst_.back();
  free_inst_.pop_back();
  inst_[id] = std::move(in);
  return id;
}

// Instance `id` is complete at GPU g (all its flows there finished).
void WorkloadDriver::rank_done(uint32_t id, uint32_t g) {
  Instance& in = inst_[id];
  CollectiveRecord& rec = report_.collectives[in.record];
  rec.end = std::max(rec.end, net_.client_now());
  const bool over = ++in.members_done == in.plan->members().size();
  if (over) --pending_;
  collective_done_at(g, id);
  if (!over) return;
  // Nothing refers to the instance any more (its flows finished, every member is done with it): its slot
  // is free for the next collective, its per-member state is given back, and the plan stays cached for
  // its repeats. Freed only after collective_done_at, which may issue collectives: no new collective can
  // be given this slot while collective_done_at still reads it.
  Instance& done = inst_[id];
  // issue() keyed it by its group's lowest GPU, which is the plan's first member (members sorted).
  const auto key = std::make_tuple(done.iter, done.row, static_cast<uint8_t>(done.phase), done.plan->members().front());
  if (inst_of_.erase(key) != 1)
    throw std::logic_error("workload driver (a bug): a finished collective was not found by its key");
  done = Instance();
  free_inst_.push_back(id);
}

// GPU g's part of instance `id` (UINT32_MAX: a collective without flows) is complete.
void WorkloadDriver::collective_done_at(uint32_t g, uint32_t id) {
  Gpu& G = gpus_[g];
  const Time now = net_.client_now();
  Phase phase;
  uint32_t row, iter;
  if (id == UINT32_MAX) {
    phase = G.stage == kFwdComm ? Phase::Fwd : G.stage == kIgComm ? Phase::Ig : Phase::Wg;
    row = static_cast<uint32_t>(G.row);
    iter = G.iter;
  } else {
    phase = inst_[id].phase;
    row = inst_[id].row;
    iter = inst_[id].iter;
  }
  const bool blocking = phase != Phase::Wg || w_.header.micro;
  if (id != UINT32_MAX) {
    const auto at = G.issued_at.find(id);
    const Time comm = now - at->second;
    G.issued_at.erase(at);
    if (blocking) add_exposed(g, row, phase, comm);
    if (g == o_.report_gpu) report_layer(iter, row, phase, id, comm);
  }
  const Time update = rows_[row].update;
  if (phase == Phase::Wg && !w_.header.micro) {
    // Non-blocking: the GPU's program has moved on; only the wg bookkeeping waits for the update.
    if (update > 0) {
      const uint32_t slot = static_cast<uint32_t>(wg_updates_.size());
      wg_updates_.push_back({g, row, iter, id != UINT32_MAX ? now : -1});
      net_.schedule_client(now + update, slot, tag(kWgUpdate));
    } else {
      wg_done_at(g, row, iter, id != UINT32_MAX ? now : -1);
    }
    return;
  }
  note_time(iter, now);  // a MICRO iteration's update delay is noted when it is over (kMicroIssue)
  if (now + update <= horizon_) report_.per_gpu[g].update += update;  // else it never ends in this run
  const Stage next = G.stage == kFwdComm ? kFwdNext : G.stage == kIgComm ? kWgBegin : kMicroIssue;
  if (G.stage == kMicroComm) ++G.iter;
  G.stage = next;
  if (update > 0) {
    G.timer_pending = true;
    G.at = now + update;
    net_.schedule_client(now + update, g, tag(kProgram));
  } else if (advancing_ != g) {
    advance(g);  // from a flow completion: continue the program now (inside advance it goes on by itself)
  }
}

// GPU g's wg collective of (row, iter) is done, update delay included. `completed`: when its
// communication completed (ps), or -1 if it had no flows (then waiting for it exposes nothing).
void WorkloadDriver::wg_done_at(uint32_t g, uint32_t row, uint32_t iter, Time completed) {
  Gpu& G = gpus_[g];
  const Time now = net_.client_now();
  if (const uint32_t s = rows_[row].wg_slot; s != kNoSlot) {
    G.wg_done_iter[s] = std::max<int32_t>(G.wg_done_iter[s], static_cast<int32_t>(iter));
    G.wg_time[s] = completed;
  } else {  // a wg without flows whose update delay ran past the time limit (its event never runs)
    std::erase_if(G.wg_pending, [&](const Gpu::LocalWg& e) { return e.row == row && e.iter <= iter; });
  }
  --G.wg_outstanding;
  note_time(iter, now);
  if (advancing_ == g) return;
  if (G.stage == kEndWait && G.blocked_since >= 0) {
    if (completed >= 0) {
      if (completed > G.blocked_since) {
        add_exposed(g, row, Phase::Wg, completed - G.blocked_since);
        if (g == o_.report_gpu) layer_record(iter, row).exposed[2] += completed - G.blocked_since;
      }
      G.blocked_since = std::max(G.blocked_since, completed);  // the end wait's part not yet counted
    }
    if (G.wg_outstanding == 0) advance(g);
  } else if (G.stage == kFwdBegin && G.blocked_since >= 0 && G.row == static_cast<int32_t>(row)) {
    advance(g);
  }
}

void WorkloadDriver::pfc(const PfcRecord& p) {
  if (forward_) forward_->pfc(p);
}

}  // namespace wh
