// Replaying memoized periods (the Wormhole paper: memoization) on small networks: a second identical pair
// replays the first one's unsteady period and finishes within packet times of packet mode; a
// replay in which a flow would end is cut short before that flow's end; an interrupt mid-replay
// pulls it back in proportion to the time kept.
#include <gtest/gtest.h>

#include <vector>

#include "memo_runs.h"

using namespace wh;
using namespace wh::test;

TEST(MemoReplay, SecondIdenticalPairReplaysTheFirstsPeriod) {
  // A (0 -> 1) converges at 500 µs and is recorded; B (2 -> 3), the same pattern, starts at 1 ms:
  // its period is replayed (credited A's 500 µs of bytes, shifted by 500 µs less the tick it
  // waited), then fast-forwarded at once with A's goodput.
  const std::vector<FlowSpec> flows = {flow(0, 1, 60'000'000), flow(2, 3, 60'000'000, 1 * kMs)};
  const Outcome pkt = run(flows, Mode::Packet);
  const Outcome memo = run(flows, Mode::Memo);
  EXPECT_EQ(memo.stats.replays, 1u);
  EXPECT_EQ(memo.stats.replay_backs, 0u);
  EXPECT_EQ(memo.memo.inserted, 2u);  // A fresh; A again after its skip ended at B's start (not fresh)
  EXPECT_EQ(memo.memo.replayed, 1u);
  EXPECT_EQ(memo.stats.skips, 3u);  // A twice after its checks, B straight after its replay
  EXPECT_GT(memo.stats.replayed_flow_time, 498 * kUs);
  // A star is symmetric: B's first 500 µs are A's, so the replay is exact up to whole packets and ns.
  expect_fcts_within_two_packets(memo, pkt);
}

TEST(MemoReplay, EveryPartitionLookedUpAtATickFindsItsPattern) {
  // A (0 -> 1) is recorded; B (2 -> 3) and C (4 -> 5), the same pattern, start together at 1 ms and
  // are looked up at the same tick (with A's, whose skip their start ended): both replay A's period,
  // whether the lookups run on the calling thread (three flows, below parallel_min_flows) or on
  // oneTBB threads.
  const std::vector<FlowSpec> flows = {flow(0, 1, 60'000'000), flow(2, 3, 60'000'000, 1 * kMs),
                                       flow(4, 5, 60'000'000, 1 * kMs)};
  const SimConfig cfg = config();
  const Outcome serial = run(flows, Mode::Memo, nullptr, -1, true, cfg, 0.05, true, 0, star(6));
  const Outcome threaded = run(flows, Mode::Memo, nullptr, -1, true, cfg, 0.05, true, 0, star(6), 0);
  EXPECT_EQ(serial.memo.replayed, 2u);
  EXPECT_EQ(serial.stats.replays, 2u);
  EXPECT_EQ(threaded.memo.replayed, 2u);
  EXPECT_EQ(serial.fct, threaded.fct);
}

TEST(MemoReplay, CutShortWhereAFlowWouldEndInside) {
  // B (3 MB, ~250 µs at line rate) would finish inside the 500-µs replay: the replay is cut where B
  // comes within its guard of its end (about half the period), crediting A's bytes of the period in
  // proportion to the time, and B's last base RTT and packet are simulated. A star is symmetric and
  // A sent at line rate through its period, so B ends within packet times of packet mode.
  const std::vector<FlowSpec> flows = {flow(0, 1, 60'000'000), flow(2, 3, 3'000'000, 1 * kMs)};
  const Outcome pkt = run(flows, Mode::Packet);
  const Outcome memo = run(flows, Mode::Memo);
  EXPECT_EQ(memo.stats.replays, 1u);
  EXPECT_EQ(memo.stats.replays_cut, 1u);
  // The period that starts at the cut finds the pattern again, with B's guard left: less than a
  // sample interval of it to replay, refused.
  EXPECT_EQ(memo.memo.hits, 2u);
  EXPECT_EQ(memo.stats.replays_refused, 1u);
  // Cut at B's room over A's goodput: more than 200 µs of B's 250 are replayed, none past its end.
  EXPECT_GT(memo.stats.replayed_flow_time, 200 * kUs);
  EXPECT_LT(memo.stats.replayed_flow_time, pkt.fct[1]);
  expect_fcts_within_two_packets(memo, pkt);
}

