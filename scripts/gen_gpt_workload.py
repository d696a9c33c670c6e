#!/usr/bin/env python3
r"""Writes a SimAI workload file (AICB's HYBRID_TRANSFORMER_FWD_IN_BCKWD text format) for a Megatron GPT model
with tensor and sequence parallelism, as AICB's SimAI_training_workload_generator lays one out; with
--experts, a mixture-of-experts model in the DeepSeekMoE style (expert parallelism, below).

Rows: grad_norm (the DP gradient AllGather and ReduceScatter: 2 and 4 bytes a parameter), the two MoE rows
(empty), then per micro-batch an embedding row, four rows a layer (attention and MLP column AllGather, row
ReduceScatter; 2 * micro_batch * seq * hidden bytes each), the final column and the embedding AllReduce
(2 * vocab * hidden bytes), then the loss and optimizer AllReduces. Compute times are 1 ns, as AICB writes
them without a profile: the iteration is communication only.

The parameters per GPU are AICB's count of its mocked model when --params-per-gpu gives them (the shipped
GPT-7B and GPT-13B files are reproduced byte for byte that way, tests/e2e/test_gen_workload.py); otherwise
Megatron's estimate (Narayanan et al., SC'21, eq. 2, per tensor-parallel rank): the stage's layers of
(12 h^2 + 13 h) / tp each, plus the first stage's word and position embeddings (vocab + seq) * h / tp.

Mixture of experts (--experts E, with --topk, --ep, --moe-ffn, --shared-experts, --dense-layers, --ffn): the
first --dense-layers layers have a dense MLP, the others a MoE layer of E routed experts (E / EP on each GPU
of an EP group) and the shared experts, all gated (SwiGLU: 3 h f parameters an MLP of hidden f). A MoE
layer's rows are AICB's (Megatron core 0.13's token dispatcher): an EP AllGather of the routing metadata
(2 EP E TP bytes), the dispatch AllToAll_EP (2 micro_batch seq h topk / TP bytes), the TP AllGather and
ReduceScatter of the experts' tokens (2 micro_batch seq h topk bytes; none at TP 1), the combine AllToAll_EP;
backward the same in reverse; at EP 1 no dispatch or combine, at EP 1 and TP 1 no metadata AllGather.
Parameters a GPU: per layer attention 4 h^2 + 4 h, the MLP (dense, or the
shared experts plus the router's h E), the word embedding and the untied output layer (2 vocab h), all / TP,
reduced over the DP group (grad_norm); the routed experts' (L - dense) (E / EP) 3 h moe_ffn / TP over the
DP_EP group (moe_grad_norm1 and 2).

Examples:
  # a GPT-175B-style model on 1,024 GPUs, TP 8, DP 128, two micro-batches
  scripts/gen_gpt_workload.py --layers 96 --hidden 12288 --tp 8 --gpus 1024 --ga 2 -o workload_gpt175b_1024g.txt
  # a DeepSeekMoE-16B-style model (28 layers, 64 experts + 2 shared, top 6) on 128 GPUs, TP 1, EP 16
  scripts/gen_gpt_workload.py --layers 28 --hidden 2048 --seq 4096 --vocab 102400 --tp 1 --gpus 128 \
      --experts 64 --topk 6 --ep 16 --moe-ffn 1408 --shared-experts 2 --dense-layers 1 --ffn 10944 \
      -o workload_deepseek16b_128g.txt
"""
import argparse
import sys


