// One rank's Network in a distributed run, without MPI: the engine's window loop run by hand on a
// single rank. A client that stops the run inside a window must leave the statistics and flows of
// one process stopped at the same event (Network::truncate_after_stop undoes what ran after it).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <tuple>
#include <vector>

#include "wormhole/cc/factory.h"
#include "wormhole/ffwd/fast_forward.h"
#include "wormhole/io/flow_results.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/net/network.h"
#include "net_fixtures.h"

using namespace wh;
using namespace wh::test;

namespace {

/// Stops the run at a given time (a workload's last GPU finishing, in miniature).
class StopAt final : public EventClient {
 public:
  /// Installs itself as `net`'s client first: a distributed run's client events go to its own time.
  StopAt(Network& net, Time at) : net_(net) {
    net_.set_client(this);
    net_.schedule_client(at, 0);
  }
  void client_event(uint32_t, uint16_t) override { net_.stop(); }

 private:
  Network& net_;
};

SimConfig incast_config() {
  SimConfig cfg = read_hpcc_config(std::string(WH_TEST_DATA) + "/refruns/hpcc-ring16-fattree-k4-1MB/config_dcqcn.txt");
  cfg.portable_order = true;
  // The config's 32-MB shared buffer: the 6-to-1 incast queues past K_min, so ECN marks throughout
  return cfg;
}

std::vector<FlowSpec> incast_flows() {
  std::vector<FlowSpec> v;
  for (uint32_t h = 1; h <= 6; ++h) v.push_back(flow(h, 0, 1'000'000 * h));
  return v;
}

/// Makes `net` the only rank of a distributed run (before its client schedules anything, as the engine).
void one_rank(Network& net) {
  net.set_distribution(std::vector<uint32_t>(net.nodes().size(), 0), 0);
  net.client_clock().set_lookahead(kTimeMax / 4);
  net.kernel().set_hold_barriers(false);  // held between windows (Wormhole's ticks)
}

/// The engine's loop on one rank (partition/engine.cpp) with windows of `window` ps, ticks between them.
void run_in_windows(Network& net, Time until, Time window) {
  net.routing();
  for (;;) {
    const Time start = std::min(net.kernel().queue().next_time(), net.client_clock().next_event());
    if (start == kTimeMax || start > until) break;
    if (net.kernel().barrier() <= start) {
      net.kernel().run_barrier(net);
      continue;
    }
    Time end = std::min({until, start + window - 1, net.kernel().barrier() - 1});
    net.begin_window();
    net.run(end);
    end = std::min(end, net.kernel().barrier() - 1);
    std::vector<Completion> done = net.completions();
    net.completions().clear();
    std::stable_sort(done.begin(), done.end(), [](const Completion& a, const Completion& b) { return a.before(b); });
    net.deliver(done);
    if (!net.run_client(end)) {
      net.truncate_after_stop();
      return;
    }
    net.retire_committed();
  }
}

}  // namespace

