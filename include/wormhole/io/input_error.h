// The one exception type for bad input: it names the file, the line and what to fix.
#pragma once
#include <stdexcept>
#include <string>

namespace wh {

/// Thrown for any problem in a user-supplied file or setting. what() reads
/// "FILE:LINE: PROBLEM (fix: HINT)"; line 0 means "the file as a whole".
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, int line, const std::string& problem, const std::string& fix)
      : std::runtime_error(format(file, line, problem, fix)), file_(std::move(file)), line_(line) {}
  const std::string& file() const { return file_; }
  int line() const { return line_; }

 private:
  static std::string format(const std::string& file, int line, const std::string& problem,
                            const std::string& fix) {
    std::string s = file;
    if (line > 0) {
      s += ':';
      s += std::to_string(line);
    }
    s += ": ";
    s += problem;
    if (!fix.empty()) {
      s += " (fix: ";
      s += fix;
      s += ')';
    }
    return s;
  }
  std::string file_;
  int line_;
};

}  // namespace wh
