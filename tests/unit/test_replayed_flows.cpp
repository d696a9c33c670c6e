// Replayed flows (the collective memo's, Network::replay_flow): created with the flows injected at their
// instant, in id order, but with no QP state and no start event of their own; ended by the island hooks.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "wormhole/cc/factory.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/net/island.h"
#include "wormhole/net/network.h"

#include "net_fixtures.h"

using namespace wh;
using namespace wh::test;

namespace {

SimConfig ring_dcqcn_config() {
  return read_hpcc_config(std::string(WH_TEST_DATA) + "/refruns/hpcc-ring16-fattree-k4-1MB/config_dcqcn.txt");
}

/// At 10 µs injects, in this order: a simulated flow 0 -> 1, two replayed ones (0 -> 1 and 2 -> 1, of the
/// same size; not with `replays` false), another simulated one 2 -> 1; the replays end at 50 µs, when the
/// island hooks say so.
class Mixed final : public EventClient, public IslandHooks {
 public:
  Mixed(Network& net, bool replays) : net_(net), replays_(replays) {
    net_.set_client(this);
    net_.set_island_hooks(this);
    net_.schedule_client(10 * kUs, 0);
  }
  ~Mixed() override { net_.set_island_hooks(nullptr); }
  void client_event(uint32_t, uint16_t) override {
    ids.push_back(net_.inject_flow(flow(0, 1, 100000)));
    if (replays_) ids.push_back(net_.replay_flow(flow(0, 1, 100000))), ids.push_back(net_.replay_flow(flow(2, 1, 100000)));
    ids.push_back(net_.inject_flow(flow(2, 1, 100000)));
    net_.schedule_replay(50 * kUs, 7);
  }
  void flow_started(uint32_t id, uint32_t, uint32_t) override { started.push_back(id); }
  bool simulated_exactly(uint32_t) const override { return false; }
  void replay_due(uint32_t slot) override {
    EXPECT_EQ(slot, 7u);
    if (!replays_) return;
    // Created at their instant, with no QP state: there is none to read, none held.
    for (uint32_t r : {ids[1], ids[2]}) {
      EXPECT_TRUE(net_.flow_info(r).started);
      EXPECT_THROW(net_.flow(r), std::logic_error);
    }
    net_.finish_replayed(ids[1]);
    net_.finish_replayed(ids[2]);
  }
  std::vector<uint32_t> ids, started;

 private:
  Network& net_;
  bool replays_;
};

}  // namespace

TEST(ReplayedFlows, StartWithNoStateOrEventOfTheirOwnAndEndWhenTheHooksSay) {
  const SimConfig cfg = ring_dcqcn_config();
  Network net(cfg, star(3), make_cc(cfg, nullptr));
  Mixed m(net, true);
  net.run(cfg.stop_time());
  ASSERT_EQ(m.ids, (std::vector<uint32_t>{0, 1, 2, 3}));  // ids in injection order
  EXPECT_EQ(m.started, (std::vector<uint32_t>{0, 3}));    // only the simulated flows start a QP
  EXPECT_EQ(net.peak_live_flows(), 2u);
  for (uint32_t r : {1u, 2u}) {
    const FlowRecord rec = net.record(r);
    EXPECT_EQ(rec.start, 10 * kUs);
    EXPECT_EQ(rec.finish, 50 * kUs);
    EXPECT_EQ(net.flow_info(r).nic, net.flow_info(r).src);  // host i's NIC is port i (star)
  }
  EXPECT_TRUE(net.record(0).finished() && net.record(3).finished());
  // The bound of a replayed flow is that of a simulated flow on its path: flow 1 is flow 0's twin.
  EXPECT_GT(net.record(1).min_fct_ns, 0u);
  EXPECT_EQ(net.record(1).min_fct_ns, net.record(0).min_fct_ns);
  EXPECT_EQ(net.record(2).min_fct_ns, net.record(3).min_fct_ns);
  EXPECT_EQ(net.data_path(1), net.data_path(0));
  // The replays cost no event: the same two simulated flows without them take as many (when each
  // injection had its own start event, the replays added two).
  Network alone(cfg, star(3), make_cc(cfg, nullptr));
  Mixed m2(alone, false);
  alone.run(cfg.stop_time());
  ASSERT_EQ(m2.ids, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(net.stats().events, alone.stats().events);
  EXPECT_EQ(net.record(3).finish, alone.record(1).finish);
}
