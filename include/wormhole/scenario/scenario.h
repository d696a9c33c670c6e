// The native scenario file (TOML, read with toml++): one human-friendly file naming the topology
// (a file, or a generator with its parameters), the training workload, the network settings (the
// HPCC keys) and the outputs. docs/workloads.md §10 documents every key. Example:
//
//   name = "gpt13b-128g"          # optional; default: the file's stem
//
//   [topology]
//   generator = "spectrum-x"      # or: file = "topology.txt" (SimAI 6/7-token or HPCC 3-token header)
//   gpus = 128
//   nic_rate = "400Gbps"
//
//   [workload]
//   file = "workload.txt"          # SimAI / AICB workload
//   iterations = 1
//   send_latency = "6us"
//
//   [network]
//   config = "SimAI.conf"          # HPCC / SimAI config; the keys below override it
//   CC_MODE = 1
//
//   [output]
//   dir = "out/gpt13b"
//
// Keys (rates are strings for parse_data_rate such as "400Gbps", or integers of bit/s; times are
// strings for parse_time such as "500ns", or 0; counts are integers):
//   name                                   string
//   [topology] file | generator            exactly one; generator: spectrum-x, hpn, dcn+, fat-tree
//                                          (case-insensitive)
//     write                                string (a path relative to the output dir)
//     write_format                         "simai" (default) or "hpcc"
//     gpus, gpus_per_server,               counts, all generators (fat-tree: gpus 0 = k³/4)
//     nvswitches_per_server (may be 0)
//     nvlink_rate, nic_rate, spine_rate    rates, all generators (fat-tree: nic_* is the host–edge
//     nvlink_delay, nic_delay, spine_delay link, spine_* the edge–aggregation–core links)
//     gpu_type (string), error_rate ([0, 1)) all generators
//     servers_per_segment                  spectrum-x, hpn
//     gpus_per_leaf, dual_tor (bool)       dcn+
//     spines, leaves_per_spine             spectrum-x, hpn, dcn+ (leaves_per_spine unset = derived
//                                          from the size, effective_leaves_per_spine)
//     dual_plane (bool)                    hpn
//     k                                    fat-tree (>= 2)
//   Keys not given keep the defaults of the generator's parameter struct (generators.h).
//   [workload] file (required), iterations (>= 1), send_latency (time), zero_chunk ("no-flows" |
//     "one-byte"), report_gpu (count), max_time (time; 0 = never), ignore_groups (array),
//     pipeline ("1f1b" | "gpipe" | "none"), chakra (path prefix of Chakra traces, instead of file),
//     comm_groups (path)
//   [[job]] (several jobs on the fabric; then [workload] has no file) name, workload (path), gpus (count |
//     "a-b" | [ids]), placement ("packed" | "spread"), start (time), iterations, pipeline
//   [background] file (an HPCC flow file) or cdf (a shipped name or a CDF file) with load (in (0, 1]), duration
//     or end (times), hosts ("all" | "free" | "a-b" | [ids]), seed; begin (time) for both
//   [network] config (a base config file; optional) and any HPCC key (hpcc_config.h) as an integer,
//     float, boolean (1 / 0), string (its text, e.g. KMAX_MAP = "1 400000000000 3200") or array of
//     these (joined by spaces).
//   [output] dir (string)
// Paths in the file are relative to the scenario's folder.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "wormhole/core/time.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/topo/generators.h"
#include "wormhole/workload/collectives.h"

