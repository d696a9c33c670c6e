// The collective memo (wormhole/workload/collective_memo.h).
#include "wormhole/workload/collective_memo.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace wh {

CollectiveMemo::CollectiveMemo(Network& net, double verify, std::unordered_map<std::string, CollectivePattern>* store)
    : net_(net), verify_(verify), store_(store ? *store : own_store_) {
  if (!(verify >= 0)) throw std::invalid_argument("collective memo: verify must be >= 0");
  claim_.assign(net.ports().size(), -1);
  net_.set_island_hooks(this);
}

CollectiveMemo::~CollectiveMemo() { net_.set_island_hooks(nullptr); }

bool CollectiveMemo::verify_this_hit() {
  const uint64_t h = hits_seen_++;
  if (verify_ <= 0) return false;
  if (verify_ > 1) return h < static_cast<uint64_t>(verify_);  // a count; 1 is the fraction "all"
  // The h-th hit is verified when the running quota ceil(h·v) grows: the first one always is.
  return std::ceil(double(h + 1) * verify_) > std::ceil(double(h) * verify_);
}

int32_t CollectiveMemo::begin(const std::vector<std::pair<uint32_t, uint32_t>>& pairs,
                              const std::function<const std::string&()>& plan_key,
                              const std::vector<uint32_t>& member_hosts, const std::vector<Time>& issued,
                              uint32_t flows, const std::function<uint32_t(uint32_t host)>& involved) {
  ++stats_.considered;
  finalize_pending();
  Island is;
  std::string why;
  if (flows == 0 || !net_.find_island(pairs, is, why)) {
    ++stats_.not_island;
    return -1;
  }
  for (uint32_t h : member_hosts)
    if (std::find(is.hosts.begin(), is.hosts.end(), h) == is.hosts.end()) {  // a member none of whose flows is on it
      ++stats_.not_island;
      return -1;
    }
  // An island that reaches hosts outside the collective is shared with other groups (TP 4 on an
  // 8-GPU server): the collective runs on its part of it.
  if (is.hosts.size() != member_hosts.size()) {
    is = net_.sub_island(is, member_hosts);
    // Not while a PAUSE is pending there or the buffer is near a threshold already.
    for (uint32_t sw : is.switches)
      if (!net_.below_pfc_thresholds(sw, net_.fabric().nodes[sw].shared_used)) {
        ++stats_.busy;
        return -1;
      }
  }
  // A member busy with another collective that can reach an NVSwitch could send on the island while
  // this one is replayed.
  for (uint32_t h : is.hosts)
    if (involved(h) != 1) {
      ++stats_.busy;
      return -1;
    }
  for (uint32_t p : is.ports)
    if (claim_[p] >= 0) {
      ++stats_.busy;
      return -1;
    }
  if (!net_.island_quiet(is)) {
    ++stats_.busy;
    return -1;
  }
  const Time t0 = *std::min_element(issued.begin(), issued.end());
  std::string key = plan_key();
  for (uint32_t h : member_hosts)
    append_key(key, static_cast<uint32_t>(std::find(is.hosts.begin(), is.hosts.end(), h) - is.hosts.begin()));
  for (Time t : issued) append_key(key, t - t0);
  // INT stamps (HPCC) and TIMELY's RTTs read the clock in whole ns, so where in its ns a collective
  // starts changes how it runs (measured: HPCC without NS_TRUNCATION, 36 of 36 verified hits differed).
  append_key(key, t0 % kNs);
  if (is.shared) append_key(key, static_cast<uint8_t>(1));  // whole islands' keys as before: memo files stay valid
  net_.island_signature(is, key);

  uint32_t slot;
  if (!free_runs_.empty()) {
    slot = free_runs_.back();
    free_runs_.pop_back();
  } else {
    slot = static_cast<uint32_t>(runs_.size());
    runs_.emplace_back();
  }
  Run& r = runs_[slot];
  r = Run{};
  r.t0 = t0;
  r.net_id.assign(flows, UINT32_MAX);
  r.finish.assign(flows, -1);
  const auto found = store_.find(key);
  // A pattern of other sizes than its key says (a corrupt or foreign file) is no pattern of this one.
  const bool usable = found != store_.end() && !found->second.rejected && found->second.finish.size() == flows &&
                      found->second.rr_last.size() == is.ports.size();
  if (usable) {
    const auto it = found;
    if (verify_this_hit()) {
      r.verifying = true;
    } else {
      r.replay = true;
      r.entry = &it->second;
      r.finish = r.entry->finish;
      r.order = r.entry->order;
      ++it->second.hits;
    }
  } else if (const auto rec = recording_.find(key); rec != recording_.end() && runs_[rec->second].t0 <= t0) {
    // Another island is simulating this very pattern, started no later: follow its completions,
    // shifted by the difference of the start times (every server's TP group issues at once).
    r.replay = true;
    r.leader = rec->second;
    runs_[rec->second].followers.push_back(slot);
    const Run& src = runs_[rec->second];
    for (uint32_t f : src.order) r.finish[f] = src.finish[f], r.order.push_back(f);
  }
  if (r.replay) {
    ++stats_.replayed;
    stats_.replayed_flows += flows;
  } else {
    r.before.reserve(is.ports.size());
    for (uint32_t p : is.ports) r.before.push_back(net_.port_state(p));
    if (!r.verifying) recording_.emplace(key, slot);
  }
  for (uint32_t p : is.ports) claim_[p] = static_cast<int32_t>(slot);
  r.key = std::move(key);
  r.island = std::move(is);
  if (r.island.shared) enter_shared(slot);
  if (r.replay) schedule_next(slot);
  return static_cast<int32_t>(slot);
}

