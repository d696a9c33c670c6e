// Giving a container's memory back. `v = {}` does not: for std::vector, std::unordered_map and the
// like, `{}` picks the initializer_list assignment, which empties the container and keeps its
// capacity (and a hash map its bucket array). Code that means to free state it no longer needs calls
// release_storage instead; trim_heap hands freed pages back to the system.
#pragma once
#include <cstdlib>
#include <utility>
#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace wh {

/// Empties `c` and frees what it allocated: its storage is swapped into a default-constructed C, which
/// frees it as it goes. (A move assignment from a fresh C is not enough for every type: a std::string
/// keeps its buffer.) C: any movable, default-constructible container (std::vector, std::vector<bool>,
/// std::string, std::unordered_map, ChunkedVector, ...).
template <class C>
void release_storage(C& c) {
  C empty;
  using std::swap;
  swap(c, empty);
}

/// Gives the heap's free pages back to the system (glibc's malloc_trim; nothing elsewhere). Freed
/// memory otherwise stays resident until malloc reuses it, which allocations served by mmap (large
/// buffers) never do: call it after freeing a large state in many pieces, before new large buffers.
inline void trim_heap() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

}  // namespace wh
