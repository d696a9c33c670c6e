// Chakra execution traces (chakra.h): the driver's offers to the collective memo and the look-ahead
// over the ranks' graphs that decides them (see ChakraDriver's class comment).
#include <algorithm>
#include <functional>
#include <queue>

#include "wormhole/workload/chakra.h"
#include "wormhole/workload/collective_memo.h"
#include "chakra_state.h"

namespace wh {

using namespace chakra_driver;

void ChakraDriver::involve(uint32_t r, uint8_t kinds, int d) {
  for (uint32_t k = 0; k < 2; ++k)
    if (kinds & (1u << k)) involved_[r][k] += static_cast<uint32_t>(d);
}

void ChakraDriver::offer_pending() {
  if (pending_offers_.empty()) return;
  // Decided once every event of this instant has run (1 ps on, before any flow of theirs can leave),
  // so that the collectives other events issue at the same instant (each GPU's compute ends by its own
  // event) are decided together.
  if (send_latency_ <= 1) return decide_offers();
  if (decide_at_ < 0) net_.schedule_client(decide_at_ = net_.client_now() + 1, 0, kDecide);
}

void ChakraDriver::decide_offers() {
  std::vector<uint32_t> ids;
  ids.swap(pending_offers_);
  decide_at_ = -1;
  // Before its first flow starts (send_latency after the first issue) or never: the memo decides for
  // the whole collective.
  const Time now = net_.client_now();
  std::erase_if(ids, [&](uint32_t id) {
    const bool late = now - first_issue(colls_[id]) >= send_latency_;
    if (late) memo_->count_late_issue();
    return late;
  });
  // Together: each whose pattern the memo holds is taken to be replayed, so that the others' look-aheads
  // know when it ends; one whose own look-ahead then fails is not, and the rest are judged again, until
  // none fails (each pass only drops: it ends). Those left are replayed as assumed: their islands share no
  // port (a GPU in two of them, on islands of one kind, is busy with both), and what begin checks is what
  // pattern_for checked. Not in verify mode, where begin may simulate a hit instead (a pattern from a
  // file can be wrong: it would end otherwise than assumed).
  if (ids.size() > 1 && !memo_->verifies()) {
    const std::vector<uint8_t> read = read_by_another(ids);
    for (size_t k = 0; k < ids.size(); ++k) {
      if (!read[k]) continue;  // no other's look-ahead reads its members' graphs
      const uint32_t id = ids[k];
      uint8_t kinds = 0;
      const Coll& c = colls_[id];
      const std::vector<Time>* fin = memo_->pattern_for(pairs_of(id), [&]() -> const std::string& { return key_of(id); },
                                                        c.members, c.issue_time, c.cp.size(), involved_fn(), &kinds);
      if (fin) assumed_.emplace(id, Assumed{fin, kinds, member_done_times(c.cp, first_issue(c), fin)});
    }
    for (bool dropped = true; dropped;) {
      dropped = false;
      for (uint32_t id : ids) {
        const auto it = assumed_.find(id);
        if (it == assumed_.end()) continue;
        const Time t0 = first_issue(colls_[id]);
        const std::vector<Time>& fin = *it->second.finish;
        if (quiet_until(id, it->second.kinds, t0, &fin) < t0 + *std::max_element(fin.begin(), fin.end()))
          assumed_.erase(it), dropped = true;
      }
    }
  }
  for (uint32_t id : ids) offer_to_memo(id);
  assumed_.clear();
  offers_.clear();
}

const std::vector<std::pair<uint32_t, uint32_t>>& ChakraDriver::pairs_of(uint32_t id) {
  Offer& o = offers_[id];
  if (o.pairs.empty()) {
    const Coll& c = colls_[id];
    for (auto [a, b] : collective_member_pairs(c.cp)) o.pairs.emplace_back(c.members[a], c.members[b]);  // GPU r is host r
  }
  return o.pairs;
}

const std::string& ChakraDriver::key_of(uint32_t id) {
  Offer& o = offers_[id];
  if (o.key.empty()) o.key = collective_plan_key(colls_[id].cp, send_latency_, kPriorityGroup);
  return o.key;
}

std::vector<uint8_t> ChakraDriver::read_by_another(const std::vector<uint32_t>& ids) {
  // A look-ahead on a fabric island reads every rank's graph; on an NVSwitch, the graphs of the GPUs on
  // the members' NVSwitches (quiet_until). Counted per rank, each collective once.
  std::unordered_map<uint32_t, uint32_t> readers;  // rank -> NVSwitch look-aheads reading it
  uint32_t fabric = 0;
  for (uint32_t id : ids) {
    if (colls_[id].kinds & kIslandFabric) {
      ++fabric;
      continue;
    }
    for (uint32_t y : nvswitch_near(colls_[id].members)) ++readers[y];
  }
  std::vector<uint8_t> read(ids.size(), 0);
  for (size_t k = 0; k < ids.size(); ++k) {
    const Coll& c = colls_[ids[k]];
    const bool own_fabric = (c.kinds & kIslandFabric) != 0;
    read[k] = fabric > (own_fabric ? 1u : 0u);
    for (uint32_t g : c.members) {
      const auto it = readers.find(g);
      // Its own look-ahead (on an NVSwitch) reads its members: another's must too.
      if (it != readers.end() && it->second > (own_fabric ? 0u : 1u)) read[k] = 1;
    }
  }
  return read;
}

std::function<uint32_t(uint32_t, uint8_t)> ChakraDriver::involved_fn() const {
  return [this](uint32_t host, uint8_t kinds) {
    if (host >= ranks_.size()) return UINT32_MAX;  // a GPU the trace has no rank for
    uint32_t n = 0;
    for (uint32_t k = 0; k < 2; ++k)
      if (kinds & (1u << k)) n = std::max(n, involved_[host][k]);
    return n;
  };
}

void ChakraDriver::offer_to_memo(uint32_t id) {
  const Coll& c = colls_[id];
  const int32_t h = memo_->begin(
      pairs_of(id), [&]() -> const std::string& { return key_of(id); }, c.members, c.issue_time, c.cp.size(),
      involved_fn(), [&](uint8_t kinds, Time t0, const std::vector<Time>* finish) { return quiet_until(id, kinds, t0, finish); });
  colls_[id].memo = h;
}

Time ChakraDriver::known_end(uint32_t id, uint32_t y) {
  Coll& c = colls_[id];
  if (const auto it = assumed_.find(id); it != assumed_.end()) return it->second.done[c.index_of(y)];
  // A replay's run slot is freed only after its last flow, whose end finishes every member's node: a
  // collective still under way at y holds its handle.
  if (c.replay_done.empty()) {
    Time t0 = 0;
    const std::vector<Time>* fin = memo_->replay_timeline(c.memo, &t0);
    if (!fin) return -1;
    c.replay_done = member_done_times(c.cp, t0, fin);
  }
  return c.replay_done[c.index_of(y)];
}

namespace {

/// `bytes` at `rate` bit/s, in ps (floored: still a lower bound); at most 2^60 ps (13 days), so that sums of
/// a few stay within Time — serialization_time (core/time.h) without the cap would overflow on a trace's
/// absurd sizes; 0 for a rate of 0.
Time at_rate(uint64_t bytes, uint64_t rate) {
  if (rate == 0) return 0;
  const unsigned __int128 t = static_cast<unsigned __int128>(bytes) * 8 * kSec / rate;
  return static_cast<Time>(std::min<unsigned __int128>(t, Time(1) << 60));
}

/// Adds `bytes` for `dst` to `sends`, into its last entry when that is for `dst` too (a ring channel's
/// steps go to one next member: a few entries a rank, not one a step).
void add_send(std::vector<std::pair<uint32_t, uint64_t>>& sends, uint32_t dst, uint64_t bytes) {
  if (!sends.empty() && sends.back().first == dst) sends.back().second += bytes;
  else sends.emplace_back(dst, bytes);
}

}  // namespace

Time ChakraDriver::min_transfer(uint32_t a, uint32_t b, uint64_t bytes) const {
  return at_rate(bytes, std::min(max_rate_[a], max_rate_[b]));
}

Time ChakraDriver::part_end_bound(uint32_t id, uint32_t y) {
  Coll& c = colls_[id];
  const Time now = net_.client_now();
  if (c.bound_epoch != c.epoch || c.bound_now != now) {  // bound_now starts at -1: made at the first call
    const CollectivePlan& cp = c.cp;
    c.part_bound.assign(c.members.size(), now);
    // A parent precedes its children in flow order (collectives.h), so one pass in that order sees every
    // parent's bound before its child's.
    std::vector<Time> end(cp.size(), now);
    // A released flow waiting for its send latency leaves at its batch's instant; one handed to the network
    // has left (when is not kept: its end is bounded by now only).
    std::vector<Time> leaves_at(cp.size(), -1);
    c.batches.for_each([&](Time at, uint32_t f) { leaves_at[f] = at; });
    std::vector<std::vector<std::pair<uint32_t, uint64_t>>> unsent(c.members.size());  // per member: (destination, bytes)
    for (uint32_t f = 0; f < cp.size(); ++f) {
      if (c.flow_state[f] == 2) continue;
      const uint32_t s = cp.src_index(f), d = cp.dst_index(f);
      const uint32_t a = c.members[s], b = c.members[d];
      if (c.flow_state[f] == 1 && leaves_at[f] < 0) continue;  // under way: it ends no sooner than now
      // Released: it leaves at its batch's instant. Not yet: a send latency after its parent can end, or
      // after now (its sender's issue, or its parent's end that already came).
      const uint32_t p = cp.parent(f);
      const Time leaves = c.flow_state[f] == 1 ? leaves_at[f]
                                                : (p != kNoParent && c.flow_state[p] != 2 ? std::max(now, end[p]) : now) + send_latency_;
      end[f] = std::max(now, leaves + min_transfer(a, b, cp.chunk));
      for (uint32_t m : {s, d}) c.part_bound[m] = std::max(c.part_bound[m], end[f]);
      // Not left yet: all its bytes pass its sender's ports from then on. (How much of a flow under way is
      // left is not read: a memoizer holding its partition credits what it sent only when it lets go.)
      add_send(unsent[s], b, cp.chunk);
    }
    for (uint32_t m = 0; m < c.members.size(); ++m)
      if (!unsent[m].empty()) c.part_bound[m] = std::max(c.part_bound[m], now + send_time(c.members[m], unsent[m]));
    c.bound_epoch = c.epoch;
    c.bound_now = now;
  }
  return c.part_bound[c.index_of(y)];
}

Time ChakraDriver::send_time(uint32_t y, const std::vector<std::pair<uint32_t, uint64_t>>& sends) {
  const Fabric& fab = net_.fabric();
  Routing& routes = net_.routing();
  std::vector<std::pair<uint32_t, uint64_t>> at_port;  // (port, bytes): a GPU has a few
  uint64_t total = 0;
  for (auto [d, b] : sends) {
    total += b;
    const std::span<const uint32_t> nics = routes.host_nics(y, d);
    if (nics.size() != 1) continue;  // one of several, by the flow's hash: in the total only
    const auto it = std::find_if(at_port.begin(), at_port.end(), [&](const auto& e) { return e.first == nics[0]; });
    if (it == at_port.end()) at_port.emplace_back(nics[0], b);
    else it->second += b;
  }
  Time t = at_rate(total, sum_rate_[y]);
  for (auto [q, b] : at_port) t = std::max(t, at_rate(b, fab.ports[q].rate_bps));
  return t;
}

const std::vector<std::pair<Collective, uint64_t>>& ChakraDriver::group_variants(const std::string& group) {
  if (!variants_made_) {  // every group's at once: one pass over the trace, not one a group
    variants_made_ = true;
    for (const std::vector<ChakraNode>& nodes : trace_.ranks)
      for (const ChakraNode& n : nodes)
        if (n.kind == ChakraNode::Coll && n.bytes != 0) variants_[n.group].emplace_back(n.op, n.bytes);
    for (auto& [g, v] : variants_) {
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
    }
  }
  return variants_[group];
}

Time ChakraDriver::part_time(uint32_t y, Collective op, uint64_t bytes, const std::string& group) {
  auto it = plans_.find(std::make_tuple(op, bytes, group));
  if (it == plans_.end()) {  // the plan ready() makes of such a node, made once
    std::vector<uint32_t> members;
    if (group.empty())
      for (uint32_t m = 0; m < ranks_.size(); ++m) members.push_back(m);
    else
      members = trace_.groups.at(group);
    CollectivePlan cp;
    if (members.size() > 1) {
      const uint32_t rings = op == Collective::AllToAll ? 1 : ring_count(layout_, members);
      cp = plan_collective(op, bytes, members, rings, zero_chunk_);
    }
    it = plans_.emplace(std::make_tuple(op, bytes, group), std::move(cp)).first;
  }
  const CollectivePlan& cp = it->second;
  if (cp.sends_per_member() == 0) return 0;
  // y's flows leave a send latency after it issues or later (a flow's parent is an earlier step; step 0
  // has none): the first of them lasts its transfer, all of them their time at y's ports.
  const auto mi = static_cast<uint32_t>(std::lower_bound(cp.members.begin(), cp.members.end(), y) - cp.members.begin());
  std::vector<std::pair<uint32_t, uint64_t>> sends;
  Time first = 0;
  for (uint32_t s = 0; s < cp.sends_per_member(); ++s) {
    const uint32_t f = cp.sent_flow(mi, s), to = cp.members[cp.dst_index(f)];
    add_send(sends, to, cp.chunk);
    if (cp.parent(f) == kNoParent) first = std::max(first, min_transfer(y, to, cp.chunk));
  }
  return send_latency_ + std::max(first, send_time(y, sends));
}

Time ChakraDriver::min_duration(uint32_t y, uint32_t i) {
  Rank& k = ranks_[y];
  if (k.min_duration.empty()) k.min_duration.assign(trace_.ranks[y].size(), -1);
  if (k.min_duration[i] >= 0) return k.min_duration[i];
  const ChakraNode& n = trace_.ranks[y][i];
  Time d = 0;
  switch (n.kind) {
    case ChakraNode::Comp:
      d = std::max<Time>(0, n.duration);
      break;
    case ChakraNode::Recv:
      break;
    case ChakraNode::Send:
      if (n.bytes != 0) d = send_latency_ + min_transfer(y, n.peer, n.bytes);
      break;
    case ChakraNode::Coll: {
      // The collective is planned from the node of whichever member issues it first (ready()), whose size
      // and op may differ from y's own node (an all-to-all's uneven split): the least over every collective
      // node of the group, of any rank, stands for all of them.
      if (n.bytes == 0) break;  // y's own part ends at once, whatever the others'
      const std::vector<std::pair<Collective, uint64_t>>& kinds = group_variants(n.group);
      d = kNever;
      for (auto [op, bytes] : kinds) d = std::min(d, part_time(y, op, bytes, n.group));
      break;
    }
  }
  return k.min_duration[i] = d;
}

Time ChakraDriver::first_issue(const Coll& c) { return *std::min_element(c.issue_time.begin(), c.issue_time.end()); }

std::vector<uint32_t> ChakraDriver::nvswitch_near(const std::vector<uint32_t>& members) {
  std::vector<uint32_t> near;
  for (uint32_t g : members) {
    const std::vector<uint32_t>& p = nvswitch_peers(g);
    near.insert(near.end(), p.begin(), p.end());
  }
  std::sort(near.begin(), near.end());
  near.erase(std::unique(near.begin(), near.end()), near.end());
  return near;
}

const std::vector<uint32_t>& ChakraDriver::nvswitch_peers(uint32_t r) {
  std::vector<uint32_t>& out = nv_peers_[r];
  if (nv_peers_made_[r]) return out;
  nv_peers_made_[r] = 1;
  // An island's NVSwitch links only to hosts (Network::find_island): the GPUs one hop beyond it.
  const Fabric& fab = net_.fabric();
  out.push_back(r);
  const Node& gpu = fab.nodes[r];
  for (uint32_t q = gpu.first_port; q < gpu.first_port + gpu.num_ports; ++q) {
    const Node& sw = fab.nodes[fab.ports[fab.ports[q].peer].node];
    if (!sw.is_nvswitch) continue;
    for (uint32_t x = sw.first_port; x < sw.first_port + sw.num_ports; ++x) {
      const uint32_t host = fab.ports[fab.ports[x].peer].node;
      if (!fab.nodes[host].is_switch && host < ranks_.size()) out.push_back(host);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool ChakraDriver::reaches_members(uint32_t y, const ChakraNode& n, const std::vector<uint32_t>& members, uint8_t kinds) {
  if (n.bytes == 0 || (n.kind != ChakraNode::Send && n.kind != ChakraNode::Coll)) return false;
  const std::vector<uint32_t>& near = nvswitch_peers(y);
  // A flow of y touches the members' island ports when it leaves a member (y) or reaches one, over an
  // NVSwitch they share (routing prefers it) or else over the fabric; other GPUs' traffic only crosses
  // a switch there (its shared buffer: the sub-island's margin, CollectiveMemo).
  const bool y_member = std::binary_search(members.begin(), members.end(), y);
  auto touches = [&](uint32_t z) {
    if (z == y || !(y_member || std::binary_search(members.begin(), members.end(), z))) return false;
    const bool nvswitch = std::binary_search(near.begin(), near.end(), z);
    return (kinds & (nvswitch ? kIslandNvSwitch : kIslandFabric)) != 0;
  };
  if (n.kind == ChakraNode::Send) return touches(n.peer);
  // A collective: its group's GPUs, every rank for a group of none. Over an NVSwitch only its GPUs
  // there; over the fabric any of them.
  const std::vector<uint32_t>* group = n.group.empty() ? nullptr : &trace_.groups.at(n.group);
  const auto R = static_cast<uint32_t>(ranks_.size());
  if (kinds & kIslandFabric) {
    if (group) {
      for (uint32_t z : *group)
        if (touches(z)) return true;
    } else {
      for (uint32_t z = 0; z < R; ++z)
        if (touches(z)) return true;
    }
    return false;
  }
  for (uint32_t z : near)
    if (touches(z) && (!group || std::binary_search(group->begin(), group->end(), z))) return true;
  return false;
}

Time ChakraDriver::earliest_issue(uint32_t y, uint32_t offered, uint8_t kinds, Time done_y, Time bound) {
  const Rank& k = ranks_[y];
  const std::vector<ChakraNode>& nodes = trace_.ranks[y];
  const Time now = net_.client_now();
  std::vector<uint32_t>& seen = seen_[y];
  if (seen.size() != nodes.size()) seen.assign(nodes.size(), 0);
  if (++stamp_ == 0) {  // the stamps wrapped: clear every rank's marks once
    for (auto& v : seen_) std::fill(v.begin(), v.end(), 0);
    stamp_ = 1;
  }
  const Coll& o = colls_[offered];
  const auto m = std::lower_bound(o.members.begin(), o.members.end(), y);
  const int32_t offered_node = m != o.members.end() && *m == y ? o.node[static_cast<size_t>(m - o.members.begin())] : -1;
  // Nodes by the earliest time they can end; a node is reached from the first of its dependencies to
  // end (any one of them bounds its start from below).
  using Item = std::pair<Time, uint32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
  for (uint32_t i : k.active) {
    seen[i] = stamp_;
    const ChakraNode& n = nodes[i];
    Time end = now;  // a send under way, a receive waiting (their ends are not known)
    if (n.kind == ChakraNode::Comp && n.cpu) {
      const auto c = k.cpu_end.find(i);
      end = c != k.cpu_end.end() ? c->second : now;
    } else if (n.kind == ChakraNode::Comp) {
      // Queued behind the running one, or running.
      const Time free = k.gpu_running != UINT32_MAX ? std::max(now, k.gpu_end) : now;
      end = k.gpu_running == i ? k.gpu_end : free + std::max<Time>(0, n.duration);
    } else if (n.kind == ChakraNode::Coll && static_cast<int32_t>(i) != offered_node) {
      // Another collective under way: where it is replayed (or, deciding an instant's offers, taken to
      // be) its end at y is known.
      if (const auto c = k.coll_at.find(i); c != k.coll_at.end()) {
        const Time known = known_end(c->second, y);
        end = known >= 0 ? std::max(now, known) : part_end_bound(c->second, y);
      }
    } else if (static_cast<int32_t>(i) == offered_node && done_y >= 0) {
      end = done_y;
    } else if (static_cast<int32_t>(i) == offered_node && !(kinds & kIslandFabric)) {
      // A follower on an NVSwitch (its end not known): what only y's part of it can ready is not searched,
      // SimAI's rule for its blocking TP collectives. On a rail leaf it is taken to end now, as the SimAI
      // driver takes a follower's members' next collectives there.
      continue;
    }
    heap.emplace(end, i);
  }
  while (!heap.empty()) {
    const auto [t, i] = heap.top();
    heap.pop();
    if (t >= bound) return bound;
    for (uint32_t c : k.children[i]) {
      if (k.state[c] != 0 || seen[c] == stamp_) continue;
      seen[c] = stamp_;
      const ChakraNode& n = nodes[c];
      if (reaches_members(y, n, o.members, kinds)) return t;  // it can issue when this dependency ends, no sooner
      const Time d = min_duration(y, c);
      heap.emplace(d > kNever - t ? kNever : t + d, c);  // a long chain saturates
    }
  }
  return kNever;
}

Time ChakraDriver::quiet_until(uint32_t id, uint8_t kinds, Time t0, const std::vector<Time>* finish) {
  const Coll& c = colls_[id];
  const CollectivePlan& cp = c.cp;
  // When each member's part of it is done, were it to end as `finish` says (-1: not known).
  const auto assumed = assumed_.find(id);
  const std::vector<Time> done = assumed != assumed_.end() && assumed->second.finish == finish
                                     ? assumed->second.done
                                     : member_done_times(cp, t0, finish);
  // Its end: nothing can come in its way after it.
  const Time horizon = done.empty() || done.front() < 0 ? kNever : *std::max_element(done.begin(), done.end());
  // Traffic can reach the members' NVSwitch ports only from GPUs on those NVSwitches; their fabric
  // ports from any GPU.
  std::vector<uint32_t> near;
  if (kinds & kIslandFabric) {
    near = c.members;  // first: a member's next collective is the likeliest to come
    for (uint32_t y = 0; y < ranks_.size(); ++y)
      if (!std::binary_search(c.members.begin(), c.members.end(), y)) near.push_back(y);
  } else {
    near = nvswitch_near(c.members);
  }
  // A flow leaves send_latency after it is released, and no sooner than its node issues: the island is
  // quiet until 1 ps before the earliest issue plus that (a replay may end then; at that very ps, the
  // order of its last completion and the flow's start would decide).
  const Time lead = send_latency_ - 1;
  Time t = horizon;
  for (uint32_t y : near) {
    const auto m = std::lower_bound(c.members.begin(), c.members.end(), y);
    const Time done_y = m != c.members.end() && *m == y ? done[static_cast<size_t>(m - c.members.begin())] : -1;
    const Time bound = t == kNever ? kNever : t - lead;
    const Time issue = earliest_issue(y, id, kinds, done_y, bound);
    if (issue < bound) t = issue + lead;
    if (t < horizon) return t;  // the island is not quiet to the end: what the memo asks
  }
  return t;
}

}  // namespace wh
