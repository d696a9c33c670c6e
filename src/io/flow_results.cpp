// FlowResults (include/wormhole/io/flow_results.h): retired flows' records on disk, read back in id order.
#include "wormhole/io/flow_results.h"

#include <algorithm>
#include <stdexcept>

#include "record_placing.h"

namespace wh {

namespace {

// Records a range of 2^17 ids buffers before it writes them as one block (160 KB): few writes. A written
// block's buffer is freed, so ranges whose flows finished long ago (a run of 100 M flows has 763) hold only
// the few records that still trickle in. Smaller ranges buffer proportionally fewer: records arriving
// spread over many ranges (a rank of a distributed run sending a smaller share runs ahead of the others
// in id order) then hold as much as over the larger ranges.
constexpr size_t kPending = 2048;
size_t pending_limit(uint32_t bucket_bits) { return std::clamp<size_t>((size_t(1) << bucket_bits) / 64, 1, kPending); }

}  // namespace

// Placing is linear, where a sort of a million records was a visible share of writing the results.
void sort_by_placing(std::vector<FlowRecord>& range, uint64_t lo, uint64_t slots) {
  // An empty slot's id: no record of this range has it (ids stay below 2^32 - 1, the flow table's limit).
  constexpr auto kEmpty = decltype(FlowRecord::id)(~uint64_t(0));
  const auto problem = [&](const FlowRecord& r, const char* what) {
    return std::logic_error("flow results: flow " + std::to_string(r.id) + what + std::to_string(slots) + " flows from flow " +
                            std::to_string(lo));
  };
  if (range.size() > slots)
    throw std::logic_error("flow results: " + std::to_string(range.size()) + " records for the " + std::to_string(slots) +
                           " flows from flow " + std::to_string(lo));
  const size_t records = range.size();
  if (records < slots / 2) {
    std::sort(range.begin(), range.end(), [](const FlowRecord& a, const FlowRecord& b) { return a.id < b.id; });
    for (size_t i = 0; i < records; ++i) {
      if (range[i].id < lo || range[i].id - lo >= slots) throw problem(range[i], " is outside its range of ");
      if (i > 0 && range[i].id == range[i - 1].id) throw problem(range[i], " is given twice in its range of ");
    }
    return;
  }
  range.resize(slots);
  for (size_t i = records; i < slots; ++i) range[i].id = kEmpty;
  for (size_t i = 0; i < range.size(); ++i)
    while (range[i].id != kEmpty && range[i].id - lo != i) {
      const FlowRecord& r = range[i];
      if (r.id < lo || r.id - lo >= slots) throw problem(r, " is outside its range of ");
      if (range[r.id - lo].id == r.id) throw problem(r, " is given twice in its range of ");
      std::swap(range[i], range[r.id - lo]);
    }
  std::erase_if(range, [](const FlowRecord& r) { return r.id == kEmpty; });
}

FlowResults::FlowResults(const std::string& dir, uint32_t bucket_bits)
    : bucket_bits_(bucket_bits),
      pending_limit_(pending_limit(bucket_bits)),
      file_(std::make_unique<SpillFile>(dir, "the flows' records")) {}

void FlowResults::flush(Bucket& b) const {
  if (b.pending.empty()) return;
  const Block k{file_end_, static_cast<uint32_t>(b.pending.size())};
  file_->write(b.pending.data(), k.count * sizeof(FlowRecord), k.offset);
  b.blocks.push_back(k);
  file_end_ += static_cast<int64_t>(k.count * sizeof(FlowRecord));
  b.written += b.pending.size();
  b.sorted = b.written <= 1;
  std::vector<FlowRecord>().swap(b.pending);
}

void FlowResults::read(const Bucket& b, FlowRecord* out) const {
  for (const Block& k : b.blocks) {
    file_->read(out, k.count * sizeof(FlowRecord), k.offset);
    out += k.count;
  }
}

void FlowResults::flow_retired(const FlowRecord& r) {
  if (!file_) return add(r);
  const size_t k = r.id >> bucket_bits_;
  if (k >= buckets_.size()) buckets_.resize(k + 1);
  if (!buckets_[k]) buckets_[k] = std::make_unique<Bucket>();
  Bucket& b = *buckets_[k];
  if (b.streamed)
    throw std::logic_error("flow results: flow " + std::to_string(r.id) + " retired after its range went to the results file");
  b.pending.push_back(r);
  ++spilled_;
  ids_end_ = std::max<uint64_t>(ids_end_, r.id + 1);
  if (sink_ && b.written == 0) {  // a range waiting in memory to be complete
    // Room for the whole range at once (address space; pages are touched as records come): no
    // copies as it grows to 2^bucket_bits records.
    if (b.pending.size() == 1) b.pending.reserve(size_t(1) << bucket_bits_);
    ++waiting_;
    if (b.pending.size() == size_t(1) << bucket_bits_) stream_range(b, k);
    else if (waiting_ > waiting_bound_) spill_largest_waiting();
    return;
  }
  if (b.pending.size() >= pending_limit_) flush(b);
}

void FlowResults::stream_to(RecordRangeSink* sink, size_t memory_bytes) {
  if (!file_ || spilled_ > 0 || !added_.empty())
    throw std::logic_error("flow results: streaming needs a folder and must be set before the first record");
  sink_ = sink;
  waiting_bound_ = std::max<size_t>(1, memory_bytes / sizeof(FlowRecord));
}

void FlowResults::stream_range(Bucket& b, size_t k) {
  const uint64_t lo = uint64_t(k) << bucket_bits_, span = uint64_t(1) << bucket_bits_;
  waiting_ -= b.pending.size();
  sort_by_placing(b.pending, lo, span);
  sink_->take_range(lo, b.pending);
  streamed_ += span;
  std::vector<FlowRecord>().swap(b.pending);
  b.streamed = true;
}

size_t FlowResults::records_in_memory() const {
  size_t n = 0;
  for (const auto& b : buckets_)
    if (b) n += b->pending.size();
  return n;
}

void FlowResults::spill_largest_waiting() {
  // The range holding most of the waiting records goes to the temporary file: a range that a few
  // long flows keep open must not keep the rest of its records in memory.
  Bucket* largest = nullptr;
  for (const auto& b : buckets_)
    if (b && !b->streamed && b->written == 0 && (!largest || b->pending.size() > largest->pending.size())) largest = b.get();
  if (!largest) return;
  waiting_ -= largest->pending.size();
  flush(*largest);
}

void FlowResults::for_each(const std::function<void(const FlowRecord&)>& fn, uint64_t first, uint64_t end) const {
  visit(fn, first, end, false);
}

void FlowResults::for_each_kept(const std::function<void(const FlowRecord&)>& fn) const { visit(fn, 0, UINT64_MAX, true); }

void FlowResults::visit(const std::function<void(const FlowRecord&)>& fn, uint64_t first, uint64_t end,
                        bool skip_streamed) const {
  const auto by_id = [](const FlowRecord& a, const FlowRecord& b) { return a.id < b.id; };
  if (!added_sorted_) std::sort(added_.begin(), added_.end(), by_id), added_sorted_ = true;
  const uint64_t n = some_ ? ids_end_ : size();  // ids are below n
  end = std::min(end, n);
  const uint64_t span = uint64_t(1) << bucket_bits_;
  std::vector<FlowRecord> range;
  for (uint64_t lo = first & ~(span - 1); lo < end; lo += span) {
    const uint64_t hi = lo + span;
    range.clear();
    const size_t k = lo >> bucket_bits_;
    if (k < buckets_.size() && buckets_[k] && buckets_[k]->streamed) {
      if (!skip_streamed)
        throw std::logic_error("flow results: the records of flows " + std::to_string(lo) + " to " + std::to_string(hi - 1) +
                               " went to the results file as the run went: they are not kept");
      continue;
    }
    if (k < buckets_.size() && buckets_[k] && buckets_[k]->written == 0) {
      // Never written out (a streamed run's range still waiting): read from memory.
      range = buckets_[k]->pending;
      sort_by_placing(range, lo, std::min(hi, n) - lo);
    } else if (k < buckets_.size() && buckets_[k]) {
      Bucket& b = *buckets_[k];
      flush(b);
      range.resize(b.written);
      read(b, range.data());
      // Sorted in memory each time, not written back: one process reads its records once (the rows and
      // statistics of results.h5 in one pass), a rank of a distributed run five times (its rows, then
      // the four passes of the percentiles' selection), and writing them again cost more than placing them.
      if (!b.sorted) sort_by_placing(range, lo, std::min(hi, n) - lo);
    }
    const size_t spilled = range.size();
    auto a = std::lower_bound(added_.begin(), added_.end(), lo, [](const FlowRecord& r, uint64_t id) { return r.id < id; });
    for (; a != added_.end() && a->id < hi; ++a) range.push_back(*a);
    std::inplace_merge(range.begin(), range.begin() + static_cast<long>(spilled), range.end(), by_id);
    // Every id of the range below n comes once (with hold_some(), at most once): the ranges are
    // checked whole, whatever [first, end) is.
    uint64_t next = lo;
    for (const FlowRecord& r : range) {
      if (r.id != next && !(some_ && r.id > next))
        throw std::logic_error("flow results: expected flow " + std::to_string(next) + (some_ ? " or later" : "") +
                               ", found flow " + std::to_string(r.id));
      if (r.id >= first && r.id < end) fn(r);
      next = r.id + 1;
    }
    if (!some_ && next != std::min(hi, n))
      throw std::logic_error("flow results: " + std::to_string(n) + " records, ids of one range end at " + std::to_string(next));
  }
}

void add_held_flows(const Network& net, FlowResults& results) {
  if (!net.distributed()) results.reserve_added(net.held_flows());  // a rank holds other ranks' flows too
  for (uint32_t id = 0; id < net.flow_count(); ++id)
    if (!net.flow_retired(id) && net.owns_node(net.flow_info(id).src)) results.add(net.record(id));
}

}  // namespace wh
