// CC state is a value (docs/architecture.md): snapshot_cc / restore_cc. For each CC a flow A is driven by a
// sequence of ACKs (and its timers fired by a fake host), snapshotted mid-flow and restored into
// a fresh flow B (same line rate, window, base RTT, snd_nxt and snd_una, as a QP restored into
// another QP would have them) whose clock is offset by an arbitrary amount. A and B are then fed
// the same further ACKs (shifted by the offset) and their timers fire at the same relative times:
// the rate calls, timer calls and final states must be identical, and the timers must be re-armed
// at the same distances from the snapshot time.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "wormhole/cc/dcqcn.h"
#include "wormhole/cc/hpcc.h"
#include "wormhole/cc/timely.h"
#include "wormhole/net/cc.h"
#include "wormhole/net/flow.h"

using namespace wh;

namespace {

constexpr uint64_t kLine = 100'000'000'000ull;

/// Keeps Flow::timer_at as the network does and records every call with its time.
struct TimerHost final : CcHost {
  struct RateCall {
    Time t;
    uint64_t rate;
    bool retime;
  };
  struct TimerCall {
    Time t;
    int slot;
    Time at;
  };
  Time t = 0;
  std::vector<RateCall> rates;
  std::vector<TimerCall> timers;
  Time now() const override { return t; }
  void set_timer(uint32_t, Flow& f, int slot, Time at) override {
    f.timer_at[slot] = at;
    timers.push_back({t, slot, at});
  }
  void set_rate(uint32_t, Flow& f, uint64_t rate_bps, bool retime) override {
    rates.push_back({t, rate_bps, retime});
    f.rate_bps = rate_bps;
  }
};

/// One external event: an ACK arriving at `at` with the sender's snd_nxt/snd_una at that moment.
struct Step {
  Time at;
  Packet ack;
  uint64_t snd_nxt, snd_una;
};

/// A flow, its CC and its fake host; `offset` shifts every time it sees.
struct Driver {
  CongestionControl& cc;
  uint32_t id;
  Flow f;
  TimerHost h;
  Time offset = 0;

