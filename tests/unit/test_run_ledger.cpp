// The run's counts alone (RunLedger): counting in one process, and in a distributed run taking back
// what the events after the client's stop counted (partition/README.md, step 4).
#include <gtest/gtest.h>

#include <vector>

#include "wormhole/net/client_clock.h"
#include "wormhole/net/network.h"
#include "wormhole/net/run_ledger.h"

using namespace wh;

namespace {

/// Runs network events at 1, 2, 3 and 4 µs, each counting what a packet-level run would.
struct Counting {
  RunLedger& ledger;
  void handle(const Event& e) {
    ledger.event_counted();
    switch (e.target) {
      case 1: ledger.ecn_mark(), ledger.queue_seen(1000, 5), ledger.finish(10); break;
      case 2:
        ledger.drop(RunLedger::kDropLoss), ledger.retransmit(500), ledger.queue_seen(3000, 6);
        ledger.note(RunLedger::kInject, 7);
        break;
      case 3: ledger.timeout(), ledger.finish(11), ++ledger.discarded, ledger.queue_seen(9000, 7); break;
      case 4: ledger.ecn_mark(), ledger.finish(12), ledger.note(RunLedger::kCredit, 0); break;
    }
  }
  void on_tick() {}
  bool keep_running() const { return true; }
  void at_barrier() {}
};

void run_window(Kernel& k, RunLedger& ledger) {
  for (uint32_t i = 1; i <= 4; ++i) k.schedule(i * kUs, 0, i, 0, Cause{});
  Counting c{ledger};
  k.run(10 * kUs, c);
}

struct Stopper final : EventClient {
  ClientClock& clock;
  bool stopped = false;
  explicit Stopper(ClientClock& c) : clock(c) {}
  void client_event(uint32_t, uint16_t) override { stopped = true, clock.note_stop(); }
};

}  // namespace

/// A client clock stopped at 2.5 µs, between the network events at 2 and 3 µs.
struct StoppedClock {
  ClientClock clock;
  StoppedClock() {
    clock.kernel().set_order(EventOrder::Portable);
    clock.kernel().schedule(2500 * kNs, kClient, 0, 0, clock.kernel().client_cause());
    Stopper stop(clock);
    clock.run(10 * kUs, &stop, nullptr, stop.stopped);
  }
};

TEST(RunLedger, InOneProcessItCountsAndJournalsNothing) {
  Kernel k;
  k.set_order(EventOrder::Portable);
  RunLedger ledger(k);
  ledger.begin_window();
  run_window(k, ledger);
  // Nothing was journaled: a stop has nothing to take back.
  const StoppedClock stopped;
  EXPECT_TRUE(ledger.take_back_after(stopped.clock).empty());
  EXPECT_EQ(ledger.ecn_marks, 2u);
  EXPECT_EQ(ledger.dropped, 1u);
  EXPECT_EQ(ledger.drops[RunLedger::kDropLoss], 1u);
  EXPECT_EQ(ledger.retx_packets, 1u);
  EXPECT_EQ(ledger.retx_bytes, 500u);
  EXPECT_EQ(ledger.rto_fired, 1u);
  EXPECT_EQ(ledger.flows_finished, 3u);
  EXPECT_EQ(ledger.last_finish, 4 * kUs);
  EXPECT_EQ(ledger.max_queue, 9000u);
  EXPECT_EQ(ledger.max_queue_port, 7u);
  EXPECT_EQ(ledger.max_queue_event.time, 3 * kUs);
  EXPECT_EQ(ledger.foreign_events, 0u);
}

TEST(RunLedger, AStopInsideTheWindowTakesBackTheCountsOfTheEventsAfterIt) {
  Kernel k;
  k.set_order(EventOrder::Portable);
  RunLedger ledger(k);
  ledger.set_journaling(true);
  ledger.begin_window();
  run_window(k, ledger);
  // The client, lagging, stops at 2.5 µs: the network's events at 3 and 4 µs ran after it.
  const StoppedClock stopped;
  ASSERT_EQ(stopped.clock.stop_event().time, 2500 * kNs);
  const std::vector<RunLedger::Entry> theirs = ledger.take_back_after(stopped.clock);
  EXPECT_EQ(ledger.ecn_marks, 1u);
  EXPECT_EQ(ledger.dropped, 1u);
  EXPECT_EQ(ledger.retx_bytes, 500u);
  EXPECT_EQ(ledger.rto_fired, 0u);
  EXPECT_EQ(ledger.flows_finished, 1u);
  EXPECT_EQ(ledger.last_finish, 1 * kUs);
  EXPECT_EQ(ledger.max_queue, 3000u);  // the 9,000-B peak came after the stop
  EXPECT_EQ(ledger.max_queue_port, 6u);
  EXPECT_EQ(ledger.discarded, 0u);       // as before the first event after the stop
  EXPECT_EQ(ledger.foreign_events, 2u);  // the events at 3 and 4 µs no longer count here
  // The Network undoes the finishes and the credit after the stop; the injection at 2 µs stays.
  ASSERT_EQ(theirs.size(), 3u);
  EXPECT_EQ(theirs[0].what, RunLedger::kFinish);
  EXPECT_EQ(theirs[0].arg, 11u);
  EXPECT_EQ(theirs[1].what, RunLedger::kFinish);
  EXPECT_EQ(theirs[1].arg, 12u);
  EXPECT_EQ(theirs[2].what, RunLedger::kCredit);
}