TEST(MemoReplay, ACutCreditsEveryFlowOfThePartitionItsShare) {
  // A partition of two flows that share no port: 0 -> 1 and 1 -> 0, each one's ACKs crossing the
  // other's data at the switch. Recorded at 500 µs; the same pair 2 -> 3, 3 -> 2 starts at 1 ms with a
  // 3-MB flow that would end inside the replay: the replay is cut where it nears its end, and the
  // 60-MB flow is credited the same share of its recorded bytes. Both sent at line rate throughout,
  // so every flow still ends within packet times of packet mode.
  const std::vector<FlowSpec> flows = {flow(0, 1, 60'000'000), flow(1, 0, 60'000'000),
                                       flow(2, 3, 60'000'000, 1 * kMs), flow(3, 2, 3'000'000, 1 * kMs)};
  const Outcome pkt = run(flows, Mode::Packet);
  const Outcome memo = run(flows, Mode::Memo);
  EXPECT_EQ(memo.stats.replays, 1u);
  EXPECT_EQ(memo.stats.replays_cut, 1u);
  // Two flows of more than 200 µs each replayed, neither past the short flow's end.
  EXPECT_GT(memo.stats.replayed_flow_time, 2 * 200 * kUs);
  EXPECT_LT(memo.stats.replayed_flow_time, 2 * pkt.fct[3]);
  expect_fcts_within_two_packets(memo, pkt);
}

TEST(MemoReplay, NoCutWhereFlowsContendForAPort) {
  // 0 -> 2 and 1 -> 2 share the switch port to host 2, and so do 3 -> 5 and 4 -> 5, which start at 1 ms
  // with a 3-MB flow that would end inside the replay. Their split of the port follows the CC, so the
  // recorded bytes need not be even over the period: no cut, the hit is refused and simulated, and the
  // run is the fast-forward-only run.
  const std::vector<FlowSpec> flows = {flow(0, 2, 60'000'000), flow(1, 2, 60'000'000),
                                       flow(3, 5, 60'000'000, 1 * kMs), flow(4, 5, 3'000'000, 1 * kMs)};
  const Outcome ff = run(flows, Mode::FastForward);
  const Outcome memo = run(flows, Mode::Memo);
  EXPECT_GE(memo.memo.hits, 1u);
  EXPECT_EQ(memo.stats.replays, 0u);
  EXPECT_EQ(memo.stats.replays_cut, 0u);
  EXPECT_GE(memo.stats.replays_refused, 1u);
  EXPECT_EQ(memo.fct, ff.fct);
}

TEST(MemoReplay, AnInterruptPullsTheReplayBack) {
  // C (4 -> 3), released by a dependency at 1.2 ms, shares B's receiver port in the middle of B's
  // replay (1 ms .. 1.5 ms): the replay is pulled back to 1.2 ms keeping the bytes of the 200 µs
  // kept (at line rate, as B really sent them), and B and C share the port from then on.
  const std::vector<FlowSpec> flows = {flow(0, 1, 60'000'000), flow(2, 3, 60'000'000, 1 * kMs)};
  const FlowSpec c = flow(4, 3, 20'000'000);
  const Outcome pkt = run(flows, Mode::Packet, &c, 1200 * kUs);
  const Outcome memo = run(flows, Mode::Memo, &c, 1200 * kUs);
  EXPECT_GE(memo.stats.replays, 1u);
  EXPECT_EQ(memo.stats.replay_backs, 1u);
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_GT(memo.fct[i], 0);
    // Each of the partition's skips and the pull-back rounds to whole packets and whole ns (a
    // packet time or so each; 81-276 ns measured): a few packet times.
    EXPECT_LE(std::abs(memo.fct[i] - pkt.fct[i]), 5 * kPacketTime)
        << "flow " << i << ": packet mode " << pkt.fct[i] << " ps, memo " << memo.fct[i];
  }
  // Without skip-back the replay keeps all 500 µs of bytes though only 200 µs passed: B ends far early.
  const Outcome kept = run(flows, Mode::Memo, &c, 1200 * kUs, false);
  EXPECT_LT(kept.fct[1], pkt.fct[1] - 100 * kUs);
}

