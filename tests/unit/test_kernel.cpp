// Core kernel pieces: the event heap's (time, key) order, Kernel::run's stop rules, serialization
// times (docs/network-model.md §6), the Ring FIFO and the per-stream random generator.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>
#include <set>
#include <vector>

#include "wormhole/core/event.h"
#include "wormhole/core/event_queue.h"
#include "wormhole/core/kernel.h"
#include "wormhole/core/ring.h"
#include "wormhole/core/rng.h"
#include "wormhole/core/time.h"

using namespace wh;

namespace {

bool less_tk(const Event& a, const Event& b) { return a.time < b.time || (a.time == b.time && a.key < b.key); }

/// A kernel handler that records the events it sees and can ask the kernel to stop.
struct Recorder {
  std::vector<Event> seen;
  std::vector<Time> now_at_handle;
  Kernel* k = nullptr;
  int ticks = 0;
  bool running = true;
  bool stop_on_tick = false;
  void handle(const Event& e) {
    seen.push_back(e);
    if (k) now_at_handle.push_back(k->now());
  }
  void on_tick() {
    ++ticks;
    if (stop_on_tick) running = false;
  }
  bool keep_running() const { return running; }
  std::vector<Time> barriers;  // now() at each barrier
  Time next_barrier = kTimeMax;  // set again from at_barrier
  std::vector<size_t> seen_at_barrier;  // events handled before each barrier
  void at_barrier() {
    barriers.push_back(k ? k->now() : -1);
    seen_at_barrier.push_back(seen.size());
    if (k) k->set_barrier(next_barrier);
    next_barrier = kTimeMax;  // once
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// EventQueue
// ---------------------------------------------------------------------------------------------

TEST(EventQueue, PopsTenThousandRandomEventsInTimeKeyOrder) {
  // 10,000 events with times drawn from a small range (many ties) and random keys; the pop
  // sequence must equal std::sort of the same records by (time, key).
  std::mt19937_64 gen(12345);
  std::uniform_int_distribution<Time> tdist(0, 2000);  // ~5 events per distinct time: plenty of ties
  std::vector<Event> evs;
  EventQueue q;
  for (uint32_t i = 0; i < 10000; ++i) {
    Event e;
    e.time = tdist(gen) * kNs;
    e.key = Event::make_key(e.time, Cause{e.time - static_cast<Time>(gen() % 3000) * kNs, gen(), i});
    e.key = (e.key & ~((1ull << 20) - 1)) | i;  // unique low bits: the expected order is total
    e.target = i;  // unique: identifies the record
    evs.push_back(e);
    q.push(e);
  }
  ASSERT_EQ(q.size(), 10000u);
  std::vector<Event> want = evs;
  std::sort(want.begin(), want.end(), less_tk);  // keys are unique (seq = i), so the order is total
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_FALSE(q.empty());
    EXPECT_EQ(q.top().target, want[i].target) << "top() at pop " << i;
    const Event e = q.pop();
    ASSERT_EQ(e.time, want[i].time) << "pop " << i;
    ASSERT_EQ(e.key, want[i].key) << "pop " << i;
    ASSERT_EQ(e.target, want[i].target) << "pop " << i;
  }
  EXPECT_TRUE(q.empty());
}

TEST(EventQueue, InterleavedPushPopKeepsOrder) {
  // Random mix of pushes and pops (never pushing earlier than the last popped time, as a
  // simulation does): every pop returns the minimum of what is in the queue.
  std::mt19937_64 gen(7);
  EventQueue q;
  std::multiset<std::pair<Time, uint64_t>> ref;
  Time now = 0;
  uint32_t seq = 0;
  for (int step = 0; step < 50000; ++step) {
    if (ref.empty() || gen() % 3 != 0) {
      Event e;
      e.time = now + static_cast<Time>(gen() % 100);
      e.key = Event::make_key(e.time, Cause{now, gen() % 8, seq++});
      q.push(e);
      ref.insert({e.time, e.key});
    } else {
      const Event e = q.pop();
      ASSERT_EQ(std::make_pair(e.time, e.key), *ref.begin()) << "step " << step;
      ref.erase(ref.begin());
      now = e.time;
    }
  }
  EXPECT_EQ(q.size(), ref.size());
}

// A bucket holds its events in chunks of a few: a thousand events in one 1.024-ns bucket (a
// synchronised fabric's burst) span many chunks, beside a bucket with a single event.
TEST(EventQueue, AThousandEventsInOneBucketComeOutInOrder) {
  std::mt19937_64 gen(3);
  EventQueue q;
  std::vector<Event> evs;
  Event lone;
  lone.time = 5 * kNs + 3;  // a later bucket, alone in it
  lone.key = 1;
  lone.target = 1000;
  for (uint32_t i = 0; i < 1000; ++i) {
    Event e;
    e.time = 2048 + static_cast<Time>(gen() % 1024);  // ps: all in the bucket [2.048, 3.072) ns
    e.key = (gen() & ~0xfffull) | i;
    e.target = i;
    evs.push_back(e);
    q.push(e);
    if (i == 500) q.push(lone);
  }
  evs.push_back(lone);
  std::sort(evs.begin(), evs.end(), less_tk);
  EXPECT_EQ(q.next_time(), evs.front().time);
  size_t seen = 0;
  q.for_each([&](const Event&) { ++seen; });
  EXPECT_EQ(seen, 1001u);
  for (size_t i = 0; i < evs.size(); ++i) {
    const Event e = q.pop();
    ASSERT_EQ(e.target, evs[i].target) << "pop " << i;
  }
  EXPECT_TRUE(q.empty());
}

// Chunks freed by a drained bucket are taken again by later ones, partly filled: a reused chunk must
// start empty and end its bucket's list (a stale count or link would show in for_each, next_time or
// the pops). Equal (time, key) pairs of different owners exercise the last tie-break.
TEST(EventQueue, ChunksOfADrainedBucketAreReusedCleanly) {
  std::mt19937_64 gen(5);
  EventQueue q;
  uint32_t id = 0;
  std::vector<Event> ref;
  auto put = [&](Time t, uint64_t key) {
    Event e;
    e.time = t;
    e.key = key;
    e.target = id++;
    q.push(e);
    ref.push_back(e);
  };
  Time base = 2048;
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 21; ++i) put(base + static_cast<Time>(gen() % 1024), gen() & ~0xfffull);  // 3 chunks, the newest partial
    for (int i = 0; i < 3; ++i) put(base + 7, 42);  // one instant and key, three owners
    for (int b = 1; b <= 5; ++b) put(base + b * 1024 + static_cast<Time>(gen() % 1024), gen());  // a chunk each
    std::sort(ref.begin(), ref.end(), [](const Event& a, const Event& b) { return a.before(b); });
    size_t seen = 0;
    q.for_each([&](const Event&) { ++seen; });
    ASSERT_EQ(seen, ref.size()) << "round " << round;
    for (size_t i = 0; i < ref.size(); ++i) {
      ASSERT_EQ(q.next_time(), ref[i].time) << "round " << round << " pop " << i;
      ASSERT_EQ(q.pop().target, ref[i].target) << "round " << round << " pop " << i;
    }
    ASSERT_TRUE(q.empty());
    ref.clear();
    base += 10 * 1024;
  }
}

