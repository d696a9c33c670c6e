// The run's flows by id: a FlowInfo for every flow ever created, and QP state only for the flows that
// are running (or have just finished), so memory follows what is active rather than what has been.
#pragma once
#include <cstdint>
#include <vector>

#include "wormhole/core/chunked.h"
#include "wormhole/net/flow.h"

namespace wh {

/// Flow storage of a Network. Ids are dense and never reused; a flow's QP state (Flow) lives in a
/// recycled slot from create_state() (its start) to release() (after it finished and nothing refers
/// to it). Both tables grow in chunks, so references to an entry stay valid while flows are added.
class FlowTable {
 public:
  size_t size() const { return info_.size(); }
  /// Adds a flow (no state yet); returns its id.
  uint32_t add(const FlowInfo& f) { return static_cast<uint32_t>(info_.push_back(f)); }
  FlowInfo& info(uint32_t id) { return info_[id]; }
  const FlowInfo& info(uint32_t id) const { return info_[id]; }
  /// Whether flow `id` has QP state now (started, and not released).
  bool live(uint32_t id) const { return info_[id].state != FlowInfo::kNoState; }
  /// The QP state of a live flow (precondition: live(id)).
  Flow& state(uint32_t id) { return states_[info_[id].state]; }
  const Flow& state(uint32_t id) const { return states_[info_[id].state]; }
  /// Gives flow `id` fresh QP state holding its identity (precondition: !live(id)); returns it.
  Flow& create_state(uint32_t id) {
    FlowInfo& i = info_[id];
    uint32_t slot;
    if (free_.empty()) {
      slot = static_cast<uint32_t>(states_.push_back(Flow()));
    } else {
      slot = free_.back();
      free_.pop_back();
      states_[slot] = Flow();
    }
    i.state = slot;
    if (++live_ > peak_live_) peak_live_ = live_;
    Flow& f = states_[slot];
    f.src = i.src, f.dst = i.dst, f.sport = i.sport, f.dport = i.dport, f.pg = i.pg;
    f.size = i.size, f.start = i.start, f.ideal_fct_ns = i.ideal_fct_ns;
    return f;
  }
  /// Copies what outlives the state (NICs, bound, skipped bytes and time, clock offset, epoch) into the
  /// flow's FlowInfo and frees its slot (precondition: live(id)).
  void release(uint32_t id) {
    FlowInfo& i = info_[id];
    const Flow& f = states_[i.state];
    i.nic = f.nic, i.rx_nic = f.rx_nic, i.min_fct = f.min_fct;
    i.skipped_time = f.skipped_time, i.skipped_bytes = f.skipped_bytes, i.clock_offset = f.clock_offset;
    i.epoch = f.epoch;
    free_.push_back(i.state);
    i.state = FlowInfo::kNoState;
    --live_;
  }
  /// Forgets the flows from id `n` on (their states are freed).
  void truncate(size_t n) {
    for (size_t id = n; id < info_.size(); ++id)
      if (live(static_cast<uint32_t>(id))) release(static_cast<uint32_t>(id));
    info_.truncate(n);
  }
  /// Flows with state now, and at most so far.
  size_t live_count() const { return live_; }
  size_t peak_live() const { return peak_live_; }

 private:
  ChunkedVector<FlowInfo, 14> info_;
  ChunkedVector<Flow, 10> states_;
  std::vector<uint32_t> free_;  // released slots, reused last-in first-out (their memory is warm)
  size_t live_ = 0, peak_live_ = 0;
};

}  // namespace wh
