// The workload driver: per-GPU programs, dependency-driven flow release, zero-size collectives,
// the watchdog, and NVLink routing inside a server. Known answers computed by hand in comments.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "wormhole/cc/factory.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/net/network.h"
#include "wormhole/topo/generators.h"
#include "wormhole/workload/driver.h"
#include "wormhole/workload/release_batches.h"
#include "wormhole/workload/simai_workload.h"
#include "file_fixtures.h"

using namespace wh;
namespace fs = std::filesystem;

namespace {

fs::path test_dir() { return test::test_dir("wh_driver_tests"); }
using test::input_error;
using test::write_file;



/// SimAI.conf's network settings (DCQCN, 9000-B packets, 32 MB buffers), with ECN maps for 400 G.
SimConfig simai_config() {
  const std::string text =
      "ENABLE_QCN 1\nUSE_DYNAMIC_PFC_THRESHOLD 1\nPACKET_PAYLOAD_SIZE 9000\nSIMULATOR_STOP_TIME 100\n"
      "CC_MODE 1\nALPHA_RESUME_INTERVAL 1\nRATE_DECREASE_INTERVAL 4\nCLAMP_TARGET_RATE 0\nRP_TIMER 900\n"
      "EWMA_GAIN 0.00390625\nFAST_RECOVERY_TIMES 1\nRATE_AI 50Mb/s\nRATE_HAI 100Mb/s\nMIN_RATE 100Mb/s\n"
      "DCTCP_RATE_AI 1000Mb/s\nL2_CHUNK_SIZE 4000\nL2_ACK_INTERVAL 1\nHAS_WIN 1\nGLOBAL_T 0\nVAR_WIN 1\n"
      "FAST_REACT 1\nU_TARGET 0.95\nMI_THRESH 0\nINT_MULTI 1\nMULTI_RATE 0\nRATE_BOUND 1\nACK_HIGH_PRIO 0\n"
      "KMAX_MAP 2 100000000000 1600 400000000000 3200\nKMIN_MAP 2 100000000000 400 400000000000 800\n"
      "PMAX_MAP 2 100000000000 0.2 400000000000 0.2\nBUFFER_SIZE 32\n";
  return read_hpcc_config(write_file(test_dir() / "SimAI.conf", text));
}

/// 16 GPUs on 2 servers, Spectrum-X style (8 leaves, 2 spines), NVLink 2880 G, NICs 400 G.
GeneratedFabric fabric16() {
  SpectrumXParams p;
  p.gpus = 16;
  p.spines = 2;
  return generate_spectrum_x(p);
}

/// A HYBRID_TRANSFORMER_FWD_IN_BCKWD workload with `rows` (each 12 fields).
Workload workload(const std::string& header, const std::vector<std::string>& rows) {
  std::string text = header + "\n" + std::to_string(rows.size()) + "\n";
  for (const std::string& r : rows) text += r + "\n";
  return read_simai_workload(write_file(test_dir() / "workload.txt", text));
}

const char* kTp8 = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 16";

struct DriverRun {
  std::unique_ptr<Network> net;
  WorkloadReport report;
  bool complete = false;
};

DriverRun run(const Workload& w, const GeneratedFabric& f, DriverOptions o = {}) {
  DriverRun r;
  const SimConfig cfg = simai_config();
  std::string warning;
  r.net = std::make_unique<Network>(cfg, f.topo, make_cc(cfg, &warning));
  const GroupLayout layout = make_layout(w.header, f.gpus, f.gpus_per_server);
  WorkloadDriver d(*r.net, w, layout, o);
  r.complete = d.run(cfg.stop_time());
  r.report = d.report();
  return r;
}

/// Two iterations of a compute-only workload (every collective NONE or size 0) on fabric16().
/// Rows (fwd, ig, wg compute; update): a = (1000, 2000, 3000; 100), b = (10, 20, 30; 5).
DriverRun compute_only_run() {
  const Workload w = workload(kTp8, {"a -1 1000 NONE 0 2000 ALLREDUCE 0 3000 NONE 0 100",
                                     "b -1 10 NONE 20971520 20 NONE 0 30 REDUCESCATTER 0 5"});
  DriverOptions o;
  o.iterations = 2;
  return run(w, fabric16(), o);
}

/// Six rows r0 .. r5 with the same 11 fields after the name (`fields`, starting with a space), TP 8.
Workload six_rows(const std::string& fields) {
  std::vector<std::string> rows;
  for (int i = 0; i < 6; ++i) rows.push_back("r" + std::to_string(i) + fields);
  return workload(kTp8, rows);
}

/// A driver of `w` over fabric16() with simai_config(), kept (unlike run()'s) so that a test can ask it
/// after its run.
struct KeptDriver {
  Workload w;
  GeneratedFabric f = fabric16();
  SimConfig cfg = simai_config();
  std::unique_ptr<Network> net;
  std::unique_ptr<WorkloadDriver> driver;
  KeptDriver(Workload workload, uint32_t iterations) : w(std::move(workload)) {
    std::string warning;
    net = std::make_unique<Network>(cfg, f.topo, make_cc(cfg, &warning));
    DriverOptions o;
    o.iterations = iterations;
    driver = std::make_unique<WorkloadDriver>(*net, w, make_layout(w.header, f.gpus, f.gpus_per_server), o);
  }
};

}  // namespace

// Compute only: the iteration is the sum of the program's delays (compute_only_run's rows).
// Forward: a.fwd + a.upd + b.fwd + b.upd = 1000 + 100 + 10 + 5 = 1115 ns.
// Backward from b: b.ig + b.upd + b.wg = 55; a.ig + a.upd + a.wg = 5100 -> program ends at 6270 ns;
// row a's wg (no communication) completes at issue and its update ends at 6370 ns.
TEST(WorkloadDriver, ComputeOnlyIterationTimeIsTheSumOfDelays) {
  const DriverRun r = compute_only_run();
  ASSERT_TRUE(r.complete) << r.report.incomplete;
  ASSERT_EQ(r.report.iterations.size(), 2u);
  EXPECT_EQ(r.report.iterations[0].end, 6370 * kNs);
  // Iteration 1's forward of row a waits for row a's wg of iteration 0 (6370 ns), then runs the same
  // 6270-ns program and row a's 100-ns wg update again: it ends at 12,740 ns.
  EXPECT_EQ(r.report.iterations[1].end, 12740 * kNs);
  EXPECT_EQ(r.report.end_to_end.total_compute, 2 * 6060 * kNs);
  EXPECT_EQ(r.report.end_to_end.total_exposed, 0);
  EXPECT_TRUE(r.report.collectives.empty());
  EXPECT_TRUE(r.net->flow_count() == 0);
}

