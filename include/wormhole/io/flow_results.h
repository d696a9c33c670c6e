// Every flow's result record of a run, for the summaries and the results file, without holding a
// record per flow in memory: what the network retires while it runs goes to temporary files on disk.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "wormhole/core/spill_vector.h"
#include "wormhole/net/network.h"
#include "wormhole/net/results.h"

namespace wh {

/// The result records of a run's flows, one per flow id 0 .. size() - 1, read back in id order.
///
/// Records handed over during the run (FlowSink::flow_retired, in release order) are appended to one
/// unlinked temporary file in a folder given at construction (the outputs' folder), 80 B a record, in
/// blocks of up to 2,048 records of one range of 2^bucket_bits ids; records added with add() (the
/// flows a network still holds at the end) stay in memory. A distributed run streams every rank's records
/// to rank 0 through flow_retired.
/// Reading back sorts one range at a time, so it needs about 2^bucket_bits × 80 B (10 MB by default)
/// besides the added records; every read sorts each range again (linear: each record is moved to its
/// id's slot), so a run reads its records once if it can.
/// Without a folder every record stays in memory.
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
  /// hold_some(): unless they are distinct; checked over what is read), OutputError if the temporary
  /// file cannot be read back.
  void for_each(const std::function<void(const FlowRecord&)>& fn, uint64_t first = 0,
                uint64_t end = UINT64_MAX) const;

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
  };
  void flush(Bucket& b) const;
  void read(const Bucket& b, FlowRecord* out) const;

  uint32_t bucket_bits_ = 17;
  std::unique_ptr<SpillFile> file_;  // null: every record in memory
  mutable int64_t file_end_ = 0;
  mutable std::vector<std::unique_ptr<Bucket>> buckets_;  // by id >> bucket_bits_
  uint64_t spilled_ = 0;
  uint64_t ids_end_ = 0;  // above every id held
  bool some_ = false;     // hold_some()
  mutable std::vector<FlowRecord> added_;  // sorted by id when read
  mutable bool added_sorted_ = true;
};

/// Every flow's record of a one-process run (of a distributed run: of the flows this rank sends): what
/// `results` got while the run went (FlowSink), plus the flows `net` still holds, added to `results`.
void add_held_flows(const Network& net, FlowResults& results);

}  // namespace wh
