// Reader of the HPCC config.txt (docs/network-model.md §1).
#include "wormhole/io/hpcc_config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "wormhole/core/input_error.h"

namespace wh {
namespace {

const char* const kKeys[] = {
    "ENABLE_QCN", "USE_DYNAMIC_PFC_THRESHOLD", "PAUSE_TIME", "DATA_RATE", "LINK_DELAY",
    "PACKET_PAYLOAD_SIZE", "L2_CHUNK_SIZE", "L2_ACK_INTERVAL", "L2_BACK_TO_ZERO", "TOPOLOGY_FILE",
    "FLOW_FILE", "TRACE_FILE", "TRACE_OUTPUT_FILE", "FCT_OUTPUT_FILE", "PFC_OUTPUT_FILE",
    "SIMULATOR_STOP_TIME", "CC_MODE", "ALPHA_RESUME_INTERVAL", "RATE_DECREASE_INTERVAL",
    "CLAMP_TARGET_RATE", "RP_TIMER", "EWMA_GAIN", "FAST_RECOVERY_TIMES", "RATE_AI", "RATE_HAI",
    "MIN_RATE", "DCTCP_RATE_AI", "ERROR_RATE_PER_LINK", "HAS_WIN", "GLOBAL_T", "VAR_WIN",
    "FAST_REACT", "U_TARGET", "MI_THRESH", "INT_MULTI", "MULTI_RATE", "SAMPLE_FEEDBACK",
    "PINT_LOG_BASE", "PINT_PROB", "RATE_BOUND", "ACK_HIGH_PRIO", "LINK_DOWN", "ENABLE_TRACE",
    "KMAX_MAP", "KMIN_MAP", "PMAX_MAP", "BUFFER_SIZE", "QLEN_MON_FILE", "QLEN_MON_START",
    "QLEN_MON_END", "BW_MON_FILE", "RATE_MON_FILE", "CNP_MON_FILE", "MON_START", "MON_END",
    "QP_MON_INTERVAL", "QLEN_MON_INTERVAL", "BW_MON_INTERVAL", "RTO_US", "NS_TRUNCATION", "SEED", "EVENT_ORDER",
    "PFC_LOSSLESS_HEADROOM",
    "WORMHOLE", "WORMHOLE_THETA", "WORMHOLE_WINDOW", "WORMHOLE_SAMPLE_INTERVAL_US", "WORMHOLE_FAST_FORWARD",
    "WORMHOLE_SKIP_BACK", "WORMHOLE_THREADS", "WORMHOLE_MEMO", "WORMHOLE_MEMO_RATE_QUANTUM_GBPS", "WORMHOLE_VERIFY",
    "WORMHOLE_ERROR_BOUND", "WORMHOLE_COLLECTIVE_MEMO", "WORMHOLE_LINE_RATE_WINDOW", "PORT_MON", "PORT_MON_INTERVAL", "PORT_MON_START", "PORT_MON_END", "PORT_MON_NODES"};

/// The unit of each key whose number stands for a quantity in a unit the reader does not take from the
/// text (rates take unit strings, e.g. 100Gbps, and are not here). docs/network-model.md §1's unit
/// cell of each key starts with it (a unit test holds the two equal); the error for "2ms" names it.
const std::pair<const char*, const char*> kUnits[] = {
    {"SIMULATOR_STOP_TIME", "s"}, {"PACKET_PAYLOAD_SIZE", "bytes"}, {"L2_ACK_INTERVAL", "bytes"},
    {"L2_CHUNK_SIZE", "bytes"}, {"RTO_US", "µs"}, {"BUFFER_SIZE", "MiB"}, {"PAUSE_TIME", "µs"},
    {"ALPHA_RESUME_INTERVAL", "µs"}, {"RATE_DECREASE_INTERVAL", "µs"}, {"RP_TIMER", "µs"},
    {"QLEN_MON_START", "ns"}, {"QLEN_MON_END", "ns"}, {"PORT_MON_INTERVAL", "ns"}, {"PORT_MON_START", "ns"},
    {"PORT_MON_END", "ns"}, {"MON_START", "µs"}, {"MON_END", "µs"}, {"QP_MON_INTERVAL", "µs"},
    {"BW_MON_INTERVAL", "µs"}, {"WORMHOLE_WINDOW", "samples"}, {"WORMHOLE_SAMPLE_INTERVAL_US", "µs"},
    {"WORMHOLE_MEMO_RATE_QUANTUM_GBPS", "Gb/s"}};

/// The longest stop time a Time (int64 ps) holds, in seconds (2^63 ps is about 9.22e6 s).
constexpr double kMaxStopTimeS = 9.2e6;

/// CC names accepted for CC_MODE besides the reference's numbers.
const std::pair<const char*, int> kCcNames[] = {{"dcqcn", 1}, {"hpcc", 3}, {"timely", 7}, {"dctcp", 8}, {"hpcc-pint", 10}};

bool is_key(std::string_view s) {
  return std::any_of(std::begin(kKeys), std::end(kKeys), [&](const char* k) { return s == k; });
}

/// The ECN maps' keys, in MapKind order (kMin, kMax, pMax).
const char* const kMapName[] = {"KMIN_MAP", "KMAX_MAP", "PMAX_MAP"};

bool is_ecn_map(std::string_view s) {
  return std::any_of(std::begin(kMapName), std::end(kMapName), [&](const char* k) { return s == k; });
}

/// The fix for an ECN map whose count is not the number of its pairs.
std::string map_count_fix(const std::string& map) {
  return "make the count after " + map + " the number of rate/value pairs that follow it";
}

// The fix for an unknown key: the known key it looks like a misspelling of, else where the keys are listed.
std::string unknown_key_fix(std::string_view s) {
  static const std::vector<std::string> keys(std::begin(kKeys), std::end(kKeys));
  if (const std::string k = likely_meant(s, keys); !k.empty()) return "did you mean " + k + "?";
  return "use a key of HPCC ns-3's config file (docs/network-model.md lists each one wormhole reads)";
}

void tokens_from(const std::string& s, std::vector<InputToken>& out, int line) {
  std::istringstream in(s);
  for (std::string t; in >> t;) out.push_back({t, line});
}

enum class MapKind { kMin, kMax, pMax };
struct EcnMap {
  std::map<uint64_t, double> values;
  std::string file;
  int line = 0;
  bool given = false;
};

/// Consumes the tokens of one source (the file, or one command-line override) into a SimConfig.
class ConfigParser {
 public:
  explicit ConfigParser(SimConfig& c) : c_(c) {}

