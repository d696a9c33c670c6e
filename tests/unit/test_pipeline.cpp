// Pipeline parallelism in the workload driver (docs/workloads.md §1.8): micro-batches found in the
// rows, Megatron's 1F1B and GPipe programs, one flow per activation / gradient, bubble and exposed PP
// time. Known answers computed by hand in the comments.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "wormhole/cc/factory.h"
#include "wormhole/io/hpcc_config.h"
#include "wormhole/net/network.h"
#include "wormhole/workload/driver.h"
#include "wormhole/workload/simai_workload.h"
#include "file_fixtures.h"

using namespace wh;
namespace fs = std::filesystem;

namespace {

fs::path test_dir() { return test::test_dir("wh_pipeline_tests"); }
using test::input_error;
using test::write_file;



Workload workload(const std::string& header, const std::vector<std::string>& rows) {
  std::string text = header + "\n" + std::to_string(rows.size()) + "\n";
  for (const std::string& r : rows) text += r + "\n";
  return read_simai_workload(write_file(test_dir() / "workload.txt", text));
}

SimConfig config() {
  const std::string text =
      "ENABLE_QCN 1\nUSE_DYNAMIC_PFC_THRESHOLD 1\nPACKET_PAYLOAD_SIZE 9000\nSIMULATOR_STOP_TIME 100\n"
      "CC_MODE 1\nALPHA_RESUME_INTERVAL 1\nRATE_DECREASE_INTERVAL 4\nCLAMP_TARGET_RATE 0\nRP_TIMER 900\n"
      "EWMA_GAIN 0.00390625\nFAST_RECOVERY_TIMES 1\nRATE_AI 50Mb/s\nRATE_HAI 100Mb/s\nMIN_RATE 100Mb/s\n"
      "DCTCP_RATE_AI 1000Mb/s\nL2_CHUNK_SIZE 4000\nL2_ACK_INTERVAL 1\nHAS_WIN 1\nGLOBAL_T 0\nVAR_WIN 1\n"
      "FAST_REACT 1\nU_TARGET 0.95\nMI_THRESH 0\nINT_MULTI 1\nMULTI_RATE 0\nRATE_BOUND 1\nACK_HIGH_PRIO 0\n"
      "KMAX_MAP 1 400000000000 3200\nKMIN_MAP 1 400000000000 800\nPMAX_MAP 1 400000000000 0.2\nBUFFER_SIZE 32\n";
  return read_hpcc_config(write_file(test_dir() / "SimAI.conf", text));
}

/// GPU 0 – switch 2 – GPU 1, 400 G, 1 µs.
Topology two_gpus() {
  Topology t;
  t.num_nodes = 3;
  t.is_switch = {0, 0, 1};
  t.links = {TopoLink{0, 2, 400'000'000'000ull, 1 * kUs, 0, 0}, TopoLink{1, 2, 400'000'000'000ull, 1 * kUs, 0, 0}};
  return t;
}

// Two stages (GPU 0, GPU 1), TP 1, m = 4 micro-batches of one row each: forward f = 100 µs, backward
// (ig) b = 200 µs, no collectives; pp_comm 1 MiB per activation and gradient.
const char* kHeader =
    "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 ep: 1 pp: 2 vpp: 1 ga: 4 all_gpus: 2 pp_comm: 1048576";
const std::vector<std::string> kRows(4, "layer -1 100000 NONE 0 200000 NONE 0 0 NONE 0 0");
constexpr Time f = 100 * kUs, b = 200 * kUs;

struct PipeRun {
  std::unique_ptr<Network> net;
  WorkloadReport report;
  bool complete = false;
};

PipeRun run(PipelineSchedule schedule, Time until = -1) {
  PipeRun r;
  const Workload w = workload(kHeader, kRows);
  const SimConfig cfg = config();
  r.net = std::make_unique<Network>(cfg, two_gpus(), make_cc(cfg, nullptr));
  const GroupLayout layout = make_layout(w.header, 2, 1, true);
  DriverOptions o;
  o.pipeline = schedule;
  WorkloadDriver d(*r.net, w, layout, o);
  r.complete = d.run(until >= 0 ? until : cfg.stop_time());
  r.report = d.report();
  return r;
}

/// D = send latency + the FCT of one 1-MiB flow on the idle path: the time a transfer takes. Every
/// pipeline flow runs alone here (the schedule never overlaps two), so all have the same FCT.
Time transfer_time(const PipeRun& r) {
  const Time c = r.net->record(0).finish - r.net->flow_info(0).start;
  for (uint32_t i = 0; i < r.net->flow_count(); ++i)
    EXPECT_EQ(r.net->record(i).finish - r.net->flow_info(i).start, c) << "flow " << i;
  return 6 * kUs + c;
}

}  // namespace

