// CC snapshots survive the memo file's /cc rows: every algorithm's fields, timers, snd_nxt.
#include <gtest/gtest.h>

#include "../../memo/cc_codec.h"

using namespace wh;

namespace {

CcSnapshot snap(CcState s) {
  CcSnapshot c;
  c.cc = s;
  c.rate_bps = 37'000'000'000;
  c.timer_in[0] = 1234, c.timer_in[2] = 987'654;
  c.snd_nxt = 5'000'000'123;
  return c;
}

CcRow round_trip(const CcSnapshot& s) {
  const CcRow row = encode_cc(s);
  const CcSnapshot back = decode_cc(row);
  EXPECT_EQ(back.rate_bps, s.rate_bps);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(back.timer_in[i], s.timer_in[i]);
  EXPECT_EQ(back.snd_nxt, s.snd_nxt);
  EXPECT_EQ(back.cc.index(), s.cc.index());
  EXPECT_TRUE(encode_cc(back) == row);  // nothing the row holds is lost on the way back
  return row;
}

}  // namespace

TEST(MemoCcCodec, Dcqcn) {
  DcqcnState d{41'000'000'000, 0.3125, 3, true, false, false};
  const auto back = std::get<DcqcnState>(decode_cc(round_trip(snap(d))).cc);
  EXPECT_EQ(back.target_bps, d.target_bps);
  EXPECT_EQ(back.alpha, d.alpha);
  EXPECT_EQ(back.stage, 3u);
  EXPECT_TRUE(back.alpha_cnp);
  EXPECT_FALSE(back.decrease_cnp);
  EXPECT_FALSE(back.first_cnp);
}

TEST(MemoCcCodec, HpccPortable) {
  HpccState h;
  h.cur_rate_bps = 88'000'000'000, h.inc_stage = 4, h.u = 0.9375, h.last_update_seq = 77'000;
  h.hop[1].time = 12345;  // dropped by make_cc_portable, as a memo value has it
  h.hops[2] = HpccHopState{0.5, 12'000'000'000, 2};
  CcState s = h;
  make_cc_portable(s);
  const auto back = std::get<HpccState>(decode_cc(round_trip(snap(s))).cc);
  EXPECT_EQ(back.cur_rate_bps, h.cur_rate_bps);
  EXPECT_EQ(back.inc_stage, 4u);
  EXPECT_EQ(back.u, 0.9375);
  EXPECT_EQ(back.last_update_seq, 0u);  // re-learns INT from the next ACK
  EXPECT_EQ(back.hop[1].time, 0u);
  EXPECT_EQ(back.hops[2].u, 0.5);
  EXPECT_EQ(back.hops[2].rc_bps, 12'000'000'000u);
  EXPECT_EQ(back.hops[2].inc_stage, 2u);
}

TEST(MemoCcCodec, TimelyDctcpPint) {
  TimelyState t{50'000'000'000, 2, -1.5, 12'000, 99'000};
  const auto tb = std::get<TimelyState>(decode_cc(round_trip(snap(t))).cc);
  EXPECT_EQ(tb.rtt_diff, -1.5);
  EXPECT_EQ(tb.last_rtt_ns, 12'000u);
  EXPECT_EQ(tb.last_update_seq, 99'000u);
  DctcpState d{0.0625, 5000, 7, 16, true, 6000};
  const auto db = std::get<DctcpState>(decode_cc(round_trip(snap(d))).cc);
  EXPECT_EQ(db.alpha, 0.0625);
  EXPECT_EQ(db.ecn_count, 7u);
  EXPECT_EQ(db.batch_size, 16u);
  EXPECT_TRUE(db.cwr);
  EXPECT_EQ(db.high_seq, 6000u);
  HpccPintState p;
  p.cur_rate_bps = 3, p.inc_stage = 1, p.last_update_seq = 8, p.rng = Rng(5, 6);
  auto pb = std::get<HpccPintState>(decode_cc(round_trip(snap(p))).cc);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(pb.rng.next(), p.rng.next());  // the sampling stream continues
}

TEST(MemoCcCodec, UnknownKindThrows) {
  CcRow r;
  r.kind = 9;
  EXPECT_THROW(decode_cc(r), std::runtime_error);
}

TEST(CcSnapshot, RestoreRebasesSequenceNumbers) {
  // A DCTCP state taken at snd_nxt 10,000 restored into a QP at snd_nxt 250,000: its sequence
  // numbers keep their distance to snd_nxt; 0 ("none yet") stays 0.
  CcState s = DctcpState{0.5, 9'000, 0, 0, true, 10'000};
  rebase_cc_seqs(s, 240'000);
  EXPECT_EQ(std::get<DctcpState>(s).last_update_seq, 249'000u);
  EXPECT_EQ(std::get<DctcpState>(s).high_seq, 250'000u);
  CcState t = TimelyState{1, 0, 0, 0, 0};
  rebase_cc_seqs(t, 5);
  EXPECT_EQ(std::get<TimelyState>(t).last_update_seq, 0u);
  CcState h = HpccState{};
  std::get<HpccState>(h).last_update_seq = 3'000;
  rebase_cc_seqs(h, -5'000);  // before the stream's start: a new round
  EXPECT_EQ(std::get<HpccState>(h).last_update_seq, 0u);
}