  /// Reads every KEY value... in `toks`; with `one_key` exactly one key and all its values.
  void parse(const std::string& file, const std::vector<InputToken>& toks, bool one_key) {
    file_ = &file;
    toks_ = &toks;
    pos_ = 0;
    key_ = nullptr;
    while (pos_ < toks.size()) {
      prev_key_ = key_;
      key_ = &toks[pos_++];
      const size_t first = pos_;
      set(key_->text);
      std::string value;
      for (size_t j = first; j < pos_; ++j) value += (j > first ? " " : "") + toks[j].text;
      c_.raw.emplace_back(key_->text, value);
      auto prev = where_.find(key_->text);
      if (prev != where_.end() && prev->second.first == file)
        c_.warnings.push_back(file + ":" + std::to_string(key_->line) + ": " + key_->text + " is also set on line " +
                              std::to_string(prev->second.second) + "; the last value is used, as by the reference");
      where_[key_->text] = {file, key_->line};
      if (one_key && pos_ < toks.size())
        fail(toks[pos_], "extra value \"" + toks[pos_].text + "\"",
             "give " + key_->text + " only the values it takes");
    }
  }

  void finish();
  const std::map<std::string, std::pair<std::string, int>>& where() const { return where_; }

 private:
  [[noreturn]] void fail(const InputToken& t, const std::string& problem, const std::string& fix) const {
    throw InputError(*file_, t.line, key_->text + ": " + problem, fix);
  }

  /// "4MB", "9KB": a number and then letters, where the reference's file has the number alone in the
  /// key's unit (hpcc_config_unit; keys of no unit get the caller's "not a number"); `rest` is where the
  /// number read ended (nullptr: no number was read).
  void unit_given(const InputToken& t, const char* rest) const {
    const char* end = t.text.data() + t.text.size();
    if (!rest || rest == t.text.data() || rest == end) return;
    for (const char* c = rest; c != end; ++c)
      if (!std::isalpha(static_cast<unsigned char>(*c))) return;
    const std::string unit(hpcc_config_unit(key_->text));
    if (unit.empty()) return;  // a plain number: the caller says what to write
    fail(t, "\"" + t.text + "\" is not a number: values are written without a unit",
         "write the number alone, in " + unit + ": " + key_->text + " is read in " + unit +
             " (docs/network-model.md lists each key's unit)");
  }