TEST(Pipeline, MicroBatchesOfGpt13b) {
  const Workload w = read_simai_workload(WH_TEST_DATA "/simai/SimAI@pr288/example/workload_gpt13b_128g.txt");
  const MicroBatches mb = find_micro_batches(w, w.header.ga);
  EXPECT_EQ(mb.prologue_end, 3u);  // grad_norm, moe_grad_norm1, moe_grad_norm2
  ASSERT_EQ(mb.rows.size(), 16u);
  EXPECT_EQ(mb.rows[0], std::make_pair(3u, 86u));  // embedding_layer .. embedding_norm: 83 rows
  EXPECT_EQ(mb.rows[15], std::make_pair(1248u, 1331u));
  EXPECT_EQ(mb.epilogue_begin, 1331u);  // cross_entropy1..3, optimizer1..4
  EXPECT_THROW(find_micro_batches(w, 5), std::invalid_argument);
}

// Megatron's 1F1B with P = 2, m = 4: stage 0 warms up with min(P - 0 - 1, m) = 1 forward.
TEST(Pipeline, OneFOneBPrograms) {
  const Workload w = workload(kHeader, kRows);
  const GroupLayout L = make_layout(w.header, 2, 1, true);
  const MicroBatches mb = find_micro_batches(w, 4);
  auto text = [&](uint32_t stage, PipelineSchedule s) {
    std::string out;
    for (const ProgramStep& st : stage_program(w, L, mb, s, stage)) {
      static const char* kName[] = {"F", "B", "sa", "ra", "sg", "rg"};
      out += std::string(kName[st.kind]) + std::to_string(st.arg) + " ";
    }
    return out;
  };
  EXPECT_EQ(text(0, PipelineSchedule::OneFOneB), "F0 sa0 F1 sa1 rg0 B0 F2 sa2 rg1 B1 F3 sa3 rg2 B2 rg3 B3 ");
  EXPECT_EQ(text(1, PipelineSchedule::OneFOneB), "ra0 F0 B0 sg0 ra1 F1 B1 sg1 ra2 F2 B2 sg2 ra3 F3 B3 sg3 ");
  EXPECT_EQ(text(0, PipelineSchedule::GPipe), "F0 sa0 F1 sa1 F2 sa2 F3 sa3 rg3 B3 rg2 B2 rg1 B1 rg0 B0 ");
}

