// A vector that grows in fixed chunks: no element is ever copied or moved by growth, so references
// stay valid, and a table of millions of entries never needs twice its size while it grows.
#pragma once
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cassert>
#include <memory>
#include <utility>
#include <vector>

namespace wh {

/// Indexable sequence of default-constructible T in chunks of 2^kBits elements (allocated as needed,
/// value-initialised). Growth allocates one chunk; truncate() frees whole chunks past the new end.
/// Index precondition: i < size() (unchecked).
template <class T, unsigned kBits = 12>
class ChunkedVector {
 public:
  static constexpr size_t kChunk = size_t(1) << kBits;
  ChunkedVector() = default;
  ChunkedVector(ChunkedVector&&) noexcept = default;
  ChunkedVector& operator=(ChunkedVector&&) noexcept = default;
  /// A deep copy (of the used elements' chunks).
  ChunkedVector(const ChunkedVector& o) : size_(o.size_) {
    for (const auto& c : o.chunks_) {
      chunks_.push_back(std::make_unique<T[]>(kChunk));
      std::copy(c.get(), c.get() + kChunk, chunks_.back().get());
    }
  }
  ChunkedVector& operator=(const ChunkedVector& o) {
    if (this != &o) *this = ChunkedVector(o);
    return *this;
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return chunks_[i >> kBits][i & (kChunk - 1)]; }
  const T& operator[](size_t i) const { return chunks_[i >> kBits][i & (kChunk - 1)]; }
  /// Appends `v`; returns its index.
  size_t push_back(const T& v) {
    end_slot() = v;
    return size_++;
  }
  /// Appends `v`, moved; returns its index.
  size_t push_back(T&& v) {
    end_slot() = std::move(v);
    return size_++;
  }
  /// Keeps the first `n` elements (n <= size()); chunks past them are freed.
  void truncate(size_t n) {
    size_ = n;  // entries past it are overwritten by push_back before they are read again
    chunks_.resize((n + kChunk - 1) >> kBits);
  }
  /// Bytes held by the chunks (allocated, not only used).
  size_t capacity_bytes() const { return chunks_.size() * kChunk * sizeof(T); }

 private:
  T& end_slot() {  // the slot at size_, its chunk allocated if new
    if ((size_ >> kBits) == chunks_.size()) chunks_.push_back(std::make_unique<T[]>(kChunk));
    return chunks_[size_ >> kBits][size_ & (kChunk - 1)];
  }

  std::vector<std::unique_ptr<T[]>> chunks_;
  size_t size_ = 0;
};

/// Indexable sequence in chunks of 2^kBits, like ChunkedVector, whose whole chunks can be given back
/// (release_chunk): a given-back chunk reads as default-constructed values, from one chunk shared by
/// every table of this type, and is never written again (its ids are gone for good). So a table
/// indexed by ids that are never reused (flow ids) keeps memory only for the chunks still in use,
/// while a read stays two loads: its chunk's pointer, then the value. Index precondition: i < size()
/// (unchecked).
template <class T, unsigned kBits = 12>
class ReleasableChunks {
 public:
  static constexpr size_t kChunk = size_t(1) << kBits;
  size_t size() const { return size_; }
  /// Value `i`, a default T if its chunk was given back.
  const T& operator[](size_t i) const { return chunks_[i >> kBits][i & (kChunk - 1)]; }
  /// Value `i` to write, whose chunk is held (precondition, asserted in debug builds).
  T& held(size_t i) {
    assert(chunks_[i >> kBits] != shared_);
    return chunks_[i >> kBits][i & (kChunk - 1)];
  }
  /// Appends `v`; returns its index. Precondition: the last chunk, if it has room, was not given back
  /// (only whole chunks are given back; an owner that gives back a partly filled last chunk, as
  /// FlowTable::release_all does, appends nothing after it).
  size_t push_back(const T& v) {
    if ((size_ >> kBits) == chunks_.size()) {
      owned_.push_back(std::make_unique<T[]>(kChunk));
      chunks_.push_back(owned_.back().get());
    }
    held(size_) = v;
    return size_++;
  }
  /// Appends a whole chunk of ids as given back (reading as default values) without allocating it.
  /// Precondition: size() is a multiple of the chunk size.
  void append_released_chunk() {
    assert((size_ & (kChunk - 1)) == 0);
    owned_.emplace_back();
    chunks_.push_back(shared_);
    size_ += kChunk;
  }
  /// Gives chunk `k` (ids k·2^kBits …) back: its memory is freed and its ids read as default values.
  void release_chunk(size_t k) {
    if (chunks_[k] == shared_) return;
    owned_[k].reset();
    chunks_[k] = shared_;
  }
  /// Whether chunk `k` was given back.
  bool released(size_t k) const { return chunks_[k] == shared_; }
  /// Keeps the first `n` elements (n <= size()); chunks past them are freed.
  void truncate(size_t n) {
    size_ = n;  // entries past it are overwritten by push_back before they are read again
    chunks_.resize((n + kChunk - 1) >> kBits);
    owned_.resize(chunks_.size());
  }
  /// Chunks allocated now (not given back).
  size_t held_chunks() const {
    return static_cast<size_t>(std::count_if(owned_.begin(), owned_.end(), [](const auto& c) { return c != nullptr; }));
  }

