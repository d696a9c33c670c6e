#!/usr/bin/python3
"""End-to-end tests of scenarios with several [[job]] entries sharing one fabric (docs/workloads.md §11):
two identical jobs on disjoint servers of a rail fabric each get the single-job result exactly; two jobs
whose traffic crosses the same spine slow each other; background flows; placement errors.
Environment as test_refruns.py (WORMHOLE, WH_SOURCE_DIR)."""
import csv
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from test_workload import run_toml

SOURCE_DIR = Path(os.environ.get("WH_SOURCE_DIR", Path(__file__).resolve().parents[2]))
WORMHOLE = Path(os.environ.get("WORMHOLE", SOURCE_DIR / "build" / "wormhole"))

# TP 8 x DP 2 on 16 GPUs: a fwd TP AllReduce, an ig TP AllReduce and two 8-MiB wg DP AllReduces.
WORKLOAD = """HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 16
2
a -1 1000 ALLREDUCE 1048576 1000 NONE 0 1000 ALLREDUCE 8388608 1
b -1 1000 NONE 0 1000 ALLREDUCE 1048576 1000 ALLREDUCE 8388608 1
"""

A = list(range(0, 8)) + list(range(16, 24))   # servers 0 and 2
B = list(range(8, 16)) + list(range(24, 32))   # servers 1 and 3


def topology(spines, per_segment=None):
    return f"""[topology]
generator = "spectrum-x"
gpus = 32
spines = {spines}
{f"servers_per_segment = {per_segment}" if per_segment else ""}
"""


def scenario(topo, jobs, extra=""):
    text = f'name = "t"\n{topo}\n[workload]\nsend_latency = "2us"\niterations = 2\n{extra}\n[network]\n' \
           f'config = "{SOURCE_DIR / "inputs" / "llm" / "SimAI.conf"}"\n'
    for name, gpus, more in jobs:
        text += f'[[job]]\nname = "{name}"\nworkload = "w.txt"\ngpus = {gpus}\n{more}\n'
    return text


def read_jobs(out):
    with open(out / "jobs.csv") as f:
        return {r["job"]: r for r in csv.DictReader(f)}