// 1F1B timeline (D = transfer time, f ≥ D, b ≥ D):
//   stage 0: F0 [0, f], F1 [f, 2f]; waits for g0 until 2f + 2D + b; B0; F2 ends 3f + 2D + 2b, when g1
//            arrives; B1; F3 ends 4f + 2D + 3b; waits for g2 until 4f + 4D + 3b; B2 ends 4f + 4D + 4b;
//            waits for g3 until 5f + 4D + 4b; B3 ends 5f + 4D + 5b.
//   stage 1: F0 at f + D; B0; g0 sent at 2f + D + b; F1, B1 (a1 arrived at 2f + D); g1 sent at
//            3f + D + 2b; F2 waits for a2 until 3f + 3D + 2b; g2 sent at 4f + 3D + 3b; F3, B3; g3 sent
//            at 5f + 3D + 4b.
// Iteration = 5f + 5b + 4D = (m + p − 1)(f + b) + 4D: with D → 0 the bubble is (p − 1)/(m + p − 1) = 1/5.
// Stage 0's waits split at the moment the peer sent: g0 (D + b) bubble + D exposed, g2 D + D, g3
// (f − D) + D: bubble f + b + D, exposed PP 3D.
TEST(Pipeline, TwoStageOneFOneBKnownAnswer) {
  const PipeRun r = run(PipelineSchedule::OneFOneB);
  ASSERT_TRUE(r.complete) << r.report.incomplete;
  ASSERT_EQ(r.net->flow_count(), 8u);  // 4 activations 0 -> 1, 4 gradients 1 -> 0
  uint32_t forward = 0;
  for (uint32_t i = 0; i < 8; ++i) {
    const FlowRecord fr = r.net->record(i);
    EXPECT_EQ(fr.size_bytes, 1048576u);
    forward += fr.src == 0 && fr.dst == 1;
  }
  EXPECT_EQ(forward, 4u);
  const Time D = transfer_time(r);
  EXPECT_GT(D, 6 * kUs + 20 * kUs);  // 1 MiB at 400 G is 21 µs on the wire
  EXPECT_LT(D, f);
  EXPECT_EQ(r.report.iterations[0].end, 5 * f + 5 * b + 4 * D);
  EXPECT_EQ(r.report.end_to_end.bubble, f + b + D);
  EXPECT_EQ(r.report.end_to_end.exposed_pp, 3 * D);
  EXPECT_EQ(r.report.end_to_end.total_exposed, 3 * D);
  EXPECT_EQ(r.report.end_to_end.total_compute, 4 * (f + b));
  EXPECT_EQ(r.report.pp, 2u);
  // Per GPU, the same split. Stage 1 waits for a0 from 0 (sent at f: bubble f, exposed D) and for a2
  // from 3f + D + 2b (sent at 3f + 2D + 2b: bubble D, exposed D); a1 and a3 have arrived when it asks.
  const GpuRecord& g0 = r.report.per_gpu[0];
  const GpuRecord& g1 = r.report.per_gpu[1];
  EXPECT_EQ(g0.exposed_pp, 3 * D);
  EXPECT_EQ(g0.bubble, f + b + D);
  EXPECT_EQ(g0.exposed(), 3 * D);
  EXPECT_EQ(g1.exposed_pp, 2 * D);
  EXPECT_EQ(g1.bubble, f + D);
  EXPECT_EQ(g1.exposed(), 2 * D);
  // Stage 0 only computes and waits: its finish is compute + exposed + bubble.
  EXPECT_EQ(g0.finish, g0.compute + g0.exposed() + g0.bubble);
  EXPECT_EQ(r.report.slowest_gpu, 0u);  // exposed 3D against 2D: PP counts as exposure
  // One collectives row per transfer: op SendRecv on group PP.
  ASSERT_EQ(r.report.collectives.size(), 8u);
  EXPECT_EQ(r.report.collectives[0].op, "SendRecv");
  EXPECT_EQ(r.report.collectives[0].group, "PP");
  EXPECT_EQ(r.report.collectives[0].start, f);
  EXPECT_EQ(r.report.collectives[0].end, f + D);
}

// Stopped at f + 10 us, while a0 is on its way: the report counts the pipeline transfer among what was
// pending (it said "0 collectives pending" with no word of the transfers).
TEST(Pipeline, AStoppedRunCountsItsPendingTransfers) {
  const PipeRun r = run(PipelineSchedule::OneFOneB, f + 10 * kUs);
  ASSERT_FALSE(r.complete);
  EXPECT_NE(r.report.incomplete.find("stopped by the time limit at 0.000110 s while 0 collectives and 1 pipeline "
                                     "transfer pending:"),
            std::string::npos)
      << r.report.incomplete;
}

// GPipe: stage 0 sends a0..a3 at f, 2f, 3f, 4f; stage 1 runs F0..F3 from f + D, then B3 (g3 sent at
// 5f + D + b), B2, B1, B0. Stage 0 waits from 4f to 5f + 2D + b for g3 (bubble f + b + D, exposed D);
// g2, g1, g0 arrive as it finishes the previous backward. Iteration = 5f + 5b + 2D.
TEST(Pipeline, TwoStageGPipeKnownAnswer) {
  const PipeRun r = run(PipelineSchedule::GPipe);
  ASSERT_TRUE(r.complete) << r.report.incomplete;
  ASSERT_EQ(r.net->flow_count(), 8u);
  const Time D = transfer_time(r);
  EXPECT_EQ(r.report.iterations[0].end, 5 * f + 5 * b + 2 * D);
  EXPECT_EQ(r.report.end_to_end.bubble, f + b + D);
  EXPECT_EQ(r.report.end_to_end.exposed_pp, D);
  EXPECT_EQ(r.report.per_gpu[0].exposed_pp, D);
  EXPECT_EQ(r.report.per_gpu[0].bubble, f + b + D);
}

