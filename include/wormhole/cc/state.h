// Per-QP congestion-control state as plain copyable values: a snapshot is a copy.
#pragma once
#include <cstdint>
#include <variant>

namespace wh {

/// DCQCN, Mellanox flavour (hpcc-model.md §13.1).
struct DcqcnState {
  uint64_t target_bps = 0;   ///< Rt
  double alpha = 1.0;        ///< α
  uint32_t stage = 0;        ///< rate-increase stage (m_rpTimeStage)
  bool alpha_cnp = false;    ///< CNP since the last α update
  bool decrease_cnp = false; ///< CNP since the last decrease check
  bool first_cnp = true;     ///< no CNP seen yet (timers not started)
};

/// No congestion control: line rate.
struct NoCcState {};

/// The CC state a QP carries; one alternative per algorithm.
using CcState = std::variant<NoCcState, DcqcnState>;

}  // namespace wh
