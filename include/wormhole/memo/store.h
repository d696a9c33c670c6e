// The memo store: unsteady periods of partitions keyed by their flow contention graph
// (the Wormhole paper: memoization), with isomorphism-checked lookup.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "wormhole/core/time.h"
#include "wormhole/memo/fcg.h"
#include "wormhole/net/cc.h"

namespace wh {

/// What a memoized unsteady period did, per flow in the key's vertex order.
struct MemoValue {
  Time duration = 0;                    ///< ps from the period's start to convergence
  std::vector<uint64_t> bytes;          ///< payload bytes each flow sent during it
  std::vector<uint64_t> end_rate_bps;   ///< each flow's rate at convergence (FCG_end), bit/s
  std::vector<double> goodput;          ///< each flow's goodput at convergence, bytes/ps (0: not measured)
  std::vector<CcSnapshot> cc;           ///< each flow's CC state at convergence, portable (beyond the paper)
  /// Each flow's goodput trend at convergence, |d goodput / dt| / goodput in 1/ps (0: none
  /// measured), and how long before convergence that goodput holds exactly, ps: a continuation
  /// of the replay is bounded by them as a fresh skip is (FastForward::skip_length). Empty: 0.
  std::vector<double> trend;
  std::vector<Time> trend_age;
};

/// One entry: the key graph, its value, when it became visible and how often it was hit.
struct MemoEntry {
  uint64_t ns = 0;        ///< namespace: hash of everything that changes convergence (CC, rates, MTU, buffers)
  Fcg key;
  FcgCanon canon;         ///< the key's canonical form (made by insert)
  MemoValue value;
  Time visible_from = 0;  ///< simulated time of insertion, ps: no lookup at an earlier time sees it
  uint64_t id = 0;        ///< its place in its store's insertion order (MemoStore::entry), not kept in files
  mutable uint64_t hits = 0;  ///< statistics only: counted through a const lookup result
  /// Verify mode found a replay of it wrong beyond its bound: never replayed again (kept, and
  /// written to the memo file so, so that a warm start does not replay it either).
  mutable bool rejected = false;
};

/// A hit: the entry and the map from the query's vertices to the entry key's vertices.
struct MemoHit {
  const MemoEntry* entry = nullptr;
  std::vector<uint32_t> map;  ///< map[i] = key vertex matched to query vertex i
};

/// Entries bucketed by (namespace, vertices, edges, WL hash); within a bucket canonical forms decide
/// (a key's is made only when its bucket holds an entry). A distributed run shards the store by
/// bucket over its ranks (shard_of): each rank holds, looks up and writes its buckets' entries.
/// Lookups see only entries inserted at or before their simulated time, so a run's hits do not
/// depend on the order in which threads happened to insert. Not thread-safe by itself: the
/// controller looks up from oneTBB threads with no insert in between (inserts happen in the
/// sequential part of a tick).
class MemoStore {
 public:
  MemoStore() = default;
  // Entries are named by address (MemoEntry::id -> entry): a copy would name the original's.
  MemoStore(const MemoStore&) = delete;
  MemoStore& operator=(const MemoStore&) = delete;
  MemoStore(MemoStore&&) = default;
  MemoStore& operator=(MemoStore&&) = default;
  /// The entry isomorphic to `key` in namespace `ns` visible at `now` (ps), with the vertex map;
  /// nothing if none or if that entry is rejected. A hit increments the entry's hit count only through count_hit().
  std::optional<MemoHit> lookup(uint64_t ns, const Fcg& key, Time now) const;
  /// Inserts unless an isomorphic key exists in `ns` already (then the old entry is kept); makes the
  /// key's canonical form.
  /// Returns the entry now holding the key and whether it is the new one. The value's vectors
  /// must each have one element per key vertex (std::invalid_argument).
  std::pair<const MemoEntry*, bool> insert(uint64_t ns, Fcg key, MemoValue value, Time now);
  static void count_hit(const MemoHit& h) { ++h.entry->hits; }
  /// The entry with MemoEntry::id `id` (std::out_of_range if none, or not in this shard).
  const MemoEntry& entry(uint64_t id) const {
    const MemoEntry* e = by_id_.at(id);
    if (!e) throw std::out_of_range("MemoStore::entry: not in this shard");
    return *e;
  }
  /// Whether any entry of namespace `ns` has `vertices` vertices: a cheap test before building
  /// a key (most periods of a TP-heavy run have no candidate). A shard answers for the whole store
  /// (note_size).
  bool may_hold(uint64_t ns, size_t vertices) const { return sizes_.count({ns, vertices}) > 0; }
  /// An entry of namespace `ns` with `vertices` vertices is in the store's shard on another rank.
  void note_size(uint64_t ns, size_t vertices) { sizes_.insert({ns, vertices}); }
  size_t size() const { return size_; }
  /// Every entry, in bucket order (deterministic: by namespace, sizes, hash, then insertion).
  std::vector<const MemoEntry*> entries() const;

  /// Which of `ranks` shards holds a key of namespace `ns` (its bucket: the same for every key an
  /// isomorphic one could be confused with), in [0, ranks).
  static uint32_t shard_of(uint64_t ns, const Fcg& key, uint32_t ranks);
  /// The same from the key's vertex and edge counts and its wl_hash (already computed).
  static uint32_t shard_of(uint64_t ns, size_t vertices, size_t edges, uint64_t wl, uint32_t ranks) {
    return shard_of(BucketKey{ns, vertices, edges, wl}, ranks);
  }
  /// Keeps only the entries of shard `rank` of `ranks` (a distributed run's rank after loading a
  /// whole memo file); may_hold still answers for all of them.
  void keep_shard(uint32_t rank, uint32_t ranks);

 private:
  using BucketKey = std::tuple<uint64_t, uint64_t, uint64_t, uint64_t>;  // ns, |V|, |E|, WL hash
  static uint32_t shard_of(const BucketKey& b, uint32_t ranks);
  std::map<BucketKey, std::deque<MemoEntry>> buckets_;  // a deque: entry addresses stay valid
  std::set<std::pair<uint64_t, size_t>> sizes_;          // (namespace, vertices) present
  std::vector<const MemoEntry*> by_id_;                  // by MemoEntry::id (nullptr: dropped from the shard)
  size_t size_ = 0;
};

}  // namespace wh
