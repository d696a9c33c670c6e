// PFC headroom (docs/network-model.md §11.1): the reference's 3 × rate × delay falls short of what a
// pause needs at 10 Gb/s and 1 µs; the set-up warning names those ports, PFC_LOSSLESS_HEADROOM 1
// makes PFC lossless. Figures by hand in the comments.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "net_fixtures.h"
#include "wormhole/cc/factory.h"
#include "wormhole/io/hpcc_config.h"

using namespace wh;
using namespace wh::test;

namespace {

SimConfig config(bool lossless) {
  // One file per process: ctest runs this file's tests as parallel processes, and with one shared name
  // one of them read the file while another had just truncated it ("the file is empty", seen in CI).
  const std::string path =
      (std::filesystem::path(::testing::TempDir()) / ("wh_pfc_headroom." + std::to_string(::getpid()) + ".conf")).string();
  std::ofstream(path) << "ENABLE_QCN 1\nPACKET_PAYLOAD_SIZE 1000\nSIMULATOR_STOP_TIME 4\nCC_MODE 1\n"
                         "ALPHA_RESUME_INTERVAL 1\nRATE_DECREASE_INTERVAL 4\nCLAMP_TARGET_RATE 0\nRP_TIMER 300\n"
                         "EWMA_GAIN 0.00390625\nFAST_RECOVERY_TIMES 1\nRATE_AI 20Mb/s\nRATE_HAI 200Mb/s\n"
                         "MIN_RATE 100Mb/s\nL2_CHUNK_SIZE 4000\nL2_ACK_INTERVAL 1\nHAS_WIN 0\nGLOBAL_T 1\n"
                         "ACK_HIGH_PRIO 1\nKMAX_MAP 1 10000000000 16000\nKMIN_MAP 1 10000000000 4000\n"
                         "PMAX_MAP 1 10000000000 0.2\nBUFFER_SIZE 1\n"
                      << "PFC_LOSSLESS_HEADROOM " << (lossless ? 1 : 0) << "\n";
  SimConfig cfg = read_hpcc_config(path);
  std::filesystem::remove(path);
  return cfg;
}

constexpr uint64_t k10G = 10'000'000'000ull;

/// 16 hosts send 1 MB each to host 0 through one 17-port 10 Gb/s switch (1 µs links).
RunStats incast(bool lossless) {
  const SimConfig cfg = config(lossless);
  Network net(cfg, star(17, k10G), make_cc(cfg, nullptr));
  std::vector<FlowSpec> flows;
  for (uint32_t h = 1; h <= 16; ++h) flows.push_back(flow(h, 0, 1'000'000, 2 * kSec));
  net.add_flows(flows);
  net.run(4 * kSec);
  for (uint32_t i = 0; i < 16; ++i) EXPECT_TRUE(net.flow_finished(i)) << i;
  return net.stats();
}

}  // namespace

// 10 Gb/s, 1 µs: headroom 10e9 × 1000 / 8 / 1e9 × 3 = 3750 B; a pause needs 2 × 1250 + 2 × 1048 =
// 4596 B. All 17 switch ports fall short: the warning names switch 17's interfaces 1-17.
TEST(PfcHeadroom, WarningNamesEveryShortPort) {
  const SimConfig cfg = config(false);
  Network net(cfg, star(17, k10G), make_cc(cfg, nullptr));
  EXPECT_EQ(net.headroom_warning(),
            "17 switch port(s) have a PFC headroom (3 x rate x delay, the reference's rule) below what a lossless pause "
            "needs (2 x rate x delay + 2 x 1048-B packets), so PFC can drop packets there, as in the reference: switch "
            "17 if 1-17 (3750 < 4596 B). Set PFC_LOSSLESS_HEADROOM 1 for a lossless headroom");
  const SimConfig lossless = config(true);
  EXPECT_EQ(Network(lossless, star(17, k10G), make_cc(lossless, nullptr)).headroom_warning(), "");
  // 100 Gb/s, 1 µs: 37,500 B ≥ 2 × 12,500 + 2 × 1048 = 27,096 B: no warning.
  const SimConfig ref = read_hpcc_config(std::string(WH_TEST_DATA) + "/refruns/hpcc-ring16-fattree-k4-1MB/config_dcqcn.txt");
  EXPECT_EQ(Network(ref, star(4), make_cc(ref, nullptr)).headroom_warning(), "");
}

// The same incast drops packets with PFC on under the reference's rule (2057 here) and none with the
// lossless one.
TEST(PfcHeadroom, LosslessRuleStopsPfcDrops) {
  const RunStats reference = incast(false);
  EXPECT_GT(reference.packets_dropped, 0u);
  const RunStats lossless = incast(true);
  EXPECT_EQ(lossless.packets_dropped, 0u);
}
