// Values waiting for an event, named by a slot number the event carries; a taken slot is reused, so
// the pool holds what is pending, not everything that ever was.
#pragma once
#include <cstdint>
#include <vector>

namespace wh {

/// Pending values by slot. put() returns the slot to pass along (e.g. as an event's target); take()
/// returns the value once and frees the slot for a later put() (last freed, first reused).
/// Precondition of take(s): s came from put() and was not taken since (unchecked).
template <class T>
class SlotPool {
 public:
  uint32_t put(const T& v) {
    if (free_.empty()) {
      values_.push_back(v);
      return static_cast<uint32_t>(values_.size() - 1);
    }
    const uint32_t s = free_.back();
    free_.pop_back();
    values_[s] = v;
    return s;
  }
  T take(uint32_t s) {
    free_.push_back(s);
    return values_[s];
  }
  /// Slots in use now.
  size_t pending() const { return values_.size() - free_.size(); }

 private:
  std::vector<T> values_;
  std::vector<uint32_t> free_;
};

}  // namespace wh
