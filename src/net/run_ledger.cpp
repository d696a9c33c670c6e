// RunLedger (include/wormhole/net/run_ledger.h): taking back a window's counts after a stop inside it.
#include "wormhole/net/run_ledger.h"

#include <algorithm>

#include "wormhole/net/client_clock.h"

namespace wh {

void RunLedger::begin_window() {
  events_.clear();
  entries_.clear();
  window_last_finish_ = last_finish;
  peaks_.clear();
  peaks_.push_back({max_queue_event, 0, max_queue, max_queue_port});
}

std::vector<RunLedger::Entry> RunLedger::take_back_after(const ClientClock& clock) {
  if (!journaling_) return {};  // nothing was written down to take back
  bool counts_back = false;
  for (const Counted& c : events_) {
    if (!clock.after_stop(c.e, c.exec)) continue;
    ++foreign_events;
    if (!counts_back) discarded = c.discarded, bypassed = c.bypassed, held = c.held, counts_back = true;
  }
  if (!peaks_.empty()) {  // empty before the first begin_window()
    Peak best = peaks_.front();
    for (const Peak& p : peaks_)
      if (!clock.after_stop(p.at, p.exec)) best = p;  // peaks only grow: the last one not after the stop
    max_queue = best.bytes, max_queue_port = best.port, max_queue_event = best.at;
  }
  last_finish = window_last_finish_;
  std::vector<Entry> theirs;
  for (const Entry& u : entries_) {
    if (!clock.after_stop(u.at, u.exec)) {
      if (u.what == kFinish) last_finish = std::max(last_finish, u.at.time);  // a flow finishes at its event
      continue;
    }
    switch (u.what) {
      case kEcn: --ecn_marks; break;
      case kDrop: --dropped, --drops[u.arg]; break;
      case kRetx: --retx_packets, retx_bytes -= u.arg; break;
      case kRto: --rto_fired; break;
      case kFinish: --flows_finished, theirs.push_back(u); break;
      case kInject:
      case kCredit:
      case kSkipHook: theirs.push_back(u); break;
    }
  }
  return theirs;
}

}  // namespace wh
