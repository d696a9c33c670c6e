// Fast-forwarding end to end on small networks: a lone flow skipped finishes within one packet
// time of packet mode; skip-back when a dependent flow arrives mid-skip; other flows' ACKs pass a
// frozen partition; detect-only ≡ packet mode; the outcome does not depend on the thread count.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "wormhole/cc/factory.h"
#include "wormhole/ffwd/fast_forward.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/io/topology.h"
#include "wormhole/net/network.h"

#include "net_fixtures.h"

using namespace wh;
using namespace wh::test;

namespace {

/// One 1,048-B data packet at 100 Gb/s, truncated to whole ns as the reference does.
constexpr Time kPacketTime = 83 * kNs;

/// The reference ring runs' DCQCN config, ECN marking off: with nothing random the packet-mode
/// outcome is a pure function of the event order, so differences are Wormhole's alone.
SimConfig config() {
  SimConfig c = read_hpcc_config(std::string(WH_TEST_DATA) + "/refruns/hpcc-ring16-fattree-k4-1MB/config_dcqcn.txt");
  c.enable_qcn = false;
  return c;
}



struct Outcome {
  std::vector<Time> fct;  // per flow id, ps (-1: unfinished)
  std::vector<Time> skipped;  // per flow id, ps fast-forwarded
  SkipStats stats;
  uint64_t bypassed = 0, held = 0;
  uint64_t discarded = 0;  // events a fast-forward left behind
};

/// Runs `flows` on `topo` (plus one injected flow if `inject_at` >= 0) with Wormhole set by `ws`
/// (nullptr: packet mode, no controller at all).
Outcome run(const Topology& topo, const std::vector<FlowSpec>& flows, const WormholeSettings* ws,
            const FlowSpec* injected = nullptr, Time inject_at = -1, bool keep_state = false) {
  const SimConfig cfg = config();
  Network net(cfg, topo, make_cc(cfg, nullptr));
  net.keep_finished_state(keep_state);
  net.add_flows(flows);
  std::unique_ptr<Injector> inj;
  if (injected) {
    inj = std::make_unique<Injector>(net, *injected, inject_at);
    net.set_client(inj.get());
  }
  std::unique_ptr<FastForward> ff;
  if (ws) ff = std::make_unique<FastForward>(net, *ws, 1 * kSec);
  net.run(1 * kSec);
  Outcome o;
  for (uint32_t id = 0; id < net.flow_count(); ++id) {
    const FlowRecord f = net.record(id);
    o.fct.push_back(f.finished() ? f.finish - f.start : -1);
    o.skipped.push_back(f.skipped);
  }
  if (ff) o.stats = ff->stats();
  o.bypassed = net.packets_bypassed();
  o.held = net.packets_held();
  o.discarded = net.events_discarded();
  return o;
}

/// When `ff` first skipped a partition (ps; -1: never), from its timeline.
Time first_skip_time(const FastForward& ff) {
  for (const PartitionSample& s : ff.timeline())
    if (s.skipping > 0) return s.time;
  return -1;
}

WormholeSettings on() {
  WormholeSettings s;
  s.enabled = true;  // θ = 0.05, l = 2000, 1 µs
  return s;
}

}  // namespace

