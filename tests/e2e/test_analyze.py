#!/usr/bin/python3
"""End-to-end tests of scripts/wh_analyze.py on small real runs of the built wormhole binary.

Runs (a few seconds in all): the 16→1 DCQCN incast as shipped (no PFC) and with BUFFER_SIZE 4 (PFC
pauses), the bundled HPCC example with Wormhole off and on, the MoE workload (moe-32g, per-layer
exposure) and the 16-GPU micro AllReduce with DCQCN and HPCC (iteration times differ), plus a small
θ × l sweep by scripts/bench_wormhole.py. Every sub-command is run and its numbers are checked against
values computed here independently with h5py / plain Python from the same files; bad inputs must give
exit status 2 and a message naming the file, never a traceback. Environment as test_refruns.py.
"""
import csv
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import h5py
import numpy as np

SOURCE_DIR = Path(os.environ.get("WH_SOURCE_DIR", Path(__file__).resolve().parents[2]))
TEST_DATA = Path(os.environ.get("WH_TEST_DATA", SOURCE_DIR / "tests" / "data"))
WORMHOLE = Path(os.environ.get("WORMHOLE", SOURCE_DIR / "build" / "wormhole"))
ANALYZE = SOURCE_DIR / "scripts" / "wh_analyze.py"
INCAST = "hpcc-incast16to1-leafspine64-1MB"
REF_INCAST_DCQCN = TEST_DATA / "refruns" / INCAST / "out_dcqcn" / "fct.txt"
TIMEOUT = 120


def nearest_rank(values, p):
    s = sorted(values)
    return s[max(1, math.ceil(p * len(s) - 1e-9)) - 1]


def read_fct(path, with_start=True):
    """fct.txt -> {key: fct_ns}, key (sip, dip, sport, dport[, start_ns]) with the IPs as hex text."""
    out = {}
    for line in Path(path).read_text().splitlines():
        t = line.split()
        if t:
            out[tuple(t[:4]) + ((t[5],) if with_start else ())] = int(t[6])
    return out


def errors(a, b):
    """Relative FCT errors |b - a| / a of the flows in both dicts."""
    return [abs(b[k] - a[k]) / a[k] for k in a if k in b]


def node_ip_hex(node):
    return f"{0x0B000001 + (int(node) // 256) * 0x10000 + (int(node) % 256) * 0x100:08x}"


def paused_port_time_ns(rows, end_ns):
    """Σ over (node, if_index, cls) of the time between a PAUSE and the next RESUME (open ones to end_ns)."""
    since, total = {}, 0
    for t, node, if_index, typ, cls in sorted(rows, key=lambda r: r[0]):
        port = (node, if_index, cls)
        if typ == 1:
            since.setdefault(port, t)
        elif port in since:
            total += t - since.pop(port)
    return total + sum(end_ns - t for t in since.values())


def wormhole(*args, cwd=None):
    p = subprocess.run([str(WORMHOLE), "run", *map(str, args), "-q"], capture_output=True, text=True,
                       timeout=TIMEOUT, cwd=cwd)
    if p.returncode != 0:
        raise AssertionError(f"wormhole run {args} failed ({p.returncode}):\n{p.stderr}")


