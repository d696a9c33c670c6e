// Workload report: bandwidth known answers (docs/workloads.md §6), the four CSVs parsed back, the
// /workload group of the HDF5 file read back with the plain C API, and write errors.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "wormhole/core/input_error.h"
#include "wormhole/io/results_writer.h"
#include "wormhole/io/workload_results.h"

#if __has_include(<hdf5.h>)
#include <hdf5.h>
#define WH_TEST_HAVE_HDF5 1
#endif

using namespace wh;
namespace fs = std::filesystem;

namespace {

constexpr uint64_t kMiB = 1024 * 1024;

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "wh_workload_XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path); }
};

// RFC 4180 reader: enough for our files (quoted fields with doubled quotes, no embedded newlines).
std::vector<std::vector<std::string>> read_csv(const fs::path& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> row(1);
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (quoted) {
        if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
          row.back() += '"';
          ++i;
        } else if (c == '"') {
          quoted = false;
        } else {
          row.back() += c;
        }
      } else if (c == '"') {
        quoted = true;
      } else if (c == ',') {
        row.emplace_back();
      } else {
        row.back() += c;
      }
    }
    rows.push_back(row);
  }
  return rows;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (c == ',') out.emplace_back();
    else out.back() += c;
  }
  return out;
}

// Two iterations of two rows on 8 GPUs (TP 8): "attn" with a 16 MiB fwd AllReduce (the §6 known
// answer, 176.842 µs) and a wg AllGather, "mlp" with compute only. Times are chosen with sub-ns
// remainders so truncation to whole ns is visible.
WorkloadReport sample_report() {
  WorkloadReport r;
  r.workload_file = "/data/example/microAllReduce.txt";
  r.gpus = 8;
  r.tp = 8;
  r.dp = 1;
  r.ep = 1;
  r.dp_ep = 1;
  r.report_gpu = 0;
  const Time iter = 2000 * kUs;
  for (uint32_t it = 0; it < 2; ++it) {
    r.iterations.push_back({it, it * iter, (it + 1) * iter + 123});
    LayerRecord a;
    a.iteration = it;
    a.layer = 0;
    a.name = "attn";
    a.compute = {556 * kUs, 10 * kUs, 20 * kUs};  // fwd, ig, wg
    a.comm[size_t(Phase::Fwd)] = 176842 * kNs + 400;
    a.exposed[size_t(Phase::Fwd)] = 176842 * kNs + 400;
    a.bytes[size_t(Phase::Fwd)] = 16 * kMiB;
    a.op[size_t(Phase::Fwd)] = "AllReduce";
    a.ranks[size_t(Phase::Fwd)] = 8;
    a.comm[size_t(Phase::Wg)] = 100 * kUs;
    a.exposed[size_t(Phase::Wg)] = 25 * kUs;
    a.bytes[size_t(Phase::Wg)] = 8 * kMiB;
    a.op[size_t(Phase::Wg)] = "AllGather";
    a.ranks[size_t(Phase::Wg)] = 8;
    a.finished = it * iter + 900 * kUs;
    r.layers.push_back(a);
    LayerRecord m;
    m.iteration = it;
    m.layer = 1;
    m.name = "mlp";
    m.compute = {300 * kUs, 7 * kUs + 1, 0};  // fwd, ig, wg
    m.finished = it * iter + 1500 * kUs;
    r.layers.push_back(m);

    CollectiveRecord c;
    c.iteration = it;
    c.layer = 0;
    c.layer_name = "attn";
    c.phase = Phase::Fwd;
    c.op = "AllReduce";
    c.group = "TP";
    c.group_first = 0;
    c.ranks = 8;
    c.bytes = 16 * kMiB;
    c.flows = 112;
    c.flow_bytes = 14 * 2 * kMiB * 8;
    c.start = it * iter + 556 * kUs;
    c.end = c.start + 176842 * kNs;
    r.collectives.push_back(c);
    c.phase = Phase::Wg;
    c.op = "AllGather";
    c.bytes = 8 * kMiB;
    c.flows = 56;
    c.flow_bytes = 7 * kMiB * 8;
    c.start = it * iter + 700 * kUs;
    c.end = c.start + 100 * kUs;
    r.collectives.push_back(c);
  }
  EndToEnd& e = r.end_to_end;
  e.exposed_tp = 2 * (176842 * kNs + 400);
  e.exposed_dp = 2 * 25 * kUs;
  e.total_compute = 2 * (586 * kUs + 307 * kUs + 1);
  e.total_exposed = e.exposed_tp + e.exposed_dp;
  e.total = 2 * iter + 123;
  return r;
}

}  // namespace