TEST(DistributedNetwork, ARankMakesItsOwnPortsAndACutWireForEachFarEnd) {
  // A star of 7 hosts (ports 0-6) and its switch (node 7, ports 7-13: interface i+1 faces host i).
  // Rank 0 holds hosts 0-2 and their ports; the switch ports facing them are rank 1's, and rank 0
  // keeps only their wires (what the switch sends those hosts), as cut wires. Rank 1 holds the switch
  // and hosts 3-6, and the wires of hosts 0-2's ports toward the switch.
  const SimConfig cfg = incast_config();
  const Topology topo = star(7);
  const std::vector<uint32_t> rank_of{0, 0, 0, 1, 1, 1, 1, 1};
  for (uint32_t rank : {0u, 1u}) {
    SCOPED_TRACE(rank);
    Network net(cfg, topo, make_cc(cfg, nullptr), true);
    EXPECT_EQ(net.ports().made_count(), 0u);
    EXPECT_EQ(net.links().size(), 14u);
    net.add_flows(incast_flows());  // wiring and routes only
    net.set_distribution(rank_of, rank);
    std::vector<uint32_t> made;
    for (uint32_t p = 0; p < net.ports().size(); ++p)
      if (net.ports().made(p)) made.push_back(p);
    const std::vector<CutWire>& cw = net.fabric().cut_wires;
    std::vector<std::pair<uint32_t, uint32_t>> wires;  // (sender, receiver)
    for (const CutWire& w : cw) wires.push_back({w.sender, w.receiver});
    using Wires = std::vector<std::pair<uint32_t, uint32_t>>;
    if (rank == 0) {
      EXPECT_EQ(made, (std::vector<uint32_t>{0, 1, 2}));
      EXPECT_EQ(wires, (Wires{{7, 0}, {8, 1}, {9, 2}}));
    } else {
      EXPECT_EQ(made, (std::vector<uint32_t>{3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}));
      EXPECT_EQ(wires, (Wires{{0, 7}, {1, 8}, {2, 9}}));
    }
    for (uint32_t p : made) {
      const bool cut = p <= 2 || (p >= 7 && p <= 9);  // hosts 0-2's links, at both ends
      EXPECT_EQ(net.ports()[p].cut, cut) << p;
      EXPECT_EQ(net.ports()[p].rate_bps, net.links()[p].rate_bps);
      EXPECT_EQ(net.ports()[p].peer, net.links()[p].peer);
      if (!cut) EXPECT_EQ(net.ports()[p].cut_wire, UINT32_MAX) << p;
      else EXPECT_EQ(cw.at(net.ports()[p].cut_wire).receiver, p);
    }
  }
}

TEST(DistributedNetwork, AFreezeMovesACutWiresPacketsAsItMovesAPortsWire) {
  // Rank 0 of the star above: the switch port facing host 0 (port 7) is rank 1's, and what it sends host 0
  // waits on rank 0's cut wire. A partition of flow 0 (host 3 -> host 0) over port 7 is frozen and moved by
  // 5 us: its data packet on the wire moves with it (arrival 20 -> 25 us, the wire's epoch moves as the
  // port's would); a PFC frame, no flow's, leaves the wire and arrives when it would have, as a bypass.
  const SimConfig cfg = incast_config();
  Network net(cfg, star(7), make_cc(cfg, nullptr), true);
  net.add_flows({flow(3, 0, 1'000'000)});
  net.set_distribution({0, 0, 0, 1, 1, 1, 1, 1}, 0);
  net.run(1 * kUs);  // the flow's QP starts on every rank
  const Time now = net.kernel().now();
  CrossPacket pfc{}, data{};
  pfc.port = data.port = 7;
  pfc.to_rank = data.to_rank = 0;
  pfc.arrive = 10 * kUs;
  pfc.pkt.type = PktType::Pfc;
  pfc.pkt.size = 64;
  data.arrive = 20 * kUs;
  data.pkt.type = PktType::Data;
  data.pkt.flow = 0;
  data.pkt.size = 1048;
  net.accept(pfc);
  net.accept(data);
  const CutWire& w = net.fabric().cut_wires.at(net.ports()[0].cut_wire);
  ASSERT_EQ(w.sender, 7u);
  ASSERT_EQ(w.wire.size(), 2u);
  const uint64_t bypassed = net.packets_bypassed(), evacuated = net.ports_evacuated();
  net.shift({7}, {0}, 5 * kUs, now + 5 * kUs);
  EXPECT_EQ(w.epoch, 1u);
  ASSERT_EQ(w.wire.size(), 1u);
  EXPECT_EQ(net.packet_pool()[w.wire.front().pkt].type, PktType::Data);
  EXPECT_EQ(w.wire.front().arrive, 25 * kUs);
  EXPECT_EQ(net.packets_bypassed(), bypassed + 1);
  EXPECT_EQ(net.ports_evacuated(), evacuated + 1);
}

