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

 private:
  std::vector<Event> heap_;
};

/// The kernel's event queue. Pop order is exactly (time, key), as one heap would give, but the
/// work per event does not grow with the number of pending events: events within the next
/// kBuckets × kBucketPs (67 µs) go into unsorted buckets of 4.096 ns; only the bucket being
/// drained is heap-ordered (a handful of events), and later events wait in a second heap until
/// the window reaches them. Times must not go backwards: push(e) requires e.time >= the time of
/// the last event popped.
class EventQueue {
 public:
  static constexpr int kBucketShift = 12;               ///< bucket width 2^12 ps = 4.096 ns
  static constexpr uint64_t kBuckets = 1u << 14;        ///< window of 16,384 buckets

  EventQueue() : head_(kBuckets, kNil), bits_(kBuckets / 64, 0) {}
  void push(const Event& e);
  /// Removes and returns the earliest event. Precondition: !empty().
  Event pop() {
    if (current_.empty()) advance();
    --size_;
    return current_.pop();
  }
  /// The earliest event. Precondition: !empty().
  const Event& top() {
    if (current_.empty()) advance();
    return current_.top();
  }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

 private:
  static uint64_t bucket_of(Time t) { return static_cast<uint64_t>(t) >> kBucketShift; }
  void advance();
  void put_in_window(const Event& e, uint64_t b);

  static constexpr uint32_t kNil = UINT32_MAX;
  struct Node {
    Event e;
    uint32_t next;
  };
  EventHeap current_;                       // events of bucket cur_ (and any pushed into it)
  EventHeap far_;                           // events beyond the window
  // Slot b % kBuckets holds bucket b of the window as a singly linked list of pooled nodes
  // (no allocation per event once the pool has grown to the peak number of pending events).
  std::vector<Node> nodes_;
  std::vector<uint32_t> free_nodes_;
  std::vector<uint32_t> head_;
  std::vector<uint64_t> bits_;              // non-empty slots
  uint64_t cur_ = 0;                        // bucket being drained
  size_t size_ = 0;
};

}  // namespace wh
