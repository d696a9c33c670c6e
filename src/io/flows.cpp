// Readers of the HPCC flow.txt (docs/network-model.md §3) and trace.txt (§4).
#include "wormhole/io/flows.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <set>

#include "wormhole/io/hpcc_config.h"
#include "wormhole/core/input_error.h"

namespace wh {
namespace {


enum class StartParse { ok, malformed, negative, too_large };

/// Checks seconds as written ("2", "2.000000000", "2.0000000015", "2e0") and takes them to whole ns
/// from the decimal digits (truncated): the range checks use this exact value.
StartParse start_ns(const std::string& s, uint64_t& ns) {
  size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  std::string digits;  // integer and fraction digits, without the point
  long point = -1;     // digits before the decimal point
  for (; i < s.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(s[i]))) digits += s[i];
    else if (s[i] == '.' && point < 0) point = static_cast<long>(digits.size());
    else break;
  }
  if (digits.empty()) return StartParse::malformed;
  if (point < 0) point = static_cast<long>(digits.size());
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    long e = 0;
    bool eneg = false;
    if (++i < s.size() && (s[i] == '+' || s[i] == '-')) eneg = s[i++] == '-';
    if (i >= s.size()) return StartParse::malformed;
    for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) e = std::min(e * 10 + (s[i] - '0'), 100000L);
    point += eneg ? -e : e;
  }
  if (i != s.size()) return StartParse::malformed;
  const long cut = point + 9;  // digits that make up whole ns
  ns = 0;
  bool nonzero = false;
  for (long k = 0; k < cut; ++k) {
    const int d = k < static_cast<long>(digits.size()) ? digits[k] - '0' : 0;
    if (ns > (UINT64_MAX - d) / 10) return StartParse::too_large;
    ns = ns * 10 + d;
  }
  for (char c : digits) nonzero |= c != '0';
  if (neg && nonzero) return StartParse::negative;
  return StartParse::ok;
}

/// "16..35" style list of the switch ids, for messages.
std::string switch_ranges(const Topology& topo) {
  std::string out;
  for (uint32_t v = 0; v < topo.num_nodes;) {
    if (!topo.is_switch[v]) { ++v; continue; }
    uint32_t w = v;
    while (w + 1 < topo.num_nodes && topo.is_switch[w + 1]) ++w;
    if (!out.empty()) out += ", ";
    out += std::to_string(v) + (w > v ? ".." + std::to_string(w) : "");
    v = w + 1;
  }
  return out;
}

}  // namespace

uint64_t reference_start_ns(double seconds) {
  // The reference reads the start with `>> double` (correctly rounded) and schedules at
  // Seconds(start): int64x64_t(double) keeps floor(v) in the high word and trunc(frac(v) * 2^64) in
  // the low one, the product with 10^9 is exact, and Time keeps the high word (ns-3.17's
  // int64x64-128 and nstime.h). So the start is floor(v * 10^9) of the binary double: 1 ns below
  // the decimal value for about half the starts a 9-digit generator writes.
  if (!(seconds > 0)) return 0;
  const double hi = std::floor(seconds);
  const auto frac = static_cast<unsigned __int128>(std::ldexp(seconds - hi, 64));  // exact: below 2^64
  const unsigned __int128 fixed = (static_cast<unsigned __int128>(hi) << 64) + frac;
  return static_cast<uint64_t>((fixed * 1000000000u) >> 64);
}