  const InputToken& next() {
    if (pos_ >= toks_->size())
      throw InputError(*file_, key_->line, "missing value for " + key_->text + " at the end of the input",
                       "write the value after " + key_->text);
    const InputToken& t = (*toks_)[pos_];
    if (is_key(t.text))
      throw InputError(*file_, key_->line, "missing value for " + key_->text + " (the next token is the key " + t.text + ")",
                       "write the value after " + key_->text);
    ++pos_;
    return t;
  }

  /// CC_MODE as the reference's number, or as a name from kCcNames (ours).
  int cc_mode() {
    const InputToken& t = (*toks_)[pos_];
    if (!t.text.empty() && std::isalpha(static_cast<unsigned char>(t.text[0]))) {
      ++pos_;
      std::string lower;
      for (char ch : t.text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      for (const auto& [name, mode] : kCcNames)
        if (lower == name) return mode;
      std::string valid;
      for (const auto& [name, mode] : kCcNames) valid += std::string(valid.empty() ? "" : ", ") + name + " (" + std::to_string(mode) + ")";
      fail(t, "unknown congestion control \"" + t.text + "\"", "use one of " + valid);
    }
    return static_cast<int>(uint(INT32_MAX));
  }

  uint64_t uint(uint64_t max = std::numeric_limits<uint64_t>::max(), uint64_t min = 0) {
    const InputToken& t = next();
    const std::string whole = min > 0 ? "give a whole number of at least " + std::to_string(min) : "give a non-negative whole number";
    if (!t.text.empty() && t.text[0] == '-')
      fail(t, "negative value " + t.text + " makes no sense", whole);
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec == std::errc::result_out_of_range || (ec == std::errc() && p == t.text.data() + t.text.size() && v > max))
      fail(t, "value " + t.text + " is too large", "give at most " + std::to_string(max));
    if (ec != std::errc() || p != t.text.data() + t.text.size()) {
      unit_given(t, ec == std::errc() ? p : nullptr);
      fail(t, "\"" + t.text + "\" is not a whole number", whole);
    }
    if (v < min) fail(t, "value " + t.text + " must be at least " + std::to_string(min), "give at least " + std::to_string(min));
    return v;
  }

  bool flag() {
    const InputToken& t = next();
    if (t.text != "0" && t.text != "1") fail(t, "\"" + t.text + "\" is not 0 or 1", "write 0 or 1");
    return t.text == "1";
  }

  /// A real in [lo, hi] (hi excluded when `hi_open`).
  double real(double lo = 0, double hi = std::numeric_limits<double>::infinity(), bool hi_open = false) {
    const InputToken& t = next();
    double v = 0;
    auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc() || p != t.text.data() + t.text.size() || !std::isfinite(v)) {
      unit_given(t, ec == std::errc() ? p : nullptr);
      fail(t, "\"" + t.text + "\" is not a number", "give a decimal number such as 0.5");
    }
    if (v < 0 && lo >= 0 && lo == 0) fail(t, "negative value " + t.text + " makes no sense", "give a value >= 0");
    if (v < lo || v > hi || (hi_open && v == hi)) {
      std::ostringstream range;
      range << "[" << lo << ", " << hi << (hi_open ? ")" : "]");
      fail(t, "value " + t.text + " is outside " + range.str(), "give a value in " + range.str());
    }
    return v;
  }

  uint64_t rate() {
    const InputToken& t = next();
    try {
      return parse_data_rate(t.text);
    } catch (const std::invalid_argument& e) {
      fail(t, e.what(), "write a rate such as 100Gbps, 20Mb/s or a plain number of bit/s");
    }
  }

  std::string str() { return next().text; }

