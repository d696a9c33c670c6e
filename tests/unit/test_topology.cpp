// topology.txt reader (docs/network-model.md §2): the shipped topologies and one test per rejected input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "wormhole/core/input_error.h"
#include "wormhole/io/topology.h"

using namespace wh;
namespace fs = std::filesystem;

namespace {

/// topology.txt with `text` in a fresh folder per test.
std::string topo_file(const std::string& text) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path d = fs::path(::testing::TempDir()) / "wh_topology_tests" /
                     (std::string(info->test_suite_name()) + "." + info->name());
  fs::create_directories(d);
  const fs::path p = d / "topology.txt";
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

/// Reads `text` as topology.txt and returns the error it must raise; checks it names the file.
InputError topo_error(const std::string& text) {
  const std::string p = topo_file(text);
  try {
    read_topology(p);
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), p);
    EXPECT_EQ(std::string(e.what()).rfind(p, 0), 0u) << e.what();
    return e;
  }
  ADD_FAILURE() << "no InputError thrown";
  return InputError("", -1, "", "");
}

::testing::AssertionResult mentions(const InputError& e, const std::string& fragment) {
  if (std::string(e.what()).find(fragment) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << e.what() << "\" lacks \"" << fragment << "\"";
}

// A star: switch 0, hosts 1 and 2. Tests append or replace lines.
const std::string kHeader = "3 1 2\n0\n";

}  // namespace