TEST(WorkloadResults, BusbwFactor) {
  EXPECT_DOUBLE_EQ(busbw_factor("AllReduce", 8), 14.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor("AllGather", 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor("ReduceScatter", 2), 0.5);
  EXPECT_DOUBLE_EQ(busbw_factor("AllToAll", 4), 0.75);
  EXPECT_EQ(busbw_factor("AllReduce", 1), 0.0);
  EXPECT_EQ(busbw_factor("AllReduce", 0), 0.0);
  EXPECT_EQ(busbw_factor("", 8), 0.0);
  EXPECT_EQ(busbw_factor("Broadcast", 8), 0.0);
}

// docs/workloads.md §6: 16 MiB AllReduce on 8 GPUs in 176.842 µs -> algbw 88.36, busbw 154.62 GiB/s.
TEST(WorkloadResults, BandwidthKnownAnswer) {
  CollectiveRecord c;
  c.op = "AllReduce";
  c.ranks = 8;
  c.bytes = 16 * kMiB;
  c.start = 3 * kUs;
  c.end = c.start + 176842 * kNs;
  EXPECT_NEAR(c.algbw_gibps(), 88.36, 0.01);
  EXPECT_NEAR(c.busbw_gibps(), 154.62, 0.01);
  EXPECT_DOUBLE_EQ(c.algbw_gibps(), 16.0 / 1024 / 176.842e-6);
  c.end = c.start;  // completed at once: no bandwidth rather than infinity
  EXPECT_EQ(c.algbw_gibps(), 0.0);
  EXPECT_EQ(c.busbw_gibps(), 0.0);

  LayerRecord l;
  l.comm[size_t(Phase::Ig)] = 176842 * kNs;
  l.bytes[size_t(Phase::Ig)] = 16 * kMiB;
  l.op[size_t(Phase::Ig)] = "AllReduce";
  l.ranks[size_t(Phase::Ig)] = 8;
  EXPECT_NEAR(l.algbw_gibps(Phase::Ig), 88.36, 0.01);
  EXPECT_NEAR(l.busbw_gibps(Phase::Ig), 154.62, 0.01);
  EXPECT_EQ(l.algbw_gibps(Phase::Fwd), 0.0);  // no collective in that phase
  EXPECT_EQ(l.busbw_gibps(Phase::Wg), 0.0);
}

TEST(WorkloadResults, CsvContents) {
  TempDir dir;
  const WorkloadReport r = sample_report();
  write_workload_csvs(dir.path.string(), r);

  // No temporaries are left behind.
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir.path)) {
    ++files;
    EXPECT_EQ(entry.path().extension(), ".csv") << entry.path();
  }
  EXPECT_EQ(files, 5u);

  const auto e2e = read_csv(dir.path / "end_to_end.csv");
  ASSERT_EQ(e2e.size(), 2u);
  EXPECT_EQ(e2e[0], split("File name,Expose DP comm,Expose DP_EP comm,Expose TP comm,Expose_EP_comm,"
                          "Expose_PP_comm,bubble time,total comp,total exposed comm,Total time"));
  ASSERT_EQ(e2e[1].size(), 10u);
  EXPECT_EQ(e2e[1][0], "microAllReduce.txt");
  EXPECT_EQ(e2e[1][1], "50.000 (1.25%)");
  EXPECT_EQ(e2e[1][2], "0.000 (0.00%)");
  EXPECT_EQ(e2e[1][3], "353.684 (8.84%)");  // 2 × 176.8424 µs, truncated to ns
  EXPECT_EQ(e2e[1][6], "0.000 (0.00%)");
  EXPECT_EQ(e2e[1][7], "1786.000 (44.65%)");
  EXPECT_EQ(e2e[1][8], "403.684 (10.09%)");
  EXPECT_EQ(e2e[1][9], "4000.000");

  const auto layers = read_csv(dir.path / "layers.csv");
  ASSERT_EQ(layers.size(), 1u + 4 + 1);  // header, 2 × 2 rows, SUM
  EXPECT_EQ(layers[0], split("layer_name,iteration,fwd compute,wg compute,ig compute,fwd exposed comm,"
                             "wg exposed comm,ig exposed comm,fwd total comm,algbw,busbw,wg total comm,"
                             "algbw,busbw,ig total comm,algbw,busbw,workload finished at"));
  for (const auto& row : layers) EXPECT_EQ(row.size(), 18u);
  const auto& a1 = layers[3];  // iteration 1, "attn"
  EXPECT_EQ(a1[0], "attn");
  EXPECT_EQ(a1[1], "1");
  EXPECT_EQ(a1[2], "556.000");   // fwd compute
  EXPECT_EQ(a1[3], "20.000");    // wg compute (SimAI's order: fwd, wg, ig)
  EXPECT_EQ(a1[4], "10.000");    // ig compute
  EXPECT_EQ(a1[5], "176.842");   // fwd exposed
  EXPECT_EQ(a1[6], "25.000");    // wg exposed
  EXPECT_EQ(a1[7], "0.000");     // ig exposed
  EXPECT_EQ(a1[8], "176.842");   // fwd total comm
  EXPECT_NEAR(std::stod(a1[9]), 88.36, 0.01);
  EXPECT_NEAR(std::stod(a1[10]), 154.62, 0.01);
  EXPECT_EQ(a1[11], "100.000");  // wg total comm
  EXPECT_EQ(a1[12], "78.125");   // 8 MiB in 100 µs
  EXPECT_EQ(a1[13], "68.359");   // × 7/8
  EXPECT_EQ(a1[14], "0.000");
  EXPECT_EQ(a1[15], "0.000");
  EXPECT_EQ(a1[16], "0.000");
  EXPECT_EQ(a1[17], "2900.000");
  EXPECT_EQ(layers[4][0], "mlp");
  EXPECT_EQ(layers[4][4], "7.000");  // 7 µs + 1 ps

  const auto& sum = layers[5];
  EXPECT_EQ(sum[0], "SUM");
  EXPECT_EQ(sum[1], "");
  EXPECT_EQ(sum[2], "1712.000");  // fwd compute: 2 × (556 + 300)
  EXPECT_EQ(sum[3], "40.000");
  EXPECT_EQ(sum[4], "34.000");    // 2 × (10 + 7 µs + 1 ps)
  EXPECT_EQ(sum[5], "353.684");
  EXPECT_EQ(sum[6], "50.000");
  EXPECT_EQ(sum[7], "0.000");
  EXPECT_EQ(sum[8], "353.684");
  EXPECT_EQ(sum[9], "");
  EXPECT_EQ(sum[10], "");
  EXPECT_EQ(sum[11], "200.000");
  EXPECT_EQ(sum[14], "0.000");
  EXPECT_EQ(sum[17], "4000.000");

  const auto coll = read_csv(dir.path / "collectives.csv");
  ASSERT_EQ(coll.size(), 1u + 4);
  EXPECT_EQ(coll[0], split("iteration,layer,layer_name,phase,op,group,group_first,ranks,bytes,flows,"
                           "flow_bytes,start_us,end_us,duration_us,algbw_GiBps,busbw_GiBps,nvlink_bytes,nic_bytes,"
                           "fabric_hop_bytes"));
  EXPECT_EQ(coll[1], split("0,0,attn,fwd,AllReduce,TP,0,8,16777216,112,234881024,556.000,732.842,176.842,"
                           "88.356,154.622,0,0,0"));
  EXPECT_EQ(coll[4], split("1,0,attn,wg,AllGather,TP,0,8,8388608,56,58720256,2700.000,2800.000,100.000,"
                           "78.125,68.359,0,0,0"));

  const auto its = read_csv(dir.path / "iterations.csv");
  ASSERT_EQ(its.size(), 3u);
  EXPECT_EQ(its[0], split("iteration,start_us,end_us,time_us,complete"));
  EXPECT_EQ(its[1], split("0,0.000,2000.000,2000.000,1"));
  EXPECT_EQ(its[2], split("1,2000.000,4000.000,2000.000,1"));

  // Rewriting replaces the files (same contents, still no temporaries).
  write_workload_csvs(dir.path.string(), r);
  EXPECT_EQ(read_csv(dir.path / "collectives.csv"), coll);
}