// An accelerated run leaves the calendar nearly empty: a few events spread over the whole window,
// its wrap-around and beyond it. next_time() and the pops must still find the earliest one.
TEST(EventQueue, SparseEventsAcrossTheWindowAndItsWrapKeepOrder) {
  std::mt19937_64 gen(99);
  EventQueue q;
  std::multiset<std::pair<Time, uint64_t>> ref;
  Time now = 0;
  uint32_t seq = 0;
  // Gaps from one bucket to twice the window (67 us), so successive events land in any word of the
  // bitmap, before and after the slot being drained, or in the far heap.
  const Time spans[] = {5 * kNs, 300 * kNs, 20 * kUs, 66 * kUs, 140 * kUs};
  for (int step = 0; step < 20000; ++step) {
    if (ref.size() < 1 + gen() % 4) {
      Event e;
      e.time = now + static_cast<Time>(gen() % static_cast<uint64_t>(spans[gen() % 5]));
      e.key = Event::make_key(e.time, Cause{now, gen() % 8, seq++});
      q.push(e);
      ref.insert({e.time, e.key});
    } else {
      ASSERT_EQ(q.next_time(), ref.begin()->first) << "step " << step;
      const Event e = q.pop();
      ASSERT_EQ(std::make_pair(e.time, e.key), *ref.begin()) << "step " << step;
      ref.erase(ref.begin());
      now = e.time;
    }
  }
  EXPECT_EQ(q.size(), ref.size());
}

