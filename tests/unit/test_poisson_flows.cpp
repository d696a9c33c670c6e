// The generated Poisson background load (io/poisson_flows.h, scenario/background.h): known answers of
// the CDFs (means by hand, quantiles), the generator's statistics against their expectations within
// bounds of several standard deviations, determinism, and the errors of bad CDFs and [background] keys.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "wormhole/core/input_error.h"
#include "wormhole/io/poisson_flows.h"
#include "wormhole/scenario/background.h"
#include "wormhole/scenario/scenario.h"
#include "file_fixtures.h"

using namespace wh;
namespace fs = std::filesystem;

namespace {

fs::path test_dir() { return test::test_dir("wh_poisson_tests"); }
using test::input_error;
using test::write_file;




/// 16 hosts (node ids 0..15) of 100 Gb/s in 8 domains of two, WebSearch at full load.
PoissonLoad sixteen_hosts(Time end) {
  PoissonLoad p;
  p.cdf = shipped_flow_size_cdf("websearch");
  p.load = 1.0;
  p.begin = 0;
  p.end = end;
  for (uint32_t h = 0; h < 16; ++h) {
    p.hosts.push_back(h);
    p.host_bps.push_back(100'000'000'000ull);
    p.domain.push_back(h / 2);
  }
  p.seed = 7;
  return p;
}

bool same(const FlowSpec& a, const FlowSpec& b) {
  return a.src == b.src && a.dst == b.dst && a.size_bytes == b.size_bytes && a.start == b.start && a.pg == b.pg &&
         a.dport == b.dport;
}

}  // namespace

TEST(FlowSizeCdf, MeansByHand) {
  // WebSearch: Σ (x[i-1] + x[i]) / 2 · Δpercent / 100 over its 11 segments:
  // (5e3·15 + 15e3·5 + 25e3·10 + 40e3·10 + 65e3·13 + 140e3·7 + 600e3·10 + 1.5e6·10 + 3.5e6·10 + 7.5e6·7 + 20e6·3) / 100
  EXPECT_DOUBLE_EQ(shipped_flow_size_cdf("websearch").mean_bytes(), 1'711'250.0);
  // AliStorage2019: (2e3·22.93 + 6e3·46.28 + 12e3·11.4 + 24e3·9.86 + 48e3·3.06 + 96e3·3.24 + 192e3·0.76 +
  // 1128e3·2.47) / 100
  EXPECT_NEAR(shipped_flow_size_cdf("alistorage").mean_bytes(), 40'869.8, 1e-6);
  EXPECT_NEAR(shipped_flow_size_cdf("FB_Hadoop").mean_bytes(), 120'420.75, 1e-6);  // any case
  EXPECT_THROW(shipped_flow_size_cdf("imc10"), std::out_of_range);
}

TEST(FlowSizeCdf, QuantileInterpolatesLinearly) {
  const FlowSizeCdf c = shipped_flow_size_cdf("websearch");
  EXPECT_DOUBLE_EQ(c.quantile(0.0), 0.0);
  EXPECT_DOUBLE_EQ(c.quantile(0.15), 10'000.0);   // a point
  EXPECT_DOUBLE_EQ(c.quantile(0.175), 15'000.0);  // half way from (10000, 15) to (20000, 20)
  EXPECT_DOUBLE_EQ(c.quantile(0.985), 20'000'000.0);
  EXPECT_LT(c.quantile(std::nextafter(1.0, 0.0)), 30'000'000.0);
}

TEST(FlowSizeCdf, ShippedTablesMatchTheShippedFiles) {
  const std::map<std::string, std::string> files = {{"websearch", "WebSearch_distribution.txt"},
                                                    {"fb_hadoop", "FbHdp_distribution.txt"},
                                                    {"alistorage", "AliStorage2019.txt"}};
  EXPECT_EQ(shipped_flow_size_cdf_names().size(), files.size());
  for (const auto& [name, file] : files) {
    const FlowSizeCdf a = shipped_flow_size_cdf(name);
    const FlowSizeCdf b = read_flow_size_cdf(WH_SOURCE_DIR "/inputs/cdf/" + file);
    EXPECT_EQ(a.bytes, b.bytes) << name;
    EXPECT_EQ(a.percent, b.percent) << name;
  }
}

TEST(PoissonFlows, CountSizesLoadAndDestinationsMatchTheirExpectations) {
  // Expected flows λ = 16 hosts · T / (1,711,250 B · 8 / 100 Gb/s) = 1e6 for T = 8.556 s. The count of a
  // Poisson process over a fixed window is Poisson(λ): sd √λ = 1000, bound 5 sd (0.5 %).
  const Time T = Time(8.556 * double(kSec));
  const PoissonLoad p = sixteen_hosts(T);
  const double lambda = poisson_expected_flows(p);
  EXPECT_NEAR(lambda, 16 * (8.556 / (1'711'250.0 * 8 / 1e11)), 1e-6);
  const std::vector<FlowSpec> flows = generate_poisson_flows(p);
  const double n = double(flows.size());
  EXPECT_LT(std::abs(n - lambda), 5 * std::sqrt(lambda)) << n;

  // Mean size: the WebSearch sizes have sd ≈ 3.96 MB (E[X²] ≈ 1.86e13 B² from the segments' uniform
  // second moments), so the mean of 1e6 sizes has sd ≈ 3,960 B = 0.23 %; bound 1 % (> 4 sd). Whole bytes
  // (truncation) lower the mean by about 0.5 B.
  double bytes = 0;
  std::map<uint32_t, size_t> sent, received;
  Time last = 0;
  for (const FlowSpec& f : flows) {
    bytes += double(f.size_bytes);
    ++sent[f.src];
    ++received[f.dst];
    EXPECT_NE(f.src / 2, f.dst / 2);  // never within the sender's domain
    ASSERT_GE(f.start, last);         // sorted
    ASSERT_LT(f.start, T);
    ASSERT_GE(f.size_bytes, 1u);
    ASSERT_LE(f.size_bytes, 30'000'000u);
    EXPECT_EQ(f.pg, 3u);
    EXPECT_EQ(f.dport, 100u);
    last = f.start;
  }
  EXPECT_NEAR(bytes / n, 1'711'250.0, 0.01 * 1'711'250.0);
  // Offered load: the bytes over (16 · 100 Gb/s · T). Compound Poisson, sd of the total ≈ √(λ E[X²]) =
  // 0.25 % of it; bound 1.5 %.
  EXPECT_NEAR(bytes * 8 / (16 * 1e11 * 8.556), 1.0, 0.015);
  // Per host: Poisson(62,500) sent each (sd 250); destinations uniform over the 14 hosts of other domains,
  // so each host receives 1e6 / 16 on average too (sd about 250). Bound 2 % (5 sd).
  ASSERT_EQ(sent.size(), 16u);
  ASSERT_EQ(received.size(), 16u);
  for (const auto& [h, k] : sent) EXPECT_NEAR(double(k), lambda / 16, 0.02 * lambda / 16) << "host " << h;
  for (const auto& [h, k] : received) EXPECT_NEAR(double(k), lambda / 16, 0.02 * lambda / 16) << "host " << h;
}

TEST(PoissonFlows, DeterministicForASeedAndAPrefixOfALongerWindow) {
  const PoissonLoad p = sixteen_hosts(2 * kMs);
  const std::vector<FlowSpec> a = generate_poisson_flows(p), b = generate_poisson_flows(p);
  ASSERT_GT(a.size(), 100u);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_TRUE(same(a[i], b[i])) << i;

  PoissonLoad other = p;
  other.seed = 8;
  const std::vector<FlowSpec> c = generate_poisson_flows(other);
  EXPECT_FALSE(c.size() == a.size() && std::equal(a.begin(), a.end(), c.begin(), same));

  // A longer window appends flows: the first window's flows are the longer one's that start in it.
  PoissonLoad longer = p;
  longer.end = 5 * kMs;
  const std::vector<FlowSpec> d = generate_poisson_flows(longer);
  size_t k = 0;
  while (k < d.size() && d[k].start < p.end) ++k;
  ASSERT_EQ(k, a.size());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_TRUE(same(a[i], d[i])) << i;

  // Pinned: the transforms are ours over std::mt19937_64, whose output the standard fixes; a change of
  // the algorithm (or a platform whose log1p differs by more than rounding to the ps hides) shows here.
  EXPECT_EQ(a.front().src, 7u);
  EXPECT_EQ(a.front().dst, 12u);
  EXPECT_EQ(a.front().size_bytes, 2'323u);
  EXPECT_EQ(a.front().start, 8'800'125);
}

TEST(PoissonFlows, RejectsBadParameters) {
  PoissonLoad p = sixteen_hosts(kMs);
  p.load = 0;
  EXPECT_THROW(generate_poisson_flows(p), std::invalid_argument);
  p.load = 1.01;
  EXPECT_THROW(generate_poisson_flows(p), std::invalid_argument);
  p = sixteen_hosts(kMs);
  p.domain.assign(16, 0);  // one server: no destination outside it
  EXPECT_THROW(generate_poisson_flows(p), std::invalid_argument);
  p = sixteen_hosts(1000 * kSec);  // about 1.2e8 flows: refused before any is made
  EXPECT_THROW(generate_poisson_flows(p), std::invalid_argument);
}

TEST(FlowSizeCdf, FileErrorsNameTheLineAndAFix) {
  const fs::path d = test_dir();
  struct Case {
    std::string text;
    int line;
    std::string problem, fix;
  };
  const std::vector<Case> cases = {
      {"0 0\n10000 50\n5000 100\n", 3, "size 5000 does not increase", "strictly increasing size"},
      {"0 0\n10000 50\n20000 40\n30000 100\n", 3, "percent 40 does not increase", "strictly increase"},
      {"# sizes\n\n0 0\n10000 0.5\n20000 1\n", 5, "the last point's percent is 1, not 100", "multiply them by 100"},
      {"100 5\n200 100\n", 1, "first point's percent is 5, not 0", "percent 0"},
      {"0 0\n10000 fifty\n", 2, "expected two numbers", "SIZE_BYTES CUMULATIVE_PERCENT"},
      {"0 0\n5000000000 100\n", 2, "not below 2^32", "cap the distribution"},
      {"0 0\n", 1, "at least two points", "1000000 100"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string path = write_file(d / ("cdf" + std::to_string(i) + ".txt"), cases[i].text);
    const InputError e = input_error([&] { read_flow_size_cdf(path); });
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), cases[i].line) << e.what();
    EXPECT_NE(std::string(e.what()).find(cases[i].problem), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(cases[i].fix), std::string::npos) << e.what();
  }
  const InputError e = input_error([&] { read_flow_size_cdf((d / "missing.txt").string()); });
  EXPECT_NE(std::string(e.what()).find("cannot open the flow-size CDF"), std::string::npos);
}

namespace {

const std::string kSx16 = WH_TEST_DATA "/simai/SimAI@pr288/Spectrum-X_16g_8gps_400Gbps_A100";
const std::string kSimaiConf = WH_TEST_DATA "/simai/SimAI/astra-sim-alibabacloud/inputs/config/SimAI.conf";

/// A 16-GPU scenario (two servers of 8, 400 Gb/s NICs) with `background` as its [background] table's body.
std::string background_scenario(const fs::path& d, const std::string& background) {
  write_file(d / "workload.txt",
             "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 16\n1\n"
             "a -1 1000 ALLREDUCE 1048576 1000 NONE 0 1000 NONE 0 1\n");
  return write_file(d / "scenario.toml", "[topology]\nfile = \"" + kSx16 +
                                             "\"\n[workload]\nfile = \"workload.txt\"\n[network]\nconfig = \"" + kSimaiConf + "\"\nSEED = 5\n"
                                             "[background]\n" + background);
}

}  // namespace

TEST(Background, GeneratedFromAScenario) {
  const fs::path d = test_dir();
  const Scenario s = read_scenario(background_scenario(d, "cdf = \"WebSearch\"\nload = 0.5\nbegin = \"10us\"\n"
                                                           "duration = \"2ms\"\n"));
  EXPECT_EQ(s.background.cdf, "websearch");
  EXPECT_TRUE(s.background.cdf_shipped);
  EXPECT_EQ(s.background.end, 2010 * kUs);
  const SimaiTopology topo = build_topology(s);
  EXPECT_EQ(host_link_bps(topo.topo, 0), 400'000'000'000ull);  // the NIC, not the NVLink
  const Background b = make_background(s, topo, {}, nullptr);
  EXPECT_TRUE(b.generated);
  EXPECT_EQ(b.seed, 5u);  // the network's SEED
  EXPECT_EQ(b.hosts.size(), 16u);
  EXPECT_EQ(b.capacity_bps, 16 * 400'000'000'000ull);
  // λ = 16 · 2 ms / (1,711,250 · 8 / (0.5 · 400 Gb/s)) = 467.5 flows.
  EXPECT_NEAR(b.expected_flows, 467.5, 0.1);
  ASSERT_FALSE(b.flows.empty());
  for (const FlowSpec& f : b.flows) {
    EXPECT_NE(f.src / 8, f.dst / 8);  // never to the sender's own server
    EXPECT_GE(f.start, 10 * kUs);
    EXPECT_LT(f.start, 2010 * kUs);
  }
  // Explicit hosts and seed; a CDF file beside the scenario.
  write_file(d / "my.cdf", "# two sizes\n1000 0\n2000 100\n");
  const Scenario t = read_scenario(background_scenario(d, "cdf = \"my.cdf\"\nload = 0.1\nend = \"1ms\"\n"
                                                           "hosts = [0, 1, 8]\nseed = 3\n"));
  const Background c = make_background(t, build_topology(t), {}, nullptr);
  EXPECT_EQ(c.seed, 3u);
  EXPECT_EQ(c.mean_size_bytes, 1500.0);
  for (const FlowSpec& f : c.flows) {
    EXPECT_TRUE(f.src == 0 || f.src == 1 || f.src == 8);
    EXPECT_EQ(f.src == 8, f.dst != 8);  // 0 and 1 send to 8; 8 to 0 or 1
    EXPECT_GE(f.size_bytes, 1000u);
    EXPECT_LT(f.size_bytes, 2000u);
  }
}

TEST(Background, ScenarioErrorsNameTheLineAndAFix) {
  const fs::path d = test_dir();
  fs::create_directories(d);
  write_file(d / "flow.txt", "1\n0 9 3 100 1000 2.0\n");
  // [background] is line 8 of background_scenario; its first key line 9.
  struct Case {
    std::string body;
    int line;
    std::string problem, fix;
  };
  const std::vector<Case> cases = {
      {"cdf = \"websarch\"\nload = 0.3\nduration = \"1ms\"\n", 9, "neither a shipped CDF nor a file",
       "closest: websearch"},
      {"cdf = \"websearch\"\nload = 0\nduration = \"1ms\"\n", 10, "load 0 is not in (0, 1]", "load = 0.3"},
      {"cdf = \"websearch\"\nload = 1.5\nduration = \"1ms\"\n", 10, "load 1.5 is not in (0, 1]", "load = 0.3"},
      {"cdf = \"websearch\"\nduration = \"1ms\"\n", 8, "a generated load needs load", "load = 0.3"},
      {"cdf = \"websearch\"\nload = 0.3\n", 8, "needs duration or end", "duration = \"1ms\""},
      {"cdf = \"websearch\"\nload = 0.3\nduration = \"1ms\"\nend = \"2ms\"\n", 12, "both duration and end", "give one"},
      {"cdf = \"websearch\"\nload = 0.3\nbegin = \"2ms\"\nend = \"1ms\"\n", 12, "end is not after begin", "duration"},
      {"file = \"flow.txt\"\ncdf = \"websearch\"\n", 8, "both file and cdf", "not both"},
      {"file = \"flow.txt\"\nload = 0.3\n", 10, "load applies to a generated load", "replace file by cdf"},
      {"begin = \"1us\"\n", 8, "has no file or cdf", "cdf = \"websearch\""},
      {"cdf = \"websearch\"\nload = 0.3\nduration = \"1ms\"\nhosts = 4\n", 12, "not a count", "\"free\""},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string path = background_scenario(d, cases[i].body);
    const InputError e = input_error([&] { read_scenario(path); });
    EXPECT_EQ(e.line(), cases[i].line) << e.what();
    EXPECT_NE(std::string(e.what()).find(cases[i].problem), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(cases[i].fix), std::string::npos) << e.what();
  }
  // Hosts checked against the topology: a switch, all on one server, "free" with every GPU busy.
  struct Late {
    std::string body, problem;
    std::vector<uint32_t> busy;
  };
  const std::vector<Late> late = {
      {"hosts = [0, 20]\n", "node 20 is not a host", {}},
      {"hosts = \"0-7\"\n", "no destination outside its own server", {}},
      {"hosts = \"free\"\n", "every GPU runs the workload or a job", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}},
  };
  for (const Late& c : late) {
    const Scenario s = read_scenario(background_scenario(d, "cdf = \"websearch\"\nload = 0.3\nduration = \"1ms\"\n" + c.body));
    const InputError e = input_error([&] { make_background(s, build_topology(s), c.busy, nullptr); });
    EXPECT_EQ(e.line(), 12) << e.what();
    EXPECT_NE(std::string(e.what()).find(c.problem), std::string::npos) << e.what();
  }
  // A CDF file's own error names that file.
  write_file(d / "bad.cdf", "0 0\n100 50\n50 100\n");
  const Scenario s = read_scenario(background_scenario(d, "cdf = \"bad.cdf\"\nload = 0.3\nduration = \"1ms\"\n"));
  const InputError e = input_error([&] { make_background(s, build_topology(s), {}, nullptr); });
  EXPECT_EQ(e.file(), (d / "bad.cdf").string());
  EXPECT_EQ(e.line(), 3);
}
