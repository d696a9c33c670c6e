// SpillFile (include/wormhole/core/spill_vector.h): an unlinked temporary file written and read whole.
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "wormhole/core/input_error.h"
#include "wormhole/core/spill_vector.h"

namespace wh {

namespace {
std::string system_error() { return std::strerror(errno ? errno : EIO); }
}  // namespace

SpillFile::SpillFile(const std::string& dir, std::string what) : dir_(dir.empty() ? "." : dir), what_(std::move(what)) {
  std::string name = (std::filesystem::path(dir_) / ".wormhole-spill-XXXXXX").string();
  fd_ = ::mkstemp(name.data());
  if (fd_ < 0) throw OutputError(dir_, "cannot create a temporary file for " + what_ + ": " + system_error());
  ::unlink(name.c_str());
}

SpillFile::~SpillFile() {
  if (fd_ >= 0) ::close(fd_);
}

void SpillFile::write(const void* data, size_t bytes, int64_t offset) const {
  const char* p = static_cast<const char*>(data);
  for (size_t done = 0; done < bytes;) {
    const ssize_t n = ::pwrite(fd_, p + done, bytes - done, offset + static_cast<int64_t>(done));
    if (n <= 0) throw OutputError(dir_, "cannot write " + what_ + " to a temporary file: " + system_error());
    done += static_cast<size_t>(n);
  }
}

void SpillFile::read(void* data, size_t bytes, int64_t offset) const {
  char* p = static_cast<char*>(data);
  for (size_t done = 0; done < bytes;) {
    const ssize_t n = ::pread(fd_, p + done, bytes - done, offset + static_cast<int64_t>(done));
    if (n <= 0) throw OutputError(dir_, "cannot read " + what_ + " back from a temporary file: " + system_error());
    done += static_cast<size_t>(n);
  }
}

}  // namespace wh
