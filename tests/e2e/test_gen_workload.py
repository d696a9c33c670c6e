#!/usr/bin/python3
"""scripts/gen_gpt_workload.py: given AICB's parameter count, it writes the shipped GPT-7B and GPT-13B
workload files byte for byte (AICB wrote those); without it, Megatron's estimate; MoE layers (expert
parallelism) with known-answer sizes; bad sizes are refused."""
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SOURCE_DIR = Path(os.environ.get("WH_SOURCE_DIR", Path(__file__).resolve().parents[2]))
SCRIPT = SOURCE_DIR / "scripts" / "gen_gpt_workload.py"


class GenWorkload(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="wh_e2e_gen_")
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def gen(self, *args):
        return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)

    def test_reproduces_the_shipped_aicb_files(self):
        for shipped, args in [
            ("workload_gpt13b_128g.txt", ["--layers", "40", "--hidden", "5120", "--pp", "2", "--gpus", "128",
                                          "--ga", "16", "--params-per-gpu", "785653760"]),
            ("workload_gpt7b_64g.txt", ["--layers", "32", "--hidden", "4096", "--gpus", "64", "--ga", "8",
                                        "--params-per-gpu", "764674048"]),
            # ours, not AICB's: the command in the file's scenario, deepseek16b-128g.toml
            ("workload_deepseek16b_128g.txt", ["--layers", "28", "--hidden", "2048", "--seq", "4096", "--vocab",
                                               "102400", "--tp", "1", "--gpus", "128", "--experts", "64", "--topk",
                                               "6", "--ep", "16", "--moe-ffn", "1408", "--shared-experts", "2",
                                               "--dense-layers", "1", "--ffn", "10944"]),
        ]:
            with self.subTest(shipped=shipped):
                out = self.dir / shipped
                p = self.gen(*args, "-o", str(out))
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(out.read_bytes(), (SOURCE_DIR / "inputs" / "llm" / shipped).read_bytes())

    def test_megatron_estimate_of_the_parameters(self):
        # GPT-175B-style, TP 8: 96 layers of (12 * 12288^2 + 13 * 12288) / 8 plus (50257 + 2048) * 12288 / 8.
        out = self.dir / "w.txt"
        p = self.gen("--layers", "96", "--hidden", "12288", "--gpus", "1024", "--ga", "2", "-o", str(out))
        self.assertEqual(p.returncode, 0, p.stderr)
        params = 96 * (12 * 12288 * 12288 + 13 * 12288) // 8 + (50257 + 2048) * 12288 // 8
        self.assertEqual(params, 21_745_188_864 + 80_340_480)  # by hand: 173,961,510,912 / 8 + 642,723,840 / 8
        lines = out.read_text().splitlines()
        self.assertEqual(lines[0], "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 96 "
                                   "ga: 2 all_gpus: 1024 checkpoints: 0 checkpoint_initiates: 0 pp_comm: 0")
        self.assertEqual(int(lines[1]), 3 + 2 * (1 + 4 * 96 + 2) + 7)
        self.assertEqual(lines[2].split("\t")[4], str(2 * params))
        self.assertEqual(lines[2].split("\t")[10], str(4 * params))
        self.assertEqual(lines[6].split("\t")[4], str(2 * 2048 * 12288))  # attention_column AllGather

    def test_moe_layers_and_parameters(self):
        # Two layers (the first dense), hidden 64, TP 2, EP 4 of 16 GPUs (DP 8), 8 experts of FFN 32 + 1 shared,
        # top 2. By hand, a GPU's dense parameters: (2 layers' attention 2 (4 * 64^2 + 4 * 64) = 33,280 + the
        # dense MLP 3 * 64 * 256 = 49,152 + the shared expert 3 * 64 * 32 = 6,144 + the router 64 * 8 = 512 + the
        # embedding and output layer 2 * 1000 * 64 = 128,000) / TP 2 = 108,544; its experts' (8 / 4 experts of
        # 3 * 64 * 32) / 2 = 6,144.
        out = self.dir / "moe.txt"
        p = self.gen("--layers", "2", "--hidden", "64", "--seq", "128", "--vocab", "1000", "--tp", "2",
                     "--gpus", "16", "--experts", "8", "--topk", "2", "--ep", "4", "--moe-ffn", "32",
                     "--shared-experts", "1", "--dense-layers", "1", "--ffn", "256", "-o", str(out))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("24 rows, 108544 parameters a GPU and 6144 of experts, EP 4, DP 8", p.stdout)
        rows = [line.split("\t") for line in out.read_text().splitlines()]
        self.assertEqual(rows[0][0], "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 4 pp: 1 vpp: 2 "
                                     "ga: 1 all_gpus: 16 checkpoints: 0 checkpoint_initiates: 0 pp_comm: 0")
        # grad_norm 2 / 4 bytes a dense parameter over DP; the experts' over DP_EP
        self.assertEqual((rows[2][3], rows[2][4], rows[2][9], rows[2][10]),
                         ("ALLGATHER", "217088", "REDUCESCATTER", "434176"))
        self.assertEqual(rows[3][9:11], ["ALLGATHER_DP_EP", "12288"])
        self.assertEqual(rows[4][9:11], ["REDUCESCATTER_DP_EP", "24576"])
        # layer 0 dense (rows 6-9), layer 1: attention, then the MoE rows. tp_bytes = 2 * 128 * 64 = 16,384;
        # a dispatch / combine carries tp_bytes * topk / TP = 16,384; the TP pair tp_bytes * topk = 32,768.
        self.assertEqual([r[0] for r in rows[6:17]], ["attention_column", "attention_row", "mlp_column", "mlp_row",
                                                      "attention_column", "attention_row"] + ["mlp_moelayer"] * 5)
        moe = [(r[3], r[4], r[6], r[7]) for r in rows[12:17]]
        self.assertEqual(moe, [("ALLGATHER_EP", "128", "NONE", "0"),
                               ("ALLTOALL_EP", "16384", "ALLTOALL_EP", "16384"),
                               ("ALLGATHER", "32768", "REDUCESCATTER", "32768"),
                               ("REDUCESCATTER", "32768", "ALLGATHER", "32768"),
                               ("ALLTOALL_EP", "16384", "ALLTOALL_EP", "16384")])

    def test_moe_at_ep_1_writes_no_all_to_all(self):
        # AICB's rule: no dispatch or combine at EP 1; the EP AllGather only with TP > 1.
        for tp, gather in (("1", "NONE"), ("2", "ALLGATHER_EP")):
            with self.subTest(tp=tp):
                out = self.dir / f"ep1_{tp}.txt"
                p = self.gen("--layers", "2", "--hidden", "64", "--tp", tp, "--gpus", "16", "--experts", "4",
                             "-o", str(out))
                self.assertEqual(p.returncode, 0, p.stderr)
                rows = [line.split("\t") for line in out.read_text().splitlines()[2:]]
                moe = [r for r in rows if r[0] == "mlp_moelayer"]
                self.assertEqual(len(moe), 10)
                self.assertEqual({r[3] for r in moe[0::5]}, {gather})
                self.assertEqual({(r[3], r[6]) for r in moe[1::5] + moe[4::5]}, {("NONE", "NONE")})

    def test_moe_at_tp_1_writes_no_tp_collective(self):
        out = self.dir / "moe1.txt"
        p = self.gen("--layers", "2", "--hidden", "64", "--tp", "1", "--gpus", "16", "--experts", "8", "--ep", "8",
                     "-o", str(out))
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = [line.split("\t") for line in out.read_text().splitlines()[2:]]
        ops = {r[k] for r in rows if not r[0].startswith(("grad_norm", "moe_grad", "cross_entropy", "optimizer"))
               for k in (3, 6, 9)}
        self.assertEqual(ops, {"NONE", "ALLGATHER_EP", "ALLTOALL_EP"})

    def test_bad_sizes_refused(self):
        p = self.gen("--layers", "30", "--hidden", "64", "--pp", "4", "--gpus", "32", "-o", str(self.dir / "x"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("--layers 30 must be a multiple of --pp 4", p.stderr)
        p = self.gen("--layers", "4", "--hidden", "64", "--gpus", "12", "-o", str(self.dir / "x"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("must be a multiple of tp * pp = 8", p.stderr)
        for args, message in [(["--experts", "6", "--ep", "4"], "--experts 6 must be a multiple of --ep 4"),
                              (["--ep", "2"], "--ep: MoE options, which need --experts"),
                              (["--topk", "2", "--ffn", "64"], "--topk, --ffn: MoE options, which need --experts"),
                              (["--experts", "8", "--moe-ffn", "-32"], "--moe-ffn must be at least 1"),
                              (["--experts", "8", "--ffn", "0"], "--ffn must be at least 1"),
                              (["--experts", "8", "--dense-layers", "4"], "--dense-layers 4 must be below --layers 4"),
                              (["--experts", "8", "--ep", "8", "--tp", "4"], "--ep 8 must divide the DP size 4"),
                              (["--experts", "4", "--topk", "6"], "--topk 6 must not exceed --experts 4")]:
            with self.subTest(args=args):
                p = self.gen("--layers", "4", "--hidden", "64", "--gpus", "16", "--tp", "2", *args,
                             "-o", str(self.dir / "x"))
                self.assertEqual(p.returncode, 2)
                self.assertIn(message, p.stderr)
        self.assertFalse((self.dir / "x").exists())


if __name__ == "__main__":
    unittest.main(verbosity=2)
