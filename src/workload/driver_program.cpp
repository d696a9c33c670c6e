// The workload driver (driver.h): running a GPU's program (its steps, delays and waits for wg collectives).
#include <algorithm>
#include <vector>

#include "driver_internal.h"

namespace wh {

using namespace workload_driver;

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
    if (t + update <= horizon_) report_.per_gpu[g].update += update;  // else it never ends in this run
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
        const Time before = t;
        if (G.iter > 0 && !wg_ready(G, static_cast<uint32_t>(G.row), G.iter - 1, t)) {
          if (park(kFwdBegin)) return;
          if (G.blocked_since < 0) G.blocked_since = now;
          return;  // wg_done_at wakes us
        }
        report_.per_gpu[g].update += t - before;  // a wg without flows: the rest of its update delay
        if (G.blocked_since >= 0) {
          // Exposed: blocked until the wg's communication completed (its update delay is not
          // communication, as for fwd and ig); nothing when it had no flows. The rest of the wait
          // was its update delay.
          const uint32_t s = rows_[G.row].wg_slot;
          const Time completed = s != kNoSlot ? G.wg_time[s] : -1;
          if (completed > G.blocked_since) {
            add_exposed(g, G.row, Phase::Wg, completed - G.blocked_since);
            if (g == o_.report_gpu) layer_record(G.iter - 1, G.row).exposed[2] += completed - G.blocked_since;
          }
          report_.per_gpu[g].update += now - std::max(G.blocked_since, completed);
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
        // program's own (a GPU waiting on both ends at the later). Woken by its last wg collective, what
        // it waited after their communication (exposure, counted as each completed) was update delays.
        if (G.wg_outstanding == 0 && G.blocked_since >= 0) {
          report_.per_gpu[g].update += t - G.blocked_since;
          G.blocked_since = -1;
        }
        if (G.wg_outstanding == 0 && G.wg_local_until > t) {
          report_.per_gpu[g].update += G.wg_local_until - t;
          t = G.wg_local_until;
        }
        if (park(kEndWait)) return;
        if (G.wg_outstanding > 0) {
          if (G.blocked_since < 0) G.blocked_since = now;
          return;
        }
        if (G.wg_local_until > now) {
          report_.per_gpu[g].update += G.wg_local_until - std::max(t, now);
          t = G.wg_local_until;
          if (park(kEndWait)) return;
        }
        G.blocked_since = -1;
        finish(g);
        return;
      case kMicroIssue:
        if (park(kMicroIssue)) return;
        // A MICRO iteration is its one collective and that collective's update delay, over now.
        if (G.iter > 0) note_time(G.iter - 1, t);
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

}  // namespace wh
