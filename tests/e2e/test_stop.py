#!/usr/bin/python3
"""End-to-end tests of how a run ends early: SIGINT / SIGTERM stop it cleanly (whole lines in fct.txt, results.h5
marked incomplete, exit 130 / 143), and a write error (a full disk, a file-size limit) names the file, keeps its
whole lines and exits 4 (docs/results.md, "Stopping a run"). Environment as test_refruns.py."""
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

import h5py

SOURCE_DIR = Path(os.environ.get("WH_SOURCE_DIR", Path(__file__).resolve().parents[2]))
TEST_DATA = Path(os.environ.get("WH_TEST_DATA", SOURCE_DIR / "tests" / "data"))
WORMHOLE = Path(os.environ.get("WORMHOLE", SOURCE_DIR / "build" / "wormhole"))
RING = TEST_DATA / "refruns" / "hpcc-ring16-fattree-k4-1MB"
CRASH_MARKERS = ("terminate called", "Segmentation fault", "Aborted", "core dumped", "what():")


def flows(n, size):
    """n flows of `size` bytes among the ring's 16 hosts, one every 5 µs from 2 s."""
    lines = [str(n)]
    for i in range(n):
        s, d = i % 16, (i * 7 + 3) % 16
        d = (d + 1) % 16 if d == s else d
        lines.append(f"{s} {d} 3 100 {size} {2 + i * 5e-6:.9f}")
    return "\n".join(lines) + "\n"


