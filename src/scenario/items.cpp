// Typed getters of scenario values: each turns a TOML value into a setting or an InputError that
// names the value's file and line and says what to write instead.
#include "items.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "wormhole/core/input_error.h"
#include "wormhole/core/input_text.h"

namespace wh::scenario_detail {
namespace {

/// How a value reads in a message: "the string \"x\"", "the number 1.5", ...
std::string describe(const toml::node& n) {
  if (auto s = n.as_string()) return "the string \"" + s->get() + "\"";
  if (auto i = n.as_integer()) return "the number " + std::to_string(i->get());
  if (auto f = n.as_floating_point()) {
    char buf[64];
    auto [p, ec] = std::to_chars(buf, buf + sizeof buf, f->get());
    return "the number " + std::string(buf, ec == std::errc() ? p : buf);
  }
  if (auto b = n.as_boolean()) return b->get() ? "true" : "false";
  if (n.is_array()) return "an array";
  if (n.is_table()) return "a table";
  return "a date or time";
}

std::string number_text(double v) {
  char buf[64];
  // Integral values as plain integers: "5e+07" would not read back as a rate.
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    auto [p, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<int64_t>(v));
    return std::string(buf, p);
  }
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, p);
}

std::string scalar_text(const Item& it, const toml::node& n) {
  if (auto s = n.as_string()) return s->get();
  if (auto i = n.as_integer()) return std::to_string(i->get());
  if (auto f = n.as_floating_point()) return number_text(f->get());
  if (auto b = n.as_boolean()) return b->get() ? "1" : "0";
  fail(it, describe(n) + " is not a setting value",
       "write a number, true / false, or a string such as \"50Mb/s\"");
}

}  // namespace

void fail(const Item& it, const std::string& problem, const std::string& fix) {
  throw InputError(it.file, it.line, it.name() + ": " + problem, fix);
}

std::string example(const Item& it, const std::string& toml_value) {
  if (!it.from_command_line()) return it.key + " = " + toml_value;
  std::string v = toml_value;
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  return "--set " + it.name() + "=" + v;
}

std::string get_string(const Item& it) {
  std::string s;
  if (auto v = it.node->as_string()) s = v->get();
  else if (it.from_command_line()) s = it.raw;
  else fail(it, describe(*it.node) + " is not a string", "write the value in quotes, e.g. " + example(it, "\"...\""));
  if (s.empty()) fail(it, "the value is empty", "give a value or remove the key");
  return s;
}

uint64_t get_count(const Item& it, uint64_t min, uint64_t max) {
  const std::string fix = "write a whole number >= " + std::to_string(min) + (it.from_command_line() ? "" : " without quotes") +
                          ", e.g. " + example(it, std::to_string(std::max<uint64_t>(min, 1)));
  auto v = it.node->as_integer();
  if (!v) fail(it, describe(*it.node) + " is not a whole number", fix);
  const int64_t n = v->get();
  if (n < 0 || static_cast<uint64_t>(n) < min)
    fail(it, std::to_string(n) + " is below the minimum " + std::to_string(min), fix);
  if (static_cast<uint64_t>(n) > max) fail(it, std::to_string(n) + " is too large", "give at most " + std::to_string(max));
  return static_cast<uint64_t>(n);
}