// A distributed rank runs windows: pop_until(edge), then packets from other ranks are pushed at
// times after the edge but before its own next event. next_time() must not move the calendar, and
// pop_until must not move it past the edge, or those packets (and all their successors) land in the
// side heap; the order must be exact either way.
TEST(EventQueue, WindowEdgesKeepOrderAndNeverPeekPastTheEdge) {
  EventQueue q;
  auto ev = [](Time t, uint64_t key) {
    Event e;
    e.time = t;
    e.key = key;
    return e;
  };
  q.push(ev(100 * kNs, 1));
  q.push(ev(1 * kMs, 2));  // this rank's next event is far away
  EXPECT_EQ(q.next_time(), 100 * kNs);
  Event e;
  ASSERT_TRUE(q.pop_until(200 * kNs, e));
  EXPECT_EQ(e.time, 100 * kNs);
  EXPECT_FALSE(q.pop_until(200 * kNs, e));  // the 1-ms event is past the edge: not popped, not reached
  EXPECT_EQ(q.next_time(), 1 * kMs);
  // Arrivals from other ranks at the edge, before the far event, in scrambled order.
  std::vector<Event> pushed;
  for (int i = 0; i < 50; ++i) pushed.push_back(ev(200 * kNs + ((i * 37) % 50) * 10 * kNs, 100 + uint64_t(i)));
  for (const Event& p : pushed) q.push(p);
  EXPECT_EQ(q.next_time(), 200 * kNs);
  EXPECT_EQ(q.side_heap_size(), 0u);  // in their buckets, not in the heap (the bug: all 50 there)
  std::vector<Event> want = pushed;
  std::sort(want.begin(), want.end(), less_tk);
  Time edge = 300 * kNs;
  std::vector<Event> got;
  while (got.size() < want.size()) {
    while (q.pop_until(edge - 1, e)) {
      got.push_back(e);
      if (got.size() % 7 == 0) q.push(ev(e.time + 3 * kNs, 1000 + got.size()));  // a successor inside the window
    }
    edge += 100 * kNs;
  }
  std::vector<Time> times;
  for (const Event& g : got) times.push_back(g.time);
  EXPECT_TRUE(std::is_sorted(times.begin(), times.end()));
  ASSERT_TRUE(q.pop_until(kTimeMax, e));
  while (e.time != 1 * kMs) ASSERT_TRUE(q.pop_until(kTimeMax, e));  // the successors, then the far event
  EXPECT_TRUE(q.empty());
}

// A client (the workload driver) runs on every rank of a distributed run, but the model's events of
// an event run only on its owner: in portable order the client's children are numbered apart (128 + j),
// so the model's children have the same keys whether or not the client scheduled something in between.
// In reference order they share ns-3's one numbering.
namespace {
struct ClientMix {
  Kernel* k = nullptr;
  bool with_client = true;
  std::vector<Event> seen;
  void handle(const Event& e) {
    seen.push_back(e);
    if (e.target != 1) return;
    k->schedule(e.time + 5 * kNs, 0, 2);  // model child
    if (with_client) k->schedule(e.time + 5 * kNs, 0, 3, 0, k->client_cause());
    k->schedule(e.time + 5 * kNs, 0, 4);  // model child
  }
  void on_tick() {}
  bool keep_running() const { return true; }
  void at_barrier() {}
};
std::vector<Event> mix(EventOrder order, bool with_client) {
  Kernel k;
  k.set_order(order);
  ClientMix h;
  h.k = &k;
  h.with_client = with_client;
  k.schedule(10 * kNs, 0, 1);
  k.run(kTimeMax, h);
  return h.seen;
}
}  // namespace

TEST(Kernel, ClientChildrenAreNumberedApartInPortableOrder) {
  const std::vector<Event> with = mix(EventOrder::Portable, true), without = mix(EventOrder::Portable, false);
  ASSERT_EQ(with.size(), 4u);
  ASSERT_EQ(without.size(), 3u);
  auto key_of = [](const std::vector<Event>& v, uint32_t target) {
    for (const Event& e : v)
      if (e.target == target) return e.key;
    return uint64_t(0);
  };
  EXPECT_EQ(key_of(with, 2), key_of(without, 2));
  EXPECT_EQ(key_of(with, 4), key_of(without, 4));  // not shifted by the client's child
  EXPECT_EQ(key_of(with, 3) & 0xff, 0x80u);        // the client's first child
  EXPECT_EQ(key_of(with, 4) & 0xff, 1u);
  // Reference order: one numbering, as ns-3 (the client's child is the model's second).
  const std::vector<Event> ref = mix(EventOrder::Reference, true);
  ASSERT_EQ(ref.size(), 4u);
  EXPECT_EQ(ref[1].target, 2u);
  EXPECT_EQ(ref[2].target, 3u);
  EXPECT_EQ(ref[3].target, 4u);
}

