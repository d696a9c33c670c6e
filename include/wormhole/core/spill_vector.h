// An append-only table that can keep its full blocks on disk: per-flow rows a run only writes out at
// its end (the workload's flow tags) then cost memory for one block, not for every flow.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace wh {

/// A temporary file of a run's spilled rows (a SpillVector's, FlowResults'; src/core/spill_file.cpp):
/// created in a folder and unlinked at once, so nothing is left behind however the run ends. Errors
/// are OutputError(folder, problem) naming `what` it holds ("the flows' records").
class SpillFile {
 public:
  /// Throws OutputError(dir, …) if the file cannot be created ("" is the working folder).
  SpillFile(const std::string& dir, std::string what);
  ~SpillFile();
  SpillFile(const SpillFile&) = delete;
  SpillFile& operator=(const SpillFile&) = delete;
  /// Writes or reads `bytes` at `offset` whole; OutputError(dir, …) if it cannot (a full disk).
  void write(const void* data, size_t bytes, int64_t offset) const;
  void read(void* data, size_t bytes, int64_t offset) const;

 private:
  std::string dir_, what_;
  int fd_ = -1;
};

/// Sequence of trivially copyable T, appended only, read by index. In memory (in blocks of 2^kBits
/// elements, as ChunkedVector) until spill_to() names a folder; from then on every full block is
/// written to a temporary file there and freed, and reading an element of one loads its block back
/// (one block is cached: read in index order, each block is read once). Index precondition: i < size()
/// (unchecked). A copy holds every element in memory.
template <class T, unsigned kBits = 14>
class SpillVector {
  static_assert(std::is_trivially_copyable_v<T>, "written to disk as bytes");

 public:
  static constexpr size_t kBlock = size_t(1) << kBits;
  SpillVector() = default;
  /// The moved-from vector is empty (in memory).
  SpillVector(SpillVector&& o) noexcept { *this = std::move(o); }
  SpillVector& operator=(SpillVector&& o) noexcept {
    if (this == &o) return *this;
    blocks_ = std::move(o.blocks_), o.blocks_.clear();
    size_ = std::exchange(o.size_, 0);
    file_ = std::move(o.file_), cache_ = std::move(o.cache_);
    cached_ = std::exchange(o.cached_, SIZE_MAX);
    return *this;
  }
  /// Throws OutputError when a block of `o` cannot be read back.
  SpillVector(const SpillVector& o) {
    for (size_t i = 0; i < o.size(); ++i) push_back(o[i]);
  }
  SpillVector& operator=(const SpillVector& o) {
    if (this != &o) *this = SpillVector(o);
    return *this;
  }

  /// Keeps full blocks in a temporary file in folder `dir` from now on (those already full go now);
  /// `what`: what its rows are, for errors (SpillFile). Throws OutputError(dir, …) if the file cannot
  /// be created or written, std::logic_error if it already spills.
  void spill_to(const std::string& dir, const std::string& what) {
    if (file_) throw std::logic_error("SpillVector::spill_to: already spilling");
    file_ = std::make_unique<SpillFile>(dir, what);
    for (size_t k = 0; k < size_ / kBlock; ++k)
      if (blocks_[k]) spill(k);
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  /// Blocks held in memory (not on disk; the read cache not counted).
  size_t blocks_in_memory() const {
    size_t n = 0;
    for (const auto& b : blocks_) n += b != nullptr;
    return n;
  }
  /// Appends `v`. Throws OutputError when a full block cannot be written.
  void push_back(const T& v) {
    const size_t k = size_ >> kBits;
    if (k == blocks_.size()) blocks_.emplace_back(std::make_unique_for_overwrite<T[]>(kBlock));
    blocks_[k][size_ & (kBlock - 1)] = v;
    if ((++size_ & (kBlock - 1)) == 0 && file_) spill(k);
  }
  /// Element `i`. Throws OutputError when its block cannot be read back.
  T operator[](size_t i) const { return block(i >> kBits)[i & (kBlock - 1)]; }

  /// Calls f(element) for every element in index order, each block read once. Throws OutputError when
  /// a block cannot be read back.
  template <class F>
  void for_each(F&& f) const {
    for (size_t k = 0, n = blocks_.size(); k < n; ++k) {
      const T* b = block(k);
      for (size_t i = 0, len = std::min(kBlock, size_ - k * kBlock); i < len; ++i) f(b[i]);
    }
  }

 private:
  // Block k, from memory or read back into the cache.
  const T* block(size_t k) const {
    if (blocks_[k]) return blocks_[k].get();
    if (cached_ != k) {
      if (!cache_) cache_ = std::make_unique_for_overwrite<T[]>(kBlock);
      file_->read(cache_.get(), kBlock * sizeof(T), static_cast<int64_t>(k * kBlock * sizeof(T)));
      cached_ = k;
    }
    return cache_.get();
  }
  void spill(size_t k) {
    file_->write(blocks_[k].get(), kBlock * sizeof(T), static_cast<int64_t>(k * kBlock * sizeof(T)));
    blocks_[k].reset();
  }
  std::vector<std::unique_ptr<T[]>> blocks_;  // null: on disk
  size_t size_ = 0;
  std::unique_ptr<SpillFile> file_;
  mutable std::unique_ptr<T[]> cache_;
  mutable size_t cached_ = SIZE_MAX;
};

}  // namespace wh
