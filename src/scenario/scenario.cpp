// Reader of the native scenario file (TOML, toml++): collects every key with its file and line,
// applies the command-line overrides, then reads each table.
#include "wormhole/scenario/scenario.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <list>
#include <map>
#include <sstream>

#include <fmt/core.h>
#include <toml++/toml.h>

#include "items.h"
#include "topology_spec.h"
#include "wormhole/core/input_error.h"
#include "wormhole/io/poisson_flows.h"

namespace wh {
namespace {

using namespace scenario_detail;
namespace fs = std::filesystem;

const std::vector<std::string> kSections = {"topology", "workload", "network", "wormhole", "output", "job", "background"};
const std::vector<std::string> kJobKeys = {"name", "workload", "gpus", "placement", "start", "iterations", "pipeline"};
const std::vector<std::string> kBackgroundKeys = {"file", "begin", "cdf", "load", "duration", "end", "hosts", "seed"};
const std::vector<std::string> kWorkloadKeys = {"file",       "iterations", "send_latency", "zero_chunk",
                                                "report_gpu", "max_time",   "ignore_groups", "pipeline",
                                                "chakra",     "comm_groups", "virtual_stages"};
const std::vector<std::string> kOutputKeys = {"dir"};
const std::vector<std::string> kWormholeKeys = {"enabled", "theta", "window", "sample_interval", "fast_forward",
                                                "skip_back", "threads", "memo", "memo_rate_quantum", "verify",
                                                "error_bound", "collective_memo", "line_rate_window"};
/// The network (config.txt) key of each [wormhole] key, in the same order.
const std::vector<std::string> kWormholeNetworkKeys = {
    "WORMHOLE", "WORMHOLE_THETA", "WORMHOLE_WINDOW", "WORMHOLE_SAMPLE_INTERVAL_US", "WORMHOLE_FAST_FORWARD",
    "WORMHOLE_SKIP_BACK", "WORMHOLE_THREADS", "WORMHOLE_MEMO", "WORMHOLE_MEMO_RATE_QUANTUM_GBPS", "WORMHOLE_VERIFY",
    "WORMHOLE_ERROR_BOUND", "WORMHOLE_COLLECTIVE_MEMO", "WORMHOLE_LINE_RATE_WINDOW"};

/// Names other tools use for our keys, so a user coming from them is told the scenario's name.
const std::map<std::string, std::string> kAliases = {
    {"host_rate", "nic_rate"},         {"host_delay", "nic_delay"},     {"fabric_rate", "spine_rate"},
    {"fabric_delay", "spine_delay"},   {"leaf_spine_rate", "spine_rate"}, {"leaf_spine_delay", "spine_delay"},
    {"topology_file", "file"},         {"workload_file", "file"},      {"config_file", "config"}};

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool has_lower(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](unsigned char c) { return std::islower(c); });
}

