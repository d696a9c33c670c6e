// Memoization of a run's unsteady periods (the Wormhole paper: memoization): record them into a memo store,
// replay the ones whose pattern is known.
#pragma once
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <set>
#include <unordered_map>
#include <vector>

#include "wormhole/ffwd/fast_forward.h"
#include "wormhole/memo/memo_file.h"

namespace wh {

/// What the memoizer did in a run.
struct MemoStats {
  uint64_t periods = 0;     ///< unsteady periods started
  uint64_t converged = 0;   ///< of which simulated to convergence with their membership unchanged
  uint64_t inserted = 0;    ///< new patterns (a distributed run: those of this rank's shard; the run sums them)
  uint64_t repeated = 0;    ///< converged periods whose pattern was already in the store (likewise)
  uint64_t hits = 0;        ///< periods whose starting pattern was found in the store
  uint64_t replayed = 0;    ///< of which replayed (the rest refused by the controller, then simulated)
  uint64_t rejected = 0;    ///< patterns verify mode found replaying wrongly (never replayed again)
  uint64_t followed = 0;    ///< periods held beside an isomorphic one started at the same instant, then replayed from it
  uint64_t follows_cut = 0; ///< held periods released before their leader converged (from its last tick's state)
};

/// The memoization of unsteady periods (the Wormhole paper: memoization): observes `ff`'s partitions
/// (attaches itself with set_period_observer; detaches on destruction), with the store `db.store`
/// under namespace `ns`.
/// - At a period's start it takes what FCG_start needs — the flows, their rates and snd_nxt (each
///   rank those of the flows it sends; the next tick, where ranks meet, completes them); the
///   graph itself (labels: rate quantised by `rate_quantum_bps`, bottleneck = the slowest egress
///   port of the data path, NIC line rate, base RTT, hops, fresh = sent nothing yet) is built from
///   them when a lookup may find something or the period converges.
/// - At the next tick (find_replay, on oneTBB threads from parallel_min_flows flows) it looks the
///   FCG up; a hit visible at that time becomes a Replay mapped through the isomorphism: the
///   remaining duration, the bytes each flow sent in the recorded period less what it sent since
///   the start, its goodput and CC state at convergence. Sent, not acknowledged, bytes: the
///   packets a flow has in flight at the start are shifted, not re-created, so crediting what the
///   recorded flow sent makes the flow's last byte leave when it would have (crediting
///   acknowledged bytes would lose the pipe's content, about one RTT of sending, on a fresh flow).
///   A replayed period is not recorded.
/// - When a simulated period converges with its membership unchanged it inserts FCG_start →
///   (duration, bytes each flow sent, rates, goodputs and portable CC snapshots at convergence);
///   a period whose membership changed first is void.
/// - Periods that start alike at once (the DP rings of several rails starting one step together) and
///   find nothing: each one whose pattern is isomorphic to one started at the same instant and
///   simulated (its leader) is held instead (find_leaders); when the leader converges the follower
///   is replayed from it exactly as a later lookup would have; when the leader's period ends first, or
///   the follower is disturbed, the follower resumes from the leader's state at the last tick (bytes
///   sent and CC state, taken at every tick while it has followers).
/// Entries already in `db` (a warm start from a memo file) are hit like the run's own.
/// A distributed run shards the store over its ranks (set_shard): every rank follows every period
/// and builds its pattern alike, but only the pattern's shard (MemoStore::shard_of) looks it up,
/// inserts it and counts its hits; the replays it finds go to every rank through the controller's
/// TickExchange (lookups_done), so every rank decides alike.
class Memoizer final : public PeriodObserver {
 public:
  Memoizer(Network& net, FastForward& ff, MemoDb& db, uint64_t ns, uint64_t rate_quantum_bps);
  ~Memoizer() override;
  Memoizer(const Memoizer&) = delete;
  Memoizer& operator=(const Memoizer&) = delete;

  void period_started(uint32_t pid, Time now) override;
  void tick(Time now) override;
  void period_converged(uint32_t pid, Time now) override;
  std::optional<Replay> find_replay(uint32_t pid, Time now) override;
  void replay_done(uint32_t pid, bool applied) override;
  void reject_pattern(uint64_t pattern) override;
  void lookups_done(const std::vector<uint32_t>& pids, std::vector<std::optional<Replay>>& found) override;
  /// This rank's share of a distributed run: `db`'s entries of shard `rank` of `ranks` are kept,
  /// the others dropped (a warm start's file is read whole by every rank), and from now on only
  /// that shard's patterns are looked up, inserted and counted here. Call before the run.
  void set_shard(uint32_t rank, uint32_t ranks);
  std::vector<uint32_t> find_leaders(const std::vector<uint32_t>& missed, const std::vector<uint8_t>& lasting,
                                     Time now) override;
  void follow_done(uint32_t pid, bool held) override;
  std::vector<FollowerRelease> releases(Time now) override;
  Replay release_early(uint32_t pid, Time resume) override;
  void mark(uint32_t m) override;
  void rewind(uint32_t m) override;
  const MemoStats& stats() const { return stats_; }
  /// Patterns (FCGs) built from periods so far, for lookups, leaders and convergences: a cost, not an
  /// outcome (a period's pattern is built once, when first needed).
  uint64_t patterns_built() const { return patterns_built_.load(std::memory_order_relaxed); }

