// The switch model and the NIC model alone, on a Fabric with no Network and no events: known answers
// computed by hand from docs/network-model.md §8–§11.
#include <gtest/gtest.h>

#include <vector>

#include "wormhole/cc/factory.h"
#include "wormhole/net/fabric.h"
#include "wormhole/net/flow_table.h"
#include "wormhole/net/nic_model.h"
#include "wormhole/net/switch_model.h"

#include "net_fixtures.h"

using namespace wh;
using namespace wh::test;

namespace {

/// Hosts 0, 1, 2 on switch 3 (star(3): 100 Gb/s, 1 µs links). Host i's NIC is port i, the switch's
/// port towards host i is port 3 + i. A 1-MiB shared buffer, 1000-B payloads (1048-B data packets).
NetParams small_params() {
  NetParams p;
  p.payload = 1000;
  p.buffer_bytes = 1u << 20;
  p.ecn[k100G] = EcnThresholds{40'000, 160'000, 0.2};
  return p;
}

struct SwitchFixture : ::testing::Test {
  Fabric fab{small_params(), star(3)};
  SwitchModel sw{fab};
  static constexpr uint32_t kIn = 3;   // the switch's port towards host 0
  static constexpr uint32_t kPkt = 1048;
};

}  // namespace

TEST_F(SwitchFixture, TheFabricIsWiredAndItsBufferSplitAsTheReferenceDoes) {
  const Node& s = fab.nodes[3];
  ASSERT_TRUE(s.is_switch);
  EXPECT_EQ(s.first_port, 3u);
  EXPECT_EQ(fab.ports[0].peer, 3u);
  EXPECT_EQ(fab.ports[5].peer, 2u);
  // Headroom 3 × 100 Gb/s × 1 µs = 37,500 B a port; 3 × 4,096 B of reserve.
  EXPECT_EQ(fab.ports[kIn].headroom, 37'500u);
  EXPECT_EQ(s.total_hdrm, 112'500u);
  EXPECT_EQ(s.total_rsrv, 12'288u);
  EXPECT_EQ(fab.ports[kIn].pfc_shift, 3u);  // the port runs at the NIC rate: α = 1/8
  // (1,048,576 − 112,500 − 12,288) >> 3 = 923,788 / 8 = 115,473.5 → 115,473.
  EXPECT_EQ(sw.pfc_threshold(kIn), 115'473u);
  EXPECT_EQ(fab.headroom_warning(), "");  // 37,500 ≥ 2 × 12,500 + 2 × 1,048
}

TEST_F(SwitchFixture, IngressFillsReserveThenSharedPoolThenHeadroomPausesOnceAndDropsWhenFull) {
  std::vector<SwitchModel::Admit> got;
  for (int k = 1; k <= 137; ++k) got.push_back(sw.admit(kIn, 3, kPkt));
  const Port& in = fab.ports[kIn];
  // Packets 1-3 fit the 4,096-B reserve; from the 4th the bytes above it are shared. The 102nd finds
  // the shared bytes (101 × 1,048 − 4,096 = 101,752) plus itself above the threshold
  // ((923,788 − 101,752) >> 3 = 102,754): it goes to headroom, and a PAUSE is due.
  for (int k = 1; k <= 101; ++k) EXPECT_EQ(got[k - 1], SwitchModel::Admit::Queue) << k;
  EXPECT_EQ(got[101], SwitchModel::Admit::QueueAndPause);
  // Headroom holds 35 packets (35 × 1,048 = 36,680 ≤ 37,500); the 137th finds headroom and pool full.
  for (int k = 103; k <= 136; ++k) EXPECT_EQ(got[k - 1], SwitchModel::Admit::Queue) << k;
  EXPECT_EQ(got[136], SwitchModel::Admit::Drop);
  EXPECT_EQ(in.ingress_bytes[3], 101u * kPkt);
  EXPECT_EQ(in.hdrm_bytes[3], 35u * kPkt);
  EXPECT_EQ(fab.nodes[3].shared_used, 101'752u);
  EXPECT_TRUE(in.pause_sent[3]);
  // Other classes and ports are untouched.
  EXPECT_EQ(in.ingress_bytes[1], 0u);
  EXPECT_EQ(fab.ports[4].ingress_bytes[3], 0u);
}

TEST_F(SwitchFixture, ReleaseEmptiesHeadroomFirstAndResumesThreeKilobytesBelowTheThreshold) {
  for (int k = 1; k <= 136; ++k) sw.admit(kIn, 3, kPkt);
  int resumed_at = 0;
  for (int r = 1; r <= 40 && !resumed_at; ++r)
    if (sw.release(kIn, 3, kPkt)) resumed_at = r;
  // 35 releases empty the headroom (shared 101,752 + 3,072 > 102,754: no RESUME yet); after the 36th
  // the shared bytes are 100,704 (threshold 102,885: not yet), after the 37th 99,656 and
  // 99,656 + 3,072 = 102,728 ≤ (923,788 − 99,656) >> 3 = 103,016: RESUME.
  EXPECT_EQ(resumed_at, 37);
  EXPECT_FALSE(fab.ports[kIn].pause_sent[3]);
  EXPECT_EQ(fab.ports[kIn].hdrm_bytes[3], 0u);
  EXPECT_EQ(fab.nodes[3].shared_used, 99'656u);
  EXPECT_EQ(fab.ports[kIn].ingress_bytes[3], 99u * kPkt);
}

TEST_F(SwitchFixture, AnEgressServesClassZeroFirstThenRoundRobinOverUnpausedClasses) {
  Port& out = fab.ports[4];
  const auto queue = [&](uint32_t c) {
    const uint32_t pkt = fab.pool.alloc();
    fab.pool[pkt].size = kPkt;
    out.enqueue(c, pkt, kPkt);
  };
  EXPECT_EQ(sw.next_class(4), -1);  // nothing queued
  queue(1), queue(1), queue(3), queue(3);
  std::vector<int> served;
  for (int i = 0; i < 4; ++i) {
    const int c = sw.next_class(4);
    served.push_back(c);
    out.dequeue(static_cast<uint32_t>(c), fab.pool);
  }
  EXPECT_EQ(served, (std::vector<int>{1, 3, 1, 3}));
  queue(1), queue(3);
  out.paused[3] = true;
  EXPECT_EQ(sw.next_class(4), 1);
  out.dequeue(1, fab.pool);
  EXPECT_EQ(sw.next_class(4), -1);  // only a paused class is left
  queue(0);
  out.paused[0] = true;  // a PFC frame's class is never held back by a pause
  EXPECT_EQ(sw.next_class(4), 0);
}

TEST_F(SwitchFixture, EcnMarksAboveKmaxNeverAtOrBelowKminAndNotWithoutQcn) {
  Port& out = fab.ports[4];
  EXPECT_EQ(out.kmin, 40'000u);
  EXPECT_EQ(out.kmax, 160'000u);
  out.queue_bytes[3] = 160'001;
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(sw.ecn_mark(4, 3));
  out.queue_bytes[3] = 40'000;
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(sw.ecn_mark(4, 3));
  // Half way up the ramp: p = 0.2 × 60,000 / 120,000 = 0.1 of 10,000 draws.
  out.queue_bytes[3] = 100'000;
  int marks = 0;
  for (int i = 0; i < 10'000; ++i) marks += sw.ecn_mark(4, 3);
  EXPECT_NEAR(marks, 1000, 120);  // about 4 standard deviations (30)
  fab.params.enable_qcn = false;
  out.queue_bytes[3] = 1'000'000;
  EXPECT_FALSE(sw.ecn_mark(4, 3));
}

TEST_F(SwitchFixture, HpccStampsOneIntHopWithTheEgressCountersOtherCcsNone) {
  Packet pk;
  sw.stamp_telemetry(4, pk, 5 * kUs);
  EXPECT_EQ(pk.ih.nhop, 0);  // no INT for DCQCN
  fab.params.int_mode = IntMode::Hpcc;
  Port& out = fab.ports[4];
  out.tx_bytes = 128 * 10;
  out.bytes_total = 80 * 7;
  sw.stamp_telemetry(4, pk, 5 * kUs);
  ASSERT_EQ(pk.ih.nhop, 1);
  EXPECT_EQ(pk.ih.hop[0].time, 5000u);     // ns
  EXPECT_EQ(pk.ih.hop[0].bytes, 10u);      // units of 128 B (INT_MULTI 1)
  EXPECT_EQ(pk.ih.hop[0].qlen, 7u);        // units of 80 B
  EXPECT_EQ(pk.ih.hop[0].rate_bps, k100G);
}

// ---------------------------------------------------------------------------------------------
// The NIC model
// ---------------------------------------------------------------------------------------------

namespace {

struct NicFixture : ::testing::Test {
  Fabric fab{small_params(), star(3)};
  FlowTable flows;
  NicModel nic{fab, flows};
  /// A running QP from host 0 to host `dst` on NIC port 0, of `size` bytes, at line rate.
  uint32_t qp(uint32_t dst, uint64_t size) {
    FlowInfo i;
    i.src = 0, i.dst = dst, i.size = size, i.pg = 3;
    const uint32_t id = flows.add(i);
    Flow& f = flows.create_state(id);
    f.nic = 0;
    f.rate_bps = f.max_rate_bps = k100G;
    fab.ports[0].qps.push_back(id);
    return id;
  }
  /// The receiver's replies to in-order 1,000-B packets of flow `f` up to `end` bytes, at time 0.
  std::vector<NicModel::Reply> in_order(Flow& f, uint64_t end) {
    Packet pk;
    pk.payload = 1000;
    std::vector<NicModel::Reply> replies;
    for (uint64_t seq = f.rcv_nxt; seq < end; seq += 1000) {
      pk.seq = seq;
      replies.push_back(nic.on_data(f, pk, 0).reply);
    }
    return replies;
  }
};

}  // namespace

TEST_F(NicFixture, QpsAreServedRoundRobinAndPacedAtTheirRate) {
  const uint32_t a = qp(1, 10'000), b = qp(2, 10'000);
  std::vector<uint32_t> dropped;
  // Round robin starts after position rr_qp = 0: B first, then A.
  NicModel::Pick p = nic.pick(0, 0, dropped);
  ASSERT_EQ(p.flow, b);
  uint32_t retx = 1;
  const uint32_t pkt = nic.build_data(b, 0, retx);
  EXPECT_EQ(retx, 0u);
  EXPECT_EQ(fab.pool[pkt].size, 1048u);
  EXPECT_EQ(fab.pool[pkt].seq, 0u);
  EXPECT_EQ(flows.state(b).snd_nxt, 1000u);
  // 1,048 B at 100 Gb/s = 83.84 ns, truncated to 83 ns (NS_TRUNCATION).
  EXPECT_EQ(flows.state(b).next_avail, 83 * kNs);
  p = nic.pick(0, 0, dropped);
  EXPECT_EQ(p.flow, a);
  nic.build_data(a, 0, retx);
  // Both paced until 83 ns: nothing now, a retry then.
  p = nic.pick(0, 10 * kNs, dropped);
  EXPECT_EQ(p.flow, UINT32_MAX);
  EXPECT_EQ(p.retry, 83 * kNs);
  EXPECT_TRUE(dropped.empty());
}

TEST_F(NicFixture, AGoBackResendIsCountedAndAFinishedQpIsCompactedOutOfTheList) {
  const uint32_t a = qp(1, 2'500), b = qp(2, 10'000);
  Flow& fa = flows.state(a);
  fa.snd_nxt = fa.snd_high = 2'000;
  fa.snd_nxt = 1'000;  // a NACK went back to 1,000
  uint32_t retx = 0;
  nic.build_data(a, 0, retx);
  EXPECT_EQ(retx, 1000u);
  nic.build_data(a, 0, retx);
  EXPECT_EQ(retx, 0u);  // 2,000 .. 2,500 is new: a 500-B tail
  EXPECT_EQ(fa.snd_nxt, 2'500u);
  // A finishes with nothing left. The NIC drops it from its list when its scan passes it (from
  // position rr_qp + 1 = 0: A, then B), and B moves to position 0.
  flows.set_finish(a, 5 * kUs);
  fab.ports[0].rr_qp = 1;
  std::vector<uint32_t> dropped;
  const NicModel::Pick p = nic.pick(0, 10 * kUs, dropped);
  EXPECT_EQ(p.flow, b);
  EXPECT_EQ(fab.ports[0].qps, (std::vector<uint32_t>{b}));
  EXPECT_EQ(fab.ports[0].rr_qp, 0u);
  EXPECT_TRUE(dropped.empty());  // A was not held past its finish
}

TEST_F(NicFixture, AFinishedQpWithBytesLeftSendsThemAndIsHandedBackWhenItsNicDropsIt) {
  const uint32_t a = qp(1, 2'000), b = qp(2, 10'000);
  Flow& fa = flows.state(a);
  fa.snd_nxt = 1'000, fa.snd_una = 2'000;  // ACKs overtook a go-back: finished, 1,000 B unsent
  flows.set_finish(a, 1 * kUs);
  nic.hold_until_dropped(a);
  flows.state(b).next_avail = 50 * kUs;  // B is paced
  std::vector<uint32_t> dropped;
  // As the reference's NIC, it still sends the finished QP's bytes while the QP is on its list.
  NicModel::Pick p = nic.pick(0, 2 * kUs, dropped);
  ASSERT_EQ(p.flow, a);
  uint32_t retx = 0;
  nic.build_data(a, 2 * kUs, retx);
  EXPECT_EQ(fa.bytes_left(), 0u);
  // Nothing left: the next scan drops A from the list and hands it back; B is due at 50 µs.
  p = nic.pick(0, 3 * kUs, dropped);
  EXPECT_EQ(p.flow, UINT32_MAX);
  EXPECT_EQ(p.retry, 50 * kUs);
  EXPECT_EQ(dropped, (std::vector<uint32_t>{a}));
  EXPECT_EQ(fab.ports[0].qps, (std::vector<uint32_t>{b}));
  EXPECT_TRUE(nic.take_held().empty());
}

TEST_F(NicFixture, TheReceiverAcksEveryChunkNacksAGapOncePer500UsAndAcksAResentDuplicate) {
  fab.params.l2_chunk_size = 4'000;
  fab.params.l2_ack_interval = 1'000'000;  // ACKs at chunk boundaries only
  Flow& f = flows.state(qp(1, 20'000));
  using R = NicModel::Reply;
  EXPECT_EQ(in_order(f, 8'000), (std::vector<R>{R::None, R::None, R::None, R::Ack, R::None, R::None, R::None, R::Ack}));
  EXPECT_EQ(f.rcv_nxt, 8'000u);
  Packet pk;
  pk.payload = 1000;
  pk.seq = 9'000;  // 8,000 is missing
  EXPECT_EQ(nic.on_data(f, pk, 1 * kUs).reply, R::Nack);
  EXPECT_EQ(nic.on_data(f, pk, 2 * kUs).reply, R::None);    // the same gap within 500 µs
  EXPECT_EQ(nic.on_data(f, pk, 501 * kUs).reply, R::Nack);  // 500 µs after the first
  pk.seq = 3'000;
  NicModel::Received d = nic.on_data(f, pk, 600 * kUs);
  EXPECT_TRUE(d.duplicate);
  EXPECT_EQ(d.reply, R::None);
  pk.retx = 1;  // a timeout resent it: the ACK covering it was lost
  d = nic.on_data(f, pk, 601 * kUs);
  EXPECT_EQ(d.reply, R::Ack);
  // The reply is the data packet turned round.
  pk.src = 0, pk.dst = 1, pk.sport = 10000, pk.dport = 100, pk.ecn = 1;
  nic.make_reply(pk, R::Ack, f.rcv_nxt);
  EXPECT_EQ(pk.type, PktType::Ack);
  EXPECT_EQ(pk.src, 1u);
  EXPECT_EQ(pk.dport, 10000u);
  EXPECT_EQ(pk.seq, 8'000u);
  EXPECT_EQ(pk.size, 60u);
  EXPECT_EQ(pk.cnp, 1);
  EXPECT_EQ(pk.ecn, 0);
}

TEST_F(NicFixture, TheSenderAdvancesOnAcksGoesBackOnANackAndFinishesAtTheEnd) {
  fab.params.l2_chunk_size = 4'000;
  fab.params.l2_back_to_zero = true;
  const uint32_t id = qp(1, 12'000);  // three whole chunks: back to zero acknowledges chunk boundaries only
  Flow& f = flows.state(id);
  f.snd_nxt = 9'000;
  Packet ack;
  ack.type = PktType::Ack;
  ack.seq = 5'000;  // back to zero: acknowledged up to the chunk boundary 4,000
  ack.cnp = 1;
  EXPECT_FALSE(nic.on_ack(f, ack, 3 * kUs));
  EXPECT_EQ(f.snd_una, 4'000u);
  EXPECT_EQ(f.last_progress, 3 * kUs);
  EXPECT_EQ(f.cnps, 1u);
  ack.type = PktType::Nack;
  ack.seq = 8'000;
  EXPECT_FALSE(nic.on_ack(f, ack, 4 * kUs));
  EXPECT_EQ(f.snd_una, 8'000u);
  EXPECT_EQ(f.snd_nxt, 8'000u);  // go-back-N
  ack.type = PktType::Ack;
  ack.seq = 11'000;
  EXPECT_FALSE(nic.on_ack(f, ack, 5 * kUs));  // counts as 8,000
  ack.seq = 12'000;
  EXPECT_TRUE(nic.on_ack(f, ack, 6 * kUs));
}

TEST_F(NicFixture, PastTheAckIntervalEveryInOrderPacketIsAcknowledged) {
  // The reference resets the milestone to L2_ACK_INTERVAL on every packet (docs/network-model.md §1):
  // with 3,000 B, packets ending at 1,000 and 2,000 get no ACK, every one from 3,000 on does.
  fab.params.l2_ack_interval = 3'000;
  Flow& f = flows.state(qp(1, 10'000));
  using R = NicModel::Reply;
  EXPECT_EQ(in_order(f, 5'000), (std::vector<R>{R::None, R::None, R::Ack, R::Ack, R::Ack}));
}

TEST_F(NicFixture, AcksGoFirstUnlessTheirClassIsPausedAndATimeoutGoesBackOnlyWithoutProgress) {
  Port& p = fab.ports[0];
  EXPECT_FALSE(nic.ack_first(0));
  const uint32_t ack = fab.pool.alloc();
  fab.pool[ack].size = 60;
  p.enqueue(0, ack, 60);
  EXPECT_TRUE(nic.ack_first(0));
  p.paused[3] = true;  // ACKs travel in class 3 unless ACK_HIGH_PRIO
  EXPECT_FALSE(nic.ack_first(0));
  fab.params.ack_class = 0;
  EXPECT_TRUE(nic.ack_first(0));

  fab.params.rto = 100 * kUs;
  Flow& f = flows.state(qp(1, 10'000));
  f.snd_nxt = 5'000, f.snd_una = 2'000, f.last_progress = 10 * kUs;
  EXPECT_FALSE(nic.on_rto(f, 109 * kUs));  // 99 µs without progress: not yet
  EXPECT_EQ(f.snd_nxt, 5'000u);
  EXPECT_TRUE(nic.on_rto(f, 110 * kUs));
  EXPECT_EQ(f.snd_nxt, 2'000u);
  EXPECT_TRUE(f.rto_recovery);
  EXPECT_EQ(f.last_progress, 110 * kUs);
  f.snd_nxt = 2'000;  // nothing outstanding: only the clock restarts
  f.rto_recovery = false;
  EXPECT_FALSE(nic.on_rto(f, 300 * kUs));
  EXPECT_EQ(f.last_progress, 300 * kUs);
}

TEST(NetParams, TakeEveryValueTheModelReadsFromTheSettingsAndTheCc) {
  SimConfig c;
  c.cc_mode = 3;  // HPCC: 42 B of INT in data packets
  c.rate_ai_bps = c.rate_hai_bps = 50'000'000;
  c.packet_payload_size = 9000;
  c.l2_chunk_size = 4000, c.l2_ack_interval = 1, c.l2_back_to_zero = true;
  c.has_win = false, c.var_win = true, c.global_t = false, c.rate_bound = false;
  c.ack_high_prio = true, c.int_multi = 4, c.pint_log_base = 1.01, c.ns_truncation = false;
  c.rto_us = 2.5, c.enable_qcn = false, c.pause_time_us = 0, c.buffer_size_mb = 9.5;
  c.pfc_lossless_headroom = true, c.error_rate_per_link = 0.001, c.seed = 7, c.portable_order = true;
  c.link_down_us = 3, c.link_down_a = 4, c.link_down_b = 5;
  c.ecn[k100G] = EcnThresholds{1, 2, 0.5};
  c.key_origin["KMAX_MAP"] = {"conf.txt", 12};
  c.path = "conf.txt";
  SimConfig hpcc = c;
  hpcc.has_win = true;  // the HPCC factory refuses HAS_WIN 0; only its INT sizes matter here
  const auto cc = make_cc(hpcc, nullptr);
  const NetParams p = NetParams::from(c, *cc);
  EXPECT_EQ(p.payload, 9000u);
  EXPECT_EQ(p.int_mode, IntMode::Hpcc);
  EXPECT_EQ(p.data_extra, 42u);
  EXPECT_EQ(p.ack_bytes, 88u);  // 46 B of header + 42 B of INT, above the 60-B minimum
  EXPECT_EQ(p.mtu(), 9000u + 48u + 42u);
  EXPECT_EQ(p.int_multi, 4u);
  EXPECT_DOUBLE_EQ(p.pint_log_base, 1.01);
  EXPECT_FALSE(p.ns_trunc);
  EXPECT_EQ(p.l2_chunk_size, 4000u);
  EXPECT_EQ(p.l2_ack_interval, 1u);
  EXPECT_TRUE(p.l2_back_to_zero);
  EXPECT_FALSE(p.has_win);
  EXPECT_TRUE(p.var_win);
  EXPECT_FALSE(p.global_t);
  EXPECT_FALSE(p.rate_bound);
  EXPECT_EQ(p.ack_class, 0);
  EXPECT_EQ(p.rto, 2'500'000);  // ps
  EXPECT_FALSE(p.enable_qcn);
  EXPECT_FALSE(p.pfc_pause);
  EXPECT_EQ(p.buffer_bytes, 9'961'472u);  // 9.5 × 2^20
  EXPECT_TRUE(p.pfc_lossless_headroom);
  EXPECT_EQ(p.ecn.at(k100G).kmax_bytes, 2u);
  EXPECT_EQ(p.ecn_origin, (SettingOrigin{"conf.txt", 12}));
  EXPECT_EQ(p.link_down_origin, (SettingOrigin{"conf.txt", 0}));  // not given: the file, line 0
  EXPECT_DOUBLE_EQ(p.error_rate_per_link, 0.001);
  EXPECT_EQ(p.seed, 7u);
  EXPECT_TRUE(p.portable_order);
  EXPECT_EQ(p.link_down_time(), 2 * kSec + 3 * kUs);
  EXPECT_EQ(p.link_down_a, 4u);
  EXPECT_EQ(p.link_down_b, 5u);
  // The defaults are the reference's: a 60-B ACK, ACKs in class 3, a 10-ms timeout, 16 MiB, no LINK_DOWN.
  const NetParams d = NetParams::from(SimConfig{}, *cc);
  EXPECT_EQ(d.ack_class, 3);
  EXPECT_EQ(d.rto, 10'000 * kUs);
  EXPECT_EQ(d.buffer_bytes, 16u << 20);
  EXPECT_EQ(d.link_down_time(), -1);
  EXPECT_EQ(NetParams{}.rto, d.rto);
}
