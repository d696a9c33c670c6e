// SIGINT / SIGTERM / SIGHUP handlers of a clean stop (wormhole/core/interrupt.h).
#include "wormhole/core/interrupt.h"

namespace wh {

namespace {
extern "C" void on_interrupt(int sig) {
  detail::interrupt_signal = sig;
  std::signal(sig, SIG_DFL);  // async-signal-safe; a second signal ends the process
}
}  // namespace

void install_interrupt_handlers() {
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  // A closed terminal stops the run as cleanly as Ctrl-C, unless the run was started to survive it
  // (nohup sets SIGHUP ignored, which is kept).
  if (std::signal(SIGHUP, on_interrupt) == SIG_IGN) std::signal(SIGHUP, SIG_IGN);
}

void clear_interrupt() { detail::interrupt_signal = 0; }

}  // namespace wh