TEST(FastForward, LoneFlowFinishesWithinOnePacketTimeOfPacketMode) {
  // 60 MB at ~95 Gb/s goodput lasts ~5 ms: steady after the 2-ms window, then skipped to its
  // last base RTT.
  const std::vector<FlowSpec> flows = {flow(0, 1, 60'000'000)};
  const WormholeSettings ws = on();
  const Outcome pkt = run(star(2), flows, nullptr);
  const Outcome ff = run(star(2), flows, &ws);
  ASSERT_GT(pkt.fct[0], 0);
  ASSERT_GT(ff.fct[0], 0);
  EXPECT_EQ(ff.stats.skips, 1u);
  EXPECT_EQ(ff.stats.skip_backs, 0u);
  // Most of the 60,000 packets after the first 2 ms (~24,000 of them) are credited, not sent.
  EXPECT_GT(ff.stats.packets_skipped, 30'000u);
  EXPECT_LE(std::abs(ff.fct[0] - pkt.fct[0]), kPacketTime) << "packet mode " << pkt.fct[0] << " ps, ff " << ff.fct[0];
}

TEST(FastForward, RunningBytesCountWhatASkipCredited) {
  // The progress line's bytes done of a running flow are those acknowledged and those fast-forward
  // credited (never sent, so never acknowledged). The lone 60-MB flow above is skipped once, after its
  // 2-ms window, to its last base RTT: just after the skip begins, its tail is credited.
  const SimConfig cfg = config();
  Network net(cfg, star(2), make_cc(cfg, nullptr));
  net.add_flows({flow(0, 1, 60'000'000)});
  FastForward ff(net, on(), 1 * kSec);
  Time t = net.record(0).start + 2 * kMs;
  while (ff.stats().skips == 0 && t < net.record(0).start + 10 * kMs) net.run(t += 10 * kUs);
  ASSERT_EQ(ff.stats().skips, 1u);
  ASSERT_FALSE(net.flow_finished(0));
  const Flow& f = net.flow(0);
  const Network::RunningBytes r = net.running_bytes();
  EXPECT_GT(f.skipped_bytes, 30'000'000u);  // more than half the flow: ~24 MB were sent in the first 2 ms
  EXPECT_EQ(r.credited, f.skipped_bytes);
  EXPECT_EQ(r.stream, 60'000'000u - f.skipped_bytes);
  EXPECT_EQ(r.local_acked, f.snd_una);
  EXPECT_DOUBLE_EQ(r.done(), double(f.snd_una + f.skipped_bytes));
  EXPECT_GT(r.done(), 0.99 * 60'000'000);  // what is left is the last base RTT and the packets in flight
  // Counting only the acknowledged bytes read about 40 %.
  EXPECT_LT(double(f.snd_una), 0.5 * 60'000'000);
}

TEST(FastForward, ReleasingAFinishedFlowsStateChangesNoCount) {
  // The skip moves the flow's timers; their events left behind pop after the flow finished, when its
  // state is gone: each is still counted as discarded (regression: 3 with the state released, 4 kept).
  const std::vector<FlowSpec> flows = {flow(0, 1, 60'000'000)};
  const WormholeSettings ws = on();
  const Outcome kept = run(star(2), flows, &ws, nullptr, -1, true);
  const Outcome released = run(star(2), flows, &ws);
  EXPECT_EQ(released.fct, kept.fct);
  EXPECT_EQ(released.discarded, kept.discarded);
  EXPECT_EQ(kept.discarded, 4u);
  EXPECT_EQ(released.stats.packets_skipped, kept.stats.packets_skipped);
}

TEST(FastForward, LineRateWindowKnownAnswers) {
  // 400 Gb/s, 9,000-B packets (180 ns each), bound 1 %: half the window holds 200 packets, 36 µs, so
  // 72 samples of 1 µs; a 5-µs RTT needs 4 × 10 = 40. At 100 Gb/s with 1,000-B packets (80 ns) the
  // resolution needs 32 µs and an 8-µs RTT 4 × 16 = 64 samples.
  WormholeSettings ws = on();
  ws.line_rate_window = true;
  EXPECT_EQ(FastForward::line_rate_window_samples(ws, 5 * kUs, 400'000'000'000ull, 9000), 72u);
  EXPECT_EQ(FastForward::line_rate_window_samples(ws, 20 * kUs, 400'000'000'000ull, 9000), 160u);
  EXPECT_EQ(FastForward::line_rate_window_samples(ws, 8 * kUs, 100'000'000'000ull, 1000), 64u);
  EXPECT_EQ(FastForward::line_rate_window_samples(ws, 1 * kUs, 100'000'000'000ull, 1000), 32u);
  // A non-whole RTT in samples rounds up: 2 × 2.3 µs = 4.6 → 5 samples a quarter.
  EXPECT_EQ(FastForward::line_rate_window_samples(ws, 2300 * kNs, 1'000'000'000'000ull, 1000), 20u);
  ws.error_bound = 0.0025;  // four times the packets: 128 µs at 100 Gb/s
  EXPECT_EQ(FastForward::line_rate_window_samples(ws, 8 * kUs, 100'000'000'000ull, 1000), 128u);
  ws.window = 100;  // at most l
  EXPECT_EQ(FastForward::line_rate_window_samples(ws, 8 * kUs, 100'000'000'000ull, 1000), 100u);
  ws.line_rate_window = false;  // off: l
  EXPECT_EQ(FastForward::line_rate_window_samples(ws, 8 * kUs, 100'000'000'000ull, 1000), 100u);
  ws.line_rate_window = true;
  EXPECT_EQ(FastForward::line_rate_window_samples(ws, 8 * kUs, 0, 1000), 100u);  // no rate known: l
}

namespace {
/// The first instant a lone flow of `bytes` (line rate throughout: ECN off) is fast-forwarded with
/// `ws`, after its start; checks the smallest and largest line-rate windows its checks used and that
/// its FCT is within a packet time of packet mode's.
Time first_skip_of_lone_flow(const WormholeSettings& ws, uint64_t bytes, uint64_t min_window, uint64_t max_window) {
  const std::vector<FlowSpec> flows = {flow(0, 1, bytes)};
  const SimConfig cfg = config();
  Network net(cfg, star(2), make_cc(cfg, nullptr));
  net.add_flows(flows);
  FastForward ff(net, ws, 1 * kSec);
  EXPECT_EQ(ff.window(), std::max<uint64_t>(ws.window, 305u));
  net.run(1 * kSec);
  EXPECT_TRUE(net.flow_finished(0));
  EXPECT_EQ(ff.stats().line_rate_window_min, min_window);
  EXPECT_EQ(ff.stats().line_rate_window_max, max_window);
  const Time first_skip = first_skip_time(ff);
  const Outcome pkt = run(star(2), flows, nullptr);
  EXPECT_LE(std::abs((net.record(0).finish - net.record(0).start) - pkt.fct[0]), kPacketTime);
  return first_skip - net.record(0).start / kUs * kUs;
}
}  // namespace

TEST(FastForward, AFlowAtLineRateNeedsOnlyTheSettingsWindow) {
  // DCQCN's update period here is RP_TIMER + RATE_DECREASE_INTERVAL = 304 µs, so a 100-µs window is
  // lengthened to 305 samples for flows below line rate. A lone flow with ECN off sends at its line
  // rate throughout: no timer holds its rate, and it is checked, found steady and skipped after
  // the setting's 100 samples (it waited 305 before).
  WormholeSettings ws = on();
  ws.window = 100;
  EXPECT_EQ(first_skip_of_lone_flow(ws, 60'000'000, 100, 100), 100 * kUs);
}

TEST(FastForward, AFlowThatCannotOutlastTheWindowIsJudgedOverItsOwnTimeScale) {
  // With line_rate_window: 100 Gb/s, 1,000-B packets: 32 samples for the resolution, and 4 × ⌈2 RTTs⌉ =
  // 36 for this path's 4.5-µs base RTT. A 15-MB flow (1.2 ms) cannot outlast l = 2000 samples: it is
  // checked after 36, its goodput the same over both halves of its span, and skipped at once. A
  // 60-MB flow (4.8 ms) outlasts l: its first check finds that and it waits for the full window.
  WormholeSettings ws = on();
  ws.line_rate_window = true;
  EXPECT_EQ(first_skip_of_lone_flow(ws, 15'000'000, 36, 36), 36 * kUs);
  EXPECT_EQ(first_skip_of_lone_flow(ws, 60'000'000, 36, 2000), 2000 * kUs);
}

TEST(FastForward, APartitionBelowLineRateIsCheckedAgainWhenItsWindowCanBeFull) {
  // Two flows into one host with ECN marking on: DCQCN cuts them below line rate within the first
  // 100 us. With l = 100 (lengthened to 305 samples for flows below line rate, as above) their
  // partition is checked once at 100 samples, then not again until 305 samples can be in the
  // window: a check per sample in between could not pass (the window is not yet full).
  SimConfig cfg = config();
  cfg.enable_qcn = true;
  Network net(cfg, star(3), make_cc(cfg, nullptr));
  net.add_flows({flow(0, 2, 60'000'000), flow(1, 2, 60'000'000)});
  WormholeSettings ws = on();
  ws.window = 100;
  FastForward ff(net, ws, 1 * kSec);
  const Time start = std::max(net.record(0).start, net.record(1).start);
  const Time first = (start / kUs + 100) * kUs, full = (start / kUs + 305) * kUs;
  // (A tick comes just after its sample instant: the sample sees every event at that instant.)
  net.run(first - kUs / 2);
  EXPECT_EQ(ff.stats().checks, 0u);
  net.run(first + kUs / 2);
  EXPECT_EQ(ff.stats().checks, 1u);
  ASSERT_LT(net.flow(0).rate_bps, net.flow(0).max_rate_bps);  // cut: the long window applies
  net.run(full - kUs / 2);
  EXPECT_EQ(ff.stats().checks, 1u);
  net.run(full + kUs / 2);
  EXPECT_EQ(ff.stats().checks, 2u);
  net.run(full + 3 * kUs / 2);  // the window is full: checked every sample until it is steady
  EXPECT_EQ(ff.stats().checks, 3u);
}

TEST(FastForward, DetectOnlyIsPacketMode) {
  // Steady checks run, nothing is skipped: bit-identical to a run without a controller.
  const std::vector<FlowSpec> flows = {flow(0, 2, 20'000'000), flow(1, 2, 10'000'000, 500 * kUs), flow(2, 0, 30'000'000)};
  WormholeSettings ws = on();
  ws.fast_forward = false;
  ws.window = 200;
  const Outcome pkt = run(star(3), flows, nullptr);
  const Outcome det = run(star(3), flows, &ws);
  EXPECT_GT(det.stats.checks, 0u);
  EXPECT_EQ(det.stats.skips, 0u);
  EXPECT_EQ(det.fct, pkt.fct);
}

TEST(FastForward, SkipBackWhenADependentFlowArrivesMidSkip) {
  // Flow A (0 -> 2, 60 MB) is steady at ~2 ms and skipped towards ~5 ms; at 3 ms a dependency
  // releases flow B (1 -> 2, 1 MB), which shares A's last egress port: nobody knew it when the skip
  // began, so A is pulled back to 3 ms and keeps only the credit of the 1 ms it really skipped.
  const std::vector<FlowSpec> flows = {flow(0, 2, 60'000'000)};
  const FlowSpec b = flow(1, 2, 1'000'000);
  const Time at = 3 * kMs;
  const WormholeSettings ws = on();
  const Outcome pkt = run(star(3), flows, nullptr, &b, at);
  const Outcome ff = run(star(3), flows, &ws, &b, at);
  ASSERT_EQ(pkt.fct.size(), 2u);
  ASSERT_EQ(ff.fct.size(), 2u);
  EXPECT_EQ(ff.stats.skips, 1u);  // after B, A's end is nearer than another window
  EXPECT_EQ(ff.stats.skip_backs, 1u);
  for (size_t i = 0; i < 2; ++i)
    EXPECT_LE(std::abs(ff.fct[i] - pkt.fct[i]), 2 * kPacketTime)
        << "flow " << i << ": packet mode " << pkt.fct[i] << " ps, ff " << ff.fct[i];

  // Without skip-back A keeps the credit of the whole planned skip: it finishes far too early.
  WormholeSettings no_back = ws;
  no_back.skip_back = false;
  const Outcome wrong = run(star(3), flows, &no_back, &b, at);
  EXPECT_LT(wrong.fct[0], pkt.fct[0] - 100 * kUs);
}

TEST(FastForward, FlowsCoupledByTheirAcksAreOnePartition) {
  // A (0 -> 1) and B (1 -> 0) have disjoint data paths, but B's ACKs leave the switch through A's
  // data port (to host 1) and A's through B's: each one's ACKs wait behind the other's data, so
  // each one's RTT, and with windows its throughput, depends on the other's queue. They are one
  // partition, skipped together once both are steady, and each ends within two packets plus the
  // error bound's share of its skipped time of packet mode. (As two partitions, flow 1 ended 2.8 %
  // early: each flow's ACKs also take 60 of every 1,108 bytes of the link its partner's data
  // leaves on, and wait for the data packet on the wire.)
  const std::vector<FlowSpec> flows = {flow(0, 1, 60'000'000), flow(1, 0, 60'000'000, 300 * kUs)};
  const WormholeSettings ws = on();
  const Outcome pkt = run(star(2), flows, nullptr);
  const Outcome ff = run(star(2), flows, &ws);
  EXPECT_EQ(ff.stats.max_partitions, 1u);
  EXPECT_GE(ff.stats.skips, 1u);
  EXPECT_EQ(ff.stats.skip_backs, 0u);
  EXPECT_EQ(ff.bypassed, 0u);  // no other flow's ACK meets a frozen port
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_GT(ff.skipped[i], 1 * kMs);
    EXPECT_LE(std::abs(ff.fct[i] - pkt.fct[i]), 2 * kPacketTime + static_cast<Time>(ws.error_bound * double(ff.skipped[i])))
        << "flow " << i << ": packet mode " << pkt.fct[i] << " ps, ff " << ff.fct[i];
  }
}

TEST(FastForward, SameOutcomeForAnyThreadCount) {
  // Eight disjoint pairs started together: eight partitions due at the same tick, checked in parallel.
  std::vector<FlowSpec> flows;
  for (uint32_t h = 0; h < 8; ++h) flows.push_back(flow(h, h + 8, 20'000'000 + h * 1'000'000));
  WormholeSettings one = on(), many = on();
  one.window = many.window = 500;
  one.threads = 1;
  many.threads = 4;
  one.parallel_min_flows = many.parallel_min_flows = 0;  // always through oneTBB
  const Outcome a = run(star(16), flows, &one);
  const Outcome b = run(star(16), flows, &many);
  EXPECT_EQ(a.stats.skips, 8u);
  EXPECT_EQ(a.fct, b.fct);
  EXPECT_EQ(a.stats.packets_skipped, b.stats.packets_skipped);
  EXPECT_EQ(a.stats.checks, b.stats.checks);
}

namespace {

/// Hosts 0, 1 on leaf 4, hosts 2, 3 on leaf 5, spines 6 and 7 joining the leaves; 100 G, 1 µs.
Topology two_spines() {
  Topology t;
  t.num_nodes = 8;
  t.is_switch = {0, 0, 0, 0, 1, 1, 1, 1};
  for (auto [a, b] : {std::pair{0u, 4u}, {1u, 4u}, {2u, 5u}, {3u, 5u}, {4u, 6u}, {4u, 7u}, {5u, 6u}, {5u, 7u}})
    t.links.push_back(TopoLink{a, b, k100G, 1 * kUs, 0, 0});
  return t;
}

/// The spine (6 or 7) a started flow's data path crosses.
uint32_t spine_of(const Network& net, uint32_t id) {
  for (uint32_t p : net.data_path(id)) {
    const uint32_t node = net.ports()[p].node;
    if (node >= 6) return node;
  }
  return 0;
}

/// The spine flow `id`'s ACKs cross (0: none).
uint32_t spine_of_acks(const Network& net, uint32_t id) {
  for (uint32_t p : net.ack_path(id)) {
    const uint32_t node = net.ports()[p].node;
    if (node >= 6) return node;
  }
  return 0;
}

}  // namespace

TEST(FastForward, LinkDownReroutesOnlyTheFlowsItMoves) {
  // Two flows on different spines are two partitions; LINK_DOWN of one spine's leaf-4 link moves
  // that flow onto the other spine, where it shares the uplinks: one partition, and both finish.
  SimConfig cfg = config();
  std::vector<FlowSpec> flows = {flow(0, 2, 5'000'000, 2 * kSec), flow(1, 3, 5'000'000, 2 * kSec)};
  uint32_t spine0 = 0, spine1 = 0;
  // The ECMP hash decides the spines: the flows' destination ports are chosen (the first pair that
  // works, so the test stays deterministic) to put each flow's data and ACKs on a spine of its own
  // (a flow whose ACKs crossed the other's spine would share its queues: one partition).
  bool apart = false;
  for (uint32_t d0 = 100; d0 < 132 && !apart; ++d0)
    for (uint32_t d1 = 100; d1 < 132 && !apart; ++d1) {
      flows[0].dport = d0, flows[1].dport = d1;
      Network probe(cfg, two_spines(), make_cc(cfg, nullptr));
      probe.add_flows(flows);
      probe.run(2 * kSec + 1 * kUs);
      spine0 = spine_of(probe, 0), spine1 = spine_of(probe, 1);
      apart = spine0 != spine1 && spine_of_acks(probe, 0) == spine0 && spine_of_acks(probe, 1) == spine1;
    }
  ASSERT_TRUE(apart);
  cfg.link_down_us = 100;
  cfg.link_down_a = 4;
  cfg.link_down_b = spine0;
  Network net(cfg, two_spines(), make_cc(cfg, nullptr));
  net.add_flows(flows);
  WormholeSettings ws = on();
  FastForward ff(net, ws, 3 * kSec);
  net.run(2 * kSec + 50 * kUs);
  EXPECT_EQ(ff.partitions().size(), 2u);
  net.run(2 * kSec + 150 * kUs);
  EXPECT_EQ(ff.partitions().size(), 1u);
  EXPECT_EQ(spine_of(net, 0), spine1);
  EXPECT_EQ(spine_of(net, 1), spine1);
  net.run(3 * kSec);
  EXPECT_TRUE(net.flow_finished(0));
  EXPECT_TRUE(net.flow_finished(1));
  EXPECT_EQ(ff.partitions().size(), 0u);
}

namespace {

/// The reference ring runs' HPCC config (INT on every hop, a rate update on every ACK, windows).
SimConfig hpcc_config() {
  return read_hpcc_config(std::string(WH_TEST_DATA) + "/refruns/hpcc-ring16-fattree-k4-1MB/config_hpcc.txt");
}

/// HPCC flows 0 -> 2 and 1 -> 2 on star(3) sharing the port to host 2, with Wormhole set by `ws`
/// (nullptr: packet mode) and skips bounded by `run_end`; returns their FCTs (ps), the run's skip
/// counters and when the first skip began (-1: none).
struct HpccRun {
  std::vector<Time> fct, skipped;
  SkipStats stats;
  Time first_skip = -1;
};
HpccRun hpcc_pair(const WormholeSettings* ws, Time run_end) {
  const SimConfig cfg = hpcc_config();
  Network net(cfg, star(3), make_cc(cfg, nullptr));
  net.add_flows({flow(0, 2, 20'000'000), flow(1, 2, 20'000'000)});
  std::unique_ptr<FastForward> ff;
  if (ws) ff = std::make_unique<FastForward>(net, *ws, run_end);
  net.run(1 * kSec);
  HpccRun r;
  for (uint32_t id = 0; id < net.flow_count(); ++id) {
    const FlowRecord f = net.record(id);
    r.fct.push_back(f.finished() ? f.finish - f.start : -1);
    r.skipped.push_back(f.skipped);
  }
  if (ff) {
    r.stats = ff->stats();
    for (const PartitionSample& s : ff->timeline())
      if (s.skipping > 0 && r.first_skip < 0) r.first_skip = s.time;
  }
  return r;
}

}  // namespace

TEST(FastForward, HpccPairWithinTheRateBound) {
  // Two HPCC flows into one port share it unevenly (3.20 and 3.68 ms), and the split drifts. The
  // paper bounds a skip's goodput by θ / (1 − θ) of the rate (Theorem 2); the goodput's trend
  // between the quarters of its window shortens the skip so that its estimated error stays within
  // the error bound, and each FCT moves by no more than that share of its skipped time.
  WormholeSettings ws = on();
  ws.window = 500;
  const HpccRun pkt = hpcc_pair(nullptr, 1 * kSec);
  const HpccRun ff = hpcc_pair(&ws, 1 * kSec);
  EXPECT_GE(ff.stats.skips, 1u);
  EXPECT_GT(ff.stats.packets_skipped, 500u);  // of 40,000
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_LE(std::abs(ff.fct[i] - pkt.fct[i]), 2 * kPacketTime + static_cast<Time>(ws.error_bound * double(ff.skipped[i])))
        << "flow " << i << ": packet mode " << pkt.fct[i] << " ps, ff " << ff.fct[i];
  }
}

/// Network::shift by δ with nothing credited: from then on the flow's state at T + δ must equal
/// packet mode's at T, exactly — including the ACKs that were on the reverse path (not the
/// partition's ports) when it moved: on 1-µs links most reach their next node after the 200-ns
/// freeze has ended, and must still wait out the shift; and, with HPCC, the INT clock: the
/// records the flow keeps and those in flight move with it, or the next update reads a gap.
/// With `back` > 0, the shift is pulled back by `back` after `back_after` (during the freeze), as a
/// skip-back does: the partition then runs exactly δ − back later than packet mode.
void check_shift_is_exact(const SimConfig& cfg, Time back = 0, Time back_after = 0) {
  Network pkt(cfg, star(3), make_cc(cfg, nullptr)), sh(cfg, star(3), make_cc(cfg, nullptr));
  // Two flows into one port, so the CC has something to react to.
  const std::vector<FlowSpec> flows = {flow(0, 2, 2'000'000), flow(1, 2, 2'000'000)};
  pkt.add_flows(flows);
  sh.add_flows(flows);
  const Time t0 = 100 * kUs, delta = 200 * kNs;
  pkt.run(t0);
  sh.run(t0);
  std::vector<uint32_t> ports = sh.data_path(0), more = sh.data_path(1);
  ports.insert(ports.end(), more.begin(), more.end());
  std::sort(ports.begin(), ports.end());
  ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
  sh.shift(ports, {0, 1}, delta, t0 + delta);
  Time lag = delta;
  if (back > 0) {
    sh.run(t0 + back_after);
    sh.shift(ports, {0, 1}, -back, 0);
    lag = delta - back;
  }
  for (Time t = t0 + 10 * kNs; t < t0 + 20 * kUs; t += 10 * kNs) {
    if (t + lag < sh.now()) continue;
    pkt.run(t);
    sh.run(t + lag);
    for (uint32_t id = 0; id < 2; ++id) {
      const Flow &a = pkt.flow(id), &b = sh.flow(id);
      ASSERT_EQ(a.snd_una, b.snd_una) << "flow " << id << " at T = " << t << " ps";
      ASSERT_EQ(a.snd_nxt, b.snd_nxt) << "flow " << id << " at T = " << t << " ps";
      ASSERT_EQ(a.rcv_nxt, b.rcv_nxt) << "flow " << id << " at T = " << t << " ps";
      ASSERT_EQ(a.rate_bps, b.rate_bps) << "flow " << id << " at T = " << t << " ps";
      ASSERT_EQ(a.last_progress + lag, b.last_progress) << "flow " << id << " at T = " << t << " ps";
    }
  }
  EXPECT_GT(sh.packets_held(), 0u);
  pkt.run(1 * kSec);
  sh.run(1 * kSec);
  for (uint32_t id = 0; id < 2; ++id) EXPECT_EQ(pkt.record(id).finish + lag, sh.record(id).finish);
}

TEST(FastForward, AShiftedPartitionIsPacketModeLater) {
  check_shift_is_exact(config());  // DCQCN, ECN off: rates at line rate
}

TEST(FastForward, AShiftedHpccPartitionIsPacketModeLater) {
  check_shift_is_exact(hpcc_config());  // a rate update from INT on every ACK
}

TEST(FastForward, APulledBackPartitionIsPacketModeLater) {
  // Shifted by 200 ns, pulled back by 130 ns after 70 ns (what a skip-back does): 70 ns behind,
  // with held ACKs re-timed and nothing scheduled before now.
  check_shift_is_exact(config(), 130 * kNs, 70 * kNs);
  check_shift_is_exact(hpcc_config(), 130 * kNs, 70 * kNs);
}

TEST(FastForward, MembershipChangesResetTheWindows) {
  // A (0 -> 2, 60 MB) alone would be steady at 2 ms (its DCQCN rate never moves with ECN off).
  // B (1 -> 2, 1 MB) joins A's partition at 1 ms and leaves it after about 1.2 ms: each change
  // restarts A's window, so the first check, and the skip, come a full window after B left.
  const std::vector<FlowSpec> flows = {flow(0, 2, 60'000'000), flow(1, 2, 1'000'000, 1 * kMs)};
  const SimConfig cfg = config();
  Network net(cfg, star(3), make_cc(cfg, nullptr));
  net.add_flows(flows);
  const WormholeSettings ws = on();
  FastForward ff(net, ws, 1 * kSec);
  net.run(1 * kSec);
  ASSERT_TRUE(net.flow_finished(1));
  const Time first_skip = first_skip_time(ff);
  EXPECT_EQ(ff.stats().skips, 1u);
  // B leaves at the first tick after its finish (ticks are on the 1-µs grid); the window after
  // that reset holds the 2,000 grid points after the tick.
  const Time left = (net.record(1).finish / kUs + 1) * kUs;
  const Time due = (left / kUs + 2000) * kUs;
  EXPECT_EQ(first_skip, due);
}

TEST(FastForward, FlowsJoiningBetweenTicksRestartEachTrackOnce) {
  // 32 flows into one host join one partition 20 ns apart, all before the first tick (1 µs):
  // 32 resets. Restarting every track of the partition at each reset, as an eager reset would, is
  // 1 + 2 + ... + 32 = 528 restarts, quadratic in a fabric-wide all-to-all's partition; restarted
  // when read, none is restarted before the tick (nothing reads them: no CNP with ECN off), and
  // each once over the run (no membership change after the last join is read before the flows end).
  std::vector<FlowSpec> flows;
  for (uint32_t i = 1; i <= 32; ++i) flows.push_back(flow(i, 0, 1'000'000, (i - 1) * 20 * kNs));
  const SimConfig cfg = config();
  Network net(cfg, star(33), make_cc(cfg, nullptr));
  net.add_flows(flows);
  const WormholeSettings ws = on();
  FastForward ff(net, ws, 1 * kSec);
  net.run(990 * kNs);
  ASSERT_EQ(ff.partitions().size(), 1u);
  EXPECT_EQ(ff.partitions().flows(ff.partitions().live_ids().front()).size(), 32u);
  EXPECT_EQ(ff.track_restarts(), 0u);
  net.run(1 * kSec);
  for (uint32_t id = 0; id < 32; ++id) EXPECT_TRUE(net.flow_finished(id));
  EXPECT_EQ(ff.track_restarts(), 32u);
}

TEST(FastForward, APeriodsStartValuesAreThoseAtItsStartAfterItsFlowsMove) {
  // Flow 0 (host 1 -> host 0) sends from 0; flow 1 (host 2 -> host 0) starts at 300 ns and joins its
  // partition: a period starts, with nothing copied. Flow 0's packets leave every 83.84 ns (1,048 B at
  // 100 Gb/s), none at 300 ns, so at the start it had sent 4 packets; by the tick before 1 µs it has sent
  // more. What the memoizer reads at the tick is the value at the start, kept when snd_nxt first moved.
  const SimConfig cfg = config();
  Network net(cfg, star(3), make_cc(cfg, nullptr));
  net.add_flows({flow(1, 0, 1'000'000, 0), flow(2, 0, 1'000'000, 300 * kNs)});
  const WormholeSettings ws = on();
  FastForward ff(net, ws, 1 * kSec);
  struct Reader final : PeriodObserver {  // the values are kept for memoization: one must be listening
    void period_started(uint32_t, Time) override {}
    void period_converged(uint32_t, Time) override {}
  } reader;
  ff.set_period_observer(&reader);
  net.run(300 * kNs);
  const uint64_t sent_at_start = net.flow(0).snd_nxt, rate_at_start = net.flow(0).rate_bps;
  EXPECT_EQ(sent_at_start, 4u * cfg.packet_payload_size);
  net.run(990 * kNs);
  ASSERT_EQ(ff.partitions().size(), 1u);
  const uint32_t pid = ff.partitions().live_ids().front();
  ASSERT_EQ(ff.partitions().flows(pid).size(), 2u);
  ASSERT_GT(net.flow(0).snd_nxt, sent_at_start);
  EXPECT_EQ(ff.period_start(0, ff.period_epoch(pid)), std::make_pair(sent_at_start, rate_at_start));
  // Flow 1 has not moved since its own start (its first packet, at 300 ns, left after the reset).
  const auto [sent1, rate1] = ff.period_start(1, ff.period_epoch(pid));
  EXPECT_EQ(sent1, 0u);
  EXPECT_EQ(rate1, net.flow(1).max_rate_bps);
}

TEST(FastForward, MergedAndSplitPartitionsRestartTheirFlowsWindows) {
  // Seven flows on a star joining and leaving each other's partitions (window 100 samples, so
  // partitions are checked and skipped between the changes). A flow whose partition was merged into
  // another must restart its window with the merged partition's reset: the FCTs and checks below are
  // those of a reset that restarts every track at once (measured); a merge that left the absorbed
  // partition's tracks current gave 1,990,253,000 ps for flow 1 and 865 checks.
  const std::vector<FlowSpec> flows = {
      flow(5, 6, 2'200'000, 93'076 * kNs),  flow(7, 2, 12'700'000, 170'823 * kNs), flow(6, 3, 3'700'000, 236'782 * kNs),
      flow(1, 2, 17'700'000, 322'571 * kNs), flow(2, 3, 11'200'000, 351'023 * kNs), flow(4, 0, 17'700'000, 405'181 * kNs),
      flow(6, 5, 1'700'000, 485'555 * kNs)};
  WormholeSettings ws = on();
  ws.window = 100;
  const Outcome o = run(star(8), flows, &ws);
  const std::vector<Time> fct = {188'443'000, 1'989'788'000, 548'250'000, 2'420'859'000,
                                 2'016'816'000, 1'473'263'000, 221'872'000};
  for (uint32_t id = 0; id < flows.size(); ++id) EXPECT_EQ(o.fct[id], fct[id]) << "flow " << id;  // -1: unfinished
  EXPECT_EQ(o.stats.checks, 857u);
  EXPECT_EQ(o.stats.skips, 6u);
}

namespace {
/// Island hooks that say flow 0 is simulated exactly (as the collective memo says of a recording's flows).
class ExactFlowZero final : public IslandHooks {
 public:
  void flow_started(uint32_t, uint32_t, uint32_t) override {}
  void replay_due(uint32_t) override {}
  bool simulated_exactly(uint32_t id) const override { return id == 0; }
};
}  // namespace

TEST(FastForward, AFlowSimulatedExactlyIsNeverSkipped) {
  // Two lone flows at line rate on their own hosts: flow 1 is skipped after its line-rate window,
  // flow 0 — a recording's, the collective memo would say — runs packet by packet, exactly as in
  // packet mode (its partition is never skipped, and no other can freeze its ports).
  const std::vector<FlowSpec> flows = {flow(0, 1, 20'000'000), flow(2, 3, 20'000'000)};
  const SimConfig cfg = config();
  Network net(cfg, star(4), make_cc(cfg, nullptr));
  ExactFlowZero hooks;
  net.set_island_hooks(&hooks);
  net.add_flows(flows);
  WormholeSettings ws = on();
  ws.line_rate_window = true;  // 20-MB flows (1.6 ms) are judged after 36 samples
  FastForward ff(net, ws, 1 * kSec);
  net.run(1 * kSec);
  net.set_island_hooks(nullptr);
  EXPECT_EQ(ff.stats().skips, 1u);
  EXPECT_EQ(ff.stats().max_partitions, 2u);
  const Outcome pkt = run(star(4), flows, nullptr);
  EXPECT_EQ(net.record(0).finish - net.record(0).start, pkt.fct[0]);
  EXPECT_EQ(net.record(0).skipped, 0);
  EXPECT_GT(net.record(1).skipped, 0);
  EXPECT_LE(std::abs((net.record(1).finish - net.record(1).start) - pkt.fct[1]), kPacketTime);
}

TEST(FastForward, NoSkipBeforeTheGoodputHasATrend) {
  // l = 4 samples on a path of 4.5-µs base RTT (a window the warnings call too short): checkpoints
  // must be two RTTs apart, so the goodput's first span (two RTTs) comes long before its trend's two
  // spans. A skip needs both: the first comes after checkpoints 2 µs, ≥ 11 µs and ≥ 20 µs into the
  // flow, not at 11 µs with no trend to bound its error (as it did before).
  const std::vector<FlowSpec> flows = {flow(0, 1, 15'000'000)};
  WormholeSettings ws = on();
  ws.window = 4;
  const SimConfig cfg = config();
  Network net(cfg, star(2), make_cc(cfg, nullptr));
  net.add_flows(flows);
  FastForward ff(net, ws, 1 * kSec);
  net.run(1 * kSec);
  ASSERT_TRUE(net.flow_finished(0));
  const Time first_skip = first_skip_time(ff);
  ASSERT_GT(first_skip, 0);
  EXPECT_GE(first_skip - net.record(0).start, 18 * kUs);
}

TEST(FastForward, BelowLineRateTheLineRateWindowChangesNoDecision) {
  // One flow from a 400-Gb/s host into one behind a 100-Gb/s link, ECN marking on, so DCQCN cuts it
  // below its line rate within its first µs: with line_rate_window its partition is checked after its
  // line-rate window (4 × ⌈2 RTTs⌉ = 36 samples), finds it below line rate and goes on with the
  // checkpoints l would have had, so every decision and the FCT are those without the setting.
  SimConfig cfg = config();
  cfg.enable_qcn = true;
  Topology slow_link = star(2);
  slow_link.links[0].rate_bps = 400'000'000'000ull;
  auto once = [&](bool lrw) {
    Network net(cfg, slow_link, make_cc(cfg, nullptr));
    net.add_flows({flow(0, 1, 60'000'000)});
    WormholeSettings ws = on();
    ws.window = 101;
    ws.line_rate_window = lrw;
    FastForward ff(net, ws, 1 * kSec);
    net.run(1 * kSec);
    std::vector<Time> fct{net.record(0).finish - net.record(0).start};
    return std::make_tuple(fct, ff.stats().skips, ff.stats().steady_found, ff.stats().line_rate_window_min);
  };
  const auto [fct_off, skips_off, steady_off, lr_off] = once(false);
  const auto [fct_on, skips_on, steady_on, lr_on] = once(true);
  EXPECT_GT(skips_off, 0u);
  EXPECT_EQ(fct_on, fct_off);
  EXPECT_EQ(skips_on, skips_off);
  EXPECT_EQ(steady_on, steady_off);
  EXPECT_EQ(lr_off, 101u);
  EXPECT_EQ(lr_on, 36u);
}
