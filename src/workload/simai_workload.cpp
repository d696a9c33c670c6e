// Reader of SimAI / AICB workload files (docs/workloads.md §1).
#include "wormhole/workload/simai_workload.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <set>

#include "wormhole/core/input_error.h"
#include "wormhole/core/input_text.h"

namespace wh {
namespace {

// The policies SimAI's decode_parallelsim knows (§1.1); anything else aborts SimAI.
const char* const kPolicies[] = {"DATA",
                                 "HYBRID_TRANSFORMER",
                                 "HYBRID_TRANSFORMER_FWD_IN_BCKWD",
                                 "HYBRID_DLRM",
                                 "HYBRID_DLRM_ENHANCED",
                                 "MODEL",
                                 "HYBRID_DATA_MODEL",
                                 "HYBRID_MODEL_DATA",
                                 "HYBRID_CUSTOMIZED",
                                 "MICRO",
                                 "DISTRIBUTED_INFERENCE"};

std::string known_policies() {
  std::string s;
  for (const char* p : kPolicies) s += (s.empty() ? "" : ", ") + std::string(p);
  return s;
}

std::string where(const std::string& file, int line) { return file + ":" + std::to_string(line) + ": "; }

/// A header number as SimAI's std::stoi reads it: whole digits, optionally followed by a fraction
/// ("8388608.0"), which is dropped. Sets `fraction` when dropped digits were not all zero. False on
/// anything else (sign, exponent, letters, overflow): SimAI would abort or misread those.
bool header_number(const std::string& s, uint64_t& v, bool& fraction) {
  const size_t dot = s.find('.');
  if (!parse_uint(s.substr(0, dot), v)) return false;
  fraction = false;
  if (dot == std::string::npos) return true;
  for (size_t i = dot + 1; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    fraction |= s[i] != '0';
  }
  return true;
}

bool parse_int(const std::string& s, int& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

// The 12 row columns, for messages.
const char* const kColumns[] = {"name",          "depen",          "fwd compute time (ns)",
                                "fwd comm type", "fwd comm size (bytes)", "ig compute time (ns)",
                                "ig comm type",  "ig comm size (bytes)",  "wg compute time (ns)",
                                "wg comm type",  "wg comm size (bytes)",  "update time (ns)"};
const char* const kRowFormat =
    "a row is 12 fields: name depen fwd_compute fwd_type fwd_size ig_compute ig_type ig_size "
    "wg_compute wg_type wg_size update_time";

}  // namespace

const char* to_string(Collective c) {
  switch (c) {
    case Collective::AllReduce: return "AllReduce";
    case Collective::AllGather: return "AllGather";
    case Collective::ReduceScatter: return "ReduceScatter";
    case Collective::AllToAll: return "AllToAll";
    default: return "None";
  }
}

const char* to_string(CommGroup g) {
  switch (g) {
    case CommGroup::TP: return "TP";
    case CommGroup::DP: return "DP";
    case CommGroup::EP: return "EP";
    case CommGroup::DP_EP: return "DP_EP";
    default: return "None";
  }
}

CommOp parse_comm(const std::string& type, uint64_t size, bool wg_column) {
  CommOp c;
  c.raw = type;
  // SimAI's order (Workload.cc); "ALLREDUCEALLTOALL" is caught by the ALLREDUCE prefix first.
  struct Prefix { const char* name; Collective op; };
  static const Prefix kOps[] = {{"ALLREDUCE", Collective::AllReduce},
                                {"ALLTOALL", Collective::AllToAll},
                                {"ALLGATHER", Collective::AllGather},
                                {"REDUCESCATTER", Collective::ReduceScatter}};
  for (const Prefix& p : kOps) {
    const std::string op = p.name;
    if (type.compare(0, op.size(), op) != 0) continue;
    c.op = p.op;
    if (type == op) c.group = wg_column ? CommGroup::DP : CommGroup::TP;
    else if (type == op + "_EP") c.group = CommGroup::EP;
    else if (type == op + "_DP_EP") c.group = CommGroup::DP_EP;
    break;
  }
  if (c.op == Collective::None || size == 0) {
    c.op = Collective::None;
    c.group = CommGroup::None;
    return c;  // NONE with a size (§1.5 quirk 7), BROADCAST, unknown strings, size 0: no comm
  }
  c.bytes = size;
  return c;
}

Workload read_simai_workload(const std::string& path) {
  const std::vector<InputToken> toks = read_input_tokens(path);
  Workload w;
  w.file = path;
  WorkloadHeader& h = w.header;
  auto warn = [&](int line, const std::string& text) { h.warnings.push_back(where(path, line) + text); };

  // ---- line 1: header ----
  if (toks.empty() || toks[0].line != 1)
    throw InputError(path, 1, toks.empty() ? "empty file: no header line" : "line 1 is empty",
                     "line 1 must start with the parallelism policy, e.g. HYBRID_TRANSFORMER_FWD_IN_BCKWD");
  size_t p = 0;
  std::vector<std::string> head;
  for (; p < toks.size() && toks[p].line == 1; ++p) head.push_back(toks[p].text);
  h.policy = head[0];
  if (std::none_of(std::begin(kPolicies), std::end(kPolicies), [&](const char* k) { return h.policy == k; }))
    throw InputError(path, 1, "unknown parallelism policy \"" + h.policy + "\"",
                     "the first token must be one of " + known_policies() +
                         " (AICB writes HYBRID_TRANSFORMER_FWD_IN_BCKWD or MICRO)");
  h.micro = h.policy == "MICRO";
  const bool transformer = h.policy.rfind("HYBRID_TRANSFORMER", 0) == 0;

  struct Key { const char* name; uint32_t* v; bool seen; };
  Key keys[] = {{"model_parallel_NPU_group:", &h.tp, false}, {"ep:", &h.ep, false},
                {"pp:", &h.pp, false},  {"vpp:", &h.vpp, false},
                {"ga:", &h.ga, false},  {"all_gpus:", &h.all_gpus, false}};
  bool pp_comm_seen = false;
  for (size_t i = 1; i < head.size(); ++i) {
    const std::string& k = head[i];
    Key* key = nullptr;
    if (transformer)
      for (Key& c : keys)
        if (k == c.name) key = &c;
    const bool pp_comm = k == "pp_comm" || k == "pp_comm:";  // read for every policy, as SimAI
    const bool ckpt = transformer && (k == "checkpoints:" || k == "checkpoint_initiates:");
    if (!key && !pp_comm && !ckpt) continue;  // unknown tokens are ignored, as SimAI does
    if (i + 1 >= head.size())
      throw InputError(path, 1, "header key \"" + k + "\" has no value",
                       "write a number after it on line 1, e.g. \"" + k + " 1\"");
    const std::string& s = head[++i];
    uint64_t v = 0;
    bool fraction = false;
    const bool ok = header_number(s, v, fraction);
    if (!ok || (!pp_comm && v > std::numeric_limits<uint32_t>::max()))
      throw InputError(path, 1, "header key \"" + k + "\" has value \"" + s + "\", not a non-negative number",
                       "write a whole number after \"" + k + "\"");
    if (fraction) warn(1, "\"" + k + " " + s + "\" read as " + std::to_string(v) + " (fraction dropped, as SimAI's stoi does)");
    if (key) {
      *key->v = static_cast<uint32_t>(v);
      key->seen = true;
    } else if (pp_comm) {
      h.pp_comm_bytes = v;
      pp_comm_seen = true;
    } else if (v > 0) {
      warn(1, "\"" + k + " " + s + "\": activation-recomputation lists are ignored (SimAI mis-reads them)");
    }
  }
  if (transformer) {  // SimAI's "Input workload format mismatch" conditions (§1.1), as warnings
    const std::string mismatch = "header format mismatch (SimAI warns too): ";
    std::string missing, zero;
    for (const Key& c : keys) {
      if (!c.seen) missing += (missing.empty() ? "" : ", ") + std::string(c.name);
      else if (*c.v == 0) zero += (zero.empty() ? "" : ", ") + std::string(c.name) + " 0";
    }
    if (!missing.empty())
      warn(1, mismatch + "no " + missing + " (TP, EP, PP, vpp, ga default to 1; all_gpus to the topology's GPU count)");
    if (!zero.empty()) warn(1, mismatch + zero);
    if (h.pp != 1 && h.pp_comm_bytes == 0)
      warn(1, mismatch + "pp: " + std::to_string(h.pp) + " with " + (pp_comm_seen ? "pp_comm 0" : "no pp_comm"));
    if (h.pp == 1 && h.pp_comm_bytes != 0)
      warn(1, mismatch + "pp: 1 with pp_comm " + std::to_string(h.pp_comm_bytes));
  }

  // ---- line 2: row count ----
  const std::string count_fix = "line 2 must hold only the number of rows that follow";
  if (p >= toks.size() || toks[p].line != 2)
    throw InputError(path, 2, "no row count on line 2", count_fix);
  if (p + 1 < toks.size() && toks[p + 1].line == 2)
    throw InputError(path, 2, "line 2 has more than one token (\"" + toks[p].text + " " + toks[p + 1].text + " ...\")",
                     count_fix);
  uint64_t declared = 0;
  bool fraction = false;
  if (!header_number(toks[p].text, declared, fraction) || fraction || declared > uint64_t(std::numeric_limits<int>::max()))
    throw InputError(path, 2, "row count \"" + toks[p].text + "\" is not a whole number", count_fix);
  ++p;

  // ---- rows: declared × 12 (13) tokens, line structure ignored ----
  const size_t per = h.policy == "HYBRID_CUSTOMIZED" ? 13 : 12;  // 13th = per-row policy, skipped
  w.layers.reserve(std::min<uint64_t>(declared, (toks.size() - p) / per + 1));
  std::set<std::string> odd_types;  // warned once each
  for (uint64_t r = 0; r < declared && p < toks.size(); ++r, p += per) {
    const int line = toks[p].line;
    const std::string row = "row " + std::to_string(r + 1);
    if (toks.size() - p < per)
      throw InputError(path, line,
                       row + " has only " + std::to_string(toks.size() - p) + " of " + std::to_string(per) +
                           " fields: the file ends inside it",
                       std::string("complete the row or lower the row count on line 2; ") + kRowFormat);
    const InputToken* f = &toks[p];
    // Rows are read as SimAI reads them, token by token across lines; but where a bad field sits on a
    // later line than a short first line of its row, the field missing from that first line is the
    // likely cause: the error names that line.
    size_t on_first = 0;
    while (on_first < per && f[on_first].line == line) ++on_first;
    auto bad_field = [&](int col, const std::string& what, const std::string& fix) {
      const std::string field =
          "column " + std::to_string(col + 1) + " (" + kColumns[col] + ") is \"" + f[col].text + "\", " + what;
      if (on_first < per && f[col].line != line)
        throw InputError(path, line,
                         row + " has " + std::to_string(on_first) + " of its " + std::to_string(per) +
                             " fields on this line and goes on to line " + std::to_string(f[on_first].line) +
                             ", where " + field,
                         "a field missing on this line shifts the rest of the row onto the next; if none is, fix that "
                         "column; " + std::string(kRowFormat));
      throw InputError(path, f[col].line, row + ": " + field, fix);
    };
    auto number = [&](int col) {
      uint64_t v = 0;
      if (!parse_uint(f[col].text, v)) {
        const std::string& t = f[col].text;
        if (!t.empty() && t.find_first_not_of("0123456789") == std::string::npos)  // digits only: too large
          bad_field(col, "larger than 18446744073709551615 (2^64 - 1)",
                    "a size is in bytes and a time in ns: check its unit and its digits");
        bad_field(col, "not a whole non-negative number",
                  std::string("write a whole number there; ") + kRowFormat + " (a missing or extra field shifts the rest)");
      }
      return v;
    };
    auto comm = [&](int col, bool wg) {
      const uint64_t size = number(col + 1);
      const std::string& type = f[col].text;
      const CommOp kind = parse_comm(type, 1, wg);  // the string alone, whatever the size
      if (odd_types.insert(type).second) {
        if (kind.op == Collective::None && type != "NONE" && type.rfind("BROADCAST", 0) != 0) {
          // SimAI runs a row with a misspelled type as no communication, so this stays a warning; the
          // hint says which type was likely meant.
          static const std::vector<std::string> kTypes{
              "ALLREDUCE",     "ALLTOALL",      "ALLGATHER",        "REDUCESCATTER",        "ALLREDUCE_EP",
              "ALLTOALL_EP",   "ALLGATHER_EP",  "REDUCESCATTER_EP", "ALLREDUCE_DP_EP",      "ALLTOALL_DP_EP",
              "ALLGATHER_DP_EP", "REDUCESCATTER_DP_EP", "NONE"};
          const std::string meant = likely_meant(type, kTypes);
          warn(f[col].line, "comm type \"" + type + "\" is unknown: no communication (SimAI ignores it too)" +
                                (meant.empty() ? "" : "; did you mean " + meant + "?"));
        }
        else if (kind.op != Collective::None && kind.group == CommGroup::None)
          warn(f[col].line, "comm type \"" + type + "\" has an unknown suffix: " + to_string(kind.op) +
                                " with no group (as SimAI)");
      }
      return parse_comm(type, size, wg);
    };
    WorkloadLayer L;
    L.line = line;
    L.name = f[0].text;
    if (!parse_int(f[1].text, L.depen)) bad_field(1, "not an integer", std::string("write -1 there; ") + kRowFormat);
    L.fwd_compute_ns = number(2);
    L.fwd = comm(3, false);
    L.ig_compute_ns = number(5);
    L.ig = comm(6, false);
    L.wg_compute_ns = number(8);
    L.wg = comm(9, true);
    L.update_ns = number(11);
    // §1.5 quirk 5: SimAI issues a fwd collective of 1..4095 B as 4096 B; ig and wg stay as written.
    if (L.fwd.op != Collective::None && L.fwd.bytes < kMinFwdCommBytes) L.fwd.bytes = kMinFwdCommBytes;
    w.layers.push_back(std::move(L));
  }
  if (w.layers.size() < declared)
    warn(2, "line 2 declares " + std::to_string(declared) + " rows but the file has " +
                std::to_string(w.layers.size()) + ": using the " + std::to_string(w.layers.size()) +
                " present (SimAI would read past the end of the file)");
  if (p < toks.size())
    warn(toks[p].line, std::to_string(toks.size() - p) + " tokens after the " + std::to_string(declared) +
                           " declared rows are ignored (from \"" + toks[p].text + "\"; SimAI ignores them too)");
  return w;
}

}  // namespace wh