// gpus.csv: exposed_us sums the four groups and PP; the bubble is its own column, not exposure.
TEST(WorkloadResults, GpusCsvHasPipelineColumns) {
  TempDir dir;
  WorkloadReport r;
  GpuRecord a;
  a.compute = 300 * kUs;
  a.exposed_tp = 1 * kUs;
  a.exposed_dp = 2 * kUs;
  a.exposed_ep = 3 * kUs;
  a.exposed_dp_ep = 4 * kUs;
  a.exposed_pp = 830 * kUs + 5 * kNs + 999;  // sub-ns remainder: truncated
  a.bubble = 786934 * kNs;
  a.update = 7 * kUs;
  a.finish = 2000 * kUs;
  GpuRecord b;  // did not finish
  b.exposed_tp = 900 * kUs;
  r.per_gpu = {a, b};
  write_workload_csvs(dir.path.string(), r);
  const auto gpus = read_csv(dir.path / "gpus.csv");
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_EQ(gpus[0], split("gpu,compute_us,exposed_us,exposed_tp_us,exposed_dp_us,exposed_ep_us,exposed_dp_ep_us,"
                           "exposed_pp_us,bubble_us,update_us,finish_us"));
  // exposed: 1 + 2 + 3 + 4 + 830.005 = 840.005 µs
  EXPECT_EQ(gpus[1], split("0,300.000,840.005,1.000,2.000,3.000,4.000,830.005,786.934,7.000,2000.000"));
  EXPECT_EQ(gpus[2], split("1,0.000,900.000,900.000,0.000,0.000,0.000,0.000,0.000,0.000,"));
}

