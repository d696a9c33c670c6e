// Paths through the network model that the other suites do not pin down (docs/network-model.md §8–§12):
// NIC round robin over several QPs and QP compaction, ACK_HIGH_PRIO against PFC, NACK rules
// (go-back-N, 500 µs holdoff, back-to-zero), LINK_DOWN with a surviving path, multi-NIC hosts and
// parallel links between two switches.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "wormhole/cc/factory.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/io/results_writer.h"
#include "wormhole/io/topology.h"
#include "wormhole/net/hash.h"
#include "wormhole/net/network.h"

#include "net_fixtures.h"

using namespace wh;
using namespace wh::test;

namespace {

constexpr uint64_t k25G = 25'000'000'000ull;

/// The reference ring runs' DCQCN config (ENABLE_QCN 1, HAS_WIN 0, L2_ACK_INTERVAL 1,
/// L2_CHUNK_SIZE 4000, ACK_HIGH_PRIO 1, payload 1000, 32 MiB, 100 G ECN 400/1600 KB).
SimConfig ring_dcqcn_config() {
  return read_hpcc_config(std::string(WH_TEST_DATA) + "/refruns/hpcc-ring16-fattree-k4-1MB/config_dcqcn.txt");
}



struct PfcLog final : NetObserver {
  std::vector<PfcRecord> recs;
  void pfc(const PfcRecord& p) override { recs.push_back(p); }
};

/// Wraps a CC and records every ACK/NACK it is given (i.e. every ACK/NACK that reaches a sender
/// whose flow is not finished by it), with the sender state after go-back-N.
struct RecordingCc final : CongestionControl {
  struct Ev {
    Time t;
    uint32_t id;
    bool nack;
    uint64_t seq, snd_nxt, snd_una;
  };
  std::unique_ptr<CongestionControl> inner;
  std::vector<Ev> evs;
  explicit RecordingCc(std::unique_ptr<CongestionControl> c) : inner(std::move(c)) {}
  const char* name() const override { return inner->name(); }
  IntMode int_mode() const override { return inner->int_mode(); }
  void on_start(uint32_t id, Flow& f, CcHost& h) override { inner->on_start(id, f, h); }
  void on_ack(uint32_t id, Flow& f, const Packet& a, CcHost& h) override {
    evs.push_back({h.now(), id, a.type == PktType::Nack, a.seq, f.snd_nxt, f.snd_una});
    inner->on_ack(id, f, a, h);
  }
  void on_timer(uint32_t id, Flow& f, int slot, CcHost& h) override { inner->on_timer(id, f, slot, h); }
};

}  // namespace

