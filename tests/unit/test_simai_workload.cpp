// SimAI/AICB workload reader (docs/workloads.md §1): every shared workload file against the §1.7
// table, comm-type decoding, the quirks of §1.5, and one test per rejected input.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "wormhole/core/input_error.h"
#include "wormhole/workload/simai_workload.h"

using namespace wh;
namespace fs = std::filesystem;

namespace {

const std::string kSimai = WH_TEST_DATA "/simai/";
constexpr double MiB = 1 << 20, GiB = 1 << 30;

/// `text` as a file in a fresh folder per test.
std::string temp_file(const std::string& text) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path d = fs::path(::testing::TempDir()) / "wh_workload_tests" /
                     (std::string(info->test_suite_name()) + "." + info->name());
  fs::create_directories(d);
  std::ofstream(d / "workload.txt", std::ios::binary) << text;
  return (d / "workload.txt").string();
}

/// Reads `text` as a workload; returns the InputError, checking it names the file and `line`.
InputError workload_error(const std::string& text, int line) {
  const std::string p = temp_file(text);
  try {
    read_simai_workload(p);
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), p);
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind(p, 0), 0u) << e.what();
    return e;
  }
  ADD_FAILURE() << "no InputError for:\n" << text;
  return InputError("", -1, "", "");
}