TEST(WorkloadResults, CsvQuotesNamesAndHandlesEmptyReport) {
  TempDir dir;
  WorkloadReport r;
  r.workload_file = "odd,name \"v2\".txt";
  LayerRecord l;
  l.name = "a,b";
  r.layers.push_back(l);
  write_workload_csvs(dir.path.string(), r);
  const auto e2e = read_csv(dir.path / "end_to_end.csv");
  ASSERT_EQ(e2e.size(), 2u);
  EXPECT_EQ(e2e[1][0], "odd,name \"v2\".txt");
  EXPECT_EQ(e2e[1][1], "0.000 (0.00%)");  // total 0: no division by zero
  const auto layers = read_csv(dir.path / "layers.csv");
  ASSERT_EQ(layers.size(), 3u);
  EXPECT_EQ(layers[1][0], "a,b");
  EXPECT_EQ(layers[1].size(), 18u);
  EXPECT_EQ(read_csv(dir.path / "collectives.csv").size(), 1u);  // header only
  EXPECT_EQ(read_csv(dir.path / "iterations.csv").size(), 1u);
}

TEST(WorkloadResults, MissingDirectoryThrowsInputError) {
  TempDir dir;
  const fs::path missing = dir.path / "no-such-dir";
  try {
    write_workload_csvs(missing.string(), sample_report());
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), (missing / "end_to_end.csv").string());
    EXPECT_EQ(e.line(), 0);
    const std::string what = e.what();
    EXPECT_NE(what.find("No such file or directory"), std::string::npos) << what;
    EXPECT_NE(what.find("create the directory " + missing.string()), std::string::npos) << what;
  }
  EXPECT_FALSE(fs::exists(missing));
}

#ifdef WH_TEST_HAVE_HDF5
namespace {

struct IterationBack {
  uint32_t index;
  int64_t start_ps, end_ps, time_ps;
};
struct LayerBack {
  uint32_t iteration, layer;
  char* name;
  int64_t fwd_compute_ps, fwd_comm_ps, wg_exposed_ps, ig_compute_ps;
  uint64_t fwd_bytes;
  char* fwd_op;
  char* ig_op;
  uint32_t wg_ranks;
  double fwd_algbw, fwd_busbw;
  int64_t finished_ps;
};
struct CollectiveBack {
  uint32_t iteration, layer;
  char* layer_name;
  char* phase;
  char* op;
  char* group;
  uint32_t ranks, flows;
  uint64_t bytes, flow_bytes;
  int64_t start_ps, end_ps, duration_ps;
  double busbw;
};

hid_t vlen_string() {
  const hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);  // HDF5 does not convert between character sets
  return t;
}

