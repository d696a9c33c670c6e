// Fabric generators: SimAI's gen_Topo_Template.py builders (docs/workloads.md §3.2) and a k-ary fat tree.
#include "wormhole/topo/generators.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace wh {

std::vector<uint32_t> GeneratedFabric::nodes(NodeRole r) const {
  std::vector<uint32_t> out;
  for (uint32_t v = 0; v < role.size(); ++v)
    if (role[v] == r) out.push_back(v);
  return out;
}

namespace {

void require(bool ok, const std::string& gen, const std::string& msg) {
  if (!ok) throw std::invalid_argument(gen + " generator: " + msg);
}

/// The parameters every builder shares; checked once here.
struct Common {
  std::string gen;  ///< generator name, for messages
  uint32_t gpus, gps, nsps;
  uint64_t nvlink_rate;
  Time nvlink_delay;
  uint64_t nic_rate;
  Time nic_delay;
  uint64_t fabric_rate;
  Time fabric_delay;
  double error_rate;
  std::string gpu_type;

  void check() const {
    require(gps > 0, gen, "gpus_per_server must be > 0");
    require(gpus > 0, gen, "gpus must be > 0");
    require(gpus % gps == 0, gen, "gpus (" + std::to_string(gpus) + ") must be a multiple of gpus_per_server (" +
                                      std::to_string(gps) + ")");
    require(nsps == 0 || nvlink_rate > 0, gen, "the NVLink rate must be > 0 (or set nvswitches_per_server to 0)");
    require(nic_rate > 0, gen, "the NIC rate must be > 0");
    require(fabric_rate > 0, gen, "the switch-to-switch link rate must be > 0");
    require(nvlink_delay >= 0 && nic_delay >= 0 && fabric_delay >= 0, gen, "link delays must be >= 0 ps");
    require(error_rate >= 0 && error_rate < 1, gen, "error_rate must be in [0, 1)");
    require(!gpu_type.empty() && gpu_type.find_first_of(" \t\r\n") == std::string::npos, gen,
            "gpu_type must be one word, e.g. H100");
  }
};

/// Builds nodes and links in SimAI's order.
class Builder {
 public:
  Builder(const Common& c, uint64_t switch_nodes, const std::string& name) : c_(c) {
    const uint64_t nvs = static_cast<uint64_t>(c.gpus / c.gps) * c.nsps;
    require(c.gpus + nvs + switch_nodes <= std::numeric_limits<uint32_t>::max(), c.gen, "too many nodes");
    f_.gpus = c.gpus;
    f_.gpus_per_server = c.gps;
    f_.gpu_type = c.gpu_type;
    f_.topo.file = "generated " + name;
    add_nodes(c.gpus, NodeRole::Gpu);
    nvswitch0_ = add_nodes(static_cast<uint32_t>(nvs), NodeRole::NvSwitch);
  }
  /// Appends `count` nodes; returns the first id.
  uint32_t add_nodes(uint32_t count, NodeRole r) {
    const uint32_t first = f_.topo.num_nodes;
    f_.topo.num_nodes += count;
    f_.role.insert(f_.role.end(), count, r);
    f_.topo.is_switch.insert(f_.topo.is_switch.end(), count, r != NodeRole::Gpu);
    f_.topo.is_nvswitch.insert(f_.topo.is_nvswitch.end(), count, r == NodeRole::NvSwitch);
    if (r == NodeRole::NvSwitch) f_.nvswitches += count;
    else if (r != NodeRole::Gpu) f_.switches += count;
    return first;
  }
  void link(uint32_t a, uint32_t b, uint64_t rate, Time delay) {
    TopoLink l;
    l.a = a, l.b = b, l.rate_bps = rate, l.delay = delay, l.error_rate = c_.error_rate;
    l.line = static_cast<int>(f_.topo.links.size()) + 3;  // its line in the SimAI file
    f_.topo.links.push_back(l);
  }
  /// GPU i's NVLink lines: one per NVSwitch of its server.
  void nvlinks(uint32_t i) {
    for (uint32_t j = 0; j < c_.nsps; ++j) link(i, nvswitch0_ + (i / c_.gps) * c_.nsps + j, c_.nvlink_rate, c_.nvlink_delay);
  }
  GeneratedFabric finish() { return std::move(f_); }

