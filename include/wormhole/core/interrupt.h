// A clean stop on SIGINT / SIGTERM / SIGHUP: the signal only sets a flag; the network sees it at its next
// progress tick (every 65,536 events), stops after that event, and the caller writes what finished
// (docs/results.md, "Stopping a run").
#pragma once
#include <csignal>
#include <string>

namespace wh {

namespace detail {
/// The signal that asked the run to stop (0: none). Written only by the handler and clear_interrupt().
inline volatile std::sig_atomic_t interrupt_signal = 0;
}  // namespace detail

/// The signal that asked the run to stop (SIGINT, SIGTERM, SIGHUP), or 0.
inline int interrupt_signal() { return detail::interrupt_signal; }
/// Whether a stop was asked for.
inline bool interrupted() { return detail::interrupt_signal != 0; }
/// "SIGINT" / "SIGTERM" / "SIGHUP" / "signal N": how the run's messages name a signal.
inline std::string signal_name(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "signal " + std::to_string(sig);
}

/// Installs the handlers of SIGINT, SIGTERM and SIGHUP (not where SIGHUP is ignored, as under nohup):
/// the first signal sets the flag and puts the default action back, so a second one ends the process
/// at once (a stop that does not come).
void install_interrupt_handlers();
/// Clears the flag (tests).
void clear_interrupt();

}  // namespace wh
