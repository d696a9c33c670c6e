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

const FcgCanon& Memoizer::canon_of(Record& r) const {
  if (!r.canon) r.canon = canonical_form(key_of(r));
  return *r.canon;
}

std::vector<uint32_t> Memoizer::find_leaders(const std::vector<uint32_t>& missed, const std::vector<uint8_t>& lasting,
                                             Time now) {
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
    // Followed only where its leader lasts (FastForward::follow): with no member lasting, no pairing
    // can stand, and no key need be built.
    if (std::none_of(group.begin(), group.end(), [&](const Candidate& c) { return lasting.at(c.at) != 0; })) continue;
    std::vector<const Candidate*> heads;  // simulated periods others may follow, in lookup order
    for (const Candidate& c : group) {
      const Candidate* leader = nullptr;
      std::vector<uint32_t> map;
      for (const Candidate* h : heads) {
        if (hash_of(*h->r) != hash_of(*c.r)) continue;
        if (canon_of(*c.r) == canon_of(*h->r)) {
          leader = h, map = canonical_map(canon_of(*c.r), canon_of(*h->r));
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

uint64_t Memoizer::mirrored_bytes(const Record& f, const Follow& w, const Record& l, size_t i) const {
  const uint32_t k = w.map[i];
  const uint64_t at = l.state.empty() ? l.sent_now[k] : l.state[k].snd_nxt;
  const uint64_t sent = at > l.sent[k] ? at - l.sent[k] : 0;
  const uint64_t since = f.sent_now[i] > f.sent[i] ? f.sent_now[i] - f.sent[i] : 0;
  return sent > since ? sent - since : 0;
}

Memoizer::Ready Memoizer::mirror(uint32_t fpid, const Record& f, const Follow& w, const Record& l) const {
  Ready x;
  x.release.pid = fpid;
  x.at = l.state.empty() ? l.looked_up_at : l.state_at;
  for (size_t i = 0; i < f.flows.size(); ++i) {
    const uint32_t k = w.map[i];
    const uint64_t rate = l.state.empty() ? l.rate[k] : l.state[k].rate_bps;
    x.release.replay.bytes.push_back(mirrored_bytes(f, w, l, i));
    x.on.push_back(double(rate) / 8.0 / double(kSec));
    if (!l.state.empty()) x.release.replay.cc.push_back(l.state[k]);
  }
  return x;
}

FollowerRelease Memoizer::resume_at(Ready x, Time resume) {
  // The leader's progress after its state was taken, at its rate then (at most a tick's worth).
  const double dt = double(std::max<Time>(resume - x.at, 0));
  for (size_t i = 0; i < x.on.size(); ++i) x.release.replay.bytes[i] += static_cast<uint64_t>(x.on[i] * dt);
  ++(x.release.converged ? stats_.followed : stats_.follows_cut);
  return std::move(x.release);
}

void Memoizer::drop_leader(uint32_t lpid) {
  const auto at = std::lower_bound(leaders_.begin(), leaders_.end(), lpid);
  if (at != leaders_.end() && *at == lpid) leaders_.erase(at);
}

void Memoizer::let_go(Record& l, uint32_t fpid) {
  auto w = follows_.find(fpid);
  auto f = open_.find(fpid);
  if (w != follows_.end() && f != open_.end()) ready_.push_back(mirror(fpid, f->second, w->second, l));
  if (w != follows_.end()) follows_.erase(w);
}

void Memoizer::orphan(Record& l, uint32_t lpid) {
  for (uint32_t fpid : l.followers) let_go(l, fpid);
  l.followers.clear();
  l.state.clear();
  drop_leader(lpid);
}

void Memoizer::release_outrun(Record& l, uint32_t lpid) {
  // A follower's flows may be shorter than the leader's (sizes are not in the pattern): one whose
  // credit could pass its room (bytes left before its guard, at its hold) by the next tick resumes now,
  // from the leader's state now, and ends simulated.
  std::vector<uint32_t> out;
  for (uint32_t fpid : l.followers) {
    auto w = follows_.find(fpid);
    auto f = open_.find(fpid);
    if (w == follows_.end() || f == open_.end()) continue;
    for (size_t i = 0; i < f->second.flows.size(); ++i) {
      const uint32_t lead = l.flows[w->second.map[i]];
      const double next = double(net_.flow(lead).max_rate_bps) / 8.0 / double(kSec) * double(ff_.sample_interval()) +
                          net_.params().payload;
      if (double(mirrored_bytes(f->second, w->second, l, i)) + next > ff_.credit_room(f->second.flows[i])) {
        out.push_back(fpid);
        break;
      }
    }
  }
  for (uint32_t fpid : out) {
    let_go(l, fpid);
    std::erase(l.followers, fpid);
  }
  if (l.followers.empty()) l.state.clear(), drop_leader(lpid);
}

void Memoizer::release_converged(Record& l, uint32_t lpid, const MemoValue& v, Time now) {
  for (uint32_t fpid : l.followers) {
    auto w = follows_.find(fpid);
    auto f = open_.find(fpid);
    if (w == follows_.end() || f == open_.end()) continue;
    // Its leader's period from the follower's own start: it started with its leader, so its period
    // ends now too (duration 0). Not a stored pattern's: followers are never verified.
    Ready x;
    x.release = {fpid, replay_of(f->second, v, kNoPattern, w->second.map, now), true};
    x.at = now;
    ready_.push_back(std::move(x));
    follows_.erase(w);
    open_.erase(f);  // replayed: not recorded
  }
  l.followers.clear();
  drop_leader(lpid);
}

std::vector<FollowerRelease> Memoizer::releases(Time now) {
  std::vector<FollowerRelease> out;
  for (Ready& x : ready_) out.push_back(resume_at(std::move(x), now));
  ready_.clear();
  return out;
}

Replay Memoizer::release_early(uint32_t pid, Time resume) {
  if (auto w = follows_.find(pid); w != follows_.end()) {
    auto l = open_.find(w->second.leader);
    auto f = open_.find(pid);
    if (l == open_.end() || f == open_.end()) {
      follows_.erase(w);
      return {};
    }
    let_go(l->second, pid);  // queued, then taken back below
    std::erase(l->second.followers, pid);
    if (l->second.followers.empty()) l->second.state.clear(), drop_leader(l->first);
  }
  // Released by its leader (a change of the leader's, or at a tick), not yet handed over.
  for (auto it = ready_.begin(); it != ready_.end(); ++it)
    if (it->release.pid == pid) {
      Ready x = std::move(*it);
      ready_.erase(it);
      // (A converged release is handed over in the tick that made it, before anything can disturb
      // the follower: not here.)
      return resume_at(std::move(x), resume).replay;
    }
  return {};
}

}  // namespace wh
