// The client's own clock alone (partition/README.md, step 4): completions queued at a
// window edge and the client's own events play in one order; a stop is placed among identical events.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "wormhole/net/client_clock.h"
#include "wormhole/net/network.h"

using namespace wh;

namespace {

struct Log final : NetObserver, EventClient {
  ClientClock& clock;
  bool stopped = false;
  uint32_t stop_at_flow = UINT32_MAX, stop_at_client = UINT32_MAX;
  std::vector<std::string> seen;
  explicit Log(ClientClock& c) : clock(c) {}
  void flow_finished(const FlowRecord& r) override {
    seen.push_back("flow " + std::to_string(r.id) + " @" + std::to_string(clock.now() / kUs));
    if (r.id == stop_at_flow) stopped = true, clock.note_stop();
  }
  void client_event(uint32_t target, uint16_t) override {
    seen.push_back("client " + std::to_string(target) + " @" + std::to_string(clock.now() / kUs));
    if (target == stop_at_client) stopped = true, clock.note_stop();
  }
};

/// A network event at `t` µs (an arrival at port `port`) that finished flows `ids`, run as its rank's
/// execution number `exec`.
std::vector<Completion> finished(Time t, uint32_t port, uint64_t exec, std::vector<uint32_t> ids) {
  std::vector<Completion> out;
  for (uint32_t id : ids) {
    Completion c;
    c.at.time = t * kUs, c.at.key = 1, c.at.target = port, c.at.kind = kArrive;
    c.exec = exec;
    c.rec.id = id;
    out.push_back(c);
  }
  return out;
}

struct ClientClockTest : ::testing::Test {
  ClientClock clock;
  Log log{clock};
  void SetUp() override {
    clock.kernel().set_order(EventOrder::Portable);
    clock.kernel().schedule(5 * kUs, kClient, 7, 0, clock.kernel().client_cause());
    std::vector<Completion> all = finished(3, 10, 100, {1, 2});
    for (const Completion& c : finished(6, 11, 200, {3})) all.push_back(c);
    clock.queue(all);
  }
};

}  // namespace

TEST_F(ClientClockTest, CompletionsAndClientEventsPlayInTimeOrderOneEventPerFinishingNetworkEvent) {
  EXPECT_EQ(clock.next_event(), 3 * kUs);
  clock.run(10 * kUs, &log, &log, log.stopped);
  EXPECT_EQ(log.seen, (std::vector<std::string>{"flow 1 @3", "flow 2 @3", "client 7 @5", "flow 3 @6"}));
  // Two completion events and one client event ran: only the client's is counted as its event.
  EXPECT_EQ(clock.kernel().events_executed(), 3u);
  EXPECT_EQ(clock.client_events(), 1u);
  EXPECT_FALSE(clock.running());
  EXPECT_EQ(clock.next_event(), kTimeMax);
}

TEST_F(ClientClockTest, AStopEndsTheRunAndSaysWhichNetworkEventsCameAfterIt) {
  log.stop_at_client = 7;
  clock.run(10 * kUs, &log, &log, log.stopped);
  EXPECT_EQ(log.seen, (std::vector<std::string>{"flow 1 @3", "flow 2 @3", "client 7 @5"}));
  EXPECT_EQ(clock.stop_event().time, 5 * kUs);
  Event before, after;
  before.time = 4 * kUs, after.time = 6 * kUs;
  EXPECT_FALSE(clock.after_stop(before, 0));
  EXPECT_TRUE(clock.after_stop(after, 0));
}

TEST_F(ClientClockTest, AStopInsideACompletionComesBeforeTheIdenticalEventsRunAfterIt) {
  log.stop_at_flow = 2;  // while delivering the event at 3 µs that the rank ran as number 100
  clock.run(10 * kUs, &log, &log, log.stopped);
  EXPECT_EQ(log.seen, (std::vector<std::string>{"flow 1 @3", "flow 2 @3"}));
  const Event twin = finished(3, 10, 0, {0})[0].at;  // the same time, key and owner
  EXPECT_FALSE(clock.after_stop(twin, 100));
  EXPECT_TRUE(clock.after_stop(twin, 101));  // an identical event run after it on its rank
  EXPECT_FALSE(clock.after_stop(twin, 99));
}