void CollectiveMemo::released(int32_t h, uint32_t f, uint32_t id) {
  Run& r = runs_[static_cast<uint32_t>(h)];
  r.net_id[f] = id;
  // Only a recording or verifying run looks its flows up by id (its QPs, a flow starting on its
  // ports); a replay's flows never start a QP.
  if (!r.replay) r.plan_of[id] = f, exact_.insert(id);
}

void CollectiveMemo::finished(int32_t h, uint32_t f, Time skipped) {
  const uint32_t slot = static_cast<uint32_t>(h);
  Run& r = runs_[slot];
  if (r.replay) return;  // a replay ends its flows itself (replay_due)
  exact_.erase(r.net_id[f]);
  r.finish[f] = net_.now() - r.t0;
  r.order.push_back(f);
  if (skipped > 0) r.skipped = true;
  for (uint32_t fs : r.followers) {
    Run& w = runs_[fs];
    w.finish[f] = r.finish[f];
    w.order.push_back(f);
    if (w.due < 0) schedule_next(fs);
  }
  if (r.order.size() == r.finish.size()) mark_pending(slot);
}

void CollectiveMemo::flow_started(uint32_t id, uint32_t nic, uint32_t ack_nic) {
  // Its data and its ACKs may reach two runs' islands (two groups sharing an NVSwitch): each is told.
  int32_t told = -1;
  for (uint32_t p : {nic, ack_nic}) {
    if (p >= claim_.size() || claim_[p] < 0) continue;
    if (runs_[static_cast<uint32_t>(claim_[p])].pending) finalize_pending(true);  // before the new QP is listed
    if (claim_[p] < 0 || claim_[p] == told) continue;
    told = claim_[p];
    Run& r = runs_[static_cast<uint32_t>(claim_[p])];
    if (r.plan_of.count(id)) continue;
    if (r.replay) ++stats_.conflicts;
    else r.disturbed = true;
  }
}

void CollectiveMemo::schedule_next(uint32_t slot) {
  Run& r = runs_[slot];
  r.due = r.next < r.order.size() ? r.t0 + r.finish[r.order[r.next]] : -1;
  if (r.due >= 0) net_.schedule_replay(r.due, slot);
}

void CollectiveMemo::replay_due(uint32_t slot) {
  // finish_replayed runs the drivers, which may begin other runs: runs_ may grow, so no reference
  // into it lives across the call.
  const Time now = net_.now();
  while (runs_[slot].next < runs_[slot].order.size()) {
    Run& r = runs_[slot];
    const uint32_t f = r.order[r.next];
    if (r.t0 + r.finish[f] != now) break;
    const uint32_t id = r.net_id[f];
    ++r.next;
    if (id == UINT32_MAX || id >= net_.flow_count())
      throw std::logic_error("collective memo: a replayed flow ends before it was released (the driver's timeline "
                             "differs from the recorded one)");
    net_.finish_replayed(id);
  }
  if (runs_[slot].next < runs_[slot].finish.size()) schedule_next(slot);  // a follower may wait for more
  else if (runs_[slot].entry) end_replay(slot);
  else mark_pending(slot);  // a follower: its recording's end state is not read yet
}

