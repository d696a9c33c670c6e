// The future event list: an implicit 4-ary min-heap of Event records ordered by (time, key).
#pragma once
#include <cstddef>
#include <vector>

#include "wormhole/core/event.h"

namespace wh {

/// A 4-ary heap: shallower than a binary heap and cache-friendly for 32-byte records.
/// push/pop are O(log4 n); no allocation once the vector has grown to the peak size.
class EventQueue {
 public:
  void push(const Event& e);
  /// Removes and returns the earliest event. Precondition: !empty().
  Event pop();
  const Event& top() const { return heap_[0]; }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  void clear() { heap_.clear(); }
  /// All pending events, in heap (not time) order; for inspection and rebuilding.
  const std::vector<Event>& raw() const { return heap_; }

 private:
  std::vector<Event> heap_;
};

}  // namespace wh
