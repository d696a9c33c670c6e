// The user docs document every key the readers accept, and no key they do not: each key has one
// table row that starts with it in backticks (docs/network-model.md §1 for the HPCC keys,
// docs/workloads.md §10 for the scenario keys).
#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "wormhole/io/hpcc_config.h"
#include "wormhole/scenario/scenario.h"

namespace wh {
namespace {

/// Keys of the rows of `doc` (relative to the source tree) whose first cell matches `key`, with how
/// often each occurs.
std::map<std::string, int> documented_keys(const std::string& doc, const std::regex& key) {
  std::ifstream in(std::string(WH_SOURCE_DIR) + "/" + doc);
  EXPECT_TRUE(in) << doc << " not found";
  std::map<std::string, int> found;
  std::smatch m;
  for (std::string line; std::getline(in, line);)
    if (std::regex_search(line, m, key)) ++found[m[1].str()];
  return found;
}

void expect_same_keys(const std::vector<std::string>& reader, const std::map<std::string, int>& documented,
                      const std::string& doc) {
  const std::set<std::string> accepted(reader.begin(), reader.end());
  for (const std::string& k : accepted)
    EXPECT_TRUE(documented.count(k)) << k << " is accepted by the reader but has no row in " << doc;
  for (const auto& [k, n] : documented) {
    EXPECT_TRUE(accepted.count(k)) << doc << " documents " << k << ", which the reader does not accept";
    EXPECT_EQ(n, 1) << k << " has " << n << " rows in " << doc;
  }
}

TEST(Docs, EveryHpccConfigKeyDocumented) {
  const std::regex row(R"(^\| `([A-Z][A-Z0-9_]*)` \|)");
  const auto documented = documented_keys("docs/network-model.md", row);
  EXPECT_GE(documented.size(), 60u);  // the regex finds the table at all
  expect_same_keys(hpcc_config_keys(), documented, "docs/network-model.md");
}

TEST(Docs, EveryScenarioKeyDocumented) {
  const std::regex row(R"(^\| `((?:topology|workload|network|wormhole|output)\.[a-z_]+|name)` \|)");
  const auto documented = documented_keys("docs/workloads.md", row);
  EXPECT_GE(documented.size(), 30u);
  expect_same_keys(scenario_keys(), documented, "docs/workloads.md");
}

TEST(Docs, KeyListsHoldTheKnownKeys) {
  const auto& hpcc = hpcc_config_keys();
  for (const char* k : {"CC_MODE", "KMAX_MAP", "BUFFER_SIZE", "WORMHOLE_THETA", "SEED"})
    EXPECT_NE(std::find(hpcc.begin(), hpcc.end(), k), hpcc.end()) << k;
  const auto sc = scenario_keys();
  for (const char* k : {"name", "network.config", "topology.generator", "workload.iterations", "wormhole.theta",
                        "output.dir"})
    EXPECT_NE(std::find(sc.begin(), sc.end(), k), sc.end()) << k;
}

}  // namespace
}  // namespace wh
