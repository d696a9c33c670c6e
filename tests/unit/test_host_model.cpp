// The host NIC and QP model (docs/network-model.md §6–§9, §14): exact single-flow FCT on
// host–switch–host, ACK interval/chunk rules, windows, go-back-N under loss, stalls without RTO,
// flow start order and source ports.
#include <gtest/gtest.h>

#include <vector>

#include "wormhole/cc/factory.h"
#include "wormhole/cc/state.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/io/topology.h"
#include "wormhole/net/network.h"

#include "net_fixtures.h"

using namespace wh;
using namespace wh::test;

namespace {


/// The reference ring runs' DCQCN config (HAS_WIN 0, L2_ACK_INTERVAL 1, L2_CHUNK_SIZE 4000,
/// ACK_HIGH_PRIO 1, payload 1000, 100 G ECN thresholds 400/1600 KB).
SimConfig ring_dcqcn_config() {
  return read_hpcc_config(std::string(WH_TEST_DATA) + "/refruns/hpcc-ring16-fattree-k4-1MB/config_dcqcn.txt");
}

/// host 0 – switch 2 – host 1, 100 G, 1 µs. Ports: host 0 = 0, host 1 = 1, switch: 2 (to 0), 3 (to 1).
Topology two_hosts(double error_rate = 0) {
  Topology t;
  t.num_nodes = 3;
  t.is_switch = {0, 0, 1};
  t.links = {TopoLink{0, 2, k100G, 1 * kUs, error_rate, 0}, TopoLink{1, 2, k100G, 1 * kUs, error_rate, 0}};
  return t;
}

/// Hosts 0 and 1 on switch 3, host 2 on switch 4, switches 3–4 linked; all 100 G, 1 µs.
/// Pair 0→1: 2 hops, RTT 2 × 2000 + 2 × 80 = 4160 ns, BDP 4160 × 100e9 / 8e9 = 52,000 B.
/// Pair 0→2: 3 hops, RTT 2 × 3000 + 3 × 80 = 6240 ns, BDP 78,000 B (= maxRtt, maxBdp).
Topology two_switches() {
  Topology t;
  t.num_nodes = 5;
  t.is_switch = {0, 0, 0, 1, 1};
  t.links = {TopoLink{0, 3, k100G, 1 * kUs, 0, 0}, TopoLink{1, 3, k100G, 1 * kUs, 0, 0},
             TopoLink{3, 4, k100G, 1 * kUs, 0, 0}, TopoLink{2, 4, k100G, 1 * kUs, 0, 0}};
  return t;
}


/// FCT (ns) of one 1 MB flow 0 -> 1 on two_hosts() started at 2 s.
uint64_t single_flow_fct(const SimConfig& cfg) {
  Network net(cfg, two_hosts(), make_cc(cfg, nullptr));
  net.add_flows({flow(0, 1, 1'000'000, 2 * kSec)});
  net.run(3 * kSec);
  EXPECT_TRUE(net.flow_finished(0));
  return net.record(0).fct_ns();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// (a) exact FCT of one flow
//
// 1,000,000 B = 1000 packets of 1000 B payload = 1048 B on the wire; Ser(1048 B @ 100 G) = 83.84
// -> 83 ns; Ser(60-B ACK) = 4.8 -> 4 ns. The QP starts at line rate, so with pacing
// next_avail = t + 83 ns the NIC sends back to back: packet k starts at 83k. Store-and-forward:
// it reaches the switch at 83k + 83 + 1000; the switch forwards at arrival (its egress finishes the
// previous packet at exactly that instant, and the arrival is handled first), so it reaches host 1
// at 83k + 83 + 1000 + 83 + 1000 = 83k + 2166. Last packet (k = 999): 82,917 + 2166 = 85,083 ns.
// Host 1 ACKs it at once (its NIC sends a 4-ns ACK per 83 ns: idle), the ACK reaches host 0 at
// 85,083 + 4 + 1000 + 4 + 1000 = 87,091 ns. Nothing shares host 0's uplink (unlike the ring runs,
// where each uplink also carries the 60-B ACKs of the flow the host receives: 83 + 4 = 87 ns per
// data packet). FCT = 999 × 83 + 2166 + 2008 = 87,091 ns.
// ---------------------------------------------------------------------------------------------

TEST(HostModel, SingleFlowExactFct) {
  const SimConfig cfg = ring_dcqcn_config();
  Network net(cfg, two_hosts(), make_cc(cfg, nullptr));
  net.keep_finished_state(true);  // the test reads finished flows' final QP state
  net.add_flows({flow(0, 1, 1'000'000, 2 * kSec)});
  net.run(3 * kSec);
  const FlowRecord r = net.record(0);
  ASSERT_TRUE(r.finished());
  EXPECT_EQ(r.fct_ns(), 87'091u);
  EXPECT_EQ(r.finish, 2 * kSec + 87'091 * kNs);
  // standalone FCT (§5.1): base RTT 2 × 2000 + 2 × 80 = 4160 ns; bytes 1,000,000 + 1000 × 48 =
  // 1,048,000 -> 1,048,000 × 8e9 / 100e9 = 83,840 ns; total 88,000 ns.
  EXPECT_EQ(r.ideal_fct_ns, 88'000u);
  // The true ideal FCT (§5.1) is this very timeline: alone on an idle path the flow meets its bound.
  EXPECT_EQ(r.min_fct_ns, 87'091u);
  EXPECT_EQ(r.slowdown(), 1.0);
  const Flow& f = net.flow(0);
  EXPECT_EQ(f.snd_una, 1'000'000u);
  EXPECT_EQ(f.snd_nxt, 1'000'000u);
  EXPECT_EQ(f.rate_bps, k100G);
  EXPECT_EQ(f.win, 0u);  // HAS_WIN 0
  EXPECT_EQ(net.stats().ecn_marks, 0u);
  EXPECT_EQ(net.stats().packets_dropped, 0u);
  EXPECT_EQ(net.stats().retransmit_timeouts, 0u);
  EXPECT_EQ(net.stats().max_rtt_ns, 4160u);
  EXPECT_EQ(net.stats().max_bdp_bytes, 52'000u);
}

// Two hosts joined directly (no switch): one hop. Packet k starts at 83k and reaches host 1 at
// 83k + 83 + 1000; the last (k = 999) at 82,917 + 1083 = 84,000 ns; its 4-ns ACK is back at
// 84,000 + 4 + 1000 = 85,004 ns. Standalone: base RTT 2 × 1000 + 80 = 2080 ns, + 83,840 = 85,920 ns.
TEST(HostModel, DirectHostToHostLink) {
  const SimConfig cfg = ring_dcqcn_config();
  Topology t;
  t.num_nodes = 2;
  t.is_switch = {0, 0};
  t.links = {TopoLink{0, 1, k100G, 1 * kUs, 0, 0}};
  Network net(cfg, t, make_cc(cfg, nullptr));
  net.add_flows({flow(0, 1, 1'000'000, 2 * kSec)});
  net.run(3 * kSec);
  ASSERT_TRUE(net.flow_finished(0));
  EXPECT_EQ(net.record(0).fct_ns(), 85'004u);
  EXPECT_EQ(net.record(0).ideal_fct_ns, 85'920u);
  // Both directions at once: host 0 sends the 3 ACKs of a 2500-B flow 1 -> 0 first (ACK-first
  // scheduling), each delaying flow 0's data by 4 ns: 85,016 ns. The short flow: 83 + 83 + 43 + 1000
  // = 1209 ns to reach host 0 (its ACK goes between two 83-ns data packets: + 1000 + 4 + up to 83).
  Network both(cfg, t, make_cc(cfg, nullptr));
  both.add_flows({flow(0, 1, 1'000'000, 2 * kSec), flow(1, 0, 2500, 2 * kSec)});
  both.run(3 * kSec);
  ASSERT_TRUE(both.flow_finished(1));
  EXPECT_EQ(both.record(0).fct_ns(), 85'016u);
  EXPECT_GE(both.record(1).fct_ns(), 1209u + 1000 + 4);
  EXPECT_LE(both.record(1).fct_ns(), 1209u + 1000 + 4 + 83);
  EXPECT_EQ(both.stats().packets_dropped, 0u);
}

TEST(HostModel, SingleFlowExactFctInPicoseconds) {
  // NS_TRUNCATION 0: Ser(1048 B) = 83,840 ps, Ser(60 B) = 4800 ps. Same timeline:
  // 999 × 83,840 + (83,840 + 1,000,000) × 2 + (4800 + 1,000,000) × 2
  //   = 83,756,160 + 2,167,680 + 2,009,600 = 87,933,440 ps.
  SimConfig cfg = ring_dcqcn_config();
  cfg.ns_truncation = false;
  Network net(cfg, two_hosts(), make_cc(cfg, nullptr));
  net.add_flows({flow(0, 1, 1'000'000, 2 * kSec)});
  net.run(3 * kSec);
  ASSERT_TRUE(net.flow_finished(0));
  EXPECT_EQ(net.record(0).finish - net.flow_info(0).start, 87'933'440);
  EXPECT_EQ(net.record(0).fct_ns(), 87'933u);
}

TEST(HostModel, ShortFlowRemainderPacket) {
  // 2500 B = packets of 1000, 1000, 500 B payload (1048, 1048, 548 B wire).
  // Ser: 83, 83, 548 × 8 / 100 = 43.84 -> 43 ns. The host starts them at 0, 83, 166; they reach the
  // switch at 1083, 1166 and 166 + 43 + 1000 = 1209. Store-and-forward: the short packet catches up
  // and waits behind packet 1, which the switch sends from 1166 to 1249. Packet 2 leaves at 1249 and
  // reaches host 1 at 1249 + 43 + 1000 = 2292; its ACK returns at 2292 + 2008 = 4300 ns.
  const SimConfig cfg = ring_dcqcn_config();
  Network net(cfg, two_hosts(), make_cc(cfg, nullptr));
  net.add_flows({flow(0, 1, 2500)});
  net.run(1 * kSec);
  ASSERT_TRUE(net.flow_finished(0));
  EXPECT_EQ(net.record(0).fct_ns(), 4300u);
  // standalone: 4160 + (2500 + 3 × 48) × 8 / 100 = 4160 + 2644 × 0.08 = 4160 + 211.52 -> 4371 ns.
  EXPECT_EQ(net.record(0).ideal_fct_ns, 4371u);
  // True ideal (§5.1), the larger over the bottleneck hop b: b = 1: 83 + 83 + 43 (hop 1) + 43 (the
  // last packet over hop 2) = 252; b = 2: 83 (first packet over hop 1) + 83 + 83 + 43 = 292. Plus
  // 2 × 1000 of delays and the ACK's 2008: 4300 ns, this run's FCT (the short packet waits at hop 2).
  EXPECT_EQ(net.record(0).min_fct_ns, 4300u);
}

// The true ideal FCT with a bottleneck in the middle: host 0 –100G– switch 3 –25G– switch 4 –100G–
// host 2, 1 µs each. Ser(1048 B): 83 ns at 100 G, 335 ns at 25 G (335.36); Ser(60 B): 4 and 19 ns.
// b = 2 (the 25 G hop) gives the largest: 83 + 1000 × 335 + 83 = 335,166; delays 3000; the ACK
// 3 × 1000 + 4 + 19 + 4 = 3027: 341,193 ns. No run can be faster; this one queues at the 25 G port.
TEST(HostModel, TrueIdealFctOfABottleneckInTheMiddle) {
  SimConfig cfg = ring_dcqcn_config();
  const uint64_t k25G = 25'000'000'000;
  cfg.ecn[k25G] = cfg.ecn.at(k100G);
  Topology t = two_switches();
  t.links[2].rate_bps = k25G;
  Network net(cfg, t, make_cc(cfg, nullptr));
  net.add_flows({flow(0, 2, 1'000'000)});
  net.run(1 * kSec);
  const FlowRecord r = net.record(0);
  ASSERT_TRUE(r.finished());
  EXPECT_EQ(r.min_fct_ns, 341'193u);
  EXPECT_GE(r.fct_ns(), r.min_fct_ns);
  EXPECT_GE(r.slowdown(), 1.0);
}

// ---------------------------------------------------------------------------------------------
// (b) ACK interval and chunk
//
// The receiver resets its milestone to L2_ACK_INTERVAL on every packet, so it ACKs every in-order
// packet once rcv_nxt ≥ L2_ACK_INTERVAL, and otherwise when rcv_nxt % L2_CHUNK_SIZE == 0. Without
// window or marks, earlier ACKs change nothing for the sender; only the ACK of the last packet
// matters, and it is sent at the same instant whenever 1,000,000 ≥ interval or
// 1,000,000 % chunk == 0. So the FCT stays 87,091 ns for:
//   interval 1 (every packet), interval 4000 + chunk 4000 (every packet from the 4th on),
//   interval 10^6 + chunk 4000 (only every 4th packet, and the last),
//   interval 2 × 10^6 + chunk 4000 (only chunk ACKs; 10^6 is a multiple of 4000).
// ---------------------------------------------------------------------------------------------

TEST(HostModel, AckIntervalDoesNotChangeLastAck) {
  SimConfig cfg = ring_dcqcn_config();
  for (auto [interval, chunk] : {std::pair<uint32_t, uint32_t>{1, 4000}, {4000, 4000}, {1'000'000, 4000},
                                 {2'000'000, 4000}}) {
    cfg.l2_ack_interval = interval;
    cfg.l2_chunk_size = chunk;
    EXPECT_EQ(single_flow_fct(cfg), 87'091u) << "L2_ACK_INTERVAL " << interval << " L2_CHUNK_SIZE " << chunk;
  }
}

TEST(HostModel, UnackedTailStallsWithoutRto) {
  // L2_ACK_INTERVAL 2,000,000 > size and L2_CHUNK_SIZE 3000: ACKs only when rcv_nxt % 3000 == 0,
  // the last at 999,000; 1,000,000 % 3000 = 1000, so the last packet is never ACKed. With RTO off
  // (RTO_US 0) nothing more happens (no CNP, so no DCQCN timers): the event queue drains and the
  // run ends long before the stop time, the flow unfinished at snd_una = 999,000.
  SimConfig cfg = ring_dcqcn_config();
  cfg.l2_ack_interval = 2'000'000;
  cfg.l2_chunk_size = 3000;
  cfg.rto_us = 0;
  Network net(cfg, two_hosts(), make_cc(cfg, nullptr));
  net.add_flows({flow(0, 1, 1'000'000)});
  net.run(1 * kSec);
  EXPECT_FALSE(net.flow_finished(0));
  EXPECT_EQ(net.flow(0).snd_una, 999'000u);
  EXPECT_EQ(net.flow(0).snd_nxt, 1'000'000u);
  EXPECT_EQ(net.flow(0).rcv_nxt, 1'000'000u);
  EXPECT_EQ(net.kernel().pending(), 0u);
  // Last event: the ACK of 999,000 (packet 998 arrives at 83 × 998 + 2166 = 85,000 ns) reaches host 0
  // at 85,000 + 2008 = 87,008 ns; the final data packet arrived at host 1 earlier (85,083).
  EXPECT_EQ(net.kernel().now(), 87'008 * kNs);
  EXPECT_EQ(net.stats().retransmit_timeouts, 0u);
}

// ---------------------------------------------------------------------------------------------
// (c) window
// ---------------------------------------------------------------------------------------------

TEST(HostModel, WindowIsMaxBdpWithGlobalTElsePairBdp) {
  SimConfig cfg = ring_dcqcn_config();
  cfg.has_win = true;
  for (bool global_t : {true, false}) {
    cfg.global_t = global_t;
    Network net(cfg, two_switches(), make_cc(cfg, nullptr));
    EXPECT_EQ(net.routing().max_bdp_bytes(), 78'000u);
    EXPECT_EQ(net.routing().max_rtt_ns(), 6240u);
    net.add_flows({flow(0, 1, 1'000'000)});
    net.run(0);  // starts the flow at t = 0
    const Flow& f = net.flow(0);
    ASSERT_TRUE(net.flow_info(0).started);
    if (global_t) {
      EXPECT_EQ(f.win, net.routing().max_bdp_bytes());  // 78,000 B
      EXPECT_EQ(f.base_rtt, 6240 * kNs);
    } else {
      EXPECT_EQ(f.win, 52'000u);  // pair 0→1
      EXPECT_EQ(f.base_rtt, 4160 * kNs);
    }
    EXPECT_EQ(f.window(), f.win);
    // The standalone FCT always uses the pair's RTT: 4160 + 83,840 = 88,000 ns.
    EXPECT_EQ(f.ideal_fct_ns, 88'000u);
  }
  // HAS_WIN 0: no window.
  cfg.has_win = false;
  Network net(cfg, two_switches(), make_cc(cfg, nullptr));
  net.add_flows({flow(0, 2, 1000)});
  net.run(0);
  EXPECT_EQ(net.flow(0).win, 0u);
  EXPECT_FALSE(net.flow(0).window_bound());
}

TEST(HostModel, VarWinAtLineRateEqualsW) {
  SimConfig cfg = ring_dcqcn_config();
  cfg.has_win = true;
  cfg.var_win = true;
  Network net(cfg, two_hosts(), make_cc(cfg, nullptr));
  net.add_flows({flow(0, 1, 1'000'000)});
  net.run(0);
  const Flow& f = net.flow(0);
  EXPECT_EQ(f.win, 52'000u);
  EXPECT_TRUE(f.var_win);
  EXPECT_EQ(f.window(), 52'000u);  // W × 100 G / 100 G
  Flow g = f;
  g.rate_bps = 25'000'000'000;
  EXPECT_EQ(g.window(), 13'000u);  // W × 25/100
  g.rate_bps = 1;
  EXPECT_EQ(g.window(), 1u);  // 52,000 / 1e11 -> 0 -> at least 1 B
}

TEST(HostModel, BdpWindowNeverBindsOnIdlePath) {
  // W = 52,000 B (two_hosts: maxBdp = pair BDP). Data packet k is sent at 83k; its ACK returns
  // 2166 + 2008 = 4174 ns later (= 83 × 50 + 24, so never at a send instant). When packet k is
  // about to be sent at 83k, the ACKs of packets j with 83j + 4174 ≤ 83k, i.e. j ≤ k − 51, are in:
  // snd_una = 1000 (k − 50) and in-flight = snd_nxt − snd_una = 1000k − 1000(k − 50) = 50,000 B
  // < 52,000 (before the first ACK, k ≤ 50: in-flight ≤ 50,000 too). The window never binds, so
  // the FCT equals the window-less 87,091 ns.
  SimConfig cfg = ring_dcqcn_config();
  cfg.has_win = true;
  cfg.global_t = true;
  EXPECT_EQ(single_flow_fct(cfg), 87'091u);
  cfg.global_t = false;
  EXPECT_EQ(single_flow_fct(cfg), 87'091u);
}

// ---------------------------------------------------------------------------------------------
// (d) loss: go-back-N with NACKs and the RTO
// ---------------------------------------------------------------------------------------------

TEST(HostModel, LossyLinkGoBackNFinishes) {
  // Both links drop 1 % of the packets each receiver sees (data, ACKs, NACKs): about 20 of the
  // 2000 data-packet hops are lost; NACKs (go-back-N) and the RTO (1 ms here) recover, and every
  // byte is acknowledged.
  SimConfig cfg = ring_dcqcn_config();
  cfg.rto_us = 1000;
  Network net(cfg, two_hosts(0.01), make_cc(cfg, nullptr));
  net.keep_finished_state(true);  // the test reads finished flows' final QP state
  EXPECT_DOUBLE_EQ(net.ports()[0].error_rate, 0.01);
  EXPECT_DOUBLE_EQ(net.ports()[3].error_rate, 0.01);
  net.add_flows({flow(0, 1, 1'000'000)});
  net.run(1 * kSec);
  EXPECT_GT(net.stats().packets_dropped, 0u);
  ASSERT_TRUE(net.flow_finished(0));
  EXPECT_EQ(net.flow(0).snd_una, 1'000'000u);
  EXPECT_EQ(net.flow(0).rcv_nxt, 1'000'000u);
  // Losses and retransmissions can only make it slower than the loss-free 87,091 ns.
  EXPECT_GT(net.record(0).fct_ns(), 87'091u);
}

// Regression: when the ACK of the last packet was lost, the RTO resent the tail but the receiver
// dropped the duplicates silently (as the reference does), so no ACK was ever sent again and the
// flow stalled (seed 112 of 1..200 ended with snd_una = 999,000, rcv_nxt = 1,000,000, 999 RTOs).
// Duplicates resent after an RTO are now ACKed. Every run with 1 % loss per link and a 1 ms RTO
// must finish.
TEST(HostModel, RtoRecoversALostFinalAck) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    SimConfig cfg = ring_dcqcn_config();
    cfg.rto_us = 1000;
    cfg.seed = seed;
    Network net(cfg, two_hosts(0.01), make_cc(cfg, nullptr));
    net.keep_finished_state(true);  // the test reads finished flows' final QP state
    net.add_flows({flow(0, 1, 1'000'000)});
    net.run(1 * kSec);
    const Flow& f = net.flow(0);
    EXPECT_TRUE(net.flow_finished(0)) << "seed " << seed << ": snd_una " << f.snd_una << ", rcv_nxt " << f.rcv_nxt
                              << ", " << net.stats().retransmit_timeouts << " RTOs";
  }
}

TEST(HostModel, ErrorRatePerLinkAppliesToLinksWithoutOwnRate) {
  SimConfig cfg = ring_dcqcn_config();
  cfg.error_rate_per_link = 0.25;
  Topology t = two_hosts();
  t.links[1].error_rate = 0.5;  // its own rate overrides ERROR_RATE_PER_LINK
  Network net(cfg, t, make_cc(cfg, nullptr));
  EXPECT_DOUBLE_EQ(net.ports()[0].error_rate, 0.25);  // link 0 (host 0 – switch), both ends
  EXPECT_DOUBLE_EQ(net.ports()[2].error_rate, 0.25);
  EXPECT_DOUBLE_EQ(net.ports()[1].error_rate, 0.5);   // link 1 (host 1 – switch), both ends
  EXPECT_DOUBLE_EQ(net.ports()[3].error_rate, 0.5);
}

TEST(HostModel, LossyLinkWithoutRtoTerminates) {
  // RTO off: a lost tail packet (or lost last NACK) may stall a flow forever, as in the
  // reference. The run must still end (no hang): either the event queue drains or the stop time
  // is reached. Whatever happened, the sender's state is consistent.
  for (uint64_t seed : {1, 2, 3, 4, 5}) {
    SimConfig cfg = ring_dcqcn_config();
    cfg.rto_us = 0;
    cfg.seed = seed;
    Network net(cfg, two_hosts(0.05), make_cc(cfg, nullptr));
    net.keep_finished_state(true);  // a seed whose flow finishes is checked on its final state
    net.add_flows({flow(0, 1, 200'000)});
    net.run(100 * kMs);
    EXPECT_LE(net.kernel().now(), 100 * kMs);
    EXPECT_GT(net.stats().packets_dropped, 0u) << "seed " << seed;
    const Flow& f = net.flow(0);
    EXPECT_EQ(net.stats().retransmit_timeouts, 0u);
    if (net.flow_finished(0)) {
      EXPECT_EQ(f.snd_una, 200'000u);
    } else {
      EXPECT_LT(f.snd_una, 200'000u);
      EXPECT_EQ(net.kernel().pending(), 0u) << "a stalled flow without RTO leaves no events";
    }
  }
}

// ---------------------------------------------------------------------------------------------
// (e) flow start order and source ports
// ---------------------------------------------------------------------------------------------

TEST(HostModel, SourcePortsPerPairInFileOrderAndStartsByTime) {
  // sport = 10000 + k for the k-th flow of the same ordered (src, dst) pair, in the order the
  // flows are given (not their start order); other pairs count separately.
  const SimConfig cfg = ring_dcqcn_config();
  Network net(cfg, two_switches(), make_cc(cfg, nullptr));
  net.add_flows({flow(0, 1, 1000, 10 * kUs), flow(0, 1, 1000, 5 * kUs), flow(1, 0, 1000, 0),
                 flow(0, 2, 1000, 0), flow(0, 1, 1000, 20 * kUs)});
  EXPECT_EQ(net.record(0).sport, 10000u);
  EXPECT_EQ(net.record(1).sport, 10001u);
  EXPECT_EQ(net.record(2).sport, 10000u);  // pair 1→0
  EXPECT_EQ(net.record(3).sport, 10000u);  // pair 0→2
  EXPECT_EQ(net.record(4).sport, 10002u);
  for (uint32_t i = 0; i < 5; ++i) EXPECT_EQ(net.record(i).dport, 100u);
  // A later add_flows continues the numbering.
  const uint32_t first = net.add_flows({flow(0, 1, 1000, 30 * kUs)});
  EXPECT_EQ(first, 5u);
  EXPECT_EQ(net.record(5).sport, 10003u);
  // Flows start at their start times, whatever their order in the list.
  net.run(4 * kUs);
  EXPECT_TRUE(net.flow_info(2).started);
  EXPECT_TRUE(net.flow_info(3).started);
  EXPECT_FALSE(net.flow_info(1).started);
  EXPECT_FALSE(net.flow_info(0).started);
  net.run(5 * kUs);
  EXPECT_TRUE(net.flow_info(1).started);
  EXPECT_FALSE(net.flow_info(0).started);
  EXPECT_EQ(net.flow_info(1).start, 5 * kUs);
  net.run(1 * kSec);
  for (uint32_t i = 0; i < 6; ++i) EXPECT_TRUE(net.flow_finished(i)) << i;
  // Each flow is one 1048-B packet and meets no other traffic on its links:
  //   2 hops (0→1, 1→0): (83 + 1000) × 2 + (4 + 1000) × 2 = 2166 + 2008 = 4174 ns;
  //   3 hops (0→2): 1083 × 3 + 1004 × 3 = 3249 + 3012 = 6261 ns.
  // At t = 0 flow 2 (1→0) and flow 3 (0→2) start on different NICs; host 0 sends flow 2's ACK at
  // 2166 ns, long after its NIC finished flow 3's packet (83 ns). The 0→1 flows start 5 µs apart.
  EXPECT_EQ(net.record(0).fct_ns(), 4174u);
  EXPECT_EQ(net.record(1).fct_ns(), 4174u);
  EXPECT_EQ(net.record(4).fct_ns(), 4174u);
  EXPECT_EQ(net.record(5).fct_ns(), 4174u);
  EXPECT_EQ(net.record(3).fct_ns(), 6261u);
  EXPECT_EQ(net.record(2).fct_ns(), 4174u);
}

// A workload driver injects each flow when its predecessor finishes (what collectives need).
// Each 1 MB flow runs alone on the idle host–switch–host path, so each takes the single-flow
// FCT derived above, 87,091 ns, and starts when the previous one's last ACK arrived.
TEST(HostModel, InjectedChainStartsEachFlowWhenThePreviousFinishes) {
  struct Driver final : NetObserver {
    Network* net = nullptr;
    int remaining = 2;
    void flow_finished(const FlowRecord& r) override {
      if (remaining-- > 0) net->inject_flow(flow(0, 1, 1'000'000));
    }
  } driver;
  const SimConfig cfg = ring_dcqcn_config();
  Network net(cfg, two_hosts(), make_cc(cfg, nullptr));
  driver.net = &net;
  net.set_observer(&driver);
  net.add_flows({flow(0, 1, 1'000'000, 2 * kSec)});
  net.run(3 * kSec);
  ASSERT_EQ(net.flow_count(), 3u);
  for (uint32_t i = 0; i < 3; ++i) {
    const FlowRecord r = net.record(i);
    ASSERT_TRUE(r.finished()) << i;
    EXPECT_EQ(r.start, 2 * kSec + static_cast<Time>(i) * 87'091 * kNs) << i;
    EXPECT_EQ(r.fct_ns(), 87'091u) << i;
    EXPECT_EQ(r.sport, 10000u + i) << i;  // k-th flow of the pair: 10000 + k
    EXPECT_EQ(r.ideal_fct_ns, 88'000u) << i;
  }
}