TEST(DistributedNetwork, StopInsideAWindowUndoesWhatRanAfterIt) {
  const SimConfig cfg = incast_config();
  const Topology topo = star(7);
  // Where flows finish: stop in the middle of the congestion (ECN marking), and between two
  // completions that one window holds.
  Time first_end = 0;
  {
    Network probe(cfg, topo, make_cc(cfg, nullptr));
    probe.add_flows(incast_flows());
    probe.run(kTimeMax);
    ASSERT_GT(probe.stats().ecn_marks, 500u);  // marks before and after the stop
    std::vector<Time> ends;
    for (uint32_t id = 0; id < probe.flow_count(); ++id) ends.push_back(probe.record(id).finish);
    std::sort(ends.begin(), ends.end());
    ASSERT_LT(ends[0] + 2 * kNs, ends[1]);
    first_end = ends[0];
  }
  for (const auto& [stop, finished] : {std::pair{first_end / 2 / kNs * kNs, 0u}, std::pair{first_end + kNs, 1u}})
  for (const Time window : {Time(50 * kUs), Time(500 * kUs)}) {
    SCOPED_TRACE(std::to_string(stop) + " " + std::to_string(window));
    Network one(cfg, topo, make_cc(cfg, nullptr));
    one.add_flows(incast_flows());
    StopAt c1(one, stop);
    one.run(kTimeMax);

    Network dist(cfg, topo, make_cc(cfg, nullptr), true);  // its ports made by set_distribution
    dist.add_flows(incast_flows());
    one_rank(dist);
    StopAt c2(dist, stop);
    run_in_windows(dist, kTimeMax, window);

    const RunStats a = one.stats(), b = dist.stats();
    EXPECT_EQ(a.events, b.events);
    EXPECT_EQ(a.sim_end, stop);
    EXPECT_EQ(b.sim_end, stop);
    EXPECT_EQ(a.ecn_marks, b.ecn_marks);
    EXPECT_GT(a.ecn_marks, 0u);
    EXPECT_EQ(a.packets_dropped, b.packets_dropped);
    EXPECT_EQ(a.last_finish, b.last_finish);
    EXPECT_EQ(a.max_queue_bytes, b.max_queue_bytes);
    EXPECT_EQ(a.max_queue_node, b.max_queue_node);
    EXPECT_EQ(one.flows_finished(), finished);
    EXPECT_EQ(dist.flows_finished(), finished);
    ASSERT_EQ(one.flow_count(), dist.flow_count());
    for (uint32_t id = 0; id < one.flow_count(); ++id) EXPECT_EQ(one.record(id).finish, dist.record(id).finish) << id;
  }
}

TEST(DistributedNetwork, FinishedFlowsLeaveAtTheWindowEdgeAfterTheirs) {
  // Each flow is forgotten (its record to the sink) once the window it finished in stands; a stop
  // inside a window keeps that window's finishes, which are undone. Either way the records are those
  // of one process, and a stale timer of a retired flow counts as its event did.
  const SimConfig cfg = incast_config();
  const Topology topo = star(7);
  Network one(cfg, topo, make_cc(cfg, nullptr));
  one.add_flows(incast_flows());
  one.run(kTimeMax);
  std::vector<Time> ends;
  for (uint32_t id = 0; id < one.flow_count(); ++id) ends.push_back(one.record(id).finish);
  std::sort(ends.begin(), ends.end());
  ASSERT_GT(ends[2] - ends[1], 20 * kUs);  // the second and the third finish in different windows
  for (const Time stop : {kTimeMax, ends[2] + kNs}) {
    SCOPED_TRACE(stop);
    Network ref(cfg, topo, make_cc(cfg, nullptr));
    ref.add_flows(incast_flows());
    std::unique_ptr<StopAt> c1;
    if (stop != kTimeMax) c1 = std::make_unique<StopAt>(ref, stop);
    ref.run(kTimeMax);

    Network dist(cfg, topo, make_cc(cfg, nullptr));
    dist.add_flows(incast_flows());
    one_rank(dist);
    FlowResults sink;
    dist.retire_flows_to(&sink);
    std::unique_ptr<StopAt> c2;
    if (stop != kTimeMax) c2 = std::make_unique<StopAt>(dist, stop);
    run_in_windows(dist, kTimeMax, 20 * kUs);
    // Run dry: every flow left; stopped: the two that finished in windows before the stop's (the
    // third finished in the stop's window, which a stop never lets stand).
    EXPECT_EQ(sink.size(), stop == kTimeMax ? 6u : 2u);
    EXPECT_EQ(dist.held_flows(), 6u - sink.size());
    EXPECT_EQ(dist.stats().events, ref.stats().events);
    add_held_flows(dist, sink);
    ASSERT_EQ(sink.size(), 6u);
    sink.for_each([&](const FlowRecord& r) {
      const FlowRecord w = ref.record(static_cast<uint32_t>(r.id));
      EXPECT_EQ(r.finish, w.finish) << r.id;
      EXPECT_EQ(r.size_bytes, w.size_bytes) << r.id;
      EXPECT_EQ(r.src, w.src) << r.id;
    });
  }
}