  void ecn_map(MapKind kind) {
    EcnMap& m = maps_[static_cast<int>(kind)];
    m = EcnMap{{}, *file_, key_->line, true};
    const uint64_t n = uint(1'000'000);
    for (uint64_t j = 0; j < n; ++j) {
      // Fewer pairs than the count says: the next key (or the end) is where a rate should be.
      if (pos_ >= toks_->size() || is_key((*toks_)[pos_].text))
        throw InputError(*file_, key_->line,
                         key_->text + " says " + std::to_string(n) + (n == 1 ? " rate" : " rates") + " but lists " +
                             std::to_string(j) +
                             (pos_ >= toks_->size() ? " before the end of the input"
                                                    : " before the key " + (*toks_)[pos_].text),
                         map_count_fix(key_->text));
      const uint64_t r = rate();
      const InputToken& rt = (*toks_)[pos_ - 1];
      if (r == 0) fail(rt, "rate 0 makes no sense", "key each entry by a link rate in bit/s");
      if (m.values.count(r)) fail(rt, "rate " + rt.text + " appears twice", "list each rate once");
      if (kind == MapKind::pMax) {
        m.values[r] = real(0, 1);
      } else {
        const uint64_t k = uint(std::numeric_limits<uint64_t>::max() / 1000);
        m.values[r] = static_cast<double>(k * 1000);
      }
    }
  }

  void set(const std::string& key);

