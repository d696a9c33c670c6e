// Memoization of unsteady periods: followers, periods held while an isomorphic one that started no
// later is simulated (see memoizer.h).
#include <algorithm>
#include <map>

#include "wormhole/memo/memoizer.h"

namespace wh {

uint64_t Memoizer::hash_of(Record& r) const {
  if (!r.hash) r.hash = wl_hash(key_of(r));
  return *r.hash;
}

std::vector<uint32_t> Memoizer::find_leaders(const std::vector<uint32_t>& missed, Time now) {
  std::vector<uint32_t> out(missed.size(), UINT32_MAX);
  // Candidates by start and flow count: this tick's missed periods (looked up now, membership
  // unchanged). A follower mirrors its leader in time — it resumes from the leader's state at the same
  // time since their common start — so only periods that started at the same instant pair up. Keys are
  // built only where two meet.
  struct Candidate {
    uint32_t pid;
    Record* r;
    size_t at;  // index into `missed`
  };
  std::map<std::pair<Time, size_t>, std::vector<Candidate>> groups;
  for (size_t i = 0; i < missed.size(); ++i) {
    auto it = open_.find(missed[i]);
    if (it == open_.end()) continue;
    Record& r = it->second;
    if (!r.begun || r.looked_up_at != now || r.flows.empty() || ff_.partitions().flows(missed[i]) != r.flows) continue;
    groups[{r.start, r.flows.size()}].push_back({missed[i], &r, i});
  }
  for (auto& [start_size, group] : groups) {
    if (group.size() < 2) continue;
    std::vector<const Candidate*> heads;  // simulated periods others may follow, in lookup order
    for (const Candidate& c : group) {
      const Candidate* leader = nullptr;
      std::vector<uint32_t> map;
      for (const Candidate* h : heads) {
        if (hash_of(*h->r) != hash_of(*c.r)) continue;
        if (auto m = isomorphism(key_of(*c.r), key_of(*h->r))) {
          leader = h, map = std::move(*m);
          break;
        }
      }
      if (!leader) {
        heads.push_back(&c);
        continue;
      }
      out[c.at] = leader->pid;
      follows_[c.pid] = Follow{leader->pid, std::move(map)};
    }
  }
  return out;
}

void Memoizer::follow_done(uint32_t pid, bool held) {
  auto it = follows_.find(pid);
  if (it == follows_.end()) return;
  if (!held) {
    follows_.erase(it);
    return;
  }
  const uint32_t lpid = it->second.leader;
  open_.at(lpid).followers.push_back(pid);
  const auto at = std::lower_bound(leaders_.begin(), leaders_.end(), lpid);
  if (at == leaders_.end() || *at != lpid) leaders_.insert(at, lpid);
}

Replay Memoizer::mirror(const Record& f, const Follow& w, const Record& l, Time resume) const {
  Replay p;
  const Time since_state = l.state.empty() ? resume - l.looked_up_at : resume - l.state_at;
  for (size_t i = 0; i < f.flows.size(); ++i) {
    const uint32_t k = w.map[i];
    const uint64_t at = l.state.empty() ? l.sent_now[k] : l.state[k].snd_nxt;
    const uint64_t rate = l.state.empty() ? l.rate[k] : l.state[k].rate_bps;
    // The leader's progress after the state was taken, at its rate then (at most one tick's worth).
    const uint64_t on = static_cast<uint64_t>(double(rate) / 8.0 * double(std::max<Time>(since_state, 0)) / double(kSec));
    const uint64_t sent = (at > l.sent[k] ? at - l.sent[k] : 0) + on;
    const uint64_t since = f.sent_now[i] > f.sent[i] ? f.sent_now[i] - f.sent[i] : 0;
    p.bytes.push_back(sent > since ? sent - since : 0);
    if (!l.state.empty()) p.cc.push_back(l.state[k]);
  }
  return p;
}

void Memoizer::drop_leader(uint32_t lpid) {
  const auto at = std::lower_bound(leaders_.begin(), leaders_.end(), lpid);
  if (at != leaders_.end() && *at == lpid) leaders_.erase(at);
}

void Memoizer::orphan(Record& l, uint32_t lpid, Time resume) {
  for (uint32_t fpid : l.followers) {
    auto w = follows_.find(fpid);
    auto f = open_.find(fpid);
    if (w == follows_.end() || f == open_.end()) continue;
    ready_.push_back({fpid, mirror(f->second, w->second, l, resume), false});
    follows_.erase(w);
  }
  l.followers.clear();
  l.state.clear();
  drop_leader(lpid);
}

void Memoizer::release_converged(Record& l, uint32_t lpid, const MemoValue& v, Time now) {
  for (uint32_t fpid : l.followers) {
    auto w = follows_.find(fpid);
    auto f = open_.find(fpid);
    if (w == follows_.end() || f == open_.end()) continue;
    // find_replay's replay, as if the pattern had been known at the follower's lookup.
    const Record& r = f->second;
    Replay p;
    p.duration = std::max<Time>(v.duration - (now - r.start), 0);
    for (size_t i = 0; i < r.flows.size(); ++i) {
      const uint32_t k = w->second.map[i];
      const uint64_t since = r.sent_now[i] > r.sent[i] ? r.sent_now[i] - r.sent[i] : 0;
      p.bytes.push_back(v.bytes[k] > since ? v.bytes[k] - since : 0);
      p.goodput.push_back(v.goodput[k]);
      p.cc.push_back(v.cc[k]);
      p.trend.push_back(v.trend[k]);
      p.trend_age.push_back(v.trend_age[k]);
    }
    ready_.push_back({fpid, std::move(p), true});
    follows_.erase(w);
    open_.erase(f);  // replayed: not recorded
  }
  l.followers.clear();
  drop_leader(lpid);
}

std::vector<FollowerRelease> Memoizer::releases(Time) {
  std::vector<FollowerRelease> out;
  out.swap(ready_);
  for (const FollowerRelease& r : out) ++(r.converged ? stats_.followed : stats_.follows_cut);
  return out;
}

Replay Memoizer::release_early(uint32_t pid, Time resume) {
  if (auto w = follows_.find(pid); w != follows_.end()) {
    Replay p;
    auto l = open_.find(w->second.leader);
    auto f = open_.find(pid);
    if (l != open_.end() && f != open_.end()) {
      p = mirror(f->second, w->second, l->second, resume);
      std::erase(l->second.followers, pid);
      if (l->second.followers.empty()) l->second.state.clear(), drop_leader(w->second.leader);
    }
    follows_.erase(w);
    ++stats_.follows_cut;
    return p;
  }
  // Already released by its leader (ended at this tick), not yet handed over: taken from there.
  for (auto it = ready_.begin(); it != ready_.end(); ++it)
    if (it->pid == pid) {
      Replay p = std::move(it->replay);
      if (it->converged) p.goodput.clear(), p.trend.clear(), p.trend_age.clear();
      ready_.erase(it);
      ++stats_.follows_cut;
      return p;
    }
  return {};
}

}  // namespace wh
