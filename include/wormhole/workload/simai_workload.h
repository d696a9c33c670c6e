// SimAI / AICB workload files (docs/workloads.md §1): parsing only. Turning the
// collectives into flows is the job of a later stage.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace wh {

/// The collective of one phase of a workload row (docs/workloads.md §1.4).
enum class Collective { None, AllReduce, AllGather, ReduceScatter, AllToAll };

/// The communication group a collective runs in. None on a real collective means "a known op with
/// an unknown suffix" (SimAI gives it no group either).
enum class CommGroup { None, TP, DP, EP, DP_EP };

/// "None", "AllReduce", ... / "None", "TP", "DP", "EP", "DP_EP".
const char* to_string(Collective c);
const char* to_string(CommGroup g);

/// One phase's communication: what, in which group, how many bytes per rank.
struct CommOp {
  Collective op = Collective::None;
  CommGroup group = CommGroup::None;
  uint64_t bytes = 0;  ///< per-rank collective buffer, bytes; 0 whenever op is None
  std::string raw;     ///< the comm-type string as written ("ALLTOALL_EP", "NONE", "BROADCAST", ...)
};

/// One row of the workload (a "layer" in SimAI's words; names repeat across micro-batches).
struct WorkloadLayer {
  std::string name;
  int depen = -1;               ///< column 2; read but unused by SimAI's scheduling
  uint64_t fwd_compute_ns = 0;  ///< forward compute, ns (1 or 0 = "not profiled" in AICB output)
  uint64_t ig_compute_ns = 0;   ///< input-gradient compute, ns
  uint64_t wg_compute_ns = 0;   ///< weight-gradient compute, ns
  uint64_t update_ns = 0;       ///< delay after each of the row's collectives completes, ns
  CommOp fwd, ig, wg;           ///< fwd sizes of 1..4095 B already raised to 4096 (see reader)
  int line = 0;                 ///< 1-based line of the row's first token (for messages)
};

/// Line 1 of the file.
struct WorkloadHeader {
  std::string policy;  ///< token 0, e.g. "HYBRID_TRANSFORMER_FWD_IN_BCKWD", "MICRO"
  /// Parallelism from the key: value pairs (read only for the HYBRID_TRANSFORMER* policies).
  /// Missing keys default to 1; a 0 written in the file is kept (SimAI: TP 0 = all GPUs).
  uint32_t tp = 1, ep = 1, pp = 1, vpp = 1, ga = 1;
  uint32_t all_gpus = 0;       ///< 0 = not given: take the GPU count from the topology
  uint64_t pp_comm_bytes = 0;  ///< `pp_comm` / `pp_comm:` value, bytes (float text truncated)
  bool micro = false;          ///< policy is MICRO (key: value pairs ignored)
  /// Non-fatal findings, each "FILE:LINE: text": SimAI's "format mismatch" cases (§1.1), a
  /// declared row count that disagrees with the rows present, unknown comm types.
  std::vector<std::string> warnings;
};

struct Workload {
  WorkloadHeader header;
  std::vector<WorkloadLayer> layers;
  std::string file;  ///< the path it was read from
};

/// Fwd-column sizes of 1..kMinFwdCommBytes-1 bytes are issued as kMinFwdCommBytes by SimAI's
/// HYBRID_TRANSFORMER_FWD_IN_BCKWD loop (docs/workloads.md §1.5 quirk 5); ig and wg sizes are not.
inline constexpr uint64_t kMinFwdCommBytes = 4096;

/// Decodes a comm-type string and its size as SimAI does (docs/workloads.md §1.4): prefix match in
/// the order ALLREDUCE, ALLTOALL, ALLREDUCEALLTOALL (unreachable), ALLGATHER, REDUCESCATTER; then the
/// exact string picks the group: the bare op is TP in the fwd/ig columns and DP in the wg column
/// (`wg_column`), `<OP>_EP` is EP and `<OP>_DP_EP` is DP_EP in every column, any other suffix gives
/// the op with group None. NONE, BROADCAST and anything else, and any size 0, give op None with
/// 0 bytes (raw keeps the string). Does NOT apply the fwd tiny-size rule (the reader does). No errors.
CommOp parse_comm(const std::string& type, uint64_t size, bool wg_column);

/// Reads a SimAI/AICB workload file (docs/workloads.md §1):
///  * line 1 = header, split on any whitespace; token 0 is the policy, which must be one SimAI knows
///    (DATA, HYBRID_TRANSFORMER, HYBRID_TRANSFORMER_FWD_IN_BCKWD, HYBRID_DLRM, HYBRID_DLRM_ENHANCED,
///    MODEL, HYBRID_DATA_MODEL, HYBRID_MODEL_DATA, HYBRID_CUSTOMIZED, MICRO, DISTRIBUTED_INFERENCE).
///    The pairs `model_parallel_NPU_group:` (TP), `ep:`, `pp:`, `vpp:`, `ga:`, `all_gpus:` are read
///    only for HYBRID_TRANSFORMER*; `pp_comm` / `pp_comm:` for every policy (as SimAI). Values may be
///    written as floats ("8388608.0"): the integer part is used, as SimAI's stoi does. Unknown tokens
///    are ignored. SimAI's "format mismatch" conditions become warnings.
///  * line 2 = the row count L (only that token on the line);
///  * then L rows of 12 whitespace-separated fields (13 for HYBRID_CUSTOMIZED: the per-row policy,
///    skipped), line structure ignored; tabs, spaces, CRLF and a missing final newline are all fine.
///  * Fewer complete rows than L (an AICB file says 839, has 33): the rows present are kept and a
///    warning names both counts (SimAI would read past the end of the file). Tokens left after L rows
///    are ignored with a warning (SimAI ignores them silently).
///  * A fwd-column collective of 1..4095 B is stored as 4096 B (kMinFwdCommBytes), as SimAI issues it.
/// Throws InputError (file, line, problem, fix) when the file cannot be read, is empty, names an
/// unknown policy (line 1, listing the known ones), has a header key without a valid non-negative
/// number, has no valid row count on line 2, has a non-numeric number in a row (the row's line and
/// column), or ends inside a row (fewer than 12 fields in the last row).
Workload read_simai_workload(const std::string& path);

}  // namespace wh
