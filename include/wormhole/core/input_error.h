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

 public:
  /// `in` as a terminal can show it: bad input can be binary, so control bytes and bytes that are not
  /// well-formed UTF-8 become \xNN; printable ASCII and whole UTF-8 characters (a message's "k³", a
  /// file's "µs") are kept.
  static std::string printable(const std::string& in) {
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (size_t i = 0; i < in.size();) {
      const auto ch = static_cast<unsigned char>(in[i]);
      if (ch >= 0x20 && ch < 0x7f) {
        out += static_cast<char>(ch);
        ++i;
        continue;
      }
      // A UTF-8 sequence: lead byte C2..F4, then 1-3 continuation bytes 80..BF (overlong and surrogate
      // forms left to the terminal: they are still well-formed bytes).
      const size_t n = ch >= 0xc2 && ch <= 0xdf ? 2 : ch >= 0xe0 && ch <= 0xef ? 3 : ch >= 0xf0 && ch <= 0xf4 ? 4 : 0;
      bool whole = n > 0 && i + n <= in.size();
      for (size_t k = 1; whole && k < n; ++k) whole = (static_cast<unsigned char>(in[i + k]) & 0xc0) == 0x80;
      if (whole) {
        out.append(in, i, n);
        i += n;
        continue;
      }
      out += "\\x";
      out += hex[ch >> 4];
      out += hex[ch & 15];
      ++i;
    }
    return out;
  }

 private:
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