const std::vector<std::string>& keys_of(const std::string& section) {
  if (section == "topology") return topology_keys();
  if (section == "workload") return kWorkloadKeys;
  if (section == "wormhole") return kWormholeKeys;
  if (section == "job") return kJobKeys;
  if (section == "background") return kBackgroundKeys;
  return kOutputKeys;
}

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path), dir_(fs::path(path).parent_path().string()) {}

  Scenario read(const std::vector<std::pair<std::string, std::string>>& overrides) {
    parse_file();
    collect_file_items();
    for (const auto& [k, v] : overrides) add_override(k, v);

    Scenario s;
    s.path = path_;
    s.name = fs::path(path_).stem().string();
    for (const Item& it : items_[""]) s.name = get_string(it);

    s.topology.line = section_line("topology");
    if (!has_section("topology"))
      throw InputError(path_, 0, "no [topology] table",
                       "add [topology] with file = \"topology.txt\" or generator = \"spectrum-x\"");
    apply_topology(items_["topology"], path_, dir_, s.topology);

    read_workload(s.workload, !job_items_.empty());
    read_jobs(s);
    read_background(s.background);
    read_network(s);
    read_wormhole(s.net.wormhole);
    for (const Item& it : items_["wormhole"]) s.wormhole_table |= it.key != "enabled";
    s.output_dir = "out/" + s.name;
    for (const Item& it : items_["output"]) s.output_dir = get_string(it);
    return s;
  }

 private:
  void parse_file() {
    std::ifstream in(path_, std::ios::binary);
    if (!in) throw InputError(path_, 0, "cannot open the scenario file", "check the path and its permissions");
    std::ostringstream text;
    text << in.rdbuf();
    try {
      doc_ = toml::parse(std::string_view(text.str()), std::string_view(path_));
    } catch (const toml::parse_error& e) {
      throw InputError(path_, static_cast<int>(e.source().begin.line),
                       "TOML syntax error (column " + std::to_string(e.source().begin.column) + "): " +
                           std::string(e.description()),
                       "write key = value lines under [section] headers; strings need quotes, e.g. "
                       "nic_rate = \"400Gbps\"");
    }
  }

  /// toml++ iterates tables in key order; items are kept in file order so that errors come in
  /// the order a reader meets them and network keys apply as written.
  void collect_file_items() {
    std::vector<std::pair<std::string, const toml::node*>> top;
    for (auto&& [k, v] : doc_) top.emplace_back(std::string(k.str()), &v);
    std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) { return line_of(*a.second) < line_of(*b.second); });
    for (const auto& [key, v] : top) {
      const int line = line_of(*v);
      if (key == "name") {
        items_[""].push_back({"", key, v, "", path_, line});
        continue;
      }
      if (!contains(kSections, key)) {
        const std::string meant = likely_meant(key, with_name(kSections));
        throw InputError(path_, line,
                         (v->is_table() ? "unknown table [" + key + "]" : "unknown top-level key \"" + key + "\""),
                         (meant.empty() ? "" : "did you mean " + meant + "? ") +
                             "The tables are [topology], [workload], [network], [wormhole], [output], [[job]] and "
                             "[background]; the one top-level key is name");
      }
      if (key == "job") {
        const toml::array* a = v->as_array();
        if (!a || !a->is_array_of_tables())
          throw InputError(path_, line, "\"job\" must be an array of tables",
                           "write each job as [[job]] on a line of its own and its keys below it");
        for (const toml::node& jt : *a) {
          auto& items = job_items_.emplace_back();
          job_lines_.push_back(line_of(jt));
          for (auto&& [k2, v2] : *jt.as_table()) items.push_back({"job", std::string(k2.str()), &v2, "", path_, line_of(v2)});
          std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.line < b.line; });
          for (const Item& it : items) check_key(it);
        }
        continue;
      }
      const toml::table* t = v->as_table();
      if (!t)
        throw InputError(path_, line, "\"" + key + "\" must be a table, not a value",
                         "write [" + key + "] on a line of its own and its keys below it");
      section_line_[key] = line;
      auto& items = items_[key];
      for (auto&& [k2, v2] : *t) items.push_back({key, std::string(k2.str()), &v2, "", path_, line_of(v2)});
      std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.line < b.line; });
      for (const Item& it : items) check_key(it);
    }
  }

  static int line_of(const toml::node& n) { return static_cast<int>(n.source().begin.line); }

  static std::vector<std::string> with_name(std::vector<std::string> v) {
    v.push_back("name");
    return v;
  }

  /// "section.key=value" sets a scenario key; "KEY=value" (no dot, upper case) a network key.
  void add_override(const std::string& k, const std::string& v) {
    const std::string fix =
        "write section.key=value for scenario keys (e.g. workload.iterations=2) or KEY=value for network keys "
        "(e.g. CC_MODE=3)";
    const size_t dot = k.find('.');
    std::string section = dot == std::string::npos ? "" : k.substr(0, dot);
    std::string key = dot == std::string::npos ? k : k.substr(dot + 1);
    if (key.empty()) throw InputError(kCommandLine, 0, "override \"" + k + "=" + v + "\" has no key", fix);
    if (dot == std::string::npos && key != "name") {
      if (has_lower(key)) {
        if (key == "wormhole")
          throw InputError(kCommandLine, 0, "override \"" + k + "\" names a table, not a key",
                           "write wormhole.enabled=true (or the network key WORMHOLE=1)");
        for (const char* sec : {"topology", "workload", "wormhole", "output"})
          if (contains(keys_of(sec), key))
            throw InputError(kCommandLine, 0, "override \"" + k + "\" names no table",
                             "write " + std::string(sec) + "." + key + "=" + v);
        throw InputError(kCommandLine, 0, "override \"" + k + "\" is neither section.key nor an HPCC KEY", fix);
      }
      section = "network";
    }
    if (dot != std::string::npos && !contains(kSections, section)) {
      const std::string meant = likely_meant(section, kSections);
      throw InputError(kCommandLine, 0, "override \"" + k + "\": unknown table \"" + section + "\"",
                       meant.empty() ? "the tables are topology, workload, network, wormhole, output and background"
                                     : "did you mean " + meant + "." + key + "?");
    }
    if (section == "job")
      throw InputError(kCommandLine, 0, "override \"" + k + "\": a [[job]] key names no one job",
                       "edit the [[job]] entry in the scenario (or give the common setting in [workload])");
    Item it{section, key, nullptr, v, kCommandLine, 0};
    it.node = &override_value(v, dot == std::string::npos && key != "name");
    check_key(it);
    items_[section].push_back(std::move(it));
  }

  /// The override's value as TOML: an integer, float, boolean, string or array if it reads as one, else the text.
  const toml::node& override_value(const std::string& v, bool raw_text) {
    toml::table& holder = override_values_.emplace_back();
    if (!raw_text) {
      try {
        toml::table parsed = toml::parse(std::string_view("v = " + v));
        const toml::node* n = parsed.get("v");
        if (n && (n->is_integer() || n->is_floating_point() || n->is_boolean() || n->is_string() || n->is_array())) {
          holder = std::move(parsed);
          return *holder.get("v");
        }
      } catch (const toml::parse_error&) {
        // Not a TOML value: take the text itself, e.g. 400Gbps or out/run1.
      }
    }
    // A network value quoted as in TOML (RATE_AI="50Mb/s") means its text, as in the file.
    const bool quoted = raw_text && v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front();
    holder.insert_or_assign("v", quoted ? v.substr(1, v.size() - 2) : v);
    return *holder.get("v");
  }

  void check_key(const Item& it) const {
    if (it.section.empty() || it.section == "network") {
      // The HPCC parser checks network keys and suggests the closest; only a misspelt `config` is
      // caught here, which it would not know.
      if (it.section == "network" && it.key != "config" && has_lower(it.key) && edit_distance(it.key, "config") <= 2)
        throw InputError(it.file, it.line, "unknown key \"" + it.key + "\" in [network]", "did you mean config?");
      return;
    }
    const std::vector<std::string>& valid = keys_of(it.section);
    if (contains(valid, it.key)) return;
    auto alias = kAliases.find(it.key);
    const std::string hint = alias != kAliases.end() && contains(valid, alias->second) ? alias->second
                                                                                        : likely_meant(it.key, valid);
    std::string keys;
    for (const std::string& k : valid) keys += (keys.empty() ? "" : ", ") + k;
    throw InputError(it.file, it.line, "unknown key \"" + it.key + "\" in [" + it.section + "]",
                     hint.empty() ? "the keys of [" + it.section + "] are " + keys : "did you mean " + hint + "?");
  }

  bool has_section(const std::string& s) { return section_line_.count(s) || !items_[s].empty(); }
  int section_line(const std::string& s) const {
    auto it = section_line_.find(s);
    return it == section_line_.end() ? 0 : it->second;
  }

  /// [[job]] entries: several jobs on the fabric (docs/workloads.md §11).
  void read_jobs(Scenario& s) {
    for (size_t k = 0; k < job_items_.size(); ++k) {
      JobSpec j;
      j.name = "job" + std::to_string(k);
      j.line = job_lines_[k];
      bool have_workload = false, have_gpus = false, have_policy = false;
      for (const Item& it : job_items_[k]) {
        if (it.key == "name") {
          // The name is a folder of the outputs and an HDF5 group (/jobs/<name>).
          j.name = get_string(it);
          if (j.name.empty() || j.name == "." || j.name == ".." || j.name.find_first_of("/\\") != std::string::npos)
            fail(it, "\"" + j.name + "\" cannot name a job (it names the job's output folder)",
                 "give a name without / or \\, not empty, . or .., e.g. name = \"a\"");
        } else if (it.key == "workload") j.workload = get_existing_path(it, dir_, "workload file"), have_workload = true;
        else if (it.key == "start") j.start = get_time(it);
        else if (it.key == "iterations") j.iterations = static_cast<uint32_t>(get_count(it, 1));
        else if (it.key == "pipeline") j.pipeline = pipeline_of(it), j.pipeline_set = true;
        else if (it.key == "placement") {
          j.policy = get_string(it);
          if (j.policy != "packed" && j.policy != "spread")
            fail(it, "\"" + j.policy + "\" is not a placement policy",
                 "write placement = \"packed\" (the lowest free GPUs) or \"spread\" (round robin over servers)");
          have_policy = true;
        } else if (it.key == "gpus") {
          have_gpus = true;
          j.gpus = gpu_list(it, j.count);
        }
      }
      const std::string where = "[[job]] " + j.name;
      if (!have_workload)
        throw InputError(path_, j.line, where + " has no workload", "add workload = \"workload.txt\" (a SimAI / AICB workload)");
      if (!have_gpus)
        throw InputError(path_, j.line, where + " has no gpus",
                         "add gpus = 16 (placed by placement), gpus = \"0-15\" or gpus = [0, 1, 2, 3]");
      if (have_policy && j.count == 0)
        throw InputError(path_, j.line, where + ": placement applies to a GPU count, but gpus lists the GPUs",
                         "write gpus = 16 with placement, or drop placement");
      for (const JobSpec& o : s.jobs)
        if (o.name == j.name)
          throw InputError(path_, j.line, "two jobs are named \"" + j.name + "\"", "give each [[job]] its own name");
      s.jobs.push_back(std::move(j));
    }
  }

  /// gpus = N (a count), "a-b" (a range of topology GPU ids) or [ids...].
  std::vector<uint32_t> gpu_list(const Item& it, uint32_t& count,
                                 const std::string& fix = "write gpus = 16 (a count placed by placement), gpus = "
                                                          "\"0-15\" or gpus = [0, 1, 2, 3]") {
    std::vector<uint32_t> ids;
    if (it.node->is_integer()) {
      count = static_cast<uint32_t>(get_count(it, 1));
      return ids;
    }
    if (const auto* arr = it.node->as_array()) {
      for (const toml::node& n : *arr) {
        const auto* v = n.as_integer();
        if (!v || v->get() < 0 || v->get() > UINT32_MAX) fail(it, "a GPU id must be a whole number", fix);
        ids.push_back(static_cast<uint32_t>(v->get()));
      }
    } else {
      const std::string r = get_string(it);
      const size_t dash = r.find('-');
      uint32_t a = 0, b = 0;
      try {
        size_t used = 0;
        if (dash == std::string::npos) throw std::invalid_argument("no dash");
        a = static_cast<uint32_t>(std::stoul(r.substr(0, dash), &used));
        if (used != dash) throw std::invalid_argument("junk");
        b = static_cast<uint32_t>(std::stoul(r.substr(dash + 1), &used));
        if (used != r.size() - dash - 1) throw std::invalid_argument("junk");
      } catch (const std::exception&) {
        fail(it, "\"" + r + "\" is not a range of GPU ids", fix);
      }
      if (b < a) fail(it, "range \"" + r + "\" ends before it starts", fix);
      for (uint32_t g = a; g <= b; ++g) ids.push_back(g);
    }
    if (ids.empty()) fail(it, "no GPUs are listed", fix);
    std::vector<uint32_t> sorted = ids;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) fail(it, "a GPU is listed twice", fix);
    return ids;
  }

  PipelineSchedule pipeline_of(const Item& it) {
    std::string v = get_string(it);
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
    if (v == "1f1b") return PipelineSchedule::OneFOneB;
    if (v == "gpipe") return PipelineSchedule::GPipe;
    if (v == "interleaved") return PipelineSchedule::Interleaved;
    if (v == "none") return PipelineSchedule::None;
    fail(it, "\"" + v + "\" is not a pipeline schedule",
         "write pipeline = \"1f1b\" (default), \"interleaved\", \"gpipe\", or \"none\" (PP taken as 1, as SimAI's "
         "ns-3 backend)");
  }

  /// [background]: a flow file, or a generated Poisson load (docs/workloads.md §11).
  void read_background(BackgroundSpec& b) {
    b.line = section_line("background");
    const Item* generated_only = nullptr;  // the first key that only a generated load takes
    const Item *duration = nullptr, *end = nullptr, *load = nullptr;
    for (const Item& it : items_["background"]) {
      if (it.key == "file") b.file = get_existing_path(it, dir_, "background flow file");
      else if (it.key == "begin") b.begin = get_time(it);
      else if (it.key == "cdf") read_cdf(it, b);
      else {
        if (!generated_only) generated_only = &it;
        if (it.key == "load") {
          b.load = get_number(it);
          if (!(b.load > 0 && b.load <= 1))
            fail(it, fmt::format("load {} is not in (0, 1]", b.load),
                 "give the fraction of each sending host's link bandwidth, e.g. load = 0.3");
          load = &it;
        } else if (it.key == "duration") duration = &it;
        else if (it.key == "end") end = &it;
        else if (it.key == "seed") b.seed = get_count(it, 0, INT64_MAX), b.seed_set = true;
        else if (it.key == "hosts") read_hosts(it, b);
      }
    }
    if (!has_section("background")) return;
    const std::string where = "[background]";
    if (!b.file.empty() && !b.cdf.empty())
      throw InputError(path_, b.line, where + " gives both file and cdf",
                       "give file (an HPCC flow file) or cdf (a generated Poisson load), not both");
    if (b.file.empty() && b.cdf.empty())
      throw InputError(path_, b.line, where + " has no file or cdf",
                       "add file = \"flow.txt\" (an HPCC flow file) or cdf = \"websearch\" with load and duration");
    if (!b.file.empty()) {
      if (generated_only)
        fail(*generated_only, generated_only->key + " applies to a generated load (cdf), not to a flow file",
             "drop it, or replace file by cdf = \"websearch\"");
      return;
    }
    if (!load) throw InputError(path_, b.line, where + ": a generated load needs load", "add load = 0.3 (30 % of each host's link)");
    if (duration && end)
      fail(*end, "both duration and end are given", "give one: duration = \"1ms\" or end = \"1.05ms\"");
    if (!duration && !end)
      throw InputError(path_, b.line, where + ": a generated load needs duration or end",
                       "add duration = \"1ms\" (arrivals from begin to begin + duration)");
    b.end = end ? get_time(*end) : b.begin + get_time(*duration);
    if (b.end <= b.begin)
      fail(end ? *end : *duration, end ? "end is not after begin" : "duration is 0",
           "give the window a length, e.g. duration = \"1ms\"");
  }

  /// cdf = a shipped name (any case) or the path of a CDF file.
  void read_cdf(const Item& it, BackgroundSpec& b) {
    const std::string v = get_string(it);
    b.cdf_line = it.line;
    const std::vector<std::string> names = shipped_flow_size_cdf_names();
    std::string low = v;
    for (char& c : low) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (contains(names, low)) {
      b.cdf = low;
      b.cdf_shipped = true;
      return;
    }
    const fs::path p = it.from_command_line() || fs::path(v).is_absolute() ? fs::path(v) : fs::path(dir_) / v;
    if (!fs::is_regular_file(p))
      fail(it, "\"" + v + "\" is neither a shipped CDF nor a file (looked for " + p.string() + ")",
           "name a shipped CDF (" + join(names) + "; closest: " + closest(v, names) +
               ") or give the path of a CDF file (SIZE_BYTES PERCENT per line)");
    b.cdf = p.string();
    b.cdf_shipped = false;
  }

  static std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  }

  /// hosts = "all", "free", "a-b" or [ids].
  void read_hosts(const Item& it, BackgroundSpec& b) {
    b.hosts_line = it.line;
    if (it.node->is_string() || it.from_command_line()) {
      const std::string v = get_string(it);
      if (v == "all" || v == "free") {
        b.hosts = v;
        return;
      }
    }
    if (it.node->is_integer())
      fail(it, "hosts takes which hosts send, not a count",
           "write hosts = \"all\", \"free\" (the GPUs no job uses), a range \"0-15\" or an array [0, 1, 2]");
    uint32_t count = 0;
    b.host_ids = gpu_list(it, count, "write hosts = \"all\", \"free\", a range \"0-15\" or an array [0, 1, 2]");
    b.hosts = "list";
  }

  void read_workload(WorkloadSpec& w, bool jobs) {
    w.line = section_line("workload");
    bool have_file = false;
    const Item* iterations = nullptr;
    for (const Item& it : items_["workload"]) {
      if (it.key == "file") w.file = get_existing_path(it, dir_, "workload file"), have_file = true;
      else if (it.key == "chakra") {
        const std::string prefix = get_string(it);
        w.chakra = it.from_command_line() || fs::path(prefix).is_absolute() ? prefix : (fs::path(dir_) / prefix).string();
        if (!fs::exists(w.chakra + ".0.et")) {
          std::error_code ec;
          fail(it, "no Chakra trace \"" + prefix + "\": looked for " + fs::absolute(w.chakra + ".0.et", ec).string(),
               "give the traces' common prefix PREFIX, of files PREFIX.0.et, PREFIX.1.et, ..., " +
                   std::string(it.from_command_line() ? "relative to the current directory" : "relative to the scenario's folder") +
                   " or absolute (make them first, e.g. with scripts/simai_to_chakra.py: docs/workloads.md §8)");
        }
      }
      else if (it.key == "comm_groups") w.comm_groups = get_existing_path(it, dir_, "communicator groups file");
      else if (it.key == "iterations") w.iterations = static_cast<uint32_t>(get_count(it, 1)), iterations = &it;
      else if (it.key == "send_latency") w.send_latency = get_time(it);
      else if (it.key == "report_gpu") w.report_gpu = static_cast<uint32_t>(get_count(it, 0));
      else if (it.key == "max_time") w.max_time = get_time(it);
      else if (it.key == "ignore_groups") {
        const auto* a = it.node->as_array();
        const std::string fix = "write e.g. ignore_groups = [\"TP\"] (groups: TP, DP, EP, DP_EP)";
        if (!a) fail(it, "ignore_groups must be an array of group names", fix);
        w.ignore_groups.clear();
        for (const toml::node& n : *a) {
          const auto* v = n.as_string();
          const std::string g = v ? v->get() : "";
          if (g != "TP" && g != "DP" && g != "EP" && g != "DP_EP")
            fail(it, "\"" + (v ? g : std::string("?")) + "\" is not a communication group", fix);
          w.ignore_groups.push_back(g);
        }
      }
      else if (it.key == "pipeline") w.pipeline = pipeline_of(it);
      else if (it.key == "virtual_stages") w.virtual_stages = static_cast<uint32_t>(get_count(it, 1));
      else if (it.key == "zero_chunk") {
        const std::string z = get_string(it);
        if (z == "no-flows") w.zero_chunk = ZeroChunk::NoFlows;
        else if (z == "one-byte") w.zero_chunk = ZeroChunk::ClampToOneByte;
        else fail(it, "\"" + z + "\" is not a zero-chunk policy", "write " + example(it, "\"no-flows\"") + " (SimAI) or " + example(it, "\"one-byte\""));
      }
    }
    if (have_file && !w.chakra.empty())
      throw InputError(path_, w.line, "[workload] names both a file and Chakra traces", "give file (SimAI) or chakra (traces), not both");
    if (!w.chakra.empty() && iterations && w.iterations != 1)
      fail(*iterations, "a Chakra trace runs once (it is one iteration's graph)", "remove workload.iterations");
    if (!w.chakra.empty()) have_file = true;
    if (jobs && have_file)
      throw InputError(path_, w.line, "[workload] names a file and the scenario has [[job]] entries",
                       "give each job its workload in [[job]] and keep [workload] for their common settings");
    if (!have_file && !jobs)
      throw InputError(path_, w.line, has_section("workload") ? "[workload] has no file" : "no [workload] table",
                       "add [workload] with file = \"workload.txt\" (a SimAI / AICB workload), or [[job]] entries");
  }

  /// [wormhole] after [network]: its keys win over WORMHOLE_* lines of the network config — but not
  /// over a network key given on the command line (--set WORMHOLE=0 turns off a scenario's Wormhole:
  /// the command line wins over the file, whichever spelling either uses).
  void read_wormhole(WormholeSettings& w) {
    auto set_on_command_line = [&](const std::string& key) {
      const auto k = std::find(kWormholeKeys.begin(), kWormholeKeys.end(), key) - kWormholeKeys.begin();
      const std::string net = kWormholeNetworkKeys[static_cast<size_t>(k)];
      for (const Item& n : items_["network"])
        if (n.from_command_line() && n.key == net) return true;
      return false;
    };
    for (const Item& it : items_["wormhole"]) {
      if (!it.from_command_line() && set_on_command_line(it.key)) continue;
      if (it.key == "enabled") w.enabled = get_bool(it);
      else if (it.key == "theta") {
        // A spread threshold of 0 would never pass, and one of 1 or more always.
        const auto v = it.node->value<double>();
        if (v && !(*v > 0 && *v < 1)) fail(it, "theta must be above 0 and below 1", "write e.g. theta = 0.05 (5 %)");
        w.theta = get_fraction(it);
      }
      else if (it.key == "window") {
        if (const auto* i = it.node->as_integer(); i && i->get() < 1)
          fail(it, "window must be at least 1 sample", "write e.g. " + example(it, "2000") + " (the paper's l)");
        w.window = get_count(it, 1, 10'000'000);  // window × interval must stay far inside a Time
      }
      else if (it.key == "sample_interval") {
        w.sample_interval = get_time(it);
        if (w.sample_interval < kNs || w.sample_interval > 100 * kMs)
          fail(it, "the sample interval must be between 1 ns and 100 ms", "write e.g. " + example(it, "\"1us\""));
      }
      else if (it.key == "fast_forward") w.fast_forward = get_bool(it);
      else if (it.key == "skip_back") w.skip_back = get_bool(it);
      else if (it.key == "threads") w.threads = static_cast<unsigned>(get_count(it, 0, 1024));
      else if (it.key == "memo") w.memo = get_bool(it);
      else if (it.key == "collective_memo") w.collective_memo = get_bool(it);
      else if (it.key == "line_rate_window") w.line_rate_window = get_bool(it);
      else if (it.key == "memo_rate_quantum") {
        w.memo_rate_quantum_bps = get_rate(it);
        // The same range as WORMHOLE_MEMO_RATE_QUANTUM_GBPS: 1 Mb/s to 10 Tb/s.
        if (w.memo_rate_quantum_bps < 1'000'000 || w.memo_rate_quantum_bps > 10'000'000'000'000ull)
          fail(it, "the memo rate quantum must be between 1 Mb/s and 10 Tb/s", "write e.g. " + example(it, "\"1Gbps\""));
      }
      else if (it.key == "verify") {
        w.verify = get_number(it);
        if (const std::string bad = verify_setting_problem(w.verify); !bad.empty())
          fail(it, bad, "write e.g. verify = 0.1 (a tenth of the skips and replays) or verify = 20 (the first 20 of each)");
      }
      else if (it.key == "error_bound") {
        w.error_bound = get_number(it);
        if (const std::string bad = error_bound_problem(w.error_bound); !bad.empty())
          fail(it, bad, "write e.g. error_bound = 0.01 (1 %)");
      }
    }
  }

  void read_network(Scenario& s) {
    std::string base;
    std::vector<ConfigSetting> settings;
    for (const Item& it : items_["network"]) {
      if (it.key == "config") {
        base = get_existing_path(it, dir_, "network config");
        continue;
      }
      settings.push_back({it.key, get_config_text(it), it.file, it.line});
      if ((it.key == "TOPOLOGY_FILE" || it.key == "FLOW_FILE") && !it.from_command_line())
        s.warnings.push_back(it.file + ":" + std::to_string(it.line) + ": " + it.key +
                             " is not used by a scenario: [topology] and [workload] give the inputs");
    }
    s.net = make_hpcc_config(base, settings, path_);
  }

  std::string path_, dir_;
  toml::table doc_;
  std::list<toml::table> override_values_;  // a list: Items point into it
  std::map<std::string, int> section_line_;
  std::map<std::string, std::vector<Item>> items_;  // by table ("" = top level), file order then overrides
  std::vector<std::vector<Item>> job_items_;        // per [[job]], file order
  std::vector<int> job_lines_;
};

}  // namespace

