// Every flow's result record of a run, for the summaries and the results file, without holding a
// record per flow in memory: what the network retires while it runs goes to temporary files on disk.
#pragma once
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "wormhole/net/network.h"
#include "wormhole/net/results.h"

namespace wh {

/// The result records of a run's flows, one per flow id 0 .. size() - 1, read back in id order.
///
/// Records handed over during the run (FlowSink::flow_retired, in release order) are appended to
/// unlinked temporary files in a folder given at construction (the outputs' folder), one file per
/// range of 2^bucket_bits ids, 88 B a record; records added with add() (the flows a network still
/// holds at the end, or a distributed run's gathered records) stay in memory. Reading back sorts one
/// range at a time, so it needs about 2^bucket_bits × 88 B (92 MB by default) besides the added records;
/// the first read writes each range back sorted, so later reads only read.
/// Without a folder every record stays in memory.
class FlowResults final : public FlowSink {
 public:
  /// Keeps every record in memory.
  FlowResults() = default;
  /// Keeps these records (any order) in memory.
  explicit FlowResults(std::vector<FlowRecord> records) : added_(std::move(records)) {}
  /// Spills retired records to temporary files in folder `dir` (created by the caller; "" is the
  /// working folder). The files are
  /// unlinked at once, so nothing is left behind, however the run ends. Throws OutputError(dir, …)
  /// when a file cannot be created or written (a full disk).
  explicit FlowResults(const std::string& dir, uint32_t bucket_bits = 20)
      : dir_(dir.empty() ? "." : dir), bucket_bits_(bucket_bits) {}
  ~FlowResults() override;
  FlowResults(const FlowResults&) = delete;
  FlowResults& operator=(const FlowResults&) = delete;

  void flow_retired(const FlowRecord& r) override;
  /// Adds a record kept in memory.
  void add(const FlowRecord& r) { added_.push_back(r); }
  /// Records held: retired plus added.
  size_t size() const { return spilled_ + added_.size(); }
  /// Records written to disk so far.
  uint64_t spilled() const { return spilled_; }

  /// Calls fn(record) for every record in id order. Throws std::logic_error unless the ids are exactly
  /// 0 .. size() - 1, OutputError if a temporary file cannot be read back.
  void for_each(const std::function<void(const FlowRecord&)>& fn) const;

 private:
  struct Bucket {
    std::FILE* f = nullptr;
    std::vector<FlowRecord> pending;  // not written yet
    uint64_t written = 0;             // records in the file
    bool sorted = true;               // the file is in id order (rewritten so by the first read)
  };
  void flush(Bucket& b) const;

  std::string dir_;
  uint32_t bucket_bits_ = 20;
  mutable std::vector<std::unique_ptr<Bucket>> buckets_;  // by id >> bucket_bits_
  uint64_t spilled_ = 0;
  mutable std::vector<FlowRecord> added_;  // sorted by id when read
};

/// Every flow's record of a one-process run: what `results` got while the run went (FlowSink), plus
/// the flows `net` still holds, added to `results`.
void add_held_flows(const Network& net, FlowResults& results);

}  // namespace wh
