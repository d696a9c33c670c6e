// Followers (memoization): periods that start alike at once are simulated once. A's and B's pairs
// start together on a star; A is simulated, B held and replayed from A when A converges; B is
// released early from A's state when A's flow comes near its end first, or when B is disturbed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <utility>
#include <vector>

#include "memo_runs.h"

using namespace wh;
using namespace wh::test;

TEST(MemoFollow, TwoPairsStartingTogetherSimulateOnePeriod) {
  // Without followers both 500-µs periods were simulated (one new pattern, one repeat); now B is
  // held while A converges, then replayed from A's period and fast-forwarded with A's goodput.
  const std::vector<FlowSpec> flows = {flow(0, 1, 60'000'000), flow(2, 3, 60'000'000)};
  const Outcome pkt = run(flows, Mode::Packet);
  const Outcome memo = run(flows, Mode::Memo);
  EXPECT_EQ(memo.memo.followed, 1u);
  EXPECT_EQ(memo.memo.follows_cut, 0u);
  // Both compared at their lookup (A's used again when it converges), and both looked up once more
  // when their skips end and their partitions start a new period, the store holding A's pattern by then.
  EXPECT_EQ(memo.patterns_built, 4u);
  EXPECT_EQ(memo.memo.converged, 1u);
  EXPECT_EQ(memo.memo.inserted, 1u);
  EXPECT_EQ(memo.memo.repeated, 0u);
  EXPECT_EQ(memo.stats.replays, 0u);  // a follower is not a replay found at a lookup
  EXPECT_EQ(memo.stats.replayed_flow_time, 499 * kUs);  // held from its lookup at the first tick
  // The star is symmetric: B's period is A's, up to whole packets and ns.
  expect_fcts_within_two_packets(memo, pkt);
}

namespace {

/// Two HPCC incasts of two flows each at once, A's flows of `a` bytes, B's of `b`, θ so small that no
/// period converges: packet mode's FCTs and memoization's run.
std::pair<Outcome, Outcome> two_incasts(uint64_t a, uint64_t b) {
  const std::vector<FlowSpec> flows = {flow(0, 1, a), flow(2, 1, a), flow(3, 5, b), flow(4, 5, b)};
  const SimConfig hpcc = config("hpcc");
  return {run(flows, Mode::Packet, nullptr, -1, true, hpcc, 1e-9), run(flows, Mode::Memo, nullptr, -1, true, hpcc, 1e-9)};
}

}  // namespace

TEST(MemoFollow, ReleasedBeforeTheLeadersFlowEnds) {
  // Two HPCC incasts of two 8-MB flows at once; θ so small that A's period never converges, and
  // A's flows come within their end game (a base RTT and two ticks at line rate plus two packets)
  // first: B resumes then from A's state at that tick (bytes, CC), so both incasts' ends are
  // simulated. B is then within the error of a replay's restore (HPCC re-learns its INT records;
  // measured 1.6 and 2.1 µs of ~1.4 ms); held until A's period ended at A's end, B came out 9.4 and 14.7 µs late.
  const auto [pkt, memo] = two_incasts(8'000'000, 8'000'000);
  EXPECT_EQ(memo.memo.followed, 0u);
  EXPECT_EQ(memo.memo.follows_cut, 1u);
  EXPECT_EQ(memo.memo.converged, 0u);
  for (size_t i = 0; i < 4; ++i)
    EXPECT_LE(std::abs(memo.fct[i] - pkt.fct[i]), 3 * kUs) << "flow " << i << ": packet mode " << pkt.fct[i];
}

TEST(MemoFollow, AFollowerShorterThanItsLeaderEndsSimulated) {
  // Sizes are not in the pattern: B's incast (8 MB a flow) follows A's (60 MB), which never converges
  // (θ tiny). B resumes, from A's state at a tick, once A's progress could pass B's room by the next
  // tick, and ends simulated. (Held until A came near its own end, B ended 8 ms late.)
  const auto [pkt, memo] = two_incasts(60'000'000, 8'000'000);
  EXPECT_EQ(memo.memo.followed, 0u);
  EXPECT_EQ(memo.memo.follows_cut, 1u);
  for (size_t i = 2; i < 4; ++i)
    EXPECT_LE(std::abs(memo.fct[i] - pkt.fct[i]), 3 * kUs) << "flow " << i << ": packet mode " << pkt.fct[i];
}

TEST(MemoFollow, NotHeldPastAKnownFlowStart) {
  // C starts at 300 µs, before A's first check (500 µs): a hold would end there, unconverged, so B is
  // simulated beside A instead (one new pattern, one repeat), and C's period, a third alike, repeats it.
  const std::vector<FlowSpec> flows = {flow(0, 1, 60'000'000), flow(2, 3, 60'000'000), flow(4, 5, 60'000'000, 300 * kUs)};
  const Outcome memo = run(flows, Mode::Memo);
  EXPECT_EQ(memo.memo.followed + memo.memo.follows_cut, 0u);
  EXPECT_EQ(memo.memo.converged, 3u);
  EXPECT_EQ(memo.memo.inserted, 1u);
  EXPECT_EQ(memo.memo.repeated, 2u);
}

TEST(MemoFollow, NotHeldWhereThePeriodCannotConverge) {
  // 4 MB (~330 µs at line rate) end before the 500-µs window could be checked: the period cannot
  // converge, so B is not held (its early release would only approximate): the run is the run without
  // followers, both periods simulated.
  const std::vector<FlowSpec> flows = {flow(0, 1, 4'000'000), flow(2, 3, 4'000'000)};
  const Outcome ff = run(flows, Mode::FastForward);
  const Outcome memo = run(flows, Mode::Memo);
  EXPECT_EQ(memo.memo.followed + memo.memo.follows_cut, 0u);
  EXPECT_EQ(memo.fct, ff.fct);
  // Neither period lasts to its check, so neither can lead: their patterns are not even built (they
  // were, for a comparison whose pairing was then refused, at every tick of an all-to-all).
  EXPECT_EQ(memo.patterns_built, 0u);
}

