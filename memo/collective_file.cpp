// The collective memo's tables in a memo file (collective_file.h).
#include "collective_file.h"

#include <algorithm>
#include <cmath>

#include "wormhole/core/time.h"
#include "wormhole/io/hdf5_util.h"
#include "wormhole/core/input_error.h"
#include "wormhole/net/packet.h"

namespace wh {

using namespace h5;

namespace {

struct PatternRow {
  uint64_t ns;
  uint64_t key_offset;
  uint32_t key_bytes, flows, ports;
  uint64_t flow_offset, port_offset, qp_offset;
  uint32_t qps;
  uint64_t hits;
};
struct ByteRow {
  uint8_t b;
};
struct FlowRow {
  int64_t finish_ps;
  uint32_t order;
};
struct PortRow {
  uint8_t rr_last;
  uint32_t rr_qp, qps;
  uint64_t tx_delta, sent_delta;
};
struct QpRow {
  uint32_t flow;
};
struct SharedRow {
  uint64_t peak;
};
struct SkipRow {
  int64_t skipped_ps;
  uint64_t skipped_bytes;
  double error_bytes;
  double error_bound;
};

std::pair<Handle, Handle> pattern_types() {
  return compound(sizeof(PatternRow), {
      Field{"ns", HOFFSET(PatternRow, ns), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"key_offset", HOFFSET(PatternRow, key_offset), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"key_bytes", HOFFSET(PatternRow, key_bytes), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"flows", HOFFSET(PatternRow, flows), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"ports", HOFFSET(PatternRow, ports), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"flow_offset", HOFFSET(PatternRow, flow_offset), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"port_offset", HOFFSET(PatternRow, port_offset), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"qp_offset", HOFFSET(PatternRow, qp_offset), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"qps", HOFFSET(PatternRow, qps), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"hits", HOFFSET(PatternRow, hits), H5T_NATIVE_UINT64, H5T_STD_U64LE},
  });
}
std::pair<Handle, Handle> byte_types() {
  return compound(sizeof(ByteRow), {Field{"b", HOFFSET(ByteRow, b), H5T_NATIVE_UINT8, H5T_STD_U8LE}});
}
std::pair<Handle, Handle> flow_types() {
  return compound(sizeof(FlowRow), {Field{"finish_ps", HOFFSET(FlowRow, finish_ps), H5T_NATIVE_INT64, H5T_STD_I64LE},
                                    Field{"order", HOFFSET(FlowRow, order), H5T_NATIVE_UINT32, H5T_STD_U32LE}});
}
std::pair<Handle, Handle> port_types() {
  return compound(sizeof(PortRow), {
      Field{"rr_last", HOFFSET(PortRow, rr_last), H5T_NATIVE_UINT8, H5T_STD_U8LE},
      Field{"rr_qp", HOFFSET(PortRow, rr_qp), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"qps", HOFFSET(PortRow, qps), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"tx_delta", HOFFSET(PortRow, tx_delta), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"sent_delta", HOFFSET(PortRow, sent_delta), H5T_NATIVE_UINT64, H5T_STD_U64LE},
  });
}
std::pair<Handle, Handle> qp_types() {
  return compound(sizeof(QpRow), {Field{"flow", HOFFSET(QpRow, flow), H5T_NATIVE_UINT32, H5T_STD_U32LE}});
}
std::pair<Handle, Handle> shared_types() {
  return compound(sizeof(SharedRow), {Field{"peak", HOFFSET(SharedRow, peak), H5T_NATIVE_UINT64, H5T_STD_U64LE}});
}
std::pair<Handle, Handle> skip_types() {
  return compound(sizeof(SkipRow), {
      Field{"skipped_ps", HOFFSET(SkipRow, skipped_ps), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"skipped_bytes", HOFFSET(SkipRow, skipped_bytes), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"error_bytes", HOFFSET(SkipRow, error_bytes), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE},
      Field{"error_bound", HOFFSET(SkipRow, error_bound), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE},
  });
}

}  // namespace

void write_collective_tables(hid_t file, const MemoDb& db) {
  std::vector<PatternRow> rows;
  std::vector<ByteRow> keys;
  std::vector<FlowRow> flows;
  std::vector<PortRow> ports;
  std::vector<QpRow> qps;
  std::vector<SharedRow> shared;
  std::vector<SkipRow> skips;
  for (const auto& [ns, store] : db.collectives) {
    // Sorted by key: the file does not depend on the hash table's order.
    std::vector<const std::pair<const std::string, CollectivePattern>*> sorted;
    for (const auto& kv : store)
      if (!kv.second.rejected) sorted.push_back(&kv);  // verify mode found it wrong: never replayed again
    std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->first < b->first; });
    for (const auto* kv : sorted) {
      const CollectivePattern& p = kv->second;
      rows.push_back({ns, keys.size(), static_cast<uint32_t>(kv->first.size()), static_cast<uint32_t>(p.finish.size()),
                      static_cast<uint32_t>(p.rr_last.size()), flows.size(), ports.size(), qps.size(), 0, p.hits});
      for (char c : kv->first) keys.push_back({static_cast<uint8_t>(c)});
      for (size_t i = 0; i < p.finish.size(); ++i) flows.push_back({p.finish[i], p.order[i]});
      for (size_t i = 0; i < p.rr_last.size(); ++i) {
        ports.push_back({p.rr_last[i], p.rr_qp[i], static_cast<uint32_t>(p.qps[i].size()), p.tx_delta[i], p.sent_delta[i]});
        for (uint32_t f : p.qps[i]) qps.push_back({f});
      }
      rows.back().qps = static_cast<uint32_t>(qps.size() - rows.back().qp_offset);
      shared.push_back({p.shared_peak});
      for (size_t i = 0; i < p.finish.size(); ++i)
        skips.push_back(p.approximate() ? SkipRow{p.skips[i].time, p.skips[i].bytes, p.skips[i].error, p.error_bound}
                                        : SkipRow{-1, 0, 0, 0});
    }
  }
  write_table(file, "collectives", pattern_types(), rows.data(), rows.size(),
              "*_offset: rows of /collective_keys, /collective_flows, /collective_ports, /collective_qps",
              "one row per collective memo pattern: its key (bytes) and where its value is");
  write_table(file, "collective_keys", byte_types(), keys.data(), keys.size(), "bytes",
              "the patterns' keys, byte after byte (compared whole)");
  write_table(file, "collective_flows", flow_types(), flows.data(), flows.size(),
              "finish_ps: ps after the collective's first issue; order: a plan flow",
              "per pattern, row i = plan flow i's completion and the i-th flow to complete");
  write_table(file, "collective_ports", port_types(), ports.data(), ports.size(),
              "rr_qp, qps: positions and counts; tx_delta, sent_delta: bytes",
              "per pattern, its island's ports in order: the state it left there");
  write_table(file, "collective_qps", qp_types(), qps.data(), qps.size(), "plan flows",
              "per pattern and port, the finished QPs left on the NIC");
  write_table(file, "collective_shared", shared_types(), shared.data(), shared.size(), "bytes",
              "per pattern (row of /collectives): on an NVSwitch shared with other traffic, the most of its buffer "
              "in use while it was recorded; 0 on a whole island (absent from older files: 0)");
  write_table(file, "collective_skips", skip_types(), skips.data(), skips.size(),
              "skipped_ps: ps (-1: the pattern was simulated packet for packet); skipped_bytes, error_bytes: bytes; "
              "error_bound: a fraction",
              "per row of /collective_flows: what fast-forward skipped of that flow when the pattern was recorded, "
              "the skips' estimated error, and the error bound they were held to (absent from older files: every "
              "pattern exact)");
}

