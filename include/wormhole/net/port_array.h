// The ports of a fabric by global index, holding state only for the ports a process simulates.
#pragma once
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "wormhole/net/port.h"

namespace wh {

/// Ports by global index (interface i of node v is [nodes[v].first_port + i - 1]), each made (built
/// with its default state) only where it is simulated: every port in one process; in a distributed
/// run a rank's own nodes' ports (the far ends of its cut links are CutWires). Room for all is reserved
/// as address space (mmap with MAP_NORESERVE, without huge pages) and a page takes memory only once a
/// port in it is made, so the others' 768 B each cost nothing (under vm.overcommit_memory 2 the
/// kernel counts the whole reservation against its commit limit all the same). Access is a plain
/// index, as into a vector; reading a port not made is a bug (assert in debug builds: its bytes are
/// zeros, not a port). How a port is wired, which every process reads, is in PortLink.
class PortArray {
 public:
  PortArray() = default;
  /// Room for `n` ports, none made. Throws std::bad_alloc if the address space cannot be had.
  explicit PortArray(size_t n);
  ~PortArray();
  PortArray(const PortArray&) = delete;
  PortArray& operator=(const PortArray&) = delete;
  PortArray(PortArray&& o) noexcept { swap(o); }
  PortArray& operator=(PortArray&& o) noexcept {
    PortArray(std::move(o)).swap(*this);
    return *this;
  }

  Port& operator[](size_t p) {
    assert(p < size_ && made_[p]);
    return data_[p];
  }
  const Port& operator[](size_t p) const {
    assert(p < size_ && made_[p]);
    return data_[p];
  }
  /// Where port `p` (< size()) lies, made or not: for prefetching what an event will read, never for the
  /// model's state. A port not made reads as zero bytes (not a port: its wire reads as empty, its peer as
  /// port 0), and its address is always mapped, so a prefetch stage may read one without faulting.
  const Port* address(size_t p) const {
    assert(p < size_);
    return data_ + p;
  }
  /// All ports, made or not.
  size_t size() const { return size_; }
  /// Builds port `p` with its default state and returns it; a port made already is returned as it is.
  Port& make(size_t p);
  bool made(size_t p) const {
    assert(p < size_);
    return made_[p];
  }
  /// How many ports are made.
  size_t made_count() const { return made_count_; }

 private:
  void swap(PortArray& o) noexcept;
  Port* data_ = nullptr;
  size_t size_ = 0, made_count_ = 0;
  std::vector<bool> made_;
};

}  // namespace wh
