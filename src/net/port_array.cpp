// PortArray (wormhole/net/port_array.h): ports made in reserved address space.
#include "wormhole/net/port_array.h"

#include <sys/mman.h>

#include <cassert>
#include <new>
#include <utility>

namespace wh {

PortArray::PortArray(size_t n) : size_(n), made_(n, false) {
  if (n == 0) return;
  void* p = mmap(nullptr, n * sizeof(Port), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  // Huge pages (THP "always") would make a whole 2-MiB page resident at a port's first write, the
  // unmade ports around it too.
  madvise(p, n * sizeof(Port), MADV_NOHUGEPAGE);
  data_ = static_cast<Port*>(p);  // page-aligned: a Port's 64-B alignment holds
}

PortArray::~PortArray() {
  if (!data_) return;
  for (size_t p = 0; p < size_; ++p)
    if (made_[p]) data_[p].~Port();
  munmap(data_, size_ * sizeof(Port));
}

Port& PortArray::make(size_t p) {
  assert(p < size_);
  if (!made_[p]) {
    new (data_ + p) Port();
    made_[p] = true;
    ++made_count_;
  }
  return data_[p];
}

void PortArray::swap(PortArray& o) noexcept {
  std::swap(data_, o.data_);
  std::swap(size_, o.size_);
  std::swap(made_count_, o.made_count_);
  std::swap(made_, o.made_);
}

}  // namespace wh