// The same compute-only workload runs in the programs' own time: a GPU's compute, update delays and
// collectives without flows take no event each; only the end of each GPU's program meets the client's
// clock (one event per GPU, at its last wg update: 12,740 ns), with the same times as above.
TEST(WorkloadDriver, StepsWithoutFlowsTakeNoEventEach) {
  const DriverRun r = compute_only_run();
  ASSERT_TRUE(r.complete) << r.report.incomplete;
  EXPECT_EQ(r.net->kernel().events_executed(), 16u);
  EXPECT_EQ(r.report.iterations[1].end, 12740 * kNs);
  for (const GpuRecord& g : r.report.per_gpu) EXPECT_EQ(g.finish, 12740 * kNs);
}

// The memory estimate's GPU programs: a GPU keeps 12 B per row whose wg collective has flows (its
// iteration and time), so 784 such rows (GPT-175B's count) on 131,072 GPUs need 131,072 x 784 x 12 =
// 1,233,125,376 B, plus less than 1 KiB a GPU (its program counter and report record) and 1 KiB a row (its
// steps and report record): that state was not in the estimate, which refuses a run that cannot fit. A wg
// without flows keeps nothing per row (GPT-7B's 1,058 rows have 3 wg collectives).
TEST(WorkloadDriver, ProgramBytesCountTwelveBytesAGpuAndRowWithAWgCollective) {
  const Workload w = workload(
      "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 131072",
      std::vector<std::string>(784, "l -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 1048576 1"));
  const uint64_t b = driver_program_bytes(w, make_layout(w.header, 131072, 8), DriverOptions{});
  EXPECT_GE(b, 1233125376u);
  EXPECT_LT(b, 1233125376u + 131072u * 1024 + 784u * 1024);
  const Workload none = workload(
      "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 131072",
      std::vector<std::string>(784, "l -1 1 NONE 0 1 NONE 0 1 NONE 0 1"));
  EXPECT_LT(driver_program_bytes(none, make_layout(none.header, 131072, 8), DriverOptions{}), 131072u * 1024 + 784u * 1024);
}

// TP-8 AllReduce of 16 MiB on 16 GPUs (two TP groups, one per server): 2 groups × 8 rings × 14 steps ×
// 8 ranks = 1792 flows of 16 MiB / 8 / 8 = 262,144 B, all over NVLink (GPU -> NVSwitch -> GPU).
// Each step-s flow (s >= 1) starts exactly send_latency after its parent finished.
TEST(WorkloadDriver, Tp8AllReduceFlowsFollowTheirParents) {
  const Workload w = workload(kTp8, {"ar -1 1 ALLREDUCE 16777216 1 NONE 0 1 NONE 0 1"});
  DriverOptions o;
  o.send_latency = 2 * kUs;
  const DriverRun r = run(w, fabric16(), o);
  ASSERT_TRUE(r.complete) << r.report.incomplete;
  ASSERT_EQ(r.net->flow_count(), 1792u);
  ASSERT_EQ(r.report.collectives.size(), 2u);
  std::multiset<Time> finishes;
  for (uint32_t id = 0; id < r.net->flow_count(); ++id) {
    const FlowRecord f = r.net->record(id);
    ASSERT_TRUE(f.finished());
    EXPECT_EQ(f.size_bytes, 262144u);
    EXPECT_EQ(f.src / 8, f.dst / 8);  // inside one server
    EXPECT_EQ(r.net->routing().pair(f.src, f.dst).hops, 2u) << f.src << "->" << f.dst;  // via the NVSwitch
    finishes.insert(f.finish);
  }
  // Issue at 1 ns (fwd compute): the 2 × 8 × 8 = 128 step-0 flows start at 1 ns + 2 µs; every other
  // flow starts 2 µs after some flow finished.
  size_t step0 = 0;
  for (uint32_t id = 0; id < r.net->flow_count(); ++id) {
    const FlowRecord f = r.net->record(id);
    if (f.start == 1 * kNs + 2 * kUs) {
      ++step0;
      continue;
    }
    EXPECT_TRUE(finishes.count(f.start - 2 * kUs)) << "flow " << id << " starts at " << f.start;
  }
  EXPECT_EQ(step0, 128u);
  // Flows of one collective leaving at one instant start in the collective's own order (ring, then
  // member), whichever member issued first: GPUs 0-7 all issue at 1 ns (GPU 0's event first), and the
  // 64 step-0 flows get ids 0-63 as ring id / 8, sender id % 8; group 1's follow as ids 64-127. (When
  // each issue released its own flows at once, GPU 0's eight rings came first: sender id / 8, ring id % 8.)
  ASSERT_EQ(r.report.flows.size(), 1792u);
  for (uint32_t id = 0; id < 128; ++id) {
    const FlowTag& t = r.report.flows[id];
    ASSERT_EQ(t.flow, id);
    EXPECT_EQ(t.step, 0u) << id;
    EXPECT_EQ(t.ring, id % 64 / 8) << id;
    EXPECT_EQ(t.src_gpu, id / 64 * 8 + id % 8) << id;
    EXPECT_EQ(r.net->record(id).start, 1 * kNs + 2 * kUs);
  }
  for (const CollectiveRecord& c : r.report.collectives) {
    EXPECT_EQ(c.op, "AllReduce");
    EXPECT_EQ(c.group, "TP");
    EXPECT_EQ(c.ranks, 8u);
    EXPECT_EQ(c.flows, 896u);
    EXPECT_EQ(c.flow_bytes, 896u * 262144u);
    EXPECT_EQ(c.start, 1 * kNs);
    EXPECT_GT(c.end, c.start + 14 * 2 * kUs);  // 14 dependent steps, each at least the send latency
  }
  // After the last flow: update 1, ig compute 1, update 1, wg compute 1, wg update 1 = 5 ns; then the
  // run stops (no RTO timer left running).
  EXPECT_EQ(r.report.iterations[0].end, *finishes.rbegin() + 5 * kNs);
  EXPECT_EQ(r.net->now(), r.report.iterations[0].end);
  // GPU 0's fwd communication is blocking: fully exposed, in the TP column.
  EXPECT_EQ(r.report.end_to_end.exposed_tp, r.report.layers[0].comm[0]);
  EXPECT_GT(r.report.layers[0].comm[0], 0);
}

TEST(ReleaseBatches, FlowsOfOneInstantLeaveTogetherInPlanOrderOldestInstantFirst) {
  ReleaseBatches b;
  EXPECT_TRUE(b.empty());
  EXPECT_TRUE(b.add(10, 7));   // opens the instant 10
  EXPECT_FALSE(b.add(10, 3));  // joins it
  EXPECT_TRUE(b.add(25, 9));   // a later instant: its own event
  EXPECT_FALSE(b.add(25, 1));
  EXPECT_FALSE(b.add(25, 4));
  EXPECT_EQ(b.take(), (std::vector<uint32_t>{3, 7}));
  EXPECT_EQ(b.take(), (std::vector<uint32_t>{1, 4, 9}));
  EXPECT_TRUE(b.empty());
  EXPECT_TRUE(b.add(25, 2));  // an instant already taken is opened again
}

