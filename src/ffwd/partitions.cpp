// Incremental network partitions (see partitions.h).
#include "wormhole/ffwd/partitions.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "wormhole/core/release.h"

namespace wh {

namespace {

// Merges sorted `extra` into sorted `into` in place: one linear pass, no re-sort.
void merge_sorted(std::vector<uint32_t>& into, const std::vector<uint32_t>& extra) {
  if (extra.empty()) return;
  const auto mid = static_cast<std::ptrdiff_t>(into.size());
  into.insert(into.end(), extra.begin(), extra.end());
  std::inplace_merge(into.begin(), into.begin() + mid, into.end());
}

// Index of `x` in sorted `v`; x must be present.
size_t index_of(const std::vector<uint32_t>& v, uint32_t x) {
  return static_cast<size_t>(std::lower_bound(v.begin(), v.end(), x) - v.begin());
}

}  // namespace

PartitionSet::PartitionSet(uint32_t num_ports)
    : port_part_(num_ports, kNone), port_flows_(num_ports), port_mark_(num_ports, 0) {}

uint32_t PartitionSet::new_part() {
  uint32_t pid;
  if (!free_ids_.empty()) {
    pid = free_ids_.back();
    free_ids_.pop_back();
  } else {
    pid = static_cast<uint32_t>(parts_.size());
    parts_.emplace_back();
  }
  parts_[pid].live = true;
  ++live_count_;
  return pid;
}

void PartitionSet::free_part(uint32_t pid) {
  Part& p = parts_[pid];
  p.live = false;
  p.flows.clear();
  p.ports.clear();
  free_ids_.push_back(pid);
  --live_count_;
}

std::vector<uint32_t> PartitionSet::partitions_of_ports(std::span<const uint32_t> ports) const {
  std::vector<uint32_t> ids;
  partitions_of_ports(ports, ids);
  return ids;
}

void PartitionSet::partitions_of_ports(std::span<const uint32_t> ports, std::vector<uint32_t>& ids) const {
  ids.clear();
  for (uint32_t p : ports) {
    if (p >= port_part_.size()) throw std::out_of_range("PartitionSet: port " + std::to_string(p) + " out of range");
    if (port_part_[p] != kNone) ids.push_back(port_part_[p]);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
}

uint32_t PartitionSet::add_flow(uint32_t flow, std::span<const uint32_t> ports_in) {
  if (entry(flow)) throw std::logic_error("PartitionSet: flow " + std::to_string(flow) + " already present");
  // Validate before touching any state, so a rejected call leaves the set as it was.
  partitions_of_ports(ports_in, touched_);
  const std::vector<uint32_t>& touched = touched_;
  std::vector<uint32_t> ports(ports_in.begin(), ports_in.end());
  std::sort(ports.begin(), ports.end());
  ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
  // Its entry before any other state changes: the merges below look entries up.
  FlowEntry& e = make_entry(flow);

  uint32_t pid;
  if (touched.empty()) {
    pid = new_part();
  } else {
    // Folding the smaller partitions into the largest moves the fewest flows and ports.
    pid = touched[0];
    for (uint32_t t : touched)
      if (parts_[t].flows.size() > parts_[pid].flows.size()) pid = t;
    for (uint32_t t : touched) {  // ascending, so the largest absorbed id is the next one reused
      if (t == pid) continue;
      Part& src = parts_[t];
      for (uint32_t f : src.flows) entry(f)->part = pid;
      for (uint32_t p : src.ports) port_part_[p] = pid;
      merge_sorted(parts_[pid].flows, src.flows);
      merge_sorted(parts_[pid].ports, src.ports);
      free_part(t);
    }
  }

  Part& part = parts_[pid];
  part.flows.insert(std::lower_bound(part.flows.begin(), part.flows.end(), flow), flow);
  fresh_.clear();  // ports no flow used before: they join the partition now
  for (uint32_t p : ports) {
    port_flows_[p].push_back(flow);
    if (port_part_[p] == kNone) {
      port_part_[p] = pid;
      fresh_.push_back(p);
    }
  }
  merge_sorted(part.ports, fresh_);
  e.part = pid;
  e.ports = std::move(ports);
  return pid;
}

bool PartitionSet::stays_connected(uint32_t pid, const std::vector<uint32_t>& removed_ports) {
  // Every component left holds one of the removed flow's ports that others still use (a component
  // without one was apart before), so with at most one such port nothing splits. Otherwise search
  // from all of them at once, a port at a time from each, joining searches that meet: in the dense
  // partitions of collectives they meet within a step or two of each anchor, where one search from
  // a single anchor crossed most of the partition. A search that runs out before meeting all the
  // others found a component of its own: a real split, left to the full search of remove_flow.
  std::vector<uint32_t>& anchors = anchors_;
  anchors.clear();
  for (uint32_t p : removed_ports)
    if (!port_flows_[p].empty()) anchors.push_back(p);
  if (anchors.size() <= 1) return true;
  const std::vector<uint32_t>& flows = parts_[pid].flows;  // still holding the removed flow: indices only
  if (flow_mark_.size() < flows.size()) flow_mark_.resize(flows.size(), 0);
  if (++search_ == 0) {  // the stamps wrapped: forget them all
    std::fill(port_mark_.begin(), port_mark_.end(), 0);
    std::fill(flow_mark_.begin(), flow_mark_.end(), 0);
    search_ = 1;
  }
  const uint64_t stamp = uint64_t(search_) << 32;
  // The search that reached port p / flow f (UINT32_MAX: none yet); marking it.
  const auto reached = [&](uint64_t& m) { return (m & ~uint64_t(UINT32_MAX)) == stamp ? uint32_t(m) : UINT32_MAX; };
  const auto mark = [&](uint64_t& m, uint32_t k) { m = stamp | k; };
  const size_t n = anchors.size();
  std::vector<uint32_t>& parent = parent_;
  std::vector<std::vector<uint32_t>>& queue = queue_;  // per search: ports to expand (a root's holds its merged ones)
  std::vector<size_t>& next = next_;
  parent.resize(n);
  if (queue.size() < n) queue.resize(n);
  next.assign(n, 0);
  for (uint32_t k = 0; k < n; ++k) parent[k] = k, queue[k].assign(1, anchors[k]), mark(port_mark_[anchors[k]], k);
  auto root = [&](uint32_t k) {
    while (parent[k] != k) k = parent[k] = parent[parent[k]];
    return k;
  };
  size_t roots = n;
  auto join = [&](uint32_t a, uint32_t b) {  // roots a != b: the longer queue absorbs the other's rest
    if (queue[a].size() - next[a] < queue[b].size() - next[b]) std::swap(a, b);
    queue[a].insert(queue[a].end(), queue[b].begin() + static_cast<std::ptrdiff_t>(next[b]), queue[b].end());
    queue[b].clear(), next[b] = 0, parent[b] = a;
    return --roots == 1;
  };
  while (true) {
    for (uint32_t k = 0; k < n; ++k) {
      if (parent[k] != k) continue;
      if (next[k] == queue[k].size()) return false;  // its component is whole and apart from the others
      const uint32_t p = queue[k][next[k]++];
      for (uint32_t f : port_flows_[p]) {
        uint64_t& fm = flow_mark_[index_of(flows, f)];
        if (const uint32_t seen = reached(fm); seen != UINT32_MAX) {
          const uint32_t r = root(seen);
          if (r != root(k) && join(r, root(k))) return true;
          continue;
        }
        mark(fm, k);
        for (uint32_t q : entry(f)->ports) {
          uint64_t& pm = port_mark_[q];
          const uint32_t g = reached(pm);
          const uint32_t me = root(k);
          if (g == UINT32_MAX) {
            mark(pm, me);
            queue[me].push_back(q);
          } else if (const uint32_t r = root(g); r != me && join(r, me)) {
            return true;
          }
        }
      }
      if (parent[k] != k) break;  // k was absorbed: start the round again
    }
  }
}

std::vector<uint32_t> PartitionSet::remove_flow(uint32_t flow) {
  FlowEntry* fp = entry(flow);
  if (!fp) throw std::logic_error("PartitionSet: flow " + std::to_string(flow) + " not present");
  const uint32_t pid = fp->part;
  for (uint32_t p : fp->ports) {
    auto& users = port_flows_[p];
    // Order within a port's list is irrelevant (only reachability is read), so swap-erase.
    *std::find(users.begin(), users.end(), flow) = users.back();
    users.pop_back();
  }
  const std::vector<uint32_t> removed_ports = std::move(fp->ports);
  drop_entry(flow);

  if (stays_connected(pid, removed_ports)) {
    // One component: the partition keeps its id, loses the flow and the ports only it used.
    Part& part = parts_[pid];
    part.flows.erase(std::lower_bound(part.flows.begin(), part.flows.end(), flow));
    if (part.flows.empty()) {
      for (uint32_t p : part.ports) port_part_[p] = kNone;
      free_part(pid);
      return {};
    }
    for (uint32_t p : removed_ports)
      if (port_flows_[p].empty()) {
        port_part_[p] = kNone;
        part.ports.erase(std::lower_bound(part.ports.begin(), part.ports.end(), p));
      }
    return {pid};
  }

  // Take the old contents out: new_part() below may grow parts_ and move its elements.
  std::vector<uint32_t> flows = std::move(parts_[pid].flows);
  std::vector<uint32_t> ports = std::move(parts_[pid].ports);
  parts_[pid].flows.clear();
  parts_[pid].ports.clear();
  flows.erase(std::lower_bound(flows.begin(), flows.end(), flow));
  // Not empty: a split leaves two flows at least (an emptied partition was handled above).

  // Connected components over flow -> port -> flow, confined to the old partition. Visiting the
  // flows in ascending order numbers the components by their smallest flow id.
  constexpr uint32_t kUnseen = UINT32_MAX;
  std::vector<uint32_t> comp(flows.size(), kUnseen);
  std::vector<char> port_seen(ports.size(), 0);
  std::vector<uint32_t> queue;
  queue.reserve(flows.size());
  uint32_t ncomp = 0;
  for (size_t i = 0; i < flows.size(); ++i) {
    if (comp[i] != kUnseen) continue;
    const uint32_t c = ncomp++;
    comp[i] = c;
    queue.assign(1, flows[i]);
    for (size_t q = 0; q < queue.size(); ++q) {
      for (uint32_t p : entry(queue[q])->ports) {
        char& seen = port_seen[index_of(ports, p)];
        if (seen) continue;  // each port's flow list is scanned once, so a hub port stays linear
        seen = 1;
        for (uint32_t g : port_flows_[p]) {
          uint32_t& cg = comp[index_of(flows, g)];
          if (cg != kUnseen) continue;
          cg = c;
          queue.push_back(g);
        }
      }
    }
  }

  std::vector<uint32_t> ids(ncomp);
  ids[0] = pid;
  for (uint32_t c = 1; c < ncomp; ++c) ids[c] = new_part();
  // Filling in ascending order keeps every component's vectors sorted without a sort.
  for (size_t i = 0; i < flows.size(); ++i) {
    const uint32_t target = ids[comp[i]];
    parts_[target].flows.push_back(flows[i]);
    if (target != pid) entry(flows[i])->part = target;
  }
  for (uint32_t p : ports) {
    if (port_flows_[p].empty()) {
      port_part_[p] = kNone;  // only the removed flow used it
      continue;
    }
    const uint32_t target = ids[comp[index_of(flows, port_flows_[p].front())]];
    parts_[target].ports.push_back(p);
    port_part_[p] = target;
  }
  return ids;
}

uint32_t PartitionSet::partition_of_flow(uint32_t flow) const {
  const FlowEntry* e = entry(flow);
  return e ? e->part : kNone;
}

const std::vector<uint32_t>& PartitionSet::flow_ports(uint32_t flow) const {
  const FlowEntry* e = entry(flow);
  if (!e) throw std::logic_error("PartitionSet: flow " + std::to_string(flow) + " not present");
  return e->ports;
}

PartitionSet::FlowEntry& PartitionSet::make_entry(uint32_t flow) {
  const uint32_t pg = flow >> kPageBits;
  if (pg >= flow_pages_.size()) flow_pages_.resize(size_t(pg) + 1);  // amortized: the vector grows geometrically
  FlowPage& page = flow_pages_[pg];
  if (!page.entries)
    page.entries = spare_page_ ? std::move(spare_page_) : std::make_unique<FlowEntry[]>(size_t(1) << kPageBits);
  ++page.used;
  return page.entries[flow & ((1u << kPageBits) - 1)];
}

void PartitionSet::drop_entry(uint32_t flow) {
  FlowPage& page = flow_pages_[flow >> kPageBits];
  FlowEntry& e = page.entries[flow & ((1u << kPageBits) - 1)];
  e.part = kNone;
  release_storage(e.ports);
  if (--page.used == 0) {
    if (spare_page_) page.entries.reset();
    else spare_page_ = std::move(page.entries);
  }
}

std::vector<uint32_t> PartitionSet::live_ids() const {
  std::vector<uint32_t> ids;
  ids.reserve(live_count_);
  for (uint32_t i = 0; i < parts_.size(); ++i)
    if (parts_[i].live) ids.push_back(i);
  return ids;
}

}  // namespace wh
