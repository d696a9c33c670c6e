// Private to the scenario reader: the [topology] table.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "items.h"
#include "wormhole/scenario/scenario.h"

namespace wh::scenario_detail {

/// Every key [topology] may hold (for any generator).
const std::vector<std::string>& topology_keys();

/// Fills `t` (whose `line` is set) from the [topology] items in order, a later item overriding an
/// earlier one. Throws InputError for both or neither of file and generator, an unknown generator,
/// a missing file, a key the chosen generator does not take, and a value of the wrong type or range.
/// The [topology] table's effective values as ("topology.key", text) pairs: file or generator, write,
/// and every parameter of the chosen generator (defaults included; rates as "400Gbps", delays in ps).
std::vector<std::pair<std::string, std::string>> topology_values(const TopologySpec& t);

void apply_topology(const std::vector<Item>& items, const std::string& scenario_path, const std::string& base_dir,
                    TopologySpec& t);

}  // namespace wh::scenario_detail
