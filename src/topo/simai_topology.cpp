// Reader of SimAI topology files and writers of the HPCC / SimAI formats (docs/workloads.md §2).
#include "wormhole/topo/simai_topology.h"

#include <charconv>
#include <stdexcept>

#include "wormhole/core/input_error.h"
#include "wormhole/core/input_text.h"

namespace wh {
namespace {

const char* const kHeaderFix =
    "start the file with \"node_num gpus_per_server nvswitch_num switch_num link_num gpu_type\", "
    "e.g. \"34 8 2 16 96 H100\" (or the HPCC \"N S L\")";
const char* const kLinkFix = "write each link as \"src dst rate delay error_rate\", e.g. \"0 16 400Gbps 0.0005ms 0\"";

/// A 3-token (HPCC) header: read_topology does the work; GPUs must still be ids 0..G-1.
SimaiTopology read_hpcc_header_file(const std::string& path, const std::vector<InputToken>& toks) {
  SimaiTopology s;
  s.topo = read_topology(path);
  const uint32_t sw = s.topo.num_switches();
  s.gpus = s.topo.num_nodes - sw;
  s.gpus_per_server = 1;
  s.switches = sw;
  s.topo.is_nvswitch.assign(s.topo.num_nodes, 0);
  if (s.gpus == 0)
    throw InputError(path, toks[0].line, "no GPUs: every node is a switch", "connect at least one host");
  for (uint32_t k = 0; k < sw; ++k) {
    uint64_t id = 0;
    parse_uint(toks[3 + k].text, id);  // read_topology validated it
    if (id < s.gpus)
      throw InputError(path, toks[3 + k].line, "switch " + toks[3 + k].text + " has an id below the GPU count " +
                       std::to_string(s.gpus) + " (SimAI numbers the GPUs 0.." + std::to_string(s.gpus - 1) +
                       " before all switches)", "renumber the nodes: hosts first, then switches");
  }
  return s;
}

}  // namespace

SimaiTopology read_simai_topology(const std::string& path) {
  const std::vector<InputToken> toks = read_input_tokens(path);
  if (toks.empty()) throw InputError(path, 1, "empty file: no header", kHeaderFix);
  const int hline = toks[0].line;
  size_t nh = 0;
  while (nh < toks.size() && toks[nh].line == hline) ++nh;
  if (nh == 3) return read_hpcc_header_file(path, toks);
  if (nh != 6 && nh != 7)
    throw InputError(path, hline, "malformed header: " + std::to_string(nh) + " tokens on line " + std::to_string(hline) +
                     " (6 or 7 expected, or 3 for the HPCC format)", kHeaderFix);

  static const char* const kName[] = {"node_num", "gpus_per_server", "nvswitch_num", "switch_num", "link_num"};
  uint64_t h[5];
  for (int k = 0; k < 5; ++k)
    if (!parse_uint(toks[k].text, h[k]) || h[k] > UINT32_MAX)
      throw InputError(path, hline, "malformed header: " + std::string(kName[k]) + " \"" + toks[k].text +
                       "\" is not a whole number", kHeaderFix);
  if (nh == 7) {
    int64_t extra = 0;
    const std::string& x = toks[6].text;
    auto [p, ec] = std::from_chars(x.data(), x.data() + x.size(), extra);
    if (ec != std::errc() || p != x.data() + x.size())
      throw InputError(path, hline, "malformed header: the 7th token \"" + x + "\" is not an integer",
                       "drop it or write an integer");
  }
  const uint64_t n = h[0], gps = h[1], nvs = h[2], sw = h[3], l = h[4];
  if (n == 0) throw InputError(path, hline, "malformed header: node_num is 0", kHeaderFix);
  if (gps == 0) throw InputError(path, hline, "malformed header: gpus_per_server is 0", kHeaderFix);
  if (nvs + sw > n)
    throw InputError(path, hline, "the header counts disagree: " + std::to_string(nvs) + " NVSwitches + " +
                     std::to_string(sw) + " switches exceed node_num " + std::to_string(n),
                     "node_num counts GPUs, NVSwitches and switches");
  if (nvs + sw == n)
    throw InputError(path, hline, "the header counts disagree: no GPUs (node_num " + std::to_string(n) +
                     " = nvswitch_num + switch_num)", "node_num counts GPUs, NVSwitches and switches");
  const uint64_t gpus = n - nvs - sw;
  if (gpus % gps != 0)
    throw InputError(path, hline, "the header counts disagree: " + std::to_string(gpus) + " GPUs (node_num - nvswitch_num"
                     " - switch_num) are not a whole number of servers of " + std::to_string(gps) + " GPUs",
                     "check node_num, gpus_per_server and the switch counts");

  SimaiTopology s;
  Topology& t = s.topo;
  t.file = path;
  t.num_nodes = static_cast<uint32_t>(n);
  t.is_switch.assign(n, 0);
  s.topo.is_nvswitch.assign(n, 0);
  s.gpus = static_cast<uint32_t>(gpus);
  s.gpus_per_server = static_cast<uint32_t>(gps);
  s.nvswitches = static_cast<uint32_t>(nvs);
  s.switches = static_cast<uint32_t>(sw);
  s.gpu_type = toks[5].text;

  size_t i = nh;
  const std::string id_range = "switch ids are " + std::to_string(gpus) + ".." + std::to_string(n - 1) +
                               " (GPUs are 0.." + std::to_string(gpus - 1) + ")";
  for (uint64_t k = 0; k < nvs + sw; ++k, ++i) {
    const char* what = k < nvs ? "NVSwitch" : "switch";
    if (i >= toks.size())
      throw InputError(path, hline, "the header declares " + std::to_string(nvs) + " NVSwitches and " + std::to_string(sw) +
                       " switches but the file ends after " + std::to_string(k) + " ids",
                       "list the NVSwitch ids, then the switch ids, after the header");
    uint64_t id = 0;
    if (!parse_uint(toks[i].text, id))
      throw InputError(path, toks[i].line, std::string(what) + " id \"" + toks[i].text + "\" is not a whole number",
                       "list " + std::to_string(nvs + sw) + " ids after the header");
    if (id >= n || id < gpus)
      throw InputError(path, toks[i].line, std::string(what) + " id " + toks[i].text + " is out of range", id_range);
    if (t.is_switch[id])
      throw InputError(path, toks[i].line, std::string(what) + " id " + toks[i].text + " is listed twice",
                       "list each switch once");
    t.is_switch[id] = 1;
    if (k < nvs) s.topo.is_nvswitch[id] = 1;
  }

  const size_t spanning = read_link_lines(path, toks, i, l, hline, "link_num", t, {"GPUs", kLinkFix});
  std::vector<uint32_t> degree(n, 0);
  for (const TopoLink& link : t.links) ++degree[link.a], ++degree[link.b];
  // SimAI reads exactly link_num lines; more text is most likely links the header does not count.
  if (i < toks.size())
    rethrow_at_record_line(InputError(path, toks[i].line, "text after the " + std::to_string(l) + " links the header declares",
                                      "set link_num to the number of link lines, or delete the extra text"),
                           path, toks, spanning, 5, "link", kLinkFix);
  for (uint32_t v = 0; v < gpus; ++v)
    if (degree[v] == 0)
      throw InputError(path, hline, "disconnected GPU " + std::to_string(v) + " (no link names it)",
                       "add a link from GPU " + std::to_string(v) + " to its NVSwitch or a switch");
  return s;
}

std::string format_data_rate(uint64_t bps) {
  static const struct { uint64_t mul; const char* unit; } kUnits[] = {
      {1'000'000'000'000, "Tbps"}, {1'000'000'000, "Gbps"}, {1'000'000, "Mbps"}, {1'000, "kbps"}};
  for (const auto& u : kUnits)
    if (bps != 0 && bps % u.mul == 0) return std::to_string(bps / u.mul) + u.unit;
  return std::to_string(bps) + "bps";
}

std::string format_delay_ms(Time ps) {
  constexpr uint64_t kPsPerMs = 1'000'000'000;
  std::string s = ps < 0 ? "-" : "";
  const uint64_t v = ps < 0 ? 0 - static_cast<uint64_t>(ps) : static_cast<uint64_t>(ps);
  s += std::to_string(v / kPsPerMs);
  uint64_t frac = v % kPsPerMs;
  if (frac != 0) {
    std::string digits = std::to_string(frac);
    digits.insert(0, 9 - digits.size(), '0');
    digits.erase(digits.find_last_not_of('0') + 1);
    s += '.' + digits;
  }
  return s + "ms";
}

namespace {

std::string format_error_rate(double e) {
  char buf[32];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, e);  // shortest form that reads back exactly
  return std::string(buf, ec == std::errc() ? p : buf);
}

void write_links(const std::vector<TopoLink>& links, std::ostream& out) {
  for (const TopoLink& l : links)
    out << l.a << ' ' << l.b << ' ' << format_data_rate(l.rate_bps) << ' ' << format_delay_ms(l.delay) << ' '
        << format_error_rate(l.error_rate) << '\n';
}

}  // namespace

