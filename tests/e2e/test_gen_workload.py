#!/usr/bin/python3
"""scripts/gen_gpt_workload.py: given AICB's parameter count, it writes the shipped GPT-7B and GPT-13B
workload files byte for byte (AICB wrote those); without it, Megatron's estimate; bad sizes are refused."""
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

    def test_bad_sizes_refused(self):
        p = self.gen("--layers", "30", "--hidden", "64", "--pp", "4", "--gpus", "32", "-o", str(self.dir / "x"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("--layers 30 must be a multiple of --pp 4", p.stderr)
        p = self.gen("--layers", "4", "--hidden", "64", "--gpus", "12", "-o", str(self.dir / "x"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("must be a multiple of tp * pp = 8", p.stderr)
        self.assertFalse((self.dir / "x").exists())


if __name__ == "__main__":
    unittest.main(verbosity=2)