class Jobs(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="wh_e2e_jobs_"))
        (self.dir / "w.txt").write_text(WORKLOAD)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def run_wh(self, name, text, expect=0):
        return run_toml(self, self.dir, name, text, expect)

    def test_disjoint_servers_give_the_single_job_result_exactly(self):
        # Rail fabric, one segment: job a on servers 0-1, b on 2-3. Their DP flows cross rail leaves on ports
        # of their own, so each job's flows (fct.txt, finish order) and iteration times are those of the job
        # run alone on the same fabric and GPUs.
        topo = topology(2)
        _, both = self.run_wh("both", scenario(topo, [("a", '"0-15"', ""), ("b", 16, 'placement = "packed"')]))
        _, alone_a = self.run_wh("alone_a", scenario(topo, [("a", '"0-15"', "")]))
        _, alone_b = self.run_wh("alone_b", scenario(topo, [("b", '"16-31"', "")]))
        self.assertEqual((both / "a" / "fct.txt").read_bytes(), (alone_a / "a" / "fct.txt").read_bytes())
        self.assertEqual((both / "b" / "fct.txt").read_bytes(), (alone_b / "b" / "fct.txt").read_bytes())
        jobs = read_jobs(both)
        self.assertEqual(jobs["a"]["mean_iteration_us"], read_jobs(alone_a)["a"]["mean_iteration_us"])
        self.assertEqual(jobs["b"]["end_us"], read_jobs(alone_b)["b"]["end_us"])
        self.assertEqual((jobs["b"]["first_gpu"], jobs["b"]["last_gpu"]), ("16", "31"))  # packed after a's
        # per job: 2 iterations x (2 TP AllReduces x 2 TP groups x 896 flows + 2 DP AllReduces x 8 groups x 2
        # flows) = 2 x (3584 + 64) = 7296 flows; the fabric's fct.txt has both jobs'
        self.assertEqual(jobs["a"]["flows"], "7296")
        fabric = (both / "fct.txt").read_text().splitlines()
        self.assertEqual(len(fabric), 2 * 7296)
        self.assertEqual((both / "a" / "iterations.csv").read_text(), (alone_a / "a" / "iterations.csv").read_text())

    def test_jobs_sharing_a_spine_slow_each_other(self):
        # Two servers per segment and one spine: a (servers 0, 2) and b (servers 1, 3) send their DP traffic
        # over the same leaf-spine links. Measured: 419.2 us per iteration alone, 756 us together.
        topo = topology(1, per_segment=2)
        _, both = self.run_wh("both", scenario(topo, [("a", A, ""), ("b", B, "")]))
        _, alone = self.run_wh("alone", scenario(topo, [("a", A, "")]))
        shared = read_jobs(both)
        single = float(read_jobs(alone)["a"]["mean_iteration_us"])
        for j in ("a", "b"):
            self.assertGreater(float(shared[j]["mean_iteration_us"]), 1.5 * single, shared[j])
        # The overlay plot of job a's FCT slowdowns alone and beside b: the shared spine shows in the tail.
        p = subprocess.run(["/usr/bin/python3", str(SOURCE_DIR / "scripts" / "wh_analyze.py"), "plot-overlay", "--json",
                            str(alone / "a" / "fct.txt"), str(both / "a" / "fct.txt"), "--label", "alone", "--label",
                            "beside b", "-o", str(self.dir / "overlay.png")], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        runs = {r["label"]: r for r in json.loads(p.stdout)["runs"]}
        self.assertEqual(runs["alone"]["flows"], 7296)
        self.assertGreater(runs["beside b"]["p99"], runs["alone"]["p99"])
        self.assertGreater(runs["beside b"]["mean_fct_us"], runs["alone"]["mean_fct_us"])
        self.assertGreater((self.dir / "overlay.png").stat().st_size, 1000)

    def test_start_time_and_background_flows(self):
        # Job b starts at 100 us: its iteration 0 is timed from then; a background HPCC flow file (starts at 2 s
        # in the file) is moved to begin at 50 us and runs beside the jobs.
        (self.dir / "bg.txt").write_text("2\n0 31 3 100 1000000 2.000000000\n8 24 3 100 2000000 2.000010000\n")
        text = scenario(topology(2), [("a", '"0-15"', ""), ("b", '"16-31"', 'start = "100us"')])
        text += f'[background]\nfile = "{self.dir / "bg.txt"}"\nbegin = "50us"\n'
        p, out = self.run_wh("bg", text)
        self.assertIn("background: 2 of 2 flows finished", p.stdout)
        jobs = read_jobs(out)
        self.assertEqual(jobs["b"]["start_us"], "100.000")
        with open(out / "b" / "iterations.csv") as f:
            self.assertEqual(next(csv.DictReader(f))["start_us"], "100.000")
        rows = [line.split() for line in (out / "fct.txt").read_text().splitlines()]
        starts = sorted(int(r[5]) for r in rows if int(r[4]) in (1000000, 2000000))
        self.assertEqual(starts, [50_000, 60_000])  # ns: begin, and the second 10 us later

    def test_generated_background_slows_a_job_on_a_shared_spine(self):
        # Job a on servers 0 and 2, one spine; a Poisson WebSearch load at 0.5 from the free GPUs (servers 1
        # and 3) crosses the same spine: a's iterations are slower than alone, the same scenario gives the same
        # flows, and the report gives the background's flows, slowdown and load.
        topo = topology(1, per_segment=2)
        bg = '[background]\ncdf = "websearch"\nload = 0.5\nduration = "1ms"\nhosts = "free"\n'
        p, out = self.run_wh("bg", scenario(topo, [("a", A, "")]) + bg)
        _, again = self.run_wh("bg2", scenario(topo, [("a", A, "")]) + bg)
        _, alone = self.run_wh("alone", scenario(topo, [("a", A, "")]))
        self.assertGreater(float(read_jobs(out)["a"]["mean_iteration_us"]),
                           1.05 * float(read_jobs(alone)["a"]["mean_iteration_us"]))
        self.assertEqual((out / "fct.txt").read_bytes(), (again / "fct.txt").read_bytes())
        self.assertRegex(p.stdout, r"background: Poisson load 0.5 of 16 hosts' links .* websearch CDF .* flows \(\d+ expected\)")
        self.assertRegex(p.stdout, r"background: \d+ of \d+ flows finished; slowdown mean [\d.]+ p50 [\d.]+ p99")
        m = re.search(r"background load: offered ([\d.]+), achieved ([\d.]+)", p.stdout)
        self.assertIsNotNone(m, p.stdout)
        self.assertLessEqual(float(m.group(2)), float(m.group(1)))
        # Background flows start only on the free GPUs and go to another server's.
        a = set(A)
        for row in (out / "fct.txt").read_text().splitlines():
            src, dst = (int(x, 16) >> 8 & 0xFFFF for x in row.split()[:2])  # 0b00XXYY01: node = XX·256 + YY
            if src not in a:
                self.assertNotIn(dst, a)
                self.assertNotEqual(src // 8, dst // 8)

    def test_generated_background_beside_a_single_workload(self):
        text = f'{topology(2)}\n[workload]\nfile = "w.txt"\nsend_latency = "2us"\n[network]\n' \
               f'config = "{SOURCE_DIR / "inputs" / "llm" / "SimAI.conf"}"\n' \
               '[background]\ncdf = "fb_hadoop"\nload = 0.2\nduration = "500us"\nhosts = "0-31"\nseed = 9\n'
        p, _ = self.run_wh("single", text.replace("gpus = 32", "gpus = 16").replace('"0-31"', '"0-15"'))
        self.assertIn("seed 9", p.stdout)
        self.assertRegex(p.stdout, r"background: \d+ of \d+ flows finished")
        self.assertIn("background load: offered", p.stdout)
        p, out = self.run_wh("single_bad", text.replace("gpus = 32", "gpus = 16"), expect=2)
        self.assertIn("node 16 is not a host", p.stderr)
        self.assertFalse(out.exists(), "nothing is written for bad input")

    def test_bad_jobs(self):
        topo = topology(2)
        cases = [
            (scenario(topo, [("a", '"0-15"', ""), ("b", '"8-23"', "")]), "GPU 8 is also job 0's"),
            (scenario(topo, [("a", 24, ""), ("b", 16, "")]), "16 GPUs asked for, 8 left free"),
            (scenario(topo, [("a", '"0-15"', 'placement = "packed"')]), "placement applies to a GPU count"),
            (scenario(topo, [("a", '"0-15"', ""), ("a", '"16-31"', "")]), 'two jobs are named "a"'),
            (scenario(topo, [("a", '"20-40"', "")]), "GPU 32 does not exist"),
            (scenario(topo, [("a", 6, "")]), "not divisible by TP 8"),
        ]
        for text, msg in cases:
            with self.subTest(msg=msg):
                p, out = self.run_wh("bad", text, expect=2)
                self.assertIn(msg, p.stderr)
                self.assertFalse(out.exists(), "nothing is written for bad input")


if __name__ == "__main__":
    unittest.main(verbosity=2)