TEST(DueReleases, SendersOfOneInstantStartByFirstGpuNotByReleaseOrder) {
  DueReleases d;
  const std::vector<uint32_t> first_gpu = {12, 4, 0, 4, 8};  // per sender
  const auto key = [&](uint32_t s) { return first_gpu.at(s); };
  EXPECT_TRUE(d.add(100, 0));   // opens the instant 100: one event
  EXPECT_FALSE(d.add(100, 3));  // released in this order, by completions of the same ps
  EXPECT_FALSE(d.add(100, 1));
  EXPECT_FALSE(d.add(100, 2));
  EXPECT_TRUE(d.add(200, 4));
  EXPECT_THROW(d.add(150, 0), std::logic_error);  // before the latest instant
  EXPECT_EQ(d.take(key), (std::vector<uint32_t>{2, 1, 3, 0}));  // GPUs 0, 4, 4 (sender 1 before 3), 12
  EXPECT_EQ(d.take(key), (std::vector<uint32_t>{4}));
  EXPECT_TRUE(d.empty());
  EXPECT_THROW(d.take(key), std::logic_error);
  EXPECT_TRUE(d.add(200, 1));  // an instant already taken (a send latency of 0) is opened again
}

// The wg collective does not block: its DP AllReduce (GPU i <-> i+8 across the two servers, over
// the NICs) overlaps with the remaining backward rows; exposed is only the wait at the end.
TEST(WorkloadDriver, WgCollectiveOverlapsWithBackward) {
  const Workload w = workload(kTp8, {"a -1 1 NONE 0 1 NONE 0 1 NONE 0 1",
                                     "b -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 1048576 1"});
  const DriverRun r = run(w, fabric16());
  ASSERT_TRUE(r.complete) << r.report.incomplete;
  ASSERT_EQ(r.report.collectives.size(), 8u);  // one per DP group {i, i+8}
  for (const CollectiveRecord& c : r.report.collectives) {
    EXPECT_EQ(c.group, "DP");
    EXPECT_EQ(c.ranks, 2u);
    EXPECT_EQ(c.flows, 4u);  // 1 ring (one rank per server) × 2 steps × 2 ranks, 512 KiB each
  }
  for (uint32_t id = 0; id < r.net->flow_count(); ++id) {
    const FlowRecord f = r.net->record(id);
    EXPECT_EQ(f.size_bytes, 524288u);
    EXPECT_EQ(f.src % 8, f.dst % 8);  // same rail
  }
  const LayerRecord& b = r.report.layers[1];
  EXPECT_GT(b.comm[2], 0);
  // GPU 0: forward ends at 4 ns; b: ig 1, update 1, wg 1 -> b's wg issued at 7 ns; a: ig 1, update 1,
  // wg 1 -> the program ends at 10 ns and waits. b's AllReduce completes at 7 ns + comm (its update
  // delay after that is not communication): exposed = comm + 7 - 10 = comm - 3 ns.
  EXPECT_EQ(b.exposed[2], b.comm[2] - 3 * kNs);
  EXPECT_EQ(r.report.layers[0].exposed[2], 0);
  EXPECT_EQ(r.report.end_to_end.exposed_dp, b.exposed[2]);
}

// A member that issues after its parent flow finished: server 1's NVLink is 100x slower, so its GPUs
// reach the wg DP AllReduce (2 ranks {i, i+8}: 1 ring x 2 steps, 512 KiB flows) long after GPU i's
// step-0 flow to them has arrived. At GPU i+8's issue both its flows are due at once — its step-0 flow
// (no parent) and its step-1 flow (parent finished earlier) — so they start at the same instant,
// send_latency after the issue, and the collective completes.
TEST(WorkloadDriver, FlowWhoseParentFinishedBeforeItsSenderIssuedIsReleasedAtTheIssue) {
  GeneratedFabric f = fabric16();
  for (TopoLink& l : f.topo.links)
    if ((f.topo.nvswitch(l.a) && l.b >= 8 && l.b < 16) || (f.topo.nvswitch(l.b) && l.a >= 8 && l.a < 16))
      l.rate_bps /= 100;
  const Workload w = workload(kTp8, {"a -1 1 ALLREDUCE 16777216 1 NONE 0 1 ALLREDUCE 1048576 1"});
  DriverOptions o;
  o.send_latency = 2 * kUs;
  const DriverRun r = run(w, f, o);
  ASSERT_TRUE(r.complete) << r.report.incomplete;
  for (uint32_t g = 0; g < 8; ++g) {
    std::vector<FlowRecord> out, back;  // g -> g+8 and g+8 -> g, in flow order
    for (uint32_t id = 0; id < r.net->flow_count(); ++id) {
      const FlowRecord fr = r.net->record(id);
      if (fr.src == g && fr.dst == g + 8) out.push_back(fr);
      if (fr.src == g + 8 && fr.dst == g) back.push_back(fr);
    }
    ASSERT_EQ(out.size(), 2u);
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(back[0].start, back[1].start) << "GPU " << g + 8;
    EXPECT_LT(out[0].finish + 2 * kUs, back[1].start) << "GPU " << g + 8;  // its parent ended before its issue
    EXPECT_TRUE(back[1].finished());
  }
}

// A collective whose group cannot reach itself (two servers without a fabric) never completes:
// the run ends when no events are left and says which collective is pending.
/// fabric16() without its NIC links: the servers are islands joined only by NVLink inside.
static GeneratedFabric fabric16_without_nics() {
  GeneratedFabric f = fabric16();
  std::vector<TopoLink> kept;
  for (const TopoLink& l : f.topo.links)
    if (f.topo.nvswitch(l.a) || f.topo.nvswitch(l.b)) kept.push_back(l);
  f.topo.links = kept;
  return f;
}

TEST(WorkloadDriver, WatchdogReportsPendingCollectives) {
  const GeneratedFabric f = fabric16_without_nics();
  const Workload w = workload(kTp8, {"a -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 1048576 1"});
  const DriverRun r = run(w, f);
  EXPECT_FALSE(r.complete);
  EXPECT_NE(r.report.incomplete.find("no runnable events"), std::string::npos) << r.report.incomplete;
  EXPECT_TRUE(r.report.stuck);  // it could never finish: an error, where a time limit is a warning
  EXPECT_NE(r.report.incomplete.find("8 collectives pending"), std::string::npos) << r.report.incomplete;
  EXPECT_NE(r.report.incomplete.find("wg AllReduce on DP group of GPU 0"), std::string::npos) << r.report.incomplete;
  EXPECT_NE(r.report.incomplete.find("flow GPU 0 -> GPU 8, 524288 B, ring 0 step 0: released, not finished (waiting for "
                                     "its send latency, in flight, or without a path)"),
            std::string::npos)
      << r.report.incomplete;
  // 5 of the 8 are described; the others are counted (they went unmentioned).
  EXPECT_NE(r.report.incomplete.find("... and 3 more collectives"), std::string::npos) << r.report.incomplete;
}

