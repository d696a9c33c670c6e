// Event heap and calendar queue (see event_queue.h).
#include "wormhole/core/event_queue.h"

#include <algorithm>

namespace wh {

namespace {
// (time, key) as one unsigned 128-bit number (times are never negative).
inline unsigned __int128 order(const Event& e) {
  return (static_cast<unsigned __int128>(static_cast<uint64_t>(e.time)) << 64) | e.key;
}
// The last tie-break: keys can coincide when two lineages of events had the same delays for
// longer than the key remembers (two NICs pacing in lock-step); then the owner decides, so the
// order never depends on how the queue happened to store the events.
inline uint64_t owner(const Event& e) { return (uint64_t(e.target) << 32) | (uint64_t(e.kind) << 16) | e.aux; }
// The tie almost never happens, so the extra branch is well predicted.
inline bool less(unsigned __int128 ka, const Event& a, unsigned __int128 kb, const Event& b) {
  if (ka != kb) return ka < kb;
  return owner(a) < owner(b);
}
}  // namespace

void EventHeap::push(const Event& e) {
  size_t i = heap_.size();
  heap_.push_back(e);
  const unsigned __int128 k = order(e);
  while (i > 0) {
    const size_t parent = (i - 1) >> 2;
    if (!less(k, e, order(heap_[parent]), heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

Event EventHeap::pop() {
  const Event top = heap_[0];
  const Event last = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n == 0) return top;
  // Floyd's bottom-up variant: walk the hole down along the smallest children to a leaf, then
  // sift the former last element up from there (it usually belongs near the bottom).
  size_t i = 0;
  for (;;) {
    const size_t c = 4 * i + 1;
    if (c >= n) break;
    size_t best = c;
    unsigned __int128 bk = order(heap_[c]);
    const size_t end = c + 4 < n ? c + 4 : n;
    for (size_t k = c + 1; k < end; ++k) {
      const unsigned __int128 kk = order(heap_[k]);
      if (less(kk, heap_[k], bk, heap_[best])) bk = kk, best = k;
    }
    heap_[i] = heap_[best];
    i = best;
  }
  const unsigned __int128 lk = order(last);
  while (i > 0) {
    const size_t parent = (i - 1) >> 2;
    if (!less(lk, last, order(heap_[parent]), heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = last;
  return top;
}

void EventQueue::put_in_window(const Event& e, uint64_t b) {
  const uint64_t slot = b & (kBuckets - 1);
  uint32_t c = head_[slot];
  if (c == kNil || chunks_[c].count == kChunkEvents) {
    uint32_t n;
    if (free_chunks_.empty()) {
      n = static_cast<uint32_t>(chunks_.size());
      chunks_.emplace_back();
    } else {
      n = free_chunks_.back();
      free_chunks_.pop_back();
    }
    chunks_[n].next = c;
    chunks_[n].count = 0;
    head_[slot] = c = n;
    bits_[slot >> 6] |= 1ull << (slot & 63);
    summary_[slot >> 12] |= 1ull << ((slot >> 6) & 63);
  }
  Chunk& k = chunks_[c];
  k.e[k.count++] = e;
}

void EventQueue::push(const Event& e) {
  ++size_;
  const uint64_t b = bucket_of(e.time);
  if (b <= cur_) side_.push(e);
  else if (b < cur_ + kBuckets) put_in_window(e, b);
  else far_.push(e);
}

uint64_t EventQueue::first_word(uint64_t from, uint64_t to) const {
  while (from < to) {
    const uint64_t s = summary_[from >> 6] >> (from & 63);
    if (s) return std::min(to, from + static_cast<uint64_t>(__builtin_ctzll(s)));
    from = (from | 63) + 1;
  }
  return to;
}

uint64_t EventQueue::next_bucket() const {
  // Precondition: size_ > 0 and the current bucket is drained. The next non-empty bucket of the
  // window (circular scan of the bitmap from cur_ + 1), or the far heap's first.
  const uint64_t start = (cur_ + 1) & (kBuckets - 1);
  const uint64_t w0 = start >> 6;
  uint64_t slot = kBuckets;
  if (const uint64_t word = bits_[w0] >> (start & 63)) {
    slot = start + static_cast<uint64_t>(__builtin_ctzll(word));
  } else {
    uint64_t w = first_word(w0 + 1, kWords);
    if (w == kWords && (w = first_word(0, w0 + 1)) == w0 + 1) w = kWords;  // wrapped: slots before start
    if (w < kWords) slot = w * 64 + static_cast<uint64_t>(__builtin_ctzll(bits_[w]));
  }
  const uint64_t d = (slot - start) & (kBuckets - 1);
  if (slot < kBuckets && d < kBuckets - 1) return cur_ + 1 + d;
  return bucket_of(far_.top().time);
}

Time EventQueue::next_time() const {
  if (size_ == 0) return kTimeMax;
  if (run_pos_ < run_.size() || !side_.empty()) {
    Time t = kTimeMax;
    if (run_pos_ < run_.size()) t = run_[run_pos_].time;
    if (!side_.empty()) t = std::min(t, side_.top().time);
    return t;
  }
  const uint64_t b = next_bucket();
  if (b >= cur_ + kBuckets) return far_.top().time;
  Time t = kTimeMax;
  for_bucket(b & (kBuckets - 1), [&](const Event& e) { t = std::min(t, e.time); });
  return t;
}

bool EventQueue::advance_until(Time until) {
  // Do not move the calendar to a bucket that starts after `until`: events pushed later at times
  // before that bucket would have to wait in the side heap (a distributed run's window edge).
  const uint64_t next = next_bucket();
  if (static_cast<Time>(next << kBucketShift) > until) return false;
  advance(next);
  return true;
}

void EventQueue::advance(uint64_t next) {
  cur_ = next;
  const uint64_t slot = cur_ & (kBuckets - 1);
  run_.clear();
  run_pos_ = 0;
  if (bits_[slot >> 6] & (1ull << (slot & 63))) {
    for (uint32_t n = head_[slot]; n != kNil; n = chunks_[n].next) {
      run_.insert(run_.end(), chunks_[n].e, chunks_[n].e + chunks_[n].count);
      free_chunks_.push_back(n);
    }
    head_[slot] = kNil;
    bits_[slot >> 6] &= ~(1ull << (slot & 63));
    if (bits_[slot >> 6] == 0) summary_[slot >> 12] &= ~(1ull << ((slot >> 6) & 63));
    std::sort(run_.begin(), run_.end(), [](const Event& a, const Event& b) { return a.before(b); });
  }
  // The window moved: far events that now fall inside it join their buckets.
  while (!far_.empty() && bucket_of(far_.top().time) < cur_ + kBuckets) {
    const Event e = far_.pop();
    const uint64_t b = bucket_of(e.time);
    if (b <= cur_) side_.push(e);
    else put_in_window(e, b);
  }
}

}  // namespace wh