void write_hpcc_topology(const Topology& t, std::ostream& out) {
  out << t.num_nodes << ' ' << t.num_switches() << ' ' << t.links.size() << '\n';
  bool first = true;
  for (uint32_t v = 0; v < t.num_nodes; ++v)
    if (t.is_switch[v]) out << (first ? "" : " ") << v, first = false;
  out << '\n';
  write_links(t.links, out);
}

void write_simai_topology(const SimaiTopology& s, std::ostream& out) {
  const Topology& t = s.topo;
  auto nvswitch = [&](uint32_t v) { return v < s.topo.is_nvswitch.size() && s.topo.is_nvswitch[v] && t.is_switch[v]; };
  uint32_t nvs = 0;  // counted from the flags, so the header always agrees with line 2
  for (uint32_t v = 0; v < t.num_nodes; ++v) nvs += nvswitch(v);
  out << t.num_nodes << ' ' << s.gpus_per_server << ' ' << nvs << ' ' << t.num_switches() - nvs << ' '
      << t.links.size() << ' ' << (s.gpu_type.empty() ? "none" : s.gpu_type) << '\n';
  for (int pass = 0; pass < 2; ++pass)  // NVSwitches first, then Ethernet switches
    for (uint32_t v = 0; v < t.num_nodes; ++v)
      if (t.is_switch[v] && nvswitch(v) == (pass == 0)) out << v << ' ';
  out << '\n';
  write_links(t.links, out);
}

}  // namespace wh