// The same through Kernel::run, as the distributed engine drives it (the bug was its loop test
// peeking at the queue's top, which moved the calendar to this rank's next event, 1 ms ahead).
TEST(Kernel, RunToAWindowEdgeLeavesLaterArrivalsInTheirBuckets) {
  Kernel k;
  k.set_order(EventOrder::Portable);
  Recorder rec;
  rec.k = &k;
  k.schedule(100 * kNs, 0, 1);
  k.schedule(1 * kMs, 0, 2);
  k.run(200 * kNs - 1, rec);
  ASSERT_EQ(rec.seen.size(), 1u);
  for (int i = 0; i < 20; ++i) k.schedule(200 * kNs + i * kNs, 0, 10 + i, 0, Cause{0, 0, uint32_t(i)});
  EXPECT_EQ(k.queue().side_heap_size(), 0u);
  k.run(kTimeMax, rec);
  ASSERT_EQ(rec.seen.size(), 22u);
  EXPECT_EQ(rec.seen.back().time, 1 * kMs);
}

TEST(EventQueue, EqualTimesPopInKeyOrder) {
  // Same time: the event caused earlier (longer delay) first; equal causes by parent, then child.
  EventQueue q;
  const Time t = 42 * kNs;
  const uint64_t k_late = Event::make_key(t, Cause{t, 0, 0});                 // caused now
  const uint64_t k_1us = Event::make_key(t, Cause{t - 1000 * kNs, 5ull << 20, 1});
  const uint64_t k_1us_p4 = Event::make_key(t, Cause{t - 1000 * kNs, 4ull << 20, 9});
  const uint64_t k_1us_c0 = Event::make_key(t, Cause{t - 1000 * kNs, 5ull << 20, 0});
  const uint64_t k_2us = Event::make_key(t, Cause{t - 2000 * kNs, 9ull << 20, 3});
  for (uint64_t k : {k_late, k_1us, k_1us_p4, k_1us_c0, k_2us}) {
    Event e;
    e.time = t;
    e.key = k;
    q.push(e);
  }
  // An earlier event with the largest key still comes first.
  Event early;
  early.time = 41 * kNs;
  early.key = UINT64_MAX;
  q.push(early);
  EXPECT_EQ(q.pop().key, UINT64_MAX);
  EXPECT_EQ(q.pop().key, k_2us);      // longest delay
  EXPECT_EQ(q.pop().key, k_1us_p4);   // 1 us, smaller parent
  EXPECT_EQ(q.pop().key, k_1us_c0);   // 1 us, parent 5, child 0
  EXPECT_EQ(q.pop().key, k_1us);      // 1 us, parent 5, child 1
  EXPECT_EQ(q.pop().key, k_late);     // caused at this very instant: last
  EXPECT_TRUE(q.empty());
}

TEST(EventQueue, MakeKeyLayout) {
  // inverse delay code (12 bits) | parent key >> 20 (44 bits) | child index (8 bits).
  const Time t = 10 * kUs;
  EXPECT_EQ(Event::make_key(t, Cause{t, 0, 0}), 0xfffull << 52);
  EXPECT_EQ(Event::make_key(t, Cause{t, 0xabcull << 20, 7}), (0xfffull << 52) | (0xabcull << 8) | 7u);
  // Child indices wrap at 8 bits; the parent's lowest 20 bits are dropped.
  EXPECT_EQ(Event::make_key(t, Cause{t, (1ull << 20) | 0xfffffu, 0x102u}), (0xfffull << 52) | (1ull << 8) | 2u);
  // Delays are exact in ns up to 2,047 ns, then in 64-ns steps, capped at 133 us.
  EXPECT_EQ(Event::make_key(t, Cause{t - 1000 * kNs, 0, 0}), (0xfffull - 1000) << 52);
  EXPECT_EQ(Event::make_key(t, Cause{t - (2048 + 640) * kNs, 0, 0}), (0xfffull - 2058) << 52);
  EXPECT_EQ(Event::make_key(t + kSec, Cause{t, 0, 0}), 0u);
  EXPECT_LT(Event::make_key(t, Cause{t - 1000 * kNs, ~0ull, 255}), Event::make_key(t, Cause{t - 83 * kNs, 0, 0}));
}

// ---------------------------------------------------------------------------------------------
// Kernel
// ---------------------------------------------------------------------------------------------

TEST(Kernel, RunStopsAtUntilInclusive) {
  Kernel k;
  for (Time t : {30 * kNs, 10 * kNs, 20 * kNs, 21 * kNs}) k.schedule(t, 0, static_cast<uint32_t>(t / kNs));
  Recorder r;
  r.k = &k;
  // Events at 10 and 20 ns are <= until = 20 ns (inclusive); 21 and 30 stay pending.
  EXPECT_EQ(k.run(20 * kNs, r), 2u);
  ASSERT_EQ(r.seen.size(), 2u);
  EXPECT_EQ(r.seen[0].target, 10u);
  EXPECT_EQ(r.seen[1].target, 20u);
  EXPECT_EQ(r.now_at_handle, (std::vector<Time>{10 * kNs, 20 * kNs}));  // now() = event time in handle
  EXPECT_EQ(k.now(), 20 * kNs);  // the clock stays at the last executed event, not at `until`
  EXPECT_EQ(k.pending(), 2u);
  EXPECT_EQ(k.events_executed(), 2u);
  // Running on executes the rest; an empty queue ends the run before `until`.
  EXPECT_EQ(k.run(kTimeMax, r), 2u);
  EXPECT_EQ(r.seen.back().target, 30u);
  EXPECT_EQ(k.now(), 30 * kNs);
  EXPECT_EQ(k.pending(), 0u);
  EXPECT_EQ(k.events_executed(), 4u);
}