// Regression: a run that runs dry reports when its programs' work ended, a wg update delay included, though
// that delay ran in the program's own time without an event (it named the last event's time, about 2012 us,
// before the iteration's reported end). NIC links dropped as above; by hand: fwd l0 1 us, fwd l1 1 us + 1 ms
// update (1002 us), ig l1 1 us + 1 ms update (2003 us), wg l1 1 us (2004 us: its update ends at 3004 us),
// ig l0 and wg l0 1 us each: the DP AllReduce issued at 2006 us never completes between the servers.
TEST(WorkloadDriver, RunDryAfterAnUpdateDelayInTheProgramsTimeNamesItsEnd) {
  const GeneratedFabric f = fabric16_without_nics();
  const Workload w = workload(kTp8, {"l0 -1 1000 NONE 0 1000 NONE 0 1000 ALLREDUCE 1048576 0",
                                     "l1 -1 1000 NONE 0 1000 NONE 0 1000 NONE 0 1000000"});
  const DriverRun r = run(w, f);
  EXPECT_FALSE(r.complete);
  EXPECT_NE(r.report.incomplete.find("no runnable events at 0.003004 s"), std::string::npos) << r.report.incomplete;
  ASSERT_EQ(r.report.iterations.size(), 1u);
  EXPECT_EQ(r.report.iterations[0].end, 3004 * kUs);
}

// Regression: with update time 0 a flow completion runs the next steps of a GPU's program at once,
// which creates new collectives while the completion handler is still working on the old one (it
// used to hold a reference into the reallocated instance vector). 6 rows of 1 MiB fwd AllReduce,
// ig AllGather and wg ReduceScatter, 2 iterations: 2 x 6 x (2 TP + 2 TP + 8 DP groups) = 144 collectives.
TEST(WorkloadDriver, UpdateZeroManyRowsTwoIterations) {
  std::vector<std::string> rows;
  for (int i = 0; i < 6; ++i)
    rows.push_back(std::string("r").append(std::to_string(i)).append(" -1 1 ALLREDUCE 1048576 1 ALLGATHER 1048576 1 REDUCESCATTER 1048576 0"));
  const Workload w = workload(kTp8, rows);
  DriverOptions o;
  o.iterations = 2;
  const DriverRun r = run(w, fabric16(), o);
  ASSERT_TRUE(r.complete) << r.report.incomplete;
  EXPECT_EQ(r.report.collectives.size(), 144u);
  size_t flows = 0;
  for (const CollectiveRecord& c : r.report.collectives) flows += c.flows;
  EXPECT_EQ(flows, r.net->flow_count());
  for (uint32_t id = 0; id < r.net->flow_count(); ++id) EXPECT_TRUE(r.net->record(id).finished());
  EXPECT_EQ(r.report.iterations.size(), 2u);
  EXPECT_GT(r.report.iterations[1].end, r.report.iterations[0].end);
}

// A finished collective gives its slot to the next one, so the driver holds the collectives in flight,
// not the run's history. Six rows with a forward AllReduce only, TP 8 on 16 GPUs (two TP groups), two
// iterations: 24 collectives, each blocking. A GPU issues row r + 2 only once row r + 1 completed there,
// which needs every member to have issued r + 1 (its ring passes through all of them), so row r is over
// at every member: a group has at most two collectives in flight, the run at most 4 (both groups issue
// their first at time 0: at least 2). Without reuse: 24 slots.
TEST(WorkloadDriver, FinishedCollectivesGiveTheirSlotsBack) {
  KeptDriver k(six_rows(" -1 1 ALLREDUCE 1048576 1 NONE 0 1 NONE 0 0"), 2);
  WorkloadDriver& d = *k.driver;
  ASSERT_TRUE(d.run(k.cfg.stop_time())) << d.report().incomplete;
  EXPECT_EQ(d.report().collectives.size(), 24u);
  EXPECT_GE(d.instance_slots(), 2u);
  EXPECT_LE(d.instance_slots(), 4u);
}

// The pending collectives of a stopped run are listed in the order they were made, whichever slots they
// took: six rows of three collectives (fwd and ig on the two TP groups, wg on the eight DP groups of
// two), stopped at 100 us, when slots of finished collectives have been taken again.
TEST(WorkloadDriver, PendingCollectivesAreListedInTheOrderTheyWereMade) {
  KeptDriver k(six_rows(" -1 1 ALLREDUCE 1048576 1 ALLGATHER 1048576 1 REDUCESCATTER 1048576 0"), 2);
  WorkloadDriver& d = *k.driver;
  ASSERT_FALSE(d.run(100 * kUs));
  const std::string& text = d.report().incomplete;
  // Each listed collective's (iteration, row, first GPU) in the text, in the text's order.
  std::vector<std::tuple<uint32_t, uint32_t, uint32_t>> listed;
  for (size_t at = text.find("\n  iteration "); at != std::string::npos; at = text.find("\n  iteration ", at + 1)) {
    unsigned iter = 0, row = 0, gpu = 0;
    ASSERT_EQ(std::sscanf(text.c_str() + at, "\n  iteration %u row %u", &iter, &row), 2) << text;
    const size_t g = text.find("group of GPU ", at);
    ASSERT_NE(g, std::string::npos) << text;
    ASSERT_EQ(std::sscanf(text.c_str() + g, "group of GPU %u", &gpu), 1) << text;
    listed.emplace_back(iter, row, gpu);
  }
  ASSERT_GE(listed.size(), 2u) << text;
  // The report's records are in the order made: the listed ones appear there in the same order.
  std::vector<std::tuple<uint32_t, uint32_t, uint32_t>> made;
  for (const CollectiveRecord& c : d.report().collectives)
    if (std::find(listed.begin(), listed.end(), std::make_tuple(c.iteration, c.layer, c.group_first)) != listed.end())
      made.emplace_back(c.iteration, c.layer, c.group_first);
  EXPECT_EQ(listed, made) << text;
  EXPECT_LT(d.instance_slots(), d.report().collectives.size());  // slots were taken again
}

// MICRO (AICB's all_reduce.txt): only row 0's wg collective (4096 B) runs, once per iteration. The
// header's pairs are ignored, so TP = 1 and the DP group is all 16 GPUs, 8 per server -> 8 rings;
// chunk 4096 / 16 / 8 = 32 B; 2(16-1) = 30 steps: 8 x 30 x 16 = 3840 flows of 32 B per iteration.
TEST(WorkloadDriver, MicroAllReduceHandCount) {
  const Workload w = read_simai_workload(std::string(WH_TEST_DATA) + "/simai/aicb/workload/simAI/micro_test/all_reduce.txt");
  ASSERT_TRUE(w.header.micro);
  DriverOptions o;
  o.iterations = 2;
  const DriverRun r = run(w, fabric16(), o);
  ASSERT_TRUE(r.complete) << r.report.incomplete;
  ASSERT_EQ(r.report.collectives.size(), 2u);
  EXPECT_EQ(r.report.collectives[0].ranks, 16u);
  EXPECT_EQ(r.report.collectives[0].flows, 3840u);
  EXPECT_EQ(r.net->flow_count(), 7680u);
  for (uint32_t id = 0; id < r.net->flow_count(); ++id) EXPECT_EQ(r.net->record(id).size_bytes, 32u);
  // Iteration 1 is issued when iteration 0's collective is done at the GPU.
  EXPECT_GE(r.report.collectives[1].start, r.report.collectives[0].start);
  EXPECT_EQ(r.report.layers.size(), 2u);  // one reported row per iteration
  EXPECT_EQ(r.report.end_to_end.exposed_dp, r.report.layers[0].exposed[2] + r.report.layers[1].exposed[2]);
}

