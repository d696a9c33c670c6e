// FlowResults (include/wormhole/io/flow_results.h): retired flows' records on disk, read back in id order.
#include "wormhole/io/flow_results.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "wormhole/core/input_error.h"

namespace wh {

namespace {

// Records a bucket buffers before it writes them (180 KB): few writes, and little memory per bucket
// (a run of 100 M flows has 96 buckets).
constexpr size_t kPending = 2048;

std::string system_error() { return std::strerror(errno ? errno : EIO); }

}  // namespace

FlowResults::~FlowResults() {
  for (auto& b : buckets_)
    if (b && b->f) std::fclose(b->f);
}

void FlowResults::flush(Bucket& b) const {
  if (b.pending.empty()) return;
  if (!b.f) {
    std::string name = (std::filesystem::path(dir_) / ".wormhole-flows-XXXXXX").string();
    const int fd = ::mkstemp(name.data());
    if (fd < 0) throw OutputError(dir_, "cannot create a temporary file for the flows' records: " + system_error());
    ::unlink(name.c_str());  // gone with the process, however it ends
    b.f = ::fdopen(fd, "w+b");
    if (!b.f) {
      ::close(fd);
      throw OutputError(dir_, "cannot open a temporary file for the flows' records: " + system_error());
    }
  }
  if (std::fseek(b.f, 0, SEEK_END) != 0 ||
      std::fwrite(b.pending.data(), sizeof(FlowRecord), b.pending.size(), b.f) != b.pending.size())
    throw OutputError(dir_, "cannot write the flows' records to a temporary file: " + system_error());
  b.written += b.pending.size();
  b.pending.clear();
  b.sorted = b.written <= 1;
}

void FlowResults::flow_retired(const FlowRecord& r) {
  if (dir_.empty()) return add(r);
  const size_t k = r.id >> bucket_bits_;
  if (k >= buckets_.size()) buckets_.resize(k + 1);
  if (!buckets_[k]) buckets_[k] = std::make_unique<Bucket>();
  Bucket& b = *buckets_[k];
  b.pending.push_back(r);
  ++spilled_;
  if (b.pending.size() >= kPending) flush(b);
}

void FlowResults::for_each(const std::function<void(const FlowRecord&)>& fn) const {
  const auto by_id = [](const FlowRecord& a, const FlowRecord& b) { return a.id < b.id; };
  std::sort(added_.begin(), added_.end(), by_id);
  const uint64_t n = size();
  uint64_t next = 0;  // the id the next record must have
  size_t a = 0;       // next added record
  std::vector<FlowRecord> range;
  const uint64_t span = uint64_t(1) << bucket_bits_;
  for (uint64_t first = 0; first < n; first += span) {
    range.clear();
    const size_t k = first >> bucket_bits_;
    if (k < buckets_.size() && buckets_[k]) {
      Bucket& b = *buckets_[k];
      flush(b);
      range.resize(b.written);
      if (std::fseek(b.f, 0, SEEK_SET) != 0 || std::fread(range.data(), sizeof(FlowRecord), range.size(), b.f) != range.size())
        throw OutputError(dir_, "cannot read the flows' records back from a temporary file: " + system_error());
      if (!b.sorted) {
        std::sort(range.begin(), range.end(), by_id);
        if (std::fseek(b.f, 0, SEEK_SET) != 0 || std::fwrite(range.data(), sizeof(FlowRecord), range.size(), b.f) != range.size())
          throw OutputError(dir_, "cannot write the flows' records to a temporary file: " + system_error());
        b.sorted = true;
      }
    }
    const uint64_t end = first + span;
    const size_t spilled = range.size();
    for (; a < added_.size() && added_[a].id < end; ++a) range.push_back(added_[a]);
    std::inplace_merge(range.begin(), range.begin() + static_cast<long>(spilled), range.end(), by_id);
    for (const FlowRecord& r : range) {
      if (r.id != next)
        throw std::logic_error("flow results: expected flow " + std::to_string(next) + ", found flow " + std::to_string(r.id));
      fn(r);
      ++next;
    }
  }
  if (next != n) throw std::logic_error("flow results: " + std::to_string(n) + " records, ids up to " + std::to_string(next));
  range = {};
}

void add_held_flows(const Network& net, FlowResults& results) {
  for (uint32_t id = 0; id < net.flow_count(); ++id)
    if (!net.flow_retired(id)) results.add(net.record(id));
}

}  // namespace wh