// Reads a whole 1-D compound dataset (fields matched by name); `reclaim` frees vlen strings.
template <class T>
std::vector<T> read_table(hid_t file, const char* name, hid_t type) {
  const hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
  EXPECT_GE(ds, 0) << name;
  const hid_t space = H5Dget_space(ds);
  hsize_t n = 0;
  H5Sget_simple_extent_dims(space, &n, nullptr);
  std::vector<T> rows(n);
  if (n) {
    EXPECT_GE(H5Dread(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()), 0) << name;
  }
  EXPECT_GT(H5Aexists(ds, "units"), 0) << name;
  EXPECT_GT(H5Aexists(ds, "description"), 0) << name;
  H5Sclose(space);
  H5Dclose(ds);
  return rows;
}

template <class T>
void reclaim(hid_t type, std::vector<T>& rows) {
  if (rows.empty()) return;
  const hsize_t n = rows.size();
  const hid_t space = H5Screate_simple(1, &n, nullptr);
  H5Dvlen_reclaim(type, space, H5P_DEFAULT, rows.data());
  H5Sclose(space);
}

template <class T>
T read_attr(hid_t obj, const char* name, hid_t type) {
  T v{};
  const hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  EXPECT_GE(a, 0) << name;
  EXPECT_GE(H5Aread(a, type, &v), 0) << name;
  H5Aclose(a);
  return v;
}

std::string read_string_attr(hid_t obj, const char* name) {
  const hid_t t = vlen_string();
  char* p = read_attr<char*>(obj, name, t);
  std::string s = p ? p : "";
  H5free_memory(p);
  H5Tclose(t);
  return s;
}

hsize_t rows_of(hid_t file, const char* name) {
  const hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
  EXPECT_GE(ds, 0) << name;
  const hid_t space = H5Dget_space(ds);
  const hsize_t n = hsize_t(H5Sget_simple_extent_npoints(space));
  H5Sclose(space);
  H5Dclose(ds);
  return n;
}

}  // namespace

