// The lexer shared by the input readers and the ns-3 DataRate / Time string parsers.
#include "wormhole/core/input_text.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "wormhole/core/input_error.h"

namespace wh {
namespace {

using u128 = unsigned __int128;

/// A decimal number as mant × 10^exp10, kept exact up to 20 significant digits (later digits of
/// the fraction are dropped: they cannot move a result that fits in 64 bits).
struct Decimal {
  bool neg = false;
  u128 mant = 0;
  int exp10 = 0;
};

/// Scans `[sign] digits [. digits] [e [sign] digits]` at the start of s; returns its length, 0 if none.
size_t scan_decimal(std::string_view s, bool allow_sign, bool allow_exp, Decimal& d) {
  size_t i = 0;
  if (allow_sign && i < s.size() && (s[i] == '+' || s[i] == '-')) d.neg = s[i++] == '-';
  int sig = 0;
  bool any = false;
  auto digits = [&](bool frac) {
    for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
      any = true;
      if (sig < 20) {
        if (d.mant != 0 || s[i] != '0') d.mant = d.mant * 10 + (s[i] - '0'), ++sig;
        if (frac) --d.exp10;
      } else if (!frac) {
        ++d.exp10;
      }
    }
  };
  digits(false);
  if (i < s.size() && s[i] == '.') ++i, digits(true);
  if (!any) return 0;
  if (allow_exp && i + 1 < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    bool eneg = false;
    if (s[j] == '+' || s[j] == '-') eneg = s[j++] == '-';
    if (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) {
      int e = 0;
      for (; j < s.size() && std::isdigit(static_cast<unsigned char>(s[j])); ++j) e = std::min(e * 10 + (s[j] - '0'), 10000);
      d.exp10 += eneg ? -e : e;
      i = j;
    }
  }
  return i;
}

/// floor (or round half up) of |d| × mul × 10^extra; false if it does not fit in 64 bits.
bool scale(const Decimal& d, u128 mul, int extra, bool round, uint64_t& out) {
  constexpr u128 kMax = std::numeric_limits<uint64_t>::max();
  u128 v = d.mant * mul;  // < 2^67 × 2^43
  int k = d.exp10 + extra;
  if (v == 0) return out = 0, true;
  for (; k > 0; --k) {
    if (v > kMax) return false;
    v *= 10;
  }
  if (k < 0) {
    if (-k > 38) {
      v = 0;
    } else {
      u128 p = 1;
      for (int j = 0; j < -k; ++j) p *= 10;
      const u128 r = v % p;
      v /= p;
      if (round && r * 2 >= p) ++v;
    }
  }
  if (v > kMax) return false;
  out = static_cast<uint64_t>(v);
  return true;
}

}  // namespace

bool parse_uint(const std::string& s, uint64_t& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

std::vector<InputToken> read_input_tokens(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "cannot open the file", "check the path");
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  if (in.bad()) throw InputError(path, 0, "cannot read the file", "check the file");
  size_t i = s.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  std::vector<InputToken> out;
  int line = 1;
  while (i < s.size()) {
    const char ch = s[i];
    if (ch == '\n') {
      ++line, ++i;
    } else if (std::isspace(static_cast<unsigned char>(ch))) {
      ++i;
    } else {
      const size_t b = i;
      while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
      out.push_back({s.substr(b, i - b), line});
    }
  }
  return out;
}

bool record_spans_lines(const std::vector<InputToken>& toks, size_t first, size_t fields) {
  const size_t last = std::min(first + fields, toks.size()) - 1;
  return first < toks.size() && toks[last].line != toks[first].line;
}

void rethrow_at_record_line(const InputError& e, const std::string& path, const std::vector<InputToken>& toks,
                            size_t spanning, size_t fields, const std::string& what, const std::string& fix) {
  if (spanning >= toks.size()) throw e;
  const int line = toks[spanning].line;
  size_t k = 0;  // every field of that line, those of a record before it included
  for (const InputToken& t : toks) k += t.line == line;
  throw InputError(path, line,
                   "the line has " + std::to_string(k) + " field" + (k == 1 ? "" : "s") + " where a " + what + " has " +
                       std::to_string(fields) + ", so the " + what + "s after it were read shifted (the fields are read "
                       "as one stream, as the reference does); then, at line " + std::to_string(e.line()) +
                       ": " + e.problem(),
                   fix);  // the fix for the line, not the shifted field's (which would mislead)
}

uint64_t parse_data_rate(const std::string& s) {
  Decimal d;
  const size_t n = scan_decimal(s, false, false, d);
  if (n == 0) throw std::invalid_argument("\"" + s + "\" is not a data rate");
  const std::string_view unit = std::string_view(s).substr(n);
  struct Prefix { const char* p; u128 mul; };
  static const Prefix kPrefixes[] = {{"Ki", 1024}, {"Mi", 1024 * 1024}, {"Gi", u128(1) << 30},
                                     {"Ti", u128(1) << 40}, {"k", 1000}, {"K", 1000},
                                     {"M", 1000000}, {"G", 1000000000}, {"T", 1000000000000}, {"", 1}};
  u128 mul = 0;
  if (unit.empty()) {
    mul = 1;
  } else {
    for (const Prefix& p : kPrefixes) {
      if (!unit.starts_with(p.p)) continue;
      const std::string_view base = unit.substr(std::string_view(p.p).size());
      if (base == "bps" || base == "b/s") mul = p.mul;
      else if (base == "Bps" || base == "B/s") mul = p.mul * 8;
      if (mul) break;
    }
  }
  if (mul == 0)
    throw std::invalid_argument("\"" + s + "\" has an unknown rate unit \"" + std::string(unit) +
                                "\" (units: bps, b/s, Bps, B/s with k/K, M, G, T, Ki, Mi, Gi)");
  uint64_t out = 0;
  if (!scale(d, mul, 0, false, out)) throw std::invalid_argument("data rate \"" + s + "\" is too large");
  return out;
}

Time parse_time(const std::string& s) {
  Decimal d;
  const size_t n = scan_decimal(s, true, true, d);
  if (n == 0) throw std::invalid_argument("\"" + s + "\" is not a time");
  const std::string_view unit = std::string_view(s).substr(n);
  int e = 0;
  if (unit.empty() || unit == "s") e = 12;
  else if (unit == "ms") e = 9;
  else if (unit == "us") e = 6;
  else if (unit == "ns") e = 3;
  else if (unit == "ps") e = 0;
  else
    throw std::invalid_argument("\"" + s + "\" has an unknown time unit \"" + std::string(unit) +
                                "\" (units: s, ms, us, ns, ps)");
  uint64_t ps = 0;
  if (!scale(d, 1, e, true, ps) || ps > static_cast<uint64_t>(INT64_MAX))
    throw std::invalid_argument("time \"" + s + "\" is too large");
  return d.neg ? -static_cast<Time>(ps) : static_cast<Time>(ps);
}

std::string closest(std::string_view s, const std::vector<std::string>& valid) {
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const std::string& k : valid)
    if (size_t d = edit_distance(s, k); d < best_d) best_d = d, best = k;
  return best;
}

std::string likely_meant(std::string_view s, const std::vector<std::string>& valid) {
  std::string k = closest(s, valid);
  if (k.empty() || edit_distance(s, k) > std::max<size_t>(2, k.size() / 3)) return "";
  return k;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (same ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace wh
