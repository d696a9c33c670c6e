// The wormhole command: `wormhole run SCENARIO`, `wormhole memo ...`, `--help`, `--version`.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "memo_command.h"
#include "run_command.h"
#include "wormhole/io/input_error.h"
#include "wormhole/version.h"

int main(int argc, char** argv) {
  CLI::App app{"wormhole: packet-level RDMA fabric simulator with the HPCC ns-3 model's semantics: LLM training "
               "workloads (SimAI) on GPU clusters, or HPCC flow files"};
  app.set_version_flag("--version", std::string("wormhole ") + WORMHOLE_VERSION);
  app.require_subcommand(1);
  wh::RunOptions run;
  CLI::App* run_cmd = app.add_subcommand("run", "simulate a scenario: a .toml scenario file (cluster + SimAI workload) or an HPCC config.txt");
  wh::add_run_options(*run_cmd, run);
  wh::MemoOptions memo;
  CLI::App* memo_cmd = app.add_subcommand("memo", "memo database files of the Wormhole memoization: merge, stats, inspect");
  wh::add_memo_commands(*memo_cmd, memo);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "wormhole: error: %s (fix: see wormhole --help)\n", e.what());
    return 2;
  }
  try {
    if (run_cmd->parsed()) return wh::run_command(run);
    if (memo_cmd->parsed()) return wh::memo_command(memo);
  } catch (const wh::InputError& e) {
    std::fprintf(stderr, "wormhole: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wormhole: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