namespace wh {

/// Where the cluster comes from.
struct TopologySpec {
  std::string file;        ///< topology file (resolved against the scenario's folder); "" with a generator
  std::string generator;   ///< "spectrum-x", "hpn", "dcn+" or "fat-tree"; "" with a file
  SpectrumXParams spectrum_x;  ///< parameters of the chosen generator (the others keep their defaults)
  HpnParams hpn;
  DcnPlusParams dcn_plus;
  FatTreeParams fat_tree;
  std::string write;       ///< if set: write the topology to this path, relative to the output dir
  std::string write_format = "simai";  ///< "simai" (6-token header, NVSwitch ids) or "hpcc" (3-token topology.txt)
  int line = 0;            ///< line of [topology] (for messages)
  /// Generator parameters given on the command line, as typed ("topology.gpus=15"), for messages.
  std::vector<std::string> from_command_line;
};

/// The training workload and how it is run.
struct WorkloadSpec {
  std::string file;                    ///< SimAI / AICB workload file (resolved against the scenario's folder)
  /// Chakra execution traces instead of `file`: the files' common prefix (PREFIX.<rank>.et), resolved
  /// against the scenario's folder; "" = none.
  std::string chakra;
  std::string comm_groups;             ///< with chakra: ASTRA-sim's communicator-group JSON ("" = none)
  uint32_t iterations = 1;             ///< training iterations (passes over the rows), >= 1
  /// Delay from a flow being released (its predecessors done) to its QP starting, ps: SimAI's
  /// AS_SEND_LAT, whose unit is unresolved upstream (docs/workloads.md §5.8); default 6 µs.
  Time send_latency = 6 * kUs;
  ZeroChunk zero_chunk = ZeroChunk::NoFlows;  ///< "no-flows" (SimAI) or "one-byte"
  uint32_t report_gpu = 0;             ///< the GPU whose per-layer view is reported (SimAI: 0)
  /// Ends the run when simulated time passes this with collectives pending (0 = never), ps.
  Time max_time = 0;
  /// Communication groups whose collectives are not simulated: they complete at issue, with no
  /// traffic (e.g. {"TP"}: what the Wormhole paper's evaluation does with intra-node TP/SP).
  std::vector<std::string> ignore_groups;
  /// "1f1b" (default), "interleaved", "gpipe" or "none" (PP taken as 1, as SimAI's ns-3 backend).
  PipelineSchedule pipeline = PipelineSchedule::OneFOneB;
  /// With "interleaved": model chunks per stage (Megatron's virtual pipeline size); 0 = the header's vpp.
  uint32_t virtual_stages = 0;
  int line = 0;
};

/// One training job of a multi-job scenario ([[job]], docs/workloads.md §11).
struct JobSpec {
  std::string name;              ///< `name`, default "job<k>" (k = 0, 1, ... in file order)
  std::string workload;          ///< SimAI / AICB workload file (resolved against the scenario's folder)
  /// Placement: explicit topology GPU ids (from a "a-b" range or an array), or empty with `count`
  /// GPUs placed by `policy`.
  std::vector<uint32_t> gpus;
  uint32_t count = 0;            ///< GPUs to place by policy (gpus = N); 0 with explicit ids
  std::string policy = "packed"; ///< "packed" (lowest free GPUs in id order) or "spread" (round robin over servers)
  Time start = 0;                ///< when the job's GPUs start their programs, ps
  uint32_t iterations = 0;       ///< 0 = [workload] iterations
  bool pipeline_set = false;     ///< `pipeline` given for this job
  PipelineSchedule pipeline = PipelineSchedule::OneFOneB;
  int line = 0;                  ///< line of its [[job]] header
};

/// Background traffic beside the workload or jobs ([background], docs/workloads.md §11): an HPCC flow
/// file on the same topology, or a generated Poisson load (io/poisson_flows.h); not both.
struct BackgroundSpec {
  std::string file;   ///< flow.txt ("" = none)
  /// With `file`: the file's earliest start is moved to this time, the others keep their offsets. With
  /// `cdf`: the generated arrivals start then. ps.
  Time begin = 0;
  /// A generated load: a shipped CDF's name in lower case (shipped_flow_size_cdf_names()) or the path of
  /// a CDF file ("" = no generated load).
  std::string cdf;
  bool cdf_shipped = false;  ///< `cdf` is a shipped name, not a path
  double load = 0;    ///< offered load per sending host, a fraction of its link bandwidth in (0, 1]
  Time end = 0;       ///< ps: arrivals in [begin, end) (from `end`, or begin + `duration`)
  /// Which hosts send: "all" (every host of the topology), "free" (the GPUs no [[job]] runs on) or
  /// "list" (`host_ids`).
  std::string hosts = "all";
  std::vector<uint32_t> host_ids;  ///< with hosts = "list", as given
  bool seed_set = false;
  uint64_t seed = 0;  ///< with seed_set; else the network's SEED
  int line = 0;       ///< line of [background]
  int hosts_line = 0, cdf_line = 0;  ///< lines of `hosts` and `cdf` (0 if not given)
};

/// A parsed scenario. Network settings are already merged into `net` (a SimConfig), outputs
/// resolved to paths.
struct Scenario {
  std::string path;   ///< the scenario file
  std::string name;   ///< `name` key, default: the file's stem
  TopologySpec topology;
  WorkloadSpec workload;
  /// [[job]] entries: several jobs sharing the fabric (then [workload] has no file and gives the
  /// jobs' defaults). Empty for a one-workload scenario.
  std::vector<JobSpec> jobs;
  BackgroundSpec background;
  SimConfig net;      ///< [network]: `config` file (optional) + the keys given, + command-line overrides
  std::string output_dir;  ///< [output] dir, relative to the current directory; default "out/<name>"
  /// Non-fatal findings ("FILE:LINE: text"), e.g. TOPOLOGY_FILE or FLOW_FILE in [network], which
  /// a scenario does not use. The network config's own warnings are in net.warnings.
  std::vector<std::string> warnings;
  /// Whether the [wormhole] table set anything but `enabled`.
  bool wormhole_table = false;
};

/// Reads a scenario file. `overrides` are ("section.key", "value") for scenario keys (e.g.
/// {"workload.iterations", "2"}; "name" for the name) or ("KEY", "value") with an upper-case KEY
/// for HPCC network keys (e.g. {"CC_MODE", "3"}, the value as config.txt text), applied after the
/// file; a scenario value reads as a TOML integer, float or boolean if it is one, else as the text.
/// Paths given on the command line are relative to the current directory. Messages about an
/// override name the file "command line" (line 0).
/// Throws InputError (file, line, problem, fix) for TOML syntax errors, an unknown table or key
/// (naming the closest valid one), a value of the wrong type or range, neither or both of
/// topology.file and topology.generator, an unknown generator, a generator parameter the chosen
/// generator does not take (or any with topology.file), no workload.file, a topology, workload
/// or network config file that does not exist (naming the path looked for), and any error of the
/// network settings (naming the scenario's line for keys given there, the config's for its own).
Scenario read_scenario(const std::string& path,
                       const std::vector<std::pair<std::string, std::string>>& overrides = {});

/// Every key a scenario file accepts, spelt as the command-line override spells it: "section.key"
/// (e.g. "workload.iterations", "network.config") and the top-level "name". The HPCC keys a
/// [network] table also takes are hpcc_config_keys(). docs/workloads.md §10 documents each.
std::vector<std::string> scenario_keys();

/// Every scenario key with its effective value, as ("section.key", text) pairs: name, the topology
/// (file, or generator and all its parameters, defaults included; rates as "400Gbps", times in ps as
/// "500000ps"), the workload keys, the [background] keys if it is given (end in ps whether `end` or
/// `duration` was written; seed the effective one), network.config (the base config, "" if none) and output.dir.
/// [wormhole] and [network] values are the network settings (effective_settings). For the run record.
std::vector<std::pair<std::string, std::string>> scenario_values(const Scenario& s);

/// Reads or generates the scenario's topology. A generated one has topo.file "<scenario> [topology]".
/// Throws InputError for a bad topology file (naming its line) and for generator parameters the
/// generator rejects (naming the scenario's [topology] line).
SimaiTopology build_topology(const Scenario& s);

}  // namespace wh
