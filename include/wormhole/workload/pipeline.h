// Pipeline parallelism's per-stage programs (docs/workloads.md §1.8): the micro-batches and model
// chunks found in a workload's rows, and the order in which a stage runs their forwards, backwards,
// sends and receives under Megatron-LM's schedules (1F1B, interleaved 1F1B) or GPipe.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "wormhole/workload/collectives.h"
#include "wormhole/workload/simai_workload.h"

namespace wh {

/// The rows of each micro-batch of a pipelined workload: SimAI / AICB files list one stage's rows for
/// all `ga` micro-batches in turn, between a prologue and an epilogue that run once per iteration.
/// With an interleaved schedule, each micro-batch's rows are further cut into model chunks.
struct MicroBatches {
  uint32_t prologue_end = 0;                          ///< rows [0, prologue_end) come first
  std::vector<std::pair<uint32_t, uint32_t>> rows;    ///< per micro-batch: rows [first, end)
  uint32_t epilogue_begin = 0;                        ///< rows [epilogue_begin, L) come last
  /// Model chunk c of micro-batch k is rows [rows[k].first + chunk_offset[c], rows[k].first +
  /// chunk_offset[c + 1]); v chunks have v + 1 offsets. Empty: one chunk, the whole micro-batch.
  std::vector<uint32_t> chunk_offset;
  uint32_t chunks() const { return chunk_offset.empty() ? 1 : static_cast<uint32_t>(chunk_offset.size() - 1); }
  /// Rows [first, end) of chunk `c` of micro-batch `k`.
  std::pair<uint32_t, uint32_t> chunk_rows(uint32_t k, uint32_t c) const {
    if (chunk_offset.empty()) return rows[k];
    return {rows[k].first + chunk_offset[c], rows[k].first + chunk_offset[c + 1]};
  }
};

/// Finds the micro-batches: with ga = 1 every row is the one micro-batch; otherwise the earliest
/// row name that occurs exactly ga times, at equal spacing P, starts each micro-batch, and micro-
/// batch k is the P rows from its k-th occurrence (GPT-13B: embedding_layer, 83 rows, rows 3..1330;
/// prologue grad_norm, moe_grad_norm1/2; epilogue cross_entropy1..3, optimizer1..4).
/// Throws std::invalid_argument when no row name repeats so (the message says how to fix it).
MicroBatches find_micro_batches(const Workload& w, uint32_t ga);

/// Cuts every micro-batch of `mb` into `v` model chunks of whole transformer layers (v >= 2), as
/// Megatron-LM's interleaved schedule gives each stage v chunks of layers/v consecutive layers.
/// The layers are found in micro-batch 0: the earliest row name that occurs n times at equal spacing q
/// with n a multiple of v starts each of its n layers (GPT-13B: attention_column, 20 layers of 4 rows);
/// chunk c holds layers [c·n/v, (c+1)·n/v), chunk 0 also the rows before the first layer (the
/// embedding) and chunk v-1 those after the last (the final norm). Every micro-batch must have the same
/// row names (it is checked). Throws std::invalid_argument (what is wrong and how to fix it) when no
/// row name repeats so.
void split_into_chunks(const Workload& w, MicroBatches& mb, uint32_t v);

/// One step of a GPU's program for one iteration.
struct ProgramStep {
  enum Kind : uint8_t { Fwd, Bwd, SendAct, RecvAct, SendGrad, RecvGrad } kind = Fwd;
  uint32_t arg = 0;    ///< Fwd / Bwd: the row; the others: the micro-batch
  uint32_t chunk = 0;  ///< sends and receives: the model chunk of the step that sends or receives (0 if not interleaved)
};

/// The program of pipeline stage `stage` of `layout.pp` stages (docs/workloads.md §1.8). PP 1 → forward
/// rows 0..L-1 then backward rows L-1..0 (SimAI). PP > 1 → the prologue's forward rows; then forwards
/// F(k, c) = [RecvAct unless virtual stage 0] fwd rows of chunk c of micro-batch k [SendAct unless the
/// last virtual stage] and backwards B(k, c) = [RecvGrad unless the last virtual stage] bwd rows of the
/// chunk reversed [SendGrad unless virtual stage 0], where chunk c of stage s is virtual stage c·PP + s
/// (one chunk unless mb has chunks), ordered as
///  * 1F1B (Megatron-LM's forward_backward_pipelining_without_interleaving): warm-up min(PP-s-1, m)
///    forwards, then F/B pairs, then the remaining backwards;
///  * interleaved 1F1B (forward_backward_pipelining_with_interleaving; mb has v >= 2 chunks and m a
///    multiple of PP): of the m·v forwards, the k-th is chunk (k mod PP·v) div PP of micro-batch
///    (k div PP·v)·PP + k mod PP, the backwards likewise with chunks counted down from v-1; warm-up
///    min((PP-s-1)·2 + (v-1)·PP, m·v) forwards (all of them when m = PP), F/B pairs, the rest;
///  * GPipe: all F in order, then B from the last micro-batch down;
/// then the epilogue's forward and backward rows (GPipe: after the forwards), the prologue's backward
/// rows last. Throws std::invalid_argument for an interleaved schedule whose m is not a multiple of PP.
std::vector<ProgramStep> stage_program(const Workload& w, const GroupLayout& layout, const MicroBatches& mb,
                                       PipelineSchedule schedule, uint32_t stage);

/// The stage a pipeline transfer goes to from `stage` (of `pp`): activations forward to stage + 1, or
/// from the last stage to stage 0 (the next model chunk); gradients back to stage - 1, or from stage 0
/// to the last stage (the previous chunk). The receiving step's chunk is `chunk` (the sender's), + 1 at
/// the wrap forward, - 1 at the wrap back.
inline std::pair<uint32_t, uint32_t> pipeline_next(uint32_t pp, uint32_t stage, uint32_t chunk, bool grad) {
  if (!grad) return stage + 1 < pp ? std::make_pair(stage + 1, chunk) : std::make_pair(0u, chunk + 1);
  return stage > 0 ? std::make_pair(stage - 1, chunk) : std::make_pair(pp - 1, chunk - 1);
}

/// The stage and chunk a transfer to (`stage`, `chunk`) comes from: the inverse of pipeline_next.
inline std::pair<uint32_t, uint32_t> pipeline_prev(uint32_t pp, uint32_t stage, uint32_t chunk, bool grad) {
  if (!grad) return stage > 0 ? std::make_pair(stage - 1, chunk) : std::make_pair(pp - 1, chunk - 1);
  return stage + 1 < pp ? std::make_pair(stage + 1, chunk) : std::make_pair(0u, chunk + 1);
}

}  // namespace wh
