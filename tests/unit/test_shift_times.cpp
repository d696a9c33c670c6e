// The fast-forward clock shift (Network::shift): every struct that keeps absolute times moves them
// itself. Each test sets every field to a distinct value, shifts by +d and checks, field by field,
// what moved by d (known answers) and that nothing else changed; shifting back by -d must restore
// the bytes exactly. A field added to one of these structs fails a sizeof static_assert beside the
// struct until its shift function and this file are updated.
#include <gtest/gtest.h>

#include <cstring>

#include "wormhole/cc/state.h"
#include "wormhole/net/flow.h"
#include "wormhole/net/packet.h"
#include "wormhole/net/port.h"

using namespace wh;

namespace {

constexpr Time kDelta = 7 * kUs + 3 * kNs;  // ps; whole ns, as fast-forward shifts are

template <class T>
bool same_bytes(const T& a, const T& b) {
  return std::memcmp(static_cast<const void*>(&a), static_cast<const void*>(&b), sizeof(T)) == 0;
}

IntHop hop(uint32_t time) {
  IntHop h;
  h.time = time;
  h.bytes = 5;
  h.qlen = 6;
  h.rate_bps = 100'000'000'000ull;
  return h;
}

}  // namespace

TEST(ShiftTimes, PacketMovesItsTimestampAndRecordedIntTimesModulo24Bits) {
  Packet p;
  p.seq = 4000;
  p.ts = 123 * kNs;
  p.flow = 9;
  p.offset = 11 * kNs;
  p.ih.nhop = 2;
  p.ih.hop[0] = hop(1000);
  p.ih.hop[1] = hop((1u << IntHop::kTimeBits) - 2);  // wraps: (2^24 - 2 + 7003) mod 2^24 = 7001
  p.ih.hop[2] = hop(555);                            // not recorded (nhop 2): left alone
  Packet orig;
  std::memcpy(static_cast<void*>(&orig), &p, sizeof p);

  p.shift_times(kDelta);
  EXPECT_EQ(p.ts, 123 * kNs + kDelta);
  EXPECT_EQ(p.ih.hop[0].time, 8003u);
  EXPECT_EQ(p.ih.hop[1].time, 7001u);
  EXPECT_EQ(p.ih.hop[2].time, 555u);
  EXPECT_EQ(p.ih.hop[1].ns_since(p.ih.hop[0]), orig.ih.hop[1].ns_since(orig.ih.hop[0]));  // differences kept
  EXPECT_EQ(p.offset, 11 * kNs);  // the caller's
  EXPECT_EQ(p.seq, 4000u);

  p.shift_times(-kDelta);
  EXPECT_TRUE(same_bytes(p, orig));
}

TEST(ShiftTimes, FlowSenderMovesPacingRtoTimersAndCcIntTimes) {
  Flow f;
  f.start = 50 * kNs;
  f.min_fct = 9 * kUs;
  f.next_avail = 200 * kNs;
  f.last_ser = 80 * kNs;
  f.base_rtt = 8 * kUs;
  f.last_progress = 190 * kNs;
  f.timer_at[0] = 300 * kNs;  // armed
  f.timer_at[1] = -1;         // not armed: stays -1
  f.timer_at[3] = 10 * kMs;
  f.timer_ev[0] = 250 * kNs;  // an event pending before the deadline
  f.timer_ev[2] = -1;
  f.timer_cause[0] = Cause{240 * kNs, 77, 2};
  f.nack_timer = 400 * kNs;
  f.skipped_time = 3 * kUs;
  f.clock_offset = 5 * kUs;
  HpccState h;
  h.hop[0] = hop(100);
  h.hop[4] = hop(200);
  f.cc = h;
  Flow orig;
  std::memcpy(static_cast<void*>(&orig), &f, sizeof f);

  f.shift_sender_times(kDelta);
  EXPECT_EQ(f.next_avail, 200 * kNs + kDelta);
  EXPECT_EQ(f.last_progress, 190 * kNs + kDelta);
  EXPECT_EQ(f.timer_at[0], 300 * kNs + kDelta);
  EXPECT_EQ(f.timer_at[1], -1);
  EXPECT_EQ(f.timer_at[3], 10 * kMs + kDelta);
  EXPECT_EQ(f.timer_ev[0], 250 * kNs + kDelta);
  EXPECT_EQ(f.timer_ev[2], -1);
  EXPECT_EQ(f.timer_cause[0].origin, 240 * kNs + kDelta);
  EXPECT_EQ(f.timer_cause[0].parent, 77u);
  EXPECT_EQ(f.timer_cause[3].origin, kDelta);  // causes move whether or not their slot is armed
  EXPECT_EQ(std::get<HpccState>(f.cc).hop[0].time, 7103u);
  EXPECT_EQ(std::get<HpccState>(f.cc).hop[4].time, 7203u);
  // Durations, the global arrival and the receiver's state do not move with the sender's clock.
  EXPECT_EQ(f.start, 50 * kNs);
  EXPECT_EQ(f.min_fct, 9 * kUs);
  EXPECT_EQ(f.last_ser, 80 * kNs);
  EXPECT_EQ(f.base_rtt, 8 * kUs);
  EXPECT_EQ(f.skipped_time, 3 * kUs);
  EXPECT_EQ(f.clock_offset, 5 * kUs);  // the caller's (every rank keeps it)
  EXPECT_EQ(f.nack_timer, 400 * kNs);

  f.shift_receiver_times(kDelta);
  EXPECT_EQ(f.nack_timer, 400 * kNs + kDelta);

  f.shift_receiver_times(-kDelta);
  f.shift_sender_times(-kDelta);
  EXPECT_TRUE(same_bytes(f, orig));
}