// MICRO with an update time: an iteration is row 0's wg collective and its update delay, so two
// iterations of one collective take equal times and the last ends where the GPUs finish (the first
// iteration used to end when its communication did, and the second to carry the first's delay).
TEST(WorkloadDriver, MicroIterationIncludesItsUpdateDelay) {
  Workload w = read_simai_workload(std::string(WH_TEST_DATA) + "/simai/aicb/workload/simAI/micro_test/all_reduce.txt");
  ASSERT_TRUE(w.header.micro);
  w.layers[0].update_ns = 100000;  // 100 us
  DriverOptions o;
  o.iterations = 2;
  const DriverRun r = run(w, fabric16(), o);
  ASSERT_TRUE(r.complete) << r.report.incomplete;
  ASSERT_EQ(r.report.iterations.size(), 2u);
  const IterationRecord& a = r.report.iterations[0];
  const IterationRecord& b = r.report.iterations[1];
  const CollectiveRecord& c0 = r.report.collectives[0];
  EXPECT_EQ(a.end, c0.end + 100 * kUs);  // the last GPU saw it complete, then waited its update delay
  EXPECT_EQ(b.start, a.end);
  EXPECT_EQ(b.end - b.start, a.end - a.start);  // the same collective on a quiet fabric, from the same state
  Time last_finish = 0;
  for (const GpuRecord& g : r.report.per_gpu) last_finish = std::max(last_finish, g.finish);
  EXPECT_EQ(b.end, last_finish);
}

// A run stopped by the time limit inside an update delay: the iteration does not end past the limit.
TEST(WorkloadDriver, MicroUpdateDelayPastTheTimeLimitIsNotRunAhead) {
  Workload w = read_simai_workload(std::string(WH_TEST_DATA) + "/simai/aicb/workload/simAI/micro_test/all_reduce.txt");
  w.layers[0].update_ns = 1000000;  // 1 ms
  DriverOptions o;
  o.iterations = 2;
  const SimConfig cfg = simai_config();
  const GeneratedFabric f = fabric16();
  Network net(cfg, f.topo, make_cc(cfg, nullptr));
  WorkloadDriver d(net, w, make_layout(w.header, f.gpus, f.gpus_per_server), o);
  EXPECT_FALSE(d.run(700 * kUs));  // the collective ends at ~199 us; its update delay runs to ~1.2 ms
  ASSERT_FALSE(d.report().iterations.empty());
  for (const IterationRecord& it : d.report().iterations) EXPECT_LE(it.end, 700 * kUs);
  EXPECT_FALSE(d.report().iterations[0].complete);
  // Iteration 1 has not begun (every GPU is in iteration 0's update delay), and a delay not over by the
  // limit is not counted (it was, whole: 1 ms of a 0.7-ms run).
  EXPECT_EQ(d.report().iterations.size(), 1u);
  for (const GpuRecord& g : d.report().per_gpu) EXPECT_EQ(g.update, 0);
}

// Every GPU's finish is its compute + exposed communication + update delays waited (docs/workloads.md §6),
// with wg update delays waited at the next iteration's forward and at the end: a wg AllReduce with flows
// (DP 16, 100-us update) and a row whose wg has none (50-us update in the background). The waits for the
// wg delays were counted nowhere (finish exceeded the sum by the delays waited).
TEST(WorkloadDriver, EveryGpusFinishIsComputeExposedAndUpdateDelays) {
  const Workload w = workload("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 16",
                              {"ar -1 1000 NONE 0 1000 NONE 0 3000 ALLREDUCE 1048576 100000",
                               "b -1 2000 NONE 0 1000 NONE 0 1000 NONE 0 50000"});
  DriverOptions o;
  o.iterations = 2;
  const DriverRun r = run(w, fabric16(), o);
  ASSERT_TRUE(r.complete) << r.report.incomplete;
  for (uint32_t g = 0; g < 16; ++g) {
    const GpuRecord& G = r.report.per_gpu[g];
    EXPECT_EQ(G.finish, G.compute + G.exposed() + G.bubble + G.update) << "GPU " << g;
    EXPECT_GE(G.update, 100 * kUs);  // at least the last wg's update delay, waited at the end
  }
}

// A run stopped by max time with a collective in flight: the iteration is marked incomplete.
TEST(WorkloadDriver, StoppedRunMarksIterationIncomplete) {
  const Workload w = workload(kTp8, {"ar -1 1 ALLREDUCE 16777216 1 NONE 0 1 NONE 0 1"});
  const SimConfig cfg = simai_config();
  std::string warning;
  Network net(cfg, fabric16().topo, make_cc(cfg, &warning));
  const GeneratedFabric f = fabric16();
  WorkloadDriver d(net, w, make_layout(w.header, f.gpus, f.gpus_per_server), DriverOptions{});
  EXPECT_FALSE(d.run(20 * kUs));  // the AllReduce takes ~110 µs
  ASSERT_EQ(d.report().iterations.size(), 1u);
  EXPECT_FALSE(d.report().iterations[0].complete);
  EXPECT_NE(d.report().incomplete.find("stopped by the time limit at 0.000020 s while 2 collectives pending"), std::string::npos)
      << d.report().incomplete;
  EXPECT_FALSE(d.report().stuck);
}

// Stopped inside a compute phase: only the compute that finished counts (it was counted when the phase
// began: 105 us of compute in a run stopped at 20 us).
TEST(WorkloadDriver, StoppedRunCountsOnlyTheComputeThatFinished) {
  // Row a: 5 us of forward compute, nothing to send; row b: 100 us, in progress at the stop.
  const Workload w = workload(kTp8, {"a -1 5000 NONE 0 1 NONE 0 1 NONE 0 1", "b -1 100000 NONE 0 1 NONE 0 1 NONE 0 1"});
  const SimConfig cfg = simai_config();
  const GeneratedFabric f = fabric16();
  Network net(cfg, f.topo, make_cc(cfg, nullptr));
  WorkloadDriver d(net, w, make_layout(w.header, f.gpus, f.gpus_per_server), DriverOptions{});
  EXPECT_FALSE(d.run(20 * kUs));
  for (const GpuRecord& g : d.report().per_gpu) EXPECT_EQ(g.compute, 5 * kUs);
  EXPECT_EQ(d.report().end_to_end.total_compute, 5 * kUs);
}

