// The workload driver (driver.h): per-GPU programs, collective instances and flow release.
#include "wormhole/workload/driver.h"

#include "wormhole/core/interrupt.h"
#include "wormhole/core/release.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>
#include <fmt/core.h>

#include "wormhole/workload/release_batches.h"

namespace wh {

namespace {
// aux codes of the driver's client events
constexpr uint16_t kProgram = 0;   // target = GPU: its program's own time reached (a delay over, or a step that meets the network)
constexpr uint16_t kRelease = 1;   // target = a count of instants: the oldest of due_ is over its send latency
constexpr uint16_t kWgUpdate = 2;  // target = index in wg_updates_: a wg collective's update delay is over
// In flow_owner_ and due_, an instance index with this bit set is a pipeline transfer's index.
constexpr uint32_t kPpBit = 0x80000000u;
}  // namespace

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

uint64_t driver_plan_bytes(uint32_t ranks, uint64_t chains, uint32_t chain_length) {
  using I = WorkloadDriver::Instance;
  const uint64_t plan = sizeof(WorkloadDriver::Plan) - sizeof(CollectivePlan) + plan_bytes(ranks) +
                        uint64_t(ranks) * sizeof(uint32_t);  // + the plans_ key's member list
  const uint64_t instance = sizeof(I) + uint64_t(ranks) * (sizeof(I::issued[0]) + sizeof(I::remaining[0])) +
                            FinishedFlows::bytes(chains, chain_length);
  return plan + instance;
}

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

// Runs GPU g's program from its current stage until it has to wait (a delay, a collective, a wg).
void WorkloadDriver::advance(uint32_t g) {
  const uint32_t outer = advancing_;
  advancing_ = g;
  advance_loop(g);
  advancing_ = outer;
}

void WorkloadDriver::advance_loop(uint32_t g) {
  Gpu& G = gpus_[g];
  const Time now = net_.client_now();
  const uint32_t rows = static_cast<uint32_t>(w_.layers.size());
  // The program's own time. Steps no other part of the run sees or changes (compute, update delays,
  // collectives without flows, a wait already satisfied) run ahead of the client's clock without an
  // event each; a step that meets the network (an issue with flows, a wait not yet satisfied, a
  // pipeline transfer, the end) parks the program until the client's clock reaches it. Nothing
  // runs ahead past the run's time limit: a run cut short reports what the old per-step events did.
  Time t = now;
  G.at = now;
  auto park = [&](Stage s) {  // true: wait for the client's clock to reach t
    G.stage = s;
    if (t == now) return false;
    G.timer_pending = true;
    G.at = t;
    net_.schedule_client(t, g, tag(kProgram));
    return true;
  };
  auto delay = [&](Time d, Stage next) {  // true: wait for the timer
    G.stage = next;
    if (d <= 0) return false;
    if (t + d <= horizon_) {
      t += d;
      return false;
    }
    G.timer_pending = true;
    G.at = t + d;
    net_.schedule_client(t + d, g, tag(kProgram));
    return true;
  };
  // A collective of the current row without flows: its update delay runs in the program's time (a wg's
  // in the background: wg_done_locally records when it is over).
  auto no_flows = [&](Phase phase) {
    const uint32_t row = static_cast<uint32_t>(G.row);
    const Time update = rows_[row].update;
    if (phase == Phase::Wg) {
      if (update > 0 && t + update > horizon_) {
        // Never over in this run: kept, and its event (past the limit: it never runs) keeps the run from
        // reading as run dry, as the per-step events did.
        G.wg_pending.push_back({row, G.iter, t + update});
        const uint32_t slot = static_cast<uint32_t>(wg_updates_.size());
        wg_updates_.push_back({g, row, G.iter, -1});
        net_.schedule_client(t + update, slot, tag(kWgUpdate));
      } else {
        wg_done_locally(g, row, G.iter, t, t + update);
      }
      return false;
    }
    note_time(G.iter, t);
    report_.per_gpu[g].update += update;
    return delay(update, phase == Phase::Fwd ? kFwdNext : kWgBegin);
  };
  for (;;) {
    if (G.timer_pending) return;
    switch (G.stage) {
      case kStepBegin: {
        const std::vector<ProgramStep>& prog = programs_[G.pp_stage];
        if (G.pc >= prog.size()) {
          G.stage = kIterEnd;
          break;
        }
        const ProgramStep s = prog[G.pc];
        switch (s.kind) {
          case ProgramStep::Fwd: G.row = static_cast<int32_t>(s.arg), G.stage = kFwdBegin; break;
          case ProgramStep::Bwd: G.row = static_cast<int32_t>(s.arg), G.stage = kIgBegin; break;
          case ProgramStep::SendAct:
          case ProgramStep::SendGrad:
            if (park(kStepBegin)) return;
            ++G.pc;
            pp_send(g, s);
            break;
          case ProgramStep::RecvAct:
          case ProgramStep::RecvGrad:
            if (park(kStepBegin)) return;
            if (!pp_recv(g, s)) {
              G.stage = kRecvWait;
              return;  // transfer_done wakes us
            }
            ++G.pc;
            break;
        }
        break;
      }
      case kFwdBegin: {
        if (G.iter > 0 && !wg_ready(G, static_cast<uint32_t>(G.row), G.iter - 1, t)) {
          if (park(kFwdBegin)) return;
          if (G.blocked_since < 0) G.blocked_since = now;
          return;  // wg_done_at wakes us
        }
        if (G.blocked_since >= 0) {
          // Exposed: blocked until the wg's communication completed (its update delay is not
          // communication, as for fwd and ig); nothing when it had no flows.
          const uint32_t s = rows_[G.row].wg_slot;
          const Time completed = s != kNoSlot ? G.wg_time[s] : -1;
          if (completed > G.blocked_since) {
            add_exposed(g, G.row, Phase::Wg, completed - G.blocked_since);
            if (g == o_.report_gpu) layer_record(G.iter - 1, G.row).exposed[2] += completed - G.blocked_since;
          }
          G.blocked_since = -1;
        }
        if (const Row& R = rows_[G.row]; !R.sends_in(Phase::Fwd) && t + R.compute[0] + R.update <= horizon_) {
          // The whole step in one go, as the stages below would take it (its times only grow: one
          // note_time for all).
          report_.per_gpu[g].compute += R.compute[0];
          report_.per_gpu[g].update += R.update;
          t += R.compute[0] + R.update;
          note_time(G.iter, t);
          ++G.pc;
          G.stage = kStepBegin;
          break;
        }
        if (delay(rows_[G.row].compute[0], kFwdIssue)) return;
        break;
      }
      case kFwdIssue: {
        const bool flows = sends(static_cast<uint32_t>(G.row), Phase::Fwd);
        if (flows && park(kFwdIssue)) return;
        // Compute counts when it is over: a run stopped inside a phase reports only the compute that
        // finished, all of it within the iterations' reported spans (note_time here).
        report_.per_gpu[g].compute += rows_[G.row].compute[0];
        note_time(G.iter, t);  // its compute ended (a run stopped in the collective ends here)
        G.stage = kFwdComm;
        if (!flows) {
          if (no_flows(Phase::Fwd)) return;
          break;
        }
        issue(g, Phase::Fwd);
        if (G.stage == kFwdComm) return;  // collective_done_at moves it on
        break;
      }
      case kFwdNext:
        note_time(G.iter, t);
        ++G.pc;
        G.stage = kStepBegin;
        break;
      case kIgBegin: {
        const Row& R = rows_[G.row];
        const Time wg_at = t + R.compute[1] + R.update + R.compute[2];
        if (!R.sends_in(Phase::Ig) && !R.sends_in(Phase::Wg) && wg_at + R.update <= horizon_) {
          // The whole step in one go, as the stages below would take it.
          report_.per_gpu[g].compute += R.compute[1] + R.compute[2];
          report_.per_gpu[g].update += R.update;  // the ig's (a wg's update is in the background)
          t = wg_at;
          ++G.wg_outstanding;
          wg_done_locally(g, static_cast<uint32_t>(G.row), G.iter, t, t + R.update);
          note_time(G.iter, t);
          ++G.pc;
          G.stage = kStepBegin;
          break;
        }
        if (delay(R.compute[1], kIgIssue)) return;
        break;
      }
      case kIgIssue: {
        const bool flows = sends(static_cast<uint32_t>(G.row), Phase::Ig);
        if (flows && park(kIgIssue)) return;
        report_.per_gpu[g].compute += rows_[G.row].compute[1];
        note_time(G.iter, t);
        G.stage = kIgComm;
        if (!flows) {
          if (no_flows(Phase::Ig)) return;
          break;
        }
        issue(g, Phase::Ig);
        if (G.stage == kIgComm) return;
        break;
      }
      case kWgBegin:
        if (delay(rows_[G.row].compute[2], kWgIssue)) return;
        break;
      case kWgIssue: {
        const bool flows = sends(static_cast<uint32_t>(G.row), Phase::Wg);
        if (flows && park(kWgIssue)) return;
        report_.per_gpu[g].compute += rows_[G.row].compute[2];
        ++G.wg_outstanding;
        if (flows) issue(g, Phase::Wg);  // may complete at once (wg_done_at)
        else no_flows(Phase::Wg);
        note_time(G.iter, t);
        ++G.pc;
        G.stage = kStepBegin;
        break;
      }
      case kIterEnd:
        note_time(G.iter, t);
        if (++G.iter < o_.iterations) {
          G.pc = 0;
          G.stage = kStepBegin;
        } else {
          G.stage = kEndWait;
        }
        break;
      case kEndWait:
        // The wg collectives with flows end in the client's time; the others' update delays in the
        // program's own (a GPU waiting on both ends at the later).
        if (G.wg_outstanding == 0) t = std::max(t, G.wg_local_until);
        if (park(kEndWait)) return;
        if (G.wg_outstanding > 0) {
          if (G.blocked_since < 0) G.blocked_since = now;
          return;
        }
        if (G.wg_local_until > now) {
          t = G.wg_local_until;
          if (park(kEndWait)) return;
        }
        G.blocked_since = -1;
        finish(g);
        return;
      case kMicroIssue:
        if (park(kMicroIssue)) return;
        if (G.iter >= o_.iterations || rows == 0) {
          finish(g);
          return;
        }
        G.row = 0;
        G.stage = kMicroComm;
        issue(g, Phase::Wg);
        if (G.stage == kMicroComm) return;
        break;
      case kDone:
      case kRecvWait:
      case kFwdComm:
      case kIgComm:
      case kMicroComm:
        return;
    }
  }
}

bool WorkloadDriver::sends(uint32_t row, Phase phase) const {
  return rows_[row].sends_in(phase);
}

void WorkloadDriver::wg_done_locally(uint32_t g, uint32_t row, uint32_t iter, Time t, Time at) {
  Gpu& G = gpus_[g];
  forget_over(G, t);
  if (at > t) G.wg_pending.push_back({row, iter, at});
  G.wg_local_until = std::max(G.wg_local_until, at);
  --G.wg_outstanding;
  note_time(iter, at);
}

void WorkloadDriver::forget_over(Gpu& G, Time t) const {
  std::erase_if(G.wg_pending, [&](const Gpu::LocalWg& e) { return e.ready <= t && e.ready <= horizon_; });
}

bool WorkloadDriver::wg_ready(Gpu& G, uint32_t row, uint32_t iter, Time& t) const {
  if (const uint32_t s = rows_[row].wg_slot; s != kNoSlot) {
    if (G.wg_done_iter[s] < static_cast<int32_t>(iter)) return false;
    t = std::max(t, G.wg_time[s]);  // completed before the client's time: no move
    return true;
  }
  // Without flows: issued by the row's backward step of iteration `iter` (the program went past it, if
  // its stage runs that step), done when its update delay is over; the program's time moves there.
  if (!bwd_rows_[G.pp_stage][row]) return false;
  Time ready = -1;
  for (const Gpu::LocalWg& e : G.wg_pending)
    if (e.row == row && e.iter <= iter) ready = std::max(ready, e.ready);
  if (ready > horizon_) return false;  // past the time limit: never over in this run
  t = std::max(t, ready);
  forget_over(G, t);
  return true;
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

uint8_t WorkloadDriver::island_kinds(const Plan& p) {
  if (p.island_kinds < 0) {
    uint8_t k = 0;
    for (auto [a, b] : collective_member_pairs(p.cp))
      if ((k |= net_.island_kinds(host_of(p.cp.members[a]), host_of(p.cp.members[b]))) == (kIslandNvSwitch | kIslandFabric))
        break;
    p.island_kinds = static_cast<int8_t>(k);
  }
  return static_cast<uint8_t>(p.island_kinds);
}

void WorkloadDriver::involve(uint32_t g, uint8_t kinds, int d) {
  for (uint32_t k = 0; k < 2; ++k)
    if (kinds & (1u << k)) involved_[g][k] += static_cast<uint32_t>(d);
}

uint32_t WorkloadDriver::involvement(uint32_t g, uint8_t kinds) const {
  uint32_t n = 0;
  for (uint32_t k = 0; k < 2; ++k)
    if (kinds & (1u << k)) n = std::max(n, involved_[g][k]);
  return n;
}

bool WorkloadDriver::issues_onto(uint32_t x, uint32_t row, Phase phase, uint8_t kinds, const std::vector<uint32_t>& near) {
  const CommOp& op = op_of(row, phase);
  if (op.op == Collective::None || op.bytes == 0 || o_.ignore_group[static_cast<size_t>(op.group)]) return false;
  const std::vector<uint32_t> members = group_members(layout_, op.group, x);
  if (members.size() <= 1) return false;
  if (std::none_of(members.begin(), members.end(), [&](uint32_t m) { return std::binary_search(near.begin(), near.end(), m); }))
    return false;  // its flows never reach those GPUs' ports
  const std::shared_ptr<const Plan> plan = plan_for(op, members);
  return plan->cp.sends_per_member() > 0 && (island_kinds(*plan) & kinds);
}

Time WorkloadDriver::earliest_issue(uint32_t x, uint8_t kinds, const Instance& offered, Time done_x) {
  const Gpu& G = gpus_[x];
  // A program waiting for its timer has run ahead to G.at.
  Time t = G.timer_pending ? std::max(net_.client_now(), G.at) : net_.client_now();
  // Pipelines (whose transfers come from GPUs in no group of the members) and MICRO runs: not followed.
  if (layout_.pp > 1 || G.stage == kRecvWait || G.stage == kMicroIssue || G.stage == kMicroComm) return t;
  // Blocked on the offered collective itself (fwd, ig): nothing before its part of it is done.
  if (done_x >= 0 && ((G.stage == kFwdComm && offered.phase == Phase::Fwd) || (G.stage == kIgComm && offered.phase == Phase::Ig)))
    t = std::max(t, done_x);
  if (G.stage == kDone || G.stage == kEndWait) return kNoIssue;
  const std::vector<ProgramStep>& prog = programs_[G.pp_stage];
  uint32_t iter = G.iter, pc = G.pc;
  // The first phase of step pc still ahead (0 fwd, 1 ig, 2 wg); the compute of a phase under way (or over,
  // in a program parked at its issue at G.at) counts 0.
  uint32_t from = 0;
  bool running = false;
  // (A ...Issue stage with no timer pending is issuing now: a wg moves on to the next step at once.)
  switch (G.stage) {
    case kFwdIssue: running = true; break;
    case kFwdComm: case kFwdNext: ++pc; break;
    case kIgBegin: from = 1; break;
    case kIgIssue: from = 1, running = true; break;
    case kIgComm: case kWgBegin: from = 2; break;
    case kWgIssue: G.timer_pending ? (from = 2, running = true) : ++pc; break;
    case kIterEnd: pc = static_cast<uint32_t>(prog.size()); break;
    default: break;  // kStepBegin, kFwdBegin: the step's compute is all ahead
  }
  // Waits (blocking collectives, update delays, last iteration's wg) only make an issue later: the sum of
  // the compute before it is a lower bound. A whole iteration without such an issue has none after it.
  for (size_t seen = 0; seen <= prog.size(); ++seen, ++pc, from = 0, running = false) {
    if (pc >= prog.size()) {
      if (++iter >= o_.iterations) return kNoIssue;
      pc = 0;
    }
    const ProgramStep& s = prog[pc];
    const bool fwd = s.kind == ProgramStep::Fwd;
    // A row's forward waits for its wg of the iteration before: the offered one ends at done_x here.
    if (fwd && done_x >= 0 && offered.phase == Phase::Wg && offered.row == s.arg && offered.iter + 1 == iter &&
        G.wg_done_iter[rows_[s.arg].wg_slot] < static_cast<int32_t>(offered.iter))
      t = std::max(t, done_x);
    for (uint32_t ph = fwd ? 0 : std::max(from, 1u); ph < (fwd ? 1u : 3u); ++ph) {  // a backward step: ig, wg
      const Phase phase = fwd ? Phase::Fwd : ph == 1 ? Phase::Ig : Phase::Wg;
      if (!(running && ph == from))
        t += rows_[s.arg].compute[ph];
      if (issues_onto(x, s.arg, phase, kinds, offered.plan->cp.members)) return t;
    }
  }
  return kNoIssue;
}

Time WorkloadDriver::quiet_until(uint32_t id, uint8_t kinds, Time t0, const std::vector<Time>* finish) {
  const Instance& in = inst_[id];
  const CollectivePlan& cp = in.plan->cp;
  // Pipeline transfers come from the members' peers in other stages, in no group of theirs, whenever
  // those stages' programs send: not followed, so an island they can reach is never quiet.
  if (layout_.pp > 1)
    for (uint32_t g : cp.members)
      for (uint32_t stage = 0; stage < layout_.pp; ++stage)
        if (const uint32_t peer = pipeline_peer(layout_, g, stage); peer != g && (net_.island_kinds(host_of(g), host_of(peer)) & kinds))
          return net_.client_now();
  // An NVSwitch's collectives block their GPUs (TP): only rail leaves need the programs followed.
  if (!(kinds & kIslandFabric)) return kNoIssue;
  // When each member's part of it is done, were it to end as `finish` says (-1: not known).
  const std::vector<Time> done = member_done_times(cp, t0, finish);
  // Flows reach a member's island ports from the groups it belongs to: their GPUs' next issues.
  std::vector<uint32_t> gpus;
  for (uint32_t g : cp.members)
    for (CommGroup grp : {CommGroup::TP, CommGroup::DP, CommGroup::EP, CommGroup::DP_EP})
      for (uint32_t x : group_members(layout_, grp, g)) gpus.push_back(x);
  std::sort(gpus.begin(), gpus.end());
  gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
  Time t = kNoIssue;
  for (uint32_t x : gpus) {
    const auto m = std::lower_bound(cp.members.begin(), cp.members.end(), x);
    const Time done_x = m != cp.members.end() && *m == x ? done[static_cast<size_t>(m - cp.members.begin())] : -1;
    t = std::min(t, earliest_issue(x, kinds, in, done_x));
  }
  return t;
}

void WorkloadDriver::offer_to_memo(uint32_t id) {
  Instance& in = inst_[id];
  const Plan& p = *in.plan;
  // Before its first flow is released (send_latency after the first issue) or never: the memo
  // decides for the whole collective.
  if (net_.client_now() - *std::min_element(in.issue_time.begin(), in.issue_time.end()) >= o_.send_latency) {
    o_.memo->count_late_issue();
    return;
  }
  const CollectivePlan& cp = p.cp;
  const std::vector<std::pair<uint32_t, uint32_t>> idx = collective_member_pairs(cp);
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  pairs.reserve(idx.size());
  for (auto [a, b] : idx) pairs.emplace_back(host_of(cp.members[a]), host_of(cp.members[b]));
  std::vector<uint32_t> hosts;
  hosts.reserve(cp.members.size());
  for (uint32_t g : cp.members) hosts.push_back(host_of(g));
  in.memo = o_.memo->begin(pairs, [&]() -> const std::string& { return memo_key(p); }, hosts, in.issue_time,
                           cp.size(), [&](uint32_t host, uint8_t kinds) {
                             const auto g = gpu_at_host_.find(host);
                             return g == gpu_at_host_.end() ? UINT32_MAX : involvement(g->second, kinds);  // another job's
                           },
                           [&](uint8_t kinds, Time t0, const std::vector<Time>* finish) {
                             return quiet_until(id, kinds, t0, finish);
                           });
}

uint32_t WorkloadDriver::transfer_of(uint32_t iter, bool grad, uint32_t mb, uint32_t chunk, uint32_t receiver) {
  auto [it, fresh] = transfer_of_.emplace(std::make_tuple(iter, grad, mb, chunk, receiver),
                                          static_cast<uint32_t>(transfers_.size()));
  if (fresh) {
    Transfer t;
    t.iter = iter;
    t.grad = grad;
    t.mb = mb;
    t.dst = receiver;
    const uint32_t from = pipeline_prev(layout_.pp, receiver / layout_.stage_gpus, chunk, grad).first;
    t.src = pipeline_peer(layout_, receiver, from);
    const uint64_t bytes = w_.header.pp_comm_bytes;
    CollectiveRecord rec;
    rec.iteration = iter;
    rec.layer = mb < mb_.rows.size() ? mb_.chunk_rows(mb, chunk).first : 0;  // the receiving chunk's first row
    rec.layer_name = fmt::format("{} micro-batch {}{}", grad ? "pipeline gradient" : "pipeline activation", mb,
                                 mb_.chunks() > 1 ? fmt::format(" chunk {}", chunk) : "");
    rec.phase = grad ? Phase::Ig : Phase::Fwd;
    rec.op = "SendRecv";
    rec.group = "PP";
    rec.group_first = std::min(t.src, t.dst);
    rec.ranks = 2;
    rec.bytes = bytes;
    rec.flows = bytes > 0 ? 1 : 0;
    rec.flow_bytes = bytes;
    rec.start = rec.end = net_.client_now();
    t.record = report_.collectives.size();
    report_.collectives.push_back(std::move(rec));
    transfers_.push_back(t);
    ++pending_;
  }
  return it->second;
}

// GPU g sends its activation (to the next stage) or gradient (to the previous one) of a micro-batch;
// the program goes on at once, as Megatron's isend.
void WorkloadDriver::pp_send(uint32_t g, const ProgramStep& s) {
  const bool grad = s.kind == ProgramStep::SendGrad;
  const auto [stage, chunk] = pipeline_next(layout_.pp, gpus_[g].pp_stage, s.chunk, grad);
  const uint32_t t = transfer_of(gpus_[g].iter, grad, s.arg, chunk, pipeline_peer(layout_, g, stage));
  const Time now = net_.client_now();
  transfers_[t].sent = now;
  report_.collectives[transfers_[t].record].start = now;
  note_time(gpus_[g].iter, now);
  if (w_.header.pp_comm_bytes == 0) {
    transfer_done(t);  // nothing to send: the receiver only waits for the sender
    return;
  }
  if (o_.memo) {
    Transfer& T = transfers_[t];
    T.involves = net_.island_kinds(host_of(T.src), host_of(T.dst));
    involve(T.src, T.involves, +1), involve(T.dst, T.involves, +1);
  }
  due_at(now + o_.send_latency, kPpBit | t);
}

// GPU g needs the activation or gradient of a micro-batch; false: it blocks until transfer_done.
bool WorkloadDriver::pp_recv(uint32_t g, const ProgramStep& s) {
  const uint32_t t = transfer_of(gpus_[g].iter, s.kind == ProgramStep::RecvGrad, s.arg, s.chunk, g);
  if (transfers_[t].done >= 0) return true;
  transfers_[t].waiting_since = net_.client_now();
  return false;
}

// A pipeline transfer's flow finished (the sender got its last ACK), or it had no bytes.
void WorkloadDriver::transfer_done(uint32_t t) {
  const Time now = net_.client_now();
  Transfer& T = transfers_[t];
  if (T.involves) involve(T.src, T.involves, -1), involve(T.dst, T.involves, -1), T.involves = 0;
  T.done = now;
  report_.collectives[T.record].end = now;
  --pending_;
  note_time(T.iter, now);
  const uint32_t r = T.dst;
  Gpu& R = gpus_[r];
  if (R.stage != kRecvWait || T.waiting_since < 0) return;
  {
    // The wait splits at the moment the peer sent: before it the stage idled for its peer's work
    // (bubble), after it for the transfer itself (exposed PP communication).
    const Time from = std::max(T.sent, T.waiting_since);
    report_.per_gpu[r].bubble += from - T.waiting_since;
    report_.per_gpu[r].exposed_pp += now - from;
  }
  ++R.pc;
  R.stage = kStepBegin;
  if (advancing_ != r) advance(r);
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
  note_time(iter, now);
  report_.per_gpu[g].update += update;
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
      G.blocked_since = std::max(G.blocked_since, completed);
    }
    if (G.wg_outstanding == 0) advance(g);
  } else if (G.stage == kFwdBegin && G.blocked_since >= 0 && G.row == static_cast<int32_t>(row)) {
    advance(g);
  }
}

