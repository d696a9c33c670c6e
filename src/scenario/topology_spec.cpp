// The [topology] table: a file to read or a generator and its parameters, and build_topology.
#include <cctype>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <variant>

#include "items.h"
#include "topology_spec.h"
#include "wormhole/core/input_error.h"
#include "wormhole/scenario/scenario.h"

namespace wh {
namespace scenario_detail {
namespace {

const std::vector<std::string> kGenerators = {"spectrum-x", "hpn", "dcn+", "fat-tree"};

/// The member a key sets; its type says how the value is read (uint64_t: a rate, Time: a delay).
using Target = std::variant<uint32_t*, uint64_t*, Time*, bool*, double*, std::string*>;

/// The keys every SimAI leaf–spine generator shares.
template <class P>
std::optional<Target> leaf_spine_field(P& p, std::string_view k) {
  if (k == "gpus") return &p.gpus;
  if (k == "gpus_per_server") return &p.gpus_per_server;
  if (k == "nvswitches_per_server") return &p.nvswitches_per_server;
  if (k == "nvlink_rate") return &p.nvlink_rate_bps;
  if (k == "nvlink_delay") return &p.nvlink_delay;
  if (k == "nic_rate") return &p.nic_rate_bps;
  if (k == "nic_delay") return &p.nic_delay;
  if (k == "spine_rate") return &p.leaf_spine_rate_bps;
  if (k == "spine_delay") return &p.leaf_spine_delay;
  if (k == "spines") return &p.spines;
  if (k == "leaves_per_spine") return &p.leaves_per_spine;
  if (k == "error_rate") return &p.error_rate;
  if (k == "gpu_type") return &p.gpu_type;
  return std::nullopt;
}

/// The member of generator `g`'s parameters that key `k` sets, or nullopt if `g` takes no such key.
std::optional<Target> field(TopologySpec& t, const std::string& g, std::string_view k) {
  if (g == "spectrum-x") {
    if (k == "servers_per_segment") return &t.spectrum_x.servers_per_segment;
    return leaf_spine_field(t.spectrum_x, k);
  }
  if (g == "hpn") {
    if (k == "servers_per_segment") return &t.hpn.servers_per_segment;
    if (k == "dual_plane") return &t.hpn.dual_plane;
    return leaf_spine_field(t.hpn, k);
  }
  if (g == "dcn+") {
    if (k == "gpus_per_leaf") return &t.dcn_plus.gpus_per_leaf;
    if (k == "dual_tor") return &t.dcn_plus.dual_tor;
    return leaf_spine_field(t.dcn_plus, k);
  }
  FatTreeParams& p = t.fat_tree;
  if (k == "k") return &p.k;
  if (k == "gpus") return &p.gpus;
  if (k == "gpus_per_server") return &p.gpus_per_server;
  if (k == "nvswitches_per_server") return &p.nvswitches_per_server;
  if (k == "nvlink_rate") return &p.nvlink_rate_bps;
  if (k == "nvlink_delay") return &p.nvlink_delay;
  if (k == "nic_rate") return &p.host_rate_bps;
  if (k == "nic_delay") return &p.host_delay;
  if (k == "spine_rate") return &p.fabric_rate_bps;
  if (k == "spine_delay") return &p.fabric_delay;
  if (k == "error_rate") return &p.error_rate;
  if (k == "gpu_type") return &p.gpu_type;
  return std::nullopt;
}

/// "dcn+" or "spectrum-x and hpn": the generators that take key `k`.
std::string generators_taking(std::string_view k) {
  std::vector<std::string> takers;
  TopologySpec scratch;
  for (const std::string& g : kGenerators)
    if (field(scratch, g, k)) takers.push_back(g);
  std::string s;
  for (size_t i = 0; i < takers.size(); ++i)
    s += (i == 0 ? "" : i + 1 == takers.size() ? " and " : ", ") + takers[i];
  return s;
}

/// The smallest value a count key accepts; the generators check the rest (multiples, capacity).
uint64_t min_count(const std::string& g, std::string_view k) {
  if (k == "nvswitches_per_server") return 0;
  if (k == "gpus" && g == "fat-tree") return 0;  // 0 = k³/4 hosts
  if (k == "k") return 2;
  return 1;
}

void set(const Item& it, const std::string& g, Target target) {
  std::visit(
      [&](auto* p) {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, uint32_t>) *p = static_cast<uint32_t>(get_count(it, min_count(g, it.key)));
        else if constexpr (std::is_same_v<T, uint64_t>) *p = get_rate(it);
        else if constexpr (std::is_same_v<T, Time>) *p = get_time(it);
        else if constexpr (std::is_same_v<T, bool>) *p = get_bool(it);
        else if constexpr (std::is_same_v<T, double>) *p = get_fraction(it);
        else *p = get_string(it);
      },
      target);
}

std::string generator_name(const Item& it) {
  const std::string given = get_string(it);
  std::string lower;
  for (char c : given) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const std::string& g : kGenerators)
    if (lower == g) return g;
  fail(it, "unknown generator \"" + given + "\"",
       "did you mean \"" + closest(given, kGenerators) + "\"? The generators are spectrum-x, hpn, dcn+ and fat-tree");
}

}  // namespace

const std::vector<std::string>& topology_keys() {
  static const std::vector<std::string> keys = {
      "file", "generator", "write", "write_format", "gpus", "gpus_per_server", "nvswitches_per_server", "nvlink_rate",
      "nvlink_delay", "nic_rate", "nic_delay", "spine_rate", "spine_delay", "servers_per_segment",
      "gpus_per_leaf", "spines", "leaves_per_spine", "dual_plane", "dual_tor", "k", "gpu_type", "error_rate"};
  return keys;
}