TEST(WorkloadResults, Hdf5RoundTrip) {
  TempDir dir;
  const std::string path = (dir.path / "results.h5").string();
  WorkloadReport r = sample_report();
  r.incomplete = "2 collectives pending";
  write_hdf5_results(path, std::vector<FlowRecord>{}, {}, RunMetadata{}, &r);

  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  EXPECT_EQ(read_attr<uint64_t>(file, "layout_version", H5T_NATIVE_UINT64), 5u);
  const hid_t str = vlen_string();
#define FIELD(T, S, f, t) H5Tinsert(T, #f, HOFFSET(S, f), t)

  const hid_t it = H5Tcreate(H5T_COMPOUND, sizeof(IterationBack));
  FIELD(it, IterationBack, index, H5T_NATIVE_UINT32);
  FIELD(it, IterationBack, start_ps, H5T_NATIVE_INT64);
  FIELD(it, IterationBack, end_ps, H5T_NATIVE_INT64);
  FIELD(it, IterationBack, time_ps, H5T_NATIVE_INT64);
  const auto ib = read_table<IterationBack>(file, "/workload/iterations", it);
  ASSERT_EQ(ib.size(), 2u);
  EXPECT_EQ(ib[1].index, 1u);
  EXPECT_EQ(ib[1].start_ps, 2000 * kUs);
  EXPECT_EQ(ib[1].end_ps, 4000 * kUs + 123);
  EXPECT_EQ(ib[1].time_ps, 2000 * kUs + 123);

  const hid_t lt = H5Tcreate(H5T_COMPOUND, sizeof(LayerBack));
  FIELD(lt, LayerBack, iteration, H5T_NATIVE_UINT32);
  FIELD(lt, LayerBack, layer, H5T_NATIVE_UINT32);
  FIELD(lt, LayerBack, name, str);
  FIELD(lt, LayerBack, fwd_compute_ps, H5T_NATIVE_INT64);
  FIELD(lt, LayerBack, fwd_comm_ps, H5T_NATIVE_INT64);
  FIELD(lt, LayerBack, wg_exposed_ps, H5T_NATIVE_INT64);
  FIELD(lt, LayerBack, ig_compute_ps, H5T_NATIVE_INT64);
  FIELD(lt, LayerBack, fwd_bytes, H5T_NATIVE_UINT64);
  FIELD(lt, LayerBack, fwd_op, str);
  FIELD(lt, LayerBack, ig_op, str);
  FIELD(lt, LayerBack, wg_ranks, H5T_NATIVE_UINT32);
  H5Tinsert(lt, "fwd_algbw_GiBps", HOFFSET(LayerBack, fwd_algbw), H5T_NATIVE_DOUBLE);
  H5Tinsert(lt, "fwd_busbw_GiBps", HOFFSET(LayerBack, fwd_busbw), H5T_NATIVE_DOUBLE);
  FIELD(lt, LayerBack, finished_ps, H5T_NATIVE_INT64);
  auto lb = read_table<LayerBack>(file, "/workload/layers", lt);
  ASSERT_EQ(lb.size(), 4u);
  EXPECT_EQ(lb[2].iteration, 1u);
  EXPECT_EQ(lb[2].layer, 0u);
  EXPECT_STREQ(lb[2].name, "attn");
  EXPECT_EQ(lb[2].fwd_compute_ps, 556 * kUs);
  EXPECT_EQ(lb[2].fwd_comm_ps, 176842 * kNs + 400);  // ps survive, unlike the CSV's ns
  EXPECT_EQ(lb[2].wg_exposed_ps, 25 * kUs);
  EXPECT_EQ(lb[2].ig_compute_ps, 10 * kUs);
  EXPECT_EQ(lb[2].fwd_bytes, 16 * kMiB);
  EXPECT_STREQ(lb[2].fwd_op, "AllReduce");
  EXPECT_STREQ(lb[2].ig_op, "");
  EXPECT_EQ(lb[2].wg_ranks, 8u);
  EXPECT_NEAR(lb[2].fwd_algbw, 88.36, 0.01);
  EXPECT_NEAR(lb[2].fwd_busbw, 154.62, 0.01);
  EXPECT_EQ(lb[2].finished_ps, 2900 * kUs);
  EXPECT_STREQ(lb[3].name, "mlp");
  EXPECT_EQ(lb[3].ig_compute_ps, 7 * kUs + 1);
  reclaim(lt, lb);

  const hid_t ct = H5Tcreate(H5T_COMPOUND, sizeof(CollectiveBack));
  FIELD(ct, CollectiveBack, iteration, H5T_NATIVE_UINT32);
  FIELD(ct, CollectiveBack, layer, H5T_NATIVE_UINT32);
  FIELD(ct, CollectiveBack, layer_name, str);
  FIELD(ct, CollectiveBack, phase, str);
  FIELD(ct, CollectiveBack, op, str);
  FIELD(ct, CollectiveBack, group, str);
  FIELD(ct, CollectiveBack, ranks, H5T_NATIVE_UINT32);
  FIELD(ct, CollectiveBack, flows, H5T_NATIVE_UINT32);
  FIELD(ct, CollectiveBack, bytes, H5T_NATIVE_UINT64);
  FIELD(ct, CollectiveBack, flow_bytes, H5T_NATIVE_UINT64);
  FIELD(ct, CollectiveBack, start_ps, H5T_NATIVE_INT64);
  FIELD(ct, CollectiveBack, end_ps, H5T_NATIVE_INT64);
  FIELD(ct, CollectiveBack, duration_ps, H5T_NATIVE_INT64);
  H5Tinsert(ct, "busbw_GiBps", HOFFSET(CollectiveBack, busbw), H5T_NATIVE_DOUBLE);
#undef FIELD
  auto cb = read_table<CollectiveBack>(file, "/workload/collectives", ct);
  ASSERT_EQ(cb.size(), 4u);
  EXPECT_EQ(cb[0].iteration, 0u);
  EXPECT_STREQ(cb[0].layer_name, "attn");
  EXPECT_STREQ(cb[0].phase, "fwd");
  EXPECT_STREQ(cb[0].op, "AllReduce");
  EXPECT_STREQ(cb[0].group, "TP");
  EXPECT_EQ(cb[0].ranks, 8u);
  EXPECT_EQ(cb[0].flows, 112u);
  EXPECT_EQ(cb[0].bytes, 16 * kMiB);
  EXPECT_EQ(cb[0].flow_bytes, 224 * kMiB);
  EXPECT_EQ(cb[0].start_ps, 556 * kUs);
  EXPECT_EQ(cb[0].end_ps, 556 * kUs + 176842 * kNs);
  EXPECT_EQ(cb[0].duration_ps, 176842 * kNs);
  EXPECT_NEAR(cb[0].busbw, 154.62, 0.01);
  EXPECT_STREQ(cb[3].phase, "wg");
  EXPECT_STREQ(cb[3].op, "AllGather");
  reclaim(ct, cb);

  const hid_t w = H5Gopen2(file, "/workload", H5P_DEFAULT);
  ASSERT_GE(w, 0);
  EXPECT_EQ(read_string_attr(w, "workload_file"), "/data/example/microAllReduce.txt");
  EXPECT_EQ(read_attr<uint64_t>(w, "gpus", H5T_NATIVE_UINT64), 8u);
  EXPECT_EQ(read_attr<uint64_t>(w, "tp", H5T_NATIVE_UINT64), 8u);
  EXPECT_EQ(read_attr<uint64_t>(w, "dp_ep", H5T_NATIVE_UINT64), 1u);
  EXPECT_EQ(read_attr<int64_t>(w, "total_time_ps", H5T_NATIVE_INT64), 4000 * kUs + 123);
  EXPECT_EQ(read_attr<int64_t>(w, "exposed_tp_ps", H5T_NATIVE_INT64), 2 * (176842 * kNs + 400));
  EXPECT_EQ(read_attr<int64_t>(w, "exposed_dp_ps", H5T_NATIVE_INT64), 50 * kUs);
  EXPECT_EQ(read_attr<int64_t>(w, "total_compute_ps", H5T_NATIVE_INT64), 1786 * kUs + 2);
  EXPECT_EQ(read_attr<int64_t>(w, "bubble_ps", H5T_NATIVE_INT64), 0);
  EXPECT_EQ(read_attr<uint8_t>(w, "complete", H5T_NATIVE_UINT8), 0);
  EXPECT_EQ(read_string_attr(w, "incomplete"), "2 collectives pending");
  EXPECT_FALSE(read_string_attr(w, "units").empty());
  H5Gclose(w);
  H5Tclose(it);
  H5Tclose(lt);
  H5Tclose(ct);
  H5Tclose(str);
  EXPECT_GE(H5Fclose(file), 0);
}

