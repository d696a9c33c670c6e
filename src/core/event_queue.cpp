// 4-ary heap of events (see event_queue.h).
#include "wormhole/core/event_queue.h"

namespace wh {

void EventQueue::push(const Event& e) {
  size_t i = heap_.size();
  heap_.push_back(e);
  while (i > 0) {
    const size_t parent = (i - 1) >> 2;
    if (!e.before(heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

Event EventQueue::pop() {
  Event top = heap_[0];
  const Event last = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n == 0) return top;
  size_t i = 0;
  for (;;) {
    const size_t c = 4 * i + 1;
    if (c >= n) break;
    size_t best = c;
    const size_t end = c + 4 < n ? c + 4 : n;
    for (size_t k = c + 1; k < end; ++k)
      if (heap_[k].before(heap_[best])) best = k;
    if (!heap_[best].before(last)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
  return top;
}

}  // namespace wh
