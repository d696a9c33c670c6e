// Memoization of unsteady periods: recording and replay (see memoizer.h).
#include "wormhole/memo/memoizer.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "cc_codec.h"

namespace wh {

namespace {

// What one rank's shard found or stored, as bytes for the tick exchange (TickExchange::gather).
struct Bytes {
  std::vector<uint8_t> b;
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    b.insert(b.end(), p, p + sizeof v);
  }
  template <class T>
  void put_all(const std::vector<T>& v) {
    put(uint64_t(v.size()));
    for (const T& x : v) put(x);
  }
  void put_cc(const std::vector<CcSnapshot>& cc) {  // through the memo file's rows: the same bits
    put(uint64_t(cc.size()));
    for (const CcSnapshot& c : cc) put(encode_cc(c));
  }
};

struct Reader {
  const std::vector<uint8_t>& b;
  size_t at = 0;
  bool done() const { return at >= b.size(); }
  template <class T>
  T get() {
    if (at + sizeof(T) > b.size()) throw std::runtime_error("memo exchange: a record is cut short");
    T v;
    std::memcpy(&v, b.data() + at, sizeof v);
    at += sizeof v;
    return v;
  }
  template <class T>
  std::vector<T> get_all() {
    std::vector<T> v(get<uint64_t>());
    for (T& x : v) x = get<T>();
    return v;
  }
  std::vector<CcSnapshot> get_cc() {
    std::vector<CcSnapshot> v(get<uint64_t>());
    for (CcSnapshot& c : v) c = decode_cc(get<CcRow>());
    return v;
  }
};

void put_replay(Bytes& out, const Replay& r) {
  out.put(r.duration), out.put(r.pattern), out.put_all(r.bytes), out.put_all(r.goodput), out.put_cc(r.cc);
  out.put_all(r.trend), out.put_all(r.trend_age);
}

Replay get_replay(Reader& in) {
  Replay r;
  r.duration = in.get<Time>(), r.pattern = in.get<uint64_t>();
  r.bytes = in.get_all<uint64_t>(), r.goodput = in.get_all<double>(), r.cc = in.get_cc();
  r.trend = in.get_all<double>(), r.trend_age = in.get_all<Time>();
  return r;
}

}  // namespace

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
  patterns_built_.fetch_add(1, std::memory_order_relaxed);
  std::vector<FcgFlow> v;
  v.reserve(r.flows.size());
  for (size_t i = 0; i < r.flows.size(); ++i) {
    const Flow& fl = net_.flow(r.flows[i]);
    FcgFlow f;
    // Membership (so routes and couplings) unchanged since the start: its partition ports are its
    // data path and the ACK ports that couple it.
    const std::vector<uint32_t> data = net_.data_path(r.flows[i]);
    for (uint32_t p : ff_.partitions().flow_ports(r.flows[i]))
      (std::find(data.begin(), data.end(), p) != data.end() ? f.ports : f.acks).push_back(p);
    f.rate_bps = r.rate[i];
    f.fresh = r.sent[i] == 0;
    f.line_bps = fl.max_rate_bps;
    f.rtt_ns = static_cast<uint64_t>(fl.base_rtt / kNs);
    f.hops = static_cast<uint32_t>(data.size());
    f.bottleneck_bps = UINT64_MAX;
    for (uint32_t p : data) f.bottleneck_bps = std::min(f.bottleneck_bps, net_.links()[p].rate_bps);
    v.push_back(std::move(f));
  }
  r.key = make_fcg(v, quantum_);
  return *r.key;
}

void Memoizer::period_started(uint32_t pid, Time now) {
  ++stats_.periods;
  Record& r = open_[pid];  // an earlier, unconverged period of pid is void
  // Its followers resume from the leader's state at the last tick, carried on to when they do.
  if (!r.followers.empty()) orphan(r, pid);
  r.hash.reset();
  r.canon.reset();
  r.flows = ff_.partitions().flows(pid);
  // The flows' bytes sent and rates now are read at the next tick (FastForward::period_start keeps
  // them as they were if they move before it): most periods of a large partition end before a tick,
  // and reading every flow's state at each start cost a pass over the partition per flow start and end.
  r.epoch = ff_.period_epoch(pid);
  r.sent.clear();
  r.rate.clear();
  r.start = now;
  if (!r.pending) starting_.push_back(pid), r.pending = true;
  r.begun = false;
  r.key.reset();
  r.hit.reset();
  r.hit_elsewhere = false;
  r.sought = false;
}

void Memoizer::set_shard(uint32_t rank, uint32_t ranks) {
  ranks_ = std::max<uint32_t>(ranks, 1);
  rank_ = rank % ranks_;
  db_.store.keep_shard(rank_, ranks_);
}

void Memoizer::mark(uint32_t m) {
  marks_.resize(m);  // marks count from 0 after each tick
  marks_.push_back(stats_);
}

void Memoizer::rewind(uint32_t m) { stats_ = marks_.at(m); }

