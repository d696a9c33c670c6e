// The HPCC ns-3 config.txt settings (docs/network-model.md §1) and their reader.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "wormhole/config/sim_config.h"
#include "wormhole/core/input_text.h"

namespace wh {

/// One setting given outside a config file, e.g. by a scenario's [network] table or the command line.
struct ConfigSetting {
  std::string key;    ///< HPCC key, e.g. "CC_MODE"
  std::string value;  ///< its value(s) as config.txt text, e.g. "3" or "1 100000000000 1600"
  std::string file;   ///< where it was given, for messages ("command line" for overrides)
  int line = 0;       ///< line in `file` (0 = none)
};

/// Builds a SimConfig from an optional base config file and then `settings` in order, each as if
/// appended to the file (the last value of a key wins). With `base_path` "" the reference's defaults
/// are the base and SimConfig::path is `owner_path` (e.g. the scenario file), which names required
/// keys left unset; otherwise path is `base_path` and relative paths follow read_hpcc_config's rule.
/// TOPOLOGY_FILE and FLOW_FILE are not required (see check_input_files).
/// Throws InputError as read_hpcc_config does; an error in a setting names the setting's own file
/// and line, one in the base file the base file's line.
SimConfig make_hpcc_config(const std::string& base_path, const std::vector<ConfigSetting>& settings,
                           const std::string& owner_path);

/// Reads an HPCC config.txt. Relative paths in it are resolved against the config file's
/// directory when TOPOLOGY_FILE exists there, else against the current directory (the reference's
/// rule), and the same base is used for the outputs. `overrides` ("KEY", "VALUE") are applied
/// after the file, as if appended to it (make_hpcc_config with origin "command line").
/// Throws InputError naming file and line for an unknown key (with the closest valid key),
/// a malformed value, a missing value, or a required key left unset (RATE_AI/RATE_HAI with DCQCN,
/// L2_ACK_INTERVAL 0, L2_CHUNK_SIZE 0).
SimConfig read_hpcc_config(const std::string& path,
                           const std::vector<std::pair<std::string, std::string>>& overrides = {});


}  // namespace wh

namespace wh {

/// Every key read_hpcc_config accepts (the reference's keys, SimAI.conf's, then ours), in the
/// reader's order. docs/network-model.md §1 documents each; a unit test holds the two equal.
const std::vector<std::string>& hpcc_config_keys();

/// The unit in which key `key`'s number is read ("µs", "bytes", "samples", ...), for the keys whose
/// value is a quantity written without its unit; empty for the others (flags, plain numbers, paths,
/// rates, which carry their unit in the text). docs/network-model.md §1's unit cell of the key starts
/// with it.
std::string_view hpcc_config_unit(std::string_view key);

/// Checks that TOPOLOGY_FILE and FLOW_FILE are set and exist, and TRACE_FILE exists if set. Throws
/// InputError naming the config line, the path looked for and the folders searched.
void check_input_files(const SimConfig& c);

/// Every setting of `c` with the value in force (defaults included), as (KEY, text) pairs in the
/// reference's key order then ours; paths as resolved. For the run metadata.
std::vector<std::pair<std::string, std::string>> effective_settings(const SimConfig& c);

}  // namespace wh