 private:
  const Common& c_;
  GeneratedFabric f_;
  uint32_t nvswitch0_ = 0;
};

/// The SimAI leaf–spine builders. A segment holds `seg_gpus` GPUs and `seg_leaves` leaves per ToR list;
/// GPU i connects to leaf seg·seg_leaves + (i mod seg_leaves) of each list (1 list, or 2 with dual ToR).
struct LeafSpine {
  Common c;
  std::string name;
  uint64_t seg_gpus;
  uint32_t seg_leaves;
  bool dual_tor, dual_plane;
  uint32_t spines;
  uint64_t max_segments;
  std::string capacity_fix;
};

GeneratedFabric build_leaf_spine(const LeafSpine& s) {
  const Common& c = s.c;
  c.check();
  require(s.seg_gpus > 0, c.gen, "servers_per_segment / gpus_per_leaf must be > 0");
  require(s.spines > 0, c.gen, "spines must be > 0");
  require(!s.dual_plane || s.spines % 2 == 0, c.gen, "dual plane needs an even spine count, not " + std::to_string(s.spines));
  const uint64_t segments = (c.gpus + s.seg_gpus - 1) / s.seg_gpus;
  require(segments <= s.max_segments, c.gen, std::to_string(c.gpus) + " GPUs need " + std::to_string(segments) +
          " segments of " + std::to_string(s.seg_gpus) + " GPUs, more than the " + std::to_string(s.max_segments) +
          " that leaves_per_spine allows (" + s.capacity_fix + ")");
  const uint32_t lists = s.dual_tor ? 2 : 1;
  const uint64_t per_list = segments * s.seg_leaves;
  Builder b(c, per_list * lists + s.spines, s.name);
  const uint32_t leaf0 = b.add_nodes(static_cast<uint32_t>(per_list * lists), NodeRole::Leaf);
  const uint32_t spine0 = b.add_nodes(s.spines, NodeRole::Spine);
  for (uint32_t i = 0; i < c.gpus; ++i) {
    b.nvlinks(i);
    const uint64_t leaf = (i / s.seg_gpus) * s.seg_leaves + i % s.seg_leaves;
    for (uint32_t l = 0; l < lists; ++l) b.link(i, static_cast<uint32_t>(leaf0 + l * per_list + leaf), c.nic_rate, c.nic_delay);
  }
  for (uint32_t l = 0; l < lists; ++l) {
    const uint32_t first = s.dual_plane ? l * (s.spines / 2) : 0;
    const uint32_t count = s.dual_plane ? s.spines / 2 : s.spines;
    for (uint64_t a = 0; a < per_list; ++a)
      for (uint32_t p = first; p < first + count; ++p)
        b.link(static_cast<uint32_t>(leaf0 + l * per_list + a), spine0 + p, c.fabric_rate, c.fabric_delay);
  }
  return b.finish();
}

/// SimAI's file name for a generated topology, e.g. "Spectrum-X_16g_8gps_400Gbps_H100".
std::string simai_name(const std::string& prefix, const Common& c, const std::string& infix) {
  return prefix + std::to_string(c.gpus) + "g_" + std::to_string(c.gps) + "gps_" + infix +
         format_data_rate(c.nic_rate) + "_" + c.gpu_type;
}

/// SimAI's capacity check, segments ≤ leaves_per_spine / leaves_per_segment with segments =
/// ceil(gpus / seg_gpus), met with the least value at or above the template's `floor` (0 for a zero
/// segment size or leaf count: the builder rejects those).
uint32_t derived_leaves_per_spine(uint32_t gpus, uint64_t seg_gpus, uint32_t leaves_per_segment, uint32_t floor) {
  if (seg_gpus == 0 || leaves_per_segment == 0) return 0;
  const uint64_t need = (gpus + seg_gpus - 1) / seg_gpus * leaves_per_segment;
  return static_cast<uint32_t>(std::min<uint64_t>(std::max<uint64_t>(need, floor), std::numeric_limits<uint32_t>::max()));
}

const char* const kRailCapacityFix =
    "max segments = leaves_per_spine / gpus_per_server; raise leaves_per_spine (or leave it unset: it is then "
    "derived from the size) or servers_per_segment";

}  // namespace

uint32_t effective_leaves_per_spine(const SpectrumXParams& p) {
  return p.leaves_per_spine ? p.leaves_per_spine
                            : derived_leaves_per_spine(p.gpus, uint64_t(p.servers_per_segment) * p.gpus_per_server,
                                                       p.gpus_per_server, 64);
}

uint32_t effective_leaves_per_spine(const HpnParams& p) {
  return p.leaves_per_spine ? p.leaves_per_spine
                            : derived_leaves_per_spine(p.gpus, uint64_t(p.servers_per_segment) * p.gpus_per_server,
                                                       p.gpus_per_server, 240);
}

uint32_t effective_leaves_per_spine(const DcnPlusParams& p) {
  return p.leaves_per_spine ? p.leaves_per_spine : derived_leaves_per_spine(p.gpus, p.gpus_per_leaf, p.dual_tor ? 2 : 1, 8);
}

GeneratedFabric generate_spectrum_x(const SpectrumXParams& p) {
  LeafSpine s{{"Spectrum-X", p.gpus, p.gpus_per_server, p.nvswitches_per_server, p.nvlink_rate_bps, p.nvlink_delay,
               p.nic_rate_bps, p.nic_delay, p.leaf_spine_rate_bps, p.leaf_spine_delay, p.error_rate, p.gpu_type},
              "", uint64_t(p.servers_per_segment) * p.gpus_per_server, p.gpus_per_server, false, false, p.spines,
              p.gpus_per_server ? effective_leaves_per_spine(p) / p.gpus_per_server : 0, kRailCapacityFix};
  s.name = simai_name("Spectrum-X_", s.c, "");
  return build_leaf_spine(s);
}

