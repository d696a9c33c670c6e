// The user docs document every key the readers accept, and no key they do not: each key has one
// table row that starts with it in backticks (docs/network-model.md §1 for the HPCC keys,
// docs/workloads.md §10 for the scenario keys).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "wormhole/io/hpcc_config.h"
#include "wormhole/core/input_error.h"
#include "wormhole/scenario/scenario.h"

namespace wh {
namespace {

/// The cells of a Markdown table row ("| a | b |" -> {"a", "b"}), trimmed.
std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  size_t at = row.find('|');
  while (at != std::string::npos) {
    const size_t next = row.find('|', at + 1);
    if (next == std::string::npos) break;
    std::string c = row.substr(at + 1, next - at - 1);
    c.erase(0, c.find_first_not_of(' '));
    c.erase(c.find_last_not_of(' ') + 1);
    out.push_back(c);
    at = next;
  }
  return out;
}

/// Keys of the rows of `doc` (relative to the source tree) whose first cell matches `key`, with how
/// often each occurs. Every such row must give the key's unit or values, default and effect: four
/// non-empty cells.
std::map<std::string, int> documented_keys(const std::string& doc, const std::regex& key) {
  std::ifstream in(std::string(WH_SOURCE_DIR) + "/" + doc);
  EXPECT_TRUE(in) << doc << " not found";
  std::map<std::string, int> found;
  std::smatch m;
  for (std::string line; std::getline(in, line);) {
    if (!std::regex_search(line, m, key)) continue;
    ++found[m[1].str()];
    const std::vector<std::string> c = cells(line);
    EXPECT_EQ(c.size(), 4u) << doc << ": the row of " << m[1] << " needs 4 cells (key, unit, default, effect): " << line;
    for (size_t i = 0; i < c.size(); ++i) EXPECT_FALSE(c[i].empty()) << doc << ": cell " << i + 1 << " of " << m[1] << " is empty";
  }
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

// The unit an error names for "2ms" (hpcc_config_unit) is the one the docs give: the key's unit cell
// starts with it.
TEST(Docs, EveryHpccConfigUnitIsTheDocumentedOne) {
  std::ifstream in(std::string(WH_SOURCE_DIR) + "/docs/network-model.md");
  const std::regex row(R"(^\| `([A-Z][A-Z0-9_]*)` \|)");
  std::smatch m;
  size_t with_unit = 0;
  for (std::string line; std::getline(in, line);) {
    if (!std::regex_search(line, m, row)) continue;
    const std::string unit(hpcc_config_unit(m[1].str()));
    const std::string cell = cells(line).at(1);
    // The other way: a cell that starts with a unit of its own names a key the table must hold.
    if (unit.empty()) {
      for (const char* u : {"s ", "s,", "ns", "µs", "bytes", "MiB", "samples", "Gb/s"})
        EXPECT_NE(cell.rfind(u, 0), 0u) << m[1] << ": the docs give it a unit (\"" << cell << "\"), hpcc_config_unit none";
      continue;
    }
    ++with_unit;
    EXPECT_EQ(cell.substr(0, unit.size()), unit) << m[1] << ": the docs give \"" << cell << "\"";
    // The unit is a word of its own there ("s (decimal", "µs, ≥ 0"), not the start of a longer one.
    EXPECT_TRUE(cell.size() == unit.size() || cell[unit.size()] == ',' || cell[unit.size()] == ' ') << m[1] << ": " << cell;
  }
  EXPECT_GE(with_unit, 20u);
  EXPECT_EQ(hpcc_config_unit("WORMHOLE_WINDOW"), "samples");
  EXPECT_EQ(hpcc_config_unit("SEED"), "");
}

TEST(Docs, EveryScenarioKeyDocumented) {
  const std::regex row(R"(^\| `((?:topology|workload|network|wormhole|output|job|background)\.[a-z_]+|name)` \|)");
  const auto documented = documented_keys("docs/workloads.md", row);
  EXPECT_GE(documented.size(), 30u);
  expect_same_keys(scenario_keys(), documented, "docs/workloads.md");
}

TEST(Docs, CellsOfARow) {
  EXPECT_EQ(cells("| `SEED` | whole number | 1 | seed |"), (std::vector<std::string>{"`SEED`", "whole number", "1", "seed"}));
  EXPECT_EQ(cells("| `SEED` | | | |"), (std::vector<std::string>{"`SEED`", "", "", ""}));
}

// The list the docs are checked against is the reader's own: a key it holds is read (whatever the
// value's complaint, never "unknown key"), and a key it does not hold is refused even if a branch
// of the reader could parse it.
TEST(Docs, TheKeyListIsWhatTheReaderAccepts) {
  const std::string dir = ::testing::TempDir();
  for (const std::string& k : hpcc_config_keys()) {
    const std::string path = dir + "/wh_key_" + k + ".txt";
    std::ofstream(path) << k << " 1\n";
    try {
      read_hpcc_config(path);
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).find("unknown key"), std::string::npos) << k << ": " << e.what();
    }
    std::remove(path.c_str());
  }
  const std::string path = dir + "/wh_key_unknown.txt";
  std::ofstream(path) << "NOT_A_KEY 1\n";
  EXPECT_THROW(read_hpcc_config(path), InputError);
  std::remove(path.c_str());
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
