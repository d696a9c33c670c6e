// Memo files in HDF5 (see memo_file.h and memo/README.md for the layout).
#include "wormhole/memo/memo_file.h"

#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "cc_codec.h"
#include "collective_file.h"
#include "wormhole/core/time.h"
#include "wormhole/io/hdf5_util.h"
#include "wormhole/core/input_error.h"
#include "wormhole/version.h"

namespace wh {

using namespace h5;

namespace {

constexpr const char* kFormat = "wormhole-memo";
constexpr uint64_t kLayout = 7;  // bump when a field changes meaning (4: entries' `rejected`; 5: edges' ACK couplings; 6: vertices' trends; 7: collective patterns)

struct NsRow {
  uint64_t ns;
  const char* description;
};
struct EntryRow {
  uint64_t ns, wl_hash;
  uint32_t vertices, edges;
  uint64_t vertex_offset, edge_offset;
  int64_t duration_ps, visible_from_ps;
  uint64_t hits;
  uint8_t rejected;
};
struct VertexRow {
  uint64_t rate_q, bottleneck_bps, line_bps, rtt_ns;
  uint32_t hops;
  uint8_t fresh;
  uint64_t bytes, end_rate_bps;
  double goodput;
  double trend;
  int64_t trend_age;
};
struct EdgeRow {
  uint32_t u, v, weight, u_acks, v_acks;
};

std::pair<Handle, Handle> ns_types() {
  Handle str = string_type();
  return compound(sizeof(NsRow), {Field{"ns", HOFFSET(NsRow, ns), H5T_NATIVE_UINT64, H5T_STD_U64LE},
                                  Field{"description", HOFFSET(NsRow, description), str, str}});
}
std::pair<Handle, Handle> entry_types() {
  return compound(sizeof(EntryRow), {
      Field{"ns", HOFFSET(EntryRow, ns), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"wl_hash", HOFFSET(EntryRow, wl_hash), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"vertices", HOFFSET(EntryRow, vertices), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"edges", HOFFSET(EntryRow, edges), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"vertex_offset", HOFFSET(EntryRow, vertex_offset), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"edge_offset", HOFFSET(EntryRow, edge_offset), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"duration_ps", HOFFSET(EntryRow, duration_ps), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"visible_from_ps", HOFFSET(EntryRow, visible_from_ps), H5T_NATIVE_INT64, H5T_STD_I64LE},
      Field{"hits", HOFFSET(EntryRow, hits), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"rejected", HOFFSET(EntryRow, rejected), H5T_NATIVE_UINT8, H5T_STD_U8LE},
  });
}
std::pair<Handle, Handle> vertex_types() {
  return compound(sizeof(VertexRow), {
      Field{"rate_q", HOFFSET(VertexRow, rate_q), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"bottleneck_bps", HOFFSET(VertexRow, bottleneck_bps), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"line_bps", HOFFSET(VertexRow, line_bps), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"rtt_ns", HOFFSET(VertexRow, rtt_ns), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"hops", HOFFSET(VertexRow, hops), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"fresh", HOFFSET(VertexRow, fresh), H5T_NATIVE_UINT8, H5T_STD_U8LE},
      Field{"bytes", HOFFSET(VertexRow, bytes), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"end_rate_bps", HOFFSET(VertexRow, end_rate_bps), H5T_NATIVE_UINT64, H5T_STD_U64LE},
      Field{"goodput_bytes_per_ps", HOFFSET(VertexRow, goodput), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE},
      Field{"trend_per_ps", HOFFSET(VertexRow, trend), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE},
      Field{"trend_age_ps", HOFFSET(VertexRow, trend_age), H5T_NATIVE_INT64, H5T_STD_I64LE},
  });
}
std::pair<Handle, Handle> edge_types() {
  return compound(sizeof(EdgeRow), {
      Field{"u", HOFFSET(EdgeRow, u), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"v", HOFFSET(EdgeRow, v), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"weight", HOFFSET(EdgeRow, weight), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"u_acks", HOFFSET(EdgeRow, u_acks), H5T_NATIVE_UINT32, H5T_STD_U32LE},
      Field{"v_acks", HOFFSET(EdgeRow, v_acks), H5T_NATIVE_UINT32, H5T_STD_U32LE},
  });
}

// Why a stored CC state cannot be restored into a QP of line rate `line_bps` ("" if it can): a
// pacing rate of 0 (a division by zero) or above the line, a non-finite α / U / RTT difference,
// a timer neither off (-1) nor within 1 s.
std::string implausible_cc(const CcRow& c, uint64_t line_bps) {
  if (c.rate_bps == 0 || c.rate_bps > line_bps)
    return "a CC rate of " + std::to_string(c.rate_bps) + " bit/s on a " + std::to_string(line_bps) + "-bit/s line";
  bool finite = std::isfinite(c.x0);
  for (double u : c.hop_u) finite = finite && std::isfinite(u);
  if (!finite) return "a CC state with a value that is not a finite number";
  for (int64_t t : c.timer_ps)
    if (t != -1 && (t < 0 || t > kSec)) return "a CC timer " + std::to_string(t) + " ps away";
  return "";
}

}  // namespace

void write_memo_file(const std::string& path, const MemoDb& db) {
  QuietErrors quiet;
  const hid_t fid = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (fid < 0)
    throw InputError(path, 0, "cannot create the memo file: " + error_detail(), "check that its folder exists and is writable");
  Handle file(fid, H5Fclose);
  attr_string(file, "format", kFormat);
  attr_u64(file, "layout_version", kLayout);
  attr_string(file, "version", WORMHOLE_VERSION);

  std::vector<NsRow> ns;
  for (const auto& [h, text] : db.namespaces) ns.push_back({h, text.c_str()});
  write_table(file, "namespaces", ns_types(), ns.data(), ns.size(), "ns: hash; description: text",
              "one row per namespace: the settings that change convergence, and their hash");
  std::vector<EntryRow> entries;
  std::vector<VertexRow> vertices;
  std::vector<EdgeRow> edges;
  std::vector<CcRow> cc;
  for (const MemoEntry* e : db.store.entries()) {
    entries.push_back({e->ns, wl_hash(e->key), static_cast<uint32_t>(e->key.vertices()),
                       static_cast<uint32_t>(e->key.edges.size()), vertices.size(), edges.size(), e->value.duration,
                       e->visible_from, e->hits, uint8_t(e->rejected ? 1 : 0)});
    for (size_t i = 0; i < e->key.vertices(); ++i) {
      const FcgLabel& l = e->key.label[i];
      vertices.push_back({l.rate_q, l.bottleneck_bps, l.line_bps, l.rtt_ns, l.hops, l.fresh, e->value.bytes[i],
                          e->value.end_rate_bps[i], e->value.goodput[i], e->value.trend[i], e->value.trend_age[i]});
      cc.push_back(encode_cc(e->value.cc[i]));
    }
    for (const Fcg::Edge& x : e->key.edges) edges.push_back({x.u, x.v, x.weight, x.u_acks, x.v_acks});
  }
  write_table(file, "entries", entry_types(), entries.data(), entries.size(),
              "duration_ps, visible_from_ps: ps; *_offset: rows of /vertices and /edges",
              "one row per memoized unsteady period: its FCG key (vertices, edges) and value");
  write_table(file, "vertices", vertex_types(), vertices.data(), vertices.size(),
              "rate_q: rate quanta; bottleneck_bps, line_bps, end_rate_bps: bit/s; rtt_ns: ns; hops: ports; fresh: 0/1; "
              "bytes: bytes; goodput_bytes_per_ps: bytes/ps; trend_per_ps: 1/ps; trend_age_ps: ps",
              "per entry, its key's vertices in order: label (rate_q, bottleneck_bps, line_bps, rtt_ns, hops, fresh) and value (bytes sent, end rate, goodput, its trend and how long before convergence it holds)");
  write_table(file, "cc", cc_row_types(), cc.data(), cc.size(), "rate_bps, a0 (rates): bit/s; timer*_ps: ps; snd_nxt, seqs: bytes",
              "row i = the CC state at convergence of /vertices row i (fields per kind: memo/README.md)");
  write_table(file, "edges", edge_types(), edges.data(), edges.size(), "u, v: vertex index in its entry; weight: data ports both flows' data leave through; u_acks (v_acks): ports where u's (v's) ACKs leave with the other's data",
              "per entry, its key's edges (u < v)");
  write_collective_tables(file, db);
  check(file.close(), "closing " + path);
}

MemoDb read_memo_file(const std::string& path) {
  QuietErrors quiet;
  const std::string fix = "give a memo file written by wormhole (a run with memo = true writes memo.h5)";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw InputError(path, 0, "no such memo file", fix);
  if (H5Fis_hdf5(path.c_str()) <= 0) throw InputError(path, 0, "not an HDF5 file (or corrupt)", fix);
  const hid_t fid = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (fid < 0) throw InputError(path, 0, "cannot open: " + error_detail(), fix);
  Handle file(fid, H5Fclose);
  if (!has_attr(file, "format") || read_attr_string(file, "format") != kFormat)
    throw InputError(path, 0, "an HDF5 file but not a wormhole memo file (no format = \"wormhole-memo\")", fix);
  if (!has_attr(file, "layout_version"))
    throw InputError(path, 0, "the memo file has no layout_version (corrupt file)", fix);
  if (const uint64_t v = read_attr_u64(file, "layout_version"); v != kLayout)
    throw InputError(path, 0, "memo layout version " + std::to_string(v) + ", this wormhole reads " + std::to_string(kLayout),
                     "use the wormhole that wrote it, or re-run with memo = true to write a new file");
  for (const char* t : {"namespaces", "entries", "vertices", "edges", "cc"})
    if (!has_link(file, t)) throw InputError(path, 0, std::string("the table /") + t + " is missing (corrupt file)", fix);
  MemoDb db;
  try {
    for (const NsRow& r : read_table<NsRow>(file, "namespaces", ns_types())) {
      db.namespaces[r.ns] = r.description ? r.description : "";
      H5free_memory(const_cast<char*>(r.description));
    }
    const auto entries = read_table<EntryRow>(file, "entries", entry_types());
    const auto vertices = read_table<VertexRow>(file, "vertices", vertex_types());
    const auto edges = read_table<EdgeRow>(file, "edges", edge_types());
    const auto cc = read_table<CcRow>(file, "cc", cc_row_types());
    if (cc.size() != vertices.size())
      throw InputError(path, 0, "/cc has " + std::to_string(cc.size()) + " rows for " + std::to_string(vertices.size()) +
                                    " vertices (corrupt file)", fix);
    for (size_t k = 0; k < entries.size(); ++k) {
      const EntryRow& e = entries[k];
      const std::string where = "entry " + std::to_string(k);
      // Written so that no sum can wrap around (offsets are u64 from the file).
      if (e.vertex_offset > vertices.size() || e.vertices > vertices.size() - e.vertex_offset ||
          e.edge_offset > edges.size() || e.edges > edges.size() - e.edge_offset)
        throw InputError(path, 0, where + " points past the vertex or edge tables (corrupt file)", fix);
      if (!db.namespaces.count(e.ns))
        throw InputError(path, 0, where + " has a namespace /namespaces does not describe (corrupt file)", fix);
      // A period longer than 1,000 s of simulated time is no period a run converges in.
      if (e.duration_ps <= 0 || e.duration_ps > 1000 * kSec)
        throw InputError(path, 0, where + " has a duration of " + std::to_string(e.duration_ps) + " ps (corrupt file)", fix);
      Fcg key;
      MemoValue v;
      v.duration = e.duration_ps;
      for (uint64_t i = e.vertex_offset; i < e.vertex_offset + e.vertices; ++i) {
        const VertexRow& r = vertices[i];
        if (!std::isfinite(r.goodput) || r.goodput < 0)
          throw InputError(path, 0, where + " has a goodput that is not a finite number >= 0 (corrupt file)", fix);
        if (!std::isfinite(r.trend) || r.trend < 0 || r.trend_age < 0 || r.trend_age > e.duration_ps)
          throw InputError(path, 0, where + " has a goodput trend that is not a finite number >= 0, or an age outside its "
                                    "period (corrupt file)", fix);
        key.label.push_back({r.rate_q, r.bottleneck_bps, r.line_bps, r.rtt_ns, r.hops, uint8_t(r.fresh != 0)});
        if (const std::string bad = implausible_cc(cc[i], r.line_bps); !bad.empty())
          throw InputError(path, 0, where + ": " + bad + " (corrupt file)", fix);
        v.bytes.push_back(vertices[i].bytes);
        v.end_rate_bps.push_back(vertices[i].end_rate_bps);
        v.goodput.push_back(vertices[i].goodput);
        v.trend.push_back(vertices[i].trend);
        v.trend_age.push_back(vertices[i].trend_age);
        v.cc.push_back(decode_cc(cc[i]));
      }
      for (uint64_t i = e.edge_offset; i < e.edge_offset + e.edges; ++i) {
        const EdgeRow& x = edges[i];
        if (x.u >= x.v || x.v >= e.vertices)
          throw InputError(path, 0, where + " has an edge between vertices it does not have (corrupt file)", fix);
        key.edges.push_back({x.u, x.v, x.weight, x.u_acks, x.v_acks});
      }
      // wl_hash is informative (for other tools); the store hashes the graph itself.
      // A file never holds two isomorphic keys of one namespace; if it does, their hits add up.
      const MemoEntry* in = db.store.insert(e.ns, std::move(key), std::move(v), e.visible_from_ps).first;
      in->hits += e.hits;
      in->rejected = in->rejected || e.rejected != 0;
    }
    read_collective_tables(file, db, path, fix);
  } catch (const std::runtime_error& e) {
    if (dynamic_cast<const InputError*>(&e)) throw;
    throw InputError(path, 0, std::string("unreadable memo file: ") + e.what(), fix);
  }
  return db;
}

namespace {

// Namespace descriptions are "KEY=VALUE; KEY=VALUE; ...; links: ...": their items in order, as
// (key, item). Settings that only some runs have (the line-rate window and its error bound) come and go,
// so items are matched by key, not by place.
std::vector<std::pair<std::string, std::string>> items(const std::string& s) {
  std::vector<std::pair<std::string, std::string>> v;
  for (size_t a = 0, b; a < s.size(); a = b + 2) {
    b = s.find("; ", a);
    if (b == std::string::npos) b = s.size();
    const std::string item = s.substr(a, b - a);
    const size_t k = item.find_first_of("=:");
    v.emplace_back(item.substr(0, k), item);
  }
  return v;
}

// Of the described namespaces, the one sharing the most items with `ours`, and its first item (in
// our order, then its own) that differs, as "KEY=A there, KEY=B here" ("not set" where one lacks it).
std::string closest_difference(const std::map<uint64_t, std::string>& namespaces, const std::string& ours) {
  const auto o = items(ours);
  std::map<std::string, std::string> mine(o.begin(), o.end());
  std::string best = "it describes no settings at all";
  size_t best_shared = 0;
  bool first = true;
  for (const auto& [h, text] : namespaces) {
    const auto t = items(text);
    std::map<std::string, std::string> theirs(t.begin(), t.end());
    size_t shared = 0;
    for (const auto& [key, item] : t) {
      const auto it = mine.find(key);
      shared += it != mine.end() && it->second == item;
    }
    if (!first && shared <= best_shared) continue;
    first = false, best_shared = shared;
    best = "its closest settings differ: same settings text, different hash";
    auto differs = [&](const std::string& key) {
      const auto a = theirs.find(key), b = mine.find(key);
      if (a != theirs.end() && b != mine.end() && a->second == b->second) return false;
      best = "its closest settings differ: " + (a != theirs.end() ? a->second : key + " not set") + " there, " +
             (b != mine.end() ? b->second : key + " not set") + " here";
      return true;
    };
    bool found = false;
    for (const auto& [key, item] : o) if ((found = differs(key))) break;
    if (!found)
      for (const auto& [key, item] : t) if (differs(key)) break;
  }
  return best;
}

}  // namespace

MemoDb read_warm_start_file(const std::string& path, uint64_t ns, const std::string& description, size_t cc_kind,
                            const std::string& cc_name, size_t* ours, uint32_t rank, uint32_t ranks) {
  MemoDb in = read_memo_file(path);
  auto it = in.namespaces.find(ns);
  if (it == in.namespaces.end() || it->second != description)
    throw InputError(path, 0,
                     "the memo file is not for this run's settings (" + closest_difference(in.namespaces, description) + ")",
                     "warm-start only from runs of the same network settings (every setting but file paths, monitors, "
                     "stop time and SEED; link rates and delays) and the same theta, window, sample interval and rate "
                     "quantum (and line-rate window and error bound, where the line-rate window is on); 'wormhole memo "
                     "stats' lists a file's namespaces");
  MemoDb out;
  out.namespaces = in.namespaces;
  size_t n = 0;
  for (const MemoEntry* e : in.store.entries()) {
    if (e->ns == ns) {
      ++n;
      for (const CcSnapshot& c : e->value.cc)
        if (c.cc.index() != cc_kind)
          throw InputError(path, 0,
                           "an entry of this run's namespace holds a CC state of kind " + std::to_string(c.cc.index()) +
                               " where " + cc_name + " keeps kind " + std::to_string(cc_kind) + " (corrupt file)",
                           "give a memo file written by wormhole (a run with memo = true writes memo.h5)");
    }
    if (MemoStore::shard_of(e->ns, e->key, ranks) != rank) {  // another rank's share
      out.store.note_size(e->ns, e->key.vertices());
      continue;
    }
    out.store.insert(e->ns, e->key, e->value, 0).first->rejected = e->rejected;  // hits start at 0
  }
  out.collectives = std::move(in.collectives);
  for (auto& [h, store] : out.collectives) {
    if (h == ns) n += store.size();
    for (auto& [key, p] : store) p.hits = 0;
  }
  if (ours) *ours = n;
  return out;
}

MemoDb merge_memo_files(const std::vector<std::string>& paths) {
  MemoDb out;
  for (const std::string& p : paths) {
    MemoDb in = read_memo_file(p);
    for (const auto& [h, text] : in.namespaces) {
      auto [it, fresh] = out.namespaces.emplace(h, text);
      if (!fresh && it->second != text)
        throw InputError(p, 0, fmt::format("namespace {:016x} is described differently than in an earlier file", h),
                         "merge only memo files written by the same wormhole version");
    }
    for (const MemoEntry* e : in.store.entries()) {
      auto [entry, fresh] = out.store.insert(e->ns, e->key, e->value, e->visible_from);
      if (fresh) entry->hits = e->hits;
      else entry->hits += e->hits;
      entry->rejected = entry->rejected || e->rejected;  // wrong in one run is wrong
    }
    for (auto& [h, store] : in.collectives)
      for (auto& [key, p] : store) add_collective_pattern(out.collectives[h], key, p);
  }
  return out;
}

}  // namespace wh