void Memoizer::tick(Time now) {
  if (!leaders_.empty()) snapshot_leaders(now);
  if (starting_.empty()) return;
  // The periods started since the last tick, which this tick looks up: their flows' start values
  // and what they have sent by now. Every rank has the same starting_ (its calls are the
  // controller's, alike everywhere); each gives the flows it sends, 0 for the others, so the sums
  // are the values (exact in doubles below 2^53).
  struct Start {  // a period's flow, from its sender's rank (0 from the others)
    double sent;     // bytes it had sent at the period's start
    double rate;     // its CC rate then, bit/s
    double snd_nxt;  // its snd_nxt now, bytes
  };
  std::vector<Record*> recs;
  std::vector<Start> v;
  for (uint32_t pid : starting_) {
    auto it = open_.find(pid);
    if (it == open_.end() || !it->second.pending) continue;
    Record& r = it->second;
    r.pending = false;
    recs.push_back(&r);
    // Each rank gives the flows it sends (0 for the others).
    for (uint32_t id : r.flows) {
      const Flow& f = net_.flow(id);
      if (!net_.owns_node(f.src)) {
        v.push_back({0.0, 0.0, 0.0});
        continue;
      }
      const auto [sent, rate] = ff_.period_start(id, r.epoch);
      v.push_back({double(sent), double(rate), double(f.snd_nxt)});
    }
  }
  starting_.clear();
  if (TickExchange* x = ff_.exchange(); x && !v.empty()) x->sum_rows(v);
  size_t j = 0;
  for (Record* r : recs) {
    r->sent_now.clear();
    r->sent.resize(r->flows.size());
    r->rate.resize(r->flows.size());
    for (size_t i = 0; i < r->flows.size(); ++i, ++j) {
      r->sent[i] = static_cast<uint64_t>(v[j].sent);
      r->rate[i] = static_cast<uint64_t>(v[j].rate);
      r->sent_now.push_back(static_cast<uint64_t>(v[j].snd_nxt));
    }
    r->begun = true;
    r->looked_up_at = now;
  }
}

void Memoizer::snapshot_leaders(Time now) {
  // Every rank alike (leaders_ is decided at ticks): a leader whose partition changed or died
  // without a new period of its id releases its followers; the others' state is taken for them.
  const std::vector<uint32_t> leaders = leaders_;
  std::vector<std::pair<uint32_t, Record*>> live;
  for (uint32_t lpid : leaders) {
    auto it = open_.find(lpid);
    if (it == open_.end()) continue;
    Record& l = it->second;
    if (!ff_.partitions().live(lpid) || ff_.partitions().flows(lpid) != l.flows) {
      orphan(l, lpid);
      continue;
    }
    live.emplace_back(lpid, &l);
  }
  // A held flow cannot end, nor can what its end releases start: followers resume while every
  // leader flow is more than its end game away (FastForward::end_game), so that the leader's and the
  // followers' last packets are simulated alike. Bytes left are known to the senders' ranks only.
  std::vector<double> near(live.size(), 0.0);
  for (size_t i = 0; i < live.size(); ++i)
    for (uint32_t id : live[i].second->flows) {
      if (!net_.owns_node(net_.flow_info(id).src)) continue;
      const Flow& f = net_.flow(id);
      if (double(f.bytes_left()) < ff_.end_game(f)) near[i] = 1;
    }
  if (TickExchange* x = ff_.exchange(); x && !near.empty()) x->sum(near);
  for (size_t i = 0; i < live.size(); ++i) {
    Record& l = *live[i].second;
    l.state = snapshots(l.flows, now);
    l.state_at = now;
    if (near[i] > 0) orphan(l, live[i].first);
    else release_outrun(l, live[i].first);
  }
}

std::vector<CcSnapshot> Memoizer::snapshots(const std::vector<uint32_t>& flows, Time now) const {
  std::vector<CcSnapshot> out(flows.size());
  TickExchange* x = ff_.exchange();
  Bytes bytes;  // (vertex, row) records of the flows this rank sends
  for (size_t i = 0; i < flows.size(); ++i) {
    const Flow& f = net_.flow(flows[i]);
    if (!net_.owns_node(f.src)) continue;
    CcSnapshot snap = snapshot_cc(f, now);
    make_cc_portable(snap.cc);
    // Through the memo file's row, in one process too: what is stored is then the same bits
    // whichever rank took it (and what a warm start reads back).
    const CcRow row = encode_cc(snap);
    out[i] = decode_cc(row);
    if (x) bytes.put(static_cast<uint32_t>(i)), bytes.put(row);
  }
  if (!x) return out;
  x->gather(bytes.b);
  for (Reader in{bytes.b}; !in.done();) {
    const uint32_t k = in.get<uint32_t>();
    out.at(k) = decode_cc(in.get<CcRow>());
  }
  return out;
}