TEST(MemoFollow, AShortPeriodAmongLastingOnesLeavesTheirPairingAlone) {
  // A and B (60 MB) and C (4 MB, ending before a check) start together, alike: B follows A as in
  // the first test; C, which cannot last, is compared too (its group has periods that last) and
  // simulated. Skipping the group because one member does not last would lose B's follow.
  const std::vector<FlowSpec> flows = {flow(0, 1, 60'000'000), flow(2, 3, 60'000'000), flow(4, 5, 4'000'000)};
  const Outcome memo = run(flows, Mode::Memo);
  EXPECT_EQ(memo.memo.followed, 1u);
  EXPECT_EQ(memo.memo.follows_cut, 0u);
  EXPECT_EQ(memo.memo.inserted, 1u);
}

TEST(MemoFollow, ADisturbedFollowerResumesFromItsLeadersState) {
  // C (4 -> 3), released by a dependency at 200 µs, shares held B's receiver port: B resumes then
  // from A's state at the last tick carried on at A's rate (no CC restore between ticks), and B and C
  // share the port from then on; A goes on to converge with nobody to release.
  const std::vector<FlowSpec> flows = {flow(0, 1, 60'000'000), flow(2, 3, 60'000'000)};
  // (At a time that is no whole ns: the resume, rounded up to one, must not freeze anything.)
  const FlowSpec c = flow(4, 3, 20'000'000);
  const Outcome pkt = run(flows, Mode::Packet, &c, 200 * kUs + 500 * kNs + 300);
  const Outcome memo = run(flows, Mode::Memo, &c, 200 * kUs + 500 * kNs + 300);
  EXPECT_EQ(memo.memo.followed, 0u);
  EXPECT_EQ(memo.memo.follows_cut, 1u);
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_GT(memo.fct[i], 0);
    EXPECT_LE(std::abs(memo.fct[i] - pkt.fct[i]), 5 * kPacketTime)
        << "flow " << i << ": packet mode " << pkt.fct[i] << " ps, memo " << memo.fct[i];
  }
}

TEST(MemoFollow, NoFollowerWhereVerifyModeSamples) {
  // Verify mode samples replays among the lookups' decisions; followers are not sampled, so none
  // are made: both periods simulated as before.
  const std::vector<FlowSpec> flows = {flow(0, 1, 60'000'000), flow(2, 3, 60'000'000)};
  const Outcome memo = run(flows, Mode::Memo, nullptr, -1, true, config(), 0.05, true, 1.0);
  EXPECT_EQ(memo.memo.followed, 0u);
  EXPECT_EQ(memo.memo.converged, 2u);
}

TEST(MemoFollow, FollowersOfARepeatGetTheStoredFlowsTheirOwnRoles) {
  // Three alike groups on a star of 15 hosts, each four flows: a centre flow sharing its NIC with two
  // others and its receiver's port with a fourth, whose sender's link runs at 50 Gb/s (so its label
  // differs, and its goodput: 67 Gb/s, the port's rest, against 33 for the others). X starts at 0, L and F together at
  // 10 µs: F follows L; X converges first, so L converges into X's pattern as a repeat, and F is
  // replayed from X's entry. The entry lists X's flows in X's order (centre first), L lists the
  // 50-Gb/s flow first: F's flows must get the entry's values through L's map to the entry, not L's
  // own order (which gave F's 50-Gb/s flow the centre's 33 Gb/s).
  Topology t = star(15);
  for (uint32_t h : {2u, 6u, 11u}) t.links[h].rate_bps = 50'000'000'000ull;
  SimConfig cfg = config();
  cfg.ecn[50'000'000'000ull] = cfg.ecn.at(100'000'000'000ull);
  const uint64_t mb = 40'000'000;
  const Time l0 = 10 * kUs;
  // (Flows starting in the same ps start in id order; those whose NIC sent before the last one
  // started are not fresh: in each group the centre and the 50-G flow.)
  const std::vector<FlowSpec> flows = {
      // X: centre 0->1, then 2->1 (50 G) sharing 1's port, then 0->3 and 0->4 sharing the centre's NIC
      flow(0, 1, mb), flow(2, 1, mb), flow(0, 3, mb), flow(0, 4, mb),
      // L: the 50-G flow first, then its centre and the two sharing its NIC
      flow(6, 7, mb, l0), flow(5, 7, mb, l0), flow(5, 8, mb, l0), flow(5, 9, mb, l0),
      // F: as L
      flow(11, 12, mb, l0), flow(10, 12, mb, l0), flow(10, 13, mb, l0), flow(10, 14, mb, l0)};
  const Outcome pkt = run(flows, Mode::Packet, nullptr, -1, true, cfg, 0.05, true, 0, t);
  const Outcome memo = run(flows, Mode::Memo, nullptr, -1, true, cfg, 0.05, true, 0, t);
  EXPECT_EQ(memo.memo.followed, 1u);  // F, from L, which converged into X's pattern
  EXPECT_GE(memo.memo.repeated, 1u);
  // F's flows as packet mode has them (its own start), within a few packets.
  for (size_t i = 8; i < 12; ++i)
    EXPECT_LE(std::abs(memo.fct[i] - pkt.fct[i]), 5 * kPacketTime)
        << "flow " << i << ": packet mode " << pkt.fct[i] << " ps, memo " << memo.fct[i];
}
