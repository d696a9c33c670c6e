// The collective memo (wormhole/workload/collective_memo.h).
#include "wormhole/workload/collective_memo.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace wh {

std::vector<std::pair<uint32_t, uint32_t>> collective_member_pairs(const CollectivePlan& cp) {
  std::vector<std::pair<uint32_t, uint32_t>> idx;
  if (cp.empty()) return idx;
  if (cp.op == Collective::AllToAll) {
    for (uint32_t i = 0; i < cp.ranks(); ++i)
      for (uint32_t j = 0; j < cp.ranks(); ++j)
        if (i != j) idx.emplace_back(i, j);
  } else {
    for (uint32_t c = 0; c < cp.rings; ++c)
      for (uint32_t i = 0; i < cp.ranks(); ++i) idx.emplace_back(i, cp.dst_index(c * cp.steps * cp.ranks() + i));
    std::sort(idx.begin(), idx.end());
    idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
  }
  return idx;
}

std::vector<Time> member_done_times(const CollectivePlan& cp, Time t0, const std::vector<Time>* finish) {
  std::vector<Time> done(cp.members.size(), -1);
  if (finish && finish->size() == cp.size())
    for (uint32_t f = 0; f < cp.size(); ++f)
      for (uint32_t mi : {cp.src_index(f), cp.dst_index(f)}) done[mi] = std::max(done[mi], t0 + (*finish)[f]);
  return done;
}

std::string collective_plan_key(const CollectivePlan& cp, Time send_latency, uint32_t priority_group) {
  std::string key;
  auto put = [&](auto v) { append_key(key, v); };
  key.reserve(20 + sizeof(Time) + uint64_t(cp.size()) * 20);
  put(uint32_t(0x57434d32)), put(cp.size()), put(cp.ranks()), put(send_latency);
  put(priority_group);
  for (uint32_t f = 0; f < cp.size(); ++f)
    put(cp.src_index(f)), put(cp.dst_index(f)), put(cp.chunk), put(cp.parent(f));
  return key;
}