std::vector<FlowSpec> read_flows(const std::string& path, const Topology& topo, std::vector<std::string>* notes) {
  const std::vector<InputToken> toks = read_input_tokens(path);
  const char* const kLineFix = "write each flow as \"src dst pg dport size start_s\", e.g. \"0 1 3 100 1000000 2.0\"";
  uint64_t f = 0;
  if (toks.empty()) throw InputError(path, 1, "the file is empty", "start it with the number of flows");
  if (!parse_uint(toks[0].text, f))
    throw InputError(path, toks[0].line, "the flow count \"" + toks[0].text + "\" is not a whole number",
                     "start the file with the number of flows");
  const int header_line = toks[0].line;
  std::vector<FlowSpec> flows;
  size_t i = 1;
  size_t spanning = SIZE_MAX;  // the first flow read over more than one line
  for (uint64_t k = 0; k < f; ++k) {
    if (spanning == SIZE_MAX && record_spans_lines(toks, i, 6)) spanning = i;
    FlowSpec fl;
    try {
      if (i >= toks.size())
        throw InputError(path, header_line, "the header says " + std::to_string(f) + " flows but only " +
                         std::to_string(k) + " flow lines follow", "add the missing flows or set the count to " +
                         std::to_string(k));
      if (i + 6 > toks.size()) throw InputError(path, toks[i].line, "incomplete flow line", kLineFix);
      const InputToken* t = &toks[i];
      i += 6;
      fl.line = t[0].line;
      uint64_t v[5];
      static const char* const kField[] = {"src", "dst", "pg", "dport", "size"};
      for (int c = 0; c < 5; ++c)
        if (!parse_uint(t[c].text, v[c]))
          throw InputError(path, t[c].line, std::string(kField[c]) + " \"" + t[c].text + "\" is not a whole number", kLineFix);
      for (int c = 0; c < 2; ++c) {
        if (v[c] >= topo.num_nodes)
          throw InputError(path, t[c].line, std::string(kField[c]) + " " + t[c].text + " is out of range",
                           "node ids are 0.." + std::to_string(topo.num_nodes - 1) + " in " + topo.file);
        if (topo.is_switch[v[c]])
          throw InputError(path, t[c].line, std::string(kField[c]) + " " + t[c].text + " is a switch",
                           "flows run between hosts; switch ids are " + switch_ranges(topo));
      }
      if (v[0] == v[1])
        throw InputError(path, fl.line, "src and dst are both " + t[0].text, "a flow needs two different hosts");
      if (v[2] > 7)
        throw InputError(path, t[2].line, "pg " + t[2].text + " is not a priority group 0..7",
                         "use pg 3 as the upstream examples do");
      if (v[3] > 65535)
        throw InputError(path, t[3].line, "dport " + t[3].text + " does not fit in 16 bits", "give a port 0..65535");
      if (v[4] == 0 || v[4] >= (uint64_t(1) << 32))
        throw InputError(path, t[4].line, (v[4] ? "size " + t[4].text + " does not fit the reference's 32-bit size" : std::string("size 0: a flow needs at least 1 byte")),
                         "give a size in bytes from 1 to 4294967295");
      uint64_t ns = 0;
      switch (start_ns(t[5].text, ns)) {
        case StartParse::ok: break;
        case StartParse::malformed:
          throw InputError(path, t[5].line, "start time \"" + t[5].text + "\" is not a number of seconds", kLineFix);
        case StartParse::negative:
          throw InputError(path, t[5].line, "negative start time " + t[5].text, "give a start time >= 0 s (usually >= 2)");
        case StartParse::too_large:
          throw InputError(path, t[5].line, "start time " + t[5].text + " s is too large", "give a start time below 9e6 s");
      }
      if (ns > static_cast<uint64_t>(INT64_MAX / kNs))
        throw InputError(path, t[5].line, "start time " + t[5].text + " s is too large", "give a start time below 9e6 s");
      fl.src = static_cast<uint32_t>(v[0]);
      fl.dst = static_cast<uint32_t>(v[1]);
      fl.pg = static_cast<uint32_t>(v[2]);
      fl.dport = static_cast<uint32_t>(v[3]);
      fl.size_bytes = v[4];
      // The range checks above used the decimal value; the time is the reference's (binary) one.
      fl.start = static_cast<Time>(reference_start_ns(std::strtod(t[5].text.c_str(), nullptr))) * kNs;
      if (!flows.empty() && fl.start < flows.back().start)
        throw InputError(path, fl.line, "start time " + t[5].text + " s is earlier than the previous line's (line " +
                         std::to_string(flows.back().line) + "): the reference's flow scheduler breaks",
                         "sort flow.txt by start time");
    } catch (const InputError& e) {
      rethrow_at_record_line(e, path, toks, spanning, 6, "flow", kLineFix);
    }
    flows.push_back(fl);
  }

  std::set<int> extra_lines;
  const int last_line = i > 0 ? toks[i - 1].line : 0;
  for (size_t j = i; j < toks.size(); ++j)
    if (toks[j].line > last_line) extra_lines.insert(toks[j].line);
  if (!extra_lines.empty()) {
    const std::string note = path + ": header says " + std::to_string(f) + " flows, " +
                             std::to_string(extra_lines.size()) + " more lines ignored (as the reference)";
    if (notes) notes->push_back(note);
    else std::fprintf(stderr, "wormhole: note: %s\n", note.c_str());
  }
  return flows;
}

std::vector<uint32_t> read_trace_nodes(const std::string& path, uint32_t num_nodes) {
  const std::vector<InputToken> toks = read_input_tokens(path);
  uint64_t n = 0;
  if (toks.empty()) throw InputError(path, 1, "the file is empty", "write the number of nodes, then their ids");
  if (!parse_uint(toks[0].text, n))
    throw InputError(path, toks[0].line, "the node count \"" + toks[0].text + "\" is not a whole number",
                     "write the number of nodes, then their ids");
  if (n > toks.size() - 1)
    throw InputError(path, toks[0].line, "the count says " + toks[0].text + " nodes but only " +
                     std::to_string(toks.size() - 1) + " ids follow", "fix the count or add the ids");
  std::vector<uint32_t> ids;
  for (size_t k = 1; k <= n; ++k) {
    uint64_t id = 0;
    if (!parse_uint(toks[k].text, id))
      throw InputError(path, toks[k].line, "node id \"" + toks[k].text + "\" is not a whole number",
                       "list node ids separated by spaces");
    if (id < num_nodes) ids.push_back(static_cast<uint32_t>(id));
  }
  return ids;
}

}  // namespace wh