  /// Fires the CC timers due up to `until` (in time order, lower slot first), then sets the clock.
  void advance(Time until) {
    for (;;) {
      int slot = -1;
      Time at = kTimeMax;
      for (int s = 0; s < 3; ++s)
        if (f.timer_at[s] >= 0 && f.timer_at[s] <= until && f.timer_at[s] < at) at = f.timer_at[s], slot = s;
      if (slot < 0) break;
      h.t = at;
      f.timer_at[slot] = -1;
      cc.on_timer(id, f, slot, h);
    }
    h.t = until;
  }
  void feed(const std::vector<Step>& steps) {
    for (const Step& s : steps) {
      advance(s.at + offset);
      Packet a = s.ack;
      a.ts += offset;  // the echoed send time lives on the same clock
      f.snd_nxt = s.snd_nxt;
      f.snd_una = s.snd_una;
      cc.on_ack(id, f, a, h);
    }
  }
};

bool same_hop(const IntHop& a, const IntHop& b) {
  return a.time == b.time && a.bytes == b.bytes && a.qlen == b.qlen && a.rate_bps == b.rate_bps;
}

/// Two Rngs are equal if they produce the same stream (no operator==): compare 8 draws of copies.
bool same_rng(Rng a, Rng b) {
  for (int i = 0; i < 8; ++i)
    if (a.next() != b.next()) return false;
  return true;
}

void expect_same_state(const CcState& a, const CcState& b) {
  ASSERT_EQ(a.index(), b.index());
  if (const auto* x = std::get_if<DcqcnState>(&a)) {
    const auto& y = std::get<DcqcnState>(b);
    EXPECT_EQ(x->target_bps, y.target_bps);
    EXPECT_EQ(x->alpha, y.alpha);
    EXPECT_EQ(x->stage, y.stage);
    EXPECT_EQ(x->alpha_cnp, y.alpha_cnp);
    EXPECT_EQ(x->decrease_cnp, y.decrease_cnp);
    EXPECT_EQ(x->first_cnp, y.first_cnp);
  } else if (const auto* x = std::get_if<HpccState>(&a)) {
    const auto& y = std::get<HpccState>(b);
    EXPECT_EQ(x->cur_rate_bps, y.cur_rate_bps);
    EXPECT_EQ(x->inc_stage, y.inc_stage);
    EXPECT_EQ(x->u, y.u);
    EXPECT_EQ(x->last_update_seq, y.last_update_seq);
    for (uint32_t i = 0; i < IntHeader::kMaxHops; ++i) {
      EXPECT_TRUE(same_hop(x->hop[i], y.hop[i])) << "hop " << i;
      EXPECT_EQ(x->hops[i].u, y.hops[i].u) << "hop " << i;
      EXPECT_EQ(x->hops[i].rc_bps, y.hops[i].rc_bps) << "hop " << i;
      EXPECT_EQ(x->hops[i].inc_stage, y.hops[i].inc_stage) << "hop " << i;
    }
  } else if (const auto* x = std::get_if<TimelyState>(&a)) {
    const auto& y = std::get<TimelyState>(b);
    EXPECT_EQ(x->cur_rate_bps, y.cur_rate_bps);
    EXPECT_EQ(x->inc_stage, y.inc_stage);
    EXPECT_EQ(x->rtt_diff, y.rtt_diff);
    EXPECT_EQ(x->last_rtt_ns, y.last_rtt_ns);
    EXPECT_EQ(x->last_update_seq, y.last_update_seq);
  } else if (const auto* x = std::get_if<DctcpState>(&a)) {
    const auto& y = std::get<DctcpState>(b);
    EXPECT_EQ(x->alpha, y.alpha);
    EXPECT_EQ(x->last_update_seq, y.last_update_seq);
    EXPECT_EQ(x->ecn_count, y.ecn_count);
    EXPECT_EQ(x->batch_size, y.batch_size);
    EXPECT_EQ(x->cwr, y.cwr);
    EXPECT_EQ(x->high_seq, y.high_seq);
  } else if (const auto* x = std::get_if<HpccPintState>(&a)) {
    const auto& y = std::get<HpccPintState>(b);
    EXPECT_EQ(x->cur_rate_bps, y.cur_rate_bps);
    EXPECT_EQ(x->inc_stage, y.inc_stage);
    EXPECT_EQ(x->last_update_seq, y.last_update_seq);
    EXPECT_TRUE(same_rng(x->rng, y.rng));
  }
}

/// Runs the whole scenario: A gets `before`, is snapshotted at `snap` (absolute, A's clock),
/// B (clock offset `offset`) is started and restored, then both get `after` and run to `end`.
/// Returns the number of rate calls A made after the snapshot (so callers can check the
/// scenario exercised something).
size_t check_snapshot_roundtrip(CongestionControl& cc, const Flow& proto, const std::vector<Step>& before,
                                Time snap, const std::vector<Step>& after, Time end, Time offset,
                                const std::function<void(const Flow&)>& at_snapshot = nullptr) {
  Driver A{cc, 5, proto, {}, 0};
  cc.on_start(A.id, A.f, A.h);
  A.feed(before);
  A.advance(snap);
  if (at_snapshot) at_snapshot(A.f);
  const CcSnapshot s = snapshot_cc(A.f, snap);
  EXPECT_EQ(s.rate_bps, A.f.rate_bps);
  const size_t a_rates0 = A.h.rates.size(), a_timers0 = A.h.timers.size();

  Driver B{cc, 9, proto, {}, offset};
  B.h.t = snap + offset;
  cc.on_start(B.id, B.f, B.h);
  B.f.snd_nxt = A.f.snd_nxt;
  B.f.snd_una = A.f.snd_una;
  const size_t b_rates0 = B.h.rates.size(), b_timers0 = B.h.timers.size();
  restore_cc(B.id, B.f, s, B.h);

  // The restore sets the rate without re-timing and re-arms exactly the armed timers at the same
  // distances from now.
  EXPECT_EQ(B.f.rate_bps, A.f.rate_bps);
  EXPECT_EQ(B.h.rates.size(), b_rates0 + 1);
  if (B.h.rates.size() == b_rates0 + 1) {
    EXPECT_FALSE(B.h.rates.back().retime);
  }
  size_t armed = 0;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(A.f.timer_at[i] >= 0, B.f.timer_at[i] >= 0) << "slot " << i;
    if (A.f.timer_at[i] >= 0) {
      ++armed;
      EXPECT_EQ(s.timer_in[i], A.f.timer_at[i] - snap);
      EXPECT_EQ(B.f.timer_at[i] - B.h.now(), A.f.timer_at[i] - A.h.now()) << "slot " << i;
    } else {
      EXPECT_EQ(s.timer_in[i], -1);
    }
  }
  EXPECT_EQ(B.h.timers.size(), b_timers0 + armed);
  expect_same_state(A.f.cc, B.f.cc);
  const size_t b_rates1 = B.h.rates.size(), b_timers1 = B.h.timers.size();

