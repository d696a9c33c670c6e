// Flow storage (include/wormhole/net/flow_table.h): a finished flow keeps its FlowInfo and gives its QP
// state back, so a run holds state only for the flows running at once; what outlives the state is
// exactly what the results need.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "wormhole/cc/factory.h"
#include "wormhole/core/chunked.h"
#include "wormhole/core/release.h"
#include "wormhole/ffwd/fast_forward.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/net/flow_table.h"
#include "wormhole/net/network.h"

#include "net_fixtures.h"

using namespace wh;
using namespace wh::test;

namespace {

SimConfig dcqcn() {
  return read_hpcc_config(std::string(WH_TEST_DATA) + "/refruns/hpcc-ring16-fattree-k4-1MB/config_dcqcn.txt");
}

}  // namespace

// `v = {}` keeps what the container allocated (the initializer_list assignment): the driver's finished
// collectives held their per-member state that way. release_storage gives it back.
TEST(ReleaseStorage, GivesBackWhatAnEmptyBraceAssignmentKeeps) {
  std::vector<uint32_t> v(1000);
  v = {};
  EXPECT_EQ(v.capacity(), 1000u);  // the trap
  release_storage(v);
  EXPECT_EQ(v.capacity(), 0u);
  std::vector<bool> bits(5000);
  release_storage(bits);
  EXPECT_EQ(bits.capacity(), 0u);
  std::string text(1000, 'x');
  release_storage(text);  // a move assignment from "" would keep the 1000-B buffer
  EXPECT_LT(text.capacity(), 1000u);
  std::unordered_map<uint32_t, std::vector<uint32_t>> m;
  for (uint32_t i = 0; i < 1000; ++i) m[i].push_back(i);
  const size_t empty_buckets = std::unordered_map<uint32_t, std::vector<uint32_t>>().bucket_count();
  m = {};
  EXPECT_GT(m.bucket_count(), empty_buckets);  // the trap: the bucket array stays
  for (uint32_t i = 0; i < 1000; ++i) m[i].push_back(i);
  release_storage(m);
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(m.bucket_count(), empty_buckets);
}

TEST(ChunkedVector, GrowsWithoutMovingElementsAndTruncatesWholeChunks) {
  ChunkedVector<uint64_t, 2> v;  // chunks of 4
  v.push_back(7);
  const uint64_t* first = &v[0];
  for (uint64_t i = 1; i < 10; ++i) EXPECT_EQ(v.push_back(i * 10), i);
  EXPECT_EQ(&v[0], first);  // growth never moved it
  EXPECT_EQ(v.size(), 10u);
  EXPECT_EQ(v[9], 90u);
  EXPECT_EQ(v.capacity_bytes(), 3 * 4 * sizeof(uint64_t));
  v.truncate(5);
  EXPECT_EQ(v.capacity_bytes(), 2 * 4 * sizeof(uint64_t));
  EXPECT_EQ(v.push_back(55), 5u);
  EXPECT_EQ(v[4], 40u);
  EXPECT_EQ(v[5], 55u);
}

TEST(ChunkedVector, AMovedElementIsTakenWithoutACopy) {
  ChunkedVector<std::unique_ptr<int>, 1> v;  // chunks of 2; a move-only type
  for (int i = 0; i < 5; ++i) EXPECT_EQ(v.push_back(std::make_unique<int>(i * 3)), size_t(i));
  auto last = std::make_unique<int>(99);
  const int* held = last.get();
  v.push_back(std::move(last));
  EXPECT_EQ(last, nullptr);
  EXPECT_EQ(v[5].get(), held);
  EXPECT_EQ(*v[4], 12);
  EXPECT_EQ(v.capacity_bytes(), 3 * 2 * sizeof(std::unique_ptr<int>));
}

