// Reading input text: the lexer shared by the input readers and the ns-3 unit-string parsers.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "wormhole/core/input_error.h"
#include "wormhole/core/time.h"

namespace wh {

/// Parses an ns-3 DataRate string ("100Gbps", "20Mb/s", "1000Mb/s", "25GB/s", plain bit/s number)
/// into bit/s. Throws std::invalid_argument with a message on a malformed string.
uint64_t parse_data_rate(const std::string& s);

/// Parses an ns-3 Time string ("0.001ms", "1000ns", "1us", "2s", plain number = seconds) into ps,
/// rounded to the nearest ps. Throws std::invalid_argument on a malformed string.
Time parse_time(const std::string& s);

/// One whitespace-separated token of an input file and the 1-based line it is on.
struct InputToken {
  std::string text;
  int line = 0;
};

/// The lexer shared by the input readers: `path` as whitespace-separated tokens (CR, tabs and a
/// UTF-8 byte-order mark count as whitespace). Throws InputError(path, 0, ...) if it cannot be read.
std::vector<InputToken> read_input_tokens(const std::string& path);

/// Whether the record of `fields` tokens (>= 1) starting at toks[first] runs over more than one line
/// (false when first >= toks.size(); a record cut short by the end is judged by the tokens it has).
bool record_spans_lines(const std::vector<InputToken>& toks, size_t first, size_t fields);
/// Reports `e`, an error found while reading records of `fields` tokens, at the line to fix. The
/// reference reads these files as one stream of fields, so a record may run over lines; but when a
/// file's records are one a line, the first one that does not is where a field is missing (or one
/// too many), and every record after it was read shifted, so `e` names a later line. With
/// `spanning`, the index of the first record that ran over lines (SIZE_MAX: none), this throws
/// InputError(path, that record's first line, "the line has k fields where a <what> has <fields>
/// ...; then: <e>", fix); without one it rethrows `e`.
[[noreturn]] void rethrow_at_record_line(const InputError& e, const std::string& path, const std::vector<InputToken>& toks,
                                         size_t spanning, size_t fields, const std::string& what, const std::string& fix);

/// Parses a whole decimal unsigned integer; false on anything else (sign, space, overflow).
bool parse_uint(const std::string& s, uint64_t& v);

/// Levenshtein distance between a and b ignoring letter case, for "did you mean ...?" hints.
size_t edit_distance(std::string_view a, std::string_view b);

/// The entry of `valid` closest to `s` (edit distance, case-insensitive; the first of equals); "" if
/// `valid` is empty.
std::string closest(std::string_view s, const std::vector<std::string>& valid);

/// closest(s, valid) if `s` looks like a misspelling of it (at most max(2, a third of its letters)
/// edits apart), else "": a "did you mean" hint only where it is likely meant.
std::string likely_meant(std::string_view s, const std::vector<std::string>& valid);

}  // namespace wh