  A.feed(after);
  B.feed(after);
  A.advance(end);
  B.advance(end + offset);

  // Identical rate and timer call sequences after the snapshot, at the same relative times.
  const size_t na = A.h.rates.size() - a_rates0, nb = B.h.rates.size() - b_rates1;
  EXPECT_EQ(na, nb);
  for (size_t i = 0; i < std::min(na, nb); ++i) {
    const auto& x = A.h.rates[a_rates0 + i];
    const auto& y = B.h.rates[b_rates1 + i];
    EXPECT_EQ(x.rate, y.rate) << "rate call " << i;
    EXPECT_EQ(x.retime, y.retime) << "rate call " << i;
    EXPECT_EQ(x.t, y.t - offset) << "rate call " << i;
  }
  const size_t ta = A.h.timers.size() - a_timers0, tb = B.h.timers.size() - b_timers1;
  EXPECT_EQ(ta, tb);
  for (size_t i = 0; i < std::min(ta, tb); ++i) {
    const auto& x = A.h.timers[a_timers0 + i];
    const auto& y = B.h.timers[b_timers1 + i];
    EXPECT_EQ(x.slot, y.slot) << "timer call " << i;
    EXPECT_EQ(x.t, y.t - offset) << "timer call " << i;
    EXPECT_EQ(x.at, y.at - offset) << "timer call " << i;
  }
  expect_same_state(A.f.cc, B.f.cc);
  EXPECT_EQ(A.f.rate_bps, B.f.rate_bps);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(A.f.timer_at[i] >= 0, B.f.timer_at[i] >= 0);
    if (A.f.timer_at[i] >= 0) {
      EXPECT_EQ(A.f.timer_at[i], B.f.timer_at[i] - offset);
    }
  }
  return na;
}

Flow line_flow() {
  Flow f;
  f.rate_bps = f.max_rate_bps = kLine;
  f.win = 104'000;
  f.base_rtt = 8320 * kNs;
  f.var_win = true;
  return f;
}

Packet plain_ack(uint64_t seq, bool cnp) {
  Packet p;
  p.type = PktType::Ack;
  p.seq = seq;
  p.cnp = cnp ? 1 : 0;
  return p;
}

/// ACKs k = first..last at 1 ms + 87k ns, seq 1000(k + 1), snd_nxt `ahead` bytes beyond, built by `make`.
std::vector<Step> ack_train(int first, int last, uint64_t ahead, const std::function<Packet(int, Time)>& make) {
  std::vector<Step> v;
  for (int k = first; k <= last; ++k) {
    const Time at = 1 * kMs + k * 87 * kNs;
    Packet p = make(k, at);
    p.seq = 1000ull * (k + 1);
    v.push_back({at, p, p.seq + ahead, p.seq});
  }
  return v;
}

