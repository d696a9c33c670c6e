// FlowResults (include/wormhole/io/flow_results.h): records spilled to disk in any order come back in
// id order, with the added ones, and their slowdown statistics are those of the records in memory to
// the last bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <random>
#include <tuple>
#include <vector>

#include "wormhole/io/flow_results.h"
#include "wormhole/io/results_writer.h"

#include "../../src/io/record_placing.h"

#include "file_fixtures.h"

using namespace wh;

namespace {

// Flow `id`: 1000 + id bytes, started at id µs, finished after a slowdown that varies with id; every
// seventh flow unfinished.
FlowRecord record(uint32_t id) {
  FlowRecord r;
  r.id = id;
  r.src = id % 13, r.dst = id % 7 + 13;
  r.size_bytes = 1000 + id;
  r.start = Time(id) * kUs;
  r.min_fct_ns = 3000 + id % 101;
  r.ideal_fct_ns = 2900 + id % 97;
  if (id % 7 != 3) r.finish = r.start + Time(r.min_fct_ns * (1 + (id * 2654435761u) % 1000 / 300.0)) * kNs;
  return r;
}

}  // namespace

TEST(FlowResults, SpilledRecordsComeBackInIdOrderWithTheAddedOnes) {
  const auto dir = test::test_dir("flow_results");
  std::vector<uint32_t> ids(10'000);
  for (uint32_t i = 0; i < ids.size(); ++i) ids[i] = i;
  std::shuffle(ids.begin(), ids.end(), std::mt19937(1));
  std::vector<FlowRecord> all;
  for (uint32_t i = 0; i < ids.size(); ++i) all.push_back(record(i));
  FlowResults spilled(dir.string(), 10);  // ranges of 1,024 ids: 10 files
  for (uint32_t id : ids)
    if (id % 5) spilled.flow_retired(record(id));
  for (uint32_t id = 0; id < ids.size(); id += 5) spilled.add(record(id));  // still held at the end
  EXPECT_EQ(spilled.size(), ids.size());
  EXPECT_EQ(spilled.spilled(), 8'000u);
  EXPECT_TRUE(std::filesystem::is_empty(dir));  // the files are unlinked at once
  uint32_t next = 0;
  spilled.for_each([&](const FlowRecord& r) {
    ASSERT_EQ(r.id, next);
    EXPECT_EQ(std::memcmp(&r, &all[next], sizeof r), 0) << next;
    ++next;
  });
  EXPECT_EQ(next, ids.size());
  // The means are summed in id order, as over the vector: equal to the last bit.
  const SlowdownStats a = slowdown_stats(all), b = slowdown_stats(spilled);
  EXPECT_EQ(a.finished, 8'571u);
  EXPECT_EQ(b.finished, a.finished);
  EXPECT_EQ(b.total, a.total);
  EXPECT_EQ(b.mean, a.mean);
  EXPECT_EQ(b.ref_mean, a.ref_mean);
  EXPECT_EQ(b.p50, a.p50);
  EXPECT_EQ(b.p99, a.p99);
  EXPECT_EQ(b.max, a.max);
  EXPECT_EQ(b.fct_p99_us, a.fct_p99_us);
  // results.h5's writer gathers the same statistics in the pass that writes the rows.
  const SlowdownStats w = write_hdf5_results((dir / "results.h5").string(), spilled, {}, RunMetadata{});
  EXPECT_EQ(std::tie(w.finished, w.total), std::tie(a.finished, a.total));
  EXPECT_EQ(std::tie(w.mean, w.p50, w.p99, w.max), std::tie(a.mean, a.p50, a.p99, a.max));
  EXPECT_EQ(std::tie(w.ref_mean, w.ref_p50, w.ref_p99), std::tie(a.ref_mean, a.ref_p50, a.ref_p99));
  EXPECT_EQ(std::tie(w.fct_mean_us, w.fct_p99_us), std::tie(a.fct_mean_us, a.fct_p99_us));
  const std::vector<FlowRecord> tail(all.begin() + 100, all.begin() + 2000);
  const SlowdownStats c = slowdown_stats(tail), d = slowdown_stats(spilled, 100, 2000);
  EXPECT_EQ(d.total, 1900u);
  EXPECT_EQ(d.mean, c.mean);
  EXPECT_EQ(d.p99, c.p99);
}

TEST(FlowResults, AMissingOrRepeatedFlowIsAnError) {
  const auto dir = test::test_dir("flow_results");
  FlowResults gap(dir.string(), 4);
  gap.flow_retired(record(0));
  gap.flow_retired(record(2));
  EXPECT_THROW(gap.for_each([](const FlowRecord&) {}), std::logic_error);
  FlowResults twice;
  twice.add(record(0));
  twice.add(record(0));
  EXPECT_THROW(twice.for_each([](const FlowRecord&) {}), std::logic_error);
  FlowResults twice_spilled(dir.string(), 4);
  for (uint32_t id : {0, 1, 1}) twice_spilled.flow_retired(record(id));
  EXPECT_THROW(twice_spilled.for_each([](const FlowRecord&) {}), std::logic_error);
  FlowResults outside(dir.string(), 4);
  for (uint32_t id : {0, 1, 7}) outside.flow_retired(record(id));  // 3 records: ids 0..2
  EXPECT_THROW(outside.for_each([](const FlowRecord&) {}), std::logic_error);
}

TEST(FlowResults, ARangeSpilledOutOfOrderWithHeldFlowsInItReadsInIdOrder) {
  const auto dir = test::test_dir("flow_results");
  FlowResults r(dir.string(), 2);  // ranges of 4 ids
  for (uint32_t id : {5, 0, 3, 6, 1}) r.flow_retired(record(id));
  for (uint32_t id : {2, 4}) r.add(record(id));  // flows still held when the run ended
  std::vector<uint32_t> ids;
  for (int pass = 0; pass < 2; ++pass) {  // the second read finds the ranges written back sorted
    ids.clear();
    r.for_each([&](const FlowRecord& f) { ids.push_back(f.id); });
    EXPECT_EQ(ids, (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6}));
  }
}

TEST(FlowResults, AFolderThatCannotHoldTheFileFailsBeforeTheRun) {
  EXPECT_THROW(FlowResults("/nonexistent-folder/x", 4), OutputError);
}

TEST(FlowResults, ARangeOfIdsReadsOnlyItsRanges) {
  const auto dir = test::test_dir("flow_results");
  FlowResults r(dir.string(), 4);  // ranges of 16 ids
  for (uint32_t id = 0; id < 100; ++id) r.flow_retired(record(99 - id));
  std::vector<uint32_t> seen;
  r.for_each([&](const FlowRecord& f) { seen.push_back(f.id); }, 20, 37);
  ASSERT_EQ(seen.size(), 17u);
  EXPECT_EQ(seen.front(), 20u);
  EXPECT_EQ(seen.back(), 36u);
}

TEST(FlowResults, SomeFlowsComeBackInIdOrderWithGapsAndNoneTwice) {
  // A distributed rank's own flows: every third id, spilled out of order over several ranges, plus
  // two it still held at the end.
  const auto dir = test::test_dir("flow_results");
  FlowResults r(dir.string(), 2);  // ranges of 4 ids
  r.hold_some();
  for (uint32_t id : {9, 0, 15, 3, 21, 6}) r.flow_retired(record(id));
  for (uint32_t id : {18, 12, 24}) r.add(record(id));  // 24: above every spilled id, as at a run's end
  std::vector<uint32_t> ids;
  r.for_each([&](const FlowRecord& f) { ids.push_back(f.id); });
  EXPECT_EQ(ids, (std::vector<uint32_t>{0, 3, 6, 9, 12, 15, 18, 21, 24}));
  EXPECT_EQ(r.size(), 9u);
  ids.clear();
  r.for_each([&](const FlowRecord& f) { ids.push_back(f.id); }, 5, 16);
  EXPECT_EQ(ids, (std::vector<uint32_t>{6, 9, 12, 15}));

  FlowResults twice(dir.string(), 2);
  twice.hold_some();
  for (uint32_t id : {2, 7, 2}) twice.flow_retired(record(id));
  EXPECT_THROW(twice.for_each([](const FlowRecord&) {}), std::logic_error);
  FlowResults held_and_spilled(dir.string(), 2);
  held_and_spilled.hold_some();
  held_and_spilled.flow_retired(record(5));
  held_and_spilled.add(record(5));
  EXPECT_THROW(held_and_spilled.for_each([](const FlowRecord&) {}), std::logic_error);
}

TEST(FlowResults, ASparseRangeIsSortedWithoutGrowingToTheWholeRange) {
  // A rank of four: every fourth id of a range of 1,024 ids from 2,048, in reverse.
  std::vector<FlowRecord> range;
  for (uint32_t i = 256; i > 0; --i) range.push_back(record(2048 + 4 * (i - 1) + 1));
  range.shrink_to_fit();
  sort_by_placing(range, 2048, 1024);
  ASSERT_EQ(range.size(), 256u);
  EXPECT_EQ(range.capacity(), 256u);  // placing would have grown it to 1,024 records
  for (uint32_t i = 0; i < 256; ++i) ASSERT_EQ(range[i].id, 2048 + 4 * i + 1) << i;
  // A dense range is placed: the same order.
  std::vector<FlowRecord> dense;
  for (uint32_t i = 0; i < 1000; ++i) dense.push_back(record(2048 + 1023 - i));
  sort_by_placing(dense, 2048, 1024);
  ASSERT_EQ(dense.size(), 1000u);
  for (uint32_t i = 0; i < 1000; ++i) ASSERT_EQ(dense[i].id, 2048 + 24 + i) << i;
  // Errors on either path: an id given twice, an id outside the range.
  for (const size_t n : {10, 900}) {
    std::vector<FlowRecord> twice, outside;
    for (uint32_t i = 0; i < n; ++i) twice.push_back(record(2048 + i)), outside.push_back(record(2048 + i));
    twice.back() = record(2048);
    outside.back() = record(2048 + 1024);
    EXPECT_THROW(sort_by_placing(twice, 2048, 1024), std::logic_error) << n;
    EXPECT_THROW(sort_by_placing(outside, 2048, 1024), std::logic_error) << n;
  }
}

TEST(FlowResults, RecordsOfSmallRangesAreWrittenInSmallerBlocks) {
  // Ranges of 2^8 ids buffer 4 records (2^8 / 64) before writing a block: 100 records spread over
  // 25 ranges, 4 each, all written out, none held in memory; read back in order all the same.
  const auto dir = test::test_dir("flow_results");
  FlowResults r(dir.string(), 8);
  r.hold_some();
  for (uint32_t k = 0; k < 4; ++k)
    for (uint32_t range = 0; range < 25; ++range) {
      r.flow_retired(record(range * 256 + k));
      EXPECT_EQ(r.records_in_memory(), k < 3 ? range + 1 + 25 * k : 3 * (24 - range)) << k << " " << range;
    }
  std::vector<uint32_t> ids;
  r.for_each([&](const FlowRecord& f) { ids.push_back(f.id); });
  ASSERT_EQ(ids.size(), 100u);
  EXPECT_EQ(ids[5], 256u + 1);
}

namespace {

// Keeps what a streamed FlowResults hands over: each range's first id and its records.
struct RangeLog final : RecordRangeSink {
  std::vector<std::pair<uint64_t, std::vector<FlowRecord>>> ranges;
  void take_range(uint64_t first, std::span<const FlowRecord> records) override {
    ranges.emplace_back(first, std::vector<FlowRecord>(records.begin(), records.end()));
  }
};

}  // namespace

TEST(FlowResults, AStreamedRangeGoesToTheSinkWhenAllItsFlowsRetiredAndTheRestIsKept) {
  const auto dir = test::test_dir("flow_results");
  FlowResults r(dir.string(), 4);  // ranges of 16 ids; 100 flows: 6 full ranges and 96..99
  RangeLog sink;
  r.stream_to(&sink);
  std::vector<uint32_t> ids;
  for (uint32_t id = 0; id < 100; ++id)
    if (id != 20 && id != 50) ids.push_back(id);  // held at the end: ranges 16.. and 48.. stay incomplete
  std::shuffle(ids.begin(), ids.end(), std::mt19937(3));
  for (uint32_t id : ids) r.flow_retired(record(id));
  r.add(record(20)), r.add(record(50));
  EXPECT_EQ(r.size(), 100u);
  EXPECT_EQ(r.streamed(), 64u);
  std::vector<uint64_t> firsts;
  for (const auto& [first, records] : sink.ranges) {
    firsts.push_back(first);
    ASSERT_EQ(records.size(), 16u);
    for (uint32_t i = 0; i < 16; ++i) {
      const FlowRecord want = record(uint32_t(first) + i);
      EXPECT_EQ(std::memcmp(&records[i], &want, sizeof want), 0) << first + i;
    }
  }
  std::sort(firsts.begin(), firsts.end());
  EXPECT_EQ(firsts, (std::vector<uint64_t>{0, 32, 64, 80}));
  std::vector<uint32_t> kept;
  r.for_each_kept([&](const FlowRecord& f) { kept.push_back(f.id); });
  std::vector<uint32_t> expected;
  for (uint32_t id = 16; id < 32; ++id) expected.push_back(id);
  for (uint32_t id = 48; id < 64; ++id) expected.push_back(id);
  for (uint32_t id = 96; id < 100; ++id) expected.push_back(id);
  EXPECT_EQ(kept, expected);
  EXPECT_THROW(r.for_each([](const FlowRecord&) {}), std::logic_error);  // ranges 0, 32, ... are gone
  std::vector<uint32_t> some;
  r.for_each([&](const FlowRecord& f) { some.push_back(f.id); }, 48, 52);  // a kept range reads as before
  EXPECT_EQ(some, (std::vector<uint32_t>{48, 49, 50, 51}));
  EXPECT_THROW(r.flow_retired(record(5)), std::logic_error);  // a flow of a streamed range again
}

TEST(FlowResults, RecordsWaitingOverTheBoundGoToTheFileAndTheirRangeIsNotStreamed) {
  const auto dir = test::test_dir("flow_results");
  FlowResults r(dir.string(), 4);  // ranges of 16 ids
  RangeLog sink;
  r.stream_to(&sink, 20 * sizeof(FlowRecord));
  for (uint32_t id = 0; id < 15; ++id) r.flow_retired(record(id));   // range 0 waits for flow 15
  for (uint32_t id = 16; id < 23; ++id) r.flow_retired(record(id));  // 22 waiting: range 0 is written out
  for (uint32_t id = 15; id < 32; id += (id == 15 ? 8 : 1)) r.flow_retired(record(id));
  ASSERT_EQ(sink.ranges.size(), 1u);  // range 16.. only: range 0 completed on disk
  EXPECT_EQ(sink.ranges[0].first, 16u);
  std::vector<uint32_t> kept;
  r.for_each_kept([&](const FlowRecord& f) { kept.push_back(f.id); });
  ASSERT_EQ(kept.size(), 16u);
  for (uint32_t id = 0; id < 16; ++id) EXPECT_EQ(kept[id], id);
  EXPECT_THROW(FlowResults().stream_to(&sink), std::logic_error);  // nowhere to put waiting ranges
}
