// The wormhole command: `wormhole run SCENARIO`, `--help`, `--version`.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

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
  } catch (const wh::InputError& e) {
    std::fprintf(stderr, "wormhole: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wormhole: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
