// The switch model (docs/network-model.md §10–§11): shared-buffer PFC thresholds, headroom and α shift;
// ECN marking end to end in a 2-to-1 incast; PFC pause/resume end to end with a small buffer.
#include <gtest/gtest.h>

#include <algorithm>
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

constexpr uint64_t k400G = 400'000'000'000ull;

/// The DCQCN config of the reference ring runs (run.py "dcqcn" at 100 G: ENABLE_QCN 1,
/// payload 1000, L2_ACK_INTERVAL 1, L2_CHUNK_SIZE 4000, HAS_WIN 0, ACK_HIGH_PRIO 1, BUFFER 32 MiB,
/// KMIN/KMAX 400/1600 KB at 100 G, 1600/6400 KB at 400 G, PMAX 0.2).
SimConfig ring_dcqcn_config() {
  return read_hpcc_config(std::string(WH_TEST_DATA) + "/refruns/hpcc-ring16-fattree-k4-1MB/config_dcqcn.txt");
}



struct PfcLog final : NetObserver {
  std::vector<PfcRecord> recs;
  std::vector<FlowRecord> done;
  void pfc(const PfcRecord& p) override { recs.push_back(p); }
  void flow_finished(const FlowRecord& f) override { done.push_back(f); }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// (a) MMU parameters
// ---------------------------------------------------------------------------------------------

TEST(SwitchMmu, PfcThresholdOf16Port100GSwitch) {
  SimConfig cfg = ring_dcqcn_config();
  const Topology topo = star(16);
  const Node* sw;
  {
    cfg.buffer_size_mb = 32;
    Network net(cfg, topo, make_cc(cfg, nullptr));
    sw = &net.nodes()[16];
    ASSERT_TRUE(sw->is_switch);
    ASSERT_EQ(sw->num_ports, 16u);
    // B = 32 × 2^20 = 33,554,432; Σheadroom = 16 × 37,500 = 600,000; Σreserve = 16 × 4096 = 65,536.
    EXPECT_EQ(sw->buffer_bytes, 33'554'432u);
    EXPECT_EQ(sw->total_hdrm, 600'000u);
    EXPECT_EQ(sw->total_rsrv, 65'536u);
    EXPECT_EQ(sw->shared_used, 0u);
    for (uint32_t p = sw->first_port; p < sw->first_port + sw->num_ports; ++p) {
      // Headroom = 100e9 × 1000 ns / 8 / 1e9 × 3 = 12,500 × 3 = 37,500 B.
      EXPECT_EQ(net.ports()[p].headroom, 37'500u);
      EXPECT_EQ(net.ports()[p].pfc_shift, 3u);  // port rate = NIC rate: α = 1/8
      // (33,554,432 − 600,000 − 65,536) >> 3 = 32,888,896 / 8 = 4,111,112 B (docs/network-model.md §11.1).
      EXPECT_EQ(net.switch_model().pfc_threshold(p), 4'111'112u);
    }
  }
  {
    cfg.buffer_size_mb = 2;
    Network net(cfg, topo, make_cc(cfg, nullptr));
    // (2,097,152 − 665,536) >> 3 = 1,431,616 / 8 = 178,952 B.
    for (uint32_t p = net.nodes()[16].first_port; p < net.nodes()[16].first_port + 16; ++p)
      EXPECT_EQ(net.switch_model().pfc_threshold(p), 178'952u);
  }
  {
    // A buffer smaller than Σheadroom + Σreserve wraps in unsigned 32-bit arithmetic, as in the
    // reference: BUFFER_SIZE 0 -> (2^32 − 665,536) >> 3 = 4,294,301,760 / 8 = 536,787,720 B.
    cfg.buffer_size_mb = 0;
    Network net(cfg, topo, make_cc(cfg, nullptr));
    EXPECT_EQ(net.switch_model().pfc_threshold(net.nodes()[16].first_port), 536'787'720u);
  }
}

TEST(SwitchMmu, FasterPortGetsSmallerShiftAndBiggerHeadroom) {
  // Hosts 0 and 1 (100 G NICs), switches 2 and 3 joined by a 400 G link:
  //   link 0: 0–2 100 G, link 1: 2–3 400 G, link 2: 1–3 100 G.
  // Ports: host 0 = 0, host 1 = 1, switch 2 = {2 (to 0), 3 (to 3)}, switch 3 = {4 (to 2), 5 (to 1)}.
  SimConfig cfg = ring_dcqcn_config();
  cfg.buffer_size_mb = 32;
  Topology t;
  t.num_nodes = 4;
  t.is_switch = {0, 0, 1, 1};
  t.links = {TopoLink{0, 2, k100G, 1 * kUs, 0, 0}, TopoLink{2, 3, k400G, 1 * kUs, 0, 0},
             TopoLink{1, 3, k100G, 1 * kUs, 0, 0}};
  Network net(cfg, t, make_cc(cfg, nullptr));
  const auto& P = net.ports();
  ASSERT_EQ(P[3].node, 2u);
  ASSERT_EQ(P[3].rate_bps, k400G);
  // NIC rate = 100 G (host 0's first link). 400 G: shift 3 -> 2 (200 G) -> 1 (100 G): α = 1/2.
  EXPECT_EQ(P[3].pfc_shift, 1u);
  EXPECT_EQ(P[4].pfc_shift, 1u);
  EXPECT_EQ(P[2].pfc_shift, 3u);
  EXPECT_EQ(P[5].pfc_shift, 3u);
  // Headroom 400 G, 1 µs: 400e9 × 1000 / 8 / 1e9 × 3 = 50,000 × 3 = 150,000 B.
  EXPECT_EQ(P[3].headroom, 150'000u);
  EXPECT_EQ(P[2].headroom, 37'500u);
  // Switch 2: Σheadroom = 187,500, Σreserve = 8192; free = 33,554,432 − 195,692 = 33,358,740.
  EXPECT_EQ(net.nodes()[2].total_hdrm, 187'500u);
  EXPECT_EQ(net.switch_model().pfc_threshold(3), 16'679'370u);  // 33,358,740 >> 1
  EXPECT_EQ(net.switch_model().pfc_threshold(2), 4'169'842u);   // 33,358,740 >> 3 = 4,169,842.5 -> 4,169,842
  // ECN thresholds come from the maps by port rate (K × 1000 B).
  EXPECT_EQ(P[3].kmin, 1'600'000u);
  EXPECT_EQ(P[3].kmax, 6'400'000u);
  EXPECT_EQ(P[2].kmin, 400'000u);
  EXPECT_EQ(P[2].kmax, 1'600'000u);
  EXPECT_DOUBLE_EQ(P[2].pmax, 0.2);
}

// ---------------------------------------------------------------------------------------------
// (b) ECN end to end: 2-to-1 incast of 1 MB flows at line rate through one 100 G switch.
//
// Hosts 0 and 1 send 1000 packets of 1048 B each to host 2 (switch 3). Ser(1048 B) = 83 ns,
// Ser(60 B ACK) = 4 ns, links 1 µs. Host packet k (k = 0..999) starts at 83k, reaches the switch
// at T_k = 83k + 83 + 1000 = 1083 + 83k. Both hosts' packet k arrive at T_k; the arrival owned by
// port 0 (host 0's NIC) runs before port 1's, and both before the egress TxDone (switch port 5).
// The egress to host 2 is busy from T_0 on: A0 leaves at once, then one packet per 83 ns in the
// order A0 B0 A1 B1 ...; egress packet i starts at 1083 + 83i.
//   A999 = i 1998: starts 166,917, reaches host 2 at 166,917 + 83 + 1000 = 168,000;
//   B999 = i 1999: starts 167,000, reaches host 2 at 168,083.
// The ACK (host 2's NIC is idle: 4 ns of ACK per 83 ns) takes 4 + 1000 + 4 + 1000 = 2008 ns
// (the switch's ports to hosts 0 and 1 carry only these ACKs, one per 166 ns).
//   FCT(0) = 168,000 + 2008 = 170,008 ns; FCT(1) = 168,083 + 2008 = 170,091 ns.
// The queue never exceeds ~1000 packets (≈ 1 MB, ≈ 0.5 MB per ingress), far below the PFC
// threshold (33,554,432 − 3 × 37,500 − 3 × 4096) >> 3 = 4,178,705 B: no PFC.
// ---------------------------------------------------------------------------------------------

TEST(SwitchEcn, IncastWithoutQcnHasNoMarksAndKeepsLineRate) {
  SimConfig cfg = ring_dcqcn_config();  // DCQCN
  cfg.enable_qcn = false;
  Network net(cfg, star(3), make_cc(cfg, nullptr));
  net.keep_finished_state(true);  // the test reads finished flows' final QP state
  PfcLog log;
  net.set_observer(&log);
  net.add_flows({flow(0, 2, 1'000'000), flow(1, 2, 1'000'000)});
  net.run(1 * kSec);
  EXPECT_EQ(net.switch_model().pfc_threshold(3), 4'178'705u);
  EXPECT_EQ(net.stats().ecn_marks, 0u);
  EXPECT_EQ(net.stats().packets_dropped, 0u);
  EXPECT_TRUE(log.recs.empty());
  ASSERT_TRUE(net.flow_finished(0));
  ASSERT_TRUE(net.flow_finished(1));
  EXPECT_EQ(net.record(0).fct_ns(), 170'008u);
  EXPECT_EQ(net.record(1).fct_ns(), 170'091u);
  for (uint32_t i = 0; i < 2; ++i) {
    const Flow& f = net.flow(i);
    EXPECT_EQ(f.rate_bps, k100G);                       // never cut
    EXPECT_TRUE(std::get<DcqcnState>(f.cc).first_cnp);  // no CNP ever arrived
    EXPECT_EQ(f.snd_una, 1'000'000u);
  }
  ASSERT_EQ(log.done.size(), 2u);
  EXPECT_EQ(log.done[0].id, 0u);  // completion order
  EXPECT_EQ(log.done[1].id, 1u);
}

TEST(SwitchEcn, MarksEveryPacketLeavingANonEmptyQueueWhenKminEqualsKmax) {
  // ENABLE_QCN 1, KMIN = KMAX = 1 (× 1000 B = 1000 B), no CC (CC_MODE 0, line rate): the timing
  // is the one above, and a packet is marked iff the egress class holds > 1000 B after it leaves,
  // i.e. at least one more packet (1048 B) — there is no random draw (KMIN < q ≤ KMAX is empty).
  // Egress to host 2: i = 0 (A0) leaves on arrival with an empty queue: not marked.
  //   i = k, 1 ≤ k ≤ 999, at T_k after both arrivals: 2(k+1) arrived, k+1 left -> k+1 ≥ 2 remain: marked.
  //   i ≥ 1000: 2000 − (i+1) remain: marked for i ≤ 1998, not for i = 1999.
  // ACKs toward hosts 0/1 always leave an empty queue. Marks = 1998.
  SimConfig cfg = ring_dcqcn_config();
  cfg.enable_qcn = true;
  cfg.cc_mode = 0;
  cfg.ecn[k100G] = EcnThresholds{1000, 1000, 0.2};
  std::string warning;
  Network net(cfg, star(3), make_cc(cfg, &warning));
  EXPECT_FALSE(warning.empty());  // CC_MODE 0 runs without CC
  net.add_flows({flow(0, 2, 1'000'000), flow(1, 2, 1'000'000)});
  net.run(1 * kSec);
  EXPECT_EQ(net.stats().ecn_marks, 1998u);
  // Marks do not change the timing without CC.
  EXPECT_EQ(net.record(0).fct_ns(), 170'008u);
  EXPECT_EQ(net.record(1).fct_ns(), 170'091u);
}

TEST(SwitchEcn, DcqcnReactsToMarksInIncast) {
  // Same incast with DCQCN and KMIN = KMAX = 1000 B. The first marked packet is B0 (egress i = 1,
  // starts at T_1 = 1166): it reaches host 2 at 1166 + 83 + 1000 = 2249, its flagged ACK reaches
  // host 1 at 2249 + 2008 = 4257 ns (first CNP of flow 1: α = 1, no cut). Flow 0's first marked
  // packet is A1 (i = 2, T_2 = 1249): CNP at 1249 + 1083 + 2008 = 4340 ns.
  // Flagged ACKs then arrive every 166 ns, so every α update (each 1 µs) has a CNP: α stays 1.
  // First decrease check at CNP + 4 µs + 1 ns: flow 1 at 8258 ns, flow 0 at 8341 ns,
  // Rc = 100e9 × (1 − 1/2) = 50e9.
  SimConfig cfg = ring_dcqcn_config();
  cfg.enable_qcn = true;
  cfg.ecn[k100G] = EcnThresholds{1000, 1000, 0.2};
  Network net(cfg, star(3), make_cc(cfg, nullptr));
  net.add_flows({flow(0, 2, 1'000'000), flow(1, 2, 1'000'000)});
  net.run(4256 * kNs);
  EXPECT_TRUE(std::get<DcqcnState>(net.flow(1).cc).first_cnp);
  net.run(4257 * kNs);
  EXPECT_FALSE(std::get<DcqcnState>(net.flow(1).cc).first_cnp);
  EXPECT_TRUE(std::get<DcqcnState>(net.flow(0).cc).first_cnp);
  net.run(4340 * kNs);
  EXPECT_FALSE(std::get<DcqcnState>(net.flow(0).cc).first_cnp);
  net.run(8257 * kNs);
  EXPECT_EQ(net.flow(1).rate_bps, k100G);
  net.run(8258 * kNs);
  EXPECT_EQ(net.flow(1).rate_bps, 50'000'000'000u);
  EXPECT_EQ(std::get<DcqcnState>(net.flow(1).cc).alpha, 1.0);
  EXPECT_EQ(net.flow(0).rate_bps, k100G);
  net.run(8341 * kNs);
  EXPECT_EQ(net.flow(0).rate_bps, 50'000'000'000u);
  net.run(1 * kSec);
  EXPECT_GT(net.stats().ecn_marks, 0u);
  EXPECT_EQ(net.stats().packets_dropped, 0u);
  ASSERT_TRUE(net.flow_finished(0));
  ASSERT_TRUE(net.flow_finished(1));
  // Repeated cuts leave the bottleneck under-used: both finish later than at line rate
  // (170,008 / 170,091 ns above).
  EXPECT_GT(net.record(0).fct_ns(), 170'008u);
  EXPECT_GT(net.record(1).fct_ns(), 170'091u);
}

// ---------------------------------------------------------------------------------------------
// (c) PFC end to end: 2-to-1 incast of 4 MB flows, BUFFER_SIZE 1 MiB, no ECN.
//
// Buffer 1,048,576; Σheadroom + Σreserve = 3 × (37,500 + 4096) = 124,788; empty-buffer threshold
// (1,048,576 − 124,788) >> 3 = 923,788 / 8 = 115,473 B. The arrivals are those of the incast above
// (A_k then B_k at T_k = 1083 + 83k, then one egress departure, alternating A, B). Before the
// departure at T_k, ingress A holds k − ⌊(k−1)/2⌋ packets after A_k arrives and ingress B holds
// k + 1 − ⌊k/2⌋ after B_k arrives. Stepping k (shared = ingress − 4096 per port, threshold =
// (923,788 − Σshared) >> 3 after each admission):
//   k = 183, A_183: A = 92 pkts = 96,416 B, shared 92,320; B before = 92 pkts, shared 92,320;
//     threshold = (923,788 − 184,640) >> 3 = 92,393 > 92,320: no pause.
//   k = 183, B_183: B would be 93 pkts = 97,464 B, 97,464 − 4096 = 93,368 > 92,393 -> headroom:
//     PAUSE to host 1 at T_183 = 1083 + 15,189 = 16,272 ns. The switch port toward host 1 is idle
//     (its ACKs occupy [T_j + 2087 + …, +4) windows that never contain a T_k), the 43-B frame takes
//     3 ns: host 1 logs PAUSE at 16,272 + 3 + 1000 = 17,275 ns.
//   The departure at T_183 is B's (odd index) and comes out of B's headroom (no resume: shared
//   92,320 + 3072 > 92,393). k = 184, A_184: A = 97,464 B, 93,368 > 92,393 -> headroom:
//     PAUSE to host 0 at T_184 = 16,355 ns, logged by host 0 at 17,358 ns.
// Host 1 keeps sending the packet in progress at 17,275 (started 83 × 208 = 17,264): packets
// 184..208 (25 × 1048 = 26,200 B) land in headroom at most, < 37,500 B: no drop.
// The egress queue holds ~180 packets when PFC starts and resumes arrive ~2 µs after the RESUME is
// sent while ~90 kB per port are still queued, so the egress never idles: it sends the 8000 data
// packets back to back from T_0; the last leaves at 1083 + 83 × 7999 = 665,000 ns, reaches host 2
// at 666,083, and its ACK reaches the sender at 668,091 ns = the larger FCT.
// ---------------------------------------------------------------------------------------------

// The same incast with PAUSE_TIME 0 (every PFC frame a RESUME: nothing is ever paused): the
// ingress queues outgrow headroom and shared buffer, and the switch drops. Every drop is a buffer
// drop; go-back-N and the RTO resend them, so retransmissions are at least the drops.
TEST(SwitchPfc, WithoutPausesTheSmallBufferDropsAndCountsThemAsBufferDrops) {
  SimConfig cfg = ring_dcqcn_config();
  cfg.enable_qcn = false;
  cfg.buffer_size_mb = 1;
  cfg.pause_time_us = 0;
  cfg.rto_us = 100;
  Network net(cfg, star(3), make_cc(cfg, nullptr));
  net.add_flows({flow(0, 2, 4'000'000), flow(1, 2, 4'000'000)});
  net.run(1 * kSec);
  const RunStats s = net.stats();
  EXPECT_GT(s.packets_dropped, 0u);
  EXPECT_EQ(s.drops_buffer, s.packets_dropped);
  EXPECT_EQ(s.drops_loss + s.drops_link_down, 0u);
  EXPECT_GE(s.retransmitted_packets, s.drops_buffer);
  EXPECT_EQ(s.retransmitted_bytes, 1000 * s.retransmitted_packets);  // all full packets of 1000 B
  ASSERT_TRUE(net.flow_finished(0));
  ASSERT_TRUE(net.flow_finished(1));
}

TEST(SwitchPfc, IncastWithSmallBufferPausesSendersWithoutDrops) {
  SimConfig cfg = ring_dcqcn_config();
  cfg.enable_qcn = false;
  cfg.buffer_size_mb = 1;
  Network net(cfg, star(3), make_cc(cfg, nullptr));
  net.keep_finished_state(true);  // the test reads finished flows' final QP state
  EXPECT_EQ(net.switch_model().pfc_threshold(3), 115'473u);
  PfcLog log;
  net.set_observer(&log);
  net.add_flows({flow(0, 2, 4'000'000), flow(1, 2, 4'000'000)});
  net.run(1 * kSec);
  EXPECT_EQ(net.stats().packets_dropped, 0u);
  ASSERT_TRUE(net.flow_finished(0));
  ASSERT_TRUE(net.flow_finished(1));
  EXPECT_EQ(net.flow(0).snd_una, 4'000'000u);
  EXPECT_EQ(net.flow(1).snd_una, 4'000'000u);
  EXPECT_EQ(std::max(net.record(0).fct_ns(), net.record(1).fct_ns()), 668'091u);

  ASSERT_GE(log.recs.size(), 4u);
  // The first two frames are PAUSEs at the two senders, no later than 17,358 ns (the exact order
  // is checked by FirstPausesFollowTheReferenceSameInstantOrder below).
  EXPECT_EQ(log.recs[0].type, 1u);
  EXPECT_EQ(log.recs[1].type, 1u);
  EXPECT_NE(log.recs[0].node, log.recs[1].node);
  EXPECT_LE(log.recs[1].time, 17'358 * kNs);
  EXPECT_GE(log.recs[0].time, 17'275 * kNs);
  // Every frame is received by a sender's NIC (hosts never send PFC, host 2's ingress only carries
  // ACKs), on interface 1, class 3; per host they alternate PAUSE, RESUME, ... and end resumed.
  int last[2] = {0, 0};
  int pauses[2] = {0, 0};
  Time prev = 0;
  for (const PfcRecord& r : log.recs) {
    EXPECT_GE(r.time, prev);
    prev = r.time;
    EXPECT_EQ(r.node_type, 0u);
    ASSERT_LT(r.node, 2u);
    EXPECT_EQ(r.if_index, 1u);
    EXPECT_EQ(r.cls, 3u);
    EXPECT_NE(r.type, last[r.node]) << "PAUSE and RESUME must alternate at node " << r.node;
    last[r.node] = r.type;
    pauses[r.node] += r.type;
  }
  EXPECT_EQ(last[0], 0);
  EXPECT_EQ(last[1], 0);
  EXPECT_GE(pauses[0], 1);
  EXPECT_GE(pauses[1], 1);
  // Nothing is left paused or buffered at the end.
  for (size_t i = 0; i < net.ports().size(); ++i) {
    const Port& p = net.ports()[i];
    EXPECT_FALSE(p.paused[3]);
    EXPECT_EQ(p.bytes_total, 0u);
    EXPECT_EQ(p.hdrm_bytes[3], 0u);
    EXPECT_EQ(p.ingress_bytes[3], 0u);
  }
  EXPECT_EQ(net.nodes()[3].shared_used, 0u);
}

// Regression (found when switch ports began to schedule their end-of-transmission lazily): a port
// whose transmission ends exactly when packets arrive must queue every arrival caused earlier before
// it dequeues, as in the reference, where those arrivals were scheduled before its
// TransmitComplete; its ECN decision and PFC accounting then see them. From the derivation above
// the previous test: B_183 goes to headroom at T_183 = 16,272 ns, so host 1 logs PAUSE at
// 17,275 ns, then host 0 at 17,358 ns (the faulty order gave both at 17,358 ns, host 0 first).
TEST(SwitchPfc, FirstPausesFollowTheReferenceSameInstantOrder) {
  SimConfig cfg = ring_dcqcn_config();
  cfg.enable_qcn = false;
  cfg.buffer_size_mb = 1;
  Network net(cfg, star(3), make_cc(cfg, nullptr));
  PfcLog log;
  net.set_observer(&log);
  net.add_flows({flow(0, 2, 4'000'000), flow(1, 2, 4'000'000)});
  net.run(1 * kSec);
  ASSERT_GE(log.recs.size(), 2u);
  EXPECT_EQ(log.recs[0].time, 17'275 * kNs);  // 16,272 + 3 (43-B frame) + 1000
  EXPECT_EQ(log.recs[0].node, 1u);
  EXPECT_EQ(log.recs[0].type, 1u);
  EXPECT_EQ(log.recs[1].time, 17'358 * kNs);  // 16,355 + 3 + 1000
  EXPECT_EQ(log.recs[1].node, 0u);
  EXPECT_EQ(log.recs[1].type, 1u);
}

// Same discrepancy seen through ECN. Incast of section (b), no CC, KMIN = KMAX = 1048 B: a packet
// is marked iff at least 2 packets (2096 B > 1048) remain in the egress class after it leaves.
// Reference order (both arrivals at T_k, then the departure):
//   i = 0: A0 leaves on arrival, nothing queued: no mark.
//   i = k in 1..999: k + 1 packets remain: marked for all 999.
//   i in 1000..1999: 1999 − i remain: marked for i ≤ 1997: 998.  Total 1997.
// Current code (A_k, departure, B_k): i = k in 1..999 leaves k packets: marked for k ≥ 2 (998);
// i ≥ 1000 as above (998): total 1996.
TEST(SwitchEcn, SimultaneousArrivalsAreQueuedBeforeTheDeparture) {
  SimConfig cfg = ring_dcqcn_config();
  cfg.enable_qcn = true;
  cfg.cc_mode = 0;
  cfg.ecn[k100G] = EcnThresholds{1048, 1048, 0.2};
  Network net(cfg, star(3), make_cc(cfg, nullptr));
  net.add_flows({flow(0, 2, 1'000'000), flow(1, 2, 1'000'000)});
  net.run(1 * kSec);
  EXPECT_EQ(net.stats().ecn_marks, 1997u);
}
