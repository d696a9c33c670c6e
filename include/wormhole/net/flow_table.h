// The run's flows by id. Each flow has a 16-B entry; its FlowInfo (identity and outcome) lives in a
// recycled slot from its creation until its result record has gone out (retire), and its QP state in
// another from its start until it has finished and nothing refers to it (release). Entries are kept
// in chunks of 2^14 ids, and a chunk whose flows were all retired is given back once no packet or
// timer refers to them any more (release_entries). So memory follows what is active rather than what
// has been.
#pragma once
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "wormhole/core/chunked.h"
#include "wormhole/core/release.h"
#include "wormhole/net/flow.h"

namespace wh {

/// Flow storage of a Network. Ids are dense and never reused. A flow's FlowInfo is held from add() to
/// retire(); its QP state (Flow) from create_state() (its start) to release(). What a retired flow
/// leaves is what its late packets and stale timer events are compared with: finished, epoch and
/// clock offset; once its entry's chunk is given back (release_entries), only that it finished.
/// Every table grows in chunks, so references to an entry stay valid while flows are added.
class FlowTable {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  /// Entries come in chunks of 2^kEntryBits ids; flow `id` is in chunk id >> kEntryBits.
  static constexpr unsigned kEntryBits = 14;
  static constexpr size_t kEntryChunk = size_t(1) << kEntryBits;
  size_t size() const { return entries_.size(); }
  /// Adds a flow (no state yet); returns its id.
  uint32_t add(const FlowInfo& f) {
    if (closed_) [[unlikely]]
      fail("adding flow ", static_cast<uint32_t>(entries_.size()), " after the table was released (release_all)");
    uint32_t slot;
    if (free_info_.empty()) {
      slot = static_cast<uint32_t>(infos_.push_back(f));
    } else {
      slot = free_info_.back();
      free_info_.pop_back();
      infos_[slot] = f;
    }
    ++held_;
    bytes_ += f.size;
    return static_cast<uint32_t>(entries_.push_back({-1, slot, kNone}));
  }
  /// The FlowInfo of flow `id` (precondition: !retired(id)).
  FlowInfo& info(uint32_t id) { return infos_[entries_[id].info]; }
  const FlowInfo& info(uint32_t id) const { return infos_[entries_[id].info]; }
  /// Whether flow `id`'s record went out and its FlowInfo was given back (retire()).
  bool retired(uint32_t id) const { return entries_[id].info == kNone; }
  /// Whether flow `id` has finished (a retired flow has). One load from the entry: the packet path asks.
  bool finished(uint32_t id) const { return entries_[id].info == kNone || entries_[id].time >= 0; }
  /// When flow `id` finished (ps), -1 while it runs or before it starts (precondition: !retired(id)).
  Time finish(uint32_t id) const { return entries_[id].time; }
  void set_finish(uint32_t id, Time t) { entries_.held(id).time = t; }
  /// Whether flow `id` has QP state now (started, and not released).
  bool live(uint32_t id) const { return entries_[id].info != kNone && entries_[id].state != kNone; }
  /// Whether retired flow `id`'s sender runs here (retire(id, local)). Throws std::logic_error if its
  /// entry was given back (nothing may refer to it then).
  bool retired_local(uint32_t id) const { return (kept_entry(id).state & kLocal) != 0; }
  /// The timer epoch and clock offset (ps) of a flow without state (released; retired or not).
  /// Throw std::logic_error if its entry was given back.
  uint16_t released_epoch(uint32_t id) const {
    return retired(id) ? static_cast<uint16_t>(kept_entry(id).state) : info(id).epoch;
  }
  Time released_clock_offset(uint32_t id) const {
    return retired(id) ? kept_entry(id).time : info(id).clock_offset;
  }
  /// The QP state of a live flow (precondition: live(id)).
  Flow& state(uint32_t id) { return states_[entries_[id].state]; }
  const Flow& state(uint32_t id) const { return states_[entries_[id].state]; }
  /// Gives flow `id` fresh QP state holding its identity (precondition: !live(id), !retired(id));
  /// returns it.
  Flow& create_state(uint32_t id) {
    const FlowInfo& i = info(id);
    uint32_t slot;
    if (free_.empty()) {
      slot = static_cast<uint32_t>(states_.push_back(Flow()));
    } else {
      slot = free_.back();
      free_.pop_back();
      states_[slot] = Flow();
    }
    entries_.held(id).state = slot;
    if (++live_ > peak_live_) peak_live_ = live_;
    Flow& f = states_[slot];
    f.src = i.src, f.dst = i.dst, f.sport = i.sport, f.dport = i.dport, f.pg = i.pg;
    f.size = i.size, f.start = i.start, f.ideal_fct_ns = i.ideal_fct_ns;
    return f;
  }
  /// Copies what outlives the state (NICs, bound, skipped bytes and time, clock offset, epoch) into the
  /// flow's FlowInfo and frees its slot (precondition: live(id)).
  void release(uint32_t id) {
    Entry& e = entries_.held(id);
    FlowInfo& i = infos_[e.info];
    const Flow& f = states_[e.state];
    i.nic = f.nic, i.rx_nic = f.rx_nic, i.min_fct = f.min_fct;
    i.skipped_time = f.skipped_time, i.skipped_bytes = f.skipped_bytes, i.clock_offset = f.clock_offset;
    i.epoch = f.epoch;
    free_.push_back(e.state);
    e.state = kNone;
    --live_;
  }
  /// Gives back released, finished flow `id`'s FlowInfo, keeping its epoch and clock offset, and
  /// whether this process runs its sender (`local`: a distributed rank's stale timer events of the
  /// flow are its own or another rank's) (precondition: !live(id), finished(id), !retired(id);
  /// std::logic_error otherwise).
  void retire(uint32_t id, bool local = true) {
    const Entry& c = entries_[id];  // a given-back flow reads as retired
    if (c.info == kNone || c.state != kNone || c.time < 0) [[unlikely]]
      fail("retiring flow ", id, ", which is live, unfinished or retired");
    Entry& e = entries_.held(id);
    const FlowInfo& i = infos_[e.info];
    e.time = i.clock_offset;
    e.state = uint32_t{i.epoch} | (local ? kLocal : 0u);
    free_info_.push_back(e.info);
    e.info = kNone;
    --held_;
    const size_t k = id >> kEntryBits;
    if (retired_in_.size() <= k) retired_in_.resize(k + 1, 0);
    if (++retired_in_[k] == kEntryChunk) all_retired_.push_back(k);
  }
  /// Chunks (flow id >> kEntryBits) whose 2^kEntryBits flows were all retired and whose entries are
  /// still held: what release_entries() may give back once nothing refers to their flows.
  const std::vector<size_t>& all_retired_chunks() const { return all_retired_; }
  /// Gives back the entries of the chunks `k` of all_retired_chunks() with give_back[k] != 0
  /// (give_back is indexed by chunk). Their flows read as retired and finished from then on; no packet
  /// or timer event may refer to them (released_epoch, released_clock_offset and retired_local
  /// throw std::logic_error for them). Returns the chunks given back (in the order they were retired).
  std::vector<size_t> release_entries(const std::vector<uint8_t>& give_back) {
    std::vector<size_t> gone;
    size_t kept = 0;
    for (size_t k : all_retired_)
      if (k < give_back.size() && give_back[k]) entries_.release_chunk(k), gone.push_back(k);
      else all_retired_[kept++] = k;
    all_retired_.resize(kept);
    return gone;
  }
  /// Gives back every entry, FlowInfo and QP state at once, keeping size() and total_bytes(): every flow
  /// reads as retired and finished from then on, as a given-back chunk's flows do. For the end of a run,
  /// once its results are gathered and nothing refers to a flow. add() throws std::logic_error after it
  /// (the last chunk of entries, given back whole, may not be written).
  void release_all() {
    closed_ = true;
    for (size_t k = 0; k * kEntryChunk < entries_.size(); ++k) entries_.release_chunk(k);
    release_storage(retired_in_);
    release_storage(all_retired_);
    release_storage(infos_);
    release_storage(states_);
    release_storage(free_info_);
    release_storage(free_);
    live_ = held_ = 0;
  }
  /// Chunks of entries given back so far (none of them held any more).
  size_t released_entry_chunks() const { return (entries_.size() + kEntryChunk - 1) / kEntryChunk - entries_.held_chunks(); }
  /// Forgets the flows from id `n` on (their states and FlowInfos are freed). Throws std::logic_error if
  /// one of them was retired (only a distributed run truncates, the flows made after a stop inside its
  /// last window, and it retires only flows whose window stood: made before those).
  void truncate(size_t n) {
    for (size_t id = n; id < entries_.size(); ++id) {
      const uint32_t i = static_cast<uint32_t>(id);
      if (retired(i)) throw std::logic_error("truncating retired flow " + std::to_string(id));
      if (live(i)) release(i);
      bytes_ -= info(i).size, free_info_.push_back(entries_[id].info), --held_;
    }
    entries_.truncate(n);
    if (retired_in_.size() > (n + kEntryChunk - 1) / kEntryChunk) retired_in_.resize((n + kEntryChunk - 1) / kEntryChunk);
  }
  /// Calls fn(id, state) for every live flow, in id order; `fn` must not add, release or retire flows.
  /// Skips the chunks whose flows were all retired, so it costs the entries of the chunks with a flow
  /// not retired yet (a scan, for reports made every few seconds, not for the packet path).
  template <class Fn>
  void for_each_live(Fn&& fn) const {
    for (size_t k = 0, first = 0; first < entries_.size(); ++k, first += kEntryChunk) {
      if (entries_.released(k) || (k < retired_in_.size() && retired_in_[k] == kEntryChunk)) continue;
      const size_t end = std::min(entries_.size(), first + kEntryChunk);
      for (size_t id = first; id < end; ++id)
        if (live(static_cast<uint32_t>(id))) fn(static_cast<uint32_t>(id), state(static_cast<uint32_t>(id)));
    }
  }
  /// Flows with state now, and at most so far.
  size_t live_count() const { return live_; }
  size_t peak_live() const { return peak_live_; }
  /// Flows holding a FlowInfo now (not retired).
  size_t held_count() const { return held_; }
  /// Bytes of every flow added (and not truncated).
  uint64_t total_bytes() const { return bytes_; }

