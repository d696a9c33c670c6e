// The native scenario file (TOML): topologies generated and read, workload and output keys, the
// [network] table over SimAI.conf, command-line overrides, and one test per rejected input, each
// checking the file and line the error names. Also make_hpcc_config and SimAI.conf's extra keys.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "wormhole/io/hpcc_config.h"
#include "wormhole/core/input_error.h"
#include "wormhole/scenario/scenario.h"
#include "file_fixtures.h"

using namespace wh;
namespace fs = std::filesystem;

namespace {

fs::path test_dir() { return test::test_dir("wh_scenario_tests"); }
using test::input_error;
using test::write_file;

const std::string kSimai = WH_TEST_DATA "/simai";
const std::string kSimaiConf = kSimai + "/SimAI/astra-sim-alibabacloud/inputs/config/SimAI.conf";
const std::string kSx16 = kSimai + "/SimAI@pr288/Spectrum-X_16g_8gps_400Gbps_A100";
const std::string kWorkload16 = kSimai + "/SimAI@pr288/example/microAllReduce_16g.txt";
const std::string kFatTreeK4 = WH_TEST_DATA "/refruns/hpcc-ring16-fattree-k4-1MB/topology.txt";

/// A fresh folder per test, so tests can run in parallel.


/// Writes `text` as <dir>/scenario.toml beside a copy of SimAI.conf and of a 16-GPU workload.
std::string scenario_file(const fs::path& dir, const std::string& text) {
  fs::copy_file(kSimaiConf, dir / "SimAI.conf", fs::copy_options::overwrite_existing);
  fs::copy_file(kWorkload16, dir / "workload.txt", fs::copy_options::overwrite_existing);
  return write_file(dir / "scenario.toml", text);
}

// The tail of most test scenarios; a test's own lines come first, so their numbers are fixed.
const std::string kRest =
    "[workload]\n"
    "file = \"workload.txt\"\n"
    "[network]\n"
    "config = \"SimAI.conf\"\n";


/// Reads `text` as a scenario (with `overrides`) and returns the error it must raise; `path` gets its path.
InputError scenario_error(const std::string& text, std::string* path = nullptr,
                          const std::vector<std::pair<std::string, std::string>>& overrides = {}) {
  const std::string p = scenario_file(test_dir(), text);
  if (path) *path = p;
  return input_error([&] { read_scenario(p, overrides); });
}

::testing::AssertionResult mentions(const InputError& e, const std::string& fragment) {
  if (std::string(e.what()).find(fragment) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << e.what() << "\" lacks \"" << fragment << "\"";
}

using LinkKey = std::tuple<uint32_t, uint32_t, uint64_t, Time, double>;
std::vector<LinkKey> links(const Topology& t) {
  std::vector<LinkKey> out;
  for (const TopoLink& l : t.links) out.emplace_back(l.a, l.b, l.rate_bps, l.delay, l.error_rate);
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Topologies

TEST(Scenario, SpectrumX16EqualsSimaiFile) {
  const fs::path d = test_dir();
  const std::string p = scenario_file(d,
                                      "name = \"sx16\"\n"
                                      "[topology]\n"
                                      "generator = \"spectrum-x\"\n"
                                      "gpus = 16\n"
                                      "nic_rate = \"400Gbps\"\n"
                                      "nvlink_rate = \"2400Gbps\"\n" +
                                          kRest);
  const Scenario s = read_scenario(p);
  EXPECT_EQ(s.path, p);
  EXPECT_EQ(s.name, "sx16");
  EXPECT_EQ(s.output_dir, "out/sx16");
  EXPECT_EQ(s.topology.generator, "spectrum-x");
  EXPECT_EQ(s.topology.file, "");
  EXPECT_EQ(s.topology.line, 2);
  EXPECT_EQ(s.topology.spectrum_x.gpus, 16u);
  EXPECT_EQ(s.topology.spectrum_x.nic_rate_bps, 400'000'000'000u);
  EXPECT_EQ(s.topology.spectrum_x.nvlink_rate_bps, 2'400'000'000'000u);
  // Keys not given keep SimAI's template defaults.
  EXPECT_EQ(s.topology.spectrum_x.servers_per_segment, 64u);
  EXPECT_EQ(s.topology.spectrum_x.spines, 64u);
  EXPECT_EQ(s.topology.spectrum_x.nic_delay, 500 * kNs);
  EXPECT_EQ(s.topology.spectrum_x.gpu_type, "H100");
  EXPECT_EQ(s.workload.file, (d / "workload.txt").string());

  const SimaiTopology g = build_topology(s);
  const SimaiTopology shipped = read_simai_topology(kSx16);  // header "90 8 2 72 544 A100"
  EXPECT_EQ(g.topo.num_nodes, 90u);
  EXPECT_EQ(g.topo.links.size(), 544u);
  EXPECT_EQ(g.gpus, 16u);
  EXPECT_EQ(g.gpus_per_server, 8u);
  EXPECT_EQ(g.nvswitches, 2u);
  EXPECT_EQ(g.switches, 72u);
  EXPECT_EQ(g.topo.file, p + " [topology]");
  EXPECT_EQ(links(g.topo), links(shipped.topo));
  EXPECT_EQ(g.topo.is_switch, shipped.topo.is_switch);
  EXPECT_EQ(g.topo.is_nvswitch, shipped.topo.is_nvswitch);
  EXPECT_EQ(g.gpu_type, "H100");  // the one difference: SimAI's file was generated with -gt A100
  EXPECT_EQ(shipped.gpu_type, "A100");
}

TEST(Scenario, TopologyFileRelativeToScenario) {
  const fs::path d = test_dir();
  fs::create_directories(d / "topos");
  fs::copy_file(kSx16, d / "topos" / "sx16.txt");
  const std::string p = scenario_file(d,
                                      "[topology]\n"
                                      "file = \"topos/sx16.txt\"\n"
                                      "write = \"topology.txt\"\n" +
                                          kRest);
  const Scenario s = read_scenario(p);
  EXPECT_EQ(s.name, "scenario");  // the file's stem
  EXPECT_EQ(s.output_dir, "out/scenario");
  EXPECT_EQ(s.topology.file, (d / "topos" / "sx16.txt").string());
  EXPECT_EQ(s.topology.generator, "");
  EXPECT_EQ(s.topology.write, "topology.txt");
  const SimaiTopology t = build_topology(s);
  EXPECT_EQ(t.topo.num_nodes, 90u);
  EXPECT_EQ(t.topo.links.size(), 544u);
  EXPECT_EQ(t.gpu_type, "A100");
  EXPECT_EQ(links(t.topo), links(read_simai_topology(kSx16).topo));
}

TEST(Scenario, FatTreeGeneratorEqualsHpccTopologyFile) {
  const fs::path d = test_dir();
  // The 3-token HPCC form, by absolute path.
  const Scenario from_file = read_scenario(scenario_file(d, "[topology]\nfile = \"" + kFatTreeK4 + "\"\n" + kRest));
  const SimaiTopology f = build_topology(from_file);
  EXPECT_EQ(f.gpus, 16u);
  EXPECT_EQ(f.switches, 20u);
  const Scenario gen = read_scenario(scenario_file(d, "[topology]\ngenerator = \"fat-tree\"\nk = 4\n" + kRest));
  EXPECT_EQ(gen.topology.fat_tree.host_rate_bps, 100'000'000'000u);
  const SimaiTopology g = build_topology(gen);
  EXPECT_EQ(g.topo.num_nodes, 36u);
  EXPECT_EQ(g.topo.is_switch, f.topo.is_switch);
  ASSERT_EQ(g.topo.links.size(), 48u);
  for (size_t i = 0; i < 48; ++i) {
    const TopoLink &x = g.topo.links[i], &y = f.topo.links[i];
    EXPECT_EQ(std::tie(x.a, x.b, x.rate_bps, x.delay), std::tie(y.a, y.b, y.rate_bps, y.delay)) << i;
  }
}

TEST(Scenario, GeneratorParametersPerGenerator) {
  const fs::path d = test_dir();
  Scenario s = read_scenario(scenario_file(d,
                                           "[topology]\n"
                                           "generator = \"hpn\"\n"
                                           "gpus = 64\n"
                                           "servers_per_segment = 4\n"
                                           "spines = 8\n"
                                           "leaves_per_spine = 32\n"
                                           "dual_plane = true\n"
                                           "spine_rate = \"800Gbps\"\n"
                                           "spine_delay = \"1us\"\n"
                                           "nic_delay = \"0.0005ms\"\n"
                                           "nvswitches_per_server = 0\n"
                                           "error_rate = 0.001\n"
                                           "gpu_type = \"H800\"\n" +
                                               kRest));
  const HpnParams& h = s.topology.hpn;
  EXPECT_EQ(h.gpus, 64u);
  EXPECT_EQ(h.servers_per_segment, 4u);
  EXPECT_EQ(h.spines, 8u);
  EXPECT_EQ(h.leaves_per_spine, 32u);
  EXPECT_TRUE(h.dual_plane);
  EXPECT_EQ(h.leaf_spine_rate_bps, 800'000'000'000u);
  EXPECT_EQ(h.leaf_spine_delay, 1 * kUs);
  EXPECT_EQ(h.nic_delay, 500 * kNs);
  EXPECT_EQ(h.nic_rate_bps, 200'000'000'000u);  // HPN's default NIC port rate
  EXPECT_EQ(h.nvswitches_per_server, 0u);
  EXPECT_DOUBLE_EQ(h.error_rate, 0.001);
  EXPECT_EQ(h.gpu_type, "H800");
  const SimaiTopology t = build_topology(s);
  EXPECT_EQ(t.gpus, 64u);
  EXPECT_EQ(t.nvswitches, 0u);

  s = read_scenario(scenario_file(d,
                                  "[topology]\n"
                                  "generator = \"DCN+\"\n"  // names are case-insensitive
                                  "gpus = 128\n"
                                  "gpus_per_leaf = 32\n"
                                  "dual_tor = true\n" +
                                      kRest));
  EXPECT_EQ(s.topology.generator, "dcn+");
  EXPECT_EQ(s.topology.dcn_plus.gpus_per_leaf, 32u);
  EXPECT_TRUE(s.topology.dcn_plus.dual_tor);
  EXPECT_EQ(s.topology.dcn_plus.spines, 8u);  // default kept

  s = read_scenario(scenario_file(d,
                                  "[topology]\n"
                                  "generator = \"fat-tree\"\n"
                                  "k = 8\n"
                                  "gpus = 0\n"
                                  "nic_rate = \"400Gbps\"\n"
                                  "nic_delay = \"500ns\"\n"
                                  "spine_rate = \"800Gbps\"\n"
                                  "spine_delay = \"600ns\"\n" +
                                      kRest));
  const FatTreeParams& f = s.topology.fat_tree;
  EXPECT_EQ(f.k, 8u);
  EXPECT_EQ(f.host_rate_bps, 400'000'000'000u);
  EXPECT_EQ(f.host_delay, 500 * kNs);
  EXPECT_EQ(f.fabric_rate_bps, 800'000'000'000u);
  EXPECT_EQ(f.fabric_delay, 600 * kNs);
  EXPECT_EQ(build_topology(s).gpus, 128u);  // k³/4
}

// ---------------------------------------------------------------------------------------------
// Workload, output, network

TEST(Scenario, WorkloadAndOutputKeys) {
  const fs::path d = test_dir();
  Scenario s = read_scenario(scenario_file(d, "[topology]\ngenerator = \"spectrum-x\"\ngpus = 16\n" + kRest));
  EXPECT_EQ(s.workload.iterations, 1u);
  EXPECT_EQ(s.workload.send_latency, 6 * kUs);
  EXPECT_EQ(s.workload.zero_chunk, ZeroChunk::NoFlows);
  EXPECT_EQ(s.workload.report_gpu, 0u);
  EXPECT_EQ(s.workload.max_time, 0);
  EXPECT_EQ(s.workload.line, 4);
  s = read_scenario(scenario_file(d,
                                  "name = \"w\"\n"
                                  "[topology]\n"
                                  "generator = \"spectrum-x\"\n"
                                  "[workload]\n"
                                  "file = \"workload.txt\"\n"
                                  "iterations = 3\n"
                                  "send_latency = \"2us\"\n"
                                  "zero_chunk = \"one-byte\"\n"
                                  "report_gpu = 5\n"
                                  "max_time = \"10s\"\n"
                                  "[network]\n"
                                  "config = \"SimAI.conf\"\n"
                                  "[output]\n"
                                  "dir = \"runs/w1\"\n"));
  EXPECT_EQ(s.workload.iterations, 3u);
  EXPECT_EQ(s.workload.send_latency, 2 * kUs);
  EXPECT_EQ(s.workload.zero_chunk, ZeroChunk::ClampToOneByte);
  EXPECT_EQ(s.workload.report_gpu, 5u);
  EXPECT_EQ(s.workload.max_time, 10 * kSec);
  EXPECT_EQ(s.output_dir, "runs/w1");
  EXPECT_EQ(s.topology.spectrum_x.gpus, 4096u);  // the template's default
}

TEST(Scenario, NetworkKeysOverSimaiConf) {
  const fs::path d = test_dir();
  const std::string p = scenario_file(d,
                                      "[topology]\n"
                                      "generator = \"spectrum-x\"\n"
                                      "[workload]\n"
                                      "file = \"workload.txt\"\n"
                                      "[network]\n"
                                      "config = \"SimAI.conf\"\n"
                                      "CC_MODE = 3\n"
                                      "U_TARGET = 0.9\n"
                                      "HAS_WIN = false\n"
                                      "RATE_AI = \"20Mb/s\"\n"
                                      "KMAX_MAP = \"1 400000000000 3200\"\n"
                                      "KMIN_MAP = [1, 400000000000, 800]\n"
                                      "PMAX_MAP = \"1 400000000000 0.2\"\n"
                                      "SIMULATOR_STOP_TIME = 2.5\n");
  const Scenario s = read_scenario(p);
  const SimConfig& c = s.net;
  EXPECT_EQ(c.cc_mode, 3);                      // the scenario's
  EXPECT_EQ(c.packet_payload_size, 9000u);      // SimAI.conf's
  EXPECT_EQ(c.rate_hai_bps, 100'000'000u);      // SimAI.conf's
  EXPECT_EQ(c.rate_ai_bps, 20'000'000u);
  EXPECT_DOUBLE_EQ(c.u_target, 0.9);
  EXPECT_FALSE(c.has_win);
  EXPECT_EQ(c.stop_time(), 2500 * kMs);
  EXPECT_EQ(c.ecn.at(400'000'000'000).kmax_bytes, 3'200'000u);
  EXPECT_EQ(c.ecn.at(400'000'000'000).kmin_bytes, 800'000u);
  EXPECT_EQ(c.ecn.size(), 1u);  // the scenario's maps replace SimAI.conf's six rates
  EXPECT_EQ(c.path, (d / "SimAI.conf").string());
  EXPECT_EQ(c.origin_of("CC_MODE"), (std::pair<std::string, int>{p, 7}));
  EXPECT_EQ(c.origin_of("KMIN_MAP"), (std::pair<std::string, int>{p, 12}));
  EXPECT_EQ(c.origin_of("PACKET_PAYLOAD_SIZE"), (std::pair<std::string, int>{(d / "SimAI.conf").string(), 4}));
  EXPECT_EQ(c.raw.back(), (std::pair<std::string, std::string>{"SIMULATOR_STOP_TIME", "2.5"}));
}

TEST(Scenario, NetworkWithoutBaseConfig) {
  const fs::path d = test_dir();
  const std::string p = scenario_file(d,
                                      "[topology]\n"
                                      "generator = \"spectrum-x\"\n"
                                      "[workload]\n"
                                      "file = \"workload.txt\"\n"
                                      "[network]\n"
                                      "CC_MODE = \"dctcp\"\n"
                                      "L2_ACK_INTERVAL = 1\n"
                                      "ENABLE_QCN = true\n"
                                      "FLOW_FILE = \"flows.txt\"\n");
  const Scenario s = read_scenario(p);
  EXPECT_EQ(s.net.cc_mode, 8);
  EXPECT_EQ(s.net.packet_payload_size, 1000u);  // the reference's default
  EXPECT_EQ(s.net.path, p);
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_EQ(s.warnings[0].rfind(p + ":9: FLOW_FILE is not used", 0), 0u) << s.warnings[0];
}

// The [wormhole] table wins over the network config's WORMHOLE_* lines, but a network key on the
// command line wins over the table: --set WORMHOLE=0 turns a scenario's Wormhole off (a distributed
// run, a packet-mode baseline) and --set WORMHOLE_THETA=0.2 replaces its theta.
TEST(Scenario, CommandLineWormholeKeysWinOverTheTable) {
  const fs::path d = test_dir();
  const std::string p = scenario_file(d,
                                      "[topology]\ngenerator = \"spectrum-x\"\ngpus = 16\n" + kRest +
                                          "WORMHOLE_WINDOW = 300\n"
                                          "[wormhole]\nenabled = true\ntheta = 0.05\nwindow = 400\n");
  Scenario s = read_scenario(p);
  EXPECT_TRUE(s.net.wormhole.enabled);
  EXPECT_EQ(s.net.wormhole.window, 400u);  // the table over the network line
  s = read_scenario(p, {{"WORMHOLE", "0"}, {"WORMHOLE_THETA", "0.2"}});
  EXPECT_FALSE(s.net.wormhole.enabled);
  EXPECT_DOUBLE_EQ(s.net.wormhole.theta, 0.2);
  EXPECT_EQ(s.net.wormhole.window, 400u);  // untouched on the command line: still the table's
  s = read_scenario(p, {{"wormhole.enabled", "false"}});
  EXPECT_FALSE(s.net.wormhole.enabled);
}

TEST(Scenario, AGeneratorRefusingACommandLineValueSaysItCameFromTheCommandLine) {
  const std::string p = scenario_file(test_dir(), "[topology]\ngenerator = \"spectrum-x\"\ngpus = 16\n" + kRest);
  const Scenario s = read_scenario(p, {{"topology.gpus", "15"}});
  const InputError e = input_error([&] { build_topology(s); });
  EXPECT_TRUE(mentions(e, "gpus (15) must be a multiple of gpus_per_server (8)"));
  EXPECT_TRUE(mentions(e, "(given on the command line: topology.gpus=15)"));
  EXPECT_TRUE(mentions(e, "in [topology] or in --set"));
  // From the file alone the message is as before.
  const std::string q = scenario_file(test_dir(), "[topology]\ngenerator = \"spectrum-x\"\ngpus = 15\n" + kRest);
  const InputError f = input_error([&] { build_topology(read_scenario(q)); });
  EXPECT_FALSE(mentions(f, "command line"));
}

TEST(Scenario, CommandLineOverrides) {
  const fs::path d = test_dir();
  const std::string p = scenario_file(d,
                                      "name = \"base\"\n"
                                      "[topology]\n"
                                      "generator = \"spectrum-x\"\n"
                                      "gpus = 16\n"
                                      "[workload]\n"
                                      "file = \"workload.txt\"\n"
                                      "iterations = 2\n"
                                      "[network]\n"
                                      "config = \"SimAI.conf\"\n"
                                      "CC_MODE = 3\n");
  const std::string other = fs::relative(write_file(d / "other" / "w.txt", "x"), fs::current_path()).string();
  const Scenario s = read_scenario(p, {{"workload.iterations", "4"},
                                       {"topology.gpus", "32"},
                                       {"topology.nic_rate", "100Gbps"},
                                       {"workload.max_time", "0.5s"},
                                       {"workload.file", other},  // relative to the current directory
                                       {"name", "run2"},
                                       {"output.dir", "o/x"},
                                       {"CC_MODE", "timely"},
                                       {"KMAX_MAP", "1 400000000000 3200"},
                                       {"KMIN_MAP", "1 400000000000 800"},
                                       {"PMAX_MAP", "1 400000000000 0.2"},
                                       {"network.U_TARGET", "0.5"}});
  EXPECT_EQ(s.workload.iterations, 4u);
  EXPECT_EQ(s.topology.spectrum_x.gpus, 32u);
  EXPECT_EQ(s.topology.spectrum_x.nic_rate_bps, 100'000'000'000u);
  EXPECT_EQ(s.workload.max_time, 500 * kMs);
  EXPECT_EQ(s.workload.file, other);
  EXPECT_EQ(s.name, "run2");
  EXPECT_EQ(s.output_dir, "o/x");
  EXPECT_EQ(s.net.cc_mode, 7);
  EXPECT_EQ(s.net.ecn.at(400'000'000'000).kmax_bytes, 3'200'000u);
  EXPECT_DOUBLE_EQ(s.net.u_target, 0.5);
  EXPECT_EQ(s.net.origin_of("CC_MODE"), (std::pair<std::string, int>{"command line", 0}));
}

// ---------------------------------------------------------------------------------------------
// Rejected scenarios: each names the file and line

TEST(ScenarioErrors, SyntaxErrorNamesLine) {
  std::string p;
  const InputError e = scenario_error(
      "[topology]\n"
      "generator = \"spectrum-x\"\n"
      "\n"
      "nic_rate = 400Gbps\n" +
          kRest,
      &p);
  EXPECT_EQ(e.file(), p);
  EXPECT_EQ(e.line(), 4);
  EXPECT_TRUE(mentions(e, p + ":4: TOML syntax error"));
  EXPECT_TRUE(mentions(e, "strings need quotes"));
  const InputError dup = scenario_error("[topology]\ngenerator = \"hpn\"\ngenerator = \"hpn\"\n" + kRest);
  EXPECT_EQ(dup.line(), 3);
}

TEST(ScenarioErrors, UnknownKeySuggestsClosest) {
  std::string p;
  InputError e = scenario_error("[topology]\ngenerator = \"spectrum-x\"\nnic_rat = \"400Gbps\"\n" + kRest, &p);
  EXPECT_EQ(e.file(), p);
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(mentions(e, "unknown key \"nic_rat\" in [topology] (fix: did you mean nic_rate?)"));
  e = scenario_error("[topolgy]\ngenerator = \"spectrum-x\"\n" + kRest);
  EXPECT_EQ(e.line(), 1);
  EXPECT_TRUE(mentions(e, "unknown table [topolgy] (fix: did you mean topology?"));
  e = scenario_error("[topology]\ngenerator = \"fat-tree\"\nfabric_rate = \"100Gbps\"\n" + kRest);
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(mentions(e, "did you mean spine_rate?"));
  e = scenario_error("[topology]\ngenerator = \"hpn\"\n[workload]\nfile = \"workload.txt\"\niteration = 2\n");
  EXPECT_EQ(e.line(), 5);
  EXPECT_TRUE(mentions(e, "did you mean iterations?"));
  e = scenario_error("[topology]\ngenerator = \"hpn\"\n" + kRest + "confg = \"x\"\n");
  EXPECT_EQ(e.line(), 7);
  EXPECT_TRUE(mentions(e, "did you mean config?"));
  e = scenario_error("nam = \"x\"\n[topology]\ngenerator = \"hpn\"\n" + kRest);
  EXPECT_EQ(e.line(), 1);
  EXPECT_TRUE(mentions(e, "did you mean name?"));
}

TEST(ScenarioErrors, FileAndGeneratorBothOrNeither) {
  std::string p;
  InputError e = scenario_error(
      "[topology]\n"
      "generator = \"spectrum-x\"\n"
      "file = \"workload.txt\"\n" +
          kRest,
      &p);
  EXPECT_EQ(e.file(), p);
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(mentions(e, "topology.file (line 3) and topology.generator (line 2) are both given"));
  e = scenario_error("name = \"x\"\n[topology]\nwrite = \"t.txt\"\n" + kRest, &p);
  EXPECT_EQ(e.file(), p);
  EXPECT_EQ(e.line(), 2);
  EXPECT_TRUE(mentions(e, "[topology] names neither a file nor a generator"));
  e = scenario_error(kRest);
  EXPECT_EQ(e.line(), 0);
  EXPECT_TRUE(mentions(e, "no [topology] table"));
}

TEST(ScenarioErrors, MissingFilesNameThePathLookedFor) {
  const fs::path d = test_dir();
  std::string p;
  InputError e = scenario_error("[topology]\ngenerator = \"hpn\"\n[workload]\nfile = \"nope/w.txt\"\n", &p);
  EXPECT_EQ(e.file(), p);
  EXPECT_EQ(e.line(), 4);
  EXPECT_TRUE(mentions(e, "workload.file: workload file \"nope/w.txt\" not found: looked for " +
                              (fs::path(p).parent_path() / "nope/w.txt").string()));
  e = scenario_error("[topology]\nfile = \"topo.txt\"\n" + kRest, &p);
  EXPECT_EQ(e.line(), 2);
  EXPECT_TRUE(mentions(e, "topology file \"topo.txt\" not found"));
  e = scenario_error("[topology]\ngenerator = \"hpn\"\n[workload]\nfile = \"workload.txt\"\n[network]\nconfig = \"c.conf\"\n");
  EXPECT_EQ(e.line(), 6);
  EXPECT_TRUE(mentions(e, "network config \"c.conf\" not found"));
  e = scenario_error("[topology]\ngenerator = \"hpn\"\n[workload]\niterations = 1\n");
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(mentions(e, "[workload] has no file"));
  e = input_error([&] { read_scenario((d / "absent.toml").string()); });
  EXPECT_EQ(e.file(), (d / "absent.toml").string());
  EXPECT_EQ(e.line(), 0);
  EXPECT_TRUE(mentions(e, "cannot open"));
}

TEST(ScenarioErrors, BadRateAndTime) {
  std::string p;
  InputError e = scenario_error("[topology]\ngenerator = \"spectrum-x\"\nnic_rate = \"400Gbs\"\n" + kRest, &p);
  EXPECT_EQ(e.file(), p);
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(mentions(e, "topology.nic_rate: \"400Gbs\" has an unknown rate unit"));
  EXPECT_TRUE(mentions(e, "fix: write a rate in quotes, e.g. nic_rate = \"400Gbps\""));
  e = scenario_error("[topology]\ngenerator = \"spectrum-x\"\nspine_rate = \"0Gbps\"\n" + kRest);
  EXPECT_TRUE(mentions(e, "a rate of 0 makes no sense"));
  // A negative rate in quotes is named as negative (it said "is not a data rate", and to quote it).
  e = scenario_error("[topology]\ngenerator = \"spectrum-x\"\nnic_rate = \"-400Gbps\"\n" + kRest);
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(mentions(e, "topology.nic_rate: a negative rate makes no sense"));
  EXPECT_TRUE(mentions(e, "fix: write a positive rate, e.g. nic_rate = \"400Gbps\""));
  e = scenario_error("[topology]\ngenerator = \"spectrum-x\"\nspine_rate = \" -400Gbps\"\n" + kRest);
  EXPECT_TRUE(mentions(e, "topology.spine_rate: a negative rate makes no sense"));
  e = scenario_error("[topology]\ngenerator = \"spectrum-x\"\nnic_delay = 500\n" + kRest);
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(mentions(e, "topology.nic_delay: the number 500 has no unit"));
  e = scenario_error("[topology]\ngenerator = \"spectrum-x\"\nnic_delay = \"-1ns\"\n" + kRest);
  EXPECT_TRUE(mentions(e, "negative time"));
  e = scenario_error("[topology]\ngenerator = \"hpn\"\n[workload]\nfile = \"workload.txt\"\nsend_latency = \"6 us\"\n");
  EXPECT_EQ(e.line(), 5);
  EXPECT_TRUE(mentions(e, "workload.send_latency:"));
  // Regressions: ns-3 would read these as 500 s and 400 bit/s; in a scenario the unit was forgotten.
  e = scenario_error("[topology]\ngenerator = \"spectrum-x\"\nnic_delay = \"500\"\n" + kRest);
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(mentions(e, "topology.nic_delay: time \"500\" has no unit"));
  e = scenario_error("[topology]\ngenerator = \"spectrum-x\"\nnic_rate = \"400\"\n" + kRest);
  EXPECT_TRUE(mentions(e, "topology.nic_rate: rate \"400\" has no unit"));
  e = scenario_error("[topology]\ngenerator = \"spectrum-x\"\nnic_rate = \"400Gps\"\n" + kRest);  // a unit, misspelt
  EXPECT_TRUE(mentions(e, "topology.nic_rate: \"400Gps\" has an unknown rate unit"));
  e = scenario_error("[topology]\ngenerator = \"spectrum-x\"\nnic_rate = 400\n" + kRest);
  EXPECT_TRUE(mentions(e, "rate 400 is read as bit/s"));
}

TEST(ScenarioErrors, WrongTypesAndRanges) {
  const std::string head = "[topology]\ngenerator = \"spectrum-x\"\n";
  InputError e = scenario_error(head + "gpus = \"x\"\n" + kRest);
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(mentions(e, "topology.gpus: the string \"x\" is not a whole number (fix: write a whole number >= 1"));
  e = scenario_error(head + "gpus = -1\n" + kRest);
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(mentions(e, "topology.gpus: -1 is below the minimum 1"));
  e = scenario_error(head + "gpus = 16.0\n" + kRest);
  EXPECT_TRUE(mentions(e, "the number 16 is not a whole number"));
  e = scenario_error(head + "spines = 5000000000\n" + kRest);
  EXPECT_TRUE(mentions(e, "is too large"));
  e = scenario_error(head + "error_rate = 1.0\n" + kRest);
  EXPECT_TRUE(mentions(e, "outside [0, 1)"));
  e = scenario_error(head + "gpu_type = 100\n" + kRest);
  EXPECT_TRUE(mentions(e, "topology.gpu_type: the number 100 is not a string"));
  e = scenario_error("[topology]\ngenerator = \"hpn\"\ndual_plane = 1\n" + kRest);
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(mentions(e, "is not true or false"));
  e = scenario_error(head + "[workload]\nfile = \"workload.txt\"\niterations = 0\n");
  EXPECT_EQ(e.line(), 5);
  EXPECT_TRUE(mentions(e, "workload.iterations: 0 is below the minimum 1"));
  e = scenario_error(head + "[workload]\nfile = \"workload.txt\"\nzero_chunk = \"none\"\n");
  EXPECT_TRUE(mentions(e, "write zero_chunk = \"no-flows\" (SimAI) or zero_chunk = \"one-byte\""));
  e = scenario_error(head + "topology = 3\n" + kRest);  // a key inside [topology]
  EXPECT_TRUE(mentions(e, "unknown key \"topology\" in [topology]"));
  e = scenario_error("workload = 3\n" + head);
  EXPECT_EQ(e.line(), 1);
  EXPECT_TRUE(mentions(e, "\"workload\" must be a table"));
  e = scenario_error("[topology]\ngenerator = \"spectrumx\"\n" + kRest);
  EXPECT_TRUE(mentions(e, "unknown generator \"spectrumx\" (fix: did you mean \"spectrum-x\"?"));
}

TEST(ScenarioErrors, KeyNotTakenByTheGenerator) {
  std::string p;
  InputError e = scenario_error("[topology]\ngenerator = \"spectrum-x\"\ndual_tor = true\n" + kRest, &p);
  EXPECT_EQ(e.file(), p);
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(mentions(e, "the spectrum-x generator takes no dual_tor (fix: remove it: dual_tor is a parameter of dcn+)"));
  e = scenario_error("[topology]\ngenerator = \"dcn+\"\nservers_per_segment = 8\n" + kRest);
  EXPECT_TRUE(mentions(e, "servers_per_segment is a parameter of spectrum-x and hpn"));
  e = scenario_error("[topology]\ngenerator = \"fat-tree\"\nspines = 8\n" + kRest);
  EXPECT_TRUE(mentions(e, "spines is a parameter of spectrum-x, hpn and dcn+"));
  e = scenario_error("[topology]\nfile = \"workload.txt\"\ngpus = 8\n" + kRest);
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(mentions(e, "generator parameters do not apply"));
}

TEST(ScenarioErrors, GeneratorRejectionNamesTopologyLine) {
  const fs::path d = test_dir();
  const std::string p = scenario_file(d, "name = \"x\"\n\n[topology]\ngenerator = \"spectrum-x\"\ngpus = 12\n" + kRest);
  const Scenario s = read_scenario(p);
  const InputError e = input_error([&] { build_topology(s); });
  EXPECT_EQ(e.file(), p);
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(mentions(e, "gpus (12) must be a multiple of gpus_per_server (8)"));
}

TEST(ScenarioErrors, NetworkErrorsNameTheirOwnLine) {
  std::string p;
  const std::string head = "[topology]\ngenerator = \"hpn\"\n" + kRest;  // [network] is lines 5-6
  InputError e = scenario_error(head + "HAS_WIN = 2\n", &p);
  EXPECT_EQ(e.file(), p);
  EXPECT_EQ(e.line(), 7);
  EXPECT_TRUE(mentions(e, p + ":7: HAS_WIN: \"2\" is not 0 or 1"));
  e = scenario_error(head + "CC_MODE = 1\nCC_MOD = 3\n", &p);
  EXPECT_EQ(e.file(), p);
  EXPECT_EQ(e.line(), 8);
  EXPECT_TRUE(mentions(e, "unknown key \"CC_MOD\" (fix: did you mean CC_MODE?)"));
  e = scenario_error(head + "RATE_AI = \"fast\"\n");
  EXPECT_EQ(e.line(), 7);
  EXPECT_TRUE(mentions(e, "RATE_AI: \"fast\" is not a data rate"));
  e = scenario_error(head + "KMIN_MAP = { a = 1 }\n");
  EXPECT_EQ(e.line(), 7);
  EXPECT_TRUE(mentions(e, "network.KMIN_MAP: a table is not a setting value"));
  // An error inside the base config names the base config's line.
  const fs::path d = test_dir();
  const std::string conf = write_file(d / "bad.conf", "CC_MODE 1\nPAUSE_TIME -5\n");
  const std::string s = scenario_file(d, "[topology]\ngenerator = \"hpn\"\n[workload]\nfile = \"workload.txt\"\n"
                                         "[network]\nconfig = \"bad.conf\"\n");
  e = input_error([&] { read_scenario(s); });
  EXPECT_EQ(e.file(), conf);
  EXPECT_EQ(e.line(), 2);
  // Without a base config, a required key left unset names the scenario.
  e = scenario_error("[topology]\ngenerator = \"hpn\"\n[workload]\nfile = \"workload.txt\"\n[network]\nCC_MODE = 3\n", &p);
  EXPECT_EQ(e.file(), p);
  EXPECT_EQ(e.line(), 0);
  EXPECT_TRUE(mentions(e, "L2_ACK_INTERVAL is not set"));
}

TEST(ScenarioErrors, OverridesNameTheCommandLine) {
  const std::string text = "[topology]\ngenerator = \"spectrum-x\"\n" + kRest;
  InputError e = scenario_error(text, nullptr, {{"workload.iteratons", "2"}});
  EXPECT_EQ(e.file(), "command line");
  EXPECT_EQ(e.line(), 0);
  EXPECT_TRUE(mentions(e, "unknown key \"iteratons\" in [workload] (fix: did you mean iterations?)"));
  e = scenario_error(text, nullptr, {{"gpus", "16"}});
  EXPECT_TRUE(mentions(e, "command line: override \"gpus\" names no table (fix: write topology.gpus=16)"));
  e = scenario_error(text, nullptr, {{"topolgy.gpus", "16"}});
  EXPECT_TRUE(mentions(e, "did you mean topology.gpus?"));
  e = scenario_error(text, nullptr, {{"CC_MOD", "3"}});
  EXPECT_TRUE(mentions(e, "command line: unknown key \"CC_MOD\" (fix: did you mean CC_MODE?)"));
  e = scenario_error(text, nullptr, {{"topology.gpus", "many"}});
  EXPECT_TRUE(mentions(e, "command line: topology.gpus: the string \"many\" is not a whole number"));
  // The fix in the form the value was given: --set, not the scenario file's "key = value".
  EXPECT_TRUE(mentions(e, "(fix: write a whole number >= 1, e.g. --set topology.gpus=1)"));
  e = scenario_error(text, nullptr, {{"topology.nic_rate", "fast"}});
  EXPECT_TRUE(mentions(e, "e.g. --set topology.nic_rate=400Gbps)"));
  e = scenario_error(text, nullptr, {{"wormhole.sample_interval", "1s"}});
  EXPECT_TRUE(mentions(e, "(fix: write e.g. --set wormhole.sample_interval=1us)"));
  // A key like none of them gets the list, not the closest one ("nope": did you mean file?).
  e = scenario_error(text, nullptr, {{"topology.nope", "1"}});
  EXPECT_TRUE(mentions(e, "unknown key \"nope\" in [topology] (fix: the keys of [topology] are "));
  EXPECT_FALSE(mentions(e, "did you mean"));
  e = scenario_error(text, nullptr, {{"topology.dual_tor", "true"}});
  EXPECT_TRUE(mentions(e, "command line: topology.dual_tor: the spectrum-x generator takes no dual_tor"));
  e = scenario_error(text, nullptr, {{"topology.file", "t.txt"}});
  EXPECT_TRUE(mentions(e, "topology.file (the command line) and topology.generator (line 2) are both given"));
}

// ---------------------------------------------------------------------------------------------
// make_hpcc_config and SimAI.conf

TEST(HpccConfig, SimaiConfLoads) {
  for (const SimConfig& c : {make_hpcc_config(kSimaiConf, {}, ""), read_hpcc_config(kSimaiConf)}) {
    EXPECT_EQ(c.path, kSimaiConf);
    EXPECT_EQ(c.cc_mode, 1);
    EXPECT_EQ(c.packet_payload_size, 9000u);
    EXPECT_EQ(c.rate_ai_bps, 50'000'000u);
    EXPECT_EQ(c.rate_hai_bps, 100'000'000u);
    EXPECT_DOUBLE_EQ(c.rp_timer_us, 900);
    EXPECT_DOUBLE_EQ(c.buffer_size_mb, 32);
    ASSERT_EQ(c.ecn.size(), 6u);
    EXPECT_EQ(c.ecn.at(400'000'000'000).kmax_bytes, 3'200'000u);
    EXPECT_EQ(c.ecn.at(1'600'000'000'000).kmin_bytes, 600'000u);
    EXPECT_DOUBLE_EQ(c.ecn.at(200'000'000'000).pmax, 0.8);
    // 4e13 s means "never" to SimAI: clamped to the longest simulable time, silently.
    EXPECT_DOUBLE_EQ(c.simulator_stop_time_s, 9.2e6);
    EXPECT_EQ(c.stop_time(), 9'200'000 * kSec);
    EXPECT_TRUE(c.warnings.empty());
    // Absolute paths are kept; TOPOLOGY_FILE / FLOW_FILE are not required to exist here.
    EXPECT_EQ(c.fct_output_file, "/etc/astra-sim/simulation/llama_hpn7_fct.txt");
    EXPECT_EQ(c.topology_file, "");
    // SimAI's monitor keys: MON_START 0, MON_END 20000, QP_MON_INTERVAL 100, BW_MON_INTERVAL 10000 (µs).
    EXPECT_EQ(c.raw.back(), (std::pair<std::string, std::string>{"BW_MON_INTERVAL", "10000"}));
    EXPECT_EQ(c.bw_mon_file, "/etc/astra-sim/simulation/llama_hpn7_bw.txt");
    EXPECT_EQ(c.cnp_mon_file, "/etc/astra-sim/simulation/llama_hpn7_cnp.txt");
    EXPECT_EQ(std::make_tuple(c.mon_start_us, c.mon_end_us, c.qp_mon_interval_us, c.bw_mon_interval_us),
              std::make_tuple(0ull, 20'000ull, 100ull, 10'000ull));
    const auto eff = effective_settings(c);
    EXPECT_TRUE(std::any_of(eff.begin(), eff.end(), [](const auto& kv) {
      return kv.first == "RATE_MON_FILE" && kv.second == "/etc/astra-sim/simulation/llama_hpn7_rate.txt";
    }));
  }
}

TEST(HpccConfig, MakeConfigFromSettings) {
  const std::vector<ConfigSetting> settings = {
      {"CC_MODE", "8", "s.toml", 7}, {"L2_ACK_INTERVAL", "1", "s.toml", 8}, {"MON_START", "0", "s.toml", 9}};
  SimConfig c = make_hpcc_config("", settings, "s.toml");
  EXPECT_EQ(c.path, "s.toml");
  EXPECT_EQ(c.cc_mode, 8);
  EXPECT_EQ(c.packet_payload_size, 1000u);
  EXPECT_EQ(c.origin_of("L2_ACK_INTERVAL"), (std::pair<std::string, int>{"s.toml", 8}));
  EXPECT_EQ(c.origin_of("SEED"), (std::pair<std::string, int>{"s.toml", 0}));
  // The last setting of a key wins, as in a file.
  c = make_hpcc_config("", {settings[0], settings[1], {"CC_MODE", "dcqcn", "command line", 0}, {"RATE_AI", "1Gbps", "x", 1},
                            {"RATE_HAI", "2Gbps", "x", 2}}, "s.toml");
  EXPECT_EQ(c.cc_mode, 1);
  EXPECT_EQ(c.origin_of("CC_MODE"), (std::pair<std::string, int>{"command line", 0}));

  InputError e = input_error([] { make_hpcc_config("", {{"L2_ACK_INTERVAL", "1", "s.toml", 3}, {"HAS_WIN", "2", "s.toml", 12}}, "s.toml"); });
  EXPECT_EQ(e.file(), "s.toml");
  EXPECT_EQ(e.line(), 12);
  e = input_error([] { make_hpcc_config("", {{"L2_ACK_INTERVAL", "1 2", "s.toml", 4}}, "s.toml"); });
  EXPECT_EQ(e.line(), 4);
  EXPECT_TRUE(mentions(e, "L2_ACK_INTERVAL: extra value \"2\""));
  e = input_error([] { make_hpcc_config("", {{"CC MODE", "1", "s.toml", 5}}, "s.toml"); });
  EXPECT_EQ(e.line(), 5);
  EXPECT_TRUE(mentions(e, "key \"CC MODE\" must be one word"));
  e = input_error([] { make_hpcc_config("", {{"MON_END", "soon", "s.toml", 6}}, "s.toml"); });
  EXPECT_EQ(e.line(), 6);
  EXPECT_TRUE(mentions(e, "MON_END: \"soon\" is not a whole number"));
  e = input_error([] { make_hpcc_config("", {}, "s.toml"); });
  EXPECT_EQ(e.file(), "s.toml");
  EXPECT_EQ(e.line(), 0);
  EXPECT_TRUE(mentions(e, "L2_ACK_INTERVAL is not set"));
}

TEST(HpccConfig, StopTimeBeyondRangeIsClamped) {
  const fs::path d = test_dir();
  const std::string p = write_file(d / "config.txt", "CC_MODE 8\nL2_ACK_INTERVAL 1\nSIMULATOR_STOP_TIME 1e7\n");
  const SimConfig c = read_hpcc_config(p);
  EXPECT_DOUBLE_EQ(c.simulator_stop_time_s, 9.2e6);
  EXPECT_TRUE(c.warnings.empty());  // SimAI.conf's 4e13 means "never"; every SimAI user has it
  EXPECT_EQ(c.stop_time(), static_cast<Time>(9.2e6 * 1e12 + 0.5));
  const InputError e = input_error([&] { read_hpcc_config(write_file(d / "c2.txt", "SIMULATOR_STOP_TIME -1\n")); });
  EXPECT_TRUE(mentions(e, "negative value -1"));
}
