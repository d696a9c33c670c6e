// 4-ary heap of events (see event_queue.h).
#include "wormhole/core/event_queue.h"

namespace wh {

namespace {
// (time, key) as one unsigned 128-bit number: one branch-free compare (times are never negative).
inline unsigned __int128 order(const Event& e) {
  return (static_cast<unsigned __int128>(static_cast<uint64_t>(e.time)) << 64) | e.key;
}
}  // namespace

void EventQueue::push(const Event& e) {
  size_t i = heap_.size();
  heap_.push_back(e);
  const unsigned __int128 k = order(e);
  while (i > 0) {
    const size_t parent = (i - 1) >> 2;
    if (k >= order(heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

Event EventQueue::pop() {
  const Event top = heap_[0];
  const Event last = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n == 0) return top;
  // Floyd's bottom-up variant: walk the hole down along the smallest children to a leaf, then
  // sift the former last element up from there. The last element usually belongs near the
  // bottom, so this saves the comparison against it on every level.
  size_t i = 0;
  for (;;) {
    const size_t c = 4 * i + 1;
    if (c >= n) break;
    size_t best = c;
    unsigned __int128 bk = order(heap_[c]);
    const size_t end = c + 4 < n ? c + 4 : n;
    for (size_t k = c + 1; k < end; ++k) {
      const unsigned __int128 kk = order(heap_[k]);
      if (kk < bk) bk = kk, best = k;
    }
    heap_[i] = heap_[best];
    i = best;
  }
  const unsigned __int128 lk = order(last);
  while (i > 0) {
    const size_t parent = (i - 1) >> 2;
    if (lk >= order(heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = last;
  return top;
}

}  // namespace wh