// The report GPU need not be the one exposed longest: from stage 1 (GPU 1) the totals are GPU 1's
// (bubble f + D, exposed 2D, as in the 1F1B timeline above) and the slowest GPU is still GPU 0 (3D).
TEST(Pipeline, ReportGpuOfStageOneAndSlowestGpu) {
  PipeRun r;
  const Workload w = workload(kHeader, kRows);
  const SimConfig cfg = config();
  r.net = std::make_unique<Network>(cfg, two_gpus(), make_cc(cfg, nullptr));
  DriverOptions o;
  o.pipeline = PipelineSchedule::OneFOneB;
  o.report_gpu = 1;
  WorkloadDriver d(*r.net, w, make_layout(w.header, 2, 1, true), o);
  ASSERT_TRUE(d.run(cfg.stop_time()));
  r.report = d.report();
  const Time D = transfer_time(r);
  EXPECT_EQ(r.report.end_to_end.bubble, f + D);
  EXPECT_EQ(r.report.end_to_end.exposed_pp, 2 * D);
  EXPECT_EQ(r.report.end_to_end.total_exposed, 2 * D);
  EXPECT_EQ(r.report.slowest_gpu, 0u);
  EXPECT_EQ(r.report.per_gpu[0].exposed(), 3 * D);
}

// The switch back to SimAI's ns-3 behaviour: PP taken as 1, no pipeline flows, both GPUs run all
// rows as one stage (forward 4f, backward 4b).
TEST(Pipeline, NoneKeepsSimaiBehaviour) {
  const Workload w = workload(kHeader, kRows);
  const SimConfig cfg = config();
  Network net(cfg, two_gpus(), make_cc(cfg, nullptr));
  const GroupLayout layout = make_layout(w.header, 2, 1, false);
  DriverOptions o;
  o.pipeline = PipelineSchedule::None;
  WorkloadDriver d(net, w, layout, o);
  ASSERT_TRUE(d.run(cfg.stop_time()));
  EXPECT_TRUE(net.flow_count() == 0);
  EXPECT_EQ(d.report().iterations[0].end, 4 * f + 4 * b);
  EXPECT_EQ(d.report().end_to_end.bubble, 0);
}

namespace {

// Two stages, m = 4 micro-batches of an embedding row (no compute) and two layers of forward 50 µs and
// backward 100 µs; pp_comm 0, so a transfer is there as soon as its sender reaches the send (D = 0).
const char* kChunkHeader =
    "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 ep: 1 pp: 2 vpp: 2 ga: 4 all_gpus: 2 pp_comm: 0";
std::vector<std::string> chunk_rows() {
  std::vector<std::string> rows;
  for (int k = 0; k < 4; ++k) {
    rows.push_back("embed -1 0 NONE 0 0 NONE 0 0 NONE 0 0");
    rows.push_back("layer -1 50000 NONE 0 100000 NONE 0 0 NONE 0 0");
    rows.push_back("layer -1 50000 NONE 0 100000 NONE 0 0 NONE 0 0");
  }
  return rows;
}

std::string program_text(const std::vector<ProgramStep>& steps) {
  static const char* kName[] = {"F", "B", "sa", "ra", "sg", "rg"};
  std::string out;
  for (const ProgramStep& st : steps) {
    out += kName[st.kind] + std::to_string(st.arg);
    if (st.kind >= ProgramStep::SendAct) out += "." + std::to_string(st.chunk);
    out += ' ';
  }
  return out;
}

}  // namespace

// GPT-13B's micro-batch (embedding_layer, 20 layers of 4 rows from attention_column, 2 final rows) cut
// into model chunks: v = 2 → layers 0-9 with the embedding, layers 10-19 with the final rows; v = 20 →
// one layer a chunk (the header's vpp, as AICB writes it); 3 divides no layer count.
TEST(Pipeline, ModelChunksOfGpt13b) {
  const Workload w = read_simai_workload(WH_TEST_DATA "/simai/SimAI@pr288/example/workload_gpt13b_128g.txt");
  MicroBatches mb = find_micro_batches(w, w.header.ga);
  split_into_chunks(w, mb, 2);
  EXPECT_EQ(mb.chunk_offset, (std::vector<uint32_t>{0, 41, 83}));
  EXPECT_EQ(mb.chunk_rows(1, 1), std::make_pair(86u + 41u, 169u));
  split_into_chunks(w, mb, 20);
  ASSERT_EQ(mb.chunks(), 20u);
  EXPECT_EQ(mb.chunk_offset[1], 5u);   // embedding_layer + layer 0
  EXPECT_EQ(mb.chunk_offset[19], 77u);  // layer 19 + the 2 final rows
  EXPECT_THROW(split_into_chunks(w, mb, 3), std::invalid_argument);
}

