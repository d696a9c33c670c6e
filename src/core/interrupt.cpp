// SIGINT / SIGTERM handlers of a clean stop (wormhole/core/interrupt.h).
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
}

void clear_interrupt() { detail::interrupt_signal = 0; }

}  // namespace wh
