// Reader of the HPCC topology.txt (docs/network-model.md §2).
#include "wormhole/io/topology.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "wormhole/io/hpcc_config.h"
#include "wormhole/core/input_error.h"

namespace wh {

TopoLink parse_link_line(const std::string& path, const InputToken* f, const Topology& t, const LinkLineStyle& style) {
  const uint64_t n = t.num_nodes;
  TopoLink link;
  link.line = f[0].line;
  uint64_t ends[2];
  for (int e = 0; e < 2; ++e) {
    if (!parse_uint(f[e].text, ends[e]))
      throw InputError(path, f[e].line, "link endpoint \"" + f[e].text + "\" is not a whole number", style.line_fix);
    if (ends[e] >= n)
      throw InputError(path, f[e].line, "link endpoint " + f[e].text + " is out of range",
                       "node ids are 0.." + std::to_string(n - 1));
  }
  link.a = static_cast<uint32_t>(ends[0]);
  link.b = static_cast<uint32_t>(ends[1]);
  if (link.a == link.b)
    throw InputError(path, link.line, "self-link " + f[0].text + " - " + f[1].text, "connect two different nodes");
  // A link between two hosts is an ordinary link (an NVLink mesh without a switch, as HPCC ns-3
  // runs it): the two talk over it in one hop; hosts still never forward (routing.cpp).
  try {
    link.rate_bps = parse_data_rate(f[2].text);
  } catch (const std::invalid_argument& e) {
    throw InputError(path, f[2].line, std::string("bad link rate: ") + e.what(), "write a rate such as 100Gbps");
  }
  if (link.rate_bps == 0)
    throw InputError(path, f[2].line, "link rate " + f[2].text + " is 0", "give a rate > 0, e.g. 100Gbps");
  try {
    link.delay = parse_time(f[3].text);
  } catch (const std::invalid_argument& e) {
    throw InputError(path, f[3].line, std::string("bad link delay: ") + e.what(), "write a delay such as 0.001ms or 1000ns");
  }
  if (link.delay < 0)
    throw InputError(path, f[3].line, "negative link delay " + f[3].text, "give a delay >= 0");
  const std::string& er = f[4].text;
  double err = -1;
  auto [p, ec] = std::from_chars(er.data(), er.data() + er.size(), err);
  if (ec != std::errc() || p != er.data() + er.size() || !(err >= 0 && err < 1))
    throw InputError(path, f[4].line, "bad error rate \"" + er + "\": it must be a number in [0, 1)",
                     "give a drop probability such as 0 or 0.001");
  link.error_rate = err;
  return link;
}

namespace {

// A number without a unit ("100", "0.001"): ns-3 reads a rate as bit/s and a delay as seconds, which
// is rarely what a topology meant (a 100-bit/s link, a 1-ms delay for a forgotten "ms"). Its value,
// or -1 where the token has a unit.
double bare_number(const std::string& s) {
  const size_t from = !s.empty() && s[0] == '+' ? 1 : 0;  // parse_time takes a sign, from_chars no '+'
  double v = 0;
  auto [p, ec] = std::from_chars(s.data() + from, s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() && from < s.size() ? v : -1;
}

// Rates from 1 Mb/s up, written bare, are taken as meant in bit/s; a zero delay needs no unit.
constexpr double kBareRateMeant = 1e6;

}  // namespace

size_t read_link_lines(const std::string& path, const std::vector<InputToken>& toks, size_t& i, uint64_t count,
                       int header_line, const char* count_key, Topology& t, const LinkLineStyle& style) {
  size_t spanning = SIZE_MAX;
  // The first link line with a bare rate / delay, and how many there are: one warning each.
  int bare_rate_line = 0, bare_delay_line = 0;
  uint64_t bare_rates = 0, bare_delays = 0;
  std::string bare_rate, bare_delay;
  t.links.reserve(t.links.size() + count);
  for (uint64_t k = 0; k < count; ++k) {
    if (spanning == SIZE_MAX && record_spans_lines(toks, i, 5)) spanning = i;
    try {
      if (i >= toks.size())
        throw InputError(path, header_line, "the header declares " + std::to_string(count) + " links but only " +
                         std::to_string(k) + " link lines follow",
                         "add the missing links or set " + std::string(count_key) + " to " + std::to_string(k));
      if (i + 5 > toks.size()) throw InputError(path, toks[i].line, "incomplete link line", style.line_fix);
      const InputToken* f = &toks[i];
      i += 5;
      t.links.push_back(parse_link_line(path, f, t, style));
      const double rate = bare_number(f[2].text), delay = bare_number(f[3].text);
      if (rate >= 0 && rate < kBareRateMeant && bare_rates++ == 0) bare_rate_line = f[2].line, bare_rate = f[2].text;
      if (delay > 0 && bare_delays++ == 0) bare_delay_line = f[3].line, bare_delay = f[3].text;
    } catch (const InputError& e) {
      rethrow_at_record_line(e, path, toks, spanning, 5, "link", style.line_fix);
    }
  }
  auto others = [](uint64_t n) {
    return n > 1 ? " (and " + std::to_string(n - 1) + " more link line" + (n > 2 ? "s" : "") + ")" : std::string();
  };
  if (bare_rates)
    t.warnings.push_back(path + ":" + std::to_string(bare_rate_line) + ": link rate " + bare_rate +
                         " has no unit, so it is read as " + bare_rate + " bit/s, as ns-3 reads it" + others(bare_rates) +
                         "; write the unit: " + bare_rate + "Gbps if that is meant, " + bare_rate + "bps to keep it");
  if (bare_delays)
    t.warnings.push_back(path + ":" + std::to_string(bare_delay_line) + ": link delay " + bare_delay +
                         " has no unit, so it is read as " + bare_delay + " s, as ns-3 reads it" + others(bare_delays) +
                         "; write the unit: " + bare_delay + "ms or " + bare_delay + "us if that is meant, " + bare_delay +
                         "s to keep it");
  return spanning;
}

Topology read_topology(const std::string& path) {
  const std::vector<InputToken> toks = read_input_tokens(path);
  Topology t;
  t.file = path;
  size_t i = 0;
  const char* const kHeaderFix = "start the file with \"N S L\": node count, switch count, link count";

  uint64_t hdr[3] = {0, 0, 0};
  static const char* const kHeaderName[] = {"node count", "switch count", "link count"};
  for (int h = 0; h < 3; ++h, ++i) {
    if (i >= toks.size())
      throw InputError(path, toks.empty() ? 1 : toks.back().line, "malformed header: the file ends before the " +
                       std::string(kHeaderName[h]), kHeaderFix);
    if (!parse_uint(toks[i].text, hdr[h]) || hdr[h] > UINT32_MAX)
      throw InputError(path, toks[i].line, "malformed header: " + std::string(kHeaderName[h]) + " \"" +
                       toks[i].text + "\" is not a whole number", kHeaderFix);
  }
  const int header_line = toks[2].line;
  const uint64_t n = hdr[0], s = hdr[1], l = hdr[2];
  if (n == 0) throw InputError(path, toks[0].line, "malformed header: the node count is 0", kHeaderFix);
  if (s > n)
    throw InputError(path, toks[1].line, "malformed header: " + std::to_string(s) + " switches but only " +
                     std::to_string(n) + " nodes", kHeaderFix);
  t.num_nodes = static_cast<uint32_t>(n);
  t.is_switch.assign(n, 0);

  const std::string id_range = "node ids are 0.." + std::to_string(n - 1);
  for (uint64_t k = 0; k < s; ++k, ++i) {
    if (i >= toks.size())
      throw InputError(path, header_line, "the header declares " + std::to_string(s) + " switches but the file ends after " +
                       std::to_string(k) + " switch ids", "list every switch id after the header");
    uint64_t id = 0;
    if (!parse_uint(toks[i].text, id))
      throw InputError(path, toks[i].line, "switch id \"" + toks[i].text + "\" is not a whole number",
                       "list " + std::to_string(s) + " switch ids after the header");
    if (id >= n)
      throw InputError(path, toks[i].line, "switch id " + toks[i].text + " is out of range", id_range);
    if (t.is_switch[id])
      throw InputError(path, toks[i].line, "switch id " + toks[i].text + " is listed twice", "list each switch once");
    t.is_switch[id] = 1;
  }

  const char* const kLinkFix = "write each link as \"a b rate delay error_rate\", e.g. \"0 16 100Gbps 0.001ms 0\"";
  read_link_lines(path, toks, i, l, header_line, "the link count", t, {"hosts", kLinkFix});
  std::vector<uint32_t> degree(n, 0);
  for (const TopoLink& link : t.links) ++degree[link.a], ++degree[link.b];

  for (uint32_t v = 0; v < n; ++v)
    if (!t.is_switch[v] && degree[v] == 0)
      throw InputError(path, header_line, "disconnected host " + std::to_string(v) + " (no link names it)",
                       "add a link from host " + std::to_string(v) + " to a switch, or list it as a switch");
  return t;
}

}  // namespace wh
