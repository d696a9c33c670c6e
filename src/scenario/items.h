// Private to the scenario reader: one scenario value with where it was given, and the typed
// getters that turn it into a setting or an InputError naming that file and line.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "wormhole/core/time.h"
#include "wormhole/core/input_text.h"

namespace wh::scenario_detail {

inline const std::string kCommandLine = "command line";

/// One key = value of the scenario, from the file or from a command-line override.
struct Item {
  std::string section;             ///< "topology", ...; "" for a top-level key
  std::string key;
  const toml::node* node = nullptr;  ///< the value (owned by the reader)
  std::string raw;                 ///< command line only: the value as typed
  std::string file;                ///< the scenario file, or kCommandLine
  int line = 0;

  bool from_command_line() const { return file == kCommandLine; }
  /// "topology.gpus" (or "name"), as a user would write it on the command line.
  std::string name() const { return section.empty() ? key : section + "." + key; }
};

/// Throws InputError(it.file, it.line, "<section.key>: <problem>", fix).
[[noreturn]] void fail(const Item& it, const std::string& problem, const std::string& fix);

/// "key = value" as a scenario file writes it (`toml_value` in TOML, e.g. "\"1us\""), or
/// "--set section.key=value" (no quotes) for an item given on the command line: a fix in the form the
/// user wrote.
std::string example(const Item& it, const std::string& toml_value);
/// A non-empty string; a command-line value is taken as typed whatever it looks like.
std::string get_string(const Item& it);
/// A whole number in [min, max].
uint64_t get_count(const Item& it, uint64_t min, uint64_t max = UINT32_MAX);
/// A rate > 0 in bit/s: a string such as "400Gbps" (parse_data_rate) or an integer of bit/s.
uint64_t get_rate(const Item& it);
/// A time >= 0 in ps: a string such as "500ns" (parse_time), or the number 0.
Time get_time(const Item& it);
/// true or false.
bool get_bool(const Item& it);
/// A number in [0, 1).
double get_fraction(const Item& it);
/// The value as a number (an integer or a float); fails naming the item otherwise.
double get_number(const Item& it);
/// The value as config.txt text: integers and floats as numbers, booleans as 1 / 0, strings as
/// they are, arrays as their elements separated by spaces.
std::string get_config_text(const Item& it);

/// The path a file-naming value gives: relative paths from the scenario file are taken from `base_dir`
/// (the scenario's folder), from the command line from the current directory. Throws InputError
/// naming the item's line and the path looked for if no such file exists.
std::string get_existing_path(const Item& it, const std::string& base_dir, const std::string& what);

}  // namespace wh::scenario_detail
