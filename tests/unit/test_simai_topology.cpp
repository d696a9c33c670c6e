// SimAI topology reader and the HPCC / SimAI writers (docs/workloads.md §2): every shipped file, the
// header variants, one test per rejected input, and exact round trips.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "wormhole/core/input_error.h"
#include "wormhole/core/input_text.h"
#include "wormhole/topo/simai_topology.h"

using namespace wh;
namespace fs = std::filesystem;

namespace {

const std::string kSimai = std::string(WH_TEST_DATA) + "/simai";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// `text` as a file in a fresh folder per test.
std::string temp_file(const std::string& text, const std::string& name = "topo") {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path d = fs::path(::testing::TempDir()) / "wh_simai_topology_tests" /
                     (std::string(info->test_suite_name()) + "." + info->name());
  fs::create_directories(d);
  const fs::path p = d / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

/// Reads `text` as a SimAI topology and returns the error it must raise; checks it names the file.
InputError simai_error(const std::string& text) {
  const std::string p = temp_file(text);
  try {
    read_simai_topology(p);
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), p);
    EXPECT_EQ(std::string(e.what()).rfind(p, 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("(fix: "), std::string::npos) << e.what();
    return e;
  }
  ADD_FAILURE() << "no InputError thrown";
  return InputError("", -1, "", "");
}

::testing::AssertionResult mentions(const InputError& e, const std::string& fragment) {
  if (std::string(e.what()).find(fragment) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << e.what() << "\" lacks \"" << fragment << "\"";
}

void expect_same_links(const Topology& a, const Topology& b) {
  ASSERT_EQ(a.num_nodes, b.num_nodes);
  EXPECT_EQ(a.is_switch, b.is_switch);
  ASSERT_EQ(a.links.size(), b.links.size());
  for (size_t i = 0; i < a.links.size(); ++i) {
    SCOPED_TRACE("link " + std::to_string(i));
    EXPECT_EQ(a.links[i].a, b.links[i].a);
    EXPECT_EQ(a.links[i].b, b.links[i].b);
    EXPECT_EQ(a.links[i].rate_bps, b.links[i].rate_bps);
    EXPECT_EQ(a.links[i].delay, b.links[i].delay);
    EXPECT_EQ(a.links[i].error_rate, b.links[i].error_rate);
  }
}

// Two servers of 2 GPUs (0-3), NVSwitches 4 and 5, one switch 6. Tests append or replace lines.
const std::string kHeader = "7 2 2 1 6 H100\n4 5 6 \n";
const std::string kLinks =
    "0 4 900Gbps 0.000025ms 0\n1 4 900Gbps 0.000025ms 0\n2 5 900Gbps 0.000025ms 0\n"
    "3 5 900Gbps 0.000025ms 0\n0 6 400Gbps 0.0005ms 0\n2 6 400Gbps 0.0005ms 0\n";

}  // namespace

TEST(SimaiTopology, ShippedFiles) {
  struct Case {
    const char* file;
    uint32_t n, gpus, nvs, sw, l;
    const char* gpu_type;
    uint64_t nvlink_bps, nic_bps;
    Time nic_delay;
  };
  const Case cases[] = {
      {"/SimAI/astra-sim-alibabacloud/inputs/topo/Rail_Opti_SingleToR_16g_8gps_200Gbps_H20", 34, 16, 2, 16, 96, "H20",
       900'000'000'000, 200'000'000'000, 1'000'000},
      {"/SimAI@pr288/Spectrum-X_8g_8gps_100Gbps_A100", 81, 8, 1, 72, 528, "A100", 2'400'000'000'000, 100'000'000'000, 500'000},
      {"/SimAI@pr288/Spectrum-X_8g_8gps_400Gbps_A100", 81, 8, 1, 72, 528, "A100", 2'400'000'000'000, 400'000'000'000, 500'000},
      {"/SimAI@pr288/Spectrum-X_16g_8gps_100Gbps_A100", 90, 16, 2, 72, 544, "A100", 2'400'000'000'000, 100'000'000'000, 500'000},
      {"/SimAI@pr288/Spectrum-X_16g_8gps_400Gbps_A100", 90, 16, 2, 72, 544, "A100", 2'400'000'000'000, 400'000'000'000, 500'000},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    const std::string path = kSimai + c.file;
    const SimaiTopology s = read_simai_topology(path);
    EXPECT_EQ(s.topo.file, path);
    EXPECT_EQ(s.topo.num_nodes, c.n);
    EXPECT_EQ(s.gpus, c.gpus);
    EXPECT_EQ(s.gpus_per_server, 8u);
    EXPECT_EQ(s.servers(), c.gpus / 8);
    EXPECT_EQ(s.nvswitches, c.nvs);
    EXPECT_EQ(s.switches, c.sw);
    EXPECT_EQ(s.topo.num_switches(), c.nvs + c.sw);
    EXPECT_EQ(s.gpu_type, c.gpu_type);
    ASSERT_EQ(s.topo.links.size(), c.l);
    // NVSwitches are the ids right after the GPUs; every switch is a node after them.
    for (uint32_t v = 0; v < c.n; ++v) {
      EXPECT_EQ(s.topo.is_nvswitch[v], v >= c.gpus && v < c.gpus + c.nvs) << v;
      EXPECT_EQ(s.topo.is_switch[v], v >= c.gpus) << v;
    }
    // Line 3: GPU 0 - its NVSwitch (NVLink, 25 ns); line 4: GPU 0 - its rail-0 leaf.
    const TopoLink& nv = s.topo.links[0];
    EXPECT_EQ(nv.line, 3);
    EXPECT_EQ(nv.a, 0u);
    EXPECT_EQ(nv.b, c.gpus);
    EXPECT_EQ(nv.rate_bps, c.nvlink_bps);
    EXPECT_EQ(nv.delay, 25'000);
    const TopoLink& nic = s.topo.links[1];
    EXPECT_EQ(nic.b, c.gpus + c.nvs);
    EXPECT_EQ(nic.rate_bps, c.nic_bps);
    EXPECT_EQ(nic.delay, c.nic_delay);
    EXPECT_EQ(s.topo.links.back().line, static_cast<int>(c.l) + 2);
    EXPECT_EQ(s.topo.links.back().rate_bps, 400'000'000'000u);

    // Writing it back gives the file byte for byte; the HPCC form reads back to the same links.
    std::ostringstream simai;
    write_simai_topology(s, simai);
    EXPECT_EQ(simai.str(), slurp(path));
    std::ostringstream hpcc;
    write_hpcc_topology(s.topo, hpcc);
    expect_same_links(read_topology(temp_file(hpcc.str(), "topology.txt")), s.topo);
  }
}

TEST(SimaiTopology, HeaderVariants) {
  // 7 tokens: the extra integer is accepted and ignored; line breaks after line 1 do not matter.
  const SimaiTopology s = read_simai_topology(temp_file("7 2 2 1 6 H20 3\n4\n5\n6\n" + kLinks));
  EXPECT_EQ(s.gpus, 4u);
  EXPECT_EQ(s.gpus_per_server, 2u);
  EXPECT_EQ(s.nvswitches, 2u);
  EXPECT_EQ(s.switches, 1u);
  EXPECT_EQ(s.gpu_type, "H20");
  EXPECT_TRUE(s.topo.is_nvswitch[5]);
  EXPECT_FALSE(s.topo.is_nvswitch[6]);
  EXPECT_TRUE(s.topo.is_switch[6]);
  EXPECT_EQ(s.topo.links[4].line, 9);
  // Tabs, CR LF and a missing final newline.
  const SimaiTopology t = read_simai_topology(temp_file("7\t2 2 1 6 H100\r\n4 5 6\r\n" + kLinks.substr(0, kLinks.size() - 1)));
  EXPECT_EQ(t.topo.links.size(), 6u);
  // 3 tokens: the HPCC format (the reference k=4 fat tree), hosts 0..15 are the GPUs.
  const SimaiTopology h = read_simai_topology(WH_TEST_DATA "/refruns/hpcc-ring16-fattree-k4-1MB/topology.txt");
  EXPECT_EQ(h.gpus, 16u);
  EXPECT_EQ(h.gpus_per_server, 1u);
  EXPECT_EQ(h.nvswitches, 0u);
  EXPECT_EQ(h.switches, 20u);
  EXPECT_EQ(h.topo.links.size(), 48u);
  EXPECT_EQ(h.gpu_type, "");
}

TEST(SimaiTopologyErrors, HpccFileWithSwitchBeforeHosts) {
  // The HPCC bundled example has switch 0 and hosts 1..65: SimAI needs GPUs 0..G-1.
  try {
    read_simai_topology(WH_TEST_DATA "/refruns/hpcc-bundled-example/topology.txt");
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_TRUE(mentions(e, "switch 0 has an id below the GPU count 65"));
  }
}

TEST(SimaiTopologyErrors, MalformedHeader) {
  InputError e = simai_error("7 2 2 1 6\n4 5 6\n" + kLinks);
  EXPECT_EQ(e.line(), 1);
  EXPECT_TRUE(mentions(e, "malformed header: 5 tokens on line 1 (6 or 7 expected"));
  e = simai_error("\n7 2 2 1 6 H100 1 2\n");
  EXPECT_EQ(e.line(), 2);
  EXPECT_TRUE(mentions(e, "8 tokens"));
  e = simai_error("7 2 two 1 6 H100\n");
  EXPECT_TRUE(mentions(e, "nvswitch_num \"two\" is not a whole number"));
  e = simai_error("7 2 2 1 6 H100 x\n");
  EXPECT_TRUE(mentions(e, "the 7th token \"x\" is not an integer"));
  e = simai_error("7 0 2 1 6 H100\n");
  EXPECT_TRUE(mentions(e, "gpus_per_server is 0"));
  e = simai_error("");
  EXPECT_EQ(e.line(), 1);
  EXPECT_TRUE(mentions(e, "empty file"));
}

TEST(SimaiTopologyErrors, CountsDisagree) {
  InputError e = simai_error("7 2 6 2 6 H100\n");
  EXPECT_EQ(e.line(), 1);
  EXPECT_TRUE(mentions(e, "6 NVSwitches + 2 switches exceed node_num 7"));
  e = simai_error("3 2 2 1 0 H100\n0 1 2\n");
  EXPECT_TRUE(mentions(e, "no GPUs"));
  e = simai_error("7 3 2 1 6 H100\n");
  EXPECT_TRUE(mentions(e, "4 GPUs (node_num - nvswitch_num - switch_num) are not a whole number of servers of 3 GPUs"));
}

TEST(SimaiTopologyErrors, SwitchIds) {
  InputError e = simai_error("7 2 2 1 6 H100\n4 5\n3\n");
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(mentions(e, "switch id 3 is out of range (fix: switch ids are 4..6 (GPUs are 0..3))"));
  e = simai_error("7 2 2 1 6 H100\n4 4 6\n");
  EXPECT_EQ(e.line(), 2);
  EXPECT_TRUE(mentions(e, "NVSwitch id 4 is listed twice"));
  e = simai_error("7 2 2 1 6 H100\n4 5 x\n");
  EXPECT_TRUE(mentions(e, "switch id \"x\" is not a whole number"));
  e = simai_error("7 2 2 1 6 H100\n4 5\n");
  EXPECT_EQ(e.line(), 1);
  EXPECT_TRUE(mentions(e, "the file ends after 2 ids"));
}

TEST(SimaiTopologyErrors, LinkCount) {
  InputError e = simai_error("7 2 2 1 7 H100\n4 5 6 \n" + kLinks);
  EXPECT_EQ(e.line(), 1);
  EXPECT_TRUE(mentions(e, "the header declares 7 links but only 6 link lines follow"));
  e = simai_error("7 2 2 1 5 H100\n4 5 6 \n" + kLinks);
  EXPECT_EQ(e.line(), 8);
  EXPECT_TRUE(mentions(e, "text after the 5 links the header declares"));
  e = simai_error(kHeader + kLinks.substr(0, kLinks.size() - 4) + "\n");
  EXPECT_EQ(e.line(), 8);
  EXPECT_TRUE(mentions(e, "incomplete link line"));
}

TEST(SimaiTopologyErrors, BadLinkLines) {
  const std::string five = kLinks.substr(0, kLinks.rfind("2 6"));  // links on lines 3..7
  struct Case { const char* line; const char* message; };
  const Case cases[] = {
      {"2 9 400Gbps 0.0005ms 0", "link endpoint 9 is out of range (fix: node ids are 0..6)"},
      {"2 x 400Gbps 0.0005ms 0", "link endpoint \"x\" is not a whole number"},
      {"6 6 400Gbps 0.0005ms 0", "self-link 6 - 6"},
      {"2 6 400Gbit 0.0005ms 0", "bad link rate: \"400Gbit\" has an unknown rate unit"},
      {"2 6 0Gbps 0.0005ms 0", "link rate 0Gbps is 0"},
      {"2 6 400Gbps 5min 0", "bad link delay: \"5min\" has an unknown time unit"},
      {"2 6 400Gbps -1ns 0", "negative link delay -1ns"},
      {"2 6 400Gbps 0.0005ms 1", "bad error rate \"1\""},
  };
  for (const Case& c : cases) {
    const InputError e = simai_error(kHeader + five + c.line + "\n");
    EXPECT_EQ(e.line(), 8) << c.line;
    EXPECT_TRUE(mentions(e, c.message));
  }
}

TEST(SimaiTopologyErrors, DisconnectedGpu) {
  // GPU 3 has no link: its NVLink line is replaced by a second link of GPU 2.
  std::string links = kLinks;
  links.replace(links.find("3 5"), 3, "2 6");
  const InputError e = simai_error(kHeader + links);
  EXPECT_EQ(e.line(), 1);
  EXPECT_TRUE(mentions(e, "disconnected GPU 3"));
}

TEST(SimaiTopologyErrors, MissingFile) {
  EXPECT_THROW(read_simai_topology("/nonexistent/simai_topo"), InputError);
}

TEST(TopologyWriters, RateAndDelayStrings) {
  EXPECT_EQ(format_data_rate(400'000'000'000), "400Gbps");
  EXPECT_EQ(format_data_rate(2'000'000'000'000), "2Tbps");
  EXPECT_EQ(format_data_rate(2'880'000'000'000), "2880Gbps");
  EXPECT_EQ(format_data_rate(2'500'000'000), "2500Mbps");
  EXPECT_EQ(format_data_rate(1'234'567), "1234567bps");
  EXPECT_EQ(format_data_rate(0), "0bps");
  EXPECT_EQ(format_delay_ms(25'000), "0.000025ms");
  EXPECT_EQ(format_delay_ms(500'000), "0.0005ms");
  EXPECT_EQ(format_delay_ms(1'000'000), "0.001ms");
  EXPECT_EQ(format_delay_ms(0), "0ms");
  EXPECT_EQ(format_delay_ms(1), "0.000000001ms");
  EXPECT_EQ(format_delay_ms(3 * kSec + 7), "3000.000000007ms");
  EXPECT_EQ(format_delay_ms(-1'500'000'000), "-1.5ms");
  for (uint64_t r : {1ull, 999ull, 25'000'000'000ull, 123'456'789'012ull, 3'200'000'000'000ull})
    EXPECT_EQ(parse_data_rate(format_data_rate(r)), r);
  for (Time d : {Time(0), Time(1), Time(999), Time(25'000), Time(123'456'789), Time(10) * kSec + 1})
    EXPECT_EQ(parse_time(format_delay_ms(d)), d);
}

TEST(TopologyWriters, HpccRoundTrip) {
  // Every rate, delay and error rate survives write_hpcc_topology -> read_topology exactly,
  // parallel links and their order included.
  Topology t;
  t.num_nodes = 5;
  t.is_switch = {0, 1, 0, 1, 0};
  t.links = {{0, 1, 400'000'000'000, 1'000'000, 0, 0},       {1, 2, 1'234'567, 1, 0.001, 0},
             {2, 3, 2'500'000'000, 123'456'789, 1e-7, 0},    {1, 3, 800'000'000'000, 0, 0.3, 0},
             {1, 3, 100'000'000'000, 7 * kSec + 3, 0, 0},    {3, 4, 25'000'000'000, 25'000, 0.1, 0}};
  std::ostringstream out;
  write_hpcc_topology(t, out);
  EXPECT_EQ(out.str().substr(0, out.str().find('\n', 6) + 1), "5 2 6\n1 3\n");
  EXPECT_NE(out.str().find("\n0 1 400Gbps 0.001ms 0\n"), std::string::npos) << out.str();
  const Topology r = read_topology(temp_file(out.str(), "topology.txt"));
  expect_same_links(r, t);
  EXPECT_EQ(r.links[2].line, 5);
  // The reference topologies go through the writer unchanged too.
  for (const char* f : {"/refruns/hpcc-ring16-fattree-k4-1MB/topology.txt", "/refruns/hpcc-bundled-example/topology.txt",
                        "/hpcc-mix/fat.txt"}) {
    SCOPED_TRACE(f);
    const Topology orig = read_topology(std::string(WH_TEST_DATA) + f);
    std::ostringstream o;
    write_hpcc_topology(orig, o);
    expect_same_links(read_topology(temp_file(o.str(), "topology.txt")), orig);
  }
}

TEST(TopologyWriters, SimaiRoundTrip) {
  const SimaiTopology s = read_simai_topology(temp_file("7 2 2 1 6 H800 5\n4 5 6\n" + kLinks));
  std::ostringstream out;
  write_simai_topology(s, out);
  EXPECT_EQ(out.str(), "7 2 2 1 6 H800\n4 5 6 \n" + kLinks);
  const SimaiTopology r = read_simai_topology(temp_file(out.str(), "again"));
  expect_same_links(r.topo, s.topo);
  EXPECT_EQ(r.topo.is_nvswitch, s.topo.is_nvswitch);
  EXPECT_EQ(r.gpu_type, "H800");
}
