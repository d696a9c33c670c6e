// write_hdf5_results_collective against the serial writer, under mpiexec with 2 or 3 ranks
// (tests/CMakeLists.txt): a few hundred synthetic flows and PFC rows spread unevenly over the
// ranks, in shuffled order, one rank owning no rows of a table (2 ranks) or none at all (3 ranks).
// The collective file must hold exactly what the serial writer writes from all rows in order:
// every group, dataset, attribute, type, shape, chunk size and byte (compared through the HDF5 C
// API here, and with h5diff if it was found). Misuse and a missing directory must raise the same
// error on every rank, without a hang. Plain main: exit status 0 = pass, 1 = a check failed.
#include <hdf5.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "wormhole/ffwd/skip_stats.h"
#include "wormhole/io/hdf5_collective.h"
#include "wormhole/io/workload_results.h"
#include "wormhole/core/input_error.h"
#include "wormhole/io/results_writer.h"

using namespace wh;

namespace {

int g_rank = 0, g_size = 1, g_failures = 0;

void fail(const std::string& what) {
  std::fprintf(stderr, "rank %d: FAIL: %s\n", g_rank, what.c_str());
  ++g_failures;
}
#define CHECK(cond, what) \
  do {                    \
    if (!(cond)) fail(what); \
  } while (0)

// ---- synthetic results, identical on every rank (fixed seed) ----

struct Results {
  std::vector<FlowRecord> flows;  // flows[i].id == i
  std::vector<PfcRecord> pfc;     // in row order
  RunMetadata meta;
  SkipReport skip;
};

Results make_results() {
  std::mt19937_64 rng(20240601);
  const auto uni = [&](uint64_t lo, uint64_t hi) { return std::uniform_int_distribution<uint64_t>(lo, hi)(rng); };
  Results r;
  for (uint32_t i = 0; i < 347; ++i) {
    FlowRecord f;
    f.id = i;
    f.src = uint32_t(uni(0, 63));
    f.dst = uint32_t(uni(0, 63));
    f.sport = 10000 + i;
    f.dport = 100;
    f.pg = uint32_t(uni(0, 7));
    f.size_bytes = uni(1, 1u << 24);
    f.start = Time(uni(0, 5'000'000'000));  // ps, not whole ns: the ns columns truncate
    const uint64_t kind = uni(0, 9);
    f.finish = kind < 2 ? -1 : kind == 2 ? f.start : f.start + Time(uni(1000, 1'000'000'000));
    f.ideal_fct_ns = i % 17 == 0 ? 0 : uni(1000, 1'000'000);
    f.skipped = f.finished() ? Time(uni(0, uint64_t(f.finish - f.start))) : Time(uni(0, 1'000'000));
    f.skipped_bytes = uni(0, f.size_bytes);
    r.flows.push_back(f);
  }
  for (uint32_t i = 0; i < 211; ++i) {
    r.pfc.push_back(PfcRecord{Time(uni(0, 5'000'000'000)), uint32_t(uni(0, 80)), uint8_t(uni(0, 1)),
                              uint32_t(uni(1, 8)), uint8_t(uni(0, 1)), uint8_t(uni(0, 7))});
  }
  r.meta.scenario = "tests/mpi/scenario.toml";
  r.meta.version = "0.1.0-test";
  r.meta.settings = {{"CC_MODE", "1"}, {"KMAX_MAP", "1 400000000000 3200"}, {"note", "µs, ünïcode"}};
  for (int i = 0; i < 40; ++i) r.meta.settings.push_back({"KEY_" + std::to_string(i), std::to_string(uni(0, 1u << 30))});
  RunStats& st = r.meta.stats;
  st.events = 123456789;
  st.wall_s = 12.75;
  st.sim_end = 5'123'456'789;
  st.last_finish = 5'000'000'123;
  st.packets_dropped = 3;
  st.ecn_marks = 4567;
  st.max_queue_bytes = 987654;
  st.retransmit_timeouts = 2;
  st.max_rtt_ns = 8123;
  st.max_bdp_bytes = 406150;
  SkipReport& s = r.skip;
  s.settings.theta = 0.07;
  s.settings.window = 1500;
  s.stats.skips = 41;
  s.stats.checks = 900;
  s.stats.steady_found = 55;
  s.stats.min_spread = 0.0123;
  s.stats.packets_skipped = 777777;
  s.stats.events_skipped = 3111108;
  s.stats.skipped_flow_time = 4'000'000'123;
  s.stats.max_partitions = 9;
  s.events_executed = 123456789;
  s.events_discarded = 4321;
  s.memo.on = true;
  s.memo.periods = 12;
  s.memo.input = "warm.h5";
  for (int i = 0; i < 30; ++i)
    s.timeline.push_back({Time(uni(0, 5'000'000'000)), uint32_t(uni(1, 9)), uint32_t(uni(0, 9))});
  return r;
}

// Which rank owns each row: 1 rank: all; 2 ranks: flows both (uneven), PFC rank 1 only (rank 0
// none); 3+ ranks: ranks 0 .. n-2 (uneven: rank k weighted k+1), the last rank owns nothing.
std::vector<int> owners(size_t rows, bool pfc, unsigned seed) {
  std::vector<int> candidates;
  if (g_size == 1) candidates = {0};
  else if (g_size == 2) candidates = pfc ? std::vector<int>{1} : std::vector<int>{0, 1};
  else for (int k = 0; k + 1 < g_size; ++k) candidates.push_back(k);
  std::vector<double> weights;
  for (size_t k = 0; k < candidates.size(); ++k) weights.push_back(double(k + 1));
  std::mt19937_64 rng(seed);
  std::discrete_distribution<size_t> pick(weights.begin(), weights.end());
  std::vector<int> out(rows);
  for (int& o : out) o = candidates[pick(rng)];
  return out;
}

struct Mine {
  std::vector<FlowRecord> flows;
  std::vector<PfcRecord> pfc;
  std::vector<uint64_t> pfc_rows;
};

Mine my_share(const Results& all, const std::vector<int>& flow_owner, const std::vector<int>& pfc_owner) {
  std::vector<size_t> fi, pi;
  for (size_t i = 0; i < all.flows.size(); ++i)
    if (flow_owner[i] == g_rank) fi.push_back(i);
  for (size_t i = 0; i < all.pfc.size(); ++i)
    if (pfc_owner[i] == g_rank) pi.push_back(i);
  std::mt19937_64 rng(1000 + g_rank);  // any order: shuffled
  std::shuffle(fi.begin(), fi.end(), rng);
  std::shuffle(pi.begin(), pi.end(), rng);
  Mine m;
  for (size_t i : fi) m.flows.push_back(all.flows[i]);
  for (size_t i : pi) {
    m.pfc.push_back(all.pfc[i]);
    m.pfc_rows.push_back(i);
  }
  return m;
}

// ---- comparing two HDF5 files through the C API ----

struct Value {  // a dataset's or attribute's type, shape and contents
  hid_t type = -1;
  std::vector<hsize_t> dims;
  std::vector<unsigned char> raw;    // fixed-size types, in the file's own type
  std::vector<std::string> strings;  // variable-length strings
  ~Value() {
    if (type >= 0) H5Tclose(type);
  }
};

template <class Read>
void read_value(hid_t type, hid_t space, Value& v, Read read) {
  v.type = type;
  v.dims.resize(std::max(0, H5Sget_simple_extent_ndims(space)));
  H5Sget_simple_extent_dims(space, v.dims.data(), nullptr);
  const size_t n = size_t(H5Sget_simple_extent_npoints(space));
  if (H5Tget_class(type) == H5T_STRING && H5Tis_variable_str(type) > 0) {
    std::vector<char*> p(n, nullptr);
    if (n > 0 && read(type, p.data()) < 0) throw std::runtime_error("reading strings");
    for (char* s : p) v.strings.push_back(s ? s : "<null>");
    if (n > 0) H5Dvlen_reclaim(type, space, H5P_DEFAULT, p.data());
  } else if (H5Tget_class(type) == H5T_COMPOUND && H5Tdetect_class(type, H5T_STRING) > 0) {
    // A table with string columns (/topology/nodes): each member read on its own, strings as text.
    for (int m = 0; m < H5Tget_nmembers(type); ++m) {
      char* name = H5Tget_member_name(type, unsigned(m));
      const hid_t mt = H5Tget_member_type(type, unsigned(m));
      const bool str = H5Tget_class(mt) == H5T_STRING && H5Tis_variable_str(mt) > 0;
      const size_t size = str ? sizeof(char*) : H5Tget_size(mt);
      const hid_t one = H5Tcreate(H5T_COMPOUND, size);
      H5Tinsert(one, name, 0, mt);
      std::vector<unsigned char> buf(std::max<size_t>(n, 1) * size);
      if (n > 0 && read(one, buf.data()) < 0) throw std::runtime_error("reading a table column");
      if (str) {
        std::vector<char*> p(n);
        std::memcpy(p.data(), buf.data(), n * sizeof(char*));
        for (char* x : p) v.strings.push_back(x ? x : "<null>");
        for (char* x : p) H5free_memory(x);
      } else {
        v.raw.insert(v.raw.end(), buf.begin(), buf.begin() + long(n * size));
      }
      H5Tclose(one);
      H5Tclose(mt);
      H5free_memory(name);
    }
  } else {
    if (H5Tdetect_class(type, H5T_STRING) > 0 || H5Tdetect_class(type, H5T_VLEN) > 0)
      throw std::runtime_error("compound with variable-length members: not compared by this test");
    v.raw.resize(n * H5Tget_size(type));
    if (n > 0 && read(type, v.raw.data()) < 0) throw std::runtime_error("reading data");
  }
}

void compare_values(const Value& a, const Value& b, const std::string& what) {
  if (H5Tequal(a.type, b.type) <= 0) return fail(what + ": types differ");
  if (a.dims != b.dims) return fail(what + ": shapes differ");
  if (a.strings != b.strings) return fail(what + ": strings differ");
  if (a.raw != b.raw) {
    const size_t at = size_t(std::mismatch(a.raw.begin(), a.raw.end(), b.raw.begin()).first - a.raw.begin());
    fail(what + ": contents differ, first at element " + std::to_string(at / H5Tget_size(a.type)));
  }
}

std::vector<std::string> names(hid_t loc, bool attributes) {
  std::vector<std::string> out;
  if (attributes)
    H5Aiterate2(loc, H5_INDEX_NAME, H5_ITER_INC, nullptr,
                [](hid_t, const char* n, const H5A_info_t*, void* d) -> herr_t {
                  static_cast<std::vector<std::string>*>(d)->push_back(n);
                  return 0;
                },
                &out);
  else
    H5Literate(loc, H5_INDEX_NAME, H5_ITER_INC, nullptr,
               [](hid_t, const char* n, const H5L_info_t*, void* d) -> herr_t {
                 static_cast<std::vector<std::string>*>(d)->push_back(n);
                 return 0;
               },
               &out);
  return out;
}

void compare_attributes(hid_t a, hid_t b, const std::string& path) {
  const auto na = names(a, true);
  if (na != names(b, true)) return fail(path + ": attribute names differ");
  for (const std::string& n : na) {
    Value va, vb;
    for (auto [obj, v] : {std::pair{a, &va}, std::pair{b, &vb}}) {
      const hid_t attr = H5Aopen(obj, n.c_str(), H5P_DEFAULT);
      const hid_t space = H5Aget_space(attr);
      read_value(H5Aget_type(attr), space, *v, [&](hid_t t, void* buf) { return H5Aread(attr, t, buf); });
      H5Sclose(space);
      H5Aclose(attr);
    }
    compare_values(va, vb, path + "@" + n);
  }
}

std::vector<hsize_t> chunk_dims(hid_t ds) {
  const hid_t dcpl = H5Dget_create_plist(ds);
  std::vector<hsize_t> dims(8, 0);
  dims.resize(H5Pget_layout(dcpl) == H5D_CHUNKED ? std::max(0, H5Pget_chunk(dcpl, 8, dims.data())) : 0);
  H5Pclose(dcpl);
  return dims;
}

void compare_objects(hid_t a, hid_t b, const std::string& path) {
  compare_attributes(a, b, path);
  if (H5Iget_type(a) != H5Iget_type(b)) return fail(path + ": one is a group, the other a dataset");
  if (H5Iget_type(a) == H5I_DATASET) {
    if (chunk_dims(a) != chunk_dims(b)) fail(path + ": chunk sizes differ");
    Value va, vb;
    for (auto [ds, v] : {std::pair{a, &va}, std::pair{b, &vb}}) {
      const hid_t space = H5Dget_space(ds);
      read_value(H5Dget_type(ds), space, *v,
                 [&](hid_t t, void* buf) { return H5Dread(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf); });
      H5Sclose(space);
    }
    return compare_values(va, vb, path);
  }
  const auto links = names(a, false);
  if (links != names(b, false)) return fail(path + ": members differ");
  for (const std::string& n : links) {
    const hid_t oa = H5Oopen(a, n.c_str(), H5P_DEFAULT), ob = H5Oopen(b, n.c_str(), H5P_DEFAULT);
    compare_objects(oa, ob, (path == "/" ? "" : path) + "/" + n);
    H5Oclose(oa);
    H5Oclose(ob);
  }
}

// Through the C API, then with h5diff if it was found at configure time.
void compare_files(const std::string& serial, const std::string& collective, bool with_wormhole) {
  const hid_t a = H5Fopen(serial.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t b = H5Fopen(collective.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (a < 0 || b < 0) return fail("cannot open " + serial + " or " + collective);
  const int before = g_failures;
  compare_objects(a, b, "/");
  for (const char* must : {"flows", "pfc", "run", "run/settings"})
    CHECK(H5Lexists(b, must, H5P_DEFAULT) > 0, std::string("/") + must + " missing");
  CHECK((H5Lexists(b, "wormhole", H5P_DEFAULT) > 0) == with_wormhole, "/wormhole present or missing");
  H5Fclose(a);
  H5Fclose(b);
  if (g_failures == before) std::printf("rank 0: %s and %s are identical (C API)\n", serial.c_str(), collective.c_str());
#ifdef WH_H5DIFF
  const std::string cmd = std::string(WH_H5DIFF) + " " + serial + " " + collective;
  const int rc = std::system(cmd.c_str());
  CHECK(rc == 0, cmd + ": exit status " + std::to_string(rc));
  if (rc == 0) std::printf("rank 0: %s: exit status 0\n", cmd.c_str());
#endif
}

// ---- the collective error paths: every rank must see the same error ----

std::string bcast_string(std::string s) {
  unsigned long long n = s.size();
  MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  s.resize(n);
  MPI_Bcast(s.data(), int(n), MPI_CHAR, 0, MPI_COMM_WORLD);
  return s;
}

template <class Error, class Call>
std::string expect_error(const char* name, Call call) {
  std::string what;
  try {
    call();
    fail(std::string(name) + ": no exception");
  } catch (const Error& e) {
    what = e.what();
  } catch (const std::exception& e) {
    fail(std::string(name) + ": unexpected exception " + e.what());
  }
  CHECK(what == bcast_string(what), std::string(name) + ": not the same error on every rank: " + what);
  if (g_rank == 0) std::printf("rank 0: %s -> %s\n", name, what.c_str());
  return what;
}

void error_cases(const std::string& dir, const Results& all, const Mine& mine) {
  const uint64_t nf = all.flows.size(), np = all.pfc.size();
  const std::string missing = dir + "/missing/out.h5";
  const std::string what = expect_error<InputError>("missing directory", [&] {
    write_hdf5_results_collective(MPI_COMM_WORLD, missing, mine.flows, nf, mine.pfc, mine.pfc_rows, np, all.meta, SlowdownStats{});
  });
  if (g_rank == 0) {
    try {
      write_hdf5_results(missing, all.flows, all.pfc, all.meta);
      fail("serial writer: no exception");
    } catch (const InputError& e) {
      CHECK(what == e.what(), std::string("not the serial writer's error: ") + e.what());
      CHECK(e.file() == missing, "InputError does not name the path");
    }
  }
  const std::string bad = dir + "/bad.h5";
  Mine wrong = mine;
  if (g_rank == g_size - 1) {  // the rank that owns nothing (3 ranks) claims a row beyond the end
    wrong.pfc.push_back(all.pfc[0]);
    wrong.pfc_rows.push_back(np);
  }
  expect_error<std::invalid_argument>("row out of range", [&] {
    write_hdf5_results_collective(MPI_COMM_WORLD, bad, wrong.flows, nf, wrong.pfc, wrong.pfc_rows, np, all.meta, SlowdownStats{});
  });
  if (g_size >= 2) {
    wrong = mine;
    const std::vector<int> flow_owner = owners(nf, false, 7);
    if (g_rank == 0 && !wrong.flows.empty()) {  // claims a flow of rank 1 instead of one of its own
      for (uint32_t i = 0; i < nf; ++i)
        if (flow_owner[i] == 1) {
          wrong.flows[0].id = i;
          break;
        }
    }
    expect_error<std::invalid_argument>("flow owned twice", [&] {
      write_hdf5_results_collective(MPI_COMM_WORLD, bad, wrong.flows, nf, wrong.pfc, wrong.pfc_rows, np, all.meta, SlowdownStats{});
    });
    RunMetadata other = all.meta;
    if (g_rank == g_size - 1) other.stats.wall_s += 1;  // a rank's own wall time, not reduced
    expect_error<std::invalid_argument>("metadata differs", [&] {
      write_hdf5_results_collective(MPI_COMM_WORLD, bad, mine.flows, nf, mine.pfc, mine.pfc_rows, np, other, SlowdownStats{});
    });
  }
  if (g_rank == 0) CHECK(!std::filesystem::exists(bad), "a file was written despite invalid arguments");
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  std::string dir;
  if (g_rank == 0) {
    char tmpl[] = "/tmp/wh_collective_XXXXXX";
    if (!mkdtemp(tmpl)) MPI_Abort(MPI_COMM_WORLD, 2);
    dir = tmpl;
  }
  dir = bcast_string(dir);
  try {
    const Results all = make_results();
    const Mine mine = my_share(all, owners(all.flows.size(), false, 7), owners(all.pfc.size(), true, 8));
    std::printf("rank %d of %d: %zu flows, %zu PFC rows\n", g_rank, g_size, mine.flows.size(), mine.pfc.size());
    error_cases(dir, all, mine);

    const std::string collective = dir + "/collective.h5", serial = dir + "/serial.h5";
    // A distributed training run's driver report (replicated on every rank), written by rank 0.
    WorkloadReport wl;
    wl.workload_file = "w.txt";
    wl.gpus = 16, wl.tp = 8, wl.dp = 2, wl.ep = 1, wl.dp_ep = 2;
    wl.iterations = {{0, 0, 1234567, true}};
    LayerRecord layer;
    layer.name = "attention_column";
    layer.finished = 1234000;
    wl.layers = {layer};
    CollectiveRecord c;
    c.layer_name = "attention_column";
    c.op = "AllReduce", c.group = "TP", c.ranks = 8, c.bytes = 1 << 20, c.flows = 112, c.flow_bytes = 7 << 20;
    c.start = 1000, c.end = 1234000;
    wl.collectives = {c};
    wl.end_to_end.total = 1234567;
    const SlowdownStats slowdown = slowdown_stats(all.flows);
    write_hdf5_results_collective(MPI_COMM_WORLD, collective, mine.flows, all.flows.size(), mine.pfc, mine.pfc_rows,
                                  all.pfc.size(), all.meta, slowdown, nullptr, &all.skip);
    if (g_rank == 0) {
      write_hdf5_results(serial, all.flows, all.pfc, all.meta, nullptr, &all.skip);
      compare_files(serial, collective, true);
    }
    // The same in rounds of 7 rows a rank: every rank takes part in each round, with fewer or no rows
    // once its own are written (uneven counts, one rank owning none of a table).
    const std::string rounds = dir + "/rounds_collective.h5";
    write_hdf5_results_collective(MPI_COMM_WORLD, rounds, mine.flows, all.flows.size(), mine.pfc, mine.pfc_rows,
                                  all.pfc.size(), all.meta, slowdown, nullptr, &all.skip, nullptr, 7);
    if (g_rank == 0) compare_files(serial, rounds, true);
    // With /workload (VL-string tables: h5diff compares them, the C API comparison above cannot).
    const std::string wl_collective = dir + "/wl_collective.h5", wl_serial = dir + "/wl_serial.h5";
    write_hdf5_results_collective(MPI_COMM_WORLD, wl_collective, mine.flows, all.flows.size(), mine.pfc,
                                  mine.pfc_rows, all.pfc.size(), all.meta, slowdown, &wl);
    if (g_rank == 0) {
      write_hdf5_results(wl_serial, all.flows, all.pfc, all.meta, &wl);
#ifdef WH_H5DIFF
      const std::string cmd = std::string(WH_H5DIFF) + " " + wl_serial + " " + wl_collective;
      const int rc = std::system(cmd.c_str());
      CHECK(rc == 0, cmd + ": exit status " + std::to_string(rc));
#endif
      const hid_t f = H5Fopen(wl_collective.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
      CHECK(f >= 0 && H5Lexists(f, "workload", H5P_DEFAULT) > 0 && H5Lexists(f, "workload/collectives", H5P_DEFAULT) > 0,
            "/workload/collectives missing from the collective file");
      if (f >= 0) H5Fclose(f);
    }
    // A run without flows, PFC frames or settings: empty tables, NaN statistics, no /wormhole.
    RunMetadata bare;
    bare.scenario = "empty.toml";
    write_hdf5_results_collective(MPI_COMM_WORLD, dir + "/empty_collective.h5", std::vector<FlowRecord>{}, 0, {}, {}, 0, bare, slowdown_stats(std::vector<FlowRecord>{}));
    if (g_rank == 0) {
      write_hdf5_results(dir + "/empty_serial.h5", std::vector<FlowRecord>{}, {}, bare);
      compare_files(dir + "/empty_serial.h5", dir + "/empty_collective.h5", false);
    }
  } catch (const std::exception& e) {
    // Another rank may be inside a collective call: end the job rather than hang.
    std::fprintf(stderr, "rank %d: unexpected exception: %s\n", g_rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int failures = 0;
  MPI_Allreduce(&g_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0) {
    if (failures == 0) std::filesystem::remove_all(dir);
    std::printf("%s (%d failed checks)%s\n", failures ? "FAILED" : "PASSED", failures,
                failures ? (", files kept in " + dir).c_str() : "");
  }
  MPI_Finalize();
  return failures ? 1 : 0;
}
