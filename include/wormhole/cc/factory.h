// The table from CC_MODE to congestion-control implementations.
#pragma once
#include <memory>
#include <string>

#include "wormhole/config/sim_config.h"
#include "wormhole/net/cc.h"

namespace wh {

/// Builds the CC selected by cfg.cc_mode with its parameters. Modes without an implementation
/// run without CC at line rate, as the reference does for unknown modes; `warning` is then set
/// (also for settings that are legal but make the CC inert, such as EWMA_GAIN 0 with DCTCP).
/// Throws InputError (naming the key's file and line) for settings that would break the CC:
/// a DCQCN timer period below 1 ns, MIN_RATE 0, U_TARGET <= 0, HPCC without a window,
/// PINT_LOG_BASE <= 1.
std::unique_ptr<CongestionControl> make_cc(const SimConfig& cfg, std::string* warning);

/// The CcState alternative (its variant index) the QPs of `cc_mode` carry: 1 DCQCN, 2 HPCC,
/// 3 TIMELY, 4 DCTCP, 5 HPCC-PINT, 0 none (any other mode). A memo file's CC snapshots must be of it.
size_t cc_state_kind(int cc_mode);

/// The CC of `cc_mode` as the summary and results.h5 name it: "DCQCN (CC_MODE 1)", "HPCC (CC_MODE 3)",
/// "TIMELY (CC_MODE 7)", "DCTCP (CC_MODE 8)", "HPCC-PINT (CC_MODE 10)", or "none, line rate (CC_MODE n)".
std::string cc_display_name(int cc_mode);

}  // namespace wh
