// CC snapshots <-> memo file rows (see cc_codec.h).
#include "cc_codec.h"

#include <stdexcept>
#include <string>

namespace wh {

namespace {

struct Encoder {
  CcRow& r;
  void operator()(const NoCcState&) const { r.kind = 0; }
  void operator()(const DcqcnState& s) const {
    r.kind = 1;
    r.a[0] = s.target_bps, r.a[1] = s.stage;
    r.a[2] = uint64_t(s.alpha_cnp) | uint64_t(s.decrease_cnp) << 1 | uint64_t(s.first_cnp) << 2;
    r.x0 = s.alpha;
  }
  void operator()(const HpccState& s) const {
    r.kind = 2;
    r.a[0] = s.cur_rate_bps, r.a[1] = s.inc_stage, r.a[2] = s.last_update_seq;
    r.x0 = s.u;
    for (uint32_t i = 0; i < IntHeader::kMaxHops; ++i)
      r.hop_u[i] = s.hops[i].u, r.hop_rc_bps[i] = s.hops[i].rc_bps, r.hop_stage[i] = s.hops[i].inc_stage;
  }
  void operator()(const TimelyState& s) const {
    r.kind = 3;
    r.a[0] = s.cur_rate_bps, r.a[1] = s.inc_stage, r.a[2] = s.last_rtt_ns, r.a[3] = s.last_update_seq;
    r.x0 = s.rtt_diff;
  }
  void operator()(const DctcpState& s) const {
    r.kind = 4;
    r.a[0] = s.last_update_seq, r.a[1] = uint64_t(s.ecn_count) | uint64_t(s.batch_size) << 32;
    r.a[2] = s.cwr, r.a[3] = s.high_seq;
    r.x0 = s.alpha;
  }
  void operator()(const HpccPintState& s) const {
    r.kind = 5;
    r.a[0] = s.cur_rate_bps, r.a[1] = s.inc_stage, r.a[2] = s.last_update_seq;
    std::tie(r.r[0], r.r[1]) = s.rng.state();
  }
};

}  // namespace

CcRow encode_cc(const CcSnapshot& s) {
  CcRow r;
  std::visit(Encoder{r}, s.cc);
  r.rate_bps = s.rate_bps;
  for (int i = 0; i < 3; ++i) r.timer_ps[i] = s.timer_in[i];
  r.snd_nxt = s.snd_nxt;
  return r;
}

CcSnapshot decode_cc(const CcRow& r) {
  CcSnapshot s;
  switch (r.kind) {
    case 0: s.cc = NoCcState{}; break;
    case 1: {
      DcqcnState d;
      d.target_bps = r.a[0], d.stage = static_cast<uint32_t>(r.a[1]);
      d.alpha_cnp = r.a[2] & 1, d.decrease_cnp = r.a[2] & 2, d.first_cnp = r.a[2] & 4;
      d.alpha = r.x0;
      s.cc = d;
      break;
    }
    case 2: {
      HpccState h;
      h.cur_rate_bps = r.a[0], h.inc_stage = static_cast<uint32_t>(r.a[1]), h.last_update_seq = r.a[2];
      h.u = r.x0;
      for (uint32_t i = 0; i < IntHeader::kMaxHops; ++i)
        h.hops[i] = HpccHopState{r.hop_u[i], r.hop_rc_bps[i], r.hop_stage[i]};
      s.cc = h;
      break;
    }
    case 3: {
      TimelyState t;
      t.cur_rate_bps = r.a[0], t.inc_stage = static_cast<uint32_t>(r.a[1]), t.last_rtt_ns = r.a[2];
      t.last_update_seq = r.a[3], t.rtt_diff = r.x0;
      s.cc = t;
      break;
    }
    case 4: {
      DctcpState d;
      d.last_update_seq = r.a[0], d.ecn_count = static_cast<uint32_t>(r.a[1]);
      d.batch_size = static_cast<uint32_t>(r.a[1] >> 32), d.cwr = r.a[2] != 0, d.high_seq = r.a[3];
      d.alpha = r.x0;
      s.cc = d;
      break;
    }
    case 5: {
      HpccPintState p;
      p.cur_rate_bps = r.a[0], p.inc_stage = static_cast<uint32_t>(r.a[1]), p.last_update_seq = r.a[2];
      p.rng = Rng::from_state(r.r[0], r.r[1]);
      s.cc = p;
      break;
    }
    default: throw std::runtime_error("unknown CC kind " + std::to_string(r.kind));
  }
  s.rate_bps = r.rate_bps;
  for (int i = 0; i < 3; ++i) s.timer_in[i] = r.timer_ps[i];
  s.snd_nxt = r.snd_nxt;
  return s;
}

std::pair<h5::Handle, h5::Handle> cc_row_types() {
  using h5::Field;
  using h5::Handle;
  const hsize_t hops = IntHeader::kMaxHops;
  auto array = [&](hid_t base) { return Handle(H5Tarray_create2(base, 1, &hops), H5Tclose); };
  const Handle mu = array(H5T_NATIVE_DOUBLE), fu = array(H5T_IEEE_F64LE);
  const Handle mrc = array(H5T_NATIVE_UINT64), frc = array(H5T_STD_U64LE);
  const Handle mst = array(H5T_NATIVE_UINT32), fst = array(H5T_STD_U32LE);
  const hid_t u64 = H5T_NATIVE_UINT64, f64 = H5T_STD_U64LE, i64 = H5T_NATIVE_INT64, fi64 = H5T_STD_I64LE;
  return h5::compound(sizeof(CcRow), {
      Field{"kind", HOFFSET(CcRow, kind), H5T_NATIVE_UINT8, H5T_STD_U8LE},
      Field{"rate_bps", HOFFSET(CcRow, rate_bps), u64, f64},
      Field{"timer0_ps", HOFFSET(CcRow, timer_ps), i64, fi64},
      Field{"timer1_ps", HOFFSET(CcRow, timer_ps) + 8, i64, fi64},
      Field{"timer2_ps", HOFFSET(CcRow, timer_ps) + 16, i64, fi64},
      Field{"snd_nxt", HOFFSET(CcRow, snd_nxt), u64, f64},
      Field{"a0", HOFFSET(CcRow, a), u64, f64},
      Field{"a1", HOFFSET(CcRow, a) + 8, u64, f64},
      Field{"a2", HOFFSET(CcRow, a) + 16, u64, f64},
      Field{"a3", HOFFSET(CcRow, a) + 24, u64, f64},
      Field{"x0", HOFFSET(CcRow, x0), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE},
      Field{"r0", HOFFSET(CcRow, r), u64, f64},
      Field{"r1", HOFFSET(CcRow, r) + 8, u64, f64},
      Field{"hop_u", HOFFSET(CcRow, hop_u), mu, fu},
      Field{"hop_rc_bps", HOFFSET(CcRow, hop_rc_bps), mrc, frc},
      Field{"hop_stage", HOFFSET(CcRow, hop_stage), mst, fst},
  });
}

}  // namespace wh