void WorkloadDriver::pfc(const PfcRecord& p) {
  if (forward_) forward_->pfc(p);
}

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
    if (net_.stopped_by_signal())
      report_.incomplete = fmt::format("interrupted by {} at {:.6f} s while {} collectives pending:{}",
                                       signal_name(net_.stop_signal()), double(now) / kSec, pending_, describe_pending());
    else {
      report_.stuck = dry;
      report_.incomplete = fmt::format("{} at {:.6f} s while {} collectives pending:{}",
                                       dry ? "no runnable events" : "stopped by the time limit",
                                       double(dry ? last : until) / kSec, pending_, describe_pending());
    }
  }
  Time prev = o_.start;
  for (uint32_t i = 0; i < o_.iterations; ++i) {
    // An iteration no GPU began (the run stopped before) is not reported: it has no time at all.
    const bool started =
        i == 0 || std::any_of(gpus_.begin(), gpus_.end(), [&](const Gpu& G) { return G.stage == kDone || G.iter >= i; });
    if (!started) break;
    const Time end = std::max(iter_end_[i], prev);
    // Complete when every GPU's program went past it and its wg collectives of it are done.
    bool complete = true;
    for (const Gpu& G : gpus_) {
      if (G.stage == kDone) continue;
      if (G.iter <= i) complete = false;
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
