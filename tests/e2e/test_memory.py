#!/usr/bin/python3
"""End-to-end tests of the memory estimate at set-up (docs/results.md, "Memory"): its line, and a run whose
set-up is above the limit refused with exit status 2 before anything is written. Known answers by hand in
the comments. Environment as test_refruns.py (WORMHOLE, WH_TEST_DATA, WH_SOURCE_DIR)."""
import os
import resource
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

SOURCE_DIR = Path(os.environ.get("WH_SOURCE_DIR", Path(__file__).resolve().parents[2]))
TEST_DATA = Path(os.environ.get("WH_TEST_DATA", SOURCE_DIR / "tests" / "data"))
WORMHOLE = Path(os.environ.get("WORMHOLE", SOURCE_DIR / "build" / "wormhole"))
RING_CONFIG = TEST_DATA / "refruns" / "hpcc-ring16-fattree-k4-1MB" / "config_dcqcn.txt"
CRASH_MARKERS = ("terminate called", "Segmentation fault", "Aborted", "core dumped", "what():", "bad_alloc")
DP_HEADER = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: {gpus}"


class Memory(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="wh_e2e_memory_"))

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def run_wh(self, scenario, *args, expect=0, address_space=None):
        """Runs the scenario; `address_space`: a cap on the process's virtual memory (bytes)."""
        out = self.dir / "out"
        limit = None if address_space is None else lambda: resource.setrlimit(resource.RLIMIT_AS, (address_space,) * 2)
        p = subprocess.run([str(WORMHOLE), "run", str(scenario), "-o", str(out), *args], capture_output=True,
                           text=True, timeout=300, preexec_fn=limit)
        for m in CRASH_MARKERS:
            self.assertNotIn(m, p.stderr)
        self.assertEqual(p.returncode, expect, p.stdout + p.stderr)
        return p, out

    def scenario(self, gpus, extra="", rows=1):
        """A Spectrum-X cluster of `gpus` GPUs (TP 8) with `rows` DP AllReduces of 1 MiB, stopped at 1 us."""
        (self.dir / "workload.txt").write_text(DP_HEADER.format(gpus=gpus) + f"\n{rows}\n" + "".join(
            f"ar{i} -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 1048576 1\n" for i in range(rows)))
        path = self.dir / f"sx{gpus}.toml"
        path.write_text(f"""name = "sx{gpus}"
[topology]
generator = "spectrum-x"
gpus = {gpus}
{extra}
[workload]
file = "workload.txt"
max_time = "1us"
[network]
config = "{SOURCE_DIR / 'inputs' / 'llm' / 'SimAI.conf'}"
[output]
dir = "{self.dir / 'scenario-out'}"
""")
        return path

    def assert_nothing_written(self, out):
        self.assertFalse(out.exists(), f"{out} was created by a refused run")
        self.assertFalse((self.dir / "scenario-out").exists())
        self.assertEqual(sorted(p.name for p in self.dir.iterdir() if p.suffix not in (".toml", ".txt")), [])

    def test_workload_refused_at_setup_writes_nothing(self):
        # 1024 GPUs: 128 NVSwitches, 16 leaves, 64 spines. Routing keeps 12 B per (switch, attachment class):
        # the 80 fabric switches see 16 classes (one per leaf), each NVSwitch one; and 12 B per host link
        # (2048): (1280 + 128) x 12 + 2048 x 12 = 41,472 B = 41.5 KB.
        p, out = self.run_wh(self.scenario(1024), "--memory-limit", "1MB", expect=2)
        self.assertIn("memory estimate: ", p.stdout)
        self.assertIn("routing 41.5 KB", p.stdout)
        # 1024 GPUs, 1 row: 12 B a GPU and row, and per GPU its program counter and report record.
        self.assertIn(", GPU programs ", p.stdout)
        self.assertIn(", GPU programs ", p.stderr)
        self.assertIn("limit 1.00 MB (--memory-limit)", p.stdout)
        self.assertIn("sx1024.toml:2: the run would need about ", p.stderr)
        self.assertIn("routing table 41.5 KB", p.stderr)
        self.assertIn("more than the 1.00 MB limit (--memory-limit); nothing was run or written", p.stderr)
        self.assertIn("(fix: simulate fewer GPUs or flows", p.stderr)
        self.assert_nothing_written(out)
        # The same scenario without the limit runs, and says so on the line.
        p, out = self.run_wh(self.scenario(1024), "--memory-limit", "none", expect=3)  # 3: cut at 1 us
        self.assertIn("routing 41.5 KB", p.stdout)
        self.assertIn("; no limit: --memory-limit none", p.stdout)
        self.assertTrue((out / "results.h5").exists())

    def test_131072_gpus_refused_not_bad_alloc(self):
        # 131,072 GPUs (256 segments: leaves_per_spine derived as 2048): 16,384 NVSwitches, 2048 leaves, 64
        # spines. Routing: (2112 x 2048 + 16,384) x 12 B + 262,144 host links x 12 B = 55.2 MB (a column per
        # host made it 78.4 GB). With ports (654 MB) and the implicit collective plans the set-up needs about
        # 1 GB: above a 512 MB limit, refused at once, with nothing allocated or written.
        p, out = self.run_wh(self.scenario(131072), "--memory-limit", "512MB", expect=2)
        self.assertIn("routing table 55.2 MB", p.stderr)
        self.assertIn("more than the 512 MB limit (--memory-limit)", p.stderr)
        self.assert_nothing_written(out)

    def test_run_cut_short_sets_no_room_aside_for_flows_it_never_makes(self):
        # 16,384 GPUs, 64 rows: 8 DP groups of 2048 GPUs, whose ring AllReduce makes 2 x 2047 x 2048 =
        # 8,384,512 flows; 64 x 8 x 8,384,512 = 4.29 G flows to the end. Stopped at 1 us, none finishes. The
        # summary statistics once set aside room for every flow to come, 8 B x 4.29 G = 34 GB for each of
        # their three figures (more than this machine's memory), and the run stopped with "out of memory"
        # before it started; they grow by chunks as flows finish. The address space is capped at 8 GiB, so
        # that setting that room aside fails on any machine, not only where 34 GB exceeds memory and swap.
        p, out = self.run_wh(self.scenario(16384, rows=64), "--memory-limit", "1GB", expect=3,
                             address_space=8 << 30)  # 3: cut at 1 us
        self.assertNotIn("error: out of memory", p.stderr)
        # Run to its end, its flows' figures would take 24 B x 4.29 G = 103 GB: the first 2^24 in memory
        # (24 B x 16,777,216 = 403 MB), the rest on disk beside the results, so it fits in 1 GB. (While
        # all were kept in memory, this run was warned that it might run out of memory before its end.)
        self.assertIn("; by the end the workload's 4292870144 flows' statistics figures take 403 MB in memory and "
                      "103 GB on disk beside the results; limit 1.00 GB (--memory-limit)", p.stdout)
        self.assertNotIn("run out of memory", p.stderr)
        # Under a limit of 400 MB the figures in memory would not fit: the warning says so, and that the
        # run's max_time may stop it first (rather than suggesting a max_time it already has).
        p, out = self.run_wh(self.scenario(16384, rows=64), "--memory-limit", "400MB", expect=3)
        self.assertIn("the workload's 4292870144 flows' statistics figures take about 403 MB more memory", p.stderr)
        self.assertIn("(unless its workload.max_time stops it well before; else fewer iterations or GPUs)", p.stderr)
        self.assertIn("wormhole: warning: workload incomplete: stopped by the time limit at 0.000001 s while 512 "
                      "collectives pending", p.stderr)
        self.assertTrue((out / "results.h5").exists())

    def test_collective_too_large_to_plan_refused_before_setup(self):
        # 1,048,576 GPUs, TP 8: DP groups of 131,072 GPUs, whose ring AllReduce would have 2 x 131,071 x
        # 131,072 = 34,359,476,224 flows, past the 2^32 - 2 a plan can index. Refused from the workload,
        # before the network is built (the set-up took 8 minutes before it failed, leaving empty outputs).
        p, out = self.run_wh(self.scenario(1048576), "--memory-limit", "none", expect=2)
        self.assertIn("workload.txt:3: row ar0: ALLREDUCE on its 131072-GPU DP groups (1 ring) would have "
                      "34359476224 flows, more than the 4294967294 a collective can have", p.stderr)
        self.assertIn("(fix: make its DP groups smaller (a larger TP or PP, or fewer GPUs), or leave them out with "
                      "workload.ignore_groups)", p.stderr)
        self.assert_nothing_written(out)

    def test_explicit_leaves_per_spine_still_checked(self):
        # 8192 GPUs are 16 segments of 512: an explicit leaves_per_spine of 64 allows 8.
        p, out = self.run_wh(self.scenario(8192, "leaves_per_spine = 64"), "--memory-limit", "1MB", expect=2)
        self.assertIn("8192 GPUs need 16 segments of 512 GPUs, more than the 8 that leaves_per_spine allows", p.stderr)
        self.assertNotIn("memory estimate", p.stdout)
        # Unset, it is derived (128) and the cluster builds: 192 fabric switches x 128 classes + 1024
        # NVSwitches, at 12 B, and 16,384 host links at 12 B = 503,808 B.
        p, out = self.run_wh(self.scenario(8192), "--memory-limit", "1MB", expect=2)
        self.assertIn("routing table 504 KB", p.stderr)
        self.assert_nothing_written(out)

    def test_flow_file_refused_at_setup_writes_nothing(self):
        # The ring: a k = 4 fat tree of 16 single-NIC hosts and 20 switches, 8 edges of 2 hosts: routing
        # 20 switches x 8 classes x 12 B + 16 host links x 12 B = 2112 B.
        p, out = self.run_wh(RING_CONFIG, "--memory-limit", "1KB", expect=2)
        self.assertIn("routing 2.11 KB", p.stdout)
        self.assertIn("config_dcqcn.txt:6: the run would need about ", p.stderr)  # line 6: TOPOLOGY_FILE
        self.assertIn("more than the 1.00 KB limit (--memory-limit)", p.stderr)
        self.assertFalse(out.exists())

    def test_bad_limit_names_the_option(self):
        for bad in ("lots", "12 parsecs", "0.5B", "-1GB"):
            p, out = self.run_wh(RING_CONFIG, f"--memory-limit={bad}", expect=2)
            self.assertIn("--memory-limit: ", p.stderr)
            self.assertIn("(fix: give a size such as 16GB or 512MiB, or none for no limit)", p.stderr)
            self.assertFalse(out.exists())


if __name__ == "__main__":
    unittest.main()