void apply_topology(const std::vector<Item>& items, const std::string& scenario_path, const std::string& base_dir,
                    TopologySpec& t) {
  const Item* file = nullptr;
  const Item* gen = nullptr;
  for (const Item& it : items) {
    if (it.key == "file") file = &it;
    if (it.key == "generator") gen = &it;
  }
  if (file && gen) {
    const Item& later = gen->from_command_line()    ? *gen
                        : file->from_command_line() ? *file
                        : file->line > gen->line    ? *file
                                                    : *gen;
    const auto where = [](const Item& i) { return i.from_command_line() ? "the command line" : "line " + std::to_string(i.line); };
    throw InputError(later.file, later.line,
                     "topology.file (" + where(*file) + ") and topology.generator (" + where(*gen) + ") are both given",
                     "keep one: file reads a topology, generator builds one");
  }
  if (!file && !gen)
    throw InputError(scenario_path, t.line, "[topology] names neither a file nor a generator",
                     "add file = \"topology.txt\" or generator = \"spectrum-x\" (or hpn, dcn+, fat-tree)");
  if (file) t.file = get_existing_path(*file, base_dir, "topology file");
  if (gen) t.generator = generator_name(*gen);
  for (const Item& it : items) {
    if (it.key == "file" || it.key == "generator") continue;
    if (it.key == "write") {
      t.write = get_string(it);
      continue;
    }
    if (it.key == "write_format") {
      t.write_format = get_string(it);
      if (t.write_format != "simai" && t.write_format != "hpcc")
        fail(it, "write_format \"" + t.write_format + "\" is not a topology format", "write \"simai\" or \"hpcc\"");
      continue;
    }
    if (file)
      fail(it, "generator parameters do not apply when [topology] reads file = \"" + get_string(*file) + "\"",
           "remove " + it.key + ", or replace file with a generator");
    const auto target = field(t, t.generator, it.key);
    if (!target)
      fail(it, "the " + t.generator + " generator takes no " + it.key,
           "remove it: " + it.key + " is a parameter of " + generators_taking(it.key));
    set(it, t.generator, *target);
    if (it.from_command_line()) t.from_command_line.push_back(it.name() + "=" + it.raw);
  }
}

std::vector<std::pair<std::string, std::string>> topology_values(const TopologySpec& spec) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!spec.file.empty()) out.emplace_back("topology.file", spec.file);
  else out.emplace_back("topology.generator", spec.generator);
  if (!spec.write.empty()) {
    out.emplace_back("topology.write", spec.write);
    out.emplace_back("topology.write_format", spec.write_format);
  }
  if (spec.generator.empty()) return out;
  TopologySpec t = spec;  // field() hands out pointers into the parameters
  // The value in force: an unset leaves_per_spine is derived from the size.
  t.spectrum_x.leaves_per_spine = effective_leaves_per_spine(t.spectrum_x);
  t.hpn.leaves_per_spine = effective_leaves_per_spine(t.hpn);
  t.dcn_plus.leaves_per_spine = effective_leaves_per_spine(t.dcn_plus);
  for (const std::string& k : topology_keys()) {
    const auto target = field(t, t.generator, k);
    if (!target) continue;
    std::string text = std::visit(
        [](auto* p) -> std::string {
          using T = std::remove_pointer_t<decltype(p)>;
          if constexpr (std::is_same_v<T, uint32_t>) return std::to_string(*p);
          else if constexpr (std::is_same_v<T, uint64_t>) return format_data_rate(*p);
          else if constexpr (std::is_same_v<T, Time>) return std::to_string(*p) + "ps";
          else if constexpr (std::is_same_v<T, bool>) return *p ? "true" : "false";
          else if constexpr (std::is_same_v<T, double>) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.17g", *p);
            return buf;
          } else return *p;
        },
        *target);
    out.emplace_back("topology." + k, std::move(text));
  }
  return out;
}

}  // namespace scenario_detail

SimaiTopology build_topology(const Scenario& s) {
  const TopologySpec& t = s.topology;
  if (!t.file.empty()) return read_simai_topology(t.file);
  GeneratedFabric f;
  try {
    if (t.generator == "spectrum-x") f = generate_spectrum_x(t.spectrum_x);
    else if (t.generator == "hpn") f = generate_hpn(t.hpn);
    else if (t.generator == "dcn+") f = generate_dcn_plus(t.dcn_plus);
    else if (t.generator == "fat-tree") f = generate_fat_tree(t.fat_tree);
    else
      throw InputError(s.path, t.line, "unknown topology generator \"" + t.generator + "\"",
                       "use spectrum-x, hpn, dcn+ or fat-tree");
  } catch (const std::invalid_argument& e) {
    // The parameters may come from the file or from --set: say which were given on the command line.
    std::string given;
    for (const std::string& g : t.from_command_line) given += (given.empty() ? "" : ", ") + g;
    if (given.empty())
      throw InputError(s.path, t.line, e.what(), "change the [topology] parameters the message names");
    throw InputError(s.path, t.line, std::string(e.what()) + " (given on the command line: " + given + ")",
                     "change the parameters the message names, in [topology] or in --set");
  }
  SimaiTopology out = std::move(static_cast<SimaiTopology&>(f));
  out.topo.file = s.path + " [topology]";
  return out;
}

}  // namespace wh