 private:
  static T* shared() {
    static const std::unique_ptr<T[]> chunk = std::make_unique<T[]>(kChunk);
    return chunk.get();  // never written: held() asserts
  }
  T* shared_ = shared();                    // read per write: a member, not the static's guard
  std::vector<T*> chunks_;                  // owned_[k].get(), or shared_ once given back
  std::vector<std::unique_ptr<T[]>> owned_;
  size_t size_ = 0;
};

/// Values appended in order and each taken once by its index (what an event carries): a chunk of 2^kBits
/// is freed once all its values were taken, so memory follows what is pending while indices are never
/// reused (they stay the same however the takes interleave with the appends).
/// Precondition of take(i): i came from push_back and was not taken since (unchecked).
template <class T, unsigned kBits = 12>
class ChunkedQueue {
 public:
  static constexpr size_t kChunk = size_t(1) << kBits;
  /// Appends `v`; returns its index.
  size_t push_back(const T& v) {
    if ((size_ >> kBits) == chunks_.size()) chunks_.push_back({std::make_unique<T[]>(kChunk), 0});
    chunks_[size_ >> kBits].values[size_ & (kChunk - 1)] = v;
    return size_++;
  }
  /// The value at `i`; its chunk is freed when it was the chunk's last one left.
  T take(size_t i) {
    Chunk& c = chunks_[i >> kBits];
    const T v = c.values[i & (kChunk - 1)];
    if (++c.taken == kChunk) c.values.reset();
    return v;
  }
  /// Chunks holding values now.
  size_t held_chunks() const {
    return static_cast<size_t>(std::count_if(chunks_.begin(), chunks_.end(), [](const Chunk& c) { return c.values != nullptr; }));
  }

 private:
  struct Chunk {
    std::unique_ptr<T[]> values;
    size_t taken;
  };
  std::vector<Chunk> chunks_;
  size_t size_ = 0;
};

/// A map from ids (flow ids) to values, each id set at most once and taken at most once: an array in
/// chunks of 2^kBits ids, so a lookup is an index, not a hash. A chunk is freed once every value set
/// in it was taken and a later chunk was written to; with ids handed out in increasing order (the
/// network's flow ids) its ids are then all given, so memory follows the values pending, even when
/// the ids are shared with other owners (other jobs' flows), whose slots are never set. (A set into a
/// freed chunk allocates it again: correct, only later freed.)
template <class T, unsigned kBits = 12>
class ChunkedSlots {
 public:
  static constexpr size_t kChunk = size_t(1) << kBits;
  /// Sets id `i`'s value. Precondition: `i` holds no value (asserted in debug builds).
  void set(size_t i, const T& v) {
    const size_t k = i >> kBits;
    if (k >= chunks_.size()) chunks_.resize(k + 1);
    Chunk& c = chunks_[k];
    if (!c.values) c.values = std::make_unique<Slot[]>(kChunk);
    assert(!c.values[i & (kChunk - 1)].held);
    c.values[i & (kChunk - 1)] = {v, true};
    ++c.set;
    if (k > last_) {
      for (size_t j = last_; j < k; ++j) maybe_free(j);
      last_ = k;
    }
  }
  /// Whether id `i` holds a value (set and not taken).
  bool contains(size_t i) const {
    const size_t k = i >> kBits;
    return k < chunks_.size() && chunks_[k].values && chunks_[k].values[i & (kChunk - 1)].held;
  }
  /// Takes id `i`'s value into `out`; false (and `out` untouched) if it holds none.
  bool take(size_t i, T& out) {
    if (!contains(i)) return false;
    const size_t k = i >> kBits;
    Chunk& c = chunks_[k];
    Slot& s = c.values[i & (kChunk - 1)];
    out = s.value;
    s.held = false;
    ++c.taken;
    if (k < last_) maybe_free(k);
    return true;
  }
  /// Chunks holding values now.
  size_t held_chunks() const {
    return static_cast<size_t>(std::count_if(chunks_.begin(), chunks_.end(), [](const Chunk& c) { return c.values != nullptr; }));
  }

 private:
  struct Slot {
    T value{};
    bool held = false;
  };
  struct Chunk {
    std::unique_ptr<Slot[]> values;
    size_t set = 0, taken = 0;
  };
  void maybe_free(size_t k) {
    if (chunks_[k].values && chunks_[k].taken == chunks_[k].set) chunks_[k].values.reset();
  }
  std::vector<Chunk> chunks_;
  size_t last_ = 0;  // the highest chunk written to
};

}  // namespace wh