TEST(Kernel, BarrierRunsBeforeEveryEventAtItsTimeAndOnlyWhenSomethingFollows) {
  for (EventOrder order : {EventOrder::Reference, EventOrder::Portable}) {
    Kernel k;
    k.set_order(order);
    // 20 ns is scheduled first: in either order it would run before a barrier event made later.
    for (Time t : {20 * kNs, 10 * kNs, 30 * kNs}) k.schedule(t, 0, static_cast<uint32_t>(t / kNs));
    Recorder r;
    r.k = &k;
    k.set_barrier(20 * kNs);
    r.next_barrier = 25 * kNs;  // set again once: 25 ns, between the events at 20 and 30
    EXPECT_EQ(k.run(kTimeMax, r), 3u);  // barriers are not events
    EXPECT_EQ(r.barriers, (std::vector<Time>{20 * kNs, 25 * kNs}));
    EXPECT_EQ(r.seen_at_barrier, (std::vector<size_t>{1, 2}));  // after 10 ns; after 20 ns, before 30
    ASSERT_EQ(r.seen.size(), 3u);
    EXPECT_EQ(r.now_at_handle, (std::vector<Time>{10 * kNs, 20 * kNs, 30 * kNs}));
    // Nothing at or after a barrier: it is not held (a barrier alone keeps no run alive).
    k.set_barrier(40 * kNs);
    EXPECT_EQ(k.run(kTimeMax, r), 0u);
    EXPECT_EQ(r.barriers.size(), 2u);
    // An event after `until`: the barrier before it waits for the run that reaches it.
    k.schedule(60 * kNs, 0, 60);
    EXPECT_EQ(k.run(50 * kNs, r), 0u);
    EXPECT_EQ(r.barriers.size(), 2u);
    EXPECT_EQ(k.run(60 * kNs, r), 1u);
    EXPECT_EQ(r.barriers, (std::vector<Time>{20 * kNs, 25 * kNs, 40 * kNs}));
  }
}

TEST(Kernel, EqualTimeEventsRunInSchedulingOrderPortable) {
  // Portable order, scheduled during set-up (no running event): same time and delay, so in
  // scheduling order; an event whose cause is older runs first.
  Kernel k;
  k.set_order(EventOrder::Portable);
  k.schedule(5, 0, 3);
  k.schedule(5, 0, 2);
  k.schedule(5, 0, 22);
  // An explicit cause 1 ns before its time runs before the events caused at their own time.
  Cause c = k.cause();
  c.origin = 5 - kNs;
  k.schedule(5, 0, 1, 0, c);
  Recorder r;
  k.run(5, r);
  ASSERT_EQ(r.seen.size(), 4u);
  EXPECT_EQ(r.seen[0].target, 1u);   // caused 1 ns earlier
  EXPECT_EQ(r.seen[1].target, 3u);   // then children in the order they were scheduled
  EXPECT_EQ(r.seen[2].target, 2u);
  EXPECT_EQ(r.seen[3].target, 22u);
}

TEST(Kernel, ReferenceOrderIsInsertionOrder) {
  // Reference order = ns-3's: among same-time events, the one scheduled first (by an earlier
  // executed event, or earlier by the same event) runs first, whatever the times of their causes.
  struct Chain {
    Kernel* k;
    std::vector<uint32_t> seen;
    void handle(const Event& e) {
      seen.push_back(e.target);
      if (e.target == 1) k->schedule(100, 0, 10);  // scheduled at t=1 (executed 1st) for t=100
      if (e.target == 2) k->schedule(100, 0, 20);  // scheduled at t=50 (executed 2nd) for t=100
      if (e.target == 2) k->schedule(100, 0, 21);  // its second child
    }
    void on_tick() {}
    bool keep_running() const { return true; }
    void at_barrier() {}
  } c{nullptr, {}};
  Kernel k;
  c.k = &k;
  k.schedule(1, 0, 1);
  k.schedule(50, 0, 2);
  k.run(kTimeMax, c);
  EXPECT_EQ(c.seen, (std::vector<uint32_t>{1, 2, 10, 20, 21}));
}

