// The exception types for bad input (it names the file, the line and what to fix) and for an
// output that cannot be written (it names the file).
#pragma once
#include <stdexcept>
#include <string>

namespace wh {

/// Thrown for any problem in a user-supplied file or setting. what() reads
/// "FILE:LINE: PROBLEM (fix: HINT)"; line 0 means "the file as a whole".
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, int line, const std::string& problem, const std::string& fix)
      : std::runtime_error(format(file, line, problem, fix)), file_(std::move(file)), line_(line), problem_(problem) {}
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  /// The problem alone (no file, line or fix).
  const std::string& problem() const { return problem_; }

 private:
  static std::string format(const std::string& file, int line, const std::string& problem,
                            const std::string& fix) {
    std::string s = file;
    if (line > 0) {
      s += ':';
      s += std::to_string(line);
    }
    s += ": ";
    s += printable(problem);
    if (!fix.empty()) {
      s += " (fix: ";
      s += fix;
      s += ')';
    }
    return s;
  }
  // Bad input can be binary: show control and non-ASCII bytes as \xNN instead of raw.
  static std::string printable(const std::string& in) {
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (unsigned char ch : in) {
      if (ch >= 0x20 && ch < 0x7f) {
        out += static_cast<char>(ch);
      } else {
        out += "\\x";
        out += hex[ch >> 4];
        out += hex[ch & 15];
      }
    }
    return out;
  }
  std::string file_;
  int line_;
  std::string problem_;
};

/// Thrown when an output cannot be written during or after a run (a full disk, a quota, an I/O
/// error): what() reads "FILE: PROBLEM" and says what the file still holds. The run exits with
/// status 4 (docs/network-model.md §5.5).
class OutputError : public std::runtime_error {
 public:
  OutputError(std::string file, const std::string& problem)
      : std::runtime_error(file + ": " + problem), file_(std::move(file)) {}
  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

}  // namespace wh