void read_collective_tables(hid_t file, MemoDb& db, const std::string& path, const std::string& fix) {
  if (!has_link(file, "collectives")) return;
  for (const char* t : {"collective_keys", "collective_flows", "collective_ports", "collective_qps"})
    if (!has_link(file, t)) throw InputError(path, 0, std::string("the table /") + t + " is missing (corrupt file)", fix);
  const auto rows = read_table<PatternRow>(file, "collectives", pattern_types());
  const auto keys = read_table<ByteRow>(file, "collective_keys", byte_types());
  const auto flows = read_table<FlowRow>(file, "collective_flows", flow_types());
  const auto ports = read_table<PortRow>(file, "collective_ports", port_types());
  const auto qps = read_table<QpRow>(file, "collective_qps", qp_types());
  const auto shared = has_link(file, "collective_shared")
                          ? read_table<SharedRow>(file, "collective_shared", shared_types())
                          : std::vector<SharedRow>(rows.size(), SharedRow{0});
  if (shared.size() != rows.size())
    throw InputError(path, 0, "the table /collective_shared has another length than /collectives (corrupt file)", fix);
  const auto skips = has_link(file, "collective_skips") ? read_table<SkipRow>(file, "collective_skips", skip_types())
                                                        : std::vector<SkipRow>(flows.size(), SkipRow{-1, 0, 0, 0});
  if (skips.size() != flows.size())
    throw InputError(path, 0, "the table /collective_skips has another length than /collective_flows (corrupt file)", fix);
  auto past = [](uint64_t off, uint64_t n, size_t size) { return off > size || n > size - off; };
  for (size_t k = 0; k < rows.size(); ++k) {
    const PatternRow& r = rows[k];
    const std::string where = "collective pattern " + std::to_string(k);
    if (past(r.key_offset, r.key_bytes, keys.size()) || past(r.flow_offset, r.flows, flows.size()) ||
        past(r.port_offset, r.ports, ports.size()) || past(r.qp_offset, r.qps, qps.size()))
      throw InputError(path, 0, where + " points past its tables (corrupt file)", fix);
    if (!db.namespaces.count(r.ns))
      throw InputError(path, 0, where + " has a namespace /namespaces does not describe (corrupt file)", fix);
    CollectivePattern p;
    p.hits = r.hits;
    p.shared_peak = shared[k].peak;
    std::vector<uint8_t> seen(r.flows, 0);
    for (uint64_t i = r.flow_offset; i < r.flow_offset + r.flows; ++i) {
      const FlowRow& f = flows[i];
      if (f.finish_ps < 0 || f.finish_ps > 1000 * kSec || f.order >= r.flows || seen[f.order]++)
        throw InputError(path, 0, where + " has a completion out of range or an order that is not a permutation of its "
                                  "flows (corrupt file)", fix);
      p.finish.push_back(f.finish_ps);
      p.order.push_back(f.order);
    }
    // A pattern recorded with skips has them on every row; an exact one -1 on every row.
    const bool approximate = r.flows > 0 && skips[r.flow_offset].skipped_ps >= 0;
    if (approximate) p.error_bound = skips[r.flow_offset].error_bound;
    for (uint64_t i = r.flow_offset; i < r.flow_offset + r.flows; ++i) {
      const SkipRow& x = skips[i];
      // An exact pattern's rows are -1 and zeros; an approximate one's skip no more than the flow's time
      // from the collective's first issue, under one bound in (0, 1).
      const bool row_ok =
          approximate ? x.skipped_ps >= 0 && x.skipped_ps <= flows[i].finish_ps && x.skipped_bytes <= (uint64_t{1} << 50) &&
                            std::isfinite(x.error_bytes) && x.error_bytes >= 0 && x.error_bound == p.error_bound &&
                            x.error_bound >= 0 && x.error_bound < 1  // 0: not known (no error_bound column)
                      : x.skipped_ps == -1 && x.skipped_bytes == 0 && x.error_bytes == 0 && x.error_bound == 0;
      if (!row_ok)
        throw InputError(path, 0, where + " has a row of /collective_skips out of range or unlike its other rows "
                                  "(corrupt file)", fix);
      if (approximate) p.skips.push_back({x.skipped_ps, x.skipped_bytes, x.error_bytes});
    }
    for (size_t i = 1; i < p.order.size(); ++i)
      if (p.finish[p.order[i]] < p.finish[p.order[i - 1]])
        throw InputError(path, 0, where + " lists its completions out of time order (corrupt file)", fix);
    uint64_t q = r.qp_offset;
    for (uint64_t i = r.port_offset; i < r.port_offset + r.ports; ++i) {
      const PortRow& x = ports[i];
      if (x.rr_last >= kClasses)
        throw InputError(path, 0, where + " has a switch class out of range (corrupt file)", fix);
      if (x.qps > r.qp_offset + r.qps - q)
        throw InputError(path, 0, where + " lists more QPs than its rows of /collective_qps (corrupt file)", fix);
      p.rr_last.push_back(x.rr_last);
      p.rr_qp.push_back(x.rr_qp);
      p.tx_delta.push_back(x.tx_delta);
      p.sent_delta.push_back(x.sent_delta);
      p.qps.emplace_back();
      for (uint32_t j = 0; j < x.qps; ++j, ++q) {
        if (qps[q].flow >= r.flows) throw InputError(path, 0, where + " has a QP of a flow it does not have (corrupt file)", fix);
        p.qps.back().push_back(qps[q].flow);
      }
    }
    std::string key(r.key_bytes, '\0');
    for (uint32_t i = 0; i < r.key_bytes; ++i) key[i] = static_cast<char>(keys[r.key_offset + i].b);
    add_collective_pattern(db.collectives[r.ns], key, p);
  }
}

void add_collective_pattern(std::unordered_map<std::string, CollectivePattern>& store, const std::string& key,
                            const CollectivePattern& p) {
  auto [it, fresh] = store.try_emplace(key, p);
  if (fresh) return;
  const uint64_t hits = it->second.hits + p.hits, peak = std::max(it->second.shared_peak, p.shared_peak);
  const auto bound = [](const CollectivePattern& c) { return c.approximate() ? c.error_bound : 0.0; };
  if (bound(p) < bound(it->second)) it->second = p;
  it->second.hits = hits, it->second.shared_peak = peak;
}

}  // namespace wh
