// The wormhole command: `wormhole run SCENARIO`, `wormhole partition ...`, `wormhole memo ...`,
// `--help`, `--version`.
#include <CLI/CLI.hpp>
#include <mpi.h>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "command_line_check.h"
#include "memo_command.h"
#include "partition_command.h"
#include "run_command.h"
#include "run_record.h"
#include "wormhole/core/input_error.h"
#include "wormhole/version.h"

namespace {

/// How many processes the launcher started together (mpirun, srun): 1 when not launched as ranks.
/// Read from the launchers' environment, without initialising MPI.
long launched_ranks() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"})
    if (const char* s = std::getenv(v)) {
      if (std::string(v) == "SLURM_STEP_NUM_TASKS" && !std::getenv("SLURM_STEP_ID")) continue;
      const long n = std::strtol(s, nullptr, 10);
      if (n > 1) return n;
    }
  return 1;
}

/// This process's rank among them (0 when not launched as ranks), from the same environment.
long launched_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"})
    if (const char* s = std::getenv(v)) return std::strtol(s, nullptr, 10);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // A write past a file-size limit (ulimit -f) then fails with EFBIG, and the writer names the file
  // (exit 4), instead of the signal ending the process without a word and with a file half written.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"wormhole: packet-level RDMA fabric simulator with the HPCC ns-3 model's semantics: LLM training "
               "workloads (SimAI) on GPU clusters, or HPCC flow files"};
  app.set_version_flag("--version", std::string("wormhole ") + WORMHOLE_VERSION);
  app.require_subcommand(1);
  wh::RunOptions run;
  CLI::App* run_cmd = app.add_subcommand("run", "simulate a scenario: a .toml scenario file (cluster + SimAI workload) or an HPCC config.txt");
  wh::add_run_options(*run_cmd, run);
  wh::PartitionOptions partition;
  CLI::App* partition_cmd = app.add_subcommand(
      "partition", "show how a scenario's network would be cut over MPI ranks: METIS k-way, edge cut, imbalance, "
                   "lookahead, per-rank nodes/ports/flows");
  wh::add_partition_options(*partition_cmd, partition);
  wh::MemoOptions memo;
  CLI::App* memo_cmd = app.add_subcommand("memo", "memo database files of the Wormhole memoization: merge, stats, inspect");
  wh::add_memo_commands(*memo_cmd, memo);
  run.command_line = wh::quoted_command_line(argc, argv);
  // Before CLI11: it reports a misspelled command as a missing one, and takes the value of a misspelled
  // option for the scenario (then blaming a file that does not exist).
  if (const std::string bad = wh::misspelled_word(app, argc, argv); !bad.empty()) {
    if (launched_ranks() == 1 || launched_rank() == 0) std::fprintf(stderr, "wormhole: error: %s\n", bad.c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Every rank of an mpirun parses the same command line: one of them says what is wrong.
    if (launched_ranks() == 1 || launched_rank() == 0) {
      const std::string what = e.what();
      const bool missing = what.find("File does not exist") != std::string::npos;
      // Only the scenario is a positional argument; --memo, --rank-map, ... name themselves.
      const bool scenario = missing && what.rfind("scenario", 0) == 0;
      const std::string help = "see " + wh::help_for(app, argc, argv);
      std::fprintf(stderr, "wormhole: error: %s (fix: %s)\n", what.c_str(),
                   scenario  ? "check the path: a scenario is a .toml file or an HPCC config.txt, e.g. "
                               "inputs/llm/moe-32g.toml"
                   : missing ? "check the path"
                             : help.c_str());
    }
    return 2;
  }
  try {
    if (run_cmd->parsed()) {
      if (launched_ranks() > 1) {
        // The distributed engine: only the main thread calls MPI (oneTBB workers never do).
        int provided = 0;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
        int rank = 0, ranks = 1;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &ranks);
        if (provided < MPI_THREAD_FUNNELED && rank == 0)
          std::fprintf(stderr, "wormhole: warning: the MPI library gives thread level %d, below MPI_THREAD_FUNNELED; "
                               "oneTBB threads may not coexist with it\n",
                       provided);
        int status = 1;
        try {
          status = wh::run_distributed(run, rank, ranks);
        } catch (const std::exception& e) {
          // Past the agreed set-up an error is this rank's alone: the others would wait for it in
          // their next collective for ever (srun does not kill them), so the job ends here.
          std::fprintf(stderr, "wormhole: error (rank %d): %s\n", rank, e.what());
          MPI_Abort(MPI_COMM_WORLD, dynamic_cast<const wh::InputError*>(&e)    ? 2
                                    : dynamic_cast<const wh::OutputError*>(&e) ? 4
                                                                               : 1);
        }
        MPI_Finalize();
        return status;
      }
      if (!run.rank_map.empty() || run.linear)
        std::fprintf(stderr, "wormhole: note: --rank-map/--linear cut the network over MPI ranks; one process "
                             "ignores them\n");
      return wh::run_command(run);
    }
    if (partition_cmd->parsed()) return wh::partition_command(partition);
    if (memo_cmd->parsed()) return wh::memo_command(memo);
  } catch (const wh::InputError& e) {
    std::fprintf(stderr, "wormhole: error: %s\n", e.what());
    return 2;
  } catch (const wh::OutputError& e) {
    std::fprintf(stderr, "wormhole: error: %s\n", e.what());
    // Our files are closed by now; HDF5's exit handler would try again to close a results file whose
    // write failed, and crashes doing so (HDF5 1.10): leave without it.
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(4);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "wormhole: error: out of memory: the scenario needs more memory than this machine has "
                         "(fewer GPUs or flows, or several MPI ranks over more machines)\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wormhole: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
