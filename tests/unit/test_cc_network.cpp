// Congestion control end to end on host 0 – switch 2 – host 1 (100 Gb/s, 1 µs links): packet
// sizes per CC_MODE (docs/network-model.md §7), exact single-packet FCTs, the first HPCC updates of a
// 1 MB flow on an idle path, FCT bounds, and the fallback for an unknown CC_MODE.
//
// Serialisation at 100 Gb/s, truncated to ns (§6): 1048 B -> 83 ns, 1050 B -> 84, 1056 B -> 84,
// 1090 B -> 87; 60-B ACK -> 4 ns, 88-B ACK -> 7 ns. A packet that meets no queue takes
// (ser + 1000) ns per link; ACKs leave the receiver at once.
#include <gtest/gtest.h>

#include <string>

#include "wormhole/cc/factory.h"
#include "wormhole/cc/hpcc.h"
#include "wormhole/cc/state.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/io/topology.h"
#include "wormhole/net/network.h"

#include "net_fixtures.h"

using namespace wh;
using namespace wh::test;

namespace {


SimConfig ring_config(const char* which) {
  return read_hpcc_config(std::string(WH_TEST_DATA) + "/refruns/hpcc-ring16-fattree-k4-1MB/config_" + which + ".txt");
}

/// The reference ring runs' "hp" config (CC_MODE 3, η 0.95, MI_THRESH 0, AI 50 Mb/s, MIN 1000 Mb/s,
/// INT_MULTI 4, HAS_WIN 1, VAR_WIN 1, GLOBAL_T 1, FAST_REACT 1, MULTI_RATE 0, ACK_HIGH_PRIO 0).
SimConfig hpcc_config() { return ring_config("hpcc"); }
/// The DCQCN config of the same runs (HAS_WIN 0, ACK_HIGH_PRIO 1), with `mode` as CC_MODE.
SimConfig dcqcn_config(uint32_t mode = 1) {
  SimConfig c = ring_config("dcqcn");
  c.cc_mode = mode;
  return c;
}

/// host 0 – switch 2 – host 1. Ports: host 0 = 0, host 1 = 1, switch: 2 (to host 0), 3 (to host 1).
/// Base RTT 2 × 2000 + 2 × 80 = 4160 ns = maxRtt; maxBdp = 52,000 B.
Topology two_hosts() {
  Topology t;
  t.num_nodes = 3;
  t.is_switch = {0, 0, 1};
  t.links = {TopoLink{0, 2, k100G, 1 * kUs, 0, 0}, TopoLink{1, 2, k100G, 1 * kUs, 0, 0}};
  return t;
}


struct RunResult {
  uint64_t fct_ns;
  uint64_t ideal_ns;
  uint64_t data_bytes;  // switch port 3 (to host 1): data packets only
  uint64_t ack_bytes;   // switch port 2 (to host 0): ACKs only
  uint64_t final_rate;
};

RunResult run_one(const SimConfig& cfg, uint64_t size) {
  Network net(cfg, two_hosts(), make_cc(cfg, nullptr));
  net.keep_finished_state(true);  // final_rate is the finished flow's
  net.add_flows({flow(0, 1, size)});
  net.run(1 * kSec);
  EXPECT_TRUE(net.flow_finished(0));
  return {net.record(0).fct_ns(), net.record(0).ideal_fct_ns, net.ports()[3].tx_bytes, net.ports()[2].tx_bytes,
          net.flow(0).rate_bps};
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// packet sizes and single-packet FCTs
// ---------------------------------------------------------------------------------------------

TEST(CcNetwork, PacketSizesPerCcMode) {
  // One 1000-B packet and its ACK; the switch's tx counters see exactly one of each.
  //   mode 1 DCQCN:  data 1048, ACK 60 (46 padded) -> 2 × (83 + 1000) + 2 × (4 + 1000) = 4174 ns
  //   mode 3 HPCC:   data 1090, ACK 46 + 42 = 88   -> 2 × 1087 + 2 × 1007 = 4188 ns
  //   mode 7 TIMELY: data 1056, ACK 46 + 8 -> 60   -> 2 × 1084 + 2 × 1004 = 4176 ns
  //   mode 8 DCTCP:  data 1048, ACK 60             -> 4174 ns
  //   mode 10 PINT:  data 1050, ACK 46 + 2 -> 60   -> 2 × 1083 + 2 × 1004 = 4174 ns: 1050 B at 100 Gb/s
  //                  is 84 ns exactly, but the reference's double quotient truncates to 83 ns (HPCC ns-3
  //                  prints 4174 for this flow; regression: we gave 4176)
  struct Want {
    uint32_t mode;
    uint64_t data, ack, fct;
  };
  for (const Want& w : {Want{1, 1048, 60, 4174}, Want{3, 1090, 88, 4188}, Want{7, 1056, 60, 4176},
                        Want{8, 1048, 60, 4174}, Want{10, 1050, 60, 4174}}) {
    SimConfig cfg = w.mode == 3 || w.mode == 10 ? hpcc_config() : dcqcn_config(w.mode);
    cfg.cc_mode = w.mode;
    const RunResult r = run_one(cfg, 1000);
    EXPECT_EQ(r.data_bytes, w.data) << "CC_MODE " << w.mode;
    EXPECT_EQ(r.ack_bytes, w.ack) << "CC_MODE " << w.mode;
    EXPECT_EQ(r.fct_ns, w.fct) << "CC_MODE " << w.mode;
    // The standalone FCT never counts INT (§5.1): 4160 + 1048 × 8 / 100 = 4160 + 83.84 -> 4243 ns.
    EXPECT_EQ(r.ideal_ns, 4243u) << "CC_MODE " << w.mode;
  }
}

// ---------------------------------------------------------------------------------------------
// 1 MB flows
// ---------------------------------------------------------------------------------------------

TEST(CcNetwork, TimelyOneMegabyteAtLineRate) {
  // 1000 packets of 1056 B: 84 ns each at line rate. Every RTT sample (≈ 4.2 µs) is below
  // T_low = 50 µs, so TIMELY only "increases", capped at the line rate: pacing never changes.
  // FCT = 999 × 84 + 2 × (84 + 1000) + 2 × (4 + 1000) = 83,916 + 2168 + 2008 = 88,092 ns.
  const RunResult r = run_one(dcqcn_config(7), 1'000'000);
  EXPECT_EQ(r.fct_ns, 88'092u);
  EXPECT_EQ(r.data_bytes, 1'056'000u);
  EXPECT_EQ(r.ack_bytes, 60'000u);
  EXPECT_EQ(r.final_rate, k100G);
  EXPECT_EQ(r.ideal_ns, 88'000u);
}

TEST(CcNetwork, DctcpOneMegabyteAtLineRate) {
  // No queue, no marks: the additive increase is capped at the line rate; the timeline is the
  // no-CC one of test_host_model: 999 × 83 + 2166 + 2008 = 87,091 ns.
  const RunResult r = run_one(dcqcn_config(8), 1'000'000);
  EXPECT_EQ(r.fct_ns, 87'091u);
  EXPECT_EQ(r.data_bytes, 1'048'000u);
  EXPECT_EQ(r.final_rate, k100G);
}

TEST(CcNetwork, HpccFirstUpdatesOnAnIdlePath) {
  // Data packet k leaves host 0 at 87k ns (line rate), is dequeued by the switch at 87k + 1087
  // (INT: time 87k + 1087, port tx bytes 1090k before it, empty queue, 100 G), reaches host 1 at
  // 87k + 2174, and its 88-B ACK returns at 87k + 2174 + 2 × 1007 = 87k + 4188.
  // W = maxBdp = 52,000 B; in flight at line rate ≤ 49 packets: the window does not bind early on.
  const SimConfig cfg = hpcc_config();
  Network net(cfg, two_hosts(), make_cc(cfg, nullptr));
  net.add_flows({flow(0, 1, 1'000'000)});
  net.run(4200 * kNs);
  const Flow& f = net.flow(0);
  EXPECT_EQ(f.win, 52'000u);
  EXPECT_EQ(f.base_rtt, 4160 * kNs);
  {
    // First ACK at 4188 ns: packets 0..48 sent (48 × 87 = 4176): snd_nxt = 49,000 =
    // lastUpdateSeq; the INT record of packet 0 is stored; no rate change.
    const HpccState& s = std::get<HpccState>(f.cc);
    EXPECT_EQ(f.snd_una, 1000u);
    EXPECT_EQ(s.last_update_seq, 49'000u);
    EXPECT_EQ(s.hop[0].time, 1087u);
    EXPECT_EQ(s.hop[0].bytes, 0u);
    EXPECT_EQ(s.hop[0].qlen, 0u);
    EXPECT_EQ(s.hop[0].rate_bps, k100G);
    EXPECT_EQ(f.rate_bps, k100G);
    EXPECT_EQ(s.u, 1.0);
  }
  net.run(4300 * kNs);
  {
    // Second ACK at 4275 ns (seq 2000 ≤ 49,000: fast react), INT of packet 1: time 1174,
    // bytes 1090/512 = 2 units (1024 B, quantised from 1090).
    //   τ = 87 ns, txRate = 1024 × 8 / 87e-9 = 94.16 Gb/s, u = 8192/8700 = 0.94160919540;
    //   U = (1 × (4160 − 87) + u × 87)/4160 = (4073 + 81.92)/4160 = 0.99877884615;
    //   c = U/0.95 = 1.05134615385 ≥ 1 -> R = trunc(100e9/c) + 50e6 = 95,116,151,454 + 50e6
    //     = 95,166,151,454 bit/s.
    // So HPCC leaves the line rate on an idle path: a full-rate link reads U ≈ 1 > η = 0.95.
    // Rc stays 100 G (fast react). Packet 49 left at 4263 with next_avail 4350; the re-timing
    // moves it by trunc(8720/95.166) − 87 = 91 − 87 = 4 ns: next_avail = 4354 ns.
    const HpccState& s = std::get<HpccState>(f.cc);
    EXPECT_EQ(f.snd_una, 2000u);
    EXPECT_EQ(f.rate_bps, 95'166'151'454u);
    EXPECT_EQ(s.cur_rate_bps, k100G);
    EXPECT_EQ(s.last_update_seq, 49'000u);
    EXPECT_NEAR(s.u, 4154.92 / 4160, 1e-12);
    EXPECT_EQ(s.hop[0].time, 1174u);
    EXPECT_EQ(s.hop[0].bytes, 2u);
    EXPECT_EQ(f.snd_nxt, 50'000u);
    EXPECT_EQ(f.next_avail, 4354 * kNs);
    // VAR_WIN: W × R / line = 52,000 × 0.95166151454 = 49,486.4 -> 49,486 B.
    EXPECT_EQ(f.window(), 49'486u);
  }
  net.run(4400 * kNs);
  EXPECT_EQ(f.snd_nxt, 51'000u);  // packet 50 left at 4354 (not 4350)
}

TEST(CcNetwork, HpccOneMegabyteFctBounds) {
  // After the first RTT HPCC paces near η·B + AI ≈ 95 Gb/s (91-ns gaps instead of 87), and the
  // committed updates (about once per RTT) dip to ≈ 90 Gb/s, so the exact FCT depends on the
  // whole quantised INT history and is not derived here. What is certain:
  //   * every byte crosses the switch once in 1090-B packets and every packet is ACKed (88 B);
  //   * FCT ≥ the line-rate timeline of 1090-B packets: 999 × 87 + 2 × 1087 + 2 × 1007 = 91,101 ns;
  //   * hence FCT ≥ the DCQCN FCT (87,091) × 1090/1048 = 90,581.3 (the header overhead ratio);
  //   * the pacing is below line rate at some point (η < 1), so FCT > 91,101.
  const RunResult hp = run_one(hpcc_config(), 1'000'000);
  const RunResult dc = run_one(dcqcn_config(1), 1'000'000);
  EXPECT_EQ(dc.fct_ns, 87'091u);
  EXPECT_EQ(hp.data_bytes, 1'090'000u);
  EXPECT_EQ(hp.ack_bytes, 88'000u);
  EXPECT_GT(hp.fct_ns, 91'101u);
  EXPECT_GE(double(hp.fct_ns), double(dc.fct_ns) * 1090 / 1048);
  // Sanity (not derived): HPCC on an idle path should cost well under 10 % over the standalone FCT.
  EXPECT_LT(hp.fct_ns, 88'000u * 11 / 10);
  EXPECT_EQ(hp.ideal_ns, 88'000u);
  EXPECT_LT(hp.final_rate, k100G);
  EXPECT_GT(hp.final_rate, 85'000'000'000u);
}

TEST(CcNetwork, PintOneMegabyte) {
  // 1050-B packets (84 ns), 60-B ACKs; the line-rate timeline is 999 × 84 + 2 × 1084 + 2 × 1004
  // = 88,092 ns, a lower bound for the FCT.
  SimConfig cfg = hpcc_config();
  cfg.cc_mode = 10;
  const RunResult r = run_one(cfg, 1'000'000);
  EXPECT_EQ(r.data_bytes, 1'050'000u);
  EXPECT_EQ(r.ack_bytes, 60'000u);
  EXPECT_GE(r.fct_ns, 88'092u);
  EXPECT_LT(r.fct_ns, 88'000u * 11 / 10);
}

// ---------------------------------------------------------------------------------------------
// unknown CC_MODE
// ---------------------------------------------------------------------------------------------

TEST(CcNetwork, UnknownCcModeRunsAtLineRateWithWarning) {
  SimConfig cfg = dcqcn_config(42);
  std::string warning;
  auto cc = make_cc(cfg, &warning);
  ASSERT_NE(cc, nullptr);
  EXPECT_STREQ(cc->name(), "none");
  EXPECT_EQ(cc->int_bytes(), 0u);
  EXPECT_NE(warning.find("CC_MODE 42"), std::string::npos) << warning;
  for (const char* m : {"1 DCQCN", "3 HPCC", "7 TIMELY", "8 DCTCP", "10 HPCC-PINT"})
    EXPECT_NE(warning.find(m), std::string::npos) << m << " missing from: " << warning;
  EXPECT_NE(warning.find("line rate"), std::string::npos) << warning;
  // make_cc without a warning sink is fine too.
  EXPECT_NE(make_cc(cfg, nullptr), nullptr);
  // Known modes leave the warning untouched.
  for (uint32_t mode : {1u, 3u, 7u, 8u, 10u}) {
    SimConfig k = mode == 3 || mode == 10 ? hpcc_config() : dcqcn_config(mode);
    k.cc_mode = mode;
    std::string w2;
    make_cc(k, &w2);
    EXPECT_TRUE(w2.empty()) << mode << ": " << w2;
  }
  // The run: 1048-B packets at line rate, no CC state, the no-CC timeline 87,091 ns.
  Network net(cfg, two_hosts(), std::move(cc));
  net.keep_finished_state(true);  // the test reads finished flows' final QP state
  net.add_flows({flow(0, 1, 1'000'000)});
  net.run(1 * kSec);
  ASSERT_TRUE(net.flow_finished(0));
  EXPECT_EQ(net.record(0).fct_ns(), 87'091u);
  EXPECT_EQ(net.flow(0).rate_bps, k100G);
  EXPECT_TRUE(std::holds_alternative<NoCcState>(net.flow(0).cc));
  EXPECT_EQ(net.ports()[3].tx_bytes, 1'048'000u);
  EXPECT_EQ(net.ports()[2].tx_bytes, 60'000u);
}