 private:
  // Default-constructed, an entry reads as a retired flow: what a given-back chunk's ids read.
  struct Entry {
    Time time = 0;          // its finish (-1 while running); once retired, its clock offset
    uint32_t info = kNone;  // FlowInfo slot; kNone once retired
    uint32_t state = 0;     // QP state slot (kNone: none); once retired, its timer epoch | kLocal
  };
  static constexpr uint32_t kLocal = 1u << 16;  // above the 16-bit epoch
  static_assert(sizeof(Entry) == 16, "the per-flow entry, kept until its chunk is given back");
  // Out of line and cold: the checks stay a compare in retire(), which is on every flow's way out.
  [[noreturn, gnu::noinline, gnu::cold]] static void fail(const char* before, uint32_t id, const char* after) {
    throw std::logic_error(before + std::to_string(id) + after);
  }
  const Entry& kept_entry(uint32_t id) const {
    if (entries_.released(id >> kEntryBits)) [[unlikely]]
      fail("flow ", id, "'s entry was given back, yet a packet or timer refers to it");
    return entries_[id];
  }
  ReleasableChunks<Entry, kEntryBits> entries_;
  std::vector<uint32_t> retired_in_;  // by chunk: flows retired
  std::vector<size_t> all_retired_;   // chunks all retired, entries still held
  ChunkedVector<FlowInfo, 12> infos_;
  ChunkedVector<Flow, 10> states_;
  std::vector<uint32_t> free_info_;  // given-back FlowInfo slots, reused last-in first-out
  std::vector<uint32_t> free_;       // released state slots, reused last-in first-out (their memory is warm)
  size_t live_ = 0, peak_live_ = 0, held_ = 0;
  bool closed_ = false;  // release_all() was called
  uint64_t bytes_ = 0;
};

}  // namespace wh
