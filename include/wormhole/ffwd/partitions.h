// Network partitions: connected components of active flows that share an egress port on their
// data path, maintained incrementally (the Wormhole paper: network partitioning, its §4.1).
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace wh {

/// The partitions of the active flows. A flow is added with the egress ports (global port
/// indices) its data packets leave from; two flows sharing a port are in the same partition,
/// transitively. Arrivals create, join or merge partitions; a removal re-examines only the
/// partition the flow left and splits it into its connected components. Nothing is recomputed
/// globally. Partition ids are small integers, reused after a partition disappears (the most
/// recently freed id first), so the ids — like everything here — depend only on the sequence of
/// calls, never on addresses or hash order.
class PartitionSet {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  /// `num_ports` = number of ports of the network (port ids are < num_ports).
  explicit PartitionSet(uint32_t num_ports);

  /// Adds active flow `flow` with its data-path egress ports (any order, duplicates allowed, may
  /// be empty: then the flow is a partition of its own). If the ports touch no partition a new
  /// one is made; one partition: the flow joins it; several: they are merged into the one with
  /// the most flows (ties: the smallest id), and the others' ids are freed. Returns the id of the
  /// partition the flow is now in. Throws std::logic_error if the flow is already present.
  uint32_t add_flow(uint32_t flow, std::span<const uint32_t> ports);
  /// The partitions the given ports belong to now (sorted ids, no duplicates, kNone left out):
  /// what add_flow(…, ports) would merge. Lets the caller act on them first.
  std::vector<uint32_t> partitions_of_ports(std::span<const uint32_t> ports) const;

  /// Removes flow `flow` and splits its partition into connected components. Returns the ids of
  /// the partitions that now hold the old partition's remaining flows: empty if none remain;
  /// otherwise the first id is the old one (kept by the component holding the old partition's
  /// smallest remaining flow id) and the others are new. Throws std::logic_error if absent.
  std::vector<uint32_t> remove_flow(uint32_t flow);

  uint32_t partition_of_flow(uint32_t flow) const;   ///< kNone if the flow is not present
  uint32_t partition_of_port(uint32_t port) const { return port_part_[port]; }  ///< kNone if unused
  /// Flows of partition `pid`, ascending. Precondition: live(pid).
  const std::vector<uint32_t>& flows(uint32_t pid) const { return parts_[pid].flows; }
  /// Egress ports used by the flows of `pid`, ascending, no duplicates.
  const std::vector<uint32_t>& ports(uint32_t pid) const { return parts_[pid].ports; }
  /// The ports flow `flow` was added with (sorted, unique). Precondition: present.
  const std::vector<uint32_t>& flow_ports(uint32_t flow) const;
  bool live(uint32_t pid) const { return pid < parts_.size() && parts_[pid].live; }
  /// Number of live partitions.
  size_t size() const { return live_count_; }
  /// Ids of the live partitions, ascending.
  std::vector<uint32_t> live_ids() const;
  /// One past the largest id ever used (for per-partition arrays kept by the caller).
  uint32_t id_bound() const { return static_cast<uint32_t>(parts_.size()); }
  /// Pages of the flow index held now: one per 2^kPageBits consecutive flow ids with an active flow
  /// among them (what the index's memory follows: about 8 KiB a page).
  size_t flow_pages_held() const {
    size_t n = 0;
    for (const FlowPage& pg : flow_pages_) n += pg.entries != nullptr;
    return n;
  }

 private:
  struct Part {
    bool live = false;
    std::vector<uint32_t> flows;  // ascending
    std::vector<uint32_t> ports;  // ascending
  };
  uint32_t new_part();
  void free_part(uint32_t pid);
  /// partitions_of_ports into `ids` (cleared first): add_flow's buffer, kept between calls.
  void partitions_of_ports(std::span<const uint32_t> ports, std::vector<uint32_t>& ids) const;
  /// Whether partition `pid`'s flows (the removed one already gone from the port lists) are still
  /// connected, given the ports the removed flow used. Exact; fast where they are.
  bool stays_connected(uint32_t pid, const std::vector<uint32_t>& removed_ports);

  std::vector<uint32_t> port_part_;                 // port -> partition
  std::vector<std::vector<uint32_t>> port_flows_;   // port -> flows using it (unordered)
  struct FlowEntry {
    uint32_t part = kNone;        // its partition (kNone: no such active flow)
    std::vector<uint32_t> ports;  // its ports, sorted, unique
  };
  // Active flow -> its entry, by flow id in pages of 2^kPageBits entries: a page is made when a flow of
  // it arrives and given back when its last one leaves (one spare kept, so that flows running one at a
  // time do not make and zero a page each). Flow ids grow through a run and the active ones lie in a
  // window of them, so the pages follow the active flows (8 KiB per scattered long flow at worst); the
  // directory takes 16 B per 2^kPageBits ids ever used. A lookup is two loads, where a hash map's took
  // cache misses at every flow's first packet after its partition's reset.
  static constexpr uint32_t kPageBits = 8;
  struct FlowPage {
    std::unique_ptr<FlowEntry[]> entries;
    uint32_t used = 0;
  };
  std::vector<FlowPage> flow_pages_;
  std::unique_ptr<FlowEntry[]> spare_page_;  // an emptied page, every entry absent
  FlowEntry* entry(uint32_t flow) {
    const uint32_t pg = flow >> kPageBits;
    if (pg >= flow_pages_.size() || !flow_pages_[pg].entries) return nullptr;
    FlowEntry* e = &flow_pages_[pg].entries[flow & ((1u << kPageBits) - 1)];
    return e->part == kNone ? nullptr : e;
  }
  const FlowEntry* entry(uint32_t flow) const { return const_cast<PartitionSet*>(this)->entry(flow); }
  /// Flow `flow`'s entry, made for it (precondition: absent; it stays absent until the caller sets its
  /// part).
  FlowEntry& make_entry(uint32_t flow);
  /// Forgets `flow`'s entry (present), freeing its page when it was the page's last.
  void drop_entry(uint32_t flow);
  std::vector<Part> parts_;
  std::vector<uint32_t> free_ids_;
  size_t live_count_ = 0;
  // stays_connected's marks, valid for its call number search_: per port (by id) and per flow (by its
  // index in the partition's flows) the search that reached it, as search_ << 32 | search. Stamped,
  // never cleared: a call costs what it visits, not the partition's size.
  std::vector<uint64_t> port_mark_;
  std::vector<uint64_t> flow_mark_;
  uint32_t search_ = 0;
  // Scratch of add_flow and stays_connected, kept between calls: a collective starts and ends
  // thousands of flows, and each call allocated these anew.
  std::vector<uint32_t> touched_, fresh_, anchors_, parent_;
  std::vector<std::vector<uint32_t>> queue_;
  std::vector<size_t> next_;
};

}  // namespace wh
