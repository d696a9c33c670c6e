// What a run counts for its statistics, and the journal that lets a distributed run take back what it
// counted after the client stopped inside a window (docs/distributed.md; partition/README.md step 4).
#pragma once
#include <cstdint>
#include <vector>

#include "wormhole/core/event.h"
#include "wormhole/core/kernel.h"
#include "wormhole/core/time.h"

namespace wh {

class ClientClock;

/// The counts behind RunStats (drops, ECN marks, timeouts, retransmissions, finished flows, the peak
/// switch queue, fast-forward's packet counts, the events run for another rank). In one process it only
/// counts. In a distributed run with a client it also journals each count with the event that made it
/// (journaling()): the network runs a whole window before the client, lagging, may stop inside it, and
/// take_back_after() then undoes what the events after the stop counted, so the statistics are those
/// of one process stopping there.
class RunLedger {
 public:
  /// Why a packet was dropped (RunStats::drops_*).
  enum DropCause : uint8_t { kDropBuffer = 0, kDropLoss = 1, kDropLinkDown = 2 };
  /// What a journal entry notes. The counts' own kinds are taken back here; kFinish is also the
  /// Network's (its flow's finish), and kInject, kCredit, kSkipHook are the Network's alone.
  enum Kind : uint8_t { kEcn, kDrop, kRto, kFinish, kInject, kCredit, kSkipHook, kRetx };
  struct Entry {
    Event at;         ///< the event that counted it
    uint64_t exec;    ///< that event's execution number on this rank
    Kind what;
    uint32_t arg;     ///< kDrop: the DropCause; kRetx: payload bytes; kFinish: the flow; others: the Network's
  };

  /// Events are numbered and named by `kernel` (the network's).
  explicit RunLedger(const Kernel& kernel) : kernel_(kernel) {}
  /// Journals from now on (true) or only counts (false).
  void set_journaling(bool on) { journaling_ = on; }
  bool journaling() const { return journaling_; }

  // --- counts (each also journaled when journaling) ---
  void ecn_mark() { ++ecn_marks, note(kEcn); }
  void drop(DropCause c) { ++dropped, ++drops[c], note(kDrop, c); }
  void retransmit(uint32_t payload) { ++retx_packets, retx_bytes += payload, note(kRetx, payload); }
  void timeout() { ++rto_fired, note(kRto); }
  /// Flow `id` finished now.
  void finish(uint32_t id) { ++flows_finished, last_finish = kernel_.now(), note(kFinish, id); }
  /// A switch egress holds `bytes` (all classes) now: the run's peak if above it.
  void queue_seen(uint64_t bytes, uint32_t port) {
    if (bytes <= max_queue) return;
    max_queue = bytes, max_queue_port = port, max_queue_event = kernel_.running();
    if (journaling_) peaks_.push_back({max_queue_event, kernel_.events_executed(), max_queue, port});
  }
  /// The running event counts as this rank's (journaled with fast-forward's counts before it).
  void event_counted() {
    if (journaling_) events_.push_back({kernel_.running(), kernel_.events_executed(), discarded, bypassed, held});
  }
  /// Journals an entry of the Network's own kinds (kInject, kCredit, kSkipHook only: a count kind noted
  /// here was never counted, and a take-back would subtract it) for the running event.
  void note(Kind what, uint32_t arg = 0) {
    if (journaling_) entries_.push_back({kernel_.running(), kernel_.events_executed(), what, arg});
  }

  /// Starts a window: the journal restarts.
  void begin_window();
  /// Undoes the counts of the events after the client's stop (ClientClock::after_stop) in this window:
  /// those events count as another rank's, fast-forward's counts go back to what they were before the
  /// first of them, the peak queue to the last one before, the finishes and other counts after it are
  /// taken back, and the last finish is the latest before. Returns the entries of kinds kFinish,
  /// kInject, kCredit and kSkipHook after the stop, in journal order, for the Network to undo. When
  /// not journaling it changes nothing and returns none (nothing was written down). Call it once a
  /// window, after the client stopped (ClientClock::note_stop): a second call takes back again.
  std::vector<Entry> take_back_after(const ClientClock& clock);

  // --- the counts (RunStats' fields) ---
  uint64_t flows_finished = 0, dropped = 0, ecn_marks = 0, rto_fired = 0;
  uint64_t drops[3] = {};                     ///< by DropCause
  uint64_t retx_packets = 0, retx_bytes = 0;  ///< data sent again (payload bytes)
  Time last_finish = -1;                      ///< ps, -1: none
  uint64_t max_queue = 0;                     ///< bytes
  uint32_t max_queue_port = 0;
  Event max_queue_event;                      ///< the event that first reached max_queue
  uint64_t discarded = 0;   ///< events a fast-forward left behind, dropped when their time came
  uint64_t bypassed = 0;    ///< control packets that passed a frozen port
  uint64_t held = 0;        ///< packets held for a frozen flow
  uint64_t foreign_events = 0;  ///< popped here but run (or counted) by another rank

 private:
  struct Counted {
    Event e;
    uint64_t exec;
    uint64_t discarded, bypassed, held;  // fast-forward's counts before it
  };
  struct Peak {
    Event at;
    uint64_t exec;
    uint64_t bytes;
    uint32_t port;
  };
  const Kernel& kernel_;
  bool journaling_ = false;
  std::vector<Counted> events_;  // the window's counted events
  std::vector<Entry> entries_;   // the window's counts
  std::vector<Peak> peaks_;      // each new peak queue of the window, after the one it began with
  Time window_last_finish_ = -1;
};

}  // namespace wh