  SimConfig& c_;
  const std::string* file_ = nullptr;
  const std::vector<InputToken>* toks_ = nullptr;
  size_t pos_ = 0;
  const InputToken* key_ = nullptr;
  const InputToken* prev_key_ = nullptr;  // the key read before key_ (nullptr: none in this input)
  std::map<std::string, std::pair<std::string, int>> where_;  // last place each key was set
  EcnMap maps_[3];
};

void ConfigParser::set(const std::string& k) {
  // kKeys is the one list of keys (the docs are checked against it): a branch below for a key not
  // in it is never reached.
  if (!is_key(k)) {
    // A number where a key should be, after an ECN map: the map has more pairs than its count says.
    if (prev_key_ && std::isdigit(static_cast<unsigned char>(k[0])) && is_ecn_map(prev_key_->text))
      throw InputError(*file_, key_->line,
                       "\"" + k + "\" where a key should be: " + prev_key_->text + " (line " +
                           std::to_string(prev_key_->line) + ") lists more rate/value pairs than its count says",
                       map_count_fix(prev_key_->text));
    throw InputError(*file_, key_->line, "unknown key \"" + k + "\"", unknown_key_fix(k));
  }
  SimConfig& c = c_;
  auto u32 = [&](uint32_t min = 0) { return static_cast<uint32_t>(uint(UINT32_MAX, min)); };
  if (k == "ENABLE_QCN") c.enable_qcn = flag();
  else if (k == "USE_DYNAMIC_PFC_THRESHOLD") c.use_dynamic_pfc_threshold = flag();
  else if (k == "PAUSE_TIME") c.pause_time_us = real();
  else if (k == "DATA_RATE") {
    const size_t at = pos_;
    rate();
    c.data_rate = (*toks_)[at].text;
  } else if (k == "LINK_DELAY") {
    const InputToken& t = next();
    try {
      if (parse_time(t.text) < 0) fail(t, "negative delay " + t.text, "give a delay >= 0");
    } catch (const std::invalid_argument& e) {
      fail(t, e.what(), "write a time such as 0.001ms or 1000ns");
    }
    c.link_delay = t.text;
  } else if (k == "PACKET_PAYLOAD_SIZE") c.packet_payload_size = u32(1);
  else if (k == "L2_CHUNK_SIZE") c.l2_chunk_size = u32();
  else if (k == "L2_ACK_INTERVAL") c.l2_ack_interval = u32();
  else if (k == "L2_BACK_TO_ZERO") c.l2_back_to_zero = flag();
  else if (k == "TOPOLOGY_FILE") c.topology_file = str();
  else if (k == "FLOW_FILE") c.flow_file = str();
  else if (k == "TRACE_FILE") c.trace_file = str();
  else if (k == "TRACE_OUTPUT_FILE") c.trace_output_file = str();
  else if (k == "FCT_OUTPUT_FILE") c.fct_output_file = str();
  else if (k == "PFC_OUTPUT_FILE") c.pfc_output_file = str();
  else if (k == "SIMULATOR_STOP_TIME") {
    const double s = real();
    // SimAI.conf ships 4e13 s to mean "never": taken as the longest simulable time (9.2e6 s, about
    // 106 days), silently, since every SimAI user has that line.
    c.simulator_stop_time_s = std::min(s, kMaxStopTimeS);
  }
  else if (k == "CC_MODE") c.cc_mode = cc_mode();
  else if (k == "ALPHA_RESUME_INTERVAL") c.alpha_resume_interval_us = real();
  else if (k == "RATE_DECREASE_INTERVAL") c.rate_decrease_interval_us = real();
  else if (k == "CLAMP_TARGET_RATE") c.clamp_target_rate = flag();
  else if (k == "RP_TIMER") c.rp_timer_us = real();
  else if (k == "EWMA_GAIN") c.ewma_gain = real(0, 1);
  else if (k == "FAST_RECOVERY_TIMES") c.fast_recovery_times = u32();
  else if (k == "RATE_AI") c.rate_ai_bps = rate();
  else if (k == "RATE_HAI") c.rate_hai_bps = rate();
  else if (k == "MIN_RATE") c.min_rate_bps = rate();
  else if (k == "DCTCP_RATE_AI") c.dctcp_rate_ai_bps = rate();
  else if (k == "ERROR_RATE_PER_LINK") c.error_rate_per_link = real(0, 1, true);
  else if (k == "HAS_WIN") c.has_win = flag();
  else if (k == "GLOBAL_T") c.global_t = flag();
  else if (k == "VAR_WIN") c.var_win = flag();
  else if (k == "FAST_REACT") c.fast_react = flag();
  else if (k == "U_TARGET") c.u_target = real();
  else if (k == "MI_THRESH") c.mi_thresh = u32();
  else if (k == "INT_MULTI") c.int_multi = u32(1);
  else if (k == "MULTI_RATE") c.multi_rate = flag();
  else if (k == "SAMPLE_FEEDBACK") c.sample_feedback = flag();
  else if (k == "PINT_LOG_BASE") c.pint_log_base = real();
  else if (k == "PINT_PROB") c.pint_prob = real(0, 1);
  else if (k == "RATE_BOUND") c.rate_bound = flag();
  else if (k == "ACK_HIGH_PRIO") c.ack_high_prio = flag();
  else if (k == "LINK_DOWN") {
    c.link_down_us = uint();
    c.link_down_a = u32();
    c.link_down_b = u32();
  } else if (k == "ENABLE_TRACE") c.enable_trace = flag();
  else if (k == "KMAX_MAP") ecn_map(MapKind::kMax);
  else if (k == "KMIN_MAP") ecn_map(MapKind::kMin);
  else if (k == "PMAX_MAP") ecn_map(MapKind::pMax);
  else if (k == "BUFFER_SIZE") c.buffer_size_mb = real(0, 1e9);
  else if (k == "QLEN_MON_FILE") c.qlen_mon_file = str();
  else if (k == "QLEN_MON_START") c.qlen_mon_start_ns = uint();
  else if (k == "QLEN_MON_END") c.qlen_mon_end_ns = uint();
  // SimAI's monitors (sim_config.h); its QLEN_MON_INTERVAL belongs to its own qlen format, not written.
  else if (k == "BW_MON_FILE") c.bw_mon_file = str();
  else if (k == "RATE_MON_FILE") c.rate_mon_file = str();
  else if (k == "CNP_MON_FILE") c.cnp_mon_file = str();
  else if (k == "MON_START") c.mon_start_us = uint(UINT64_MAX / 2'000'000);
  else if (k == "MON_END") c.mon_end_us = uint(UINT64_MAX / 2'000'000);
  else if (k == "BW_MON_INTERVAL") c.bw_mon_interval_us = uint(UINT64_MAX / 2'000'000, 1);
  else if (k == "QP_MON_INTERVAL") c.qp_mon_interval_us = uint(UINT64_MAX / 2'000'000, 1);
  else if (k == "QLEN_MON_INTERVAL") uint();
  else if (k == "PORT_MON") c.port_mon = flag();
  else if (k == "PORT_MON_INTERVAL") c.port_mon_interval_ns = uint(UINT64_MAX / 2000, 1);
  else if (k == "PORT_MON_START") c.port_mon_start_ns = uint(UINT64_MAX / 2000);
  else if (k == "PORT_MON_END") c.port_mon_end_ns = uint(UINT64_MAX / 2000);
  else if (k == "PORT_MON_NODES") {
    // switches | hosts | all, or a count and that many node ids (as the ECN maps count their entries)
    const InputToken& t = (*toks_)[pos_ < toks_->size() ? pos_ : pos_ - 1];
    if (t.text == "switches" || t.text == "hosts" || t.text == "all") {
      c.port_mon_nodes = next().text;
      c.port_mon_node_ids.clear();
    } else {
      const uint64_t n = uint(1'000'000'000, 1);
      c.port_mon_node_ids.clear();
      for (uint64_t j = 0; j < n; ++j) c.port_mon_node_ids.push_back(u32());
      c.port_mon_nodes = "list";
    }
  }
  else if (k == "RTO_US") c.rto_us = real();
  else if (k == "NS_TRUNCATION") c.ns_truncation = flag();
  else if (k == "PFC_LOSSLESS_HEADROOM") c.pfc_lossless_headroom = flag();
  else if (k == "SEED") c.seed = uint();
  else if (k == "WORMHOLE") c.wormhole.enabled = flag();
  else if (k == "WORMHOLE_THETA") {
    const InputToken& t = (*toks_)[pos_];
    double v = 0;
    auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc() || p != t.text.data() + t.text.size() || !(v > 0 && v < 1))
      fail(t, "WORMHOLE_THETA " + t.text + " is not a number above 0 and below 1", "give e.g. 0.05 (5 %)");
    c.wormhole.theta = real(0, 1, true);
  }
  // Bounded so that window × interval (ps) stays far inside a Time.
  else if (k == "WORMHOLE_WINDOW") c.wormhole.window = uint(10'000'000, 1);
  else if (k == "WORMHOLE_SAMPLE_INTERVAL_US") c.wormhole.sample_interval = static_cast<Time>(std::llround(real(1e-3, 1e5) * 1e6));
  else if (k == "WORMHOLE_FAST_FORWARD") c.wormhole.fast_forward = flag();
  else if (k == "WORMHOLE_SKIP_BACK") c.wormhole.skip_back = flag();
  else if (k == "WORMHOLE_THREADS") c.wormhole.threads = u32();
  else if (k == "WORMHOLE_MEMO") c.wormhole.memo = flag();
  else if (k == "WORMHOLE_COLLECTIVE_MEMO") c.wormhole.collective_memo = flag();
  else if (k == "WORMHOLE_LINE_RATE_WINDOW") c.wormhole.line_rate_window = flag();
  else if (k == "WORMHOLE_MEMO_RATE_QUANTUM_GBPS")
    c.wormhole.memo_rate_quantum_bps = static_cast<uint64_t>(std::llround(real(1e-3, 1e4) * 1e9));
  else if (k == "WORMHOLE_VERIFY") {
    const InputToken& t = (*toks_)[pos_];
    c.wormhole.verify = real(0, 1e12);
    if (const std::string bad = verify_setting_problem(c.wormhole.verify); !bad.empty())
      fail(t, "WORMHOLE_VERIFY " + t.text + ": " + bad, "give e.g. 0.1 (a tenth of the skips and replays) or 20 (the first 20 of each)");
  } else if (k == "WORMHOLE_ERROR_BOUND") {
    const InputToken& t = (*toks_)[pos_];
    c.wormhole.error_bound = real(0, 1);
    if (const std::string bad = error_bound_problem(c.wormhole.error_bound); !bad.empty())
      fail(t, "WORMHOLE_ERROR_BOUND " + t.text + ": " + bad, "give e.g. 0.01 (1 %)");
  }
  else if (k == "EVENT_ORDER") {
    const std::string v = str();
    if (v != "reference" && v != "portable")
      fail((*toks_)[pos_ - 1], "EVENT_ORDER \"" + v + "\" is not an order", "write EVENT_ORDER reference or EVENT_ORDER portable");
    c.portable_order = v == "portable";
  }
  else
    throw InputError(*file_, key_->line, "unknown key \"" + k + "\"", unknown_key_fix(k));
}

void ConfigParser::finish() {
  const std::string& path = c_.path;
  auto at = [&](const char* key) -> std::pair<std::string, int> {
    auto it = where_.find(key);
    return it == where_.end() ? std::pair<std::string, int>{path, 0} : it->second;
  };
  std::set<uint64_t> rates;
  for (const EcnMap& m : maps_)
    for (const auto& [r, v] : m.values) rates.insert(r);
  for (uint64_t r : rates) {
    for (int i = 0; i < 3; ++i) {
      if (maps_[i].values.count(r)) continue;
      const EcnMap& has = maps_[(i + 1) % 3].values.count(r) ? maps_[(i + 1) % 3] : maps_[(i + 2) % 3];
      const EcnMap& loc = maps_[i].given ? maps_[i] : has;
      throw InputError(loc.file, loc.line,
                       "rate " + std::to_string(r) + " has ECN thresholds in " +
                           kMapName[&has - maps_] + " but not in " + kMapName[i],
                       "give every rate in all three of KMIN_MAP, KMAX_MAP and PMAX_MAP");
    }
    EcnThresholds e;
    e.kmin_bytes = static_cast<uint64_t>(maps_[0].values[r]);
    e.kmax_bytes = static_cast<uint64_t>(maps_[1].values[r]);
    e.pmax = maps_[2].values[r];
    if (e.kmin_bytes > e.kmax_bytes)
      throw InputError(maps_[0].file, maps_[0].line,
                       "rate " + std::to_string(r) + ": KMIN " + std::to_string(e.kmin_bytes / 1000) +
                           " is above KMAX " + std::to_string(e.kmax_bytes / 1000),
                       "make KMIN_MAP <= KMAX_MAP for every rate");
    c_.ecn[r] = e;
  }

  if (c_.l2_ack_interval == 0) {
    auto [f, l] = at("L2_ACK_INTERVAL");
    throw InputError(f, l,
                     std::string(where_.count("L2_ACK_INTERVAL") ? "L2_ACK_INTERVAL is 0"
                                                                 : "L2_ACK_INTERVAL is not set (default 0)") +
                         ": the reference's senders ignore every ACK and no flow ever finishes",
                     "set L2_ACK_INTERVAL 1");
  }
  if (c_.l2_chunk_size == 0 && c_.l2_ack_interval > 1) {
    auto [f, l] = at("L2_CHUNK_SIZE");
    throw InputError(f, l,
                     "L2_CHUNK_SIZE is 0 with L2_ACK_INTERVAL " + std::to_string(c_.l2_ack_interval) +
                         ": the reference's receiver divides by zero",
                     "set L2_CHUNK_SIZE (e.g. 4000) or L2_ACK_INTERVAL 1");
  }
  if (c_.l2_back_to_zero && c_.l2_chunk_size == 0) {
    auto [f, l] = at("L2_BACK_TO_ZERO");
    throw InputError(f, l, "L2_BACK_TO_ZERO 1 with L2_CHUNK_SIZE 0: go-back-to-zero rounds to a chunk of 0 bytes",
                     "set L2_CHUNK_SIZE (e.g. 4000) or L2_BACK_TO_ZERO 0");
  }
  // The reference aborts on an empty RATE_AI / RATE_HAI whatever the mode; we only insist where
  // DCQCN uses them.
  // RATE_AI is DCQCN's, HPCC's, PINT's and TIMELY's increase step, RATE_HAI DCQCN's and TIMELY's.
  const int m = c_.cc_mode;
  for (const char* key : {"RATE_AI", "RATE_HAI"}) {
    const bool needed = std::string_view(key) == "RATE_AI" ? (m == 1 || m == 3 || m == 7 || m == 10) : (m == 1 || m == 7);
    if (!needed || where_.count(key)) continue;
    auto [f, l] = at("CC_MODE");
    throw InputError(f, l, std::string(key) + " is not set but CC_MODE " + std::to_string(m) + " needs it",
                     std::string("add ") + key + (std::string_view(key) == "RATE_AI" ? " 20Mb/s" : " 200Mb/s") +
                         " (or the rate you want)");
  }

}

}  // namespace