Scenario read_scenario(const std::string& path, const std::vector<std::pair<std::string, std::string>>& overrides) {
  return Reader(path).read(overrides);
}

std::vector<std::pair<std::string, std::string>> scenario_values(const Scenario& s) {
  std::vector<std::pair<std::string, std::string>> out = {{"name", s.name}};
  for (auto& kv : topology_values(s.topology)) out.push_back(std::move(kv));
  const WorkloadSpec& w = s.workload;
  out.emplace_back("workload.file", w.file);
  out.emplace_back("workload.iterations", std::to_string(w.iterations));
  out.emplace_back("workload.send_latency", std::to_string(w.send_latency) + "ps");
  out.emplace_back("workload.zero_chunk", w.zero_chunk == ZeroChunk::NoFlows ? "no-flows" : "one-byte");
  out.emplace_back("workload.report_gpu", std::to_string(w.report_gpu));
  out.emplace_back("workload.max_time", std::to_string(w.max_time) + "ps");
  std::string groups;
  for (const std::string& g : w.ignore_groups) groups += (groups.empty() ? "" : " ") + g;
  out.emplace_back("workload.ignore_groups", groups);
  const char* schedules[] = {"none", "1f1b", "gpipe", "interleaved"};
  out.emplace_back("workload.pipeline", schedules[static_cast<int>(w.pipeline)]);
  out.emplace_back("workload.virtual_stages", std::to_string(w.virtual_stages));
  const BackgroundSpec& b = s.background;
  if (!b.file.empty() || !b.cdf.empty()) {
    if (!b.file.empty()) out.emplace_back("background.file", b.file);
    out.emplace_back("background.begin", std::to_string(b.begin) + "ps");
    if (!b.cdf.empty()) {
      out.emplace_back("background.cdf", b.cdf);
      out.emplace_back("background.load", fmt::format("{}", b.load));
      out.emplace_back("background.end", std::to_string(b.end) + "ps");
      std::string hosts = b.hosts;
      if (b.hosts == "list") {
        hosts.clear();
        for (uint32_t h : b.host_ids) hosts += (hosts.empty() ? "" : " ") + std::to_string(h);
      }
      out.emplace_back("background.hosts", hosts);
      out.emplace_back("background.seed", std::to_string(b.seed_set ? b.seed : s.net.seed));
    }
  }
  out.emplace_back("network.config", s.net.path == s.path ? "" : s.net.path);
  out.emplace_back("output.dir", s.output_dir);
  return out;
}

std::vector<std::string> scenario_keys() {
  std::vector<std::string> keys = {"name", "network.config"};
  for (const char* section : {"topology", "workload", "wormhole", "output", "job", "background"})
    for (const std::string& k : keys_of(section)) keys.push_back(std::string(section) + "." + k);
  return keys;
}

}  // namespace wh