namespace {

/// Releases flow `spec` at `release` (an on-time client event, as a workload's release) and stops
/// the run at `stop` (in the client's own time).
class ReleaseAndStop final : public EventClient {
 public:
  ReleaseAndStop(Network& net, FlowSpec spec, Time release, Time stop) : net_(net), spec_(spec) {
    net_.set_client(this);
    net_.schedule_client(release, 1, 0, true);
    net_.schedule_client(stop, 0);
  }
  void client_event(uint32_t what, uint16_t) override {
    if (what == 1) net_.inject_flow(spec_);
    else net_.stop();
  }

 private:
  Network& net_;
  FlowSpec spec_;
};

}  // namespace

TEST(DistributedNetwork, StopInsideAWindowUndoesTheFastForwardAfterIt) {
  // A (0 -> 2, 60 MB) is steady after a 200-µs window and skipped towards its end. The client stops
  // the run 100 ns before a flow it released starts on A's last port (which pulls A back), both
  // between the same two ticks (windows never span a tick). One process never runs that start; a
  // rank whose window holds both runs it, and must take back A's pull-back (credits, skip-back
  // count) with the injected flow.
  SimConfig cfg = incast_config();
  cfg.enable_qcn = false;  // DCQCN's rate never moves: A is steady
  WormholeSettings ws;
  ws.enabled = true;
  ws.window = 200;
  const Time release = 1 * kMs + 500 * kNs, stop = release - 100 * kNs;
  const FlowSpec b = flow(1, 2, 1'000'000);
  auto run = [&](bool distributed) {
    auto net = std::make_unique<Network>(cfg, star(3), make_cc(cfg, nullptr));
    net->add_flows({flow(0, 2, 60'000'000)});
    if (distributed) {
      one_rank(*net);
      net->client_clock().set_lookahead(1 * kUs);
    }
    auto client = std::make_unique<ReleaseAndStop>(*net, b, release, stop);
    auto ff = std::make_unique<FastForward>(*net, ws, 1 * kSec);
    if (distributed) run_in_windows(*net, kTimeMax, 50 * kUs);
    else net->run(kTimeMax);
    const SkipStats s = ff->stats();
    ff.reset();
    return std::tuple{std::move(net), s};
  };
  const auto [one, s1] = run(false);
  const auto [dist, s2] = run(true);
  ASSERT_EQ(s1.skips, 1u);
  EXPECT_EQ(s1.skip_backs, 0u);
  EXPECT_EQ(s2.skips, s1.skips);
  EXPECT_EQ(s2.skip_backs, s1.skip_backs);
  EXPECT_EQ(s2.packets_skipped, s1.packets_skipped);
  EXPECT_EQ(s2.skipped_flow_time, s1.skipped_flow_time);
  ASSERT_EQ(one->flow_count(), 1u);
  ASSERT_EQ(dist->flow_count(), 1u);
  EXPECT_EQ(dist->record(0).skipped_bytes, one->record(0).skipped_bytes);
  EXPECT_EQ(dist->record(0).skipped, one->record(0).skipped);
  EXPECT_EQ(dist->stats().sim_end, stop);
}