class Analyze(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not WORMHOLE.is_file():
            raise AssertionError(f"wormhole binary not found: {WORMHOLE} (set WORMHOLE)")
        cls._tmp = tempfile.TemporaryDirectory(prefix="wh-e2e-analyze-")
        t = cls.tmp = Path(cls._tmp.name)
        inputs = SOURCE_DIR / "inputs"
        wormhole(inputs / INCAST / "config_dcqcn.txt", "-o", t / "incast")
        wormhole(inputs / INCAST / "config_dcqcn.txt", "-o", t / "pfc", "--set", "BUFFER_SIZE=4", "--set", "PORT_MON=1",
                 "--set", "PORT_MON_INTERVAL=2000", "--set", "PORT_MON_NODES=all")
        wormhole(inputs / "hpcc-bundled-example" / "config_hpcc.txt", "-o", t / "off")
        wormhole(inputs / "hpcc-bundled-example" / "config_hpcc.txt", "-o", t / "on", "--set", "WORMHOLE=1")
        wormhole(inputs / "llm" / "moe-32g.toml", "-o", t / "moe")
        wormhole(inputs / "llm" / "micro-allreduce-16g.toml", "-o", t / "micro")
        wormhole(inputs / "llm" / "micro-allreduce-16g.toml", "-o", t / "micro-hpcc", "--set", "CC_MODE=3")

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def analyze(self, *args, expect=0):
        p = subprocess.run([sys.executable, str(ANALYZE), *map(str, args)], capture_output=True, text=True,
                           timeout=TIMEOUT)
        self.assertNotIn("Traceback", p.stderr)
        self.assertEqual(p.returncode, expect, f"wh_analyze {args}:\n{p.stdout}\n{p.stderr}")
        return p

    def analyze_json(self, *args):
        return json.loads(self.analyze(*args, "--json").stdout)

    def check_png(self, path, min_w=500, min_h=350):
        """A PNG of at least min_w × min_h pixels with something drawn on at least 2 % of it."""
        data = Path(path).read_bytes()
        self.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n", path)
        w, h = struct.unpack(">II", data[16:24])
        self.assertGreaterEqual(w, min_w, path)
        self.assertGreaterEqual(h, min_h, path)
        self.assertGreater(len(data), 10_000, path)
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.image
        img = matplotlib.image.imread(str(path))[..., :3]
        inked = np.mean(np.any(img < 0.9, axis=-1))
        self.assertGreater(inked, 0.02, f"{path}: almost blank ({inked:.3%} drawn)")

    # ------------------------------------------------------------------ help

    def test_help_of_every_command(self):
        out = self.analyze("--help").stdout
        for cmd in ("summary", "plot-fct", "plot-layers", "plot-pfc", "compare", "plot-scaling", "plot-sweep"):
            self.assertIn(cmd, out)
            sub = self.analyze(cmd, "--help").stdout
            self.assertIn(f"wh_analyze.py {cmd}", sub)
        self.assertIn("ranks", self.analyze("plot-scaling", "--help").stdout)
        self.assertIn("start_ns", self.analyze("compare", "--help").stdout)

    # ------------------------------------------------------------------ summary

    def test_summary_flow_and_pfc_figures(self):
        h5 = self.tmp / "pfc" / "results.h5"
        with h5py.File(h5) as f:
            flows = f["flows"][:]
            pfc = f["pfc"][:]
            end = int(f["run"].attrs["sim_end_ns"])
        done = flows[flows["finished"] == 1]
        fct_us = done["fct_ns"] / 1000.0
        s = self.analyze_json("summary", h5)
        self.assertEqual(s["flows"]["flows"], len(flows))
        self.assertEqual(s["flows"]["finished"], len(done))
        self.assertAlmostEqual(s["flows"]["fct_us"]["mean"], float(np.mean(fct_us)), places=9)
        self.assertEqual(s["flows"]["fct_us"]["p99"], nearest_rank(fct_us, 0.99))
        self.assertAlmostEqual(s["flows"]["slowdown"]["mean"], float(np.mean(done["slowdown"])), places=12)
        self.assertEqual(s["flows"]["slowdown"]["p50"], nearest_rank(done["slowdown"], 0.50))
        self.assertEqual(s["pfc"]["frames"], len(pfc))
        self.assertGreater(len(pfc), 100, "BUFFER_SIZE 4 should make this incast pause")
        self.assertEqual(s["pfc"]["pause_frames"], int(np.sum(pfc["type"] == 1)))
        rows = [(int(r["time_ns"]), int(r["node"]), int(r["if_index"]), int(r["type"]), int(r["cls"])) for r in pfc]
        self.assertAlmostEqual(s["pfc"]["paused_port_time_us"], paused_port_time_ns(rows, end) / 1000.0, places=6)
        text = self.analyze("summary", h5).stdout
        self.assertIn(f"{len(done)} finished of {len(flows)}", text)
        self.assertIn(f"mean {np.mean(fct_us):.3f}", text)
        self.assertIn(f"{len(pfc):,} frames", text)

    def test_summary_of_fct_txt_and_of_a_workload(self):
        fct = read_fct(self.tmp / "incast" / "fct.txt")
        s = self.analyze_json("summary", self.tmp / "incast" / "fct.txt")
        self.assertEqual(s["flows"]["finished"], len(fct))
        self.assertAlmostEqual(s["flows"]["fct_us"]["mean"], sum(fct.values()) / len(fct) / 1000.0, places=9)
        h5 = self.tmp / "moe" / "results.h5"
        with h5py.File(h5) as f:
            times = f["workload/iterations"]["time_ps"] / 1e6
            exposed = f["workload"].attrs["total_exposed_ps"] / 1e6
        s = self.analyze_json("summary", h5)
        self.assertEqual(s["workload"]["iteration_time_us"], list(times))
        text = self.analyze("summary", h5).stdout
        self.assertIn(f"iteration 0: {times[0]:.3f} us", text)
        self.assertIn(f"exposed communication {exposed:.3f} us", text)
        # The GPU exposed longest, as the run's printout names it beside the report GPU.
        with h5py.File(h5) as f:
            slow, report = int(f["workload"].attrs["slowest_gpu"]), int(f["workload"].attrs["report_gpu"])
            rows = f["workload/gpus"][:]
        row = rows[list(rows["gpu"]).index(slow)]
        self.assertNotEqual(slow, report)  # this fixture's slowest GPU is another: its line must show
        self.assertEqual(s["workload"]["slowest_gpu"], slow)
        self.assertEqual(s["workload"]["slowest"]["finish_ps"], int(row["finish_ps"]))
        self.assertEqual(int(row["exposed_ps"]), int(rows["exposed_ps"].max()))
        line = (f"slowest GPU {slow}: compute {row['compute_ps'] / 1e6:.3f} us, exposed communication "
                f"{row['exposed_ps'] / 1e6:.3f} us; finished at {row['finish_ps'] / 1e6:.3f} us")
        self.assertIn(line, text)
        # A slowest GPU that never finished (a run stopped early) is said so, as the run's printout says it.
        sys.path.insert(0, str(SOURCE_DIR / "scripts"))
        from wh_analysis import summary as summary_mod
        s["workload"]["slowest"]["finish_ps"] = -1
        self.assertIn(f"exposed communication {row['exposed_ps'] / 1e6:.3f} us; did not finish", "\n".join(summary_mod.text(s)))

    def test_summary_of_a_wormhole_run(self):
        h5 = self.tmp / "on" / "results.h5"
        with h5py.File(h5) as f:
            a = dict(f["wormhole"].attrs)
        s = self.analyze_json("summary", h5)
        self.assertGreaterEqual(a["skips"], 1)
        self.assertEqual(s["wormhole"]["skips"], a["skips"])
        self.assertEqual(s["wormhole"]["events_skipped"], a["events_skipped"])
        self.assertIn(f"{a['skips']:,} skips", self.analyze("summary", h5).stdout)

    # ------------------------------------------------------------------ compare

    def test_compare_a_run_with_its_own_fct_txt(self):
        c = self.analyze_json("compare", self.tmp / "incast" / "fct.txt", self.tmp / "incast" / "results.h5")
        self.assertEqual((c["joined"], c["only_a"], c["only_b"]), (16, 0, 0))
        self.assertEqual(c["error"]["mean"], 0.0)
        self.assertEqual(c["error"]["max"], 0.0)

    def test_summary_of_a_stopped_workload_marks_its_last_iteration(self):
        # Three iterations asked for, stopped at 1.5 ms inside the first: one iteration reported, marked.
        out = self.tmp / "stopped"
        p = subprocess.run([str(WORMHOLE), "run", SOURCE_DIR / "inputs" / "llm" / "micro-allreduce-16g.toml", "-o", out,
                            "-q", "--set", "workload.iterations=3", "--set", 'workload.max_time="1.5ms"'],
                           capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual((out / "iterations.csv").read_text().splitlines(),
                         ["iteration,start_us,end_us,time_us,complete", "0,0.000,1279.014,1279.014,0"])
        text = self.analyze("summary", out).stdout
        self.assertIn("iteration 0: 1279.014 us (INCOMPLETE: the run stopped in it)", text)
        self.assertNotIn("iteration 1", text)
        self.assertIn("iteration 0: 1690.266 us\n", self.analyze("summary", self.tmp / "micro").stdout)

    def test_a_run_folder_stands_for_its_results(self):
        run = self.tmp / "incast"
        self.assertEqual(self.analyze_json("summary", run)["flows"], self.analyze_json("summary", run / "results.h5")["flows"])
        c = self.analyze_json("compare", run / "fct.txt", run)
        self.assertEqual((c["joined"], c["error"]["max"]), (16, 0.0))

    def test_an_empty_h5_is_not_read_as_fct_txt(self):
        empty = self.tmp / "empty.h5"
        empty.write_bytes(b"")
        p = self.analyze("summary", empty, expect=2)
        self.assertIn("named like an HDF5 file but not one", p.stderr)

    def test_compare_of_unrelated_runs_is_an_error(self):
        # Two runs that share no flow: no figure exists, so exit 2 with the reason, not a table of n/a.
        other = self.tmp / "unrelated_fct.txt"
        other.write_text("0b00ff01 0b00fe01 10000 100 1000 2000000000 5000 4000\n")
        p = self.analyze("compare", self.tmp / "incast" / "fct.txt", other, expect=2)
        self.assertIn("no finished flow joins on", p.stderr)
        self.assertIn(str(other), p.stderr)

    def test_compare_with_the_reference_gives_the_known_error(self):
        # DCQCN's random ECN marks make this incast differ from ns-3 flow by flow (docs/benchmarks.md, "Fidelity").
        ref, ours = read_fct(REF_INCAST_DCQCN), read_fct(self.tmp / "incast" / "fct.txt")
        errs = errors(ref, ours)
        self.assertEqual(len(errs), 16)
        png = self.tmp / "cmp" / "scatter.png"
        c = self.analyze_json("compare", REF_INCAST_DCQCN, self.tmp / "incast" / "results.h5", "--plot", png)
        self.assertEqual((c["joined"], c["only_a"], c["only_b"]), (16, 0, 0))
        self.assertAlmostEqual(c["error"]["mean"], sum(errs) / len(errs), places=12)
        self.assertEqual(c["error"]["p99"], nearest_rank(errs, 0.99))
        self.assertEqual(c["error"]["p50"], nearest_rank(errs, 0.50))
        self.assertGreater(c["error"]["mean"], 0.05)  # 14.7 % at SEED 1
        self.assertAlmostEqual(c["fct_mean_us_a"], 1321.11025, places=6)  # refruns' summary.json
        self.check_png(png)
        text = self.analyze("compare", REF_INCAST_DCQCN, self.tmp / "incast" / "results.h5").stdout
        self.assertIn(f"mean {100 * sum(errs) / len(errs):.3f} %", text)

    def test_compare_wormhole_off_and_on(self):
        off, on = read_fct(self.tmp / "off" / "fct.txt"), read_fct(self.tmp / "on" / "fct.txt")
        errs = errors(off, on)
        c = self.analyze_json("compare", self.tmp / "off" / "results.h5", self.tmp / "on" / "results.h5")
        self.assertEqual(c["joined"], 2)
        self.assertAlmostEqual(c["error"]["mean"], sum(errs) / 2, places=12)
        self.assertAlmostEqual(c["error"]["max"], max(errs), places=12)
        self.assertGreater(c["error"]["max"], 0)

    def test_compare_iteration_times_and_dependent_starts(self):
        a, b = self.tmp / "micro" / "results.h5", self.tmp / "micro-hpcc" / "results.h5"
        with h5py.File(a) as fa, h5py.File(b) as fb:
            ta, tb = int(fa["workload/iterations"]["time_ps"][0]), int(fb["workload/iterations"]["time_ps"][0])
            n = len(fa["flows"])
        self.assertNotEqual(ta, tb)
        c = self.analyze_json("compare", a, b)
        self.assertAlmostEqual(c["iterations"][0]["error"], abs(tb - ta) / ta, places=12)
        self.assertAlmostEqual(c["iteration_error_max"], abs(tb - ta) / ta, places=12)
        # HPCC moves the dependent ring steps' start times: they join only without start_ns.
        self.assertLess(c["joined"], n)
        self.assertIn("--ignore-start", c["hint"])
        c = self.analyze_json("compare", a, b, "--ignore-start")
        self.assertEqual((c["joined"], c["only_a"], c["only_b"]), (n, 0, 0))
        errs = errors(read_fct(a.parent / "fct.txt", False), read_fct(b.parent / "fct.txt", False))
        self.assertAlmostEqual(c["error"]["mean"], sum(errs) / len(errs), places=12)
        # A fct.txt has no iterations: the flows are still compared, the iteration time is not.
        c = self.analyze_json("compare", a, b.parent / "fct.txt", "--ignore-start")
        self.assertIsNone(c["iterations"])
        self.assertIn("only A", c["iteration_note"])

    # ------------------------------------------------------------------ plots

    def test_plot_fct(self):
        h5 = self.tmp / "moe" / "results.h5"
        with h5py.File(h5) as f:
            flows = f["flows"][:]
        out = self.tmp / "fct-plots"
        r = self.analyze_json("plot-fct", h5, "-o", out)
        self.assertEqual(r["slowdown"]["flows"], len(flows))
        self.assertEqual(r["slowdown"]["p99"], nearest_rank(flows["slowdown"], 0.99))
        sizes = sorted(set(int(s) for s in flows["size_bytes"]))
        self.assertEqual([b["size_lo"] for b in r["bins"]], sizes)  # 6 sizes: one bin each
        for b in r["bins"]:
            sel = flows["slowdown"][flows["size_bytes"] == b["size_lo"]]
            self.assertEqual(b["flows"], len(sel))
            self.assertEqual(b["p50"], nearest_rank(sel, 0.50))
        for name in ("fct_slowdown_cdf.png", "fct_slowdown_by_size.png"):
            self.check_png(out / name)

    def test_size_bins_cover_every_size_including_zero(self):
        # Log-spaced bins cannot hold 0 bytes: a 0-byte flow gets a bin of its own instead of vanishing.
        sys.path.insert(0, str(SOURCE_DIR / "scripts"))
        from wh_analysis.plots import size_bins
        sizes = np.array([0, 0] + [1000 * 2 ** i for i in range(20)])
        bins = size_bins(sizes)
        self.assertEqual(bins[0], (0, 0))
        covered = sum(int(np.sum((sizes >= lo) & (sizes <= hi))) for lo, hi in bins)
        self.assertEqual(covered, len(sizes))  # every flow in exactly one bin
        self.assertEqual(bins[-1][1], 1000 * 2 ** 19)

    def test_plot_layers(self):
        h5 = self.tmp / "moe" / "results.h5"
        with h5py.File(h5) as f:
            layers = f["workload/layers"][:]
            total = f["workload"].attrs["total_exposed_ps"]
        it0 = layers[layers["iteration"] == 0]
        png = self.tmp / "layers.png"
        r = self.analyze_json("plot-layers", h5, "-o", png)
        self.assertEqual(r["rows"], len(it0))
        for p in ("fwd", "ig", "wg"):
            self.assertAlmostEqual(r["exposed_us"][p], int(it0[f"{p}_exposed_ps"].sum()) / 1e6, places=6)
            self.assertAlmostEqual(r["comm_us"][p], int(it0[f"{p}_comm_ps"].sum()) / 1e6, places=6)
        self.assertAlmostEqual(r["exposed_total_us"], total / 1e6, places=6)  # one iteration
        self.check_png(png)
        self.analyze("plot-layers", h5, "-o", png, "--iteration", "1", expect=2)

    def test_plot_pfc_from_results_and_from_pfc_txt(self):
        run = self.tmp / "pfc"
        lines = [l.split() for l in (run / "pfc.txt").read_text().splitlines()]
        a = self.analyze_json("plot-pfc", run / "results.h5", "-o", self.tmp / "pfc-h5.png")
        b = self.analyze_json("plot-pfc", "--pfc", run / "pfc.txt", "-o", self.tmp / "pfc-txt.png")
        self.assertEqual(a["frames"], len(lines))
        self.assertEqual(a["pause_frames"], sum(1 for l in lines if l[4] == "1"))
        self.assertEqual(a["ports"], len({(l[1], l[3]) for l in lines}))
        for k in ("frames", "pause_frames", "resume_frames", "ports", "pauses", "max_paused_at_once"):
            self.assertEqual(a[k], b[k], k)
        rows = [(int(l[0]), int(l[1]), int(l[3]), int(l[4]), 3) for l in lines]
        self.assertAlmostEqual(b["paused_port_time_us"], paused_port_time_ns(rows, b["end_ns"]) / 1000.0, places=6)
        self.check_png(self.tmp / "pfc-h5.png")
        self.check_png(self.tmp / "pfc-txt.png")
        r = self.analyze_json("plot-pfc", self.tmp / "incast" / "results.h5", "-o", self.tmp / "pfc-none.png")
        self.assertEqual(r["frames"], 0)

    def test_plot_pfc_never_negative(self):
        # Regression: a PAUSE and its RESUME in the same ns were sorted end before start, and the paused-port count
        # went to -1 for that instant. Port (5, 1) pauses for 0 ns at 100, port (6, 1) from 200 to 300 ns.
        txt = self.tmp / "same-ns-pfc.txt"
        txt.write_text("100 5 1 1 1\n100 5 1 1 0\n200 6 1 1 1\n300 6 1 1 0\n")
        r = self.analyze_json("plot-pfc", "--pfc", txt, "-o", self.tmp / "same-ns.png")
        self.assertEqual(r["title"], f"PFC pauses of {self.tmp.name} (4 frames)")  # the run's name
        self.assertEqual(r["min_paused_ports"], 0)
        self.assertEqual(r["max_paused_at_once"], 1)
        self.assertEqual(r["pauses"], 2)
        self.assertAlmostEqual(r["paused_port_time_us"], 0.1)
        self.check_png(self.tmp / "same-ns.png")

    def test_plot_fct_overlay_of_runs(self):
        # The micro AllReduce under DCQCN and HPCC: one CDF per run, labelled, each run's own percentiles.
        a, b = self.tmp / "micro" / "results.h5", self.tmp / "micro-hpcc" / "results.h5"
        r = self.analyze_json("plot-fct", a, b, "-o", self.tmp / "overlay", "--label", "DCQCN", "HPCC")
        self.assertEqual([x["label"] for x in r["runs"]], ["DCQCN", "HPCC"])
        self.assertEqual(r["slowdown_over"], "true ideal FCT")
        for x, h5 in zip(r["runs"], (a, b)):
            with h5py.File(h5) as f:
                sd = f["flows"]["slowdown"][f["flows"]["finished"] == 1]
            self.assertEqual(x["flows"], len(sd))
            self.assertEqual(x["p99"], nearest_rank(sd, 0.99))
        for name in ("fct_slowdown_cdf.png", "fct_slowdown_by_size.png"):
            self.check_png(self.tmp / "overlay" / name)
        # With an fct.txt among them, every run's slowdown is the reference's ratio (the file has no other).
        r = self.analyze_json("plot-fct", self.tmp / "micro" / "fct.txt", b, "-o", self.tmp / "overlay2")
        self.assertEqual(r["slowdown_over"], "standalone FCT")
        self.assertEqual([x["label"] for x in r["runs"]], ["micro", "micro-hpcc"])
        self.analyze("plot-fct", a, b, "-o", self.tmp / "overlay3", "--label", "one", expect=2)

    def test_label_forms_alike(self):
        # Every command naming several runs takes `--label a b` and `--label a --label b` alike.
        a, b = self.tmp / "micro" / "results.h5", self.tmp / "micro-hpcc" / "results.h5"
        for cmd, out in (("plot-overlay", "ov.png"), ("plot-fct", "ovdir"), ("plot-runs", "runs-lab.png")):
            for form in (["--label", "A", "B"], ["--label", "A", "--label", "B"]):
                with self.subTest(cmd=cmd, form=form):
                    r = self.analyze_json(cmd, a, b, "-o", self.tmp / out, *form)
                    self.assertEqual([x["label"] for x in r["runs"]], ["A", "B"])
            self.analyze(cmd, a, b, "-o", self.tmp / out, "--label", "A", expect=2)
            self.analyze(cmd, a, b, "-o", self.tmp / out, "--label", "A", "B", "--label", "C", expect=2)

    def test_plot_runs_and_formats(self):
        runs = [self.tmp / n / "results.h5" for n in ("micro", "micro-hpcc", "moe")]
        r = self.analyze_json("plot-runs", *runs, "-o", self.tmp / "runs.png")
        for x, h5 in zip(r["runs"], runs):
            with h5py.File(h5) as f:
                w = f["workload"]
                self.assertEqual(x["iterations_ps"], [int(v) for v in w["iterations"]["time_ps"]])
                self.assertEqual(sum(x["report"].values()), int(w.attrs["total_exposed_ps"]))
                self.assertEqual(x["slowest_gpu"], int(w.attrs["slowest_gpu"]))
        self.check_png(self.tmp / "runs.png", min_w=800)
        self.analyze("plot-runs", self.tmp / "incast" / "results.h5", "-o", self.tmp / "x.png", expect=2)
        # --format: PDF and SVG by name.
        self.analyze("plot-runs", *runs[:2], "-o", self.tmp / "runs-vector", "--format", "pdf")
        self.assertEqual((self.tmp / "runs-vector.pdf").read_bytes()[:5], b"%PDF-")
        self.analyze("plot-fct", runs[0], "-o", self.tmp / "svg", "--format", "svg")
        self.assertIn(b"<svg", (self.tmp / "svg" / "fct_slowdown_cdf.svg").read_bytes()[:400])

    def test_plot_layers_by_type(self):
        # Summed by layer type (the name without its trailing number), the bars add up to the rows'.
        h5 = self.tmp / "moe" / "results.h5"
        with h5py.File(h5) as f:
            layers = f["workload/layers"][:]
        r = self.analyze_json("plot-layers", h5, "-o", self.tmp / "layers-type.png", "--by-type")
        self.assertTrue(r["by_type"])
        total = sum(int(layers[f"{p}_exposed_ps"].sum()) for p in ("fwd", "ig", "wg")) / 1e6
        self.assertAlmostEqual(sum(t["exposed_us"] for t in r["types"]), total, places=6)
        self.assertEqual(sum(t["rows"] for t in r["types"]), len(layers))
        moe = [t for t in r["types"] if t["type"] == "mlp_moelayer"][0]
        self.assertEqual(moe["rows"], int(sum(n == b"mlp_moelayer" for n in layers["name"])))
        self.assertEqual(r["top"][0]["type"], "mlp_moelayer")
        self.check_png(self.tmp / "layers-type.png")
        self.assertFalse(self.analyze_json("plot-layers", h5, "-o", self.tmp / "l.png")["by_type"])  # 43 rows

    def test_plot_links_and_queues(self):
        run = self.tmp / "pfc"
        with h5py.File(run / "monitor.h5") as m:
            util, q = m["utilisation"][:], m["queue_max_bytes"][:]
            ports = m["ports"][:]
        r = self.analyze_json("plot-links", run, "-o", self.tmp / "links.png", "--top", "10")
        self.assertEqual(r["ports_shown"], 10)
        n = r["rows"]
        busiest = max(r["ports"], key=lambda x: x["mean_utilisation"])
        j = int(np.argmax(util[:n].mean(axis=0)))
        self.assertEqual(busiest["port"], int(ports["port"][j]))     # the incast's bottleneck, switch 64 to host 0
        self.assertEqual((int(ports["node"][j]), int(ports["peer_node"][j])), (64, 0))
        self.assertAlmostEqual(busiest["mean_utilisation"], float(util[:n, j].mean()), places=5)
        self.check_png(self.tmp / "links.png")
        r = self.analyze_json("plot-queues", run / "results.h5", "-o", self.tmp / "queues.png", "--top", "3")
        self.assertEqual(r["ports"][0]["peak_bytes"], int(q.max()))
        self.check_png(self.tmp / "queues.png")
        r = self.analyze_json("plot-queues", run, "-o", self.tmp / "q1.png", "--port", "64:1")
        self.assertEqual(r["ports"][0]["name"], "64:1>0")
        self.analyze("plot-links", self.tmp / "incast", "-o", self.tmp / "x.png", expect=2)  # no monitor there
        self.analyze("plot-queues", run, "-o", self.tmp / "x.png", "--port", "99:9", expect=2)

    def test_minor_log_labels_do_not_crowd(self):
        # Regression: across a decade every minor tick of compare --plot was labelled, 600 to 1000 on top of each
        # other; now only 2 and 5 x 10^k are, and every one below 3x, none above 20x.
        sys.path.insert(0, str(SOURCE_DIR / "scripts"))
        from wh_analysis.plots import minor_log_labels
        f = minor_log_labels(120, 1500)
        self.assertEqual([f(v, 0) for v in range(200, 1000, 100)], ["200", "", "", "500", "", "", "", ""])
        self.assertEqual(minor_log_labels(800, 2000)(900, 0), "900")
        self.assertEqual(minor_log_labels(1, 100)(20, 0), "")

    def test_plot_scaling(self):
        path = self.tmp / "scaling.csv"
        path.write_text("# a strong-scaling study\nranks,wall_s,label\n1,8.0,ring\n2,4.4,ring\n4,2.6,ring\n"
                        "4,2.5,ring\n1,9,fat\n2,5,fat\n")
        r = self.analyze_json("plot-scaling", path, "-o", self.tmp / "scaling.png")
        ring = {p["ranks"]: p for p in r["curves"]["ring"]}
        self.assertAlmostEqual(ring[2]["speedup"], 8.0 / 4.4)
        self.assertAlmostEqual(ring[4]["speedup"], 8.0 / 2.5)  # the faster repetition
        self.assertAlmostEqual(ring[4]["efficiency"], 8.0 / 2.5 / 4)
        self.assertAlmostEqual(r["curves"]["fat"][1]["efficiency"], 9 / 5 / 2)
        self.check_png(self.tmp / "scaling.png", min_w=800)
        js = self.tmp / "weak.json"
        js.write_text(json.dumps({"rows": [{"ranks": 1, "wall_s": 10}, {"ranks": 8, "wall_s": 12.5}]}))
        r = self.analyze_json("plot-scaling", js, "-o", self.tmp / "weak.png", "--weak")
        self.assertAlmostEqual(r["curves"][""][1]["efficiency"], 0.8)

    def test_plot_sweep_reads_bench_wormhole_output(self):
        md = self.tmp / "sweep.md"
        p = subprocess.run([sys.executable, str(SOURCE_DIR / "scripts" / "bench_wormhole.py"), "--build",
                            str(WORMHOLE.parent), "--sweep-only", "--sweep-scenario",
                            str(SOURCE_DIR / "inputs" / "hpcc-bundled-example" / "config_hpcc.txt"),
                            "--sweep-thetas", "0.05,0.1", "--sweep-windows", "500,2000", "--out", str(md)],
                           capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(p.returncode, 0, p.stderr)
        # The long table: | θ | l | flows | mean FCT err | p99 FCT err | ... | speedup | ...
        rows = [l.strip().strip("|").split("|") for l in md.read_text().splitlines() if l.startswith("| ")]
        header = next(r for r in rows if r[0].strip() == "θ")
        col = {h.strip(): i for i, h in enumerate(header)}
        want = {}
        for r in rows[rows.index(header) + 1:]:
            if len(r) != len(header):
                continue
            err = r[col["mean FCT err"]].strip().rstrip("%").strip()
            speedup = float(r[col["speedup"]].strip().rstrip("x"))
            want[(float(r[col["θ"]]), int(r[col["l"]]))] = (float(err) / 100, speedup)
        self.assertEqual(len(want), 4)
        out = self.analyze_json("plot-sweep", md, "-o", self.tmp / "sweep.png")
        got = {(p["theta"], p["window"]): (p["error"], p["speedup"]) for p in out["points"]}
        self.assertEqual(set(got), set(want))
        for k in want:
            self.assertAlmostEqual(got[k][0], want[k][0], places=12)
            self.assertAlmostEqual(got[k][1], want[k][1], places=12)
        self.check_png(self.tmp / "sweep.png")
        # A CSV sweep: errors as fractions or with %, speedups with or without x; Pareto flags.
        path = self.tmp / "sweep.csv"
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerows([["theta", "window", "error", "speedup"], [0.05, 500, 0.002, 3.0], [0.1, 500, "0.5 %", "6x"],
                         [0.05, 2000, 0.001, 1.5], [0.1, 2000, 0.004, 2.0], [0.2, 2000, "–", 9]])
        out = self.analyze_json("plot-sweep", path, "-o", self.tmp / "sweep2.png")
        pts = {(p["theta"], p["window"]): p for p in out["points"]}
        self.assertAlmostEqual(pts[(0.1, 500)]["error"], 0.005)
        self.assertEqual(pts[(0.1, 500)]["speedup"], 6.0)
        self.assertEqual({k for k, p in pts.items() if p["pareto"]}, {(0.05, 500), (0.1, 500), (0.05, 2000)})
        self.assertEqual(out["skipped_rows"], [5])
        # Labels (a CC sweep): each label has its own Pareto front. DCQCN's (2x, 1 %) is not beaten by HPCC's
        # (3x, 0.5 %): another curve.
        path = self.tmp / "sweep_labels.csv"
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerows([["label", "theta", "window", "error", "speedup"], ["DCQCN", 0.05, 2000, 0.01, 2.0],
                         ["DCQCN", 0.1, 2000, 0.02, 1.5], ["HPCC", 0.05, 2000, 0.005, 3.0], ["HPCC", 0.1, 2000, 0.004, 2.5]])
        out = self.analyze_json("plot-sweep", path, "-o", self.tmp / "sweep3.png")
        front = {(p["label"], p["theta"]) for p in out["points"] if p["pareto"]}
        self.assertEqual(front, {("DCQCN", 0.05), ("HPCC", 0.05), ("HPCC", 0.1)})
        self.check_png(self.tmp / "sweep3.png")

    # ------------------------------------------------------------------ bad input

    def test_bad_inputs_exit_2_naming_the_file(self):
        t = self.tmp / "bad"
        t.mkdir(exist_ok=True)
        text = t / "notes.txt"
        text.write_text("hello\n")
        broken = t / "broken_fct.txt"
        good = (self.tmp / "incast" / "fct.txt").read_text().splitlines()
        broken.write_text("\n".join(good[:2] + ["0b000901 0b000001 10000 100 1000000 x 5 6"] + good[2:]) + "\n")
        scaling = t / "scaling.csv"
        scaling.write_text("ranks,wall_s\n1,2.0\n")
        with h5py.File(t / "empty.h5", "w") as f:
            f.create_group("something")
        with h5py.File(t / "nofields.h5", "w") as f:
            f["flows"] = np.zeros(2, dtype=[("src", "u4"), ("dst", "u4")])
        # A Chakra trace's run: /workload/layers without rows, exposure not split by group.
        shutil.copy(self.tmp / "moe" / "results.h5", t / "trace.h5")
        with h5py.File(t / "trace.h5", "r+") as f:
            dtype = f["workload/layers"].dtype
            del f["workload/layers"]
            f.create_dataset("workload/layers", shape=(0,), dtype=dtype)
            f["workload"].attrs["exposure_by_group"] = 0
        cases = [
            (("summary", t / "missing.h5"), "missing.h5: no such file"),
            (("summary", text), "notes.txt:1"),
            (("summary", t), "bad: a folder without results.h5"),
            (("summary", t / "empty.h5"), "empty.h5: no group /run"),
            (("plot-fct", t / "empty.h5", "-o", t), "empty.h5: no dataset /flows"),
            (("plot-fct", t / "nofields.h5", "-o", t), "nofields.h5: dataset /flows has no field(s) sport"),
            (("plot-layers", text, "-o", t / "x.png"), "notes.txt: not an HDF5 file"),
            (("plot-layers", self.tmp / "incast" / "results.h5", "-o", t / "x.png"), "results.h5: no /workload"),
            (("plot-layers", t / "trace.h5", "-o", t / "x.png"), "trace.h5: a Chakra trace's run has no per-layer view"),
            (("plot-pfc", t / "empty.h5", "-o", t / "x.png"), "empty.h5: no dataset /pfc"),
            (("plot-pfc", "--pfc", broken, "-o", t / "x.png"), "broken_fct.txt:1: expected 'time_ns"),
            (("plot-pfc", "-o", t / "x.png"), "either a results file or --pfc"),
            (("compare", self.tmp / "incast" / "fct.txt", broken), "broken_fct.txt:3: expected 'sip dip"),
            (("compare", t / "missing.txt", broken), "missing.txt: no such file"),
            (("plot-scaling", text, "-o", t / "x.png"), "notes.txt: no table with the column(s) ranks, wall_s"),
            (("plot-sweep", scaling, "-o", t / "x.png"),
             "scaling.csv: no table with the column(s) theta, window, error"),
            (("plot-layers", self.tmp / "moe" / "results.h5", "-o", t / "x.unknown"), "x.unknown"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                p = self.analyze(*args, expect=2)
                self.assertIn(message, p.stderr)
                self.assertTrue(p.stderr.startswith("wh_analyze: error: "), p.stderr)


class Distributions(unittest.TestCase):
    """compare's distribution figures: the KS statistic by hand, and the noise floor on seeds of the DCQCN incast."""

    def test_ks_statistic_known_answers(self):
        sys.path.insert(0, str(SOURCE_DIR / "scripts"))
        from wh_analysis.distribution import ks_statistic
        self.assertEqual(ks_statistic([1, 2, 3], [3, 2, 1]), 0.0)
        self.assertEqual(ks_statistic([1, 2], [3, 4]), 1.0)
        self.assertEqual(ks_statistic([1, 2, 3, 4], [3, 4, 5, 6]), 0.5)  # F_A(2) = 0.5, F_B(2) = 0
        self.assertAlmostEqual(ks_statistic([1, 2, 3], [2]), 1 / 3)  # at 1: 1/3 against 0; at 2: 2/3 against 1
        self.assertTrue(math.isnan(ks_statistic([], [1])))

    def test_welch_known_answer(self):
        sys.path.insert(0, str(SOURCE_DIR / "scripts"))
        from wh_analysis.ensemble import _difference, t95
        # reference 10, 12, 14 (mean 12, sd 2); one compared run 15, given the reference's spread:
        # se = sqrt(4/3 + 4/1) / 12 = 0.19245, t = 0.25 / 0.19245 = 1.299, Welch df = 5.333² / (1.333²/2 + 4²/2) = 3.2
        d = _difference([10, 12, 14], [15])
        self.assertAlmostEqual(d["rel"], 0.25)
        self.assertAlmostEqual(d["rel_se"], math.sqrt(4 / 3 + 4) / 12)
        self.assertAlmostEqual(d["t"], 0.25 / (math.sqrt(4 / 3 + 4) / 12))
        self.assertAlmostEqual(d["df"], 3.2)
        self.assertEqual(d["t_crit"], 3.182)
        self.assertFalse(d["significant"])
        self.assertTrue(_difference([10, 12, 14], [30, 31])["significant"])
        self.assertEqual(t95(1), 12.706)
        self.assertEqual(t95(1000), 2.0)
        # deterministic reference: any difference is significant, none is not
        self.assertTrue(_difference([5, 5], [5.001])["significant"])
        self.assertFalse(_difference([5, 5], [5])["significant"])
        # one run against one run: nothing is known of the noise, so nothing is significant (df was 0, its
        # critical value 0, and every difference was called significant)
        self.assertFalse(_difference([100], [110])["significant"])
        # one reference run against a spread ensemble: the ensemble's own spread and df (a lone 100 adds no term):
        # se = sqrt(0 + 4/3) / 100, t = 0.12 / 0.011547 = 10.4, df 2, t95 = 4.303
        d = _difference([100], [110, 112, 114])
        self.assertAlmostEqual(d["df"], 2.0)
        self.assertTrue(d["significant"])

    def test_ensembles_of_seeds(self):
        # The DCQCN 16-to-1 incast's outcome depends on the random ECN draws, heavy-tailed (SEEDs 1-5: makespan
        # 1,571 us mean, sd 7.2 %): SEEDs 1-5 are the reference ensemble; SEED 6 is one more draw (nothing beyond
        # the noise); a run marking from the first byte is not: its p90 slowdown is +9.6 %, t = 4.08 against 2.57
        # (its makespan, +11 % with t = 1.41, stays inside this ensemble's spread).
        d = Path(tempfile.mkdtemp(prefix="wh_e2e_dist_"))
        self.addCleanup(shutil.rmtree, d, ignore_errors=True)
        cfg = SOURCE_DIR / "inputs" / INCAST / "config_dcqcn.txt"
        runs = {}
        for name, sets in [(f"s{k}", [f"SEED={k}"]) for k in range(1, 7)] + [
                ("big", ["KMIN_MAP=2 100000000000 1 400000000000 1600"])]:
            out = d / name
            wormhole(cfg, "-o", out, *[x for kv in sets for x in ("--set", kv)])
            runs[name] = out / "results.h5"
        noise = ["--noise"] + [runs[f"s{k}"] for k in range(2, 6)]
        p = subprocess.run(["/usr/bin/python3", str(ANALYZE), "compare", runs["s1"], runs["s6"], *noise, "--json"],
                           capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(p.returncode, 0, p.stderr)
        r = json.loads(p.stdout)
        e = r["ensemble"]
        self.assertEqual((e["makespan_us"]["ref_n"], e["makespan_us"]["test_n"]), (5, 1))
        self.assertEqual(e["beyond_noise"], [])
        self.assertEqual(len(r["distribution"]["bins"]), 1)  # one size: 1,000,000 B
        p = subprocess.run(["/usr/bin/python3", str(ANALYZE), "compare", runs["s1"], runs["big"], *noise],
                           capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("differences beyond the noise (Welch t-test, 95 %): p90 of 1,000,000 B", p.stdout)
        self.assertRegex(p.stdout, r"slowdown \(FCT / standalone FCT\) distribution of all finished flows: KS statistic \d\.\d{4}")

if __name__ == "__main__":
    unittest.main(verbosity=2)