TEST(FlowTable, ReleasedSlotsAreReusedAndTheOutcomeOutlivesTheState) {
  FlowTable t;
  FlowInfo a;
  a.src = 1, a.dst = 2, a.size = 5000;
  const uint32_t id0 = t.add(a), id1 = t.add(a);
  EXPECT_FALSE(t.live(id0));
  Flow& s0 = t.create_state(id0);
  EXPECT_EQ(s0.size, 5000u);
  s0.skipped_bytes = 1000, s0.nic = 3, s0.clock_offset = 42;
  t.release(id0);
  EXPECT_FALSE(t.live(id0));
  EXPECT_EQ(t.info(id0).skipped_bytes, 1000u);
  EXPECT_EQ(t.info(id0).nic, 3u);
  EXPECT_EQ(t.info(id0).clock_offset, 42);
  Flow& s1 = t.create_state(id1);  // takes the slot id0 gave back, cleared
  EXPECT_EQ(&s1, &s0);
  EXPECT_EQ(s1.skipped_bytes, 0u);
  EXPECT_EQ(t.live_count(), 1u);
  EXPECT_EQ(t.peak_live(), 1u);
}

TEST(FlowTable, SequentialFlowsHoldOneStateAtATime) {
  // 50 flows of 100 KB, each starting 100 µs after the last (a flow takes ~12 µs): the run never holds
  // more than one flow's QP state, and none at its end; every record is as a lone flow's.
  const SimConfig cfg = dcqcn();
  Network net(cfg, star(2), make_cc(cfg, nullptr));
  std::vector<FlowSpec> specs;
  for (uint32_t k = 0; k < 50; ++k) specs.push_back(flow(0, 1, 100'000, k * 100 * kUs));
  net.add_flows(specs);
  EXPECT_EQ(net.live_flows(), 0u);  // added, not started: no state yet
  net.run(1 * kSec);
  EXPECT_EQ(net.flows_finished(), 50u);
  EXPECT_EQ(net.live_flows(), 0u);
  EXPECT_EQ(net.peak_live_flows(), 1u);
  const uint64_t fct = net.record(0).fct_ns();
  EXPECT_GT(fct, 8'000u);  // 100 KB at 100 Gb/s is 8 µs of payload
  for (uint32_t id = 0; id < 50; ++id) {
    const FlowRecord r = net.record(id);
    ASSERT_TRUE(r.finished());
    EXPECT_EQ(r.fct_ns(), fct) << id;
    EXPECT_EQ(r.min_fct_ns, net.record(0).min_fct_ns);
    EXPECT_EQ(r.sport, 10000u + id);  // the k-th flow of a pair
  }
  EXPECT_EQ(net.data_path(49).size(), 2u);  // a released flow still knows its path: NIC, switch port
  EXPECT_THROW(net.flow(0), std::logic_error);  // its QP state is gone
}

TEST(FlowTable, KeepFinishedStateKeepsEveryFlowsStateForInspection) {
  const SimConfig cfg = dcqcn();
  Network net(cfg, star(2), make_cc(cfg, nullptr));
  net.keep_finished_state(true);
  net.add_flows({flow(0, 1, 100'000), flow(0, 1, 100'000, 100 * kUs)});
  net.run(1 * kSec);
  EXPECT_EQ(net.live_flows(), 2u);
  EXPECT_EQ(net.flow(1).snd_una, 100'000u);
}

TEST(FlowTable, RetiredFlowKeepsOnlyWhatLatePacketsAndStaleTimersNeed) {
  FlowTable t;
  FlowInfo a;
  a.size = 5000;
  const uint32_t id0 = t.add(a);
  EXPECT_THROW(t.retire(id0), std::logic_error);  // unfinished
  Flow& s0 = t.create_state(id0);
  s0.epoch = 7, s0.clock_offset = -42;
  t.set_finish(id0, 1000);
  EXPECT_THROW(t.retire(id0), std::logic_error);  // still live
  t.release(id0);
  EXPECT_EQ(t.held_count(), 1u);
  t.retire(id0);
  EXPECT_TRUE(t.retired(id0));
  EXPECT_TRUE(t.finished(id0));
  EXPECT_FALSE(t.live(id0));
  EXPECT_EQ(t.released_epoch(id0), 7u);
  EXPECT_EQ(t.released_clock_offset(id0), -42);
  EXPECT_EQ(t.held_count(), 0u);
  EXPECT_THROW(t.retire(id0), std::logic_error);  // once only
  a.size = 6000;
  const uint32_t id1 = t.add(a);  // reuses the FlowInfo slot id0 gave back
  EXPECT_EQ(t.info(id1).size, 6000u);
  EXPECT_FALSE(t.finished(id1));
  EXPECT_TRUE(t.retired(id0));
  EXPECT_EQ(t.total_bytes(), 11000u);
}

namespace {

struct Collect : FlowSink {
  std::vector<FlowRecord> got;
  void flow_retired(const FlowRecord& r) override { got.push_back(r); }
};

/// `n` one-packet (1000-B) flows from host 0 to host 1 of a star, one every 2 us from time 0.
std::vector<FlowSpec> one_packet_flows(uint32_t n) {
  std::vector<FlowSpec> specs;
  for (uint32_t k = 0; k < n; ++k) specs.push_back(flow(0, 1, 1000, k * 2 * kUs));
  return specs;
}

void expect_same_record(const FlowRecord& a, const FlowRecord& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.src, b.src);
  EXPECT_EQ(a.dst, b.dst);
  EXPECT_EQ(a.sport, b.sport);
  EXPECT_EQ(a.size_bytes, b.size_bytes);
  EXPECT_EQ(a.start, b.start);
  EXPECT_EQ(a.finish, b.finish);
  EXPECT_EQ(a.ideal_fct_ns, b.ideal_fct_ns);
  EXPECT_EQ(a.min_fct_ns, b.min_fct_ns);
  EXPECT_EQ(a.skipped, b.skipped);
  EXPECT_EQ(a.skipped_bytes, b.skipped_bytes);
}

}  // namespace

TEST(FlowTable, RetiredFlowsRecordsGoToTheSinkAsTheyWouldBeRead) {
  // An incast of 4 flows of 200 KB plus a late one: with a sink every finished flow leaves its record
  // there and nothing else; the records equal those of the same run read at the end.
  const SimConfig cfg = dcqcn();
  std::vector<FlowSpec> specs;
  for (uint32_t k = 0; k < 4; ++k) specs.push_back(flow(k, 4, 200'000));
  specs.push_back(flow(0, 4, 100'000, 300 * kUs));
  Network keep(cfg, star(5), make_cc(cfg, nullptr));
  keep.add_flows(specs);
  keep.run(1 * kSec);
  Network net(cfg, star(5), make_cc(cfg, nullptr));
  Collect sink;
  net.retire_flows_to(&sink);
  EXPECT_THROW(net.keep_finished_state(true), std::logic_error);
  net.add_flows(specs);
  net.run(1 * kSec);
  ASSERT_EQ(sink.got.size(), 5u);
  EXPECT_EQ(net.held_flows(), 0u);
  for (const FlowRecord& r : sink.got) {
    ASSERT_TRUE(r.finished());
    expect_same_record(r, keep.record(r.id));
    EXPECT_TRUE(net.flow_retired(r.id));
    EXPECT_TRUE(net.flow_finished(r.id));
  }
  EXPECT_THROW(net.flow_info(0), std::logic_error);
  EXPECT_THROW(net.record(0), std::logic_error);
  EXPECT_EQ(net.flow_bytes(), 900'000u);
}

TEST(ReleasableChunks, AGivenBackChunkReadsDefaultsAndTakesNoMemory) {
  ReleasableChunks<uint32_t, 2> v;  // chunks of 4
  for (uint32_t i = 0; i < 10; ++i) EXPECT_EQ(v.push_back(i + 1), i);
  EXPECT_EQ(v.held_chunks(), 3u);
  v.release_chunk(1);
  v.release_chunk(1);  // twice is once
  EXPECT_TRUE(v.released(1));
  EXPECT_EQ(v.held_chunks(), 2u);
  for (size_t i = 4; i < 8; ++i) EXPECT_EQ(v[i], 0u);
  EXPECT_EQ(v[3], 4u);
  EXPECT_EQ(v[8], 9u);
  v.held(9) = 77;
  EXPECT_EQ(v[9], 77u);
  ReleasableChunks<uint32_t, 2> w;  // another table's given-back chunk is the same shared defaults
  for (uint32_t i = 0; i < 4; ++i) w.push_back(1);
  w.release_chunk(0);
  EXPECT_EQ(w[0], 0u);
  w.append_released_chunk();  // ids 4-7, given back from the start: no memory
  EXPECT_EQ(w.size(), 8u);
  EXPECT_TRUE(w.released(1));
  EXPECT_EQ(w.held_chunks(), 0u);
  EXPECT_EQ(w[6], 0u);
  EXPECT_EQ(w.push_back(5), 8u);
  EXPECT_EQ(w.held_chunks(), 1u);
  EXPECT_EQ(v[5], 0u);
}

TEST(FlowTable, AChunkOfRetiredFlowsIsGivenBackAndItsFlowsStillReadFinished) {
  FlowTable t;
  FlowInfo a;
  a.size = 100;
  const uint32_t n = FlowTable::kEntryChunk + 3;
  for (uint32_t id = 0; id < n; ++id) EXPECT_EQ(t.add(a), id);
  for (uint32_t id = 0; id < n; ++id) {
    Flow& f = t.create_state(id);
    f.epoch = 5, f.clock_offset = 9;
    t.set_finish(id, 1000 + id);
    t.release(id);
    if (id != 7) t.retire(id);
  }
  EXPECT_TRUE(t.all_retired_chunks().empty());  // flow 7 of chunk 0 is not retired
  t.retire(7);
  ASSERT_EQ(t.all_retired_chunks(), std::vector<size_t>{0});  // chunk 1 holds 3 flows only
  EXPECT_TRUE(t.release_entries({0}).empty());                    // not given back: chunk 0 refused
  EXPECT_EQ(t.released_entry_chunks(), 0u);
  EXPECT_EQ(t.released_epoch(3), 5u);
  EXPECT_EQ(t.release_entries({1, 1}), std::vector<size_t>{0});
  EXPECT_EQ(t.released_entry_chunks(), 1u);
  EXPECT_TRUE(t.all_retired_chunks().empty());
  for (uint32_t id : {0u, 7u, uint32_t(FlowTable::kEntryChunk - 1)}) {
    EXPECT_TRUE(t.retired(id));
    EXPECT_TRUE(t.finished(id));
    EXPECT_FALSE(t.live(id));
    EXPECT_THROW(t.released_epoch(id), std::logic_error);  // nothing may refer to it any more
    EXPECT_THROW(t.released_clock_offset(id), std::logic_error);
    EXPECT_THROW(t.retired_local(id), std::logic_error);
  }
  const uint32_t kept = FlowTable::kEntryChunk;  // chunk 1 stays
  EXPECT_EQ(t.released_epoch(kept), 5u);
  EXPECT_EQ(t.released_clock_offset(kept), 9);
  EXPECT_EQ(t.add(a), n);  // ids go on
}

// At a run's end (a distributed rank, before it writes the results) the whole table goes at once: two
// chunks of entries, a flow still holding a FlowInfo and one its QP state; the count and bytes stay.
TEST(FlowTable, ReleasingEverythingKeepsTheCountAndEveryFlowReadsFinished) {
  FlowTable t;
  FlowInfo a;
  a.size = 100;
  const uint32_t n = FlowTable::kEntryChunk + 3;
  for (uint32_t id = 0; id < n; ++id) t.add(a);
  for (uint32_t id = 0; id + 2 < n; ++id) {
    t.create_state(id);
    t.set_finish(id, 1000 + id);
    t.release(id);
    t.retire(id);
  }
  t.create_state(n - 1);  // one flow live, one only added
  ASSERT_EQ(t.held_count(), 2u);
  t.release_all();
  EXPECT_EQ(t.size(), n);
  EXPECT_EQ(t.total_bytes(), uint64_t{100} * n);
  EXPECT_EQ(t.held_count(), 0u);
  EXPECT_EQ(t.live_count(), 0u);
  EXPECT_EQ(t.released_entry_chunks(), 2u);
  for (uint32_t id : {0u, n - 2, n - 1}) {
    EXPECT_TRUE(t.retired(id)) << id;
    EXPECT_TRUE(t.finished(id)) << id;
    EXPECT_FALSE(t.live(id)) << id;
  }
  EXPECT_THROW(t.add(a), std::logic_error);  // its last chunk was given back whole
  EXPECT_EQ(t.size(), n);
}

TEST(FlowTable, EntriesAreGivenBackOnlyOnceNoStaleTimerRefersToTheirFlows) {
  // 16,387 one-packet DCQCN flows, one every 2 us: a finished flow's CC timers stay pending (cancelled
  // by epoch) for a while. Stopped 20 us after the last flow of the first chunk started (it has
  // finished, its timers have not fired), that chunk cannot be given back; at the end it can, and its
  // records are those of a run that keeps every entry.
  const SimConfig cfg = dcqcn();
  const uint32_t n = FlowTable::kEntryChunk + 3;
  const std::vector<FlowSpec> specs = one_packet_flows(n);
  Network net(cfg, star(2), make_cc(cfg, nullptr));
  Collect sink;
  net.retire_flows_to(&sink);
  net.add_flows(specs);
  const Time last_of_chunk = (FlowTable::kEntryChunk - 1) * 2 * kUs;
  net.run(last_of_chunk + 20 * kUs);
  ASSERT_TRUE(net.flow_retired(FlowTable::kEntryChunk - 1));
  net.release_retired_entries();
  EXPECT_EQ(net.released_entry_chunks(), 0u);
  net.run(1 * kSec);
  EXPECT_EQ(sink.got.size(), n);
  // A packet of flow 5 still on its way (a late duplicate) holds the chunk back too.
  PacketPool& pool = net.packet_pool();
  const uint32_t late = pool.alloc();
  pool[late].type = PktType::Data, pool[late].flow = 5;
  net.release_retired_entries();
  EXPECT_EQ(net.released_entry_chunks(), 0u);
  pool.release(late);
  net.release_retired_entries();
  EXPECT_EQ(net.released_entry_chunks(), 1u);
  EXPECT_TRUE(net.flow_finished(0));
  EXPECT_TRUE(net.flow_retired(0));
  Network keep(cfg, star(2), make_cc(cfg, nullptr));
  keep.add_flows(specs);
  keep.run(1 * kSec);
  for (const FlowRecord& r : sink.got) expect_same_record(r, keep.record(r.id));
}

TEST(FlowTable, ARunGivesBackEntriesAndTrackIndexAsItGoes) {
  // Nine chunks of one-packet flows, one every 2 us, with Wormhole's controller: the run gives back
  // chunks on its own (at a tick, once 8 wait), and the controller's track index goes with them.
  const SimConfig cfg = dcqcn();
  const uint32_t n = 9 * FlowTable::kEntryChunk;
  const std::vector<FlowSpec> specs = one_packet_flows(n);
  Network net(cfg, star(2), make_cc(cfg, nullptr));
  Collect sink;
  net.retire_flows_to(&sink);
  net.add_flows(specs);
  WormholeSettings ws;
  ws.enabled = true;
  FastForward ff(net, ws, 1 * kSec);
  net.run(1 * kSec);
  EXPECT_EQ(sink.got.size(), n);
  EXPECT_GE(net.released_entry_chunks(), 1u);
  EXPECT_EQ(ff.track_chunks_held(), 9u - net.released_entry_chunks());
  EXPECT_TRUE(net.flow_finished(0));
}

TEST(FlowTable, ChunksForgottenBeforeTheTrackIndexReachesThemAreNotAllocated) {
  // Flows that never start under the controller (replayed ones; here, due after the run) are given
  // back with their chunks before its track index reaches them: when a later flow's start grows the
  // index over them, they are added given back. (They were allocated: 3 chunks held instead of 1.)
  const SimConfig cfg = dcqcn();
  const uint32_t n = 2 * FlowTable::kEntryChunk;
  std::vector<FlowSpec> specs;
  for (uint32_t k = 0; k < n; ++k) specs.push_back(flow(0, 1, 1000, 10 * kSec));
  specs.push_back(flow(0, 1, 1000));
  Network net(cfg, star(2), make_cc(cfg, nullptr));
  net.add_flows(specs);
  WormholeSettings ws;
  ws.enabled = true;
  FastForward ff(net, ws, 1 * kSec);
  ff.flows_forgotten(0, n);
  net.run(1 * kSec);
  EXPECT_TRUE(net.flow_finished(n));
  EXPECT_EQ(ff.track_chunks_held(), 1u);
}

TEST(ChunkedQueue, AChunkIsFreedOnceEveryValueWasTakenAndIndicesStay) {
  ChunkedQueue<uint32_t, 2> q;  // chunks of 4
  for (uint32_t i = 0; i < 10; ++i) EXPECT_EQ(q.push_back(i * 10), i);
  EXPECT_EQ(q.held_chunks(), 3u);
  for (uint32_t i : {3u, 0u, 2u}) EXPECT_EQ(q.take(i), i * 10);
  EXPECT_EQ(q.held_chunks(), 3u);
  EXPECT_EQ(q.take(1), 10u);  // the first chunk's last value
  EXPECT_EQ(q.held_chunks(), 2u);
  EXPECT_EQ(q.push_back(100), 10u);  // indices are never reused
  EXPECT_EQ(q.take(9), 90u);
}

TEST(ChunkedSlots, OwnIdsAmongOthersAreFoundAndTheirChunkFreedOnceAllTakenAndPassed) {
  ChunkedSlots<uint32_t, 2> s;  // chunks of 4 ids
  for (uint32_t id : {0u, 2u, 3u}) s.set(id, id * 10);  // ids 1, 4, ... belong to another owner
  uint32_t v = 0;
  EXPECT_FALSE(s.contains(1));
  EXPECT_FALSE(s.take(1, v));
  EXPECT_EQ(v, 0u);
  EXPECT_TRUE(s.take(2, v));
  EXPECT_EQ(v, 20u);
  EXPECT_FALSE(s.take(2, v));  // taken once
  EXPECT_TRUE(s.take(0, v));
  EXPECT_TRUE(s.take(3, v));
  EXPECT_EQ(s.held_chunks(), 1u);  // all taken, but ids of the chunk may still come: kept
  s.set(6, 60);
  EXPECT_EQ(s.held_chunks(), 1u);  // a later chunk written: the first is freed
  EXPECT_TRUE(s.contains(6));
  s.set(9, 90);
  EXPECT_EQ(s.held_chunks(), 2u);  // id 6 pending keeps its chunk
  EXPECT_TRUE(s.take(6, v));
  EXPECT_EQ(v, 60u);
  EXPECT_EQ(s.held_chunks(), 1u);
  EXPECT_TRUE(s.take(9, v));
  EXPECT_EQ(v, 90u);
}