TEST(WorkloadResults, Hdf5EmptyTablesAndNoWorkload) {
  TempDir dir;
  const std::string path = (dir.path / "empty.h5").string();
  const WorkloadReport empty;
  write_hdf5_results(path, std::vector<FlowRecord>{}, {}, RunMetadata{}, &empty);
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  for (const char* name : {"/workload/iterations", "/workload/layers", "/workload/collectives"})
    EXPECT_EQ(rows_of(file, name), 0u) << name;
  const hid_t w = H5Gopen2(file, "/workload", H5P_DEFAULT);
  ASSERT_GE(w, 0);
  EXPECT_EQ(read_attr<uint8_t>(w, "complete", H5T_NATIVE_UINT8), 1);
  EXPECT_EQ(read_string_attr(w, "incomplete"), "");
  H5Gclose(w);
  H5Fclose(file);

  // Without a report there is no /workload group at all.
  write_hdf5_results(path, std::vector<FlowRecord>{}, {}, RunMetadata{});
  file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  EXPECT_EQ(H5Lexists(file, "workload", H5P_DEFAULT), 0);
  EXPECT_EQ(rows_of(file, "/flows"), 0u);
  H5Fclose(file);
}
#else
TEST(WorkloadResults, Hdf5RoundTrip) {
  GTEST_SKIP() << "hdf5.h not on the test include path: link wh_tests with wh::hdf5 (tests/CMakeLists.txt)";
}
#endif