std::optional<Replay> Memoizer::find_replay(uint32_t pid, Time now) {
  auto it = open_.find(pid);
  if (it == open_.end()) return std::nullopt;
  Record& r = it->second;
  // Looked up at the first tick after its start, where tick() just took what it sent since.
  if (!r.begun || r.looked_up_at != now) return std::nullopt;
  if (ff_.partitions().flows(pid) != r.flows || !db_.store.may_hold(ns_, r.flows.size())) return std::nullopt;
  r.sought = true;
  if (!mine(r)) return std::nullopt;  // its shard's rank looks it up (lookups_done)
  r.hit = db_.store.lookup(ns_, key_of(r), now);
  if (!r.hit) return std::nullopt;
  return replay_of(r, r.hit->entry->value, name_of(*r.hit->entry), r.hit->map, now);
}

void Memoizer::lookups_done(const std::vector<uint32_t>& pids, std::vector<std::optional<Replay>>& found) {
  TickExchange* x = ff_.exchange();
  if (!x || ranks_ <= 1) return;
  // Only patterns the store may hold were looked up: if none was, no rank found anything.
  if (std::none_of(pids.begin(), pids.end(), [&](uint32_t pid) {
        auto it = open_.find(pid);
        return it != open_.end() && it->second.sought;
      }))
    return;
  Bytes out;
  for (size_t i = 0; i < pids.size(); ++i)
    if (found[i]) out.put(uint32_t(i)), put_replay(out, *found[i]);
  x->gather(out.b);
  Reader in{out.b};
  while (!in.done()) {
    const uint32_t i = in.get<uint32_t>();
    Replay r = get_replay(in);
    if (found.at(i)) continue;  // this rank's own
    found[i] = std::move(r);
    open_.at(pids[i]).hit_elsewhere = true;
  }
}

Replay Memoizer::replay_of(const Record& r, const MemoValue& v, uint64_t name, const std::vector<uint32_t>& map,
                           Time now) const {
  // The period started at r.start; what happened since is simulated already.
  Replay p;
  p.pattern = name;
  p.duration = v.duration - (now - r.start);
  for (size_t i = 0; i < r.flows.size(); ++i) {
    const uint32_t k = map[i];
    const uint64_t since = r.sent_now[i] > r.sent[i] ? r.sent_now[i] - r.sent[i] : 0;
    p.bytes.push_back(v.bytes[k] > since ? v.bytes[k] - since : 0);
    p.goodput.push_back(v.goodput[k]);
    p.cc.push_back(v.cc[k]);
    p.trend.push_back(v.trend[k]);
    p.trend_age.push_back(v.trend_age[k]);
  }
  return p;
}

void Memoizer::replay_done(uint32_t pid, bool applied) {
  auto it = open_.find(pid);
  if (it == open_.end() || (!it->second.hit && !it->second.hit_elsewhere)) return;
  ++stats_.hits;
  if (!applied) return;  // simulated instead, and recorded as a repeat when it converges
  ++stats_.replayed;
  if (it->second.hit) MemoStore::count_hit(*it->second.hit);  // on the pattern's shard
  open_.erase(it);
}

void Memoizer::reject_pattern(uint64_t pattern) {
  if (!rejected_.insert(pattern).second) return;
  ++stats_.rejected;
  if ((pattern >> kRankShift) == rank_) db_.store.entry(pattern & ((1ull << kRankShift) - 1)).rejected = true;
}

void Memoizer::period_converged(uint32_t pid, Time now) {
  auto it = open_.find(pid);
  if (it == open_.end()) return;
  Record r = std::move(it->second);
  open_.erase(it);
  // A period only counts if it began and the partition still holds exactly its flows (ids were
  // reused otherwise).
  if (!r.begun || ff_.partitions().flows(pid) != r.flows) {
    if (!r.followers.empty()) orphan(r, pid);
    return;
  }
  key_of(r);
  ++stats_.converged;
  const std::vector<CcSnapshot> cc = snapshots(r.flows, now);  // every rank alike: collective
  MemoValue v;
  v.duration = now - r.start;
  for (size_t i = 0; i < r.flows.size(); ++i) {
    v.bytes.push_back(cc[i].snd_nxt > r.sent[i] ? cc[i].snd_nxt - r.sent[i] : 0);  // less after a go-back-N rewind
    v.end_rate_bps.push_back(cc[i].rate_bps);
    v.goodput.push_back(ff_.goodput(r.flows[i]));
    // A trend holds at the middle of its goodput's span, inside the period (0 and no age when none was measured).
    const double trend = ff_.trend(r.flows[i]);
    v.trend.push_back(trend);
    v.trend_age.push_back(trend > 0 ? std::clamp<Time>(now - ff_.trend_at(r.flows[i]), 0, v.duration) : 0);
    v.cc.push_back(cc[i]);
  }
  // Followers were held for exactly this period: they replay its own values (alike on every rank),
  // through their maps to its flows, whether its pattern is new or a repeat. (A repeat's stored entry
  // lists its flows in its own order and spans its own duration.)
  if (!r.followers.empty()) release_converged(r, pid, v, now);
  if (mine(r)) {
    const auto [entry, fresh] = db_.store.insert(ns_, std::move(*r.key), std::move(v), now);
    ++(fresh ? stats_.inserted : stats_.repeated);
  } else {
    db_.store.note_size(ns_, r.flows.size());  // held by its shard's rank
  }
}

}  // namespace wh