// =============================================================================================
// 1. NIC round robin over several QPs
// =============================================================================================
//
// star(4), host 0 sends flow A (→ host 1) and flow B (→ host 2), both at t = 0, n = 40 packets
// of 1000 B (1048 B wire, Ser 83 ns; ACK 60 B, Ser 4 ns). Both QPs are created at t = 0 (A first,
// file order); A sends packet slot 0 at 0 (its QP start triggers the NIC), B's start finds the NIC
// busy. At each TxDone (83 j) the round robin starts after the last QP served and both are
// eligible (next_avail = 83 ns after their own last packet, ≤ now), so slots alternate
// A, B, A, B …: A gets slots j = 0, 2, …, 78, B gets j = 1, 3, …, 79 — each QP gets half the NIC.
// Each packet crosses two idle hops (host1/host2 each receive one flow; the switch's port to
// host 0 carries only 4-ns ACKs spaced ≥ 83 ns apart): data start + 2 × (83 + 1000) = + 2166,
// its ACK returns 2 × (4 + 1000) = 2008 later: FCT = start of the last packet + 4174.
//   A: 83 × 78 + 4174 = 6474 + 4174 = 10,648 ns;  B: 83 × 79 + 4174 = 6557 + 4174 = 10,731 ns.
// (A single QP alone would be 83 × 39 + 4174 = 7411 ns.)
TEST(NicRoundRobin, TwoQpsAlternateAndShareTheNic) {
  const SimConfig cfg = ring_dcqcn_config();
  Network net(cfg, star(4), make_cc(cfg, nullptr));
  net.add_flows({flow(0, 1, 40'000), flow(0, 2, 40'000)});
  net.run(1 * kSec);
  ASSERT_TRUE(net.flow_finished(0));
  ASSERT_TRUE(net.flow_finished(1));
  EXPECT_EQ(net.record(0).fct_ns(), 10'648u);
  EXPECT_EQ(net.record(1).fct_ns(), 10'731u);
  // Both QPs are compacted out of the NIC's list once finished.
  EXPECT_TRUE(net.ports()[0].qps.empty());
}

// Three QPs: slots j ≡ 0, 1, 2 (mod 3) for A (→1), B (→2), C (→3); n = 30 packets each (90 slots).
// A last at j = 87, B at 88, C at 89: FCT = 83 j + 4174 = 11,395 / 11,478 / 11,561 ns.
TEST(NicRoundRobin, ThreeQpsGetAThirdEach) {
  const SimConfig cfg = ring_dcqcn_config();
  Network net(cfg, star(4), make_cc(cfg, nullptr));
  net.add_flows({flow(0, 1, 30'000), flow(0, 2, 30'000), flow(0, 3, 30'000)});
  net.run(1 * kSec);
  EXPECT_EQ(net.record(0).fct_ns(), 83u * 87 + 4174);
  EXPECT_EQ(net.record(1).fct_ns(), 83u * 88 + 4174);
  EXPECT_EQ(net.record(2).fct_ns(), 83u * 89 + 4174);
}

// A (→1) has 10 packets, B (→2) 30. Slots alternate while A has bytes: A at j = 0, 2, …, 18,
// B at j = 1, 3, …, 19 (10 packets). From j = 20 A has no bytes left (it is skipped, not yet
// finished: its last ACK returns at 83 × 18 + 4174 = 5668 ns) and B takes every slot at full rate:
// its remaining 20 packets at j = 20 … 39, the last at 83 × 39 = 3237: FCT_B = 3237 + 4174 = 7411.
// FCT_A = 1494 + 4174 = 5668 ns. At 5668 the ACK that finishes A triggers the NIC, which compacts
// A out of the list: at 6 µs the NIC serves only B (qps = {1}); B is done at 7411 ns, its last ACK
// compacts it too.
TEST(NicRoundRobin, FinishedQpIsCompactedAndTheOtherGetsFullRate) {
  const SimConfig cfg = ring_dcqcn_config();
  Network net(cfg, star(4), make_cc(cfg, nullptr));
  net.add_flows({flow(0, 1, 10'000), flow(0, 2, 30'000)});
  net.run(5'600 * kNs);
  EXPECT_EQ(net.ports()[0].qps, (std::vector<uint32_t>{0, 1}));  // A has sent everything, not finished
  EXPECT_EQ(net.flow(0).bytes_left(), 0u);
  EXPECT_FALSE(net.flow_finished(0));
  net.run(6 * kUs);
  ASSERT_TRUE(net.flow_finished(0));
  EXPECT_EQ(net.record(0).fct_ns(), 5'668u);
  EXPECT_EQ(net.ports()[0].qps, (std::vector<uint32_t>{1}));
  net.run(1 * kSec);
  ASSERT_TRUE(net.flow_finished(1));
  EXPECT_EQ(net.record(1).fct_ns(), 7'411u);
  EXPECT_TRUE(net.ports()[0].qps.empty());
}

// ACK interleaving on the sender's uplink: as TwoQpsAlternateAndShareTheNic plus one 1000-B flow
// host 3 → host 0 at t = 0. Its packet reaches the switch at 1083 (the switch's port to host 0 is
// idle then: the first ACK of A/B arrives there at 3170) and host 0 at 2166. Host 0's NIC is then
// sending data slot 26 (83 × 26 = 2158 .. 2241); the ACK has strict priority and goes next,
// 2241 .. 2245, and data slot 27 starts at 2245: every slot j ≥ 27 is 4 ns later.
//   A (last slot 78): 83 × 78 + 4 + 4174 = 10,652 ns;  B (slot 79): 83 × 79 + 4 + 4174 = 10,735 ns.
//   Host 3's flow: ACK leaves host 0 at 2241, reaches host 3 at 2241 + 4 + 1000 + 4 + 1000 = 4249 ns.
TEST(NicRoundRobin, AckOfAReceivedFlowTakesPriorityOverBothQps) {
  const SimConfig cfg = ring_dcqcn_config();
  ASSERT_TRUE(cfg.ack_high_prio);
  Network net(cfg, star(4), make_cc(cfg, nullptr));
  net.add_flows({flow(0, 1, 40'000), flow(0, 2, 40'000), flow(3, 0, 1000)});
  net.run(1 * kSec);
  EXPECT_EQ(net.record(2).fct_ns(), 4'249u);
  EXPECT_EQ(net.record(0).fct_ns(), 10'652u);
  EXPECT_EQ(net.record(1).fct_ns(), 10'735u);
}

// =============================================================================================
// 2. ACK_HIGH_PRIO and PFC
// =============================================================================================
//
// star(4), BUFFER 1 MiB, no ECN: hosts 0 and 1 send 4 MB each to host 2 (the incast of
// test_switch_model.cpp: the switch repeatedly PAUSEs class 3 at hosts 0 and 1), while host 3
// sends 2 MB to host 0, so host 0's NIC has an ACK to send every 83 ns — through the same uplink
// that the switch pauses. The NIC sends an ACK only if its ACK class is not paused: class 0 with
// ACK_HIGH_PRIO 1 (never paused: PFC frames only pause class 3), class 3 with ACK_HIGH_PRIO 0.
// We look at host 0's ACK queue whenever host 0 receives a RESUME (the observer runs before the
// pause state changes, so the queue holds what accumulated during the pause):
//   ACK_HIGH_PRIO 1: ACKs left during the pause; at most one can be waiting (behind a data packet
//     that started before the PAUSE arrived, ≤ 83 ns; ACKs arrive 83 ns apart).
//   ACK_HIGH_PRIO 0: ACKs accumulate for the whole pause (one per 83 ns of host 3's flow).
// (Host 3's FCT is not a clean observable: its data share the switch's port to host 0 with host
// 2's ACKs and the PFC frames, and delaying host 0's ACKs shifts those interleavings either way.)
namespace {
struct AckQueueAtResume final : NetObserver {
  const Network* net = nullptr;
  size_t max_acks = 0, resumes = 0;
  void pfc(const PfcRecord& p) override {
    if (p.node != 0 || p.type != 0) return;
    ++resumes;
    max_acks = std::max<size_t>(max_acks, net->ports()[0].queue[0].size());
  }
};
struct AckPrioRun {
  size_t max_acks, resumes;
  uint64_t fct3;
  bool all_finished;
};
AckPrioRun run_ack_prio(bool high) {
  SimConfig cfg = ring_dcqcn_config();
  cfg.enable_qcn = false;
  cfg.buffer_size_mb = 1;
  cfg.ack_high_prio = high;
  Network net(cfg, star(4), make_cc(cfg, nullptr));
  AckQueueAtResume obs;
  obs.net = &net;
  net.set_observer(&obs);
  net.add_flows({flow(0, 2, 4'000'000), flow(1, 2, 4'000'000), flow(3, 0, 2'000'000)});
  net.run(1 * kSec);
  bool fin = true;
  for (uint32_t i = 0; i < 3; ++i) fin &= net.flow_finished(i);
  return {obs.max_acks, obs.resumes, net.record(2).fct_ns(), fin};
}
}  // namespace

TEST(AckHighPrio, PfcPauseHoldsAcksOnlyWithoutHighPriority) {
  const AckPrioRun hi = run_ack_prio(true), lo = run_ack_prio(false);
  ASSERT_TRUE(hi.all_finished);
  ASSERT_TRUE(lo.all_finished);
  ASSERT_GT(hi.resumes, 0u);
  ASSERT_GT(lo.resumes, 0u);
  EXPECT_LE(hi.max_acks, 1u);
  EXPECT_GE(lo.max_acks, 2u);
  // Both are slower than host 3's standalone 2 MB time, 83 × 1999 + 4174 = 170,091 ns (its data
  // share the switch's port to host 0 with host 2's ACKs).
  EXPECT_GE(hi.fct3, 170'091u);
  EXPECT_GE(lo.fct3, 170'091u);
}

// =============================================================================================
// 3. NACK rules
// =============================================================================================
//
// star(2) (host 0 – switch – host 1), 1 MB 0 → 1, loss only on the host-1 link (error 2 %, both
// ends: data received by host 1, ACKs/NACKs received by the switch), fixed seed. All data reach
// the switch, which forwards each packet host 0 sends exactly once, so the switch's port to host 1
// counts every data packet sent: tx_bytes / 1048 − 1000 = packets retransmitted (> 0: go-back-N
// resends everything after the first hole, > the number of holes).
// Every NACK reaching the sender carries the receiver's expected seq; after it snd_nxt = snd_una
// (go-back-N). A NACK leaves host 1 at once (strict-priority ACK queue, host 1 sends nothing else)
// and takes 4 + 1000 + 4 + 1000 = 2008 ns on idle ACK links, so arrival gaps equal generation
// gaps: two NACKs for the same expected seq arrive ≥ 500 µs apart.
TEST(NackRules, GoBackNRetransmitsAndHoldsOffRepeatedNacks) {
  uint64_t nacks_total = 0;
  for (uint64_t seed : {1, 2, 3, 4, 5, 6, 7, 8}) {
    SimConfig cfg = ring_dcqcn_config();
    cfg.rto_us = 1000;
    cfg.seed = seed;
    Topology t = star(2);
    t.links[1].error_rate = 0.02;
    auto rec = std::make_unique<RecordingCc>(make_cc(cfg, nullptr));
    RecordingCc* log = rec.get();
    Network net(cfg, t, std::move(rec));
    net.keep_finished_state(true);  // the test reads finished flows' final QP state
    net.add_flows({flow(0, 1, 1'000'000)});
    net.run(1 * kSec);
    const Flow& f = net.flow(0);
    ASSERT_TRUE(net.flow_finished(0)) << "seed " << seed;
    EXPECT_EQ(f.snd_una, 1'000'000u);
    const uint64_t sent = net.ports()[3].tx_bytes;  // switch port to host 1
    EXPECT_EQ(sent % 1048, 0u);
    std::map<uint64_t, std::vector<Time>> nack_times;
    for (const auto& e : log->evs) {
      if (!e.nack) continue;
      ++nacks_total;
      EXPECT_EQ(e.snd_nxt, e.snd_una) << "go-back-N";
      EXPECT_EQ(e.seq % 1000, 0u);
      EXPECT_LE(e.seq, e.snd_una);
      nack_times[e.seq].push_back(e.t);
    }
    for (const auto& [seq, ts] : nack_times)
      for (size_t i = 1; i < ts.size(); ++i)
        EXPECT_GE(ts[i] - ts[i - 1], 500 * kUs) << "seed " << seed << " seq " << seq;
    if (!nack_times.empty()) {
      EXPECT_GT(sent / 1048, 1000u) << "a NACK means go-back-N resends";
    }
    EXPECT_GT(net.stats().packets_dropped, 0u);
    // Every packet the switch forwarded beyond the flow's 1000 was a retransmission.
    EXPECT_EQ(net.stats().retransmitted_packets, sent / 1048 - 1000) << "seed " << seed;
    EXPECT_EQ(net.stats().retransmitted_bytes, 1000 * (sent / 1048 - 1000));
    EXPECT_EQ(net.stats().drops_loss, net.stats().packets_dropped);  // all on the lossy link
    EXPECT_EQ(net.stats().drops_buffer + net.stats().drops_link_down, 0u);
  }
  EXPECT_GT(nacks_total, 0u);
}

// The holdoff stalls a flow without RTO. Host-1 link with 30 % loss, seed 3, RTO off: the
// receiver NACKs expected seq E (last_nack = E, nack_timer = NACK time + 500 µs); the retransmission
// of E (or the NACK itself) is lost again, and every later packet arrives out of order for the same
// E within 500 µs (the whole 1 MB takes < 100 µs to send), so no further NACK is sent: the sender
// has sent everything (snd_nxt = size), nothing more happens and the run drains with the flow
// unfinished — the last event (the last data arrival) falls inside the holdoff window, long after
// the last NACK. (Observed for seed 3: E = 11,000, last NACK at 11,877 ns, last event at
// 98,114 ns.) Same-seq NACKs are ≥ 500 µs apart. With a 1 ms RTO the same losses are recovered.
TEST(NackRules, HoldoffSuppressesRepeatedNacksAndStallsWithoutRto) {
  for (double rto_us : {0.0, 1000.0}) {
    SimConfig cfg = ring_dcqcn_config();
    cfg.rto_us = rto_us;
    cfg.seed = 3;
    Topology t = star(2);
    t.links[1].error_rate = 0.3;
    auto rec = std::make_unique<RecordingCc>(make_cc(cfg, nullptr));
    RecordingCc* log = rec.get();
    Network net(cfg, t, std::move(rec));
    net.keep_finished_state(true);  // the test reads finished flows' final QP state
    net.add_flows({flow(0, 1, 1'000'000)});
    net.run(1 * kSec);
    std::map<uint64_t, std::vector<Time>> nack_times;
    size_t n = 0;
    for (const auto& e : log->evs)
      if (e.nack) nack_times[e.seq].push_back(e.t), ++n;
    EXPECT_GT(n, 0u);
    for (const auto& [seq, ts] : nack_times)
      for (size_t i = 1; i < ts.size(); ++i) EXPECT_GE(ts[i] - ts[i - 1], 500 * kUs) << "seq " << seq;
    const Flow& f = net.flow(0);
    if (rto_us == 0) {
      ASSERT_FALSE(net.flow_finished(0));
      EXPECT_EQ(net.kernel().pending(), 0u);
      EXPECT_EQ(f.snd_nxt, 1'000'000u);
      EXPECT_LT(f.rcv_nxt, 1'000'000u);
      EXPECT_EQ(f.snd_una, f.rcv_nxt);
      EXPECT_EQ(f.last_nack, f.rcv_nxt);
      const Time last_nack_at = f.nack_timer - 500 * kUs;
      EXPECT_LT(net.kernel().now(), f.nack_timer);
      EXPECT_GT(net.kernel().now() - last_nack_at, 50 * kUs);  // ≥ 600 data slots of 83 ns later
    } else {
      EXPECT_TRUE(net.flow_finished(0));
      EXPECT_GT(net.stats().retransmit_timeouts, 0u);
    }
  }
}

// L2_BACK_TO_ZERO 1, L2_CHUNK_SIZE 4000: the receiver's expected seq falls back to the chunk
// boundary on a NACK, so every NACK carries a multiple of 4000 and the sender's snd_una moves in
// chunks (ACK seqs are rounded down); the flow still completes on a lossy link.
TEST(NackRules, BackToZeroWithChunk4000Completes) {
  for (uint64_t seed : {1, 2, 3, 4}) {
    SimConfig cfg = ring_dcqcn_config();
    cfg.l2_back_to_zero = true;
    cfg.l2_chunk_size = 4000;
    cfg.rto_us = 1000;
    cfg.seed = seed;
    Topology t = star(2);
    t.links[1].error_rate = 0.02;
    auto rec = std::make_unique<RecordingCc>(make_cc(cfg, nullptr));
    RecordingCc* log = rec.get();
    Network net(cfg, t, std::move(rec));
    net.keep_finished_state(true);  // the test reads finished flows' final QP state
    net.add_flows({flow(0, 1, 1'000'000)});
    net.run(1 * kSec);
    ASSERT_TRUE(net.flow_finished(0)) << "seed " << seed;
    EXPECT_EQ(net.flow(0).snd_una, 1'000'000u);
    for (const auto& e : log->evs) {
      EXPECT_EQ(e.snd_una % 4000, 0u);
      if (e.nack) {
        EXPECT_EQ(e.seq % 4000, 0u);
      }
    }
  }
}

// =============================================================================================
// 4. LINK_DOWN with a surviving path (k = 4 fat tree: hosts 0–15, edges 16–23, aggregations
// 24–31, cores 32–35)
// =============================================================================================
//
// Flow A host 0 → host 15 (cross-pod, 6 hops) at 2 s, 1 MB (≈ 88 µs). Its path is found with the
// switch hash (seed = node id, key [ip(0), ip(15), 10000 | 100 << 16]): edge 16 → aggregation
// `agg` → core `core`. A second cross-pod flow B (s → d, s on edge 17, d in pod 3, the first pair
// whose hashed path uses the same agg → core port) makes that port a 2:1 bottleneck (A and B
// arrive on two different edge links), so packets
// queue there: ≈ 1 packet per 166 ns, ≈ 100 packets after 20 µs (well below KMIN 400 KB: no marks).
// LINK_DOWN agg–core at 2 s + 20 µs: the queued packets are dropped at that instant (so the drop
// counter is > 0 right after the event, before any packet on the wire could arrive), the routes
// are rebuilt without the link, the flows continue through the surviving paths, and NACK /
// go-back-N recovers the holes (RTO off, so recovery needs a surviving path). Both finish, A later
// than without the failure.
namespace {
Topology fat_tree() {
  return read_topology(std::string(WH_TEST_DATA) + "/refruns/hpcc-ring16-fattree-k4-1MB/topology.txt");
}
uint32_t hop(Network& net, uint32_t node, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport) {
  auto hops = net.routing().next_hops(node, dst);
  EXPECT_FALSE(hops.empty());
  const uint32_t out = hops.size() == 1 ? hops[0]
                                        : hops[ecmp_hash(node_ip(src), node_ip(dst), sport, dport, node) % hops.size()];
  return out;
}
/// The aggregation's egress port (towards a core) of flow s → d with source port 10000.
uint32_t agg_core_port(Network& net, uint32_t s, uint32_t d) {
  const uint32_t edge = net.ports()[net.ports()[net.nodes()[s].first_port].peer].node;
  const uint32_t p_edge = hop(net, edge, s, d, 10000, 100);
  const uint32_t agg = net.ports()[net.ports()[p_edge].peer].node;
  return hop(net, agg, s, d, 10000, 100);
}
}  // namespace

TEST(LinkDown, CrossPodFlowIsReroutedAndFinishes) {
  SimConfig cfg = ring_dcqcn_config();
  cfg.rto_us = 0;  // recovery must come from NACKs over a surviving path, not from a timeout
  const Topology topo = fat_tree();
  ASSERT_EQ(topo.num_nodes, 36u);
  uint32_t dead = UINT32_MAX, bs = 0, bd = 0;
  uint64_t fct_ok = 0;
  {
    Network probe(cfg, topo, make_cc(cfg, nullptr));
    dead = agg_core_port(probe, 0, 15);
    for (uint32_t s2 = 2; s2 < 4 && !bs; ++s2)  // edge 17: merges with A only at the agg
      for (uint32_t d2 = 12; d2 < 15 && !bs; ++d2)
        if (agg_core_port(probe, s2, d2) == dead) bs = s2, bd = d2;
  }
  ASSERT_NE(bs, 0u) << "no second pod-0 → pod-3 flow shares host 0 → 15's aggregation–core link";
  {
    Network net(cfg, topo, make_cc(cfg, nullptr));
    net.keep_finished_state(true);  // the test reads finished flows' final QP state
    net.add_flows({flow(0, 15, 1'000'000, 2 * kSec), flow(bs, bd, 1'000'000, 2 * kSec)});
    ASSERT_EQ(net.flow_info(0).sport, 10000u);
    ASSERT_EQ(net.flow_info(1).sport, 10000u);
    net.run(3 * kSec);
    ASSERT_TRUE(net.flow_finished(0));
    fct_ok = net.record(0).fct_ns();
    EXPECT_EQ(net.stats().packets_dropped, 0u);
  }
  Network probe(cfg, topo, make_cc(cfg, nullptr));
  probe.keep_finished_state(true);  // the test reads finished flows' final QP state
  const uint32_t agg = probe.ports()[dead].node, core = probe.ports()[probe.ports()[dead].peer].node;
  ASSERT_TRUE(agg >= 24 && agg < 32);
  ASSERT_GE(core, 32u);
  cfg.link_down_us = 20;
  cfg.link_down_a = agg;
  cfg.link_down_b = core;
  Network net(cfg, topo, make_cc(cfg, nullptr));
  net.keep_finished_state(true);  // the test reads finished flows' final QP state
  net.add_flows({flow(0, 15, 1'000'000, 2 * kSec), flow(bs, bd, 1'000'000, 2 * kSec)});
  const uint32_t dead_core = net.ports()[dead].peer;
  {
    auto h = net.routing().next_hops(agg, 15);
    EXPECT_NE(std::find(h.begin(), h.end(), dead), h.end());
  }
  net.run(2 * kSec + 20 * kUs - 1 * kNs);
  const uint64_t queued = net.ports()[dead].queue[3].size();
  EXPECT_GT(queued, 10u) << "the 2:1 bottleneck has built a queue";
  EXPECT_EQ(net.stats().packets_dropped, 0u);
  net.run(2 * kSec + 20 * kUs + 1 * kNs);
  EXPECT_FALSE(net.ports()[dead].up);
  EXPECT_FALSE(net.ports()[dead_core].up);
  EXPECT_EQ(net.ports()[dead].bytes_total, 0u);
  // Queued packets dropped at the event (the queue may have changed by ±1 in the last 1 ns).
  EXPECT_GE(net.stats().packets_dropped + 1, queued);
  EXPECT_EQ(net.stats().drops_link_down, net.stats().packets_dropped);
  net.run(3 * kSec);
  ASSERT_TRUE(net.flow_finished(0));
  ASSERT_TRUE(net.flow_finished(1));
  EXPECT_EQ(net.flow(0).snd_una, 1'000'000u);
  EXPECT_GT(net.record(0).fct_ns(), fct_ok);
  // No buffer is left accounted at the aggregation (dropped packets released their ingress bytes).
  EXPECT_EQ(net.nodes()[agg].shared_used, 0u);
  // No route uses the dead ports any more; every switch still reaches every host.
  for (uint32_t n = 16; n < 36; ++n)
    for (uint32_t d = 0; d < 16; ++d) {
      auto h = net.routing().next_hops(n, d);
      EXPECT_FALSE(h.empty()) << "switch " << n << " to host " << d;
      EXPECT_EQ(std::find(h.begin(), h.end(), dead), h.end());
      EXPECT_EQ(std::find(h.begin(), h.end(), dead_core), h.end());
    }
  // The aggregation now reaches host 15 through its remaining core only.
  EXPECT_EQ(net.routing().next_hops(agg, 15).size(), 1u);
}

// =============================================================================================
// 5. Multi-NIC hosts
// =============================================================================================
//
// Hosts 0 and 1 each have two NICs, one to switch 2 and one to switch 3 (links in file order:
// 0–2, 0–3, 1–2, 1–3, so host 0's NICs are ports 0, 1 and host 1's are 2, 3). Both NICs are on a
// shortest (2-hop) path, so the QP uses NIC qp_hash(ip(0), ip(1), sport, 100) % 2 and host 1's
// ACKs leave by qp_hash(ip(1), ip(0), 100, sport) % 2 (indices into the NIC lists). Eight flows
// 0 → 1 (sports 10000..10007), 50 µs apart from 50 µs, one packet each: after each flow the NIC that
// transmitted it (busy_until inside the flow's window) must be the hashed one, on both sides.
namespace {
Topology dual_nic() {
  Topology t;
  t.num_nodes = 4;
  t.is_switch = {0, 0, 1, 1};
  t.links = {TopoLink{0, 2, k100G, 1 * kUs, 0, 0}, TopoLink{0, 3, k100G, 1 * kUs, 0, 0},
             TopoLink{1, 2, k100G, 1 * kUs, 0, 0}, TopoLink{1, 3, k100G, 1 * kUs, 0, 0}};
  return t;
}
}  // namespace

TEST(MultiNic, QpAndAckNicsFollowTheHash) {
  const SimConfig cfg = ring_dcqcn_config();
  Network net(cfg, dual_nic(), make_cc(cfg, nullptr));
  net.keep_finished_state(true);  // the test reads finished flows' final QP state
  std::vector<FlowSpec> fs;
  for (int i = 0; i < 8; ++i) fs.push_back(flow(0, 1, 1000, (i + 1) * 50 * kUs));
  net.add_flows(fs);
  // The NIC list is the host's next-hop list in BFS order: switches in descending id, so the NIC to
  // switch 3 comes first (as the reference's rdmaHw table, filled from the same next-hop order).
  const std::vector<uint32_t> nics0{1, 0}, nics1{3, 2};
  const auto nics_of = [&](uint32_t a, uint32_t b) {
    const std::span<const uint32_t> s = net.routing().host_nics(a, b);
    return std::vector<uint32_t>(s.begin(), s.end());
  };
  EXPECT_EQ(nics_of(0, 1), nics0);
  EXPECT_EQ(nics_of(1, 0), nics1);
  std::set<uint32_t> used_tx, used_rx;
  for (uint32_t i = 0; i < 8; ++i) {
    const Time start = (i + 1) * 50 * kUs;
    net.run(start + 10 * kUs);
    const Flow& f = net.flow(i);
    ASSERT_TRUE(net.flow_finished(i)) << i;
    const uint32_t tx = nics0[qp_hash(node_ip(0), node_ip(1), f.sport, f.dport) % 2];
    const uint32_t rx = nics1[qp_hash(node_ip(1), node_ip(0), f.dport, f.sport) % 2];
    EXPECT_EQ(f.nic, tx) << "sport " << f.sport;
    EXPECT_EQ(f.rx_nic, rx) << "sport " << f.sport;
    // Observed: the hashed NIC transmitted in this flow's window, the other did not.
    EXPECT_GE(net.ports()[tx].busy_until, start);
    EXPECT_LT(net.ports()[tx ^ 1].busy_until, start);
    EXPECT_GE(net.ports()[rx].busy_until, start);
    EXPECT_LT(net.ports()[rx ^ 1].busy_until, start);  // 2 ^ 1 = 3, 3 ^ 1 = 2
    // 2 hops each way on idle links: 2166 + 2008 = 4174 ns.
    EXPECT_EQ(net.record(i).fct_ns(), 4174u);
    used_tx.insert(tx);
    used_rx.insert(rx);
  }
  // With 8 source ports both NICs are used on each side (a fixed property of these hashes).
  EXPECT_EQ(used_tx.size(), 2u);
  EXPECT_EQ(used_rx.size(), 2u);
}

// The alibaba topology (320 hosts with two 25 G NICs to two ToRs): a cross-rack QP's NIC is one of
// the two, chosen by the hash, and the flow completes.
TEST(MultiNic, AliTopologyUsesTheHashedNic) {
  SimConfig cfg = ring_dcqcn_config();
  cfg.ecn[k25G] = EcnThresholds{100'000, 400'000, 0.2};
  const Topology topo = read_topology(std::string(WH_TEST_DATA) + "/hpcc-mix/ali_32host_10rack.txt");
  Network net(cfg, topo, make_cc(cfg, nullptr));
  net.keep_finished_state(true);  // the test reads finished flows' final QP state
  net.add_flows({flow(0, 100, 100'000), flow(5, 200, 100'000), flow(300, 7, 100'000)});
  net.run(1 * kSec);
  for (uint32_t i = 0; i < 3; ++i) {
    const Flow& f = net.flow(i);
    ASSERT_TRUE(net.flow_finished(i)) << i;
    const auto nics = net.routing().host_nics(f.src, f.dst);
    ASSERT_EQ(nics.size(), 2u) << i;
    EXPECT_EQ(f.nic, nics[qp_hash(node_ip(f.src), node_ip(f.dst), f.sport, f.dport) % 2]);
    const auto back = net.routing().host_nics(f.dst, f.src);
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(f.rx_nic, back[qp_hash(node_ip(f.dst), node_ip(f.src), f.dport, f.sport) % 2]);
  }
}

// =============================================================================================
// 6. Parallel links between two switches
// =============================================================================================
//
// Host 0 – switch 2 ==(two links)== switch 3 – host 1. Links in file order: 0–2 (host 0 port 0,
// switch 2 port 2), 2–3 (switch 2 port 3, switch 3 port 5), 2–3 (switch 2 port 4, switch 3
// port 6), 1–3 (host 1 port 1, switch 3 port 7). Both parallel links are next hops:
// next_hops(2, 1) = {3, 4}, next_hops(3, 0) = {5, 6} (file order). A data packet of flow
// (sport s) takes switch 2's port {3,4}[ecmp_hash(ip0, ip1, s, 100, seed 2) % 2]; its ACK takes
// switch 3's port {5,6}[ecmp_hash(ip1, ip0, 100, s, seed 3) % 2].
namespace {
Topology parallel_links() {
  Topology t;
  t.num_nodes = 4;
  t.is_switch = {0, 0, 1, 1};
  t.links = {TopoLink{0, 2, k100G, 1 * kUs, 0, 0}, TopoLink{2, 3, k100G, 1 * kUs, 0, 0},
             TopoLink{2, 3, k100G, 1 * kUs, 0, 0}, TopoLink{1, 3, k100G, 1 * kUs, 0, 0}};
  return t;
}
}  // namespace

TEST(ParallelLinks, BothLinksAreEcmpNextHopsAndFlowsHashAcrossThem) {
  const SimConfig cfg = ring_dcqcn_config();
  Network net(cfg, parallel_links(), make_cc(cfg, nullptr));
  net.keep_finished_state(true);  // the test reads finished flows' final QP state
  std::vector<FlowSpec> fs;
  for (int i = 0; i < 8; ++i) fs.push_back(flow(0, 1, 1000, (i + 1) * 50 * kUs));
  net.add_flows(fs);
  {
    auto h = net.routing().next_hops(2, 1);
    EXPECT_EQ(std::vector<uint32_t>(h.begin(), h.end()), (std::vector<uint32_t>{3, 4}));
    auto r = net.routing().next_hops(3, 0);
    EXPECT_EQ(std::vector<uint32_t>(r.begin(), r.end()), (std::vector<uint32_t>{5, 6}));
  }
  ASSERT_EQ(net.ports()[3].peer, 5u);
  ASSERT_EQ(net.ports()[4].peer, 6u);
  std::set<uint32_t> fwd, rev;
  for (uint32_t i = 0; i < 8; ++i) {
    const Time start = (i + 1) * 50 * kUs;
    net.run(start + 10 * kUs);
    const Flow& f = net.flow(i);
    ASSERT_TRUE(net.flow_finished(i));
    const uint32_t pf = 3 + ecmp_hash(node_ip(0), node_ip(1), f.sport, f.dport, 2) % 2;
    const uint32_t pr = 5 + ecmp_hash(node_ip(1), node_ip(0), f.dport, f.sport, 3) % 2;
    const uint32_t pf_other = pf == 3 ? 4 : 3, pr_other = pr == 5 ? 6 : 5;
    EXPECT_GE(net.ports()[pf].busy_until, start) << "sport " << f.sport;
    EXPECT_LT(net.ports()[pf_other].busy_until, start) << "sport " << f.sport;
    EXPECT_GE(net.ports()[pr].busy_until, start) << "sport " << f.sport;
    EXPECT_LT(net.ports()[pr_other].busy_until, start) << "sport " << f.sport;
    // 3 hops each way: 3 × 1083 + 3 × 1004 = 6261 ns.
    EXPECT_EQ(net.record(i).fct_ns(), 6261u);
    fwd.insert(pf);
    rev.insert(pr);
  }
  EXPECT_EQ(fwd.size(), 2u);
  EXPECT_EQ(rev.size(), 2u);
  // The pair metrics use one link (same rate and delay): 3 hops, RTT 2 × 3000 + 3 × 80 = 6240 ns.
  EXPECT_EQ(net.routing().pair(0, 1).hops, 3u);
  EXPECT_EQ(net.routing().max_rtt_ns(), 6240u);
}
