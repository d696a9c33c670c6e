// The table from CC_MODE to congestion-control implementations.
#pragma once
#include <memory>
#include <string>

#include "wormhole/io/hpcc_config.h"
#include "wormhole/net/cc.h"

namespace wh {

/// Builds the CC selected by cfg.cc_mode with its parameters. Modes without an implementation
/// run without CC at line rate, as the reference does for unknown modes; `warning` is then set.
std::unique_ptr<CongestionControl> make_cc(const SimConfig& cfg, std::string* warning);

}  // namespace wh
