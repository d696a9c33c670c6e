// The future event list: a calendar of short time buckets in front of two small 4-ary heaps.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "wormhole/core/event.h"

namespace wh {

/// An implicit 4-ary min-heap of events ordered by (time, key): shallower than a binary heap.
class EventHeap {
 public:
  void push(const Event& e);
  /// Removes and returns the earliest event. Precondition: !empty().
  Event pop();
  const Event& top() const { return heap_[0]; }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  void clear() { heap_.clear(); }
  /// Calls f(const Event&) for every event held, in no particular order.
  template <class F>
  void for_each(F&& f) const {
    for (const Event& e : heap_) f(e);
  }

 private:
  std::vector<Event> heap_;
};

/// The kernel's event queue. Pop order is exactly (time, key), as one heap would give, but the
/// work per event does not grow with the number of pending events: events within the next
/// kBuckets × 2^kBucketShift ps (67 µs) go into unsorted buckets of 1.024 ns; the bucket being drained
/// is sorted once, and later events wait in a heap until the window reaches them. Times must not go backwards: push(e) requires e.time >= the time of
/// the last event popped.
class EventQueue {
 public:
  /// Bucket width 2^10 ps = 1.024 ns: narrower than an ACK's serialization at 400 Gb/s (1.2 ns), so the
  /// events a bucket's events schedule rarely land in it (those wait in a heap; with 4.096-ns buckets
  /// 37 % of a 1,024-GPU run's events did, and its heap's pops were 15 % of the run's instructions).
  static constexpr int kBucketShift = 10;
  static constexpr uint64_t kBuckets = 1u << 16;        ///< window of 65,536 buckets

  EventQueue() : head_(kBuckets, kNil), bits_(kWords, 0), summary_(kWords / 64, 0) {}
  void push(const Event& e);
  /// Removes and returns the earliest event. Precondition: !empty().
  Event pop() {
    --size_;
    if (from_run()) return run_[run_pos_++];
    return side_.pop();
  }
  /// The earliest event. Precondition: !empty().
  const Event& top() { return from_run() ? run_[run_pos_] : side_.top(); }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  /// The earliest event's time (ps; kTimeMax if empty), without moving the calendar.
  Time next_time() const;
  /// Pops the earliest event into `e` if its time is <= `until` (ps). Never moves the calendar to a
  /// bucket past `until`, so events pushed afterwards at times > `until` still go to their buckets.
  /// (Inline: it is the kernel's per-event step.)
  bool pop_until(Time until, Event& e) {
    if (size_ == 0) return false;
    if (run_pos_ == run_.size() && side_.empty() && !advance_until(until)) return false;
    if (run_pos_ < run_.size() && (side_.empty() || run_[run_pos_].before(side_.top()))) {
      if (run_[run_pos_].time > until) return false;
      e = run_[run_pos_++];
    } else {
      if (side_.top().time > until) return false;
      e = side_.pop();
    }
    --size_;
    return true;
  }
  /// The event `k` places after the next one in the bucket being drained (k = 0: the next one if the
  /// side heap holds nothing earlier), or nullptr past the bucket's end: a hint of what runs soon,
  /// for prefetching (events pushed meanwhile may run before it). The pointer is valid until the next
  /// pop.
  const Event* ahead(size_t k) const {
    const size_t i = run_pos_ + k;
    return i < run_.size() ? &run_[i] : nullptr;
  }
  /// Events waiting in the heap beside the bucket being drained (diagnostics and tests: it should
  /// hold only events scheduled into the current 1.024-ns bucket).
  size_t side_heap_size() const { return side_.size(); }
  /// Calls f(const Event&) for every pending event, in no particular order: O(pending events +
  /// non-empty buckets), for occasional scans (which flows pending events refer to), not per event.
  template <class F>
  void for_each(F&& f) const {
    for (size_t i = run_pos_; i < run_.size(); ++i) f(run_[i]);
    side_.for_each(f);
    far_.for_each(f);
    for (uint64_t w = 0; w < kWords; ++w)
      for (uint64_t bits = bits_[w]; bits; bits &= bits - 1)
        for_bucket(w * 64 + static_cast<uint64_t>(__builtin_ctzll(bits)), f);
  }

 private:
  static constexpr uint64_t kWords = kBuckets / 64;  ///< words of the non-empty-slot bitmap
  uint64_t next_bucket() const;
  /// The first word of bits_ in [from, to) that has a slot set, or `to`.
  uint64_t first_word(uint64_t from, uint64_t to) const;
  /// Moves to the next bucket if it starts at or before `until`; false (nothing moved) otherwise.
  bool advance_until(Time until);
  static uint64_t bucket_of(Time t) { return static_cast<uint64_t>(t) >> kBucketShift; }
  /// Whether the earliest event is the head of the sorted run (else the side heap's top).
  bool from_run() {
    if (run_pos_ == run_.size() && side_.empty()) advance(next_bucket());
    if (run_pos_ == run_.size()) return false;
    return side_.empty() || run_[run_pos_].before(side_.top());
  }
  void advance(uint64_t next);  ///< moves to bucket `next` (next_bucket()) and sorts it
  void put_in_window(const Event& e, uint64_t b);

  static constexpr uint32_t kNil = UINT32_MAX;
  /// Events of one bucket, in a pooled chunk: a bucket is a list of chunks, the newest first, so
  /// draining it reads a few runs of consecutive events instead of chasing a pointer per event
  /// (at 1,024 GPUs a bucket holds about a hundred events, written a microsecond earlier: every
  /// node of a list of single events was a cache miss that the next could not overlap).
  static constexpr uint32_t kChunkEvents = 8;  ///< 200-B chunks (16 measured no faster)
  struct Chunk {
    Event e[kChunkEvents];
    uint32_t next;
    uint32_t count;
  };
  /// Calls f(const Event&) for every event in slot `slot`, chunk by chunk, newest chunk first.
  template <class F>
  void for_bucket(uint64_t slot, F&& f) const {
    for (uint32_t n = head_[slot]; n != kNil; n = chunks_[n].next)
      for (uint32_t i = 0; i < chunks_[n].count; ++i) f(chunks_[n].e[i]);
  }
  // The bucket being drained: sorted once when it is reached (one sort is cheaper than a heap pop
  // per event when thousands of synchronised flows put their events in the same nanosecond),
  // plus a small heap for events scheduled into it while it drains.
  std::vector<Event> run_;
  size_t run_pos_ = 0;
  EventHeap side_;
  EventHeap far_;                           // events beyond the window
  // Slot b % kBuckets holds bucket b of the window as a singly linked list of pooled chunks
  // (no allocation per event once the pool has grown to the peak number of chunks in use).
  std::vector<Chunk> chunks_;
  std::vector<uint32_t> free_chunks_;
  std::vector<uint32_t> head_;
  std::vector<uint64_t> bits_;              // non-empty slots
  // Non-zero words of bits_: finding the next event after a long gap (an accelerated run's
  // skips leave the window nearly empty) reads a few words, not all 1,024.
  std::vector<uint64_t> summary_;
  uint64_t cur_ = 0;                        // bucket being drained
  size_t size_ = 0;
};

}  // namespace wh