SimConfig make_hpcc_config(const std::string& base_path, const std::vector<ConfigSetting>& settings,
                           const std::string& owner_path) {
  SimConfig c;
  c.path = base_path.empty() ? owner_path : base_path;
  ConfigParser p(c);
  if (!base_path.empty()) {
    const std::vector<InputToken> toks = read_input_tokens(base_path);
    if (toks.empty())
      throw InputError(base_path, 0, "the file is empty",
                       "give the settings as KEY value lines (see the reference's config.txt)");
    p.parse(base_path, toks, false);
  }
  for (const ConfigSetting& s : settings) {
    std::vector<InputToken> toks;
    tokens_from(s.key, toks, s.line);
    if (toks.size() != 1) {
      const bool cmdline = s.file == "command line";
      throw InputError(s.file, s.line, (cmdline ? "override key \"" : "key \"") + s.key + "\" must be one word",
                       cmdline ? "write KEY=VALUE" : "write an HPCC key such as CC_MODE");
    }
    tokens_from(s.value, toks, s.line);
    p.parse(s.file, toks, true);
  }
  p.finish();
  c.key_origin = p.where();
  if (base_path.empty()) return c;

  // The reference resolves paths against its working directory; we also accept a config that
  // sits next to its inputs, decided once (by TOPOLOGY_FILE) so inputs and outputs share a base.
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(base_path).parent_path();
  std::error_code ec;
  const bool next_to_config = !dir.empty() && !c.topology_file.empty() &&
                              fs::path(c.topology_file).is_relative() &&
                              fs::exists(dir / c.topology_file, ec);
  if (next_to_config) {
    c.inputs_dir = dir.string();
    for (std::string* f : {&c.topology_file, &c.flow_file, &c.trace_file, &c.trace_output_file,
                           &c.fct_output_file, &c.pfc_output_file, &c.qlen_mon_file})
      if (!f->empty() && fs::path(*f).is_relative()) *f = (dir / *f).string();
  }
  return c;
}

