// The memo store (see store.h).
#include "wormhole/memo/store.h"

#include <stdexcept>

namespace wh {

std::optional<MemoHit> MemoStore::lookup(uint64_t ns, const Fcg& key, Time now) const {
  auto it = buckets_.find({ns, key.vertices(), key.edges.size(), wl_hash(key)});
  if (it == buckets_.end()) return std::nullopt;
  std::optional<FcgCanon> canon;
  for (const MemoEntry& e : it->second) {
    if (e.visible_from > now) continue;
    if (!canon) canon = canonical_form(key);
    if (*canon == e.canon) {
      if (e.rejected) return std::nullopt;
      return MemoHit{&e, canonical_map(*canon, e.canon)};
    }
  }
  return std::nullopt;
}

std::pair<const MemoEntry*, bool> MemoStore::insert(uint64_t ns, Fcg key, MemoValue value, Time now) {
  const size_t n = key.vertices();
  if (value.bytes.size() != n || value.end_rate_bps.size() != n || value.goodput.size() != n || value.cc.size() != n)
    throw std::invalid_argument("MemoStore::insert: the value needs one element per key vertex");
  if (value.trend.empty()) value.trend.assign(n, 0.0), value.trend_age.assign(n, 0);
  if (value.trend.size() != n || value.trend_age.size() != n)
    throw std::invalid_argument("MemoStore::insert: the value's trends need one element per key vertex");
  std::deque<MemoEntry>& bucket = buckets_[{ns, n, key.edges.size(), wl_hash(key)}];
  FcgCanon canon = canonical_form(key);
  for (const MemoEntry& e : bucket)
    if (canon == e.canon) return {&e, false};
  MemoEntry e;
  e.ns = ns;
  e.key = std::move(key);
  e.canon = std::move(canon);
  e.value = std::move(value);
  e.visible_from = now;
  e.id = by_id_.size();
  bucket.push_back(std::move(e));
  by_id_.push_back(&bucket.back());
  sizes_.insert({ns, n});
  ++size_;
  return {&bucket.back(), true};
}

uint32_t MemoStore::shard_of(const BucketKey& b, uint32_t ranks) {
  if (ranks <= 1) return 0;
  // splitmix64 over the bucket's fields: buckets spread evenly whatever the hashes' low bits.
  uint64_t h = 0;
  for (uint64_t v : {std::get<0>(b), std::get<1>(b), std::get<2>(b), std::get<3>(b)}) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    h ^= h >> 31;
  }
  return static_cast<uint32_t>(h % ranks);
}

uint32_t MemoStore::shard_of(uint64_t ns, const Fcg& key, uint32_t ranks) {
  return ranks <= 1 ? 0 : shard_of(BucketKey{ns, key.vertices(), key.edges.size(), wl_hash(key)}, ranks);
}

void MemoStore::keep_shard(uint32_t rank, uint32_t ranks) {
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    if (shard_of(it->first, ranks) == rank) {
      ++it;
      continue;
    }
    for (const MemoEntry& e : it->second) by_id_[e.id] = nullptr;
    size_ -= it->second.size();
    it = buckets_.erase(it);  // sizes_ stays: may_hold answers for the whole store
  }
}

std::vector<const MemoEntry*> MemoStore::entries() const {
  std::vector<const MemoEntry*> out;
  out.reserve(size_);
  for (const auto& [k, bucket] : buckets_)
    for (const MemoEntry& e : bucket) out.push_back(&e);
  return out;
}

}  // namespace wh