 private:
  // What FCG_start needs, taken at the period's start; the graph itself is built only when a
  // lookup may find something or the period converges (most periods of a TP-heavy run do neither).
  struct Record {
    std::vector<uint32_t> flows;    // vertex i = flows[i]
    std::vector<uint64_t> sent;     // snd_nxt at the start (0: fresh), from its tick on (begun)
    std::vector<uint64_t> rate;     // rate at the start, bit/s, from its tick on (begun)
    Time start = 0;
    uint64_t epoch = 0;             // the partition's reset that started it (FastForward::period_epoch)
    std::vector<uint64_t> sent_now; // snd_nxt at the tick after the start (its lookup)
    Time looked_up_at = -1;         // that tick
    bool begun = false;             // its tick came: sent and rate are every rank's
    bool pending = false;           // in starting_
    std::optional<Fcg> key;
    std::optional<MemoHit> hit;     // set by find_replay (on the pattern's shard)
    bool hit_elsewhere = false;     // another rank's shard found it (lookups_done)
    bool sought = false;            // looked up (the store may hold its size): find_replay
    std::optional<uint64_t> hash;   // wl_hash of the key (find_leaders)
    std::optional<FcgCanon> canon;  // its canonical form (find_leaders, where hashes meet)
    std::vector<uint32_t> followers;  // held partitions following this period (it is their leader)
    std::vector<CcSnapshot> state;  // a leader's flows at the last tick (snd_nxt, CC), every rank's
    Time state_at = 0;              // that tick
  };
  const Fcg& key_of(Record& r) const;
  uint64_t hash_of(Record& r) const;
  const FcgCanon& canon_of(Record& r) const;
  /// The replay of a pattern's value `v` (named `name`) for the period of `r` (its flow i is the
  /// value's vertex map[i]) looked up `now` (ps): the rest of the recorded period, its bytes less
  /// what each flow sent since r.start.
  Replay replay_of(const Record& r, const MemoValue& v, uint64_t name, const std::vector<uint32_t>& map, Time now) const;
  /// The name of entry `e` of this rank's shard: alike on every rank (Replay::pattern).
  uint64_t name_of(const MemoEntry& e) const { return (uint64_t(rank_) << kRankShift) | e.id; }
  static constexpr int kRankShift = 48;  // a name's rank bits: above any store's entry count
  /// Whether `r`'s pattern is in this rank's shard of the store (MemoStore::shard_of).
  bool mine(Record& r) const {
    if (ranks_ <= 1) return true;
    const Fcg& k = key_of(r);
    return MemoStore::shard_of(ns_, k.vertices(), k.edges.size(), hash_of(r), ranks_) == rank_;
  }
  /// Replay::pattern of a replay that is no stored pattern's (a follower's).
  static constexpr uint64_t kNoPattern = UINT64_MAX;
  struct Follow {
    uint32_t leader = 0;
    std::vector<uint32_t> map;  // follower vertex i -> leader vertex
  };
  /// A follower released from its leader's state, bytes as of `at` (ps), carried on at `on` (bytes/ps
  /// per flow) to the time it resumes.
  struct Ready {
    FollowerRelease release;
    std::vector<double> on;
    Time at = 0;
  };
  /// Follower `fpid` (record `f`) from leader `l`'s state at the last tick (its lookup's values
  /// before one was taken): the bytes `l` sent since its start less what `f` sent since its own; its
  /// CC state (none without a state).
  Ready mirror(uint32_t fpid, const Record& f, const Follow& w, const Record& l) const;
  /// mirror()'s bytes for the follower's flow i alone (checked at every tick: no copies).
  uint64_t mirrored_bytes(const Record& f, const Follow& w, const Record& l, size_t i) const;
  /// `x` resuming at `resume` (ps): the leader's progress carried on to then; counted.
  FollowerRelease resume_at(Ready x, Time resume);
  /// Follower `fpid` of `l` released at the next releases() (or its own release_early).
  void let_go(Record& l, uint32_t fpid);
  /// Leader `l`'s period ended unconverged: its followers are released.
  void orphan(Record& l, uint32_t lpid);
  /// Followers of `l` whose credit could pass their room by the next tick are released now.
  void release_outrun(Record& l, uint32_t lpid);
  void drop_leader(uint32_t lpid);
  /// Leader `l`'s period converged with value `v` (in l's vertex order): its followers, held for
  /// exactly that period, are replayed from it at this tick.
  void release_converged(Record& l, uint32_t lpid, const MemoValue& v, Time now);
  /// tick(): the leaders' state now, or their followers released when they changed.
  void snapshot_leaders(Time now);

  Network& net_;
  FastForward& ff_;
  MemoDb& db_;
  uint64_t ns_, quantum_;
  std::unordered_map<uint32_t, Record> open_;  // partition -> its period in progress
  std::vector<uint32_t> starting_;             // partitions reset since the last tick (tick() begins them)
  /// The CC snapshots of `flows` now, each from its sender's rank (one process: its own).
  std::vector<CcSnapshot> snapshots(const std::vector<uint32_t>& flows, Time now) const;
  std::unordered_map<uint32_t, Follow> follows_;  // held followers (and proposed ones until follow_done)
  std::vector<uint32_t> leaders_;                 // partitions whose period has followers, sorted
  std::vector<Ready> ready_;                      // followers to release at the next releases()
  MemoStats stats_;
  uint32_t rank_ = 0, ranks_ = 1;  // this rank's shard of the store (set_shard)
  std::set<uint64_t> rejected_;    // patterns verify mode rejected, by name (every rank alike)
  mutable std::atomic<uint64_t> patterns_built_{0};  // lookups build patterns on several threads
  std::vector<MemoStats> marks_;  // mark(m): stats_ then (cleared at each tick)
};

/// The namespace of a run: a 64-bit FNV-1a hash of `description`, the text of everything that
/// changes convergence (CC and its parameters, link rates and delays, MTU, buffer, ECN, PFC;
/// Wormhole's θ, window, sample interval and rate quantum; see WormholeSession::describe).
uint64_t memo_namespace(const std::string& description);

}  // namespace wh