// Megatron's interleaved 1F1B, P = 2, v = 2, m = 4 (8 forward steps a stage): the k-th forward runs chunk
// (k mod 4) div 2 of micro-batch (k div 4)·2 + k mod 2; stage 0 warms up with (2-0-1)·2 + (2-1)·2 = 4
// forwards, stage 1 with 2. Chunk 0 of stage 0 is virtual stage 0 (no activation in, no gradient out);
// chunk 1 of stage 1 is the last (no activation out, no gradient in); the others pass activations 0→1→0→1.
TEST(Pipeline, InterleavedPrograms) {
  const Workload w = workload(kChunkHeader, chunk_rows());
  const GroupLayout L = make_layout(w.header, 2, 1, true);
  MicroBatches mb = find_micro_batches(w, 4);
  split_into_chunks(w, mb, 2);
  EXPECT_EQ(mb.chunk_offset, (std::vector<uint32_t>{0, 2, 3}));  // {embed, layer 0}, {layer 1}
  EXPECT_EQ(program_text(stage_program(w, L, mb, PipelineSchedule::Interleaved, 0)),
            "F0 F1 sa0.0 F3 F4 sa1.0 ra0.1 F2 sa0.1 ra1.1 F5 sa1.1 "     // warm-up: (0,0) (1,0) (0,1) (1,1)
            "F6 F7 sa2.0 rg0.1 B2 sg0.1 F9 F10 sa3.0 rg1.1 B5 sg1.1 "     // F(2,0) B(0,1) F(3,0) B(1,1)
            "ra2.1 F8 sa2.1 rg0.0 B1 B0 ra3.1 F11 sa3.1 rg1.0 B4 B3 "     // F(2,1) B(0,0) F(3,1) B(1,0)
            "rg2.1 B8 sg2.1 rg3.1 B11 sg3.1 rg2.0 B7 B6 rg3.0 B10 B9 ");  // B(2,1) B(3,1) B(2,0) B(3,0)
  EXPECT_EQ(program_text(stage_program(w, L, mb, PipelineSchedule::Interleaved, 1)),
            "ra0.0 F0 F1 sa0.0 ra1.0 F3 F4 sa1.0 "                      // warm-up: (0,0) (1,0)
            "ra0.1 F2 B2 sg0.1 ra1.1 F5 B5 sg1.1 "                      // F(0,1) B(0,1) F(1,1) B(1,1)
            "ra2.0 F6 F7 sa2.0 rg0.0 B1 B0 sg0.0 ra3.0 F9 F10 sa3.0 rg1.0 B4 B3 sg1.0 "
            "ra2.1 F8 B8 sg2.1 ra3.1 F11 B11 sg3.1 "
            "rg2.0 B7 B6 sg2.0 rg3.0 B10 B9 sg3.0 ");
  MicroBatches three = find_micro_batches(w, 4);
  EXPECT_THROW(split_into_chunks(w, three, 3), std::invalid_argument);  // 2 layers: no 3 chunks
}