void CollectiveMemo::end_replay(uint32_t slot) {
  Run& r = runs_[slot];
  bool foreign = false;  // a conflicting flow's QP is on the island: its state is not the recorded one
  for (uint32_t p : r.island.ports) foreign = foreign || !net_.ports()[p].qps.empty();
  if (const Entry* e = r.entry; e && !foreign) {
    for (size_t i = 0; i < r.island.ports.size(); ++i) {
      std::vector<uint32_t> qps;
      qps.reserve(e->qps[i].size());
      for (uint32_t f : e->qps[i]) qps.push_back(r.net_id[f]);
      net_.set_port_state(r.island.ports[i], e->rr_last[i], e->rr_qp[i], std::move(qps), e->tx_delta[i],
                          e->sent_delta[i]);
    }
  }
  if (r.broken || !r.entry) ++stats_.follow_failures;
  if (r.island.shared && !left_shared(slot)) ++stats_.margin_violations;
  release_claims(slot);
}

void CollectiveMemo::finalize_pending(bool force) {
  if (pending_.empty()) return;
  // Not at the instant a recording's last flow ended: that event may still change the island (a NIC
  // compacts its finished QPs after the completion's callbacks). Forced (another flow is starting
  // there, or the run is over), such a recording is not kept.
  std::vector<uint32_t> slots, later;
  for (uint32_t s : pending_) {
    if (runs_[s].pending_at < net_.now()) slots.push_back(s);
    else if (force) runs_[s].disturbed = !runs_[s].replay || runs_[s].disturbed, slots.push_back(s);
    else later.push_back(s);
  }
  pending_.swap(later);
  // A follower waits for its recording.
  for (size_t i = 0; i < slots.size(); ++i)
    if (runs_[slots[i]].replay && !runs_[slots[i]].entry && !runs_[slots[i]].broken) {
      bool recording_pending = false;
      for (uint32_t s : pending_) recording_pending = recording_pending || !runs_[s].replay;
      if (recording_pending) pending_.push_back(slots[i]), slots.erase(slots.begin() + static_cast<long>(i--));
    }
  // Recordings first: they give their followers the end state.
  for (uint32_t s : slots)
    if (!runs_[s].replay) end_recording(s);
  for (uint32_t s : slots)
    if (runs_[s].replay) end_replay(s);
}

void CollectiveMemo::end_recording(uint32_t slot) {
  Run& r = runs_[slot];
  bool ok = !r.disturbed && !r.skipped && net_.island_quiet(r.island);
  if (r.island.shared && !left_shared(slot)) ok = false;
  Entry e;
  e.shared_peak = r.used_peak;
  e.finish = r.finish;
  e.order = r.order;  // finishing order: by time, then as the network ended them
  const size_t n = r.island.ports.size();
  e.rr_last.resize(n), e.rr_qp.resize(n), e.qps.resize(n), e.tx_delta.resize(n), e.sent_delta.resize(n);
  for (size_t i = 0; ok && i < n; ++i) {
    const IslandPortState s = net_.port_state(r.island.ports[i]);
    const IslandPortState& b = r.before[i];
    // A random draw, a pause, or a fast-forward that froze or shifted the port (even one pulled back).
    if (s.rng0 != b.rng0 || s.rng1 != b.rng1 || s.paused_total != b.paused_total || s.epoch != b.epoch) ok = false;
    e.rr_last[i] = s.rr_last;
    e.rr_qp[i] = s.rr_qp;
    for (uint32_t id : s.qps) {
      const auto it = r.plan_of.find(id);
      if (it == r.plan_of.end()) ok = false;  // a QP of an earlier collective still listed
      else e.qps[i].push_back(it->second);
    }
    e.tx_delta[i] = s.tx_bytes - b.tx_bytes;
    e.sent_delta[i] = s.sent_bytes - b.sent_bytes;
  }
  if (!ok) {
    ++stats_.not_kept;
  } else if (const auto it = store_.find(r.key); it != store_.end()) {
    // A verified hit, or the same pattern simulated on another island meanwhile (every server's TP
    // group issues at once): either way a second simulation of one key, which must agree.
    ++(r.verifying ? stats_.verified : stats_.repeats);
    if (!(it->second == e)) ++stats_.verify_failures, it->second.rejected = true;  // never replayed again
  } else {
    store_.emplace(r.key, std::move(e));
    ++stats_.recorded;
    stats_.patterns = store_.size();
  }
  if (const auto it = recording_.find(r.key); it != recording_.end() && it->second == slot) recording_.erase(it);
  const auto kept = ok ? store_.find(r.key) : store_.end();
  for (uint32_t fs : r.followers) {
    // A follower replayed what this recording did; if the recording is not a clean pattern, neither
    // was the replay.
    if (kept != store_.end()) runs_[fs].entry = &kept->second;
    else runs_[fs].broken = true;
    runs_[fs].leader = UINT32_MAX;  // this slot is free from now on
  }
  release_claims(slot);
}

