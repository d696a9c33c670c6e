// Pipeline programs (pipeline.h): micro-batches and model chunks in the rows, and the schedules.
#include "wormhole/workload/pipeline.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <string>

namespace wh {

namespace {

/// The earliest row name of rows [begin, end) that occurs n times at equal spacing q with
/// accept(n) (n >= 2): {first occurrence, n, q}, or n = 0 if none.
struct Repeat {
  uint32_t first = 0, n = 0, spacing = 0;
};
template <class Accept>
Repeat find_repeat(const Workload& w, uint32_t begin, uint32_t end, Accept accept) {
  std::map<std::string, std::vector<uint32_t>> at;
  for (uint32_t r = begin; r < end; ++r) at[w.layers[r].name].push_back(r);
  for (uint32_t r = begin; r < end; ++r) {
    const std::vector<uint32_t>& o = at[w.layers[r].name];
    if (o.size() < 2 || o[0] != r || !accept(static_cast<uint32_t>(o.size()))) continue;
    const uint32_t q = o[1] - o[0];
    bool even = true;
    for (size_t k = 1; k < o.size(); ++k) even = even && o[k] - o[k - 1] == q;
    if (even && o.back() + q <= end) return {r, static_cast<uint32_t>(o.size()), q};
  }
  return {};
}

}  // namespace

MicroBatches find_micro_batches(const Workload& w, uint32_t ga) {
  const auto L = static_cast<uint32_t>(w.layers.size());
  MicroBatches mb;
  if (ga <= 1) {
    mb.rows.push_back({0, L});
    mb.epilogue_begin = L;
    return mb;
  }
  const Repeat r = find_repeat(w, 0, L, [&](uint32_t n) { return n == ga; });
  if (r.n == 0)
    throw std::invalid_argument(fmt::format(
        "cannot find the workload's {} micro-batches (ga: {}): no row name occurs exactly {} times at equal spacing",
        ga, ga, ga));
  mb.prologue_end = r.first;
  for (uint32_t k = 0; k < ga; ++k) mb.rows.push_back({r.first + k * r.spacing, r.first + (k + 1) * r.spacing});
  mb.epilogue_begin = r.first + ga * r.spacing;
  return mb;
}

void split_into_chunks(const Workload& w, MicroBatches& mb, uint32_t v) {
  if (v < 2 || mb.rows.empty()) return;
  const auto [begin, end] = mb.rows[0];
  const Repeat layers = find_repeat(w, begin, end, [&](uint32_t n) { return n % v == 0; });
  if (layers.n == 0)
    throw std::invalid_argument(fmt::format(
        "cannot cut a micro-batch (lines {}..{}) into {} model chunks: no row name occurs a multiple of {} times at "
        "equal spacing (one per transformer layer)",
        begin + 3, end + 2, v, v));  // file lines: the header and the row count come first
  const uint32_t per_chunk = layers.n / v * layers.spacing;
  mb.chunk_offset.assign(v + 1, 0);
  for (uint32_t c = 1; c < v; ++c) mb.chunk_offset[c] = layers.first - begin + c * per_chunk;
  mb.chunk_offset[v] = end - begin;
  for (size_t k = 1; k < mb.rows.size(); ++k)
    for (uint32_t i = 0; i < end - begin; ++i)
      if (w.layers[mb.rows[k].first + i].name != w.layers[begin + i].name)
        throw std::invalid_argument(fmt::format(
            "cannot cut the micro-batches into {} model chunks: micro-batch {} (from line {}) differs from micro-batch 0 "
            "at its row {} ({} vs {})",
            v, k, mb.rows[k].first + 3, i, w.layers[mb.rows[k].first + i].name, w.layers[begin + i].name));
}

std::vector<ProgramStep> stage_program(const Workload& w, const GroupLayout& layout, const MicroBatches& mb,
                                       PipelineSchedule schedule, uint32_t stage) {
  using K = ProgramStep::Kind;
  std::vector<ProgramStep> p;
  const auto L = static_cast<uint32_t>(w.layers.size());
  if (layout.pp <= 1) {
    for (uint32_t r = 0; r < L; ++r) p.push_back({K::Fwd, r});
    for (uint32_t r = L; r-- > 0;) p.push_back({K::Bwd, r});
    return p;
  }
  const uint32_t P = layout.pp, v = mb.chunks();
  const auto m = static_cast<uint32_t>(mb.rows.size());
  // Chunk c of this stage is virtual stage c·P + stage: the first receives no activation, the last no gradient.
  const auto first = [&](uint32_t c) { return stage == 0 && c == 0; };
  const auto last = [&](uint32_t c) { return stage + 1 == P && c + 1 == v; };
  auto fwd = [&](uint32_t k, uint32_t c) {
    if (!first(c)) p.push_back({K::RecvAct, k, c});
    const auto [b, e] = mb.chunk_rows(k, c);
    for (uint32_t r = b; r < e; ++r) p.push_back({K::Fwd, r});
    if (!last(c)) p.push_back({K::SendAct, k, c});
  };
  auto bwd = [&](uint32_t k, uint32_t c) {
    if (!last(c)) p.push_back({K::RecvGrad, k, c});
    const auto [b, e] = mb.chunk_rows(k, c);
    for (uint32_t r = e; r-- > b;) p.push_back({K::Bwd, r});
    if (!first(c)) p.push_back({K::SendGrad, k, c});
  };
  auto epilogue = [&] {
    for (uint32_t r = mb.epilogue_begin; r < L; ++r) p.push_back({K::Fwd, r});
    for (uint32_t r = L; r-- > mb.epilogue_begin;) p.push_back({K::Bwd, r});
  };
  for (uint32_t r = 0; r < mb.prologue_end; ++r) p.push_back({K::Fwd, r});
  if (schedule == PipelineSchedule::GPipe) {
    for (uint32_t k = 0; k < m; ++k)
      for (uint32_t c = 0; c < v; ++c) fwd(k, c);
    epilogue();
    for (uint32_t k = m; k-- > 0;)
      for (uint32_t c = v; c-- > 0;) bwd(k, c);
  } else if (v == 1) {
    // Megatron-LM's non-interleaved 1F1B (forward_backward_pipelining_without_interleaving).
    const uint32_t warmup = std::min(P - stage - 1, m);
    for (uint32_t k = 0; k < warmup; ++k) fwd(k, 0);
    for (uint32_t i = 0; i + warmup < m; ++i) {
      fwd(warmup + i, 0);
      bwd(i, 0);
    }
    for (uint32_t k = m - warmup; k < m; ++k) bwd(k, 0);
    epilogue();
  } else {
    // Megatron-LM's interleaved 1F1B (forward_backward_pipelining_with_interleaving): the k-th of the
    // m·v forward (backward) steps runs model chunk get_model_chunk_id(k) of micro-batch
    // (k div P·v)·P + k mod P, in groups of P micro-batches.
    if (m % P != 0)
      throw std::invalid_argument(fmt::format(
          "the interleaved schedule needs micro-batches (ga: {}) in a multiple of the pipeline stages (PP {})", m, P));
    const uint32_t total = m * v;
    const auto micro_batch = [&](uint32_t k) { return k / (P * v) * P + k % P; };
    const auto chunk = [&](uint32_t k, bool forward) {
      const uint32_t c = k % (P * v) / P;
      return forward ? c : v - 1 - c;
    };
    const uint32_t warmup = m == P ? total : std::min((P - stage - 1) * 2 + (v - 1) * P, total);
    for (uint32_t k = 0; k < warmup; ++k) fwd(micro_batch(k), chunk(k, true));
    for (uint32_t i = 0; i + warmup < total; ++i) {
      fwd(micro_batch(warmup + i), chunk(warmup + i, true));
      bwd(micro_batch(i), chunk(i, false));
    }
    for (uint32_t k = total - warmup; k < total; ++k) bwd(micro_batch(k), chunk(k, false));
    epilogue();
  }
  for (uint32_t r = mb.prologue_end; r-- > 0;) p.push_back({K::Bwd, r});
  return p;
}

}  // namespace wh
