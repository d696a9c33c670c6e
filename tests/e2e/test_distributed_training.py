#!/usr/bin/python3
"""End-to-end tests of training scenarios other than one SimAI workload over MPI ranks: several [[job]]s
sharing a fabric (with background flows) and a Chakra execution trace give, under `mpirun -np 2` and 3,
every output of one process run with EVENT_ORDER portable byte for byte — fct.txt, pfc.txt, every dataset and
attribute of results.h5 (the /jobs groups included), jobs.csv, each job's folder, the workload CSVs. And
results.h5's /jobs/<name> groups hold each job's report: its flows (as many as jobs.csv counts), iteration
times (those of its iterations.csv), GPUs. Environment as test_refruns.py; needs mpirun (Open MPI)."""
import csv
import json
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

import h5py
import numpy as np

from test_distributed import MPIRUN, mpirun, wh
from test_refruns import SOURCE_DIR

# TP 8 x DP 2 on 16 GPUs, small collectives: a fwd TP AllReduce, an ig TP AllReduce, two wg DP AllReduces.
WORKLOAD = """HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 16
2
a -1 1000 ALLREDUCE 262144 1000 NONE 0 1000 ALLREDUCE 1048576 1
b -1 1000 NONE 0 1000 ALLREDUCE 262144 1000 ALLREDUCE 1048576 1
"""

TOPOLOGY = """[topology]
generator = "spectrum-x"
gpus = 32
spines = 2
"""

NETWORK = f'[network]\nconfig = "{SOURCE_DIR / "inputs" / "llm" / "SimAI.conf"}"\n'

# Job b spread over every server (its rings cross the spines, as a's DP flows do), starting later, 2 iterations;
# two background flows across the fabric.
JOBS = f"""name = "jobs"
{TOPOLOGY}
[workload]
send_latency = "2us"
iterations = 1
{NETWORK}
[[job]]
name = "a"
workload = "w.txt"
gpus = [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]
[[job]]
name = "b"
workload = "w.txt"
gpus = 16
placement = "spread"
start = "20us"
iterations = 2
[background]
file = "bg.txt"
begin = "10us"
"""

CHAKRA = f"""name = "chakra"
[topology]
generator = "spectrum-x"
gpus = 16
spines = 2
[workload]
chakra = "traces/t"
comm_groups = "traces/t.comm_groups.json"
send_latency = "2us"
{NETWORK}"""

# /run attributes that are not results: how long it took, and the command line.
TIMING = {"wall_s", "events_per_s", "command_line"}


def h5_contents(path):
    """Every attribute (but timing) and every dataset of an HDF5 file, as comparable values: fixed-size tables
    as bytes (NaN-safe), variable-length strings as text with the run's output folder (a path in the run
    record) written as <out>."""
    out = {}
    folder = str(Path(path).parent)

    def text(v):
        return repr(v).replace(folder, "<out>")

    def visit(name, obj):
        for k, v in obj.attrs.items():
            if not (name == "run" and k in TIMING):
                out[f"{name}@{k}"] = text(v)
        if isinstance(obj, h5py.Dataset):
            data = obj[()]
            vlen = obj.dtype.kind == "O" or (obj.dtype.names and any(
                obj.dtype.fields[f][0].kind == "O" for f in obj.dtype.names))
            out[name] = text(data.tolist()) if vlen else (str(obj.dtype), data.tobytes())

    with h5py.File(path) as f:
        for k, v in f.attrs.items():
            out[f"@{k}"] = text(v)
        f.visititems(visit)
    return out


