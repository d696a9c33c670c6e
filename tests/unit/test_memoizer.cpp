// Recording unsteady periods: identical partitions give one pattern and repeats; a period whose
// membership changes before it converges is not recorded.
#include <gtest/gtest.h>

#include "net_fixtures.h"
#include "wormhole/cc/factory.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/memo/memoizer.h"

using namespace wh;
using namespace wh::test;

namespace {

SimConfig config() {
  SimConfig c = read_hpcc_config(std::string(WH_TEST_DATA) + "/refruns/hpcc-ring16-fattree-k4-1MB/config_dcqcn.txt");
  c.enable_qcn = false;  // rates stay at line rate: every period converges at its first check
  return c;
}

struct Recorded {
  MemoStats stats;
  MemoDb db;
};

Recorded record(const std::vector<FlowSpec>& flows, uint32_t hosts) {
  const SimConfig cfg = config();
  Network net(cfg, star(hosts), make_cc(cfg, nullptr));
  net.add_flows(flows);
  WormholeSettings ws;
  ws.enabled = true;
  ws.window = 500;
  FastForward ff(net, ws, 1 * kSec);
  Recorded r;
  {
    Memoizer rec(net, ff, r.db, 42, 1'000'000'000);
    net.run(1 * kSec);
    r.stats = rec.stats();
  }
  return r;
}

}  // namespace

TEST(Memoizer, IdenticalPartitionsAreOnePattern) {
  // Eight disjoint pairs started together, different sizes: eight one-flow partitions of one
  // pattern. Nothing was known when they started: the first is simulated to convergence (one new
  // pattern), the seven others follow it (held, then replayed from it; before followers they were
  // simulated too, as seven repeats); after each skip a new period starts with the flow no longer
  // fresh (another pattern, not known) and ends with the flow, unconverged.
  std::vector<FlowSpec> flows;
  for (uint32_t h = 0; h < 8; ++h) flows.push_back(flow(h, h + 8, 20'000'000 + h * 1'000'000));
  const Recorded r = record(flows, 16);
  EXPECT_EQ(r.stats.periods, 16u);
  EXPECT_EQ(r.stats.converged, 1u);
  EXPECT_EQ(r.stats.followed, 7u);
  EXPECT_EQ(r.stats.follows_cut, 0u);
  EXPECT_EQ(r.stats.inserted, 1u);
  EXPECT_EQ(r.stats.repeated, 0u);
  EXPECT_EQ(r.stats.hits, 0u);
  EXPECT_EQ(r.stats.replayed, 0u);
  ASSERT_EQ(r.db.store.size(), 1u);
  const MemoEntry& e = *r.db.store.entries().front();
  EXPECT_EQ(e.ns, 42u);
  EXPECT_EQ(e.key.vertices(), 1u);
  EXPECT_EQ(e.key.label[0].rate_q, 100u);         // line rate, 100 Gb/s in 1-Gb/s quanta
  EXPECT_EQ(e.key.label[0].bottleneck_bps, k100G);
  EXPECT_EQ(e.key.label[0].line_bps, k100G);
  EXPECT_EQ(e.key.label[0].hops, 2u);            // host NIC, switch port
  EXPECT_EQ(e.key.label[0].fresh, 1);
  EXPECT_EQ(e.value.end_rate_bps[0], k100G);
  EXPECT_EQ(e.value.duration, 500 * kUs);  // windows full after 500 samples of 1 µs
  // One 1000-B payload sent every 83 ns (1048 B at 100 Gb/s, truncated to whole ns) from 0 to
  // 500 µs: at 0, 83, ..., 6,024 × 83 = 499,992 ns, 6,025 packets.
  EXPECT_EQ(e.value.bytes[0], 6'025'000u);
  EXPECT_EQ(e.hits, 0u);  // hits count replays
}

TEST(Memoizer, AMembershipChangeVoidsThePeriod) {
  // B joins A's partition at 100 µs and leaves it at ~120 µs: A's first period is void; the one
  // after B left converges as a one-flow pattern.
  const Recorded r = record({flow(0, 2, 20'000'000), flow(1, 2, 200'000, 100 * kUs)}, 3);
  EXPECT_EQ(r.stats.inserted, 1u);
  EXPECT_EQ(r.stats.converged, 1u);
  EXPECT_GE(r.stats.periods, 3u);  // A alone, A with B, A alone again (+ after its skip)
  EXPECT_EQ(r.db.store.entries().front()->key.vertices(), 1u);
}