constexpr Time kOffset = 3 * kMs + 123'456;  // an arbitrary shift, not a whole ns

}  // namespace

TEST(CcSnapshot, DcqcnWithCnpPendingAndTimersArmed) {
  // run.py "dcqcn" at 100 G with a 20-µs RP_TIMER so that increases happen in the window.
  DcqcnParams p;
  p.alpha_interval = 1 * kUs;
  p.decrease_interval = 4 * kUs;
  p.rp_timer = 20 * kUs;
  p.g = 1.0 / 256;
  p.fast_recovery_times = 1;
  p.rate_ai_bps = 20'000'000;
  p.rate_hai_bps = 200'000'000;
  p.min_rate_bps = 1'000'000'000;
  Dcqcn cc(p);
  // Marks: a burst around the first CNP, then scattered ones.
  auto marked = [](int k) { return k < 40 ? (k % 3 == 0) : (k % 97 == 5 || (k > 300 && k < 320)); };
  const auto make = [&](int k, Time) { return plain_ack(0, marked(k)); };
  const std::vector<Step> before = ack_train(0, 80, 50'000, make);
  // The first CNP (k = 0) arms the α timer (+1 µs) and the decrease check (+4 µs + 1 ns); the check
  // at 4.001 µs cuts and arms the increase timer (+20 µs). One more marked ACK just before the
  // snapshot (6.97 µs in) leaves a CNP "in flight": α and decrease flags set, three timers
  // armed at the snapshot.
  std::vector<Step> b2 = before;
  b2.push_back({b2.back().at + 10 * kNs, plain_ack(81'000, true), 131'000, 81'000});
  const Time snap = b2.back().at + 10 * kNs;  // 6.98 µs after the first CNP: before the α timer at 7 µs
  const std::vector<Step> after = ack_train(82, 1500, 50'000, make);
  const Time end = after.back().at + 100 * kUs;
  const size_t n = check_snapshot_roundtrip(cc, line_flow(), b2, snap, after, end, kOffset, [](const Flow& f) {
    const auto& d = std::get<DcqcnState>(f.cc);
    EXPECT_FALSE(d.first_cnp);
    EXPECT_TRUE(d.alpha_cnp);
    EXPECT_TRUE(d.decrease_cnp);
    EXPECT_LT(f.rate_bps, kLine);  // the first check has cut
    for (int i = 0; i < 3; ++i) EXPECT_GE(f.timer_at[i], 0) << "slot " << i;
  });
  EXPECT_GT(n, 5u);  // cuts and increases happened after the snapshot
}

TEST(CcSnapshot, DcqcnSnapshotBeforeFirstCnp) {
  // No CNP yet: no timers armed, first_cnp still set; the restored flow starts them itself.
  DcqcnParams p;
  p.rp_timer = 20 * kUs;
  Dcqcn cc(p);
  const auto make = [](int k, Time) { return plain_ack(0, k >= 50 && k % 4 == 0); };
  const std::vector<Step> before = ack_train(0, 20, 30'000, make);
  const Time snap = before.back().at + 10 * kNs;
  const std::vector<Step> after = ack_train(21, 400, 30'000, make);
  const size_t n = check_snapshot_roundtrip(cc, line_flow(), before, snap, after, after.back().at + 200 * kUs, kOffset,
                                            [](const Flow& f) {
                                              EXPECT_TRUE(std::get<DcqcnState>(f.cc).first_cnp);
                                              for (int i = 0; i < 3; ++i) EXPECT_EQ(f.timer_at[i], -1);
                                            });
  EXPECT_GT(n, 0u);
}

namespace {
HpccParams hp_params(bool multi_rate) {
  HpccParams p;
  p.eta = 0.95;
  p.max_stage = 0;
  p.rate_ai_bps = 50'000'000;
  p.min_rate_bps = 1'000'000'000;
  p.fast_react = true;
  p.multi_rate = multi_rate;
  p.int_multi = 4;
  return p;
}

/// ACK k carries INT from `hops` hops: hop h's port sent about 1090 B per 87 ns scaled by
/// (1 + h/4), with a queue that swells and drains.
Packet int_ack(int k, Time at, int hops) {
  Packet p = plain_ack(0, false);
  for (int h = 0; h < hops; ++h) {
    const uint64_t ns = to_ns(at) - 2000 + 100 * h;
    const uint64_t tx = uint64_t(1090.0 * k * (1 + h / 4.0));
    const uint64_t q = uint64_t((k * (7 + h)) % 60) * 1500;
    p.ih.push(ns, tx, q, kLine, 4);
  }
  return p;
}
}  // namespace

TEST(CcSnapshot, HpccMidFlow) {
  Hpcc cc(hp_params(false));
  const auto make = [](int k, Time at) { return int_ack(k, at, 1); };
  // snd_nxt 30 packets ahead: a full update about every 30 ACKs, fast reacts in between.
  const std::vector<Step> before = ack_train(0, 75, 30'000, make);
  const Time snap = before.back().at + 30 * kNs;
  const std::vector<Step> after = ack_train(76, 600, 30'000, make);
  const size_t n = check_snapshot_roundtrip(cc, line_flow(), before, snap, after, after.back().at + kUs, kOffset,
                                            [](const Flow& f) {
                                              const auto& h = std::get<HpccState>(f.cc);
                                              EXPECT_GT(h.last_update_seq, 0u);  // past the first RTT
                                              EXPECT_NE(h.cur_rate_bps, kLine);  // committed updates
                                              EXPECT_NE(h.u, 1.0);
                                            });
  EXPECT_GT(n, 400u);  // one rate call per ACK (fast react)
}

TEST(CcSnapshot, HpccMultiRateThreeHops) {
  Hpcc cc(hp_params(true));
  const auto make = [](int k, Time at) { return int_ack(k, at, 3); };
  const std::vector<Step> before = ack_train(0, 75, 30'000, make);
  const Time snap = before.back().at + 30 * kNs;
  const std::vector<Step> after = ack_train(76, 600, 30'000, make);
  const size_t n = check_snapshot_roundtrip(cc, line_flow(), before, snap, after, after.back().at + kUs, kOffset);
  EXPECT_GT(n, 400u);
}

TEST(CcSnapshot, Timely) {
  Timely cc(TimelyParams{});
  // RTT (ns) wanders between 30 and 600 µs so every branch is taken; snd_nxt 5 packets ahead:
  // an update every 6 ACKs.
  const auto make = [](int k, Time at) {
    Packet p = plain_ack(0, false);
    const uint64_t rtt_us = 30 + uint64_t((k * 37) % 570);
    p.ts = at - static_cast<Time>(rtt_us) * kUs;
    return p;
  };
  const std::vector<Step> before = ack_train(0, 100, 5000, make);
  const Time snap = before.back().at + 1;
  const std::vector<Step> after = ack_train(101, 900, 5000, make);
  const size_t n = check_snapshot_roundtrip(cc, line_flow(), before, snap, after, after.back().at, kOffset);
  EXPECT_GT(n, 50u);
}

TEST(CcSnapshot, Dctcp) {
  Dctcp cc(DctcpParams{});
  const auto make = [](int k, Time) { return plain_ack(0, k % 5 == 0 || k % 7 == 0); };
  const std::vector<Step> before = ack_train(0, 123, 20'000, make);
  const Time snap = before.back().at + 5 * kNs;
  const std::vector<Step> after = ack_train(124, 900, 20'000, make);
  const size_t n = check_snapshot_roundtrip(cc, line_flow(), before, snap, after, after.back().at, kOffset);
  EXPECT_GT(n, 5u);
}

TEST(CcSnapshot, HpccPintWithSampling) {
  // PINT_PROB 0.5: the sampling stream is part of the state, so B samples the same ACKs.
  HpccParams p = hp_params(false);
  p.pint_prob = 0.5;
  p.seed = 11;
  HpccPint cc(p);
  const auto make = [](int k, Time) {
    Packet a = plain_ack(0, false);
    a.ih.pint_power = static_cast<uint16_t>(110 + (k * 37) % 40);
    return a;
  };
  const std::vector<Step> before = ack_train(0, 77, 30'000, make);
  const Time snap = before.back().at + 1 * kNs;
  const std::vector<Step> after = ack_train(78, 800, 30'000, make);
  const size_t n = check_snapshot_roundtrip(cc, line_flow(), before, snap, after, after.back().at, kOffset);
  EXPECT_GT(n, 200u);
}

TEST(CcSnapshot, SnapshotIsAValue) {
  // Changing the flow after the snapshot does not change the snapshot; a restore of the same
  // snapshot twice gives the same state.
  Dctcp cc(DctcpParams{});
  Driver A{cc, 0, line_flow(), {}, 0};
  cc.on_start(0, A.f, A.h);
  A.feed(ack_train(0, 30, 10'000, [](int k, Time) { return plain_ack(0, k % 4 == 0); }));
  const CcSnapshot s = snapshot_cc(A.f, A.h.now());
  const DctcpState copy = std::get<DctcpState>(s.cc);
  A.feed(ack_train(31, 60, 10'000, [](int, Time) { return plain_ack(0, true); }));
  EXPECT_EQ(std::get<DctcpState>(s.cc).alpha, copy.alpha);
  EXPECT_EQ(std::get<DctcpState>(s.cc).ecn_count, copy.ecn_count);
  Driver B{cc, 1, line_flow(), {}, 0};
  Driver C{cc, 2, line_flow(), {}, 0};
  B.f.snd_nxt = C.f.snd_nxt = s.snd_nxt;  // the same point of the stream: nothing to rebase
  restore_cc(1, B.f, s, B.h);
  restore_cc(2, C.f, s, C.h);
  expect_same_state(B.f.cc, C.f.cc);
  expect_same_state(B.f.cc, s.cc);
  // Restored 1,000 bytes further on in a stream, the sequence numbers move with it.
  Driver D{cc, 3, line_flow(), {}, 0};
  D.f.snd_nxt = s.snd_nxt + 1000;
  restore_cc(3, D.f, s, D.h);
  EXPECT_EQ(std::get<DctcpState>(D.f.cc).last_update_seq, std::get<DctcpState>(s.cc).last_update_seq + 1000);
  EXPECT_EQ(B.f.rate_bps, s.rate_bps);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(s.timer_in[i], -1);  // DCTCP arms no timers
}

TEST(CcSnapshot, RestoreCancelsTimersTheSnapshotHasOff) {
  // A DCQCN flow that has seen CNPs runs its α, decrease and increase timers; restored from a
  // snapshot taken before any CNP (no timer armed), those timers must stop: the reference cannot
  // be in a pre-CNP state with them running.
  Dcqcn cc(DcqcnParams{});
  Driver A{cc, 0, line_flow(), {}, 0};
  cc.on_start(0, A.f, A.h);
  const CcSnapshot before_cnp = snapshot_cc(A.f, A.h.now());
  for (int i = 0; i < 3; ++i) ASSERT_EQ(before_cnp.timer_in[i], -1);
  Driver B{cc, 1, line_flow(), {}, 0};
  cc.on_start(1, B.f, B.h);
  B.feed(ack_train(0, 10, 10'000, [](int, Time) { return plain_ack(0, true); }));  // CNPs: timers armed
  size_t armed = 0;
  for (int i = 0; i < 3; ++i) armed += B.f.timer_at[i] >= 0;
  ASSERT_GT(armed, 0u);
  restore_cc(1, B.f, before_cnp, B.h);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(B.f.timer_at[i], -1) << "slot " << i;
}