class Stop(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="wh_e2e_stop_"))
        shutil.copy(RING / "topology.txt", self.dir)
        text = [ln for ln in (RING / "config_dcqcn.txt").read_text().splitlines()
                if not ln.startswith(("FLOW_FILE", "TRACE_FILE", "TRACE_OUTPUT_FILE", "QLEN_MON"))]
        (self.dir / "config.txt").write_text("\n".join(text + ["FLOW_FILE flow.txt"]) + "\n")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def check_whole_lines(self, path):
        data = path.read_bytes()
        self.assertTrue(data == b"" or data.endswith(b"\n"), f"{path} ends in part of a line")
        lines = data.decode().splitlines()
        for ln in lines:
            self.assertEqual(len(ln.split()), 8, ln)
        return len(lines)

    def interrupt_once_written(self, cmd, fct, sig):
        """Starts `cmd` (in the test folder), sends it `sig` once `fct` holds a line and checks it did not crash;
        its exit status and stderr."""
        # SIGHUP as a terminal sends it, whatever the test runner's own disposition (nohup ignores it, and
        # a run started so keeps ignoring it).
        p = subprocess.Popen(cmd, cwd=self.dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL))
        deadline = time.time() + 60
        while time.time() < deadline and p.poll() is None and (not fct.exists() or fct.stat().st_size == 0):
            time.sleep(0.05)
        self.assertIsNone(p.poll(), "the run ended before it could be interrupted")
        p.send_signal(sig)
        err = p.communicate(timeout=120)[1]
        for m in CRASH_MARKERS:
            self.assertNotIn(m, err)
        return p.returncode, err

    def test_signal_stops_cleanly(self):
        # 20,000 flows of 200 kB take several seconds; the signal comes once the first lines are on disk.
        (self.dir / "flow.txt").write_text(flows(20000, 200000))
        for sig, status in ((signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)):
            with self.subTest(signal=sig.name):
                out = self.dir / f"out-{sig.name}"
                fct = out / "fct.txt"
                rc, err = self.interrupt_once_written([str(WORMHOLE), "run", "config.txt", "-o", str(out), "-q"], fct, sig)
                self.assertEqual(rc, status, err)
                self.assertIn(f"interrupted by {sig.name} at simulated time", err)
                n = self.check_whole_lines(fct)
                self.assertGreater(n, 0)
                self.assertLess(n, 20000)
                with h5py.File(out / "results.h5") as f:
                    run = f["run"].attrs
                    self.assertEqual(int(run["complete"]), 0)
                    self.assertIn(f"interrupted by {sig.name}", run["incomplete"])
                    self.assertEqual(len(f["flows"]), 20000)
                    self.assertEqual(int(f["flows"]["finished"].sum()), n)  # the file holds every finished flow
                self.assertIn(f"{n} of 20000 flows had finished", err)

    def test_signal_stops_a_jobs_run_cleanly(self):
        # two-jobs-32g with 200 iterations runs for minutes; SIGINT once the fabric's fct.txt has lines: exit 130,
        # whole lines, results.h5 and every job's CSVs written and marked incomplete.
        scenario = SOURCE_DIR / "inputs" / "llm" / "two-jobs-32g.toml"
        out = self.dir / "jobs"
        fct = out / "fct.txt"
        rc, err = self.interrupt_once_written([str(WORMHOLE), "run", str(scenario), "-o", str(out), "-q",
                                               "--set", "workload.iterations=200"], fct, signal.SIGINT)
        self.assertEqual(rc, 130, err)
        self.assertIn("interrupted by SIGINT at simulated time", err)
        n = self.check_whole_lines(fct)
        self.assertGreater(n, 0)
        with h5py.File(out / "results.h5") as f:
            self.assertEqual(int(f["run"].attrs["complete"]), 0)
            self.assertEqual(int(f["flows"]["finished"].sum()), n)
            self.assertEqual(set(f["jobs"]), {"a", "b"})
            for job in ("a", "b"):  # the iteration it stopped in is marked, the ones before are whole
                complete = [int(c) for c in f[f"jobs/{job}/iterations"]["complete"]]
                self.assertEqual(complete, [1] * (len(complete) - 1) + [0], job)
                # named as /run names it (it said "interrupted (signal 2)")
                self.assertTrue(f[f"jobs/{job}"].attrs["incomplete"].startswith("interrupted by SIGINT at "), job)
        self.assertTrue((out / "jobs.csv").exists() and (out / "a" / "iterations.csv").exists())

    @unittest.skipUnless(shutil.which("mpirun"), "needs mpirun (Open MPI)")
    def test_signal_stops_a_distributed_run_cleanly(self):
        # mpirun sends the ranks SIGTERM a second after a Ctrl-C (SIGKILL a second later); a signal seen by any rank
        # stops all of them at the same window edge, and they write what finished as one process does: fct.txt is then the first lines of
        # the complete run's (one process, the portable event order a distributed run has).
        (self.dir / "flow.txt").write_text(flows(20000, 200000))
        full = subprocess.run([str(WORMHOLE), "run", "config.txt", "-o", "full", "-q", "--set", "EVENT_ORDER=portable"],
                              cwd=self.dir, capture_output=True, text=True, timeout=300)
        self.assertEqual(full.returncode, 0, full.stderr)
        root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
        out = self.dir / "dist"
        fct = out / "fct.txt"
        rc, err = self.interrupt_once_written([shutil.which("mpirun"), *root, "--oversubscribe", "-np", "2",
                                               str(WORMHOLE), "run", "config.txt", "-o", str(out), "-q"], fct,
                                              signal.SIGINT)
        self.assertNotEqual(rc, 0, err)
        self.assertRegex(err, r"interrupted by SIG(INT|TERM) at simulated time")
        n = self.check_whole_lines(fct)
        self.assertGreater(n, 0)
        self.assertLess(n, 20000)
        self.assertEqual(fct.read_text().splitlines(), (self.dir / "full" / "fct.txt").read_text().splitlines()[:n])
        with h5py.File(out / "results.h5") as f:
            self.assertEqual(int(f["run"].attrs["complete"]), 0)
            self.assertRegex(f["run"].attrs["incomplete"], r"interrupted by SIG(INT|TERM)")
            self.assertEqual(int(f["flows"]["finished"].sum()), n)

    @staticmethod
    def file_size_limit(limit):
        def apply():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead of killing
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        return apply

    def test_write_error_keeps_whole_lines_and_names_the_file(self):
        # a 20,000-byte limit lets the first 20,000 bytes of fct.txt through and fails the write that crosses it,
        # in the middle of a line: the file is cut back to its last whole line, the 356th (about 56 B a line).
        (self.dir / "flow.txt").write_text(flows(600, 20000))
        p = subprocess.run([str(WORMHOLE), "run", "config.txt", "-o", "out"], cwd=self.dir, capture_output=True,
                           text=True, preexec_fn=self.file_size_limit(20000), timeout=120)
        self.assertEqual(p.returncode, 4, p.stderr)
        fct = self.dir / "out" / "fct.txt"
        self.assertIn(f"wormhole: error: {fct}: cannot write: File too large (the file keeps the", p.stderr)
        self.assertEqual(self.check_whole_lines(fct), 356)
        self.assertGreater(fct.stat().st_size, 20000 - 60)
        self.assertFalse((self.dir / "out" / "results.h5").exists())

    def test_results_file_error_leaves_no_partial_file(self):
        # 100 flows: fct.txt (about 5.6 kB) fits under 12,000 bytes, results.h5 does not: it is not left half
        # written, and the message names it.
        (self.dir / "flow.txt").write_text(flows(100, 20000))
        p = subprocess.run([str(WORMHOLE), "run", "config.txt", "-o", "out"], cwd=self.dir, capture_output=True,
                           text=True, preexec_fn=self.file_size_limit(12000), timeout=120)
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertIn(f"{self.dir / 'out' / 'results.h5'}: cannot write", p.stderr)
        self.assertEqual(self.check_whole_lines(self.dir / "out" / "fct.txt"), 100)
        self.assertEqual(sorted(x.name for x in (self.dir / "out").iterdir()), ["fct.txt", "pfc.txt"])


if __name__ == "__main__":
    unittest.main()