def files(folder):
    """Every file under `folder` but results.h5 (compared on its own), by relative path."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != "results.h5"}


@unittest.skipUnless(MPIRUN, "needs mpirun")
class DistributedTraining(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="wh_e2e_dist_training_"))
        (self.dir / "w.txt").write_text(WORKLOAD)
        (self.dir / "bg.txt").write_text("2\n0 31 3 100 200000 0.000000000\n9 20 3 100 300000 0.000005000\n")
        (self.dir / "jobs.toml").write_text(JOBS)
        (self.dir / "chakra.toml").write_text(CHAKRA)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def assert_same_run(self, scenario, ranks, expect_files):
        ref = self.dir / f"{scenario}-one"
        p = wh("run", self.dir / f"{scenario}.toml", "-o", ref, "-q", "--set", "network.EVENT_ORDER=portable")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertTrue(set(expect_files) <= set(files(ref)), sorted(files(ref)))
        ref_files, ref_h5 = files(ref), h5_contents(ref / "results.h5")
        for n in ranks:
            with self.subTest(scenario=scenario, ranks=n):
                out = self.dir / f"{scenario}-{n}"
                p = mpirun(n, "run", self.dir / f"{scenario}.toml", "-o", out)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                self.assertIn(f"distributed run over {n} ranks", p.stdout)
                # the cut is weighed by the scenario's traffic, not by link rates
                self.assertIn("MB of flow bytes through it", p.stdout)
                got = files(out)
                self.assertEqual(sorted(got), sorted(ref_files))
                for name in ref_files:
                    self.assertEqual(got[name], ref_files[name], f"{name} of {n} ranks differs from one process")
                h5 = h5_contents(out / "results.h5")
                self.assertEqual(sorted(h5), sorted(ref_h5))
                for key in ref_h5:
                    self.assertEqual(h5[key], ref_h5[key], f"results.h5 {key} of {n} ranks")
        return ref

    def test_jobs_identical_for_2_and_3_ranks(self):
        ref = self.assert_same_run("jobs", (2, 3), ["fct.txt", "pfc.txt", "jobs.csv", "a/fct.txt", "b/fct.txt",
                                                    "a/iterations.csv", "b/collectives.csv", "b/gpus.csv"])
        with open(ref / "jobs.csv") as f:
            jobs = {r["job"]: r for r in csv.DictReader(f)}
        self.assertEqual((jobs["a"]["complete"], jobs["b"]["complete"], jobs["b"]["iterations"]), ("1", "1", "2"))
        # the fabric's fct.txt holds both jobs' flows and the 2 background flows
        fabric = len((ref / "fct.txt").read_text().splitlines())
        self.assertEqual(fabric, int(jobs["a"]["flows"]) + int(jobs["b"]["flows"]) + 2)

    def test_chakra_identical_for_2_and_3_ranks(self):
        p = subprocess.run(["/usr/bin/python3", str(SOURCE_DIR / "scripts" / "simai_to_chakra.py"), str(self.dir / "w.txt"),
                            "--gpus", "16", "--gpus-per-server", "8", "-o", str(self.dir / "traces" / "t")],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        ref = self.assert_same_run("chakra", (2, 3), ["fct.txt", "pfc.txt", "iterations.csv", "collectives.csv",
                                                      "gpus.csv"])
        with h5py.File(ref / "results.h5") as f:
            self.assertEqual(f["workload"].attrs["exposure_by_group"], 0)  # a trace's report: one total per GPU
            self.assertEqual(f["workload/iterations"].shape, (1,))

    def test_job_groups_in_results(self):
        p = wh("run", self.dir / "jobs.toml", "-o", self.dir / "one", "-q")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        out = self.dir / "one"
        with open(out / "jobs.csv") as f:
            jobs = {r["job"]: r for r in csv.DictReader(f)}
        with h5py.File(out / "results.h5") as h:
            self.assertEqual(h.attrs["layout_version"], 5)
            self.assertNotIn("workload", h)
            self.assertEqual(sorted(h["jobs"]), ["a", "b"])
            self.assertEqual(h["jobs"].attrs["jobs"], 2)
            flows = h["flows"][()]
            for k, name in enumerate(("a", "b")):
                g = h["jobs"][name]
                row = jobs[name]
                self.assertEqual(g.attrs["index"], k)
                self.assertEqual(g.attrs["start_ps"], round(float(row["start_us"]) * 1e6))
                self.assertEqual(g.attrs["complete"], 1)
                # its flows: as many as jobs.csv says, each a /flows row from one of its own GPUs
                tags = g["flows"][()]
                self.assertEqual(len(tags), int(row["flows"]))
                hosts = g["hosts"]["topology_gpu"]
                self.assertEqual((len(hosts), hosts[0], hosts[-1]),
                                 (int(row["gpus"]), int(row["first_gpu"]), int(row["last_gpu"])))
                np.testing.assert_array_equal(flows["src"][tags["flow"]], hosts[tags["src_gpu"]])
                self.assertEqual(g["collectives"]["flows"].sum(), len(tags))
                # iteration times: those of the job's iterations.csv (us, 3 decimals, truncated to whole ns)
                with open(out / name / "iterations.csv") as f:
                    its = list(csv.DictReader(f))
                self.assertEqual(len(g["iterations"]), len(its))
                for it, r in zip(g["iterations"], its):
                    self.assertEqual(f"{it['time_ps'] // 1000 / 1000:.3f}", r["time_us"])
                    self.assertGreater(it["time_ps"], 0)
                self.assertEqual(len(g["gpus"]), int(row["gpus"]))
                self.assertEqual(f"{g.attrs['total_exposed_ps'] // 1000 / 1000:.3f}", row["exposed_comm_us"])
                # the slowest GPU: the job's GPU exposed longest (lowest among equals), by its topology id
                exposed = g["gpus"]["exposed_ps"]
                slow = int(np.argmax(exposed))
                self.assertEqual(int(row["slowest_gpu"]), int(hosts[slow]))
                self.assertEqual(f"{exposed[slow] // 1000 / 1000:.3f}", row["slowest_exposed_comm_us"])
        # wh_analyze summary reads the groups
        p = subprocess.run(["/usr/bin/python3", str(SOURCE_DIR / "scripts" / "wh_analyze.py"), "summary",
                            str(out / "results.h5")], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"job b: 16 GPUs from 20.000 us, complete; {int(jobs['b']['flows']):,} flows; iterations ", p.stdout)
        # plot-runs and plot-layers take a job's report; without --job they name the jobs there are
        analyze = ["/usr/bin/python3", str(SOURCE_DIR / "scripts" / "wh_analyze.py")]
        p = subprocess.run(analyze + ["plot-runs", str(out / "results.h5"), "-o", str(self.dir / "runs.png"), "--job",
                                      "b", "--json"], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        with h5py.File(out / "results.h5") as f:
            b = f["jobs"]["b"]
            self.assertEqual(json.loads(p.stdout)["runs"][0]["iterations_ps"], [int(t) for t in b["iterations"]["time_ps"]])
            self.assertEqual(sum(json.loads(p.stdout)["runs"][0]["report"].values()), int(b.attrs["total_exposed_ps"]))
        p = subprocess.run(analyze + ["plot-layers", str(out / "results.h5"), "-o", str(self.dir / "layers.png")],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 2)
        self.assertIn("a run of several jobs (a, b): give --job NAME", p.stderr)

    def test_partition_weighs_every_job(self):
        p = wh("partition", self.dir / "jobs.toml", "-n", "2")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("one iteration of each of the 2 jobs' collectives (64 source-destination pairs, spread over their "
                      "ECMP paths) and of the 2 background flows routed over them", p.stdout)

    def test_job_name_that_cannot_name_a_folder(self):
        (self.dir / "bad.toml").write_text(JOBS.replace('name = "b"', 'name = "b/c"'))
        p = wh("run", self.dir / "bad.toml", "-o", self.dir / "bad")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("bad.toml:", p.stderr)
        self.assertIn('"b/c" cannot name a job', p.stderr)
        self.assertFalse((self.dir / "bad").exists())


if __name__ == "__main__":
    unittest.main()