TEST(ShiftTimes, ReceiverWithoutANackLeavesTheGateAtZero) {
  Flow f;
  f.shift_receiver_times(kDelta);
  EXPECT_EQ(f.nack_timer, 0);  // 0 = no NACK yet: the next one may go at once, shifted or not
}

TEST(ShiftTimes, CcStatesWithoutTimesAreUnchanged) {
  DcqcnState d;
  d.target_bps = 40'000'000'000ull;
  d.alpha = 0.25;
  TimelyState t;
  t.last_rtt_ns = 9000;
  t.last_update_seq = 123;
  DctcpState c;
  c.high_seq = 77;
  for (CcState s : {CcState{d}, CcState{t}, CcState{c}, CcState{HpccPintState{}}}) {
    CcState orig;
    std::memcpy(static_cast<void*>(&orig), &s, sizeof s);
    shift_cc_times(s, kDelta);
    EXPECT_TRUE(same_bytes(s, orig)) << "state " << s.index();
  }
}

TEST(ShiftTimes, PortMovesTransmissionWireRetryAndPintTimesButNotPauseAccounting) {
  Port p;
  p.delay = 1 * kUs;
  p.busy_until = 600 * kNs;
  p.tx_cause = Cause{500 * kNs, 3, 1};
  p.wire.push(WireSlot{1600 * kNs, Cause{550 * kNs, 4, 0}, 12});
  p.wire.push(WireSlot{1700 * kNs, Cause{650 * kNs, 5, 0}, 13});
  p.wake_at = 900 * kNs;
  p.wake_cause = Cause{700 * kNs, 6, 2};
  p.last_pkt_time = 550 * kNs;
  p.frozen_until = 2 * kUs;
  p.paused_total = 40 * kNs;
  p.paused_since = 100 * kNs;

  p.shift_times(kDelta);
  EXPECT_EQ(p.busy_until, 600 * kNs + kDelta);
  EXPECT_EQ(p.tx_cause.origin, 500 * kNs + kDelta);
  EXPECT_EQ(p.wire.at(0).arrive, 1600 * kNs + kDelta);
  EXPECT_EQ(p.wire.at(0).cause.origin, 550 * kNs + kDelta);
  EXPECT_EQ(p.wire.at(1).arrive, 1700 * kNs + kDelta);
  EXPECT_EQ(p.wire.at(1).cause.origin, 650 * kNs + kDelta);
  EXPECT_EQ(p.wire.at(1).pkt, 13u);
  EXPECT_EQ(p.wake_at, 900 * kNs + kDelta);
  EXPECT_EQ(p.wake_cause.origin, 700 * kNs + kDelta);
  EXPECT_EQ(p.last_pkt_time, 550 * kNs + kDelta);
  EXPECT_EQ(p.delay, 1 * kUs);
  EXPECT_EQ(p.frozen_until, 2 * kUs);   // set by the caller for the skip
  EXPECT_EQ(p.paused_total, 40 * kNs);  // monitors count pause in global time
  EXPECT_EQ(p.paused_since, 100 * kNs);

  p.shift_times(-kDelta);
  EXPECT_EQ(p.busy_until, 600 * kNs);
  EXPECT_EQ(p.wire.at(0).arrive, 1600 * kNs);
  EXPECT_EQ(p.wake_at, 900 * kNs);
  EXPECT_EQ(p.last_pkt_time, 550 * kNs);
}

TEST(ShiftTimes, PortWithoutAPendingRetryKeepsNone) {
  Port p;
  p.shift_times(kDelta);
  EXPECT_EQ(p.wake_at, -1);
  EXPECT_EQ(p.wake_cause.origin, 0);
  EXPECT_EQ(p.busy_until, kDelta);
}
