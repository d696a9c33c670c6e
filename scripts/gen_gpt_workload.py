#!/usr/bin/env python3
"""Writes a SimAI workload file (AICB's HYBRID_TRANSFORMER_FWD_IN_BCKWD text format) for a Megatron GPT model
with tensor and sequence parallelism, as AICB's SimAI_training_workload_generator lays one out.

Rows: grad_norm (the DP gradient AllGather and ReduceScatter: 2 and 4 bytes a parameter), the two MoE rows
(empty), then per micro-batch an embedding row, four rows a layer (attention and MLP column AllGather, row
ReduceScatter; 2 * micro_batch * seq * hidden bytes each), the final column and the embedding AllReduce
(2 * vocab * hidden bytes), then the loss and optimizer AllReduces. Compute times are 1 ns, as AICB writes
them without a profile: the iteration is communication only.

The parameters per GPU are AICB's count of its mocked model when --params-per-gpu gives them (the shipped
GPT-7B and GPT-13B files are reproduced byte for byte that way, tests/e2e/test_gen_workload.py); otherwise
Megatron's estimate (Narayanan et al., SC'21, eq. 2, per tensor-parallel rank): the stage's layers of
(12 h^2 + 13 h) / tp each, plus the first stage's word and position embeddings (vocab + seq) * h / tp.

Example (a GPT-175B-style model on 1,024 GPUs, TP 8, DP 128, two micro-batches):
  scripts/gen_gpt_workload.py --layers 96 --hidden 12288 --tp 8 --gpus 1024 --ga 2 -o workload_gpt175b_1024g.txt
"""
import argparse
import sys


def params_per_gpu(layers, hidden, vocab, seq, tp, pp):
    per_layer = 12 * hidden * hidden + 13 * hidden
    return (layers // pp) * per_layer // tp + (vocab + seq) * hidden // tp


def rows(a, params):
    tp_bytes = 2 * a.micro_batch * a.seq * a.hidden
    out = [("grad_norm", "ALLGATHER", 2 * params, "NONE", 0, "REDUCESCATTER", 4 * params, 1),
           ("moe_grad_norm1", "NONE", 0, "NONE", 0, "ALLGATHER_DP_EP", 0, 1),
           ("moe_grad_norm2", "NONE", 0, "NONE", 0, "REDUCESCATTER_DP_EP", 0, 1)]
    for _ in range(a.ga):
        out.append(("embedding_layer", "NONE", tp_bytes, "NONE", tp_bytes, "NONE", 0, 1))
        for _ in range(a.layers // a.pp):
            out.append(("attention_column", "ALLGATHER", tp_bytes, "NONE", 0, "NONE", 0, 1))
            out.append(("attention_row", "REDUCESCATTER", tp_bytes, "NONE", tp_bytes, "NONE", 0, 1))
            out.append(("mlp_column", "ALLGATHER", tp_bytes, "NONE", 0, "NONE", 0, 1))
            out.append(("mlp_row", "REDUCESCATTER", tp_bytes, "NONE", tp_bytes, "NONE", 0, 1))
        out.append(("final_column", "ALLGATHER", tp_bytes, "NONE", 0, "NONE", 0, 1))
        out.append(("embedding_norm", "ALLREDUCE", 2 * a.vocab * a.hidden, "NONE", 0, "NONE", 0, 1))
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
    p.add_argument("-o", "--output", required=True, help="the workload file to write")
    a = p.parse_args()
    for name in ("layers", "hidden", "seq", "vocab", "tp", "pp", "gpus", "ga", "micro_batch"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if a.layers % a.pp:
        p.error(f"--layers {a.layers} must be a multiple of --pp {a.pp}")
    if a.gpus % (a.tp * a.pp):
        p.error(f"--gpus {a.gpus} must be a multiple of tp * pp = {a.tp * a.pp}")
    params = a.params_per_gpu or params_per_gpu(a.layers, a.hidden, a.vocab, a.seq, a.tp, a.pp)
    pp_comm = 0 if a.pp == 1 else 2 * a.micro_batch * a.seq * a.hidden // a.tp
    body = rows(a, params)
    lines = [f"HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: {a.tp} ep: 1 pp: {a.pp} "
             f"vpp: {a.layers // a.pp} ga: {a.ga} all_gpus: {a.gpus} checkpoints: 0 checkpoint_initiates: 0 "
             f"pp_comm: {pp_comm}", str(len(body))]
    for name, fc, fs, ic, isz, wc, ws, t in body:
        lines.append("\t".join(str(x) for x in (name, -1, t, fc, fs, t, ic, isz, t, wc, ws, 100)))
    try:
        with open(a.output, "w") as f:
            f.write("\n".join(lines) + "\n")
    except OSError as e:
        sys.exit(f"gen_gpt_workload.py: error: {a.output}: {e.strerror}")
    print(f"{a.output}: {len(body)} rows, {params} parameters a GPU, DP {a.gpus // (a.tp * a.pp)}")


if __name__ == "__main__":
    main()