// Three iterations asked for, stopped inside the first: iterations no GPU began are not reported (they
// were, as incomplete iterations of 0 µs starting where the run stopped).
TEST(WorkloadDriver, IterationsNoGpuBeganAreNotReported) {
  const Workload w = workload(kTp8, {"ar -1 1 ALLREDUCE 16777216 1 NONE 0 1 NONE 0 1"});
  const SimConfig cfg = simai_config();
  const GeneratedFabric f = fabric16();
  Network net(cfg, f.topo, make_cc(cfg, nullptr));
  DriverOptions o;
  o.iterations = 3;
  WorkloadDriver d(net, w, make_layout(w.header, f.gpus, f.gpus_per_server), o);
  EXPECT_FALSE(d.run(20 * kUs));
  ASSERT_EQ(d.report().iterations.size(), 1u);
  EXPECT_EQ(d.report().iterations[0].index, 0u);
  EXPECT_FALSE(d.report().iterations[0].complete);

  EXPECT_EQ(d.report().layers.size(), 1u);
  EXPECT_EQ(d.report().end_to_end.total_compute, d.report().per_gpu[0].compute);
  EXPECT_EQ(d.report().end_to_end.total_compute, 1 * kNs);
  // Run to the end, all three are there and complete.
  Network full(cfg, f.topo, make_cc(cfg, nullptr));
  WorkloadDriver e(full, w, make_layout(w.header, f.gpus, f.gpus_per_server), o);
  ASSERT_TRUE(e.run(cfg.stop_time()));
  ASSERT_EQ(e.report().iterations.size(), 3u);
  for (const IterationRecord& it : e.report().iterations) EXPECT_TRUE(it.complete);
}

// A time limit inside the first compute phase: nothing ran, yet the report names the limit, not the
// time of the last event (0 s), which read like a run that ended early.
TEST(WorkloadDriver, TimeLimitBeforeAnyEventIsNamed) {
  const Workload w = workload(kTp8, {"ar -1 556000 ALLREDUCE 16777216 1 NONE 0 1 NONE 0 1"});
  const SimConfig cfg = simai_config();
  Network net(cfg, fabric16().topo, make_cc(cfg, nullptr));
  const GeneratedFabric f = fabric16();
  WorkloadDriver d(net, w, make_layout(w.header, f.gpus, f.gpus_per_server), DriverOptions{});
  EXPECT_FALSE(d.run(500 * kUs));  // compute until 556 µs
  EXPECT_NE(d.report().incomplete.find("stopped by the time limit at 0.000500 s while 0 collectives pending"),
            std::string::npos)
      << d.report().incomplete;
}

// One TP AllReduce of 16 MiB over 8 GPUs on each of two servers: 2 collectives of 8 rings x 14 steps x
// 8 ranks = 896 flows each, of 262,144 B. Stopped partway, the share done is the bytes of the flows
// finished plus those acknowledged of the running ones, over the 1792 x 262,144 B of the run. (It
// was 0 until a whole collective ended once, then the finished flows' bytes alone.)
TEST(WorkloadDriver, ProgressCountsTheBytesFinishedAndAcknowledged) {
  const Workload w = workload(kTp8, {"ar -1 1 ALLREDUCE 16777216 1 NONE 0 1 NONE 0 1"});
  const GeneratedFabric f = fabric16();
  const GroupLayout layout = make_layout(w.header, f.gpus, f.gpus_per_server);
  const SimConfig cfg = simai_config();
  for (const Time stop : {Time(8 * kUs), Time(20 * kUs)}) {
    SCOPED_TRACE(stop);
    Network net(cfg, f.topo, make_cc(cfg, nullptr));
    WorkloadDriver d(net, w, layout, DriverOptions{});
    ASSERT_FALSE(d.run(stop));
    ASSERT_LT(net.flow_count(), 1792u);  // flows are made as they are released
    uint64_t done = 0, acked = 0, running = 0;
    for (uint32_t id = 0; id < net.flow_count(); ++id)
      if (net.flow_finished(id)) ++done;
      else if (net.flow_live(id)) acked += net.flow(id).snd_una, ++running;
    ASSERT_GT(running, 0u);
    ASSERT_GT(acked, 0u);
    if (stop == 8 * kUs) EXPECT_EQ(done, 0u);  // the first ring step's 128 flows run: acknowledged bytes only
    else EXPECT_GT(done, 0u);
    const Network::RunningBytes r = net.running_bytes();
    EXPECT_EQ(r.local_acked, acked);
    EXPECT_EQ(r.credited, 0u);  // packet mode: nothing credited
    EXPECT_EQ(r.stream, running * 262144);
    EXPECT_EQ(r.local_stream, r.stream);  // one process: every sender is local
    EXPECT_DOUBLE_EQ(d.progress(), double(done * 262144 + acked) / (1792.0 * 262144));
    EXPECT_GT(d.progress(), double(done * 262144) / (1792.0 * 262144));
  }
}

// count_workload_flows (the memory estimate's count) against a run, and the driver's share done.
// TP 8 on 16 GPUs: fwd a TP AllReduce of 1 MiB, 2 groups × 8 rings × 14 steps × 8 ranks = 1792 flows;
// wg a DP AllReduce of 1 MiB over {i, i + 8}: 8 groups × 1 ring × 2 steps × 2 ranks = 32 flows.
// Two alike rows, two iterations: 4 × 1824 = 7296 flows and 4 × (2 + 8) = 40 collectives, from plans
// of 1792 + 32 = 1824 flows (alike collectives share a plan). Bytes: the TP flows carry 1 MiB / 8 ranks
// / 8 rings = 16,384 B, the DP ones 1 MiB / 2 ranks = 524,288 B: 4 × (1792 × 16,384 + 32 × 524,288) =
// 184,549,376 B.
TEST(WorkloadDriver, FlowCountAheadMatchesTheRunAndProgressEndsAtOne) {
  const Workload w = workload(kTp8, {"a -1 1 ALLREDUCE 1048576 1 NONE 0 1 ALLREDUCE 1048576 1",
                                     "b -1 1 ALLREDUCE 1048576 1 NONE 0 1 ALLREDUCE 1048576 1"});
  const GeneratedFabric f = fabric16();
  const GroupLayout layout = make_layout(w.header, f.gpus, f.gpus_per_server);
  DriverOptions o;
  o.iterations = 2;
  const WorkloadFlowCount c = count_workload_flows(w, layout, o);
  EXPECT_EQ(c.plan_flows, 1824u);
  EXPECT_EQ(c.flows, 7296u);
  EXPECT_EQ(c.collectives, 40u);
  EXPECT_EQ(c.bytes, 184'549'376u);
  EXPECT_EQ(collective_flow_bytes(Collective::AllReduce, 1048576, 8, 8), 16384u);
  EXPECT_EQ(collective_flow_bytes(Collective::AllToAll, 3, 4, 1), 0u);  // no flows
  EXPECT_EQ(collective_flow_bytes(Collective::AllToAll, 3, 4, 1, ZeroChunk::ClampToOneByte), 1u);
  EXPECT_EQ(collective_flow_count(Collective::AllReduce, 1048576, 8, 8),
            plan_collective(Collective::AllReduce, 1048576, {0, 1, 2, 3, 4, 5, 6, 7}, 8).size());
  // AllToAll of 12 B over 4 ranks: 3-B chunks, 4·3 flows; of 3 B: 0-B chunks, none (SimAI) or 1-B flows.
  EXPECT_EQ(collective_flow_count(Collective::AllToAll, 12, 4, 1), 12u);
  EXPECT_EQ(collective_flow_count(Collective::AllToAll, 3, 4, 1), 0u);
  EXPECT_EQ(collective_flow_count(Collective::AllToAll, 3, 4, 1, ZeroChunk::ClampToOneByte), 12u);
  EXPECT_EQ(collective_flow_count(Collective::ReduceScatter, 64, 8, 8, ZeroChunk::NoFlows), 8u * 7 * 8);  // 1-B chunks
  EXPECT_EQ(collective_flow_count(Collective::ReduceScatter, 63, 8, 8, ZeroChunk::NoFlows), 0u);

  const SimConfig cfg = simai_config();
  Network net(cfg, f.topo, make_cc(cfg, nullptr));
  WorkloadDriver d(net, w, layout, o);
  EXPECT_EQ(d.progress(), 0.0);
  ASSERT_TRUE(d.run(cfg.stop_time())) << d.report().incomplete;
  EXPECT_EQ(net.flow_count(), c.flows);
  EXPECT_EQ(d.report().collectives.size(), c.collectives);
  EXPECT_EQ(d.progress(), 1.0);
}