uint64_t get_rate(const Item& it) {
  const std::string fix = "write a rate" + std::string(it.from_command_line() ? "" : " in quotes") + ", e.g. " + example(it, "\"400Gbps\"");
  uint64_t r = 0;
  if (auto s = it.node->as_string()) {
    // ns-3 reads a bare "400" as 400 bit/s; in a scenario that is always a forgotten unit. Letters
    // without a b or B ("400Gps") are a unit the parser below names as unknown.
    const std::string& text = s->get();
    if (const size_t first = text.find_first_not_of(" \t"); first != std::string::npos && text[first] == '-')
      fail(it, "a negative rate makes no sense", "write a positive rate, e.g. " + example(it, "\"400Gbps\""));
    if (text.find_first_of("bB") == std::string::npos &&
        std::none_of(text.begin(), text.end(), [](unsigned char c) { return std::isalpha(c); }))
      fail(it, "rate \"" + text + "\" has no unit", fix);
    try {
      r = parse_data_rate(s->get());
    } catch (const std::invalid_argument& e) {
      fail(it, e.what(), fix);
    }
  } else if (auto i = it.node->as_integer()) {
    if (i->get() < 0) fail(it, "a negative rate makes no sense", fix);
    r = static_cast<uint64_t>(i->get());
    if (r > 0 && r < 1'000'000)  // no fabric link runs below 1 Mb/s: "400" meant 400 Gb/s
      fail(it, "rate " + std::to_string(r) + " is read as bit/s (integers are bit/s)", fix);
  } else {
    fail(it, describe(*it.node) + " is not a rate", fix);
  }
  if (r == 0) fail(it, "a rate of 0 makes no sense", fix);
  return r;
}

Time get_time(const Item& it) {
  const std::string fix = "write a time with its unit" + std::string(it.from_command_line() ? "" : " in quotes") + ", e.g. " + example(it, "\"500ns\"");
  if (auto s = it.node->as_string()) {
    // ns-3 reads a bare "500" as 500 s; in a scenario that is always a forgotten unit.
    if (s->get().find_first_of("smunpSMUNP") == std::string::npos && s->get() != "0")
      fail(it, "time \"" + s->get() + "\" has no unit", fix);
    Time t = 0;
    try {
      t = parse_time(s->get());
    } catch (const std::invalid_argument& e) {
      fail(it, e.what(), fix);
    }
    if (t < 0) fail(it, "a negative time makes no sense", fix);
    return t;
  }
  // A bare 0 has no unit to forget; any other bare number is ambiguous.
  const auto i = it.node->as_integer();
  const auto f = it.node->as_floating_point();
  if ((i && i->get() == 0) || (f && f->get() == 0)) return 0;
  fail(it, describe(*it.node) + " has no unit", fix);
}

bool get_bool(const Item& it) {
  if (auto b = it.node->as_boolean()) return b->get();
  fail(it, describe(*it.node) + " is not true or false", "write " + example(it, "true") + " or " + example(it, "false"));
}

double get_fraction(const Item& it) {
  double v = 0;
  if (auto i = it.node->as_integer()) v = static_cast<double>(i->get());
  else if (auto f = it.node->as_floating_point()) v = f->get();
  else fail(it, describe(*it.node) + " is not a number", "write a number in [0, 1), e.g. " + example(it, "0.001"));
  if (!(v >= 0 && v < 1)) fail(it, "the value is outside [0, 1)", "write a number in [0, 1), e.g. " + example(it, "0.001"));
  return v;
}

double get_number(const Item& it) {
  if (auto i = it.node->as_integer()) return static_cast<double>(i->get());
  if (auto f = it.node->as_floating_point()) return f->get();
  fail(it, describe(*it.node) + " is not a number", "write a number, e.g. " + example(it, "0.1"));
}

std::string get_config_text(const Item& it) {
  if (it.from_command_line() && !it.node->is_string() && !it.raw.empty()) return it.raw;
  if (auto a = it.node->as_array()) {
    std::string s;
    for (const toml::node& e : *a) {
      if (!s.empty()) s += ' ';
      s += scalar_text(it, e);
    }
    return s;
  }
  return scalar_text(it, *it.node);
}

std::string get_existing_path(const Item& it, const std::string& base_dir, const std::string& what) {
  namespace fs = std::filesystem;
  const std::string given = get_string(it);
  fs::path p = given;
  if (p.is_relative() && !it.from_command_line() && !base_dir.empty()) p = fs::path(base_dir) / p;
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) return p.string();
  const fs::path shown = p.is_absolute() ? p : fs::absolute(p, ec);
  fail(it, what + " \"" + given + "\" not found: looked for " + shown.string(),
       it.from_command_line() ? "give a path relative to the current directory, or an absolute path"
                              : "give a path relative to the scenario's folder, or an absolute path");
}

}  // namespace wh::scenario_detail