SimConfig read_hpcc_config(const std::string& path,
                           const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::vector<ConfigSetting> settings;
  for (const auto& [key, value] : overrides) settings.push_back({key, value, "command line", 0});
  return make_hpcc_config(path, settings, path);
}

const std::vector<std::string>& hpcc_config_keys() {
  static const std::vector<std::string> keys(std::begin(kKeys), std::end(kKeys));
  return keys;
}

std::string_view hpcc_config_unit(std::string_view key) {
  for (const auto& [k, unit] : kUnits)
    if (key == k) return unit;
  return {};
}

void check_input_files(const SimConfig& c) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (auto [key, file] : {std::pair{"TOPOLOGY_FILE", &c.topology_file}, {"FLOW_FILE", &c.flow_file},
                           {"TRACE_FILE", &c.trace_file}}) {
    const auto [f, l] = c.origin_of(key);
    const bool optional = std::string_view(key) == "TRACE_FILE";
    if (file->empty() && optional) continue;
    if (file->empty()) throw InputError(f, l, std::string(key) + " is not set", std::string("add ") + key + " <path>");
    if (fs::exists(*file, ec)) continue;
    // Where it was looked for: beside the config (every relative path of a config whose TOPOLOGY_FILE
    // is there), or in the working folder (TOPOLOGY_FILE: in both); an absolute path names itself.
    const fs::path p(*file);
    const auto absolute = [&](const fs::path& x) { return (fs::current_path(ec) / x).lexically_normal().string(); };
    const fs::path rel = c.inputs_dir.empty() ? fs::path() : p.lexically_relative(c.inputs_dir);
    const bool beside = !rel.empty() && *rel.begin() != "..";  // (the reader joined it to the config's folder)
    const bool topology = std::string_view(key) == "TOPOLOGY_FILE";
    std::string where, fix;
    if (beside) {
      where = " beside the config: " + absolute(p);
      fix = "give a path relative to the config's folder (where its TOPOLOGY_FILE is), or an absolute path";
    } else if (!p.is_relative()) {
      fix = "check the path";
    } else {
      // A config named from its own folder ("config.txt") has no folder part: the current directory is
      // its folder, and the path was looked for there.
      const fs::path dir = fs::path(c.path).parent_path();
      const bool config_here = dir.empty() || fs::equivalent(dir, fs::current_path(ec), ec);
      where = ": " + absolute(p) + (topology && !config_here ? " (nor beside the config: " + absolute(dir / p) + ")" : "");
      fix = config_here ? "give a path relative to the config's folder (the current directory), or an absolute path"
            : topology  ? "give a path relative to the config's folder or to the current directory, or an absolute path"
                        : "give a path relative to the current directory (the config's TOPOLOGY_FILE is not beside it), or "
                          "an absolute path";
    }
    throw InputError(f, l, std::string(key) + " " + (beside ? rel.string() : *file) + " not found" + where, fix);
  }
}

}  // namespace wh
