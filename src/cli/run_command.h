// `wormhole run`: load a scenario, simulate it, write fct.txt, pfc.txt, the HDF5 results and a summary.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

namespace wh {

struct RunOptions {
  std::string scenario;                 ///< HPCC config.txt
  std::vector<std::string> sets;        ///< KEY=VALUE overrides
  std::string results;                  ///< HDF5 path ("" = results.h5 beside FCT_OUTPUT_FILE)
  std::string output_dir;               ///< if set: fct.txt, pfc.txt, results.h5 go there (created)
  bool quiet = false;
};

void add_run_options(CLI::App& cmd, RunOptions& o);
/// Runs the scenario; returns the process exit status. Throws InputError on bad input.
int run_command(const RunOptions& o);

}  // namespace wh
