// Memoization of unsteady periods: recording and replay (see memoizer.h).
#include "wormhole/memo/memoizer.h"

#include <algorithm>

namespace wh {

uint64_t memo_namespace(const std::string& description) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : description) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

Memoizer::Memoizer(Network& net, FastForward& ff, MemoDb& db, uint64_t ns, uint64_t rate_quantum_bps)
    : net_(net), ff_(ff), db_(db), ns_(ns), quantum_(rate_quantum_bps) {
  ff_.set_period_observer(this);
}

Memoizer::~Memoizer() { ff_.set_period_observer(nullptr); }

const Fcg& Memoizer::key_of(Record& r) const {
  if (r.key) return *r.key;
  std::vector<FcgFlow> v;
  v.reserve(r.flows.size());
  for (size_t i = 0; i < r.flows.size(); ++i) {
    const Flow& fl = net_.flow(r.flows[i]);
    FcgFlow f;
    f.ports = ff_.partitions().flow_ports(r.flows[i]);  // membership (so routes) unchanged since the start
    f.rate_bps = r.rate[i];
    f.fresh = r.sent[i] == 0;
    f.line_bps = fl.max_rate_bps;
    f.rtt_ns = static_cast<uint64_t>(fl.base_rtt / kNs);
    f.bottleneck_bps = UINT64_MAX;
    for (uint32_t p : f.ports) f.bottleneck_bps = std::min(f.bottleneck_bps, net_.ports()[p].rate_bps);
    v.push_back(std::move(f));
  }
  r.key = make_fcg(v, quantum_);
  return *r.key;
}

void Memoizer::period_started(uint32_t pid, Time now) {
  ++stats_.periods;
  Record& r = open_[pid];  // an earlier, unconverged period of pid is void
  r.flows = ff_.partitions().flows(pid);
  r.sent.clear();
  r.rate.clear();
  for (uint32_t id : r.flows) {
    r.sent.push_back(net_.flow(id).snd_nxt);
    r.rate.push_back(net_.flow(id).rate_bps);
  }
  r.start = now;
  r.key.reset();
  r.hit.reset();
}

std::optional<Replay> Memoizer::find_replay(uint32_t pid, Time now) {
  auto it = open_.find(pid);
  if (it == open_.end()) return std::nullopt;
  Record& r = it->second;
  if (ff_.partitions().flows(pid) != r.flows || !db_.store.may_hold(ns_, r.flows.size())) return std::nullopt;
  r.hit = db_.store.lookup(ns_, key_of(r), now);
  if (!r.hit) return std::nullopt;
  const MemoValue& v = r.hit->entry->value;
  // The period started at r.start; what happened since is simulated already.
  Replay p;
  p.duration = v.duration - (now - r.start);
  for (size_t i = 0; i < r.flows.size(); ++i) {
    const uint32_t k = r.hit->map[i];
    const uint64_t now_sent = net_.flow(r.flows[i]).snd_nxt;
    const uint64_t since = now_sent > r.sent[i] ? now_sent - r.sent[i] : 0;
    p.bytes.push_back(v.bytes[k] > since ? v.bytes[k] - since : 0);
    p.goodput.push_back(v.goodput[k]);
    p.cc.push_back(v.cc[k]);
  }
  return p;
}

void Memoizer::replay_done(uint32_t pid, bool applied) {
  auto it = open_.find(pid);
  if (it == open_.end() || !it->second.hit) return;
  ++stats_.hits;
  if (!applied) return;  // simulated instead, and recorded as a repeat when it converges
  ++stats_.replayed;
  MemoStore::count_hit(*it->second.hit);
  open_.erase(it);
}

void Memoizer::period_converged(uint32_t pid, Time now) {
  auto it = open_.find(pid);
  if (it == open_.end()) return;
  Record r = std::move(it->second);
  open_.erase(it);
  // A period only counts if the partition still holds exactly its flows (ids were reused otherwise).
  if (ff_.partitions().flows(pid) != r.flows) return;
  key_of(r);
  ++stats_.converged;
  MemoValue v;
  v.duration = now - r.start;
  for (size_t i = 0; i < r.flows.size(); ++i) {
    const Flow& f = net_.flow(r.flows[i]);
    v.bytes.push_back(f.snd_nxt > r.sent[i] ? f.snd_nxt - r.sent[i] : 0);  // less after a go-back-N rewind
    v.end_rate_bps.push_back(f.rate_bps);
    v.goodput.push_back(ff_.goodput(r.flows[i]));
    CcSnapshot cc = snapshot_cc(f, now);
    make_cc_portable(cc.cc);
    v.cc.push_back(cc);
  }
  if (db_.store.insert(ns_, std::move(*r.key), std::move(v), now).second) ++stats_.inserted;
  else ++stats_.repeated;
}

}  // namespace wh