def params_per_gpu(layers, hidden, vocab, seq, tp, pp):
    per_layer = 12 * hidden * hidden + 13 * hidden
    return (layers // pp) * per_layer // tp + (vocab + seq) * hidden // tp


def moe_params_per_gpu(a):
    """(dense, expert) parameters a GPU of a MoE model (the module docstring's count), PP 1."""
    h, moe_layers = a.hidden, a.layers - a.dense_layers
    dense = (a.layers * (4 * h * h + 4 * h) + a.dense_layers * 3 * h * a.ffn
             + moe_layers * (a.shared_experts * 3 * h * a.moe_ffn + h * a.experts) + 2 * a.vocab * h) // a.tp
    expert = moe_layers * (a.experts // a.ep) * 3 * h * a.moe_ffn // a.tp
    return dense, expert


def tp_op(a, op):
    """A TP collective's type; NONE at TP 1, as AICB writes it (the size stays)."""
    return "NONE" if a.tp == 1 else op


def moe_rows(a, tp_bytes):
    """A MoE layer's five rows, AICB's layout (module docstring), its NONEs at EP 1 and TP 1 included."""
    tokens = tp_bytes * a.topk // a.tp
    a2a = "NONE" if a.ep == 1 else "ALLTOALL_EP"  # AICB: no dispatch or combine at EP 1
    gather = "NONE" if a.ep == 1 and a.tp == 1 else "ALLGATHER_EP"
    return [("mlp_moelayer", gather, 2 * a.ep * a.experts * a.tp, "NONE", 0, "NONE", 0, 1),
            ("mlp_moelayer", a2a, tokens, a2a, tokens, "NONE", 0, 1),
            ("mlp_moelayer", tp_op(a, "ALLGATHER"), tp_bytes * a.topk, tp_op(a, "REDUCESCATTER"), tp_bytes * a.topk,
             "NONE", 0, 1),
            ("mlp_moelayer", tp_op(a, "REDUCESCATTER"), tp_bytes * a.topk, tp_op(a, "ALLGATHER"), tp_bytes * a.topk,
             "NONE", 0, 1),
            ("mlp_moelayer", a2a, tokens, a2a, tokens, "NONE", 0, 1)]


def rows(a, params, expert_params=0):
    tp_bytes = 2 * a.micro_batch * a.seq * a.hidden
    out = [("grad_norm", "ALLGATHER", 2 * params, "NONE", 0, "REDUCESCATTER", 4 * params, 1),
           ("moe_grad_norm1", "NONE", 0, "NONE", 0, "ALLGATHER_DP_EP", 2 * expert_params, 1),
           ("moe_grad_norm2", "NONE", 0, "NONE", 0, "REDUCESCATTER_DP_EP", 4 * expert_params, 1)]
    for _ in range(a.ga):
        out.append(("embedding_layer", "NONE", tp_bytes, "NONE", tp_bytes, "NONE", 0, 1))
        for layer in range(a.layers // a.pp):
            out.append(("attention_column", tp_op(a, "ALLGATHER"), tp_bytes, "NONE", 0, "NONE", 0, 1))
            out.append(("attention_row", tp_op(a, "REDUCESCATTER"), tp_bytes, "NONE", tp_bytes, "NONE", 0, 1))
            if a.experts and layer >= a.dense_layers:
                out.extend(moe_rows(a, tp_bytes))
                continue
            out.append(("mlp_column", tp_op(a, "ALLGATHER"), tp_bytes, "NONE", 0, "NONE", 0, 1))
            out.append(("mlp_row", tp_op(a, "REDUCESCATTER"), tp_bytes, "NONE", tp_bytes, "NONE", 0, 1))
        out.append(("final_column", tp_op(a, "ALLGATHER"), tp_bytes, "NONE", 0, "NONE", 0, 1))
        out.append(("embedding_norm", tp_op(a, "ALLREDUCE"), 2 * a.vocab * a.hidden, "NONE", 0, "NONE", 0, 1))
    for k in (1, 2, 3):
        out.append((f"cross_entropy{k}", "ALLREDUCE", 4 * a.micro_batch * a.seq, "NONE", 0, "NONE", 0, 0))
    for k in (1, 2, 3, 4):
        out.append((f"optimizer{k}", "ALLREDUCE", 4, "NONE", 0, "NONE", 0, 0))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--layers", type=int, required=True, help="transformer layers")
    p.add_argument("--hidden", type=int, required=True, help="hidden size")
    p.add_argument("--seq", type=int, default=2048, help="sequence length (default 2048)")
    p.add_argument("--vocab", type=int, default=50257, help="vocabulary size (default 50257, GPT-2's)")
    p.add_argument("--tp", type=int, default=8, help="tensor-parallel size (default 8)")
    p.add_argument("--pp", type=int, default=1, help="pipeline stages (default 1)")
    p.add_argument("--gpus", type=int, required=True, help="GPUs of the job (DP = gpus / (tp * pp))")
    p.add_argument("--ga", type=int, default=1, help="micro-batches an iteration (gradient accumulation)")
    p.add_argument("--micro-batch", type=int, default=1, help="sequences a micro-batch (default 1)")
    p.add_argument("--params-per-gpu", type=int, help="parameters per GPU (default: Megatron's estimate)")
    p.add_argument("--experts", type=int, default=0, help="routed experts a MoE layer (default 0: a dense GPT)")
    p.add_argument("--topk", type=int, help="experts a token is routed to (default 2)")
    p.add_argument("--ep", type=int, default=1, help="expert-parallel size (default 1)")
    p.add_argument("--moe-ffn", type=int, help="an expert's FFN hidden size (default --ffn, as Megatron's "
                                                "moe_ffn_hidden_size)")
    p.add_argument("--shared-experts", type=int, default=0, help="shared experts a MoE layer (default 0)")
    p.add_argument("--dense-layers", type=int, default=0, help="first layers with a dense MLP (default 0)")
    p.add_argument("--ffn", type=int, help="the dense MLP's hidden size (default 4 * hidden)")
    p.add_argument("-o", "--output", required=True, help="the workload file to write")
    a = p.parse_args()
    for name in ("layers", "hidden", "seq", "vocab", "tp", "pp", "gpus", "ga", "micro_batch", "ep"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    for name in ("topk", "moe_ffn", "ffn"):
        if getattr(a, name) is not None and getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    for name in ("experts", "shared_experts", "dense_layers"):
        if getattr(a, name) < 0:
            p.error(f"--{name.replace('_', '-')} must not be negative")
    if a.layers % a.pp:
        p.error(f"--layers {a.layers} must be a multiple of --pp {a.pp}")
    if a.gpus % (a.tp * a.pp):
        p.error(f"--gpus {a.gpus} must be a multiple of tp * pp = {a.tp * a.pp}")
    if a.experts:
        a.topk = a.topk or 2
        a.ffn = a.ffn or 4 * a.hidden
        a.moe_ffn = a.moe_ffn or a.ffn
        if a.pp != 1:
            p.error("--experts: only --pp 1 is written for a MoE model")
        if a.experts % a.ep:
            p.error(f"--experts {a.experts} must be a multiple of --ep {a.ep}")
        if a.topk > a.experts:
            p.error(f"--topk {a.topk} must not exceed --experts {a.experts}")
        if (a.gpus // a.tp) % a.ep:
            p.error(f"--ep {a.ep} must divide the DP size {a.gpus // a.tp} (gpus / tp)")
        if a.dense_layers >= a.layers:
            p.error(f"--dense-layers {a.dense_layers} must be below --layers {a.layers} (a MoE model has MoE layers)")
    else:
        given = [f"--{n.replace('_', '-')}" for n in ("topk", "moe_ffn", "ffn") if getattr(a, n) is not None]
        given += [f"--{n.replace('_', '-')}" for n in ("ep", "dense_layers", "shared_experts")
                  if getattr(a, n) != (1 if n == "ep" else 0)]
        if given:
            p.error(f"{', '.join(given)}: MoE options, which need --experts")
    if a.experts:
        params, expert_params = moe_params_per_gpu(a)
        params = a.params_per_gpu or params
    else:
        params = a.params_per_gpu or params_per_gpu(a.layers, a.hidden, a.vocab, a.seq, a.tp, a.pp)
        expert_params = 0
    pp_comm = 0 if a.pp == 1 else 2 * a.micro_batch * a.seq * a.hidden // a.tp
    body = rows(a, params, expert_params)
    lines = [f"HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: {a.tp} ep: {a.ep} pp: {a.pp} "
             f"vpp: {a.layers // a.pp} ga: {a.ga} all_gpus: {a.gpus} checkpoints: 0 checkpoint_initiates: 0 "
             f"pp_comm: {pp_comm}", str(len(body))]
    for name, fc, fs, ic, isz, wc, ws, t in body:
        lines.append("\t".join(str(x) for x in (name, -1, t, fc, fs, t, ic, isz, t, wc, ws, 100)))
    try:
        with open(a.output, "w") as f:
            f.write("\n".join(lines) + "\n")
    except OSError as e:
        sys.exit(f"gen_gpt_workload.py: error: {a.output}: {e.strerror}")
    moe = f" and {expert_params} of experts, EP {a.ep}" if a.experts else ""
    print(f"{a.output}: {len(body)} rows, {params} parameters a GPU{moe}, DP {a.gpus // (a.tp * a.pp)}")


if __name__ == "__main__":
    main()