GeneratedFabric generate_hpn(const HpnParams& p) {
  LeafSpine s{{"HPN", p.gpus, p.gpus_per_server, p.nvswitches_per_server, p.nvlink_rate_bps, p.nvlink_delay,
               p.nic_rate_bps, p.nic_delay, p.leaf_spine_rate_bps, p.leaf_spine_delay, p.error_rate, p.gpu_type},
              "", uint64_t(p.servers_per_segment) * p.gpus_per_server, p.gpus_per_server, true, p.dual_plane, p.spines,
              p.gpus_per_server ? effective_leaves_per_spine(p) / p.gpus_per_server : 0, kRailCapacityFix};
  s.name = simai_name("AlibabaHPN_", s.c, p.dual_plane ? "DualToR_DualPlane_" : "DualToR_SinglePlane_");
  return build_leaf_spine(s);
}

GeneratedFabric generate_dcn_plus(const DcnPlusParams& p) {
  LeafSpine s{{"DCN+", p.gpus, p.gpus_per_server, p.nvswitches_per_server, p.nvlink_rate_bps, p.nvlink_delay,
               p.nic_rate_bps, p.nic_delay, p.leaf_spine_rate_bps, p.leaf_spine_delay, p.error_rate, p.gpu_type},
              "", p.gpus_per_leaf, 1, p.dual_tor, false, p.spines,
              p.dual_tor ? effective_leaves_per_spine(p) / 2 : effective_leaves_per_spine(p),
              p.dual_tor ? "max segments = leaves_per_spine / 2; raise leaves_per_spine (or leave it unset: it is then "
                           "derived from the size) or gpus_per_leaf"
                         : "max segments = leaves_per_spine; raise leaves_per_spine (or leave it unset: it is then "
                           "derived from the size) or gpus_per_leaf"};
  s.name = simai_name(p.dual_tor ? "DCN+DualToR_" : "DCN+SingleToR_", s.c, "");
  return build_leaf_spine(s);
}

GeneratedFabric generate_fat_tree(const FatTreeParams& p) {
  const std::string gen = "fat-tree";
  require(p.k >= 2 && p.k % 2 == 0, gen, "k must be even and >= 2, not " + std::to_string(p.k));
  require(p.k <= 2048, gen, "k must be <= 2048");
  const uint32_t h = p.k / 2;
  const uint64_t max_hosts = uint64_t(p.k) * h * h;  // k³/4
  Common c{gen, p.gpus ? p.gpus : static_cast<uint32_t>(max_hosts), p.gpus_per_server, p.nvswitches_per_server,
           p.nvlink_rate_bps, p.nvlink_delay, p.host_rate_bps, p.host_delay, p.fabric_rate_bps, p.fabric_delay,
           p.error_rate, p.gpu_type};
  c.check();
  require(c.gpus <= max_hosts, gen, std::to_string(c.gpus) + " GPUs exceed the " + std::to_string(max_hosts) +
          " hosts of a k=" + std::to_string(p.k) + " fat tree (k³/4)");
  const uint32_t pod_sw = p.k * h;  // edges (or aggregations) in all pods: k²/2
  Builder b(c, uint64_t(pod_sw) * 2 + h * h,
            "FatTree_k" + std::to_string(p.k) + "_" + std::to_string(c.gpus) + "g_" + std::to_string(c.gps) + "gps_" +
                format_data_rate(c.nic_rate) + "_" + c.gpu_type);
  const uint32_t edge0 = b.add_nodes(pod_sw, NodeRole::Leaf);
  const uint32_t agg0 = b.add_nodes(pod_sw, NodeRole::Spine);
  const uint32_t core0 = b.add_nodes(h * h, NodeRole::Core);
  for (uint32_t i = 0; i < c.gpus; ++i) {
    b.nvlinks(i);
    b.link(i, edge0 + i / h, c.nic_rate, c.nic_delay);
  }
  for (uint32_t e = 0; e < pod_sw; ++e)  // edge e is in pod e / h, whose aggregations are agg0 + pod·h ..
    for (uint32_t j = 0; j < h; ++j) b.link(edge0 + e, agg0 + (e / h) * h + j, c.fabric_rate, c.fabric_delay);
  for (uint32_t a = 0; a < pod_sw; ++a)  // aggregation j (= a mod h) of every pod reaches cores j·h .. j·h + h-1
    for (uint32_t j = 0; j < h; ++j) b.link(agg0 + a, core0 + (a % h) * h + j, c.fabric_rate, c.fabric_delay);
  return b.finish();
}

}  // namespace wh
