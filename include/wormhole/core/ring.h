// A growable FIFO ring buffer: no allocation per element once it has grown to its peak size.
#pragma once
#include <cstdint>
#include <vector>

namespace wh {

/// FIFO of trivially copyable T with power-of-two capacity (starts empty without allocating, grows x2
/// from 4), which can also drop its newest element (a double-ended queue for monotonic windows).
template <class T>
class Ring {
 public:
  bool empty() const { return count_ == 0; }
  uint32_t size() const { return count_; }
  T& front() { return buf_[head_]; }
  const T& front() const { return buf_[head_]; }
  /// The newest element (precondition: not empty).
  T& back() { return buf_[(head_ + count_ - 1) & mask()]; }
  const T& back() const { return buf_[(head_ + count_ - 1) & mask()]; }
  /// i-th element from the front (0 = front).
  T& at(uint32_t i) { return buf_[(head_ + i) & mask()]; }
  const T& at(uint32_t i) const { return buf_[(head_ + i) & mask()]; }
  void push(const T& v) {
    if (count_ == buf_.size()) grow();
    buf_[(head_ + count_) & mask()] = v;
    ++count_;
  }
  T pop() {
    T v = buf_[head_];
    head_ = (head_ + 1) & mask();
    --count_;
    return v;
  }
  /// Drops the newest element (precondition: not empty).
  void pop_back() { --count_; }
  void clear() { head_ = count_ = 0; }

 private:
  uint32_t mask() const { return static_cast<uint32_t>(buf_.size()) - 1; }
  void grow() {
    std::vector<T> nb(buf_.empty() ? 4 : buf_.size() * 2);
    for (uint32_t i = 0; i < count_; ++i) nb[i] = buf_[(head_ + i) & mask()];
    buf_.swap(nb);
    head_ = 0;
  }
  std::vector<T> buf_;
  uint32_t head_ = 0, count_ = 0;
};

}  // namespace wh
