// The progress line's text (src/cli/progress.h): share done, ETA and Wormhole's skip ratio, known values.
#include <gtest/gtest.h>

#include "../../src/cli/progress.h"

using namespace wh;

TEST(Progress, LineWithShareEtaAndSkipRatio) {
  ProgressFigures p;
  p.wall_s = 10;
  p.now = 1'234'000'000;  // ps = 0.001234 s
  p.events = 32'100'000;  // over 10 s: 3.21 M events/s
  p.flows_done = 1234;
  p.fraction = 0.25;      // a quarter in 10 s: the other three quarters take 30 s more
  p.of = "flows";
  p.skip_ratio = 0.63;
  EXPECT_EQ(format_progress(p),
            "[   10.0 s] sim 0.001234 s, 3.21 M events/s, 1234 flows done, 25.0 % of flows, ETA 30 s, "
            "Wormhole skipped 63.0 % of events");
}

TEST(Progress, CollectiveMemoReplaysShown) {
  // Replayed flows send no packet: the skip ratio cannot show them, so they have their own figure.
  ProgressFigures p;
  p.wall_s = 2;
  p.events = 4'000'000;
  p.skip_ratio = 0;
  p.replayed_flows = 13440;
  EXPECT_EQ(format_progress(p),
            "[    2.0 s] sim 0.000000 s, 2.00 M events/s, 0 flows done, Wormhole skipped 0.0 % of events, "
            "collective memo replayed 13440 flows");
}

TEST(Progress, NoShareNoEta) {
  ProgressFigures p;
  p.who = "rank 0: ";
  p.wall_s = 5.04;
  p.now = 2'000'000'000'000;  // 2 s
  p.events = 10'000'000;      // 1.98 M events/s
  EXPECT_EQ(format_progress(p), "[    5.0 s] rank 0: sim 2.000000 s, 1.98 M events/s, 0 flows done");
  p.fraction = 0;  // known but nothing done yet: a share, no ETA
  p.of = "collectives";
  EXPECT_EQ(format_progress(p),
            "[    5.0 s] rank 0: sim 2.000000 s, 1.98 M events/s, 0 flows done, 0.0 % of collectives");
  p.fraction = 1;  // all done: nothing left
  EXPECT_EQ(format_progress(p),
            "[    5.0 s] rank 0: sim 2.000000 s, 1.98 M events/s, 0 flows done, 100.0 % of collectives, ETA 0 s");
}

// A run cut at a simulated time (SIMULATOR_STOP_TIME, workload.max_time) ends there if its work does not
// end first: the ETA follows whichever share is further (it followed the work's share alone, so a
// 1,024-GPU run cut at 1 ms said "ETA 12 min" 5 s before it ended).
TEST(Progress, EtaOfARunCutAtASimulatedTime) {
  ProgressFigures p;
  p.wall_s = 5;
  p.now = 500'000'000;  // 0.5 ms
  p.fraction = 0.01;    // 1 % of the work: 495 s more at this pace
  p.of = "the workload's bytes";
  p.time_fraction = 0.5;  // half of a 1-ms cut: 5 s more
  EXPECT_EQ(format_progress(p), "[    5.0 s] sim 0.000500 s, 0.00 M events/s, 0 flows done, 1.0 % of the workload's "
                                "bytes, ETA 5 s");
  p.time_fraction = 0.001;  // a cut far away: the work's share decides
  EXPECT_NE(format_progress(p).find("ETA 8 min 15 s"), std::string::npos) << format_progress(p);
  p.fraction = -1;  // no share of the work known: the cut alone gives the ETA
  p.time_fraction = 0.25;
  EXPECT_EQ(format_progress(p), "[    5.0 s] sim 0.000500 s, 0.00 M events/s, 0 flows done, ETA 15 s");
}

TEST(Progress, EtaUnits) {
  EXPECT_EQ(format_eta(0.4), "0 s");
  EXPECT_EQ(format_eta(59.4), "59 s");
  EXPECT_EQ(format_eta(125), "2 min 05 s");      // 2·60 + 5
  EXPECT_EQ(format_eta(3725), "1 h 02 min");     // 3600 + 2·60 + 5: seconds dropped
  EXPECT_EQ(format_eta(100000), "27 h 46 min");  // 27·3600 + 46·60 + 40
  // 1 % of the run done in 90 s: 99 % more takes 8910 s = 2 h 28 min 30 s.
  ProgressFigures p;
  p.wall_s = 90;
  p.fraction = 0.01;
  p.of = "collectives";
  EXPECT_NE(format_progress(p).find(", 1.0 % of collectives, ETA 2 h 28 min"), std::string::npos) << format_progress(p);
}

TEST(Progress, FollowersCountAmongTheDecisionsThatFrozeContention) {
  // 3 skips, 2 replays and 4 followers released as their leader converged: 9 decisions, of which 7 froze
  // contention. The total once left the followers out ("7 of 5").
  SkipReport r;
  r.settings.enabled = true;
  r.stats.skips = 3;
  r.stats.replays = 2;
  r.memo.on = true;
  r.memo.followed = 4;
  r.stats.contended_decisions = 7;
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  print_skip_summary(r);
  const std::string out = testing::internal::GetCapturedStdout();
  testing::internal::GetCapturedStderr();
  EXPECT_NE(out.find("wormhole: 7 of 9 skips and replays froze contention"), std::string::npos) << out;
}