// A TP group of 4 on an 8-GPU server: its island is the server's NVSwitch with all 8 GPUs; its
// sub-island the 4 switch ports facing its GPUs and their 4 ports. Traffic using at most b bytes of the
// switch's shared buffer never pauses while b plus one full packet of slack stays below every port's
// PFC threshold at that use (SwitchModel::pfc_threshold_at): the largest such b is found here from the
// switch model's formula, and the margin check must agree on both sides of it.
TEST(Island, SubIslandOfASharedNvswitchAndItsPfcMargin) {
  const SimConfig cfg = simai_config();
  const GeneratedFabric f = fabric16();
  Network net(cfg, f.topo, make_cc(cfg, nullptr));
  Island whole;
  std::string why;
  ASSERT_TRUE(net.find_island({{0, 1}, {1, 2}, {2, 3}, {3, 0}}, whole, why)) << why;
  ASSERT_EQ(whole.switches.size(), 1u);
  EXPECT_EQ(whole.hosts.size(), 8u);
  EXPECT_FALSE(whole.shared);
  const Island sub = net.sub_island(whole, {0, 1, 2, 3});
  EXPECT_TRUE(sub.shared);
  EXPECT_EQ(sub.switches, whole.switches);
  EXPECT_EQ(sub.hosts, (std::vector<uint32_t>{0, 1, 2, 3}));
  ASSERT_EQ(sub.ports.size(), 8u);
  const auto& ports = net.fabric().ports;
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(ports[sub.ports[i]].node, whole.switches[0]);          // the switch's ports first
    EXPECT_LT(ports[ports[sub.ports[i]].peer].node, 4u);             // facing GPUs 0-3
    EXPECT_EQ(ports[sub.ports[4 + i]].node, i);                      // then GPU i's own port
  }
  EXPECT_TRUE(net.island_quiet(sub));
  const uint32_t sw = whole.switches[0];
  const Node& n = net.fabric().nodes[sw];
  const uint64_t slack = std::max<uint64_t>(9048, kResumeOffset);  // SimAI's 9000-B payload + 48 B of headers
  auto fits = [&](uint64_t b) {
    for (uint32_t q = n.first_port; q < n.first_port + n.num_ports; ++q)
      if (b + slack >= SwitchModel::pfc_threshold_at(n, ports[q], b + slack)) return false;
    return true;
  };
  // Past the free buffer the reference's 32-bit threshold wraps around; the search stays below it.
  uint64_t lo = 0, hi = n.buffer_bytes - n.total_hdrm - n.total_rsrv - slack;  // fits(lo), !fits(hi)
  ASSERT_TRUE(fits(lo));
  ASSERT_FALSE(fits(hi));
  while (hi - lo > 1) (fits((lo + hi) / 2) ? lo : hi) = (lo + hi) / 2;
  EXPECT_GT(lo, 1'000'000u);  // MBs of room on a 32-MB switch
  EXPECT_TRUE(net.below_pfc_thresholds(sw, 0));
  EXPECT_TRUE(net.below_pfc_thresholds(sw, lo));
  EXPECT_FALSE(net.below_pfc_thresholds(sw, lo + 1));
  EXPECT_FALSE(net.below_pfc_thresholds(sw, n.buffer_bytes));

  // A 1-MB flow GPU 0 -> 1 across the switch: packets of 9,048 B pass the 4,096-B reserve of their
  // ingress port, so the shared buffer is used, and its peak is read once.
  EXPECT_EQ(net.take_shared_peak(sw), 0u);
  FlowSpec spec;
  spec.src = 0, spec.dst = 1, spec.size_bytes = 1'000'000, spec.pg = 3;
  net.inject_flow(spec);
  net.run(2 * kSec + 100 * kUs);
  const uint64_t peak = net.take_shared_peak(sw);
  EXPECT_GE(peak, 9048u - 4096u);
  EXPECT_LE(peak, 1'000'000u);
  EXPECT_EQ(net.take_shared_peak(sw), n.shared_used);  // restarted from the use now
}