// The interleaved timeline (chunk forward f = 50 µs, backward b = 100 µs, D = 0), by hand:
//   stage 0: F(0,0) 0-50, F(1,0) 50-100, F(0,1) 100-150, F(1,1) 150-200, F(2,0) 200-250; waits for
//            the gradient of (0,1) until 300 (stage 1 ran F(0,0) 50-100, F(1,0) 100-150, F(0,1) 150-200,
//            B(0,1) 200-300); B(0,1) 300-400, F(3,0) 400-450, B(1,1) 450-550, F(2,1) 550-600, B(0,0)
//            600-700, F(3,1) 700-750, B(1,0) 750-850; waits until 900, B(2,1) 900-1000; waits until
//            1050, B(3,1) 1050-1150, B(2,0) 1150-1250, B(3,0) 1250-1350.
//   stage 1 waits only for its first activation (50 µs) and ends at 1250.
// Iteration 1350 µs = m·v·(f + b) + the bubble (P-1)/(v·m) of it: 1200 + 150; non-interleaved 1F1B of
// the same rows takes (m + P - 1)(2f + 2b) = 1500 µs.
TEST(Pipeline, TwoStageInterleavedKnownAnswer) {
  const Workload w = workload(kChunkHeader, chunk_rows());
  const SimConfig cfg = config();
  const GroupLayout layout = make_layout(w.header, 2, 1, true);
  auto run_with = [&](PipelineSchedule s, uint32_t v) {
    Network net(cfg, two_gpus(), make_cc(cfg, nullptr));
    DriverOptions o;
    o.pipeline = s;
    o.virtual_stages = v;
    WorkloadDriver d(net, w, layout, o);
    EXPECT_TRUE(d.run(cfg.stop_time()));
    EXPECT_EQ(net.flow_count(), 0u);  // pp_comm 0: no flows
    return d.report();
  };
  const Time fc = 50 * kUs, bc = 100 * kUs;
  const WorkloadReport r = run_with(PipelineSchedule::Interleaved, 2);
  EXPECT_EQ(r.iterations[0].end, 1350 * kUs);
  EXPECT_EQ(r.end_to_end.total_compute, 4 * 2 * (fc + bc));
  EXPECT_EQ(r.per_gpu[0].bubble, 150 * kUs);
  EXPECT_EQ(r.per_gpu[0].exposed_pp, 0);
  EXPECT_EQ(r.per_gpu[0].finish, 1350 * kUs);
  EXPECT_EQ(r.per_gpu[1].bubble, 50 * kUs);
  EXPECT_EQ(r.per_gpu[1].finish, 1250 * kUs);
  // 2 boundaries forward (0→1, 1→0 into chunk 1, 0→1 into chunk 1 = 3) and 3 back, per micro-batch.
  EXPECT_EQ(r.collectives.size(), 4u * 6u);
  const auto named = [&](const std::string& n) {
    return std::count_if(r.collectives.begin(), r.collectives.end(),
                         [&](const CollectiveRecord& c) { return c.layer_name == n; });
  };
  EXPECT_EQ(named("pipeline activation micro-batch 0 chunk 1"), 2);  // 1 → 0 and 0 → 1, both into chunk 1
  EXPECT_EQ(named("pipeline gradient micro-batch 3 chunk 0"), 2);
  EXPECT_EQ(run_with(PipelineSchedule::OneFOneB, 1).iterations[0].end, 1500 * kUs);
  EXPECT_EQ(run_with(PipelineSchedule::Interleaved, 1).iterations[0].end, 1500 * kUs);  // v = 1: plain 1F1B
}

// With 1-MiB transfers the interleaved schedule's 6 boundaries per micro-batch are flows: 0 -> 1 (chunk 0),
// 1 -> 0 into chunk 1 (the wrap), 0 -> 1 (chunk 1) forward and the same three back, so 12 flows each way for
// 4 micro-batches, 24 SendRecv rows (12 activations, 12 gradients), and the iteration is longer than the
// 1,350 µs of instant transfers by at least one transfer; the waits after a peer sent are exposed PP time.
TEST(Pipeline, InterleavedTransfersGoRoundTheVirtualStages) {
  std::string header = kChunkHeader;
  header.replace(header.find("pp_comm: 0"), 10, "pp_comm: 1048576");
  const Workload w = workload(header, chunk_rows());
  const SimConfig cfg = config();
  Network net(cfg, two_gpus(), make_cc(cfg, nullptr));
  DriverOptions o;
  o.pipeline = PipelineSchedule::Interleaved;
  o.virtual_stages = 2;
  WorkloadDriver d(net, w, make_layout(w.header, 2, 1, true), o);
  ASSERT_TRUE(d.run(cfg.stop_time()));
  ASSERT_EQ(net.flow_count(), 24u);
  uint32_t forward = 0;
  for (uint32_t i = 0; i < 24; ++i) {
    const FlowRecord fr = net.record(i);
    EXPECT_EQ(fr.size_bytes, 1048576u);
    forward += fr.src == 0 && fr.dst == 1;
  }
  EXPECT_EQ(forward, 12u);
  const WorkloadReport& r = d.report();
  size_t activations = 0;
  for (const CollectiveRecord& c : r.collectives) activations += c.layer_name.rfind("pipeline activation", 0) == 0;
  EXPECT_EQ(r.collectives.size(), 24u);
  EXPECT_EQ(activations, 12u);
  EXPECT_GT(r.iterations[0].end, 1350 * kUs + 6 * kUs + 20 * kUs);  // a transfer: send latency + 21 µs on the wire
  EXPECT_GT(r.per_gpu[0].exposed_pp, 0);
  EXPECT_EQ(r.per_gpu[0].finish, r.per_gpu[0].compute + r.per_gpu[0].exposed() + r.per_gpu[0].bubble);
}