TEST(Kernel, TickEvery65536EventsAndStopRequest) {
  // 70,000 events; the handler is ticked after event 65,536 and asks to stop there.
  Kernel k;
  for (int i = 0; i < 70000; ++i) k.schedule(i, 0, 0);
  Recorder r;
  r.stop_on_tick = true;
  EXPECT_EQ(k.run(kTimeMax, r), 65536u);  // 2^16 events, then on_tick -> keep_running() false
  EXPECT_EQ(r.ticks, 1);
  EXPECT_EQ(k.pending(), 70000u - 65536u);
  EXPECT_EQ(k.now(), 65535);  // times 0..65535 ps executed
  // Without a stop request the rest runs; no second tick (131,072 is not reached).
  r.running = true;
  r.stop_on_tick = false;
  EXPECT_EQ(k.run(kTimeMax, r), 70000u - 65536u);
  EXPECT_EQ(r.ticks, 1);
  EXPECT_EQ(k.events_executed(), 70000u);
}

TEST(Kernel, EventsScheduledDuringRunAreExecuted) {
  // A handler that schedules a follow-up event 1 ns later, 10 times, then stops scheduling.
  struct Chain {
    Kernel* k;
    int n = 0;
    void handle(const Event& e) {
      if (++n < 10) k->schedule(k->now() + kNs, 0, 0);
    }
    void on_tick() {}
    bool keep_running() const { return true; }
    void at_barrier() {}
  } c{nullptr};
  Kernel k;
  c.k = &k;
  k.schedule(0, 0, 0);
  // until = 5 ns: events at 0..5 ns run (6 events); the one at 6 ns stays pending.
  EXPECT_EQ(k.run(5 * kNs, c), 6u);
  EXPECT_EQ(k.pending(), 1u);
  EXPECT_EQ(k.queue().top().time, 6 * kNs);
  EXPECT_EQ(k.run(kTimeMax, c), 4u);  // 6..9 ns
  EXPECT_EQ(k.now(), 9 * kNs);
}

// ---------------------------------------------------------------------------------------------
// serialization_time (docs/network-model.md §6)
// ---------------------------------------------------------------------------------------------