namespace {

/// Two incasts of two 60-MB flows each on a star, the second 6 ms after the first: the second's
/// period replays the first's, whose rates converged to a fair share under CC `cfg`. Returns the
/// second incast's per-flow FCT errors against packet mode and, last, the error of its completion
/// (the later FCT: what a collective waits for).
std::vector<double> second_incast_errors(const SimConfig& cfg, Outcome* memo_out) {
  const std::vector<FlowSpec> flows = {flow(0, 2, 60'000'000), flow(1, 2, 60'000'000), flow(3, 5, 60'000'000, 6 * kMs),
                                       flow(4, 5, 60'000'000, 6 * kMs)};
  const Outcome pkt = run(flows, Mode::Packet, nullptr, -1, true, cfg);
  *memo_out = run(flows, Mode::Memo, nullptr, -1, true, cfg);
  auto rel = [](Time a, Time b) { return std::abs(double(a - b)) / double(b); };
  return {rel(memo_out->fct[2], pkt.fct[2]), rel(memo_out->fct[3], pkt.fct[3]),
          rel(std::max(memo_out->fct[2], memo_out->fct[3]), std::max(pkt.fct[2], pkt.fct[3]))};
}

}  // namespace

TEST(MemoReplay, ContendingDcqcnFlowsRestoreTheirConvergedState) {
  // DCQCN with ECN marking: the first incast's flows are cut by CNPs to about half the link each
  // and their timers run; the second incast's period is replayed from that state (α, target rate,
  // armed timers) and fast-forwarded. Which of two interchangeable flows got the larger share in
  // the recorded period is chance (random marking), so per flow the replay is only as good as the
  // split's randomness allows (measured 1.1 % and 2.2 %; fast-forward alone 0.9 % and 0.1 %); the
  // incast's completion is within the accuracy target.
  Outcome memo;
  const std::vector<double> err = second_incast_errors(config("dcqcn", true), &memo);
  EXPECT_GE(memo.stats.replays, 1u);
  EXPECT_GE(memo.memo.replayed, 1u);
  EXPECT_LT(err[2], 0.01);
  EXPECT_LT(err[0], 0.03);
  EXPECT_LT(err[1], 0.03);
}

TEST(MemoReplay, HpccFlowsReLearnTheirIntAfterARestore) {
  // HPCC: the restored states carry U and the committed rate but no INT records (another path's
  // byte counters); the first ACK after the replay re-learns them, then the flows go on.
  // Per-flow errors within the accuracy target (measured 0.04 % and 0.5 %).
  Outcome memo;
  const std::vector<double> err = second_incast_errors(config("hpcc"), &memo);
  EXPECT_GE(memo.stats.replays, 1u);
  EXPECT_LT(err[0], 0.01);
  EXPECT_LT(err[1], 0.01);
}

TEST(MemoReplay, NothingIsReplayedWithFastForwardOff) {
  // A replay is a skip: with fast_forward = false the second pair is simulated like the first
  // (recorded as a repeat), and the run is packet mode.
  const std::vector<FlowSpec> flows = {flow(0, 1, 60'000'000), flow(2, 3, 60'000'000, 1 * kMs)};
  const Outcome pkt = run(flows, Mode::Packet);
  const Outcome memo = run(flows, Mode::Memo, nullptr, -1, true, config(), 0.05, false);
  EXPECT_EQ(memo.stats.replays, 0u);
  EXPECT_EQ(memo.memo.hits, 0u);
  EXPECT_GE(memo.memo.repeated, 1u);
  EXPECT_EQ(memo.fct, pkt.fct);
}

TEST(MemoReplay, APintFlowKeepsItsOwnSamplingStream) {
  // Two HPCC-PINT flows; one's CC state restored into the other, as a replay does: the state is
  // the snapshot's but the ACK-sampling generator stays the flow's own (flows replayed from one
  // snapshot must not sample in lockstep).
  SimConfig cfg = config("hpcc");
  cfg.cc_mode = 10;
  Network net(cfg, star(4), make_cc(cfg, nullptr));
  net.add_flows({flow(0, 2, 10'000'000), flow(1, 3, 10'000'000)});
  net.run(20 * kUs);
  const CcSnapshot s = snapshot_cc(net.flow(0), net.now());
  const auto own = std::get<HpccPintState>(net.flow(1).cc).rng.state();
  ASSERT_NE(own, std::get<HpccPintState>(s.cc).rng.state());
  net.restore_flow_cc(1, s, net.now());
  const auto& after = std::get<HpccPintState>(net.flow(1).cc);
  EXPECT_EQ(after.rng.state(), own);
  EXPECT_EQ(after.cur_rate_bps, std::get<HpccPintState>(s.cc).cur_rate_bps);
}