::testing::AssertionResult mentions(const std::string& s, const std::string& fragment) {
  if (s.find(fragment) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << s << "\" lacks \"" << fragment << "\"";
}
::testing::AssertionResult mentions(const InputError& e, const std::string& f) { return mentions(e.what(), f); }

const std::string kHeader =
    "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 8 ga: 1 all_gpus: 16 "
    "checkpoints: 0 checkpoint_initiates: 0\n";
const std::string kRow = "layer -1 10 ALLREDUCE 1048576 20 NONE 0 30 ALLGATHER 2048 5\n";

// ---- the shared files against docs/workloads.md §1.7 ----

struct Tally { int count = 0; uint64_t bytes = 0; };
using Key = std::pair<std::string, std::string>;  // phase, raw comm type

/// Collectives per (phase, comm type as written), from the parsed rows.
std::map<Key, Tally> tally(const Workload& w) {
  std::map<Key, Tally> t;
  for (const WorkloadLayer& l : w.layers) {
    const std::pair<const char*, const CommOp*> phases[] = {{"fwd", &l.fwd}, {"ig", &l.ig}, {"wg", &l.wg}};
    for (const auto& [ph, c] : phases) {
      if (c->raw == "NONE") continue;
      Tally& x = t[{ph, c->raw}];
      ++x.count;
      x.bytes += c->bytes;
    }
  }
  return t;
}

struct Sum {
  const char* phase;
  const char* raw;
  int count;      ///< -1: the table gives no count
  double value;   ///< summed bytes in `unit`, as printed in the table
  double unit;
  double tol;     ///< half a unit of the table's last digit; 0 = exact
};

struct FileCase {
  const char* path;
  const char* policy;
  uint32_t all_gpus, tp, ep, pp, vpp, ga;
  uint64_t pp_comm;
  size_t rows;
  int tiny_fwd;   ///< fwd sizes 1..4095 in the file (all are "ALLREDUCE 4" optimizer rows)
  size_t warnings;
  std::vector<Sum> sums;
};

const char* const kFwd = "HYBRID_TRANSFORMER_FWD_IN_BCKWD";
const std::vector<Sum> kMicroAR = {{"fwd", "ALLREDUCE", 2, 80, MiB, 0}};

const std::vector<FileCase> kFiles = {
    {"SimAI/example/microAllReduce.txt", kFwd, 8, 8, 1, 1, 8, 1, 0, 2, 0, 0, kMicroAR},
    {"SimAI@pr288/example/microAllReduce_16g.txt", kFwd, 16, 8, 1, 1, 8, 1, 0, 2, 0, 0, kMicroAR},
    {"SimAI@pr288/example/microAllReduce_32g.txt", kFwd, 32, 8, 1, 1, 8, 1, 0, 2, 0, 0, kMicroAR},
    {"SimAI@pr288/example/microAllReduce_128g.txt", kFwd, 128, 8, 1, 1, 8, 1, 0, 2, 0, 0, kMicroAR},
    {"SimAI/docs/Tutorial.md.inline/ring_vs_nvls_32g_workload.txt", kFwd, 32, 8, 1, 1, 8, 1, 0, 6, 0, 0,
     {{"fwd", "ALLREDUCE", 6, 16 + 32 + 64 + 128 + 256 + 512, MiB, 0}}},
    {"SimAI/docs/Tutorial.md.inline/spectrumx_vs_dcn_256g_workload.txt", kFwd, 256, 8, 1, 1, 8, 1, 0, 1, 0, 0,
     {{"wg", "ALLREDUCE", 1, 512, MiB, 0}}},
    {"SimAI@pr288/example/workload_gpt13b_128g.txt", kFwd, 128, 8, 1, 2, 20, 16, 2621440, 1338, 4, 0,
     {{"fwd", "ALLGATHER", 657, 14.28, GiB, 0.005}, {"fwd", "REDUCESCATTER", 640, 12.5, GiB, 0},
      {"fwd", "ALLREDUCE", 23, 7.669, GiB, 0.0005}, {"wg", "REDUCESCATTER", 1, 3142615040, 1, 0},
      {"wg", "ALLGATHER_DP_EP", -1, 0, 1, 0}, {"wg", "REDUCESCATTER_DP_EP", -1, 0, 1, 0}}},
    {"SimAI@pr288/example/workload_gpt7b_64g.txt", kFwd, 64, 8, 1, 1, 32, 8, 0, 1058, 4, 0,
     {{"fwd", "ALLGATHER", 521, 9.549, GiB, 0.0005}, {"fwd", "REDUCESCATTER", 512, 8, GiB, 0},
      {"fwd", "ALLREDUCE", 15, 3.067, GiB, 0.0005}, {"wg", "REDUCESCATTER", 1, 2.849, GiB, 0.0005}}},
    {"SimAI@pr288/example/workload_ep_test.txt", kFwd, 32, 4, 4, 1, 1, 1, 0, 43, 0, 0,
     {{"fwd", "ALLGATHER", 12, 144, MiB, 0}, {"fwd", "REDUCESCATTER", 8, 96, MiB, 0},
      {"fwd", "ALLTOALL", 8, 48, MiB, 0}, {"fwd", "ALLTOALL_EP", 8, 192, MiB, 0},
      {"fwd", "ALLREDUCE", 1, 12, MiB, 0}, {"ig", "ALLGATHER", 12, 144, MiB, 0},
      {"ig", "REDUCESCATTER", 8, 48, MiB, 0}, {"ig", "ALLTOALL", 8, 48, MiB, 0},
      {"ig", "ALLTOALL_EP", 8, 192, MiB, 0}, {"ig", "ALLREDUCE", 1, 12, MiB, 0},
      {"wg", "ALLGATHER", -1, 6, MiB, 0}, {"wg", "ALLGATHER_DP_EP", -1, 4.5, MiB, 0},
      {"wg", "REDUCESCATTER", -1, 12, MiB, 0}, {"wg", "REDUCESCATTER_DP_EP", -1, 9, MiB, 0}}},
    {"aicb/workload/simAI/micro_test/all_reduce.txt", "MICRO", 0, 1, 1, 1, 1, 1, 0, 19, 0, 0,
     {{"wg", "ALLREDUCE", 19, (1 << 19) - 1, 4096, 0}}},
    {"aicb/workload/simAI/micro_test/all_to_all.txt", "MICRO", 0, 1, 1, 1, 1, 1, 0, 19, 0, 0,
     {{"wg", "ALLTOALL", 19, (1 << 19) - 1, 4096, 0}}},
    {"aicb/workload/simAI/model_workload/G13B-M1-C01_GPT13B_megatron_tp8_pp1_mbs1_A100.txt", kFwd, 0, 8, 1, 1, 1,
     1, 0, 92, 4, 1,
     {{"fwd", "ALLREDUCE", 89, 1.887, GiB, 0.0005}, {"fwd", "ALLGATHER", 1, 3.026, GiB, 0.0005},
      {"fwd", "BROADCAST", 1, 0, 1, 0},  // 16 KiB in the file, dropped
      {"ig", "ALLREDUCE", 82, 4.608, GiB, 0.0005}, {"wg", "REDUCESCATTER", 1, 6497239040, 1, 0}}},
    {"aicb/workload/simAI/model_workload/G13B-M1-C02_GPT13B_megatron_tp8_pp1_mbs1_sp_A100.txt", kFwd, 0, 8, 1, 1,
     1, 1, 0, 172, 4, 1,
     {{"fwd", "ALLGATHER", 81, 4.588, GiB, 0.0005}, {"fwd", "REDUCESCATTER", 80, 1.562, GiB, 0.0005},
      {"fwd", "ALLREDUCE", 9, 332.5, MiB, 0.05}, {"fwd", "BROADCAST", 1, 0, 1, 0},
      {"ig", "ALLGATHER", 80, 1.562, GiB, 0.0005}, {"ig", "REDUCESCATTER", 80, 1.562, GiB, 0.0005},
      {"ig", "ALLREDUCE", 2, 3.045, GiB, 0.0005}, {"wg", "REDUCESCATTER", 1, 6.051, GiB, 0.0005}}},
};

TEST(SimaiWorkload, SharedFilesMatchTheDecodedTable) {
  for (const FileCase& fc : kFiles) {
    SCOPED_TRACE(fc.path);
    const Workload w = read_simai_workload(kSimai + fc.path);
    const WorkloadHeader& h = w.header;
    EXPECT_EQ(h.policy, fc.policy);
    EXPECT_EQ(h.micro, std::string(fc.policy) == "MICRO");
    EXPECT_EQ(h.all_gpus, fc.all_gpus);
    EXPECT_EQ(h.tp, fc.tp);
    EXPECT_EQ(h.ep, fc.ep);
    EXPECT_EQ(h.pp, fc.pp);
    EXPECT_EQ(h.vpp, fc.vpp);
    EXPECT_EQ(h.ga, fc.ga);
    EXPECT_EQ(h.pp_comm_bytes, fc.pp_comm);
    EXPECT_EQ(w.layers.size(), fc.rows);
    EXPECT_EQ(h.warnings.size(), fc.warnings) << (h.warnings.empty() ? "" : h.warnings[0]);
    // The fwd tiny-size rule raised these to 4096; the table sums the sizes as written (4 B each).
    int tiny = 0;
    for (const WorkloadLayer& l : w.layers)
      if (l.fwd.op != Collective::None && l.fwd.bytes == kMinFwdCommBytes) {
        ++tiny;
        EXPECT_EQ(l.fwd.raw, "ALLREDUCE");
        EXPECT_EQ(l.name.rfind("optimizer", 0), 0u) << l.name;
      }
    EXPECT_EQ(tiny, fc.tiny_fwd);
    std::map<Key, Tally> t = tally(w);
    t[{"fwd", "ALLREDUCE"}].bytes -= static_cast<uint64_t>(tiny) * (kMinFwdCommBytes - 4);
    for (const Sum& s : fc.sums) {
      SCOPED_TRACE(std::string(s.phase) + " " + s.raw);
      const auto it = t.find({s.phase, s.raw});
      ASSERT_NE(it, t.end());
      if (s.count >= 0) {
        EXPECT_EQ(it->second.count, s.count);
      }
      if (s.tol == 0) {
        EXPECT_EQ(it->second.bytes, static_cast<uint64_t>(s.value * s.unit));
      } else {
        EXPECT_LE(std::fabs(it->second.bytes / s.unit - s.value), s.tol * (1 + 1e-9));
      }
    }
    // Nothing beyond the table moves bytes.
    for (const auto& [k, x] : t) {
      bool listed = false;
      for (const Sum& s : fc.sums) listed |= k == Key{s.phase, s.raw};
      EXPECT_TRUE(listed || x.bytes == 0) << k.first << " " << k.second;
    }
  }
}

TEST(SimaiWorkload, SharedFilesDetails) {
  const Workload m = read_simai_workload(kSimai + "SimAI/example/microAllReduce.txt");
  for (const WorkloadLayer& l : m.layers) {
    EXPECT_EQ(l.fwd_compute_ns, 556000u);
    EXPECT_EQ(l.name, "embedding_layer");
    EXPECT_EQ(l.depen, -1);
    EXPECT_EQ(l.fwd.group, CommGroup::TP);  // fwd column → TP (§1.5 quirk 9)
    EXPECT_EQ(l.update_ns, 1u);
  }
  EXPECT_EQ(m.layers[0].fwd.bytes, 16 * 1048576u);
  EXPECT_EQ(m.layers[1].fwd.bytes, 64 * 1048576u);
  EXPECT_EQ(m.layers[1].line, 4);  // the last line, no final newline

  const Workload s = read_simai_workload(kSimai + "SimAI/docs/Tutorial.md.inline/spectrumx_vs_dcn_256g_workload.txt");
  EXPECT_EQ(s.layers[0].wg.group, CommGroup::DP);  // wg column → DP group

  const Workload ring = read_simai_workload(kSimai + "SimAI/docs/Tutorial.md.inline/ring_vs_nvls_32g_workload.txt");
  for (size_t i = 0; i < ring.layers.size(); ++i) EXPECT_EQ(ring.layers[i].fwd.bytes, (16u << 20) << i);

  const Workload ar = read_simai_workload(kSimai + "aicb/workload/simAI/micro_test/all_reduce.txt");
  for (size_t k = 0; k < ar.layers.size(); ++k) {
    EXPECT_EQ(ar.layers[k].wg.bytes, 4096u << k);
    EXPECT_EQ(ar.layers[k].wg.group, CommGroup::DP);
  }

  const Workload ep = read_simai_workload(kSimai + "SimAI@pr288/example/workload_ep_test.txt");
  std::map<std::string, CommGroup> groups;
  for (const WorkloadLayer& l : ep.layers) {
    if (l.fwd.op != Collective::None) groups["fwd " + l.fwd.raw] = l.fwd.group;
    if (l.wg.op != Collective::None) groups["wg " + l.wg.raw] = l.wg.group;
  }
  EXPECT_EQ(groups["fwd ALLTOALL"], CommGroup::TP);
  EXPECT_EQ(groups["fwd ALLTOALL_EP"], CommGroup::EP);
  EXPECT_EQ(groups["wg ALLGATHER"], CommGroup::DP);
  EXPECT_EQ(groups["wg ALLGATHER_DP_EP"], CommGroup::DP_EP);

  const Workload g = read_simai_workload(
      kSimai + "aicb/workload/simAI/model_workload/G13B-M1-C01_GPT13B_megatron_tp8_pp1_mbs1_A100.txt");
  EXPECT_TRUE(mentions(g.header.warnings.at(0), ":1: header format mismatch"));
  EXPECT_TRUE(mentions(g.header.warnings.at(0), "no ep:, pp:, vpp:, ga:, all_gpus:"));
  EXPECT_EQ(g.layers[0].fwd.raw, "BROADCAST");  // dropped, size ignored
  EXPECT_EQ(g.layers[0].fwd.op, Collective::None);
  EXPECT_EQ(g.layers[0].fwd.bytes, 0u);
}

// ---- parse_comm (§1.4) ----

TEST(SimaiWorkload, CommTypeDecoding) {
  const std::pair<const char*, Collective> ops[] = {{"ALLREDUCE", Collective::AllReduce},
                                                    {"ALLGATHER", Collective::AllGather},
                                                    {"REDUCESCATTER", Collective::ReduceScatter},
                                                    {"ALLTOALL", Collective::AllToAll}};
  for (const auto& [name, op] : ops) {
    const std::string s = name;
    SCOPED_TRACE(s);
    for (bool wg : {false, true}) {
      const CommOp bare = parse_comm(s, 100, wg);
      EXPECT_EQ(bare.op, op);
      EXPECT_EQ(bare.group, wg ? CommGroup::DP : CommGroup::TP);
      EXPECT_EQ(bare.bytes, 100u);
      EXPECT_EQ(bare.raw, s);
      EXPECT_EQ(parse_comm(s + "_EP", 100, wg).group, CommGroup::EP);
      EXPECT_EQ(parse_comm(s + "_DP_EP", 100, wg).group, CommGroup::DP_EP);
      const CommOp odd = parse_comm(s + "_TP", 100, wg);  // unknown suffix: the op, no group
      EXPECT_EQ(odd.op, op);
      EXPECT_EQ(odd.group, CommGroup::None);
      const CommOp zero = parse_comm(s, 0, wg);  // size 0: no-op (§1.5 quirk 6)
      EXPECT_EQ(zero.op, Collective::None);
      EXPECT_EQ(zero.group, CommGroup::None);
    }
  }
  const CommOp arata = parse_comm("ALLREDUCEALLTOALL", 8, false);  // ALLREDUCE prefix wins
  EXPECT_EQ(arata.op, Collective::AllReduce);
  EXPECT_EQ(arata.group, CommGroup::None);
  for (const char* none : {"NONE", "BROADCAST", "BROADCAST_EP", "allreduce", "SEND", "ALLREDUC"}) {
    const CommOp c = parse_comm(none, 20971520, false);  // NONE with a size: size ignored
    EXPECT_EQ(c.op, Collective::None) << none;
    EXPECT_EQ(c.bytes, 0u) << none;
    EXPECT_EQ(c.raw, none);
  }
  EXPECT_STREQ(to_string(Collective::ReduceScatter), "ReduceScatter");
  EXPECT_STREQ(to_string(CommGroup::DP_EP), "DP_EP");
}

// ---- quirks ----

TEST(SimaiWorkload, TinyFwdSizesRaisedTo4096InFwdOnly) {
  const Workload w = read_simai_workload(temp_file(
      kHeader + "6\n"
      "a -1 1 ALLREDUCE 4 1 ALLREDUCE 4 1 ALLREDUCE 4 1\n"
      "b -1 1 ALLGATHER 1 1 NONE 0 1 ALLGATHER 1 1\n"
      "c -1 1 ALLREDUCE 4095 1 NONE 0 1 NONE 0 1\n"
      "d -1 1 ALLREDUCE 4096 1 NONE 0 1 NONE 0 1\n"
      "e -1 1 ALLREDUCE 4097 1 NONE 0 1 NONE 0 1\n"
      "f -1 1 NONE 4 1 NONE 0 1 ALLREDUCE 0 1\n"));
  const auto& L = w.layers;
  EXPECT_EQ(L[0].fwd.bytes, 4096u);
  EXPECT_EQ(L[0].ig.bytes, 4u);
  EXPECT_EQ(L[0].wg.bytes, 4u);
  EXPECT_EQ(L[1].fwd.bytes, 4096u);
  EXPECT_EQ(L[1].wg.bytes, 1u);
  EXPECT_EQ(L[2].fwd.bytes, 4096u);
  EXPECT_EQ(L[3].fwd.bytes, 4096u);
  EXPECT_EQ(L[4].fwd.bytes, 4097u);
  EXPECT_EQ(L[5].fwd.op, Collective::None);  // NONE stays no-comm
  EXPECT_EQ(L[5].fwd.bytes, 0u);
  EXPECT_EQ(L[5].wg.op, Collective::None);   // typed, size 0
  EXPECT_TRUE(w.header.warnings.empty());
}

TEST(SimaiWorkload, WhitespaceAndHeaderVariants) {
  // Tab after the policy, pp_comm without colon as a float, no vpp:, CRLF, rows wrapped and shared
  // across lines, no final newline.
  const Workload w = read_simai_workload(temp_file(
      "HYBRID_TRANSFORMER_FWD_IN_BCKWD\tmodel_parallel_NPU_group: 4  ep: 2 pp: 2\tga: 3 all_gpus: 64 pp_comm "
      "8388608.0\r\n2 \r\n"
      "x\t-1\t7\tALLTOALL_EP\t100\r\n8 NONE 0 9 REDUCESCATTER_DP_EP 50 3 y -1 1 NONE 0\n1 NONE 0 1 NONE 0 2"));
  const WorkloadHeader& h = w.header;
  EXPECT_EQ(h.tp, 4u);
  EXPECT_EQ(h.ep, 2u);
  EXPECT_EQ(h.pp, 2u);
  EXPECT_EQ(h.ga, 3u);
  EXPECT_EQ(h.all_gpus, 64u);
  EXPECT_EQ(h.pp_comm_bytes, 8388608u);
  EXPECT_EQ(h.vpp, 1u);  // missing → 1, with SimAI's warning
  ASSERT_EQ(h.warnings.size(), 1u);
  EXPECT_TRUE(mentions(h.warnings[0], "no vpp:"));
  ASSERT_EQ(w.layers.size(), 2u);
  EXPECT_EQ(w.layers[0].fwd.group, CommGroup::EP);
  EXPECT_EQ(w.layers[0].ig_compute_ns, 8u);
  EXPECT_EQ(w.layers[0].wg.group, CommGroup::DP_EP);
  EXPECT_EQ(w.layers[0].update_ns, 3u);
  EXPECT_EQ(w.layers[0].line, 3);
  EXPECT_EQ(w.layers[1].name, "y");
  EXPECT_EQ(w.layers[1].line, 4);
  EXPECT_EQ(w.layers[1].update_ns, 2u);
  EXPECT_EQ(read_simai_workload(temp_file(kHeader + "1\n" + kRow + "\n\n")).layers.size(), 1u);
}

TEST(SimaiWorkload, MismatchWarnings) {
  auto warnings = [](const std::string& header) {
    return read_simai_workload(temp_file(header + "\n1\n" + kRow)).header.warnings;
  };
  const std::string all = "HYBRID_TRANSFORMER model_parallel_NPU_group: 8 ep: 1 vpp: 1 ga: 1 all_gpus: 8";
  EXPECT_TRUE(warnings(all + " pp: 1").empty());
  EXPECT_TRUE(warnings(all + " pp: 2 pp_comm: 10").empty());
  auto w = warnings(all + " pp: 2");
  ASSERT_EQ(w.size(), 1u);
  EXPECT_TRUE(mentions(w[0], "pp: 2 with no pp_comm"));
  w = warnings(all + " pp: 1 pp_comm: 10");
  ASSERT_EQ(w.size(), 1u);
  EXPECT_TRUE(mentions(w[0], "pp: 1 with pp_comm 10"));
  const auto zero = read_simai_workload(temp_file(
      "HYBRID_TRANSFORMER model_parallel_NPU_group: 0 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 8\n1\n" + kRow));
  EXPECT_EQ(zero.header.tp, 0u);  // kept: TP 0 = all GPUs in SimAI's ns-3 backend
  ASSERT_EQ(zero.header.warnings.size(), 1u);
  EXPECT_TRUE(mentions(zero.header.warnings[0], "model_parallel_NPU_group: 0"));
}

TEST(SimaiWorkload, MicroHeaderPairsIgnored) {
  const Workload w = read_simai_workload(
      temp_file("MICRO model_parallel_NPU_group: 8 ep: 4 all_gpus: 32\n1\n" + kRow));
  EXPECT_TRUE(w.header.micro);
  EXPECT_EQ(w.header.tp, 1u);
  EXPECT_EQ(w.header.ep, 1u);
  EXPECT_EQ(w.header.all_gpus, 0u);
  EXPECT_TRUE(w.header.warnings.empty());
  EXPECT_EQ(w.layers.at(0).wg.group, CommGroup::DP);
}

TEST(SimaiWorkload, RowCountMismatchWarns) {
  const std::string p = temp_file(kHeader + "839\n" + kRow + kRow);
  const Workload w = read_simai_workload(p);
  EXPECT_EQ(w.layers.size(), 2u);
  ASSERT_EQ(w.header.warnings.size(), 1u);
  EXPECT_TRUE(mentions(w.header.warnings[0], p + ":2: line 2 declares 839 rows but the file has 2"));

  const Workload extra = read_simai_workload(temp_file(kHeader + "1\n" + kRow + kRow));
  EXPECT_EQ(extra.layers.size(), 1u);
  ASSERT_EQ(extra.header.warnings.size(), 1u);
  EXPECT_TRUE(mentions(extra.header.warnings[0], ":4: 12 tokens after the 1 declared rows are ignored"));
}

TEST(SimaiWorkload, OddCommTypesWarnOnce) {
  const Workload w = read_simai_workload(temp_file(
      kHeader + "3\n"
      "a -1 1 SEND 10 1 ALLREDUCE_TP 10 1 NONE 0 1\n"
      "b -1 1 SEND 10 1 BROADCAST 10 1 NONE 0 1\n"
      "c -1 1 NONE 0 1 NONE 0 1 NONE 0 1\n"));
  ASSERT_EQ(w.header.warnings.size(), 2u);
  EXPECT_TRUE(mentions(w.header.warnings[0], ":3: comm type \"SEND\" is unknown"));
  EXPECT_TRUE(mentions(w.header.warnings[1], "\"ALLREDUCE_TP\" has an unknown suffix"));
  EXPECT_EQ(w.layers[0].ig.op, Collective::AllReduce);
  EXPECT_EQ(w.layers[0].ig.group, CommGroup::None);
  EXPECT_EQ(w.header.warnings[0].find("did you mean"), std::string::npos);  // SEND is no misspelling
}

TEST(SimaiWorkload, AMisspelledCommTypeWarnsWithTheTypeLikelyMeant) {
  const Workload w = read_simai_workload(temp_file(kHeader + "1\n" + "a -1 1 ALLREDUSE 10 1 NONE 0 1 ALLTOAL_EP 10 1\n"));
  ASSERT_EQ(w.header.warnings.size(), 2u);
  EXPECT_TRUE(mentions(w.header.warnings[0], ":3: comm type \"ALLREDUSE\" is unknown: no communication (SimAI ignores it "
                                             "too); did you mean ALLREDUCE?"));
  EXPECT_TRUE(mentions(w.header.warnings[1], "\"ALLTOAL_EP\" is unknown: no communication (SimAI ignores it too); did you "
                                             "mean ALLTOALL_EP?"));
  EXPECT_EQ(w.layers[0].fwd.op, Collective::None);  // run as SimAI runs it
}

TEST(SimaiWorkload, HybridCustomizedHas13Fields) {
  const Workload w = read_simai_workload(temp_file(
      "HYBRID_CUSTOMIZED\n2\n"
      "a -1 1 ALLREDUCE 10 1 NONE 0 1 NONE 0 1 DATA\n"
      "b -1 1 NONE 0 1 NONE 0 1 ALLGATHER 20 1 MODEL\n"));
  ASSERT_EQ(w.layers.size(), 2u);
  EXPECT_EQ(w.layers[1].name, "b");
  EXPECT_EQ(w.layers[1].wg.bytes, 20u);
}

// ---- rejected inputs ----

TEST(SimaiWorkload, HeaderErrors) {
  EXPECT_TRUE(mentions(workload_error("", 1), "empty file"));
  EXPECT_TRUE(mentions(workload_error("\n2\n", 1), "line 1 is empty"));
  const InputError e = workload_error("HYBRID_TRANSFORMER_FWD_IN_BACKWARD tp: 8\n0\n", 1);
  EXPECT_TRUE(mentions(e, "unknown parallelism policy \"HYBRID_TRANSFORMER_FWD_IN_BACKWARD\""));
  EXPECT_TRUE(mentions(e, "HYBRID_TRANSFORMER_FWD_IN_BCKWD"));
  EXPECT_TRUE(mentions(e, "MICRO"));
  EXPECT_TRUE(mentions(e, "DISTRIBUTED_INFERENCE"));
  EXPECT_TRUE(mentions(workload_error("HYBRID_TRANSFORMER ep: 2 all_gpus:\n0\n", 1),
                       "header key \"all_gpus:\" has no value"));
  EXPECT_TRUE(mentions(workload_error("HYBRID_TRANSFORMER ep: two\n0\n", 1), "\"ep:\" has value \"two\""));
  EXPECT_TRUE(mentions(workload_error("HYBRID_TRANSFORMER pp: -1\n0\n", 1), "not a non-negative number"));
  EXPECT_TRUE(mentions(workload_error("HYBRID_TRANSFORMER pp: 1e3\n0\n", 1), "\"pp:\" has value \"1e3\""));
  EXPECT_TRUE(mentions(workload_error("MICRO pp_comm 12x\n0\n", 1), "\"pp_comm\" has value \"12x\""));
  EXPECT_TRUE(mentions(workload_error("HYBRID_TRANSFORMER ep: 4294967296\n0\n", 1), "not a non-negative"));
  const std::string missing = "/nonexistent/dir/workload.txt";
  try {
    read_simai_workload(missing);
    ADD_FAILURE() << "no error";
  } catch (const InputError& x) {
    EXPECT_EQ(x.file(), missing);
    EXPECT_EQ(x.line(), 0);
  }
}

TEST(SimaiWorkload, RowCountErrors) {
  EXPECT_TRUE(mentions(workload_error(kHeader, 2), "no row count on line 2"));
  EXPECT_TRUE(mentions(workload_error(kHeader + "\n1\n" + kRow, 2), "no row count on line 2"));
  EXPECT_TRUE(mentions(workload_error(kHeader + "two\n", 2), "row count \"two\" is not a whole number"));
  EXPECT_TRUE(mentions(workload_error(kHeader + "-3\n", 2), "row count \"-3\""));
  EXPECT_TRUE(mentions(workload_error(kHeader + "1 " + kRow, 2), "line 2 has more than one token"));
}

TEST(SimaiWorkload, RowErrors) {
  // The last row is short: named by the line it starts on.
  const InputError shortrow = workload_error(kHeader + "2\n" + kRow + "b -1 1 NONE 0 1 NONE 0 1 NONE 0\n", 4);
  EXPECT_TRUE(mentions(shortrow, "row 2 has only 11 of 12 fields"));
  EXPECT_TRUE(mentions(shortrow, "fix: complete the row"));
  const InputError nan = workload_error(kHeader + "2\n" + kRow + "b -1 1.5 NONE 0 1 NONE 0 1 NONE 0 1\n", 4);
  EXPECT_TRUE(mentions(nan, "column 3 (fwd compute time (ns)) is \"1.5\", not a whole non-negative number"));
  EXPECT_TRUE(mentions(nan, "fix: write a whole number there"));
  EXPECT_TRUE(mentions(workload_error(kHeader + "1\na -1 1 ALLREDUCE 1MB 1 NONE 0 1 NONE 0 1\n", 3),
                       "column 5 (fwd comm size (bytes)) is \"1MB\""));
  EXPECT_TRUE(mentions(workload_error(kHeader + "1\na -1 1 ALLREDUCE 8 -1 NONE 0 1 NONE 0 1\n", 3),
                       "column 6 (ig compute time (ns)) is \"-1\""));
  EXPECT_TRUE(mentions(workload_error(kHeader + "1\na x 1 ALLREDUCE 8 1 NONE 0 1 NONE 0 1\n", 3),
                       "column 2 (depen) is \"x\", not an integer"));
  // Digits past 2^64 - 1: out of range, not "not a whole number" (it said so).
  EXPECT_TRUE(mentions(workload_error(kHeader + "1\na -1 1 ALLREDUCE 99999999999999999999 1 NONE 0 1 NONE 0 1\n", 3),
                       "column 5 (fwd comm size (bytes)) is \"99999999999999999999\", larger than 18446744073709551615"));
  // A missing field shifts the row: the first field that cannot be a number is on the next line, so
  // the error names the short line the row starts on (it named line 4, where "layer" is).
  const InputError shifted = workload_error(kHeader + "2\na -1 1 ALLREDUCE 8 1 NONE 0 1 NONE 0\n" + kRow, 3);
  EXPECT_TRUE(mentions(shifted, "row 1 has 11 of its 12 fields on this line and goes on to line 4, where column 12 "
                                "(update time (ns)) is \"layer\""));
  EXPECT_TRUE(mentions(shifted, "fix: a field missing on this line shifts the rest of the row onto the next"));
  // A row split over two lines on purpose (SimAI reads tokens, not lines) with a bad field on its second
  // line: the message names both lines.
  EXPECT_TRUE(mentions(workload_error(kHeader + "1\na -1 1 ALLREDUCE\n8 1 NONE 0 1 NONE x 1\n", 3),
                       "row 1 has 4 of its 12 fields on this line and goes on to line 4, where column 11"));
}

}  // namespace
