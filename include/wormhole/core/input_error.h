// The exception types for bad input (it names the file, the line and what to fix) and for an
// output that cannot be written (it names the file).
#pragma once
#include <cstddef>
#include <cstdint>
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
  /// file's "µs") are kept, except those a terminal acts on or that reorder the line (C1 controls,
  /// bidirectional overrides and isolates, line and paragraph separators, the byte-order mark).
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
      const size_t n = utf8_length(in, i);
      if (n > 0) {
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
  /// Bytes of the well-formed, harmless UTF-8 character at in[i] (2-4), or 0.
  static size_t utf8_length(const std::string& in, size_t i) {
    const auto b = [&](size_t k) { return static_cast<unsigned char>(in[i + k]); };
    const unsigned char c = b(0);
    const size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (n == 0 || i + n > in.size()) return 0;
    uint32_t cp = c & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
    for (size_t k = 1; k < n; ++k) {
      if ((b(k) & 0xc0) != 0x80) return 0;
      cp = cp << 6 | (b(k) & 0x3f);
    }
    static constexpr uint32_t kLeast[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kLeast[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;  // overlong, too large, surrogate
    if (cp <= 0x9f || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 ||
        cp == 0x2029 || cp == 0xfeff)
      return 0;
    return n;
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