void CollectiveMemo::mark_pending(uint32_t slot) {
  Run& r = runs_[slot];
  r.pending = true, r.pending_at = net_.now(), pending_.push_back(slot);
  // Its flows are done: from now on the switch's buffer is no concern of it.
  if (r.island.shared) left_shared(slot);
}

bool CollectiveMemo::left_shared(uint32_t slot) {
  Run& r = runs_[slot];
  if (!r.left) r.margin_ok = leave_shared(slot), r.left = true;
  return r.margin_ok;
}

void CollectiveMemo::take_peak(uint32_t sw) {
  const auto on = on_switch_.find(sw);
  if (on == on_switch_.end()) return;
  const uint64_t peak = net_.take_shared_peak(sw);
  for (uint32_t s : on->second) runs_[s].used_peak = std::max(runs_[s].used_peak, peak);
}

void CollectiveMemo::read_peaks(uint32_t sw) {
  take_peak(sw);
  // A follower stands for its recording as far as it has gone, on the recording's switches.
  for (uint32_t s : on_switch_[sw])
    if (runs_[s].replay && !runs_[s].entry && runs_[s].leader < runs_.size())
      for (uint32_t lsw : runs_[runs_[s].leader].island.switches)
        if (lsw != sw) take_peak(lsw);
  uint64_t replays = 0;
  for (uint32_t s : on_switch_[sw]) replays += stands_for(s);
  for (uint32_t s : on_switch_[sw]) runs_[s].replays_peak = std::max(runs_[s].replays_peak, replays - stands_for(s));
}

uint64_t CollectiveMemo::stands_for(uint32_t slot) const {
  const Run& r = runs_[slot];
  if (!r.replay) return 0;  // simulated: its packets are in the buffer
  if (r.entry) return r.entry->shared_peak;
  // A follower stands for its recording, as far as it has gone (bounded by what was in use there).
  return r.leader < runs_.size() ? runs_[r.leader].used_peak : 0;
}

void CollectiveMemo::enter_shared(uint32_t slot) {
  for (uint32_t sw : runs_[slot].island.switches) {
    read_peaks(sw);  // the peak so far belongs to the runs already there
    on_switch_[sw].push_back(slot);
    read_peaks(sw);  // and the replays there now count for the new one too
  }
}

bool CollectiveMemo::leave_shared(uint32_t slot) {
  bool below = true;
  for (uint32_t sw : runs_[slot].island.switches) {
    read_peaks(sw);
    std::vector<uint32_t>& on = on_switch_[sw];
    on.erase(std::find(on.begin(), on.end(), slot));
    if (on.empty()) on_switch_.erase(sw);
    const Run& r = runs_[slot];
    below = below && net_.below_pfc_thresholds(sw, r.used_peak + r.replays_peak + stands_for(slot));
  }
  return below;
}

void CollectiveMemo::release_claims(uint32_t slot) {
  Run& r = runs_[slot];
  for (uint32_t p : r.island.ports) claim_[p] = -1;
  r = Run{};
  free_runs_.push_back(slot);
}

}  // namespace wh