// A flow whose data leaves through one group's sub-island and whose ACKs leave through the other's
// (a DP ring step GPU 0 -> 4 beside two TP groups' recordings): both recordings are disturbed, so
// neither is kept. (Once the memo stopped at the first claimed port: the second group's recording was
// kept as if nothing had come.)
// On a rail-optimized fabric GPU i of every server links to leaf i, which also links to the spines: a
// DP ring of rail 0 (GPUs 0 and 8) runs on an open island, the leaf, usable as the sub-island of the
// leaf ports facing its GPUs and their NIC ports — every port its paths send through. A pair across
// rails leaves through the spines: with two spines it has two paths (no island); with one, its paths
// cross the leaves' uplinks, which no sub-island of its hosts holds.
TEST(Island, RailLeafIsAnOpenIslandOfItsGpus) {
  const SimConfig cfg = simai_config();
  const GeneratedFabric f = fabric16();
  Network net(cfg, f.topo, make_cc(cfg, nullptr));
  const auto& ports = net.fabric().ports;
  const auto& nodes = net.fabric().nodes;
  Island whole;
  std::string why;
  ASSERT_TRUE(net.find_island({{0, 8}}, whole, why)) << why;
  EXPECT_TRUE(whole.open);
  EXPECT_EQ(whole.kinds, kIslandFabric);
  ASSERT_EQ(whole.switches.size(), 1u);
  EXPECT_FALSE(nodes[whole.switches[0]].is_nvswitch);
  EXPECT_EQ(net.island_kinds(0, 8), kIslandFabric);
  EXPECT_EQ(net.island_kinds(0, 1), kIslandNvSwitch);
  const Island sub = net.sub_island(whole, {0, 8});
  EXPECT_TRUE(sub.shared);
  EXPECT_EQ(sub.hosts, (std::vector<uint32_t>{0, 8}));
  ASSERT_EQ(sub.ports.size(), 4u);  // the leaf's ports facing GPUs 0 and 8, then their NIC ports
  EXPECT_EQ(ports[sub.ports[0]].node, whole.switches[0]);
  EXPECT_EQ(ports[sub.ports[1]].node, whole.switches[0]);
  EXPECT_EQ(ports[sub.ports[2]].node, 0u);
  EXPECT_EQ(ports[sub.ports[3]].node, 8u);
  ASSERT_EQ(whole.path_ports.size(), 4u);  // 0 -> leaf -> 8 and back
  for (uint32_t p : whole.path_ports) EXPECT_NE(sub.local_port(p), UINT32_MAX);
  for (uint32_t p : sub.ports) EXPECT_FALSE(nodes[ports[p].node].is_switch && nodes[ports[ports[p].peer].node].is_switch);
  EXPECT_TRUE(net.island_quiet(sub));

  EXPECT_FALSE(net.find_island({{0, 9}}, whole, why));
  EXPECT_EQ(why, "more than one path");
  SpectrumXParams one;
  one.gpus = 16;
  one.spines = 1;
  const GeneratedFabric f1 = generate_spectrum_x(one);
  Network net1(cfg, f1.topo, make_cc(cfg, nullptr));
  ASSERT_TRUE(net1.find_island({{0, 9}}, whole, why)) << why;
  EXPECT_TRUE(whole.open);
  EXPECT_EQ(whole.switches.size(), 3u);  // leaf 0, the spine, leaf 1
  const Island across = net1.sub_island(whole, {0, 9});
  uint32_t off = 0;
  for (uint32_t p : whole.path_ports) off += across.local_port(p) == UINT32_MAX;
  EXPECT_EQ(off, 4u);  // leaf 0 and leaf 1 to the spine, the spine to each leaf
}

TEST(Island, FlowAcrossTwoSubIslandsDisturbsBoth) {
  const SimConfig cfg = simai_config();
  const GeneratedFabric f = fabric16();
  Network net(cfg, f.topo, make_cc(cfg, nullptr));
  CollectiveMemo memo(net, 0, 0.01);
  const std::string plan = "a 4-GPU ring";
  const auto involved = [](uint32_t, uint8_t) { return 1u; };
  const auto quiet = [](uint8_t, Time, const std::vector<Time>*) { return std::numeric_limits<Time>::max(); };
  auto ring = [](uint32_t first) {
    return std::vector<std::pair<uint32_t, uint32_t>>{{first, first + 1}, {first + 1, first + 2}, {first + 2, first + 3},
                                                      {first + 3, first}};
  };
  const int32_t a = memo.begin(ring(0), [&]() -> const std::string& { return plan; }, {0, 1, 2, 3}, {0, 0, 0, 0}, 4, involved, quiet);
  const int32_t b = memo.begin(ring(4), [&]() -> const std::string& { return plan; }, {4, 5, 6, 7}, {0, 0, 0, 0}, 4, involved, quiet);
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  ASSERT_FALSE(memo.replaying(a));
  ASSERT_FALSE(memo.replaying(b));
  Island whole;
  std::string why;
  ASSERT_TRUE(net.find_island(ring(0), whole, why));
  const Island sa = net.sub_island(whole, {0, 1, 2, 3}), sb = net.sub_island(whole, {4, 5, 6, 7});
  memo.flow_started(1000, sa.ports[4], sb.ports[4]);  // GPU 0's port to the switch, GPU 4's
  for (uint32_t fl = 0; fl < 4; ++fl) memo.finished(a, fl, 0, 0), memo.finished(b, fl, 0, 0);
  FlowSpec other;  // on the other server: it only moves the clock (end states are read at a later instant)
  other.src = 8, other.dst = 9, other.size_bytes = 100'000, other.pg = 3;
  net.inject_flow(other);
  net.run(2 * kSec + 100 * kUs);
  ASSERT_GT(net.now(), 0);
  const CollectiveMemoStats& st = memo.stats();
  EXPECT_EQ(st.considered, 2u);
  EXPECT_EQ(st.recorded, 0u);
  EXPECT_EQ(st.not_kept, 2u);
}

// The progress line's "collective memo replayed N flows" is among its "flows done": it counts the flows
// replays have ended, not those of replays decided. Two alike rows of a 16-MiB TP 8 AllReduce on two
// servers (167 us each): each row is recorded on server 0 and followed on server 1 as it runs (row b's
// key differs: its island holds row a's finished QPs). Cut at 12 us, 128 flows are done, 64 of them
// the follower's; the follower was decided for all its 896 flows (the count the line showed, more
// than the flows done).
TEST(WorkloadDriver, ProgressCountsReplayedFlowsAsTheyEnd) {
  const Workload w = workload(kTp8, {"a -1 1 ALLREDUCE 16777216 1 NONE 0 1 NONE 0 1",
                                     "b -1 1 ALLREDUCE 16777216 1 NONE 0 1 NONE 0 1"});
  const GeneratedFabric f = fabric16();
  const GroupLayout layout = make_layout(w.header, f.gpus, f.gpus_per_server);
  const SimConfig cfg = simai_config();
  Network net(cfg, f.topo, make_cc(cfg, nullptr));
  CollectiveMemo memo(net, 0, 0.01);
  DriverOptions o;
  o.memo = &memo;
  WorkloadDriver d(net, w, layout, o);
  ASSERT_FALSE(d.run(12 * kUs));
  uint64_t done = 0;
  for (uint32_t id = 0; id < net.flow_count(); ++id) done += net.flow_finished(id);
  EXPECT_EQ(done, 128u);
  EXPECT_EQ(memo.replayed_flows_ended(), 64u);  // the follower ends what the recording has
  EXPECT_EQ(memo.stats().replayed_flows, 896u);
  // Run to its end, every replay has ended all its flows.
  Network whole(cfg, f.topo, make_cc(cfg, nullptr));
  CollectiveMemo all(whole, 0, 0.01);
  o.memo = &all;
  WorkloadDriver e(whole, w, layout, o);
  ASSERT_TRUE(e.run(cfg.stop_time()));
  EXPECT_EQ(all.stats().recorded, 2u);
  EXPECT_EQ(all.stats().replayed, 2u);
  EXPECT_EQ(all.stats().replayed_flows, 2u * 896);
  EXPECT_EQ(all.replayed_flows_ended(), 2u * 896);
}