TEST(SerializationTime, KnownAnswersWithNsTruncation) {
  const uint64_t G100 = 100'000'000'000ull;
  // 1048 B * 8 = 8384 bit / 100 Gb/s = 83.84 ns -> truncated to 83 ns.
  EXPECT_EQ(serialization_time(1048, G100, true), 83 * kNs);
  // 1090 B (HPCC data) = 8720 bit -> 87.2 ns -> 87 ns.
  EXPECT_EQ(serialization_time(1090, G100, true), 87 * kNs);
  // 60 B ACK = 480 bit -> 4.8 ns -> 4 ns.
  EXPECT_EQ(serialization_time(60, G100, true), 4 * kNs);
  // 88 B HPCC ACK = 704 bit -> 7.04 ns -> 7 ns.
  EXPECT_EQ(serialization_time(88, G100, true), 7 * kNs);
  // 1250 B = 10,000 bit -> exactly 100 ns, but the reference's Seconds(1e4 / 1e11) is the double
  // 9.9999999999999995e-8 and truncates to 99 ns (HPCC ns-3 does; regression: we gave 100).
  EXPECT_EQ(serialization_time(1250, G100, true), 99 * kNs);
  // Same at 400 Gb/s: 1050 B = 21 ns exactly -> 20 ns; HPCC-PINT's 1050-B packets at 100 Gb/s: 84 -> 83 ns.
  EXPECT_EQ(serialization_time(1050, 4 * G100, true), 20 * kNs);
  EXPECT_EQ(serialization_time(1050, G100, true), 83 * kNs);
  // 43 B PFC frame = 344 bit -> 3.44 ns -> 3 ns.
  EXPECT_EQ(serialization_time(43, G100, true), 3 * kNs);
  // 400 Gb/s: 1048 B -> 20.96 ns -> 20 ns; 25 Gb/s: 1048 B -> 335.36 ns -> 335 ns.
  EXPECT_EQ(serialization_time(1048, 4 * G100, true), 20 * kNs);
  EXPECT_EQ(serialization_time(1048, 25'000'000'000ull, true), 335 * kNs);
  // DCQCN minimum rate 1 Gb/s: 1048 B -> 8384 ns exactly, 8383 ns through the reference's double.
  EXPECT_EQ(serialization_time(1048, 1'000'000'000ull, true), 8383 * kNs);
  // A quotient above a whole ns by more than the double's error keeps it: 1048 B at 25 Gb/s above.
  EXPECT_EQ(serialization_time(0, G100, true), 0);
}

TEST(SerializationTime, PicosecondsWithoutTruncation) {
  const uint64_t G100 = 100'000'000'000ull;
  // 8384 bit / 100 Gb/s = 83.84 ns = 83,840 ps exactly.
  EXPECT_EQ(serialization_time(1048, G100, false), 83840);
  // 480 bit -> 4.8 ns = 4800 ps.
  EXPECT_EQ(serialization_time(60, G100, false), 4800);
  // 1250 B -> 100,000 ps.
  EXPECT_EQ(serialization_time(1250, G100, false), 100000);
  // 800 Gb/s: 1048 B -> 10.48 ns = 10,480 ps (ns truncation would give 10 ns).
  EXPECT_EQ(serialization_time(1048, 8 * G100, false), 10480);
  EXPECT_EQ(serialization_time(1048, 8 * G100, true), 10 * kNs);
  // Truncation to whole ps: 1 B at 3 Gb/s = 8/3 ns = 2666.67 ps -> 2666 ps.
  EXPECT_EQ(serialization_time(1, 3'000'000'000ull, false), 2666);
  // Large sizes stay exact (128-bit intermediate): (2^31 - 1) B = 17,179,869,176 bit at 100 Gb/s
  // = 171,798,691.76 ns -> 171,798,691 ns; in ps 171,798,691,760.
  EXPECT_EQ(serialization_time(2147483647ull, G100, true), 171798691 * kNs);
  EXPECT_EQ(serialization_time(2147483647ull, G100, false), 171798691760);
}

TEST(SerializationTime, ToNsTruncates) {
  EXPECT_EQ(to_ns(83840), 83u);
  EXPECT_EQ(to_ns(999), 0u);
  EXPECT_EQ(to_ns(2 * kSec + 1), 2'000'000'000u);
}

// ---------------------------------------------------------------------------------------------
// Ring
// ---------------------------------------------------------------------------------------------

TEST(Ring, FifoAcrossGrowthWhileWrapped) {
  Ring<uint32_t> r;
  EXPECT_TRUE(r.empty());
  uint32_t next_in = 0, next_out = 0;
  // Fill 3 of the initial 4 slots, pop 2, so head moves to 2; then push 9 more: the buffer grows
  // 4 -> 8 -> 16 while the contents wrap around the end.
  for (int i = 0; i < 3; ++i) r.push(next_in++);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(r.pop(), next_out++);
  for (int i = 0; i < 9; ++i) r.push(next_in++);
  EXPECT_EQ(r.size(), 10u);
  EXPECT_EQ(r.front(), next_out);
  for (uint32_t i = 0; i < r.size(); ++i) EXPECT_EQ(r.at(i), next_out + i);
  // Long random interleaving: FIFO order is kept through many growths and wraps.
  std::mt19937 gen(3);
  for (int step = 0; step < 100000; ++step) {
    if (r.empty() || gen() % 5 < 3) {
      r.push(next_in++);
    } else {
      ASSERT_EQ(r.pop(), next_out++);
    }
    ASSERT_EQ(r.size(), next_in - next_out);
  }
  while (!r.empty()) ASSERT_EQ(r.pop(), next_out++);
  EXPECT_EQ(next_out, next_in);
  r.push(7);
  r.clear();
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.size(), 0u);
}

// Both ends against std::deque, through growths and wraps: what a monotonic window queue does.
TEST(Ring, DropsItsNewestAsADequeDoes) {
  Ring<uint32_t> r;
  std::deque<uint32_t> d;
  std::mt19937 gen(5);
  for (int step = 0; step < 100000; ++step) {
    const uint32_t op = gen() % 7;
    if (d.empty() || op < 3) {
      r.push(step), d.push_back(step);
    } else if (op < 5) {
      ASSERT_EQ(r.back(), d.back());
      r.pop_back(), d.pop_back();
    } else {
      ASSERT_EQ(r.pop(), d.front());
      d.pop_front();
    }
    ASSERT_EQ(r.size(), d.size());
    if (!d.empty()) {
      ASSERT_EQ(r.front(), d.front());
      ASSERT_EQ(r.back(), d.back());
    }
  }
}

TEST(Ring, HoldsStructs) {
  struct S {
    Time t;
    uint32_t v;
  };
  Ring<S> r;
  for (uint32_t i = 0; i < 100; ++i) r.push({Time(i) * 10, i});
  for (uint32_t i = 0; i < 100; ++i) {
    const S s = r.pop();
    EXPECT_EQ(s.t, Time(i) * 10);
    EXPECT_EQ(s.v, i);
  }
}

// ---------------------------------------------------------------------------------------------
// Rng
// ---------------------------------------------------------------------------------------------

TEST(Rng, UniformInUnitIntervalWithSaneMoments) {
  Rng r(1, 0);
  const int n = 200000;
  double sum = 0, sum2 = 0, lo = 1, hi = 0;
  int below_tenth = 0;
  for (int i = 0; i < n; ++i) {
    const double u = r.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    sum2 += u * u;
    lo = std::min(lo, u);
    hi = std::max(hi, u);
    below_tenth += u < 0.1;
  }
  // Mean 1/2 (sd of the mean = sqrt(1/12/n) = 0.00065), E[u^2] = 1/3, P(u < 0.1) = 0.1
  // (sd = sqrt(0.09/n) = 0.00067): 8-sigma bounds.
  EXPECT_NEAR(sum / n, 0.5, 0.006);
  EXPECT_NEAR(sum2 / n, 1.0 / 3, 0.006);
  EXPECT_NEAR(double(below_tenth) / n, 0.1, 0.006);
  EXPECT_LT(lo, 0.001);
  EXPECT_GT(hi, 0.999);
}

TEST(Rng, DeterministicPerSeedAndStream) {
  Rng a(42, 7), b(42, 7), c(42, 8), d(43, 7);
  std::vector<uint64_t> va, vb, vc, vd;
  for (int i = 0; i < 100; ++i) {
    va.push_back(a.next());
    vb.push_back(b.next());
    vc.push_back(c.next());
    vd.push_back(d.next());
  }
  EXPECT_EQ(va, vb);  // same (seed, stream): identical sequence
  EXPECT_NE(va, vc);  // another stream differs
  EXPECT_NE(va, vd);  // another seed differs
  // Streams of one seed are not shifted copies of each other: no common value in 100 draws.
  std::set<uint64_t> sa(va.begin(), va.end());
  for (uint64_t x : vc) EXPECT_EQ(sa.count(x), 0u);
  // Copying a generator copies its position.
  Rng e(42, 7);
  e.next();
  Rng f = e;
  EXPECT_EQ(e.next(), f.next());
  EXPECT_EQ(e.uniform(), f.uniform());
}

TEST(Rng, SplitmixKnownAnswer) {
  // splitmix64 reference values (Vigna's splitmix64.c) from state 0: first output
  // 0xe220a8397b1dcdaf, second 0x6e789e6aa1b965f4.
  uint64_t x = 0;
  EXPECT_EQ(splitmix64(x), 0xe220a8397b1dcdafull);
  EXPECT_EQ(splitmix64(x), 0x6e789e6aa1b965f4ull);
  EXPECT_EQ(x, 2 * 0x9e3779b97f4a7c15ull);
}

namespace {
// Records what the kernel shows it before each event: the next three events of the bucket.
struct Prefetcher {
  std::vector<Event> seen;
  std::vector<std::vector<uint32_t>> shown;  // targets of ahead(0..2) before each event
  void prefetch(const EventQueue& q) const {
    std::vector<uint32_t> t;
    for (size_t k = 0; k < 3; ++k)
      if (const Event* e = q.ahead(k)) t.push_back(e->target);
    const_cast<Prefetcher*>(this)->shown.push_back(t);
  }
  void handle(const Event& e) { seen.push_back(e); }
  void on_tick() {}
  bool keep_running() const { return true; }
  void at_barrier() {}
};
}  // namespace

// A handler with prefetch() is shown, before each event, the events that run after it in the same
// 1.024-ns bucket, in the order they run, and nothing of later buckets.
TEST(Kernel, APrefetchingHandlerIsShownTheEventsThatRunNextInTheBucket) {
  Kernel k;
  k.set_order(EventOrder::Portable);
  for (uint32_t i = 0; i < 4; ++i) k.schedule(100 * kNs, 0, 10 + i, 0, Cause{0, 0, i});  // one bucket
  k.schedule(200 * kNs, 0, 20, 0, Cause{0, 0, 9});                                     // a later one
  Prefetcher h;
  k.run(kTimeMax, h);
  ASSERT_EQ(h.seen.size(), 5u);
  ASSERT_EQ(h.shown.size(), 5u);
  EXPECT_EQ(h.shown[0], (std::vector<uint32_t>{11, 12, 13}));
  EXPECT_EQ(h.shown[1], (std::vector<uint32_t>{12, 13}));
  EXPECT_EQ(h.shown[2], (std::vector<uint32_t>{13}));
  EXPECT_TRUE(h.shown[3].empty());
  EXPECT_TRUE(h.shown[4].empty());
  for (size_t i = 0; i + 1 < h.seen.size(); ++i) {
    if (!h.shown[i].empty()) {
      EXPECT_EQ(h.shown[i][0], h.seen[i + 1].target);
    }
  }
}
