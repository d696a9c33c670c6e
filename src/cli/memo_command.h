// `wormhole memo`: merge, summarise and list memo database files.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace wh {

struct MemoOptions {
  std::string action;               ///< "merge", "stats" or "inspect" (set by the parsed subcommand)
  std::vector<std::string> inputs;  ///< merge: the files
  std::string output;               ///< merge: the merged file
  std::string file;                 ///< stats, inspect: the file
  size_t limit = 20;                ///< inspect: at most this many patterns (0 = all)
};

/// Adds merge, stats and inspect under `memo`.
void add_memo_commands(CLI::App& memo, MemoOptions& o);
/// Runs the parsed subcommand; returns the exit status. Throws InputError for a bad file.
int memo_command(const MemoOptions& o);

}  // namespace wh
