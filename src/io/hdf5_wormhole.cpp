// The /wormhole group of the results file: what fast-forwarding did (docs/results.md).
#include <hdf5.h>

#include "wormhole/io/hdf5_util.h"
#include "wormhole/ffwd/skip_stats.h"
#include "wormhole/io/results_writer.h"
#include "hdf5_results_layout.h"

namespace wh {

using namespace h5;

namespace {
struct PartitionRow {
  int64_t time_ns;
  uint32_t partitions, skipping;
};
struct VerifyRow {
  uint8_t kind, cut, failed;
  uint32_t partition, flows;
  int64_t start_ns, planned_ns, span_ns;
  double predicted_bytes, simulated_bytes, error, signed_error;
};
}  // namespace

void write_wormhole(hid_t file, const SkipReport& r, bool write_rows) {
  Handle g(check(H5Gcreate2(file, "wormhole", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "creating group /wormhole"),
           H5Gclose);
  const SkipStats& s = r.stats;
  attr_f64(g, "theta", r.settings.theta);
  attr_u64(g, "window", r.settings.window);
  attr_u64(g, "window_used", r.window_samples);
  attr_u8(g, "line_rate_window", r.settings.line_rate_window);
  attr_u64(g, "line_rate_window_min", s.line_rate_window_max > 0 ? s.line_rate_window_min : 0);
  attr_u64(g, "line_rate_window_max", s.line_rate_window_max);
  attr_i64(g, "sample_interval_ps", r.settings.sample_interval);
  attr_u8(g, "fast_forward", r.settings.fast_forward);
  attr_u8(g, "skip_back", r.settings.skip_back);
  attr_u64(g, "events_executed", r.events_executed);
  attr_u64(g, "events_discarded", r.events_discarded);
  attr_u64(g, "events_skipped", s.events_skipped);
  // Against the model's events only: the bookkeeping ones would not exist in packet mode.
  const double total = double(r.events_executed - r.events_discarded + s.events_skipped);
  attr_f64(g, "events_skipped_fraction", total > 0 ? double(s.events_skipped) / total : 0.0);
  attr_u64(g, "packets_skipped", s.packets_skipped);
  attr_u64(g, "skips", s.skips);
  attr_u64(g, "skip_backs", s.skip_backs);
  attr_u64(g, "steady_checks", s.checks);
  attr_u64(g, "steady_found", s.steady_found);
  attr_f64(g, "min_spread", s.min_spread);
  attr_i64(g, "skipped_flow_time_ns", s.skipped_flow_time / kNs);
  attr_u64(g, "replays", s.replays);
  attr_u64(g, "replay_backs", s.replay_backs);
  attr_u64(g, "replays_cut", s.replays_cut);
  attr_u64(g, "replays_refused", s.replays_refused);
  attr_i64(g, "replayed_flow_time_ns", s.replayed_flow_time / kNs);
  if (const CollectiveMemoStats& c = r.collective; c.on) {
    attr_u64(g, "collective_memo_considered", c.considered);
    attr_u64(g, "collective_memo_replayed", c.replayed);
    attr_u64(g, "collective_memo_replayed_flows", c.replayed_flows);
    attr_u64(g, "collective_memo_recorded", c.recorded);
    attr_u64(g, "collective_memo_not_kept", c.not_kept);
    attr_u64(g, "collective_memo_repeats", c.repeats);
    attr_u64(g, "collective_memo_not_island", c.not_island);
    attr_u64(g, "collective_memo_late_issue", c.late_issue);
    attr_u64(g, "collective_memo_busy", c.busy);
    attr_u64(g, "collective_memo_overlaps", c.overlaps);
    attr_u64(g, "collective_memo_events_replayed", c.events_replayed);
    attr_u64(g, "collective_memo_verified", c.verified);
    attr_u64(g, "collective_memo_verify_failures", c.verify_failures);
    attr_u64(g, "collective_memo_conflicts", c.conflicts);
    attr_u64(g, "collective_memo_follow_failures", c.follow_failures);
    attr_u64(g, "collective_memo_margin_violations", c.margin_violations);
    attr_u64(g, "collective_memo_approximate", c.approximate);
    attr_u64(g, "collective_memo_approximate_replays", c.approximate_replays);
    attr_f64(g, "collective_memo_estimated_error_bytes", c.estimated_error_bytes);
    attr_f64(g, "collective_memo_verify_max_error", c.verify_max_error);
  }
  const MemoReport& m = r.memo;
  attr_u8(g, "memo", m.on);
  if (m.on) {
    attr_u64(g, "memo_periods", m.periods);
    attr_u64(g, "memo_hits", m.hits);
    attr_u64(g, "memo_replayed", m.replayed);
    attr_u64(g, "memo_converged", m.converged);
    attr_u64(g, "memo_new_patterns", m.inserted);
    attr_u64(g, "memo_repeats", m.repeated);
    attr_u64(g, "memo_followed", m.followed);
    attr_u64(g, "memo_follows_cut", m.follows_cut);
    attr_u64(g, "memo_patterns", m.patterns);
    attr_u64(g, "memo_warm_patterns", m.warm_patterns);
    attr_string(g, "memo_input", m.input);
    attr_string(g, "memo_output", m.output);
  }
  attr_u64(g, "max_partitions", s.max_partitions);
  attr_u64(g, "control_packets_bypassed", r.control_bypassed);
  attr_u64(g, "packets_held", r.packets_held);
  attr_string(g, "units",
              "sample_interval_ps: ps; skipped_flow_time_ns, replayed_flow_time_ns (part of it): ns; min_spread: ratio (inf: no check); events_skipped: estimate (credited packets x 4 per "
              "data-path hop); events_discarded: stale events left behind by shifts; events_skipped_fraction: "
              "skipped / (executed - discarded + skipped)");

  const auto types = compound(sizeof(PartitionRow), {
      Field{"time_ns", HOFFSET(PartitionRow, time_ns), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"partitions", HOFFSET(PartitionRow, partitions), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"skipping", HOFFSET(PartitionRow, skipping), H5T_NATIVE_UINT32, H5T_STD_U32LE},
  });
  std::vector<PartitionRow> rows;
  rows.reserve(r.timeline.size());
  for (const PartitionSample& p : r.timeline) rows.push_back({p.time / kNs, p.partitions, p.skipping});
  Handle ds = create_table(g, "partitions", types.second, rows.size(), "time_ns: ns; partitions, skipping: counts",
                           "network partitions alive and being fast-forwarded, a row whenever either count changed "
                           "(checked once per sample interval)",
                           "/wormhole");
  if (write_rows && !rows.empty())
    check(H5Dwrite(ds, types.first, H5S_ALL, H5S_ALL, transfer_list(rows.size(), types.first, types.second), rows.data()),
          "writing /wormhole/partitions");

  attr_f64(g, "verify", r.settings.verify);
  attr_f64(g, "estimated_error", r.estimated_error());
  attr_u64(g, "contended_decisions", s.contended_decisions);
  attr_f64(g, "error_bound", r.settings.error_bound);
  const auto vtypes = compound(sizeof(VerifyRow), {
      Field{"kind", HOFFSET(VerifyRow, kind), H5T_NATIVE_UINT8, H5T_STD_U8LE},
      Field{"partition", HOFFSET(VerifyRow, partition), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"flows", HOFFSET(VerifyRow, flows), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"start_ns", HOFFSET(VerifyRow, start_ns), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"planned_ns", HOFFSET(VerifyRow, planned_ns), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"span_ns", HOFFSET(VerifyRow, span_ns), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"cut", HOFFSET(VerifyRow, cut), H5T_NATIVE_UINT8, H5T_STD_U8LE},
      Field{"predicted_bytes", HOFFSET(VerifyRow, predicted_bytes), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE},
      Field{"simulated_bytes", HOFFSET(VerifyRow, simulated_bytes), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE},
      Field{"error", HOFFSET(VerifyRow, error), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE},
      Field{"signed_error", HOFFSET(VerifyRow, signed_error), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE},
      Field{"failed", HOFFSET(VerifyRow, failed), H5T_NATIVE_UINT8, H5T_STD_U8LE},
  });
  std::vector<VerifyRow> vrows;
  for (const VerifySample& v : r.verify) {
    double pred = 0, sim = 0;
    for (size_t k = 0; k < v.flows.size(); ++k) pred += v.predicted[k], sim += v.simulated[k];
    vrows.push_back({static_cast<uint8_t>(v.kind), uint8_t(v.cut), uint8_t(v.failed), v.partition,
                     static_cast<uint32_t>(v.flows.size()), v.start / kNs, v.planned / kNs, (v.end - v.start) / kNs, pred,
                     sim, v.error, v.signed_error});
  }
  Handle vds = create_table(
      g, "verify", vtypes.second, vrows.size(),
      "kind: 0 fast-forward, 1 replay, 2 the fast-forward continuing a replay; start_ns, planned_ns, span_ns: ns; predicted_bytes, simulated_bytes: payload "
      "bytes summed over the partition's flows; error, signed_error: ratios",
      "verify mode: one row per fast-forward or replay simulated packet by packet instead; over the span (the "
      "planned duration, or up to the last tick before a flow came or went: cut = 1) the flows were predicted to make "
      "predicted_bytes of progress and made simulated_bytes; error = sum max(0, |predicted - simulated| - one "
      "packet payload) / sum simulated over the flows (1 if nothing moved against a prediction of more than a packet), "
      "signed_error the same with each flow's sign; failed = 1 above error_bound",
      "/wormhole");
  if (write_rows && !vrows.empty())
    check(H5Dwrite(vds, vtypes.first, H5S_ALL, H5S_ALL, transfer_list(vrows.size(), vtypes.first, vtypes.second),
                   vrows.data()),
          "writing /wormhole/verify");
}

}  // namespace wh
