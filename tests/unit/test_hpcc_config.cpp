// config.txt reader, DataRate / Time strings (docs/network-model.md §1): the shipped configs, known
// answers, and one test per rejected input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "wormhole/io/hpcc_config.h"
#include "wormhole/core/input_error.h"
#include "file_fixtures.h"

using namespace wh;
namespace fs = std::filesystem;

namespace {

fs::path test_dir() { return test::test_dir("wh_config_tests"); }
using test::input_error;
using test::write_file;

const std::string kRing = WH_TEST_DATA "/refruns/hpcc-ring16-fattree-k4-1MB";

/// A fresh folder per test, so tests can run in parallel.


// Lines 1-6 of every synthetic config; tests append from line 7.
const std::string kBase =
    "CC_MODE 1\n"
    "RATE_AI 20Mb/s\n"
    "RATE_HAI 200Mb/s\n"
    "L2_CHUNK_SIZE 4000\n"
    "L2_ACK_INTERVAL 1\n"
    "KMAX_MAP 1 100000000000 1600 KMIN_MAP 1 100000000000 400 PMAX_MAP 1 100000000000 0.2\n";


/// Reads `text` as config.txt and returns the error it must raise.
InputError config_error(const std::string& text, std::string* path_out = nullptr) {
  const std::string p = write_file(test_dir() / "config.txt", text);
  if (path_out) *path_out = p;
  return input_error([&] { read_hpcc_config(p); });
}

::testing::AssertionResult mentions(const InputError& e, const std::string& fragment) {
  if (std::string(e.what()).find(fragment) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << e.what() << "\" lacks \"" << fragment << "\"";
}

}  // namespace

TEST(HpccConfig, RingDcqcn) {
  const SimConfig c = read_hpcc_config(kRing + "/config_dcqcn.txt");
  EXPECT_EQ(c.cc_mode, 1);
  EXPECT_EQ(c.rate_ai_bps, 20'000'000u);
  EXPECT_EQ(c.rate_hai_bps, 200'000'000u);
  EXPECT_EQ(c.min_rate_bps, 1'000'000'000u);
  EXPECT_EQ(c.dctcp_rate_ai_bps, 1'000'000'000u);
  EXPECT_DOUBLE_EQ(c.ewma_gain, 0.00390625);
  EXPECT_DOUBLE_EQ(c.rp_timer_us, 300);
  EXPECT_DOUBLE_EQ(c.alpha_resume_interval_us, 1);
  EXPECT_EQ(c.fast_recovery_times, 1u);
  EXPECT_EQ(c.l2_chunk_size, 4000u);
  EXPECT_EQ(c.l2_ack_interval, 1u);
  EXPECT_FALSE(c.has_win);
  EXPECT_TRUE(c.ack_high_prio);
  EXPECT_FALSE(c.enable_trace);
  EXPECT_DOUBLE_EQ(c.buffer_size_mb, 32);
  EXPECT_EQ(c.stop_time(), 4 * kSec);
  EXPECT_EQ(c.qlen_mon_start_ns, 5'000'000'000u);
  EXPECT_EQ(c.link_down_us, 0u);
  ASSERT_EQ(c.ecn.size(), 2u);
  EXPECT_EQ(c.ecn.at(100'000'000'000).kmin_bytes, 400'000u);
  EXPECT_EQ(c.ecn.at(100'000'000'000).kmax_bytes, 1'600'000u);
  EXPECT_DOUBLE_EQ(c.ecn.at(100'000'000'000).pmax, 0.2);
  EXPECT_EQ(c.ecn.at(400'000'000'000).kmin_bytes, 1'600'000u);
  EXPECT_EQ(c.ecn.at(400'000'000'000).kmax_bytes, 6'400'000u);
  // The inputs sit next to the config, so every relative path is taken from its folder.
  EXPECT_EQ(c.topology_file, (fs::path(kRing) / "topology.txt").string());
  EXPECT_EQ(c.flow_file, (fs::path(kRing) / "flow.txt").string());
  EXPECT_EQ(c.fct_output_file, (fs::path(kRing) / "out/dcqcn/fct.txt").string());
  EXPECT_EQ(c.qlen_mon_file, (fs::path(kRing) / "out/dcqcn/qlen.txt").string());
  ASSERT_EQ(c.raw.size(), 47u);
  EXPECT_EQ(c.raw.front(), (std::pair<std::string, std::string>{"ENABLE_QCN", "1"}));
  EXPECT_EQ(c.raw[38], (std::pair<std::string, std::string>{"LINK_DOWN", "0 0 0"}));
  EXPECT_EQ(c.raw[40].second, "2 100000000000 1600 400000000000 6400");
  EXPECT_EQ(c.path, kRing + "/config_dcqcn.txt");
}

TEST(HpccConfig, AllShippedConfigsLoad) {
  for (const auto& dir : fs::directory_iterator(WH_TEST_DATA "/refruns")) {
    for (const char* name : {"config_dcqcn.txt", "config_hpcc.txt"}) {
      const fs::path p = dir.path() / name;
      if (!fs::exists(p)) continue;
      SCOPED_TRACE(p.string());
      const SimConfig c = read_hpcc_config(p.string());
      EXPECT_EQ(c.cc_mode, name[7] == 'd' ? 1 : 3);
      EXPECT_TRUE(fs::exists(c.topology_file));
      EXPECT_TRUE(fs::exists(c.flow_file));
      EXPECT_TRUE(fs::exists(c.trace_file));
      EXPECT_GE(c.ecn.size(), 2u);
    }
  }
  const SimConfig mix = read_hpcc_config(WH_TEST_DATA "/hpcc-mix/config.txt");
  EXPECT_EQ(mix.cc_mode, 3);
  EXPECT_EQ(mix.rate_ai_bps, 50'000'000u);
  EXPECT_EQ(mix.rate_hai_bps, 100'000'000u);
  EXPECT_DOUBLE_EQ(mix.rp_timer_us, 900);
  EXPECT_TRUE(mix.var_win);
  EXPECT_FALSE(mix.multi_rate);
  EXPECT_EQ(mix.mi_thresh, 0u);
  EXPECT_TRUE(mix.enable_trace);
  EXPECT_EQ(mix.qlen_mon_end_ns, 2'010'000'000u);
  ASSERT_EQ(mix.ecn.size(), 3u);
  EXPECT_EQ(mix.ecn.at(25'000'000'000).kmin_bytes, 100'000u);
  EXPECT_EQ(mix.ecn.at(50'000'000'000).kmax_bytes, 800'000u);
  // Upstream paths (mix/...) are relative to the reference's working directory: left as written.
  EXPECT_EQ(mix.topology_file, "mix/topology.txt");
  EXPECT_EQ(mix.fct_output_file, "mix/fct.txt");
  const SimConfig notrace = read_hpcc_config(WH_TEST_DATA "/hpcc-mix/config_notrace.txt");
  EXPECT_FALSE(notrace.enable_trace);
  EXPECT_EQ(notrace.fct_output_file, "mix/fct_notrace.txt");
}

TEST(HpccConfig, DefaultsAndExtensionKeys) {
  const fs::path d = test_dir();
  SimConfig c = read_hpcc_config(write_file(d / "config.txt", kBase));
  EXPECT_TRUE(c.enable_qcn);
  EXPECT_EQ(c.packet_payload_size, 1000u);
  EXPECT_DOUBLE_EQ(c.buffer_size_mb, 16);
  EXPECT_EQ(c.fct_output_file, "fct.txt");
  EXPECT_DOUBLE_EQ(c.rto_us, 10000);
  EXPECT_TRUE(c.ns_truncation);
  EXPECT_EQ(c.seed, 1u);
  c = read_hpcc_config(write_file(d / "config.txt", kBase + "RTO_US 250.5\nNS_TRUNCATION 0\nSEED 18446744073709551615\n"
                                                            "LINK_DOWN 1000 16 24\nDATA_RATE 100Gbps LINK_DELAY 0.001ms\n"));
  EXPECT_DOUBLE_EQ(c.rto_us, 250.5);
  EXPECT_FALSE(c.ns_truncation);
  EXPECT_EQ(c.seed, UINT64_MAX);
  EXPECT_EQ(c.link_down_us, 1000u);
  EXPECT_EQ(c.link_down_a, 16u);
  EXPECT_EQ(c.link_down_b, 24u);
  EXPECT_EQ(c.data_rate, "100Gbps");
  EXPECT_EQ(c.link_delay, "0.001ms");
  // RATE_AI / RATE_HAI are insisted on only where the CC uses them: DCTCP (8) uses neither.
  c = read_hpcc_config(write_file(d / "config.txt", "CC_MODE 8\nL2_ACK_INTERVAL 1\n"));
  EXPECT_EQ(c.rate_ai_bps, 0u);
  // HPCC uses RATE_AI (its W_AI) but not RATE_HAI.
  c = read_hpcc_config(write_file(d / "config.txt", "CC_MODE 3\nRATE_AI 50Mb/s\nL2_ACK_INTERVAL 1\n"));
  EXPECT_EQ(c.rate_ai_bps, 50'000'000u);
}

TEST(HpccConfigErrors, UnknownKeySuggestsClosest) {
  std::string p;
  std::string text = kBase;
  for (int l = 7; l < 14; ++l) text += "\n";
  text += "CC_MOD 3\n";
  const InputError e = config_error(text, &p);
  EXPECT_EQ(e.file(), p);
  EXPECT_EQ(e.line(), 14);
  EXPECT_TRUE(mentions(e, p + ":14: unknown key \"CC_MOD\" (fix: did you mean CC_MODE?)"));
  EXPECT_TRUE(mentions(config_error("buffer_size 3\n"), "did you mean BUFFER_SIZE?"));
}

TEST(HpccConfigErrors, MissingValueAtEndOfFile) {
  const InputError e = config_error(kBase + "BUFFER_SIZE\n\n");
  EXPECT_EQ(e.line(), 7);
  EXPECT_TRUE(mentions(e, "missing value for BUFFER_SIZE"));
}

TEST(HpccConfigErrors, MissingValueBeforeNextKey) {
  const InputError e = config_error(kBase + "U_TARGET\nMI_THRESH 5\n");
  EXPECT_EQ(e.line(), 7);
  EXPECT_TRUE(mentions(e, "the next token is the key MI_THRESH"));
}

TEST(HpccConfigErrors, NonNumericValue) {
  InputError e = config_error(kBase + "PACKET_PAYLOAD_SIZE\n  1000B\n");
  EXPECT_EQ(e.line(), 8);  // the value's own line
  EXPECT_TRUE(mentions(e, "PACKET_PAYLOAD_SIZE: \"1000B\" is not a number: values are written without a unit"));
  e = config_error(kBase + "U_TARGET high\n");
  EXPECT_EQ(e.line(), 7);
  EXPECT_TRUE(mentions(e, "U_TARGET: \"high\" is not a number"));
}

TEST(HpccConfigErrors, NegativeValue) {
  InputError e = config_error(kBase + "PAUSE_TIME -5\n");
  EXPECT_EQ(e.line(), 7);
  EXPECT_TRUE(mentions(e, "negative value -5 makes no sense"));
  e = config_error(kBase + "\nFAST_RECOVERY_TIMES -1\n");
  EXPECT_EQ(e.line(), 8);
  EXPECT_TRUE(mentions(e, "FAST_RECOVERY_TIMES: negative value"));
}

TEST(HpccConfigErrors, OutOfRangeValue) {
  InputError e = config_error(kBase + "ERROR_RATE_PER_LINK 1\n");
  EXPECT_EQ(e.line(), 7);
  EXPECT_TRUE(mentions(e, "outside [0, 1)"));
  e = config_error(kBase + "PACKET_PAYLOAD_SIZE 0\n");
  EXPECT_TRUE(mentions(e, "must be at least 1"));
  e = config_error(kBase + "L2_CHUNK_SIZE 4294967296\n");
  EXPECT_TRUE(mentions(e, "too large"));
}

TEST(HpccConfigErrors, FlagNotZeroOrOne) {
  const InputError e = config_error(kBase + "HAS_WIN 2\n");
  EXPECT_EQ(e.line(), 7);
  EXPECT_TRUE(mentions(e, "HAS_WIN: \"2\" is not 0 or 1"));
  EXPECT_TRUE(mentions(config_error(kBase + "NS_TRUNCATION yes\n"), "NS_TRUNCATION: \"yes\" is not 0 or 1"));
}

TEST(HpccConfigErrors, BadDataRate) {
  InputError e = config_error(kBase + "MIN_RATE 100Mbs\n");
  EXPECT_EQ(e.line(), 7);
  EXPECT_TRUE(mentions(e, "MIN_RATE: \"100Mbs\" has an unknown rate unit"));
  EXPECT_TRUE(mentions(e, "fix: write a rate such as 100Gbps"));
  e = config_error(kBase + "DATA_RATE fast\n");
  EXPECT_TRUE(mentions(e, "DATA_RATE: \"fast\" is not a data rate"));
  e = config_error(kBase + "LINK_DELAY 1sec\n");
  EXPECT_TRUE(mentions(e, "unknown time unit"));
}

TEST(HpccConfigErrors, EcnRateMissingFromOneMap) {
  const InputError e = config_error(
      "CC_MODE 3\nL2_ACK_INTERVAL 1\n"
      "KMAX_MAP 2 100000000000 1600 400000000000 6400\n"
      "KMIN_MAP 1 100000000000 400\n"
      "PMAX_MAP 2 100000000000 0.2 400000000000 0.2\n");
  EXPECT_EQ(e.line(), 4);
  EXPECT_TRUE(mentions(e, "rate 400000000000 has ECN thresholds in KMAX_MAP but not in KMIN_MAP"));
  // A map that is absent altogether: reported where the rate was given.
  const InputError e2 = config_error("CC_MODE 3\nL2_ACK_INTERVAL 1\nKMAX_MAP 1 100000000000 1600\n");
  EXPECT_EQ(e2.line(), 3);
  EXPECT_TRUE(mentions(e2, "not in KMIN_MAP"));
}

TEST(HpccConfigErrors, EcnMapMalformed) {
  InputError e = config_error(kBase + "KMIN_MAP 2 100000000000 400 100000000000 400\n");
  EXPECT_EQ(e.line(), 7);
  EXPECT_TRUE(mentions(e, "rate 100000000000 appears twice"));
  e = config_error(kBase + "KMIN_MAP 2 100000000000 400\n");
  EXPECT_EQ(e.line(), 7);
  EXPECT_TRUE(mentions(e, "KMIN_MAP says 2 rates but lists 1 before the end of the input"));
  // A count one too high: the next key stands where the last rate should (it blamed the next key's value).
  e = config_error(kBase + "KMAX_MAP 3 25000000000 400 100000000000 1600\nKMIN_MAP 2 25000000000 100 100000000000 400\n");
  EXPECT_EQ(e.line(), 7);
  EXPECT_TRUE(mentions(e, "KMAX_MAP says 3 rates but lists 2 before the key KMIN_MAP"));
  EXPECT_TRUE(mentions(e, "fix: make the count after KMAX_MAP the number of rate/value pairs that follow it"));
  // A count one too low: the pair left over stands where the next key should.
  e = config_error(kBase + "KMAX_MAP 1 25000000000 400 100000000000 1600\n");
  EXPECT_EQ(e.line(), 7);
  EXPECT_TRUE(mentions(e, "\"100000000000\" where a key should be: KMAX_MAP (line 7) lists more rate/value pairs than its count says"));
  e = config_error(kBase + "KMAX_MAP 2 25000000000 400\n");
  EXPECT_TRUE(mentions(e, "KMAX_MAP says 2 rates but lists 1 before the end of the input"));
  e = config_error(kBase + "KMAX_MAP 1\nKMIN_MAP 1 100000000000 400\n");
  EXPECT_TRUE(mentions(e, "KMAX_MAP says 1 rate but lists 0 before the key KMIN_MAP"));
  // A rate with no value after it: the pair's value is what is missing.
  e = config_error(kBase + "KMIN_MAP 1 100000000000\n");
  EXPECT_TRUE(mentions(e, "missing value for KMIN_MAP"));
  e = config_error(kBase + "PMAX_MAP 1 100000000000\n1.5\n");
  EXPECT_EQ(e.line(), 8);
  EXPECT_TRUE(mentions(e, "outside [0, 1]"));
  e = config_error(kBase + "KMIN_MAP 1 100000000000 2000\n");
  EXPECT_EQ(e.line(), 7);
  EXPECT_TRUE(mentions(e, "KMIN 2000 is above KMAX 1600"));
}

TEST(HpccConfigErrors, AckIntervalZero) {
  std::string p;
  InputError e = config_error("CC_MODE 3\nL2_ACK_INTERVAL 0\n", &p);
  EXPECT_EQ(e.file(), p);
  EXPECT_EQ(e.line(), 2);
  EXPECT_TRUE(mentions(e, "no flow ever finishes (fix: set L2_ACK_INTERVAL 1)"));
  e = config_error("CC_MODE 3\n");
  EXPECT_EQ(e.line(), 0);
  EXPECT_TRUE(mentions(e, p + ": L2_ACK_INTERVAL is not set"));
}

TEST(HpccConfigErrors, ChunkSizeZeroWithAckInterval) {
  const InputError e = config_error("CC_MODE 3\nL2_CHUNK_SIZE 0\nL2_ACK_INTERVAL 2\n");
  EXPECT_EQ(e.line(), 2);
  EXPECT_TRUE(mentions(e, "divides by zero"));
}

TEST(HpccConfigErrors, RateAiMissingWithDcqcn) {
  InputError e = config_error("L2_ACK_INTERVAL 1\n\nCC_MODE 1\nRATE_HAI 200Mb/s\n");
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(mentions(e, "RATE_AI is not set but CC_MODE 1 needs it"));
  e = config_error("L2_ACK_INTERVAL 1\nCC_MODE 3\n");  // HPCC's additive increase is RATE_AI
  EXPECT_EQ(e.line(), 2);
  EXPECT_TRUE(mentions(e, "RATE_AI is not set but CC_MODE 3 needs it"));
  e = config_error("L2_ACK_INTERVAL 1\nRATE_AI 20Mb/s\n");  // CC_MODE 1 by default
  EXPECT_EQ(e.line(), 0);
  EXPECT_TRUE(mentions(e, "RATE_HAI is not set"));
}

TEST(HpccConfigErrors, MissingFile) {
  const InputError e = input_error([] { read_hpcc_config("/nonexistent/config.txt"); });
  EXPECT_EQ(e.file(), "/nonexistent/config.txt");
  EXPECT_EQ(e.line(), 0);
  EXPECT_TRUE(mentions(e, "cannot open"));
}

TEST(ConfigOverrides, AppliedAfterTheFile) {
  const std::string p = write_file(test_dir() / "config.txt", kBase + "L2_ACK_INTERVAL 0\n");
  const SimConfig c = read_hpcc_config(
      p, {{"L2_ACK_INTERVAL", "1"}, {"CC_MODE", "3"}, {"KMAX_MAP", "1 100000000000 3200"}, {"LINK_DOWN", "5 1 2"}});
  EXPECT_EQ(c.l2_ack_interval, 1u);  // the file's 0 would be an error; the override comes first
  EXPECT_EQ(c.cc_mode, 3);
  EXPECT_EQ(c.ecn.at(100'000'000'000).kmax_bytes, 3'200'000u);
  EXPECT_EQ(c.link_down_b, 2u);
  ASSERT_EQ(c.raw.size(), 13u);
  EXPECT_EQ(c.raw[9], (std::pair<std::string, std::string>{"L2_ACK_INTERVAL", "1"}));
  EXPECT_EQ(c.raw[12], (std::pair<std::string, std::string>{"LINK_DOWN", "5 1 2"}));
}

TEST(ConfigOverrides, ErrorsNameTheCommandLine) {
  const std::string p = write_file(test_dir() / "config.txt", kBase);
  InputError e = input_error([&] { read_hpcc_config(p, {{"CC_MOD", "3"}}); });
  EXPECT_EQ(e.file(), "command line");
  EXPECT_EQ(e.line(), 0);
  EXPECT_TRUE(mentions(e, "command line: unknown key \"CC_MOD\" (fix: did you mean CC_MODE?)"));
  // Regression: a key like none of them was given the closest anyway ("NOPE": did you mean SEED?).
  e = input_error([&] { read_hpcc_config(p, {{"NOPE", "1"}}); });
  EXPECT_TRUE(mentions(e, "command line: unknown key \"NOPE\" (fix: use a key of HPCC ns-3's config file"));
  e = input_error([&] { read_hpcc_config(p, {{"BUFER_SIZE", "4"}}); });
  EXPECT_TRUE(mentions(e, "(fix: did you mean BUFFER_SIZE?)"));
  // A unit where the reference's file has none: said so, with the number alone as the fix.
  e = input_error([&] { read_hpcc_config(p, {{"BUFFER_SIZE", "4MB"}}); });
  EXPECT_TRUE(mentions(e, "BUFFER_SIZE: \"4MB\" is not a number: values are written without a unit (fix: write "
                          "the number alone, in MiB: BUFFER_SIZE is read in MiB (docs/network-model.md lists each key's unit))"));
  e = input_error([&] { read_hpcc_config(p, {{"PACKET_PAYLOAD_SIZE", "9KB"}}); });
  EXPECT_TRUE(mentions(e, "\"9KB\" is not a number: values are written without a unit (fix: write the number alone, in bytes:"));
  // The fix names the key's unit, a count of samples as well as a time (it once said "its own unit").
  e = input_error([&] { read_hpcc_config(p, {{"WORMHOLE_WINDOW", "2ms"}}); });
  EXPECT_TRUE(mentions(e, "(fix: write the number alone, in samples: WORMHOLE_WINDOW is read in samples"));
  e = input_error([&] { read_hpcc_config(p, {{"RTO_US", "10ms"}}); });
  EXPECT_TRUE(mentions(e, "(fix: write the number alone, in µs: RTO_US is read in µs"));
  // A key of no unit is not said to have one.
  e = input_error([&] { read_hpcc_config(p, {{"SEED", "5x"}}); });
  EXPECT_TRUE(mentions(e, "SEED: \"5x\" is not a whole number (fix: give a non-negative whole number)"));
  e = input_error([&] { read_hpcc_config(p, {{"U_TARGET", "95%"}}); });  // not a unit: no hint to write 95
  EXPECT_TRUE(mentions(e, "U_TARGET: \"95%\" is not a number (fix: give a decimal number such as 0.5)"));
  e = input_error([&] { read_hpcc_config(p, {{"SEDE", "1"}}); });  // two letters swapped
  EXPECT_TRUE(mentions(e, "(fix: did you mean SEED?)"));
  e = input_error([&] { read_hpcc_config(p, {{"CC_MODE", "3 4"}}); });
  EXPECT_TRUE(mentions(e, "command line: CC_MODE: extra value \"4\""));
  e = input_error([&] { read_hpcc_config(p, {{"HAS_WIN", ""}}); });
  EXPECT_TRUE(mentions(e, "command line: missing value for HAS_WIN"));
  e = input_error([&] { read_hpcc_config(p, {{"L2_ACK_INTERVAL", "0"}}); });
  EXPECT_TRUE(mentions(e, "command line: L2_ACK_INTERVAL is 0"));
}

TEST(ConfigPaths, NextToConfigWhenTopologyIsThere) {
  const fs::path d = test_dir();
  write_file(d / "run" / "topo.txt", "1 1 0\n0\n");
  const std::string abs = (d / "elsewhere" / "flow.txt").string();
  const SimConfig c = read_hpcc_config(write_file(
      d / "run" / "config.txt", kBase + "TOPOLOGY_FILE topo.txt\nFLOW_FILE " + abs +
                                    "\nTRACE_FILE sub/trace.txt\nFCT_OUTPUT_FILE out/fct.txt\nQLEN_MON_FILE q.txt\n"));
  EXPECT_EQ(c.topology_file, (d / "run" / "topo.txt").string());
  EXPECT_EQ(c.flow_file, abs);  // absolute paths are kept
  EXPECT_EQ(c.trace_file, (d / "run" / "sub/trace.txt").string());
  EXPECT_EQ(c.fct_output_file, (d / "run" / "out/fct.txt").string());
  EXPECT_EQ(c.pfc_output_file, (d / "run" / "pfc.txt").string());  // the default too
  EXPECT_EQ(c.qlen_mon_file, (d / "run" / "q.txt").string());
  EXPECT_EQ(c.trace_output_file, "");
  EXPECT_FALSE(fs::exists(d / "run" / "out"));  // output folders are not created
}

TEST(ConfigPaths, WorkingDirectoryOtherwise) {
  const fs::path d = test_dir();
  write_file(d / "flow.txt", "0\n");  // present next to the config, but TOPOLOGY_FILE decides
  const SimConfig c = read_hpcc_config(
      write_file(d / "config.txt", kBase + "TOPOLOGY_FILE topo_not_here.txt\nFLOW_FILE flow.txt\nFCT_OUTPUT_FILE out/fct.txt\n"));
  EXPECT_EQ(c.topology_file, "topo_not_here.txt");
  EXPECT_EQ(c.flow_file, "flow.txt");
  EXPECT_EQ(c.fct_output_file, "out/fct.txt");
}

TEST(DataRate, KnownAnswers) {
  EXPECT_EQ(parse_data_rate("100Gbps"), 100'000'000'000u);
  EXPECT_EQ(parse_data_rate("20Mb/s"), 20'000'000u);
  EXPECT_EQ(parse_data_rate("1000Mb/s"), 1'000'000'000u);
  EXPECT_EQ(parse_data_rate("2400Gbps"), 2'400'000'000'000u);
  EXPECT_EQ(parse_data_rate("25GB/s"), 200'000'000'000u);
  EXPECT_EQ(parse_data_rate("1Bps"), 8u);
  EXPECT_EQ(parse_data_rate("10kbps"), 10'000u);
  EXPECT_EQ(parse_data_rate("10Kb/s"), 10'000u);
  EXPECT_EQ(parse_data_rate("1Tbps"), 1'000'000'000'000u);
  EXPECT_EQ(parse_data_rate("1Kib/s"), 1024u);
  EXPECT_EQ(parse_data_rate("1KiB/s"), 8192u);
  EXPECT_EQ(parse_data_rate("3Mib/s"), 3u * 1024 * 1024);
  EXPECT_EQ(parse_data_rate("1GiB/s"), 8ull << 30);
  EXPECT_EQ(parse_data_rate("100000000000"), 100'000'000'000u);
  EXPECT_EQ(parse_data_rate("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(parse_data_rate("2.5Gbps"), 2'500'000'000u);
  EXPECT_EQ(parse_data_rate("0.1Gbps"), 100'000'000u);  // exact, no binary rounding
  EXPECT_EQ(parse_data_rate("0.3Gbps"), 300'000'000u);
  EXPECT_EQ(parse_data_rate("12.5"), 12u);
}

TEST(DataRate, Malformed) {
  for (const char* s : {"", "Gbps", "abc", "100Gbit", "100gbps", "-5Gbps", "1e9bps", "100Gbps/", ".Gbps",
                        "20000000000Gbps", "18446744073709551616"}) {
    EXPECT_THROW(parse_data_rate(s), std::invalid_argument) << s;
  }
}

TEST(ParseTime, KnownAnswers) {
  EXPECT_EQ(parse_time("0.001ms"), 1'000'000);
  EXPECT_EQ(parse_time("0.000025ms"), 25'000);
  EXPECT_EQ(parse_time("0.0005ms"), 500'000);
  EXPECT_EQ(parse_time("1000ns"), 1'000'000);
  EXPECT_EQ(parse_time("1us"), 1'000'000);
  EXPECT_EQ(parse_time("2s"), 2 * kSec);
  EXPECT_EQ(parse_time("2"), 2 * kSec);
  EXPECT_EQ(parse_time("7ps"), 7);
  EXPECT_EQ(parse_time("0.4ps"), 0);
  EXPECT_EQ(parse_time("0.5ps"), 1);  // nearest ps, halves up
  EXPECT_EQ(parse_time("1.0000000000006s"), kSec + 1);
  EXPECT_EQ(parse_time("1e-6s"), 1'000'000);
  EXPECT_EQ(parse_time("2.5E3ns"), 2'500'000);
  EXPECT_EQ(parse_time("-1ns"), -1000);
  EXPECT_EQ(parse_time("9223372036854775807ps"), INT64_MAX);
}

TEST(ParseTime, Malformed) {
  for (const char* s : {"", "ms", "abc", "1sec", "1min", "1 s", "1..0s", "1e10s", "9223372036854775808ps"}) {
    EXPECT_THROW(parse_time(s), std::invalid_argument) << s;
  }
}

TEST(HpccConfig, CcModeByName) {
  // Names are ours; the reference takes only numbers. Case does not matter.
  const fs::path d = test_dir();
  const std::string rest = "RATE_AI 50Mb/s\nRATE_HAI 100Mb/s\nL2_ACK_INTERVAL 1\n";
  for (auto [name, mode] : {std::pair{"dcqcn", 1}, {"HPCC", 3}, {"timely", 7}, {"dctcp", 8}, {"hpcc-pint", 10}})
    EXPECT_EQ(read_hpcc_config(write_file(d / "config.txt", std::string("CC_MODE ") + name + "\n" + rest)).cc_mode, mode)
        << name;
  const InputError e = config_error("L2_ACK_INTERVAL 1\nCC_MODE hpcx\n");
  EXPECT_EQ(e.line(), 2);
  EXPECT_TRUE(mentions(e, "unknown congestion control \"hpcx\""));
  EXPECT_TRUE(mentions(e, "dcqcn (1), hpcc (3), timely (7), dctcp (8), hpcc-pint (10)"));
}
