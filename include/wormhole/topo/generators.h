// Generators of GPU-cluster fabrics: SimAI's gen_Topo_Template.py builders (docs/workloads.md §3) and a
// k-ary fat tree. Each returns the topology with its SimAI header fields and the role of every node;
// write_hpcc_topology / write_simai_topology (simai_topology.h) write it out.
//
// Numbering and link order are SimAI's: GPUs 0..G-1, then NVSwitches (server s owns G + s·nsps + j),
// then leaves (ASWs), then spines (PSWs) (fat tree: edge, aggregation, core). Links: for each GPU in
// order its NVLink links then its NIC link(s); then the leaf–spine links, leaf-major (fat tree: then the
// aggregation–core links). Written with write_simai_topology, a generated topology is byte-identical to
// the generator's file for the same parameters.
//
// Bad parameters (gpus 0 or not a multiple of gpus_per_server, zero rates, negative delays, an error rate
// outside [0, 1), odd k, too many GPUs for an explicit leaves_per_spine) throw std::invalid_argument.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "wormhole/core/time.h"
#include "wormhole/topo/simai_topology.h"

namespace wh {

/// What a generated node is. Leaf = ASW / ToR / fat-tree edge; Spine = PSW / fat-tree aggregation.
enum class NodeRole : uint8_t { Gpu, NvSwitch, Leaf, Spine, Core };

/// A generated fabric: the SimAI topology plus one role per node (size topo.num_nodes).
struct GeneratedFabric : SimaiTopology {
  std::vector<NodeRole> role;
  /// The node ids with role `r`, ascending.
  std::vector<uint32_t> nodes(NodeRole r) const;
};

/// Rail-optimized, single ToR (Spectrum-X style; SimAI `-topo Spectrum-X`, `Rail_Opti_SingleToR`).
/// A segment is `servers_per_segment` servers with one leaf per rail: GPU i (rail k = i mod gps, segment
/// seg = i / (servers_per_segment·gps)) connects to leaf seg·gps + k; every leaf connects to every spine.
/// Segments = ceil(gpus / (servers_per_segment·gps)); they must not exceed leaves_per_spine / gps.
/// Defaults are SimAI's Spectrum-X template (4096 GPUs, 8 leaves per segment, 64 spines: 1:1 per leaf);
/// leaves_per_spine 0 (the default) is derived from the size (effective_leaves_per_spine), so any GPU
/// count fits.
struct SpectrumXParams {
  uint32_t gpus = 4096;
  uint32_t gpus_per_server = 8;
  uint32_t nvswitches_per_server = 1;              ///< 0 = no NVLink (intra-server traffic uses the NICs)
  uint64_t nvlink_rate_bps = 2'880'000'000'000;    ///< GPU–NVSwitch rate, bit/s
  Time nvlink_delay = 25 * kNs;                    ///< GPU–NVSwitch one-way delay, ps
  uint64_t nic_rate_bps = 400'000'000'000;         ///< GPU NIC–leaf rate, bit/s
  Time nic_delay = 500 * kNs;                      ///< GPU NIC–leaf one-way delay, ps
  uint64_t leaf_spine_rate_bps = 400'000'000'000;  ///< leaf–spine rate, bit/s
  Time leaf_spine_delay = 500 * kNs;               ///< leaf–spine one-way delay, ps
  uint32_t servers_per_segment = 64;               ///< SimAI -npa: NIC ports per leaf
  uint32_t spines = 64;                            ///< SimAI -psn; per-leaf oversubscription =
                                                   ///< servers_per_segment·nic_rate / (spines·leaf_spine_rate)
  uint32_t leaves_per_spine = 0;                   ///< SimAI -app: spine radix (capacity check only);
                                                   ///< 0 = derived: max(64, segments·gps)
  double error_rate = 0;                           ///< written into every link
  std::string gpu_type = "H100";
};

/// Rail-optimized, dual ToR (HPN style; SimAI `-topo AlibabaHPN`). As Spectrum-X but every rail has two
/// leaves, one in each half of the leaf ids: GPU i connects to leaf1[seg·gps + k] and leaf2[seg·gps + k].
/// Single plane: every leaf connects to every spine. Dual plane: leaf1s connect only to the first
/// spines/2 spines and leaf2s only to the rest (spines must be even). Segments must not exceed
/// leaves_per_spine / gps (SimAI's check). Defaults are SimAI's AlibabaHPN template (SimAI also sets
/// leaves_per_spine = 120 with dual plane); leaves_per_spine 0 (the default) is derived from the size
/// (effective_leaves_per_spine).
struct HpnParams {
  uint32_t gpus = 15360;
  uint32_t gpus_per_server = 8;
  uint32_t nvswitches_per_server = 1;
  uint64_t nvlink_rate_bps = 2'880'000'000'000;    ///< bit/s
  Time nvlink_delay = 25 * kNs;                    ///< ps
  uint64_t nic_rate_bps = 200'000'000'000;         ///< each of the two NIC ports, bit/s
  Time nic_delay = 500 * kNs;                      ///< ps
  uint64_t leaf_spine_rate_bps = 400'000'000'000;  ///< bit/s
  Time leaf_spine_delay = 500 * kNs;               ///< ps
  uint32_t servers_per_segment = 128;              ///< SimAI -npa
  uint32_t spines = 120;                           ///< SimAI -psn
  uint32_t leaves_per_spine = 0;                   ///< SimAI -app (capacity check only);
                                                   ///< 0 = derived: max(240, segments·gps)
  bool dual_plane = false;
  double error_rate = 0;
  std::string gpu_type = "H100";
};

/// Non-rail (DCN+ style; SimAI `-topo DCN+`): GPU i connects to leaf i / gpus_per_leaf (all GPUs of a
/// server under one ToR when gpus_per_leaf is a multiple of gps); with dual_tor also to the same-index
/// leaf of the second half. Every leaf connects to every spine. Segments = ceil(gpus / gpus_per_leaf)
/// must not exceed leaves_per_spine (dual ToR: leaves_per_spine / 2); leaves_per_spine 0 (the default) is
/// derived from the size (effective_leaves_per_spine). Defaults are SimAI's DCN+ template:
/// 64×400G down / 8×400G up = 8:1 per leaf (SimAI's --dt also sets 200 Gbps NICs and 128 GPUs per leaf).
struct DcnPlusParams {
  uint32_t gpus = 512;
  uint32_t gpus_per_server = 8;
  uint32_t nvswitches_per_server = 1;
  uint64_t nvlink_rate_bps = 2'880'000'000'000;    ///< bit/s
  Time nvlink_delay = 25 * kNs;                    ///< ps
  uint64_t nic_rate_bps = 400'000'000'000;         ///< bit/s
  Time nic_delay = 500 * kNs;                      ///< ps
  uint64_t leaf_spine_rate_bps = 400'000'000'000;  ///< bit/s
  Time leaf_spine_delay = 500 * kNs;               ///< ps
  uint32_t gpus_per_leaf = 64;                     ///< SimAI -npa
  uint32_t spines = 8;                             ///< SimAI -psn; per-leaf oversubscription =
                                                   ///< gpus_per_leaf·nic_rate / (spines·leaf_spine_rate)
  uint32_t leaves_per_spine = 0;                   ///< SimAI -app (capacity check only); 0: derived
  bool dual_tor = false;
  double error_rate = 0;
  std::string gpu_type = "H100";
};

/// k-ary fat tree (full bisection): k pods of k/2 edge and k/2 aggregation switches, (k/2)² cores,
/// k/2 hosts per edge switch (k³/4 hosts in all). Edge e of pod p connects to every aggregation switch
/// of p; aggregation switch j of a pod connects to cores j·k/2 .. j·k/2 + k/2 - 1. Host h connects to
/// edge h / (k/2); `gpus` < k³/4 leaves the last edges without hosts. Node ids: hosts, NVSwitches,
/// edges, aggregations, cores (pod-major); links: hosts (with their NVLinks first), edge–aggregation
/// edge-major, aggregation–core. The defaults give the HPCC reference's k=4 fat tree exactly.
struct FatTreeParams {
  uint32_t k = 4;                                  ///< even, >= 2
  uint32_t gpus = 0;                               ///< 0 = k³/4
  uint32_t gpus_per_server = 1;
  uint32_t nvswitches_per_server = 0;              ///< e.g. 1 with gpus_per_server 8 for GPU servers
  uint64_t nvlink_rate_bps = 2'880'000'000'000;    ///< bit/s (used only with NVSwitches)
  Time nvlink_delay = 25 * kNs;                    ///< ps
  uint64_t host_rate_bps = 100'000'000'000;        ///< host–edge rate, bit/s
  Time host_delay = 1000 * kNs;                    ///< ps
  uint64_t fabric_rate_bps = 100'000'000'000;      ///< edge–aggregation and aggregation–core rate, bit/s
  Time fabric_delay = 1000 * kNs;                  ///< ps
  double error_rate = 0;
  std::string gpu_type = "H100";
};

/// The leaves_per_spine a generator applies: the user's value if non-zero, else derived from the size
/// as the smallest value SimAI's capacity check (segments ≤ leaves_per_spine / gps) accepts, never below
/// SimAI's template default: max(64, segments·gps) for Spectrum-X, max(240, segments·gps) for HPN, where
/// segments = ceil(gpus / (servers_per_segment·gps)). SimAI's template derives its leaf count
/// (asw_switch_num = segments·gps) the same way. E.g. 8192 Spectrum-X GPUs: 16 segments, 128. Returns the
/// user's value unchecked, and 0 for gpus_per_server or servers_per_segment 0 (the generator rejects those).
/// DCN+: max(8, leaves) with leaves = ceil(gpus / gpus_per_leaf), twice that with dual ToR (0 for
/// gpus_per_leaf 0).
uint32_t effective_leaves_per_spine(const SpectrumXParams& p);
uint32_t effective_leaves_per_spine(const HpnParams& p);
uint32_t effective_leaves_per_spine(const DcnPlusParams& p);

GeneratedFabric generate_spectrum_x(const SpectrumXParams& p);
GeneratedFabric generate_hpn(const HpnParams& p);
GeneratedFabric generate_dcn_plus(const DcnPlusParams& p);
GeneratedFabric generate_fat_tree(const FatTreeParams& p);

}  // namespace wh