CollectiveMemo::CollectiveMemo(Network& net, double verify, double error_bound,
                               std::unordered_map<std::string, CollectivePattern>* store)
    : net_(net), verify_(verify), error_bound_(error_bound), store_(store ? *store : own_store_) {
  if (!(verify >= 0)) throw std::invalid_argument("collective memo: verify must be >= 0");
  if (!(error_bound >= 0 && error_bound < 1)) throw std::invalid_argument("collective memo: error_bound must be in [0, 1)");
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

CollectiveMemo::Assessment CollectiveMemo::assess(const std::vector<std::pair<uint32_t, uint32_t>>& pairs,
                                                  const std::function<const std::string&()>& plan_key,
                                                  const std::vector<uint32_t>& member_hosts, const std::vector<Time>& issued,
                                                  uint32_t flows, const std::function<uint32_t(uint32_t host, uint8_t kinds)>& involved) {
  finalize_pending();
  Assessment a;
  Island& is = a.is;
  std::string why;
  if (flows == 0 || !net_.find_island(pairs, is, why)) return a;
  for (uint32_t h : member_hosts)
    if (std::find(is.hosts.begin(), is.hosts.end(), h) == is.hosts.end()) return a;  // a member none of whose flows is on it
  // An island that reaches hosts outside the collective is shared with other groups (TP 4 on an
  // 8-GPU server, a rail leaf): the collective runs on its part of it, and only if its paths stay there.
  if (is.open || is.hosts.size() != member_hosts.size()) {
    is = net_.sub_island(is, member_hosts);
    for (uint32_t p : is.path_ports)
      if (is.local_port(p) == UINT32_MAX) return a;
  }
  a.outcome = Assessment::Busy;
  // On a sub-island: not while a PAUSE is pending there or the buffer is near a threshold already.
  if (is.shared)
    for (uint32_t sw : is.switches)
      if (!net_.below_pfc_thresholds(sw, net_.fabric().nodes[sw].shared_used)) return a;
  // A member busy with another collective that can reach the island's kind of switch could send on
  // the island while this one is replayed.
  for (uint32_t h : is.hosts)
    if (involved(h, is.kinds) != 1) return a;
  for (uint32_t p : is.ports)
    if (claim_[p] >= 0) return a;
  if (!net_.island_quiet(is)) return a;
  a.t0 = *std::min_element(issued.begin(), issued.end());
  std::string& key = a.key;
  key = plan_key();
  for (uint32_t h : member_hosts)
    append_key(key, static_cast<uint32_t>(std::find(is.hosts.begin(), is.hosts.end(), h) - is.hosts.begin()));
  for (Time t : issued) append_key(key, t - a.t0);
  // INT stamps (HPCC) and TIMELY's RTTs read the clock in whole ns, so where in its ns a collective
  // starts changes how it runs (measured: HPCC without NS_TRUNCATION, 36 of 36 verified hits differed).
  append_key(key, a.t0 % kNs);
  if (is.shared) append_key(key, static_cast<uint8_t>(1));  // whole islands' keys as before: memo files stay valid
  net_.island_signature(is, key);

  const auto found = store_.find(key);
  // A pattern of other sizes than its key says (a corrupt or foreign file) is no pattern of this one.
  if (found != store_.end() && replayable(found->second) && found->second.finish.size() == flows &&
      found->second.rr_last.size() == is.ports.size()) {
    a.outcome = Assessment::Hit;
    a.found = &*found;
  } else if (const auto rec = recording_.find(key); rec != recording_.end() && runs_[rec->second].t0 <= a.t0) {
    a.outcome = Assessment::Follow;
    a.leader = rec->second;
  } else {
    a.outcome = Assessment::Record;
  }
  return a;
}

const std::vector<Time>* CollectiveMemo::pattern_for(
    const std::vector<std::pair<uint32_t, uint32_t>>& pairs, const std::function<const std::string&()>& plan_key,
    const std::vector<uint32_t>& member_hosts, const std::vector<Time>& issued, uint32_t flows,
    const std::function<uint32_t(uint32_t host, uint8_t kinds)>& involved, uint8_t* kinds) {
  const Assessment a = assess(pairs, plan_key, member_hosts, issued, flows, involved);
  if (a.outcome != Assessment::Hit) return nullptr;
  if (kinds) *kinds = a.is.kinds;
  return &a.found->second.finish;
}

const std::vector<Time>* CollectiveMemo::replay_timeline(int32_t h, Time* t0) const {
  if (h < 0) return nullptr;
  const Run& r = runs_.at(static_cast<uint32_t>(h));
  if (!r.replay || r.leader != UINT32_MAX || !r.entry) return nullptr;  // a follower's: known as its recording runs
  if (t0) *t0 = r.t0;
  return &r.finish;
}

int32_t CollectiveMemo::begin(const std::vector<std::pair<uint32_t, uint32_t>>& pairs,
                              const std::function<const std::string&()>& plan_key,
                              const std::vector<uint32_t>& member_hosts, const std::vector<Time>& issued,
                              uint32_t flows, const std::function<uint32_t(uint32_t host, uint8_t kinds)>& involved,
                              const std::function<Time(uint8_t kinds, Time t0, const std::vector<Time>* finish)>& quiet_until) {
  ++stats_.considered;
  Assessment a = assess(pairs, plan_key, member_hosts, issued, flows, involved);
  if (a.outcome == Assessment::NotIsland) {
    ++stats_.not_island;
    return -1;
  }
  if (a.outcome == Assessment::Busy) {
    ++stats_.busy;
    return -1;
  }
  Island& is = a.is;
  const Time t0 = a.t0;
  const bool usable = a.outcome == Assessment::Hit;
  bool follows = a.outcome == Assessment::Follow;
  // Verify mode samples followers as it samples hits: simulated packet for packet, compared with the recording.
  const bool verify_follower = follows && verify_ > 0 && verify_this_hit();
  if (verify_follower) follows = false;
  // A rail leaf carries the members' next collectives too (a layer's DP AllReduce overlaps the next
  // layers'), and any island their pipeline transfers: a replay must be over before any of them can start
  // there (a follower's end is not known yet: none may come at all).
  if (usable || follows) {
    const std::vector<Time>* fin = usable ? &a.found->second.finish : nullptr;
    const Time quiet = quiet_until(is.kinds, t0, fin);
    if (follows ? quiet != std::numeric_limits<Time>::max() : quiet < t0 + *std::max_element(fin->begin(), fin->end())) {
      ++stats_.overlaps;
      return -1;
    }
  }
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
  r.hops = std::max<uint32_t>(1, static_cast<uint32_t>(is.path_ports.size() / (2 * pairs.size())));
  r.net_id.assign(flows, UINT32_MAX);
  r.finish.assign(flows, -1);
  if (usable) {
    const auto it = a.found;
    if (verify_this_hit()) {
      r.verifying = true;
    } else {
      r.replay = true;
      r.entry = &it->second;
      r.finish = r.entry->finish;
      r.order = r.entry->order;
      ++it->second.hits;
    }
  } else if (follows) {
    // Another island is simulating this very pattern, started no later: follow its completions,
    // shifted by the difference of the start times (every server's TP group issues at once).
    r.replay = true;
    r.leader = a.leader;
    runs_[a.leader].followers.push_back(slot);
    const Run& src = runs_[a.leader];
    for (uint32_t f : src.order) r.finish[f] = src.finish[f], r.order.push_back(f);
    r.skips = src.skips;
  } else if (verify_follower) {
    r.verifying = true;
  }
  if (r.replay) {
    ++stats_.replayed;
    stats_.replayed_flows += flows;
  } else {
    r.before.reserve(is.ports.size());
    for (uint32_t p : is.ports) r.before.push_back(net_.port_state(p));
    if (!r.verifying) recording_.emplace(a.key, slot);
  }
  for (uint32_t p : is.ports) claim_[p] = static_cast<int32_t>(slot);
  r.key = std::move(a.key);
  r.island = std::move(is);
  if (r.island.shared) enter_shared(slot);
  if (r.replay) schedule_next(slot);
  return static_cast<int32_t>(slot);
}

void CollectiveMemo::released(int32_t h, uint32_t f, uint32_t id) {
  Run& r = runs_[static_cast<uint32_t>(h)];
  r.net_id[f] = id;
  // Only a recording or verifying run looks its flows up by id (its QPs, a flow starting on its
  // ports); a replay's flows never start a QP. A recording is simulated as the run simulates (fast-
  // forward may skip part of it: an approximate pattern); a verified hit packet for packet.
  if (!r.replay) {
    r.plan_of[id] = f;
    if (r.verifying) exact_.insert(id);
  }
}

void CollectiveMemo::finished(int32_t h, uint32_t f, Time skipped, uint64_t skipped_bytes) {
  const uint32_t slot = static_cast<uint32_t>(h);
  Run& r = runs_[slot];
  if (r.replay) return;  // a replay ends its flows itself (replay_due)
  exact_.erase(r.net_id[f]);
  r.finish[f] = net_.now() - r.t0;
  r.order.push_back(f);
  if (skipped > 0) {
    if (r.skips.empty()) r.skips.resize(r.finish.size());
    r.skips[f] = {skipped, skipped_bytes, net_.estimated_error_bytes(r.net_id[f])};
  }
  for (uint32_t fs : r.followers) {
    Run& w = runs_[fs];
    w.finish[f] = r.finish[f];
    w.order.push_back(f);
    if (!r.skips.empty()) {
      if (w.skips.empty()) w.skips.resize(r.finish.size());
      w.skips[f] = r.skips[f];
    }
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
    finish_replayed(slot, f);
  }
  if (runs_[slot].next < runs_[slot].finish.size()) schedule_next(slot);  // a follower may wait for more
  else if (runs_[slot].entry) end_replay(slot);
  else mark_pending(slot);  // a follower: its recording's end state is not read yet
}

void CollectiveMemo::finish_replayed(uint32_t slot, uint32_t f) {
  const Run& r = runs_[slot];
  // From its pattern, or (a follower) from its recording as it ran.
  const std::vector<FlowSkip>& skips = r.entry == nullptr || !r.skips.empty() ? r.skips : r.entry->skips;
  const uint32_t id = r.net_id[f];
  const uint64_t payload = std::max<uint64_t>(1, net_.params().payload);
  stats_.events_replayed += 4 * uint64_t(r.hops) * ((net_.flow_info(id).size + payload - 1) / payload);
  const FlowSkip s = skips.empty() ? FlowSkip{} : skips[f];
  stats_.estimated_error_bytes += s.error;
  ++replayed_ended_;
  net_.finish_replayed(id, s.time, s.bytes);
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
  if (!r.skips.empty() || (r.entry && r.entry->approximate())) ++stats_.approximate_replays;
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
  bool ok = !r.disturbed && net_.island_quiet(r.island);
  bool shifted = false;  // a fast-forward froze or shifted a port
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
    // A random draw or a pause.
    if (s.rng0 != b.rng0 || s.rng1 != b.rng1 || s.paused_total != b.paused_total) ok = false;
    shifted = shifted || s.epoch != b.epoch;
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
  // Skipped in part, the pattern is as exact as those skips; shifted with nothing credited (a skip
  // pulled back whole) it is neither exact nor measured.
  if (shifted && r.skips.empty()) ok = false;
  if (!r.skips.empty()) e.skips = r.skips, e.error_bound = error_bound_;
  const auto it = ok ? store_.find(r.key) : store_.end();
  if (it != store_.end() && !it->second.rejected && !replayable(it->second)) {
    // An approximate pattern this run may not replay (recorded under a looser bound, or this run does
    // not fast-forward): this simulation takes its place.
    if (e.approximate()) ++stats_.approximate;
    it->second = std::move(e);
    ++stats_.recorded;
  } else if (!ok) {
    ++stats_.not_kept;
  } else if (it != store_.end()) {
    // A verified hit, or the same pattern simulated on another island meanwhile (every server's TP
    // group issues at once): either way a second simulation of one key, which must agree.
    ++(r.verifying ? stats_.verified : stats_.repeats);
    if (!agrees(it->second, e, r.verifying)) ++stats_.verify_failures, it->second.rejected = true;  // never replayed again
  } else {
    if (e.approximate()) ++stats_.approximate;
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

bool CollectiveMemo::agrees(const Entry& p, const Entry& e, bool verifying) {
  if (!p.approximate() && !e.approximate()) return p == e;
  if (p.finish.size() != e.finish.size()) return false;  // a pattern of another shape (a foreign file)
  // Skips make two simulations of one key differ by their error: each completion, measured from the
  // first issue, within the bound of the one simulated now.
  double worst = 0;
  for (size_t f = 0; f < p.finish.size(); ++f)
    worst = std::max(worst, std::abs(double(p.finish[f] - e.finish[f])) / double(std::max<Time>(e.finish[f], 1)));
  if (verifying && p.approximate()) stats_.verify_max_error = std::max(stats_.verify_max_error, worst);
  return worst <= error_bound_;
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
