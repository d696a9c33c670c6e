// Every flow's result record of a run, for the summaries and the results file, without holding a
// record per flow in memory: what the network retires while it runs goes to temporary files on disk.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "wormhole/core/spill_vector.h"
#include "wormhole/net/network.h"
#include "wormhole/net/results.h"

namespace wh {

/// Takes ranges of flow records as soon as every flow of the range has retired (FlowResults::stream_to),
/// so that a run's records go to their output while it runs, not through a temporary file.
class RecordRangeSink {
 public:
  virtual ~RecordRangeSink() = default;
  /// `records`: the records of flows first .. first + records.size() - 1, in id order. Ranges come
  /// in the order they complete, not in id order. May throw (e.g. OutputError on a full disk).
  virtual void take_range(uint64_t first, std::span<const FlowRecord> records) = 0;
};

/// The result records of a run's flows, one per flow id 0 .. size() - 1, read back in id order.
///
/// Records handed over during the run (FlowSink::flow_retired, in release order) are appended to one
/// unlinked temporary file in a folder given at construction (the outputs' folder), 80 B a record, in
/// blocks of up to min(2,048, 2^bucket_bits / 64) records of one range of 2^bucket_bits ids; records added
/// with add() (the flows a network still holds at the end) stay in memory. A distributed run streams every
/// rank's records to rank 0 through flow_retired.
/// Reading back sorts one range at a time, so it needs up to 2^bucket_bits × 80 B (10 MB by default; a
/// range holding under half its ids, its records' only) besides the added records; every read sorts each
/// range again (sort_by_placing: linear where the range is dense), so a run reads its records as few times
/// as it can (one process once; a rank of a distributed run five times: its rows, then the percentiles'
/// four passes).
/// Without a folder every record stays in memory.
///
/// Streamed (stream_to): a range's records stay in memory until the range is complete — every one of
/// its 2^bucket_bits flows retired — and then go to the sink and are dropped, never to the temporary
/// file; for_each() no longer reads such a range (for_each_kept() reads the rest). Where the records
/// waiting for their ranges to complete would take more memory than the bound given, the range
/// holding most of them is written to the temporary file instead (and read back as without a sink).
class FlowResults final : public FlowSink {
 public:
  /// Keeps every record in memory.
  FlowResults() = default;
  /// Keeps these records (any order) in memory.
  explicit FlowResults(std::vector<FlowRecord> records) : added_(std::move(records)) {}
  /// Spills retired records to a temporary file in folder `dir` (created by the caller; "" is the
  /// working folder), created now and unlinked at once, so a folder that cannot take it fails before the
  /// run and nothing is left behind however the run ends. Throws OutputError(dir, …) when the file
  /// cannot be created, or later written or read (a full disk).
  explicit FlowResults(const std::string& dir, uint32_t bucket_bits = 17);
  ~FlowResults() override = default;
  FlowResults(const FlowResults&) = delete;
  FlowResults& operator=(const FlowResults&) = delete;

  /// Holds the records of some of the run's flows only (a distributed rank's own): for_each() then
  /// checks that no id comes twice instead of that the ids are exactly 0 .. size() - 1. Call it first.
  void hold_some() { some_ = true; }
  /// Records handed over (flow_retired) not yet written to the file: the memory they take is 80 B each.
  size_t records_in_memory() const;

  void flow_retired(const FlowRecord& r) override;
  /// Adds a record kept in memory.
  void add(const FlowRecord& r) {
    added_.push_back(r);
    added_sorted_ = false;
    ids_end_ = std::max<uint64_t>(ids_end_, r.id + 1);
  }
  /// Room for `n` more added records.
  void reserve_added(size_t n) { added_.reserve(added_.size() + n); }
  /// Records held: retired plus added.
  size_t size() const { return spilled_ + added_.size(); }
  /// Records written to disk so far.
  uint64_t spilled() const { return spilled_; }

  /// Calls fn(record) for every record in id order, or for the ids in [first, end) only (the ranges
  /// outside are not read). Throws std::logic_error unless the ids are exactly 0 .. size() - 1 (with
  /// hold_some(): unless they are distinct; checked over what is read), or if a range to be read was
  /// streamed; OutputError if the temporary file cannot be read back.
  void for_each(const std::function<void(const FlowRecord&)>& fn, uint64_t first = 0,
                uint64_t end = UINT64_MAX) const;
  /// The same over every range not streamed (all of them without a sink), in id order; the ids of
  /// those ranges are checked as for_each() checks them.
  void for_each_kept(const std::function<void(const FlowRecord&)>& fn) const;

  /// Hands every range to `sink` as soon as it is complete (see the class comment), keeping at most
  /// about `memory_bytes` of records waiting for their ranges (80 B a record). Call it before the
  /// first record comes, with a folder given at construction (std::logic_error otherwise).
  void stream_to(RecordRangeSink* sink, size_t memory_bytes = size_t(64) << 20);
  /// Records handed to the sink so far.
  uint64_t streamed() const { return streamed_; }

 private:
  struct Block {
    int64_t offset;  // bytes into the file
    uint32_t count;  // records
  };
  struct Bucket {
    std::vector<FlowRecord> pending;  // not written yet
    std::vector<Block> blocks;        // written, in order
    uint64_t written = 0;             // records in the blocks
    bool sorted = true;               // the blocks hold the records in id order
    bool streamed = false;            // its records went to the sink
  };
  void flush(Bucket& b) const;
  /// Streaming: `b` (range k) is complete, or the waiting records are over the bound.
  void stream_range(Bucket& b, size_t k);
  void spill_largest_waiting();
  void visit(const std::function<void(const FlowRecord&)>& fn, uint64_t first, uint64_t end, bool skip_streamed) const;
  void read(const Bucket& b, FlowRecord* out) const;

  uint32_t bucket_bits_ = 17;
  size_t pending_limit_ = 2048;  // records a range buffers before writing them as a block
  std::unique_ptr<SpillFile> file_;  // null: every record in memory
  mutable int64_t file_end_ = 0;
  mutable std::vector<std::unique_ptr<Bucket>> buckets_;  // by id >> bucket_bits_
  uint64_t spilled_ = 0;
  uint64_t ids_end_ = 0;  // above every id held
  bool some_ = false;     // hold_some()
  RecordRangeSink* sink_ = nullptr;
  size_t waiting_bound_ = 0;  // records
  size_t waiting_ = 0;        // records in memory waiting for their ranges (streaming)
  uint64_t streamed_ = 0;
  mutable std::vector<FlowRecord> added_;  // sorted by id when read
  mutable bool added_sorted_ = true;
};

/// Every flow's record of a one-process run (of a distributed run: of the flows this rank sends): what
/// `results` got while the run went (FlowSink), plus the flows `net` still holds, added to `results`.
void add_held_flows(const Network& net, FlowResults& results);

}  // namespace wh
