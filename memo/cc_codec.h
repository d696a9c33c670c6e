// CC snapshots as fixed table rows (the /cc table of a memo file, memo/README.md): one row per
// key vertex, whatever the algorithm, so memo files stay one plain compound table per kind of thing.
#pragma once
#include <cstdint>
#include <utility>

#include "wormhole/io/hdf5_util.h"
#include "wormhole/net/cc.h"

namespace wh {

/// One CC snapshot as a row. `kind` is the CcState alternative (0 none, 1 DCQCN, 2 HPCC, 3 TIMELY,
/// 4 DCTCP, 5 HPCC-PINT); the meaning of a0..a3, x0 and r0..r1 per kind is in memo/README.md.
struct CcRow {
  uint8_t kind = 0;
  uint64_t rate_bps = 0;
  int64_t timer_ps[3] = {-1, -1, -1};
  uint64_t snd_nxt = 0;
  uint64_t a[4] = {0, 0, 0, 0};
  double x0 = 0;
  uint64_t r[2] = {0, 0};
  double hop_u[IntHeader::kMaxHops] = {};
  uint64_t hop_rc_bps[IntHeader::kMaxHops] = {};
  uint32_t hop_stage[IntHeader::kMaxHops] = {};
  bool operator==(const CcRow&) const = default;
};

/// The row of a portable snapshot (make_cc_portable): HPCC's last INT records are not kept (a
/// portable snapshot has none).
CcRow encode_cc(const CcSnapshot& s);
/// The snapshot of a row. Throws std::runtime_error on an unknown kind.
CcSnapshot decode_cc(const CcRow& r);
/// The HDF5 memory and file types of CcRow.
std::pair<h5::Handle, h5::Handle> cc_row_types();

}  // namespace wh
