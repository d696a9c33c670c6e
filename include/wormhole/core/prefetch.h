// A cache-line prefetch the optimizer keeps.
#pragma once

namespace wh {

/// Asks the CPU to start loading the cache line holding `p` (any address: a prefetch never faults).
/// GCC 12 treats __builtin_prefetch as free of effects and dead-code-eliminates it where nothing else
/// in its path has an effect (inlined into the kernel's loop, or by dropping the call of a function
/// made only of prefetches), so on x86-64 the instruction is written as volatile assembly.
inline void prefetch_line(const void* p) {
#if defined(__x86_64__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}

}  // namespace wh