TEST(Topology, ShippedFiles) {
  struct Case { const char* file; uint32_t n, s, l; uint64_t rate0; Time delay0; };
  const Case cases[] = {
      {"/hpcc-mix/fat.txt", 376, 56, 480, 100'000'000'000, 1'000'000},
      {"/hpcc-mix/ali_32host_10rack.txt", 348, 28, 800, 25'000'000'000, 1'000'000},
      {"/hpcc-mix/topology.txt", 66, 1, 65, 100'000'000'000, 1'000'000},  // help text after the links
      {"/refruns/hpcc-ring16-fattree-k4-1MB/topology.txt", 36, 20, 48, 100'000'000'000, 1'000'000},
      {"/refruns/hpcc-ring16-fattree-k4-16MB/topology.txt", 36, 20, 48, 100'000'000'000, 1'000'000},
      {"/refruns/hpcc-incast16to1-leafspine64-1MB/topology.txt", 80, 16, 128, 100'000'000'000, 1'000'000},
      {"/refruns/hpcc-bundled-example/topology.txt", 66, 1, 65, 100'000'000'000, 1'000'000},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    const Topology t = read_topology(std::string(WH_TEST_DATA) + c.file);
    EXPECT_EQ(t.num_nodes, c.n);
    EXPECT_EQ(t.is_switch.size(), c.n);
    EXPECT_EQ(t.num_switches(), c.s);
    ASSERT_EQ(t.links.size(), c.l);
    EXPECT_EQ(t.links[0].rate_bps, c.rate0);
    EXPECT_EQ(t.links[0].delay, c.delay0);
    EXPECT_EQ(t.links[0].error_rate, 0.0);
    EXPECT_EQ(t.links[0].line, 3);
    EXPECT_EQ(t.links.back().line, static_cast<int>(c.l) + 2);
  }
  const Topology fat = read_topology(WH_TEST_DATA "/hpcc-mix/fat.txt");
  EXPECT_FALSE(fat.is_switch[319]);
  EXPECT_TRUE(fat.is_switch[320]);
  EXPECT_EQ(fat.links.back().rate_bps, 400'000'000'000u);
  const Topology ring = read_topology(WH_TEST_DATA "/refruns/hpcc-ring16-fattree-k4-1MB/topology.txt");
  EXPECT_EQ(ring.links[0].a, 0u);
  EXPECT_EQ(ring.links[0].b, 16u);
}

TEST(Topology, ParallelLinksAndTokenStream) {
  // Line breaks do not matter; a second link between the same pair is kept (its own interface).
  const Topology t = read_topology(topo_file("3 1\n3 0 0 1 100Gbps\n1000ns 0 0 1 25Gbps 1us 0.001\n2 0 400Gbps 0.000025ms 0 trailing text\n"));
  EXPECT_EQ(t.num_switches(), 1u);
  ASSERT_EQ(t.links.size(), 3u);
  EXPECT_EQ(t.links[0].line, 2);
  EXPECT_EQ(t.links[1].line, 3);
  EXPECT_EQ(t.links[1].rate_bps, 25'000'000'000u);
  EXPECT_DOUBLE_EQ(t.links[1].error_rate, 0.001);
  EXPECT_EQ(t.links[2].a, 2u);
  EXPECT_EQ(t.links[2].delay, 25'000);
  EXPECT_EQ(fs::path(t.file).filename(), "topology.txt");
  EXPECT_TRUE(t.warnings.empty());
}

TEST(Topology, RatesAndDelaysWithoutAUnitAreReadAsNs3ReadsThemWithAWarning) {
  // "0.001" is 1 ms (ns-3 reads a bare time as seconds), "100" 100 bit/s: a forgotten unit, said once a kind.
  // A bare 0 delay and a bare rate of a megabit or more are taken as meant.
  const std::string p = topo_file("3 1 4\n0\n1 0 100Gbps 0.001 0\n2 0 100 +2e-3 0\n1 0 100000000000 0 0\n2 0 25Gbps 1ns 0\n");
  const Topology t = read_topology(p);
  ASSERT_EQ(t.links.size(), 4u);
  EXPECT_EQ(t.links[0].delay, 1'000'000'000);  // ps
  EXPECT_EQ(t.links[1].rate_bps, 100u);
  EXPECT_EQ(t.links[1].delay, 2'000'000'000);
  EXPECT_EQ(t.links[2].rate_bps, 100'000'000'000u);
  ASSERT_EQ(t.warnings.size(), 2u);
  EXPECT_EQ(t.warnings[0], p + ":4: link rate 100 has no unit, so it is read as 100 bit/s, as ns-3 reads it; write the "
                               "unit: 100Gbps if that is meant, 100bps to keep it");
  EXPECT_EQ(t.warnings[1], p + ":3: link delay 0.001 has no unit, so it is read as 0.001 s, as ns-3 reads it (and 1 "
                               "more link line); write the unit: 0.001ms or 0.001us if that is meant, 0.001s to keep it");
  EXPECT_TRUE(read_topology(topo_file(kHeader + "1 0 100Gbps 0 0\n2 0 400000000000 1us 0\n")).warnings.empty());
}

TEST(TopologyErrors, MalformedHeader) {
  InputError e = topo_error("36 twenty 48\n");
  EXPECT_EQ(e.line(), 1);
  EXPECT_TRUE(mentions(e, "malformed header: switch count \"twenty\" is not a whole number"));
  e = topo_error("\n\n36 20\n");
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(mentions(e, "the file ends before the link count"));
  e = topo_error("3 4 0\n0 1 2 3\n");
  EXPECT_EQ(e.line(), 1);
  EXPECT_TRUE(mentions(e, "4 switches but only 3 nodes"));
  e = topo_error("");
  EXPECT_EQ(e.line(), 1);
}

TEST(TopologyErrors, SwitchIdOutOfRange) {
  const InputError e = topo_error("3 1 2\n\n3\n");
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(mentions(e, "switch id 3 is out of range (fix: node ids are 0..2)"));
}

TEST(TopologyErrors, SwitchIdRepeated) {
  const InputError e = topo_error("4 2 2\n1\n1\n");
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(mentions(e, "switch id 1 is listed twice"));
}

TEST(TopologyErrors, EndpointOutOfRange) {
  const InputError e = topo_error(kHeader + "0 1 100Gbps 1us 0\n0 7 100Gbps 1us 0\n");
  EXPECT_EQ(e.line(), 4);
  EXPECT_TRUE(mentions(e, "link endpoint 7 is out of range"));
  EXPECT_TRUE(mentions(topo_error(kHeader + "0 x 100Gbps 1us 0\n"), "link endpoint \"x\" is not a whole number"));
}

TEST(TopologyErrors, SelfLink) {
  const InputError e = topo_error(kHeader + "0 0 100Gbps 1us 0\n");
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(mentions(e, "self-link 0 - 0"));
}

// A link between two hosts is an ordinary link (an NVLink mesh without a switch runs in HPCC ns-3);
// HostModel.DirectHostToHostLink runs a flow over one.
TEST(Topology, LinkBetweenTwoHostsIsOrdinary) {
  const Topology t = read_topology(topo_file(kHeader + "0 1 100Gbps 1us 0\n1 2 100Gbps 1us 0\n"));
  ASSERT_EQ(t.links.size(), 2u);
  EXPECT_EQ(t.links[1].a, 1u);
  EXPECT_EQ(t.links[1].b, 2u);
  EXPECT_FALSE(t.is_switch[1]);
  EXPECT_FALSE(t.is_switch[2]);
}

TEST(TopologyErrors, BadRate) {
  InputError e = topo_error(kHeader + "0 1 100Gbit 1us 0\n");
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(mentions(e, "bad link rate: \"100Gbit\" has an unknown rate unit"));
  e = topo_error(kHeader + "0 1\n0Gbps 1us 0\n");  // a link over two lines: named at its first
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(mentions(e, "link rate 0Gbps is 0"));
}

TEST(TopologyErrors, BadDelay) {
  InputError e = topo_error(kHeader + "0 1 100Gbps 1 us 0\n");
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(mentions(e, "bad error rate \"us\""));  // the stray token shifts the fields
  e = topo_error(kHeader + "0 1 100Gbps 1sec 0\n");
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(mentions(e, "bad link delay: \"1sec\" has an unknown time unit"));
  e = topo_error(kHeader + "0 1 100Gbps -1ns 0\n");
  EXPECT_TRUE(mentions(e, "negative link delay -1ns"));
}

TEST(TopologyErrors, BadErrorRate) {
  for (const char* er : {"1", "1.5", "-0.1", "nan", "none"}) {
    const InputError e = topo_error(kHeader + "0 1 100Gbps 1us 0\n0 2 100Gbps 1us " + er + "\n");
    EXPECT_EQ(e.line(), 4) << er;
    EXPECT_TRUE(mentions(e, "it must be a number in [0, 1)")) << er;
  }
}

TEST(TopologyErrors, FewerLinkLinesThanDeclared) {
  InputError e = topo_error("4 1 3\n0\n0 1 100Gbps 1us 0\n0 2 100Gbps 1us 0\n");
  EXPECT_EQ(e.line(), 1);
  EXPECT_TRUE(mentions(e, "the header declares 3 links but only 2 link lines follow"));
  e = topo_error(kHeader + "0 1 100Gbps 1us 0\n0 2 100Gbps\n");
  EXPECT_EQ(e.line(), 4);
  EXPECT_TRUE(mentions(e, "incomplete link line"));
  // Regression: a link line without its error rate was blamed on the next line ("bad error rate").
  e = topo_error(kHeader + "0 1 100Gbps 1us\n0 2 100Gbps 1us 0\n");
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(mentions(e, "the line has 4 fields where a link has 5, so the links after it were read shifted"));
  EXPECT_TRUE(mentions(e, "incomplete link line"));  // what the shifted reading met at line 4
  // Regression: the shifted reading's own fix ("give a drop probability") was given beside the line's.
  e = topo_error(kHeader + "0 1 100Gbps\n0 2 100Gbps 1us 0\n");
  EXPECT_EQ(e.line(), 3);
  EXPECT_TRUE(mentions(e, "the line has 3 fields where a link has 5"));
  EXPECT_TRUE(mentions(e, "; then, at line 4: bad error rate \"2\""));
  EXPECT_FALSE(mentions(e, "drop probability"));
  EXPECT_EQ(std::string(e.what()).find("(fix:"), std::string(e.what()).rfind("(fix:"));  // one fix
}

TEST(TopologyErrors, DisconnectedHost) {
  const InputError e = topo_error("4 1 2\n0\n0 1 100Gbps 1us 0\n0 3 100Gbps 1us 0\n");
  EXPECT_EQ(e.line(), 1);
  EXPECT_TRUE(mentions(e, "disconnected host 2"));
}

TEST(TopologyErrors, MissingFile) {
  try {
    read_topology("/nonexistent/topology.txt");
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 0);
    EXPECT_TRUE(mentions(e, "/nonexistent/topology.txt: cannot open"));
  }
}
