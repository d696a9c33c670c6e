#!/usr/bin/python3
"""End-to-end tests of Wormhole (steady-state detection and fast-forwarding) through the CLI.

Wormhole off, and Wormhole detecting without skipping, reproduce the reference byte for byte; on the
upstream bundled example (two 200 MB HPCC flows, 36 ms) one skip covers ~93 % of each flow and the
FCTs stay within the paper's rate-estimate bound θ/(1−θ) over the skipped part; the HDF5 /wormhole
group agrees with the summary line; misspelt [wormhole] keys are named. Environment as test_refruns.py.
"""
import math
import re
import subprocess
import tempfile
import unittest
from pathlib import Path

import h5py

from test_refruns import REFRUNS, RING_1MB, SOURCE_DIR, WORMHOLE, WormholeTestCase, copy_scenario, read_fct, run

BUNDLED = "hpcc-bundled-example"


class WormholeOffIsPacketMode(WormholeTestCase):
    def check_identical(self, *sets):
        work = copy_scenario(RING_1MB, Path(tempfile.mkdtemp(dir=self.tmp)))
        args = [a for s in sets for a in ("--set", s)]
        proc = run(work, "config_hpcc.txt", "-q", *args)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        for name in ("fct.txt", "pfc.txt"):
            self.assertEqual((work / "out" / "hpcc" / name).read_bytes(),
                             (REFRUNS / RING_1MB / "out_hpcc" / name).read_bytes(), f"{sets}: {name}")

    def test_wormhole_0_is_byte_identical(self):
        self.check_identical("WORMHOLE=0")

    def test_detection_without_skipping_is_byte_identical(self):
        # Ticks and rate windows run (l = 50 so windows fill inside these ~100-µs flows); nothing moves.
        self.check_identical("WORMHOLE=1", "WORMHOLE_FAST_FORWARD=0", "WORMHOLE_WINDOW=50")


class BundledExampleFastForwarded(WormholeTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.runs = {}
        for mode in ("off", "on"):
            work = copy_scenario(BUNDLED, Path(tempfile.mkdtemp(dir=cls.tmp)))
            proc = run(work, "config_hpcc.txt", "--set", f"WORMHOLE={1 if mode == 'on' else 0}")
            if proc.returncode != 0:
                raise AssertionError(f"{mode}: {proc.stderr}")
            cls.runs[mode] = (work, proc.stdout)

    def test_fcts_within_the_rate_bound_over_the_skipped_part(self):
        off = read_fct(self.runs["off"][0] / "out" / "hpcc" / "fct.txt")
        on = read_fct(self.runs["on"][0] / "out" / "hpcc" / "fct.txt")
        self.assertEqual(set(on), set(off))
        with h5py.File(self.runs["on"][0] / "out" / "hpcc" / "results.h5") as f:
            flows = f["flows"][:]
        theta = 0.05
        for row in flows:
            key = next(k for k in off if k[2] == row["sport"] and int(k[0], 16) >> 8 & 0xffff == row["src"])
            err = abs(on[key][1] - off[key][1]) / off[key][1]
            # Theorem 2 of the paper: |R̂ − R| / R < θ / (1 − θ), applied to the skipped fraction.
            self.assertGreater(row["skipped_fraction"], 0.9)
            self.assertLess(err, theta / (1 - theta) * row["skipped_fraction"], f"flow {row['id']}: {err:.4%}")

    def test_report_agrees_with_summary(self):
        work, stdout = self.runs["on"]
        m = re.search(r"wormhole: (\d+) skips \((\d+) pulled back\), (\d+) steady checks \((\d+) steady, smallest "
                      r"spread ([0-9.]+)\), (\d+) packets credited, "
                      r"~(\d+) events skipped", stdout)
        self.assertIsNotNone(m, stdout)
        skips, backs, checks, found, spread, pkts, events = m.groups()
        skips, backs, checks, found, pkts, events = map(int, (skips, backs, checks, found, pkts, events))
        self.assertEqual((skips, backs), (1, 0))
        with h5py.File(work / "out" / "hpcc" / "results.h5") as f:
            self.assertEqual(int(f.attrs["layout_version"]), 5)
            g = f["wormhole"]
            self.assertEqual(int(g.attrs["skips"]), skips)
            self.assertEqual(int(g.attrs["steady_checks"]), checks)
            self.assertEqual(int(g.attrs["steady_found"]), found)
            # The one skip followed the one check that found the partition steady, below θ.
            self.assertEqual(found, 1)
            self.assertLess(float(g.attrs["min_spread"]), 0.05)
            self.assertAlmostEqual(float(g.attrs["min_spread"]), float(spread), places=4)
            self.assertEqual(int(g.attrs["sample_interval_ps"]), 1_000_000)
            self.assertEqual(int(g.attrs["packets_skipped"]), pkts)
            self.assertEqual(int(g.attrs["events_skipped"]), events)
            self.assertEqual(int(g.attrs["events_executed"]), int(f["run"].attrs["events"]))
            # 2 flows of 200,000 packets; the credited ones are never sent.
            flows = f["flows"][:]
            self.assertEqual(int(flows["skipped_bytes"].sum()), pkts * 1000)
            self.assertLess(pkts, 400_000)
            # One partition (both flows share the switch port to host 1): alive, skipped, alive, gone.
            part = g["partitions"][:]
            self.assertEqual([(int(p["partitions"]), int(p["skipping"])) for p in part],
                             [(1, 0), (1, 1), (1, 0), (0, 0)])
            with h5py.File(self.runs["off"][0] / "out" / "hpcc" / "results.h5") as off:
                self.assertNotIn("wormhole", off)
                self.assertEqual(int(off["flows"][:]["skipped_bytes"].sum()), 0)


class LineRateWindow(WormholeTestCase):
    def test_flows_meeting_at_a_switch_keep_the_full_window(self):
        # The bundled example's two flows share the switch port to host 1: with the line-rate window on
        # (a config file key) the partition keeps the full window, and its decisions are those without it.
        outs = {}
        for mode, sets in (("off", []), ("on", ["--set", "WORMHOLE_LINE_RATE_WINDOW=1"])):
            work = copy_scenario(BUNDLED, Path(tempfile.mkdtemp(dir=self.tmp)))
            proc = run(work, "config_hpcc.txt", "--set", "WORMHOLE=1", *sets)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            outs[mode] = (work / "out" / "hpcc", proc.stdout)
        self.assertEqual((outs["on"][0] / "fct.txt").read_bytes(), (outs["off"][0] / "fct.txt").read_bytes())
        # 36 samples while one flow ran alone (4 × ⌈2 RTTs⌉ of its 4.16-µs RTT; it outlasted the window).
        self.assertIn("at most 1 partitions; line-rate window 36-2000 samples\n", outs["on"][1])
        self.assertNotIn("line-rate window", outs["off"][1])
        with h5py.File(outs["on"][0] / "results.h5") as f:
            g = f["wormhole"]
            self.assertEqual((int(g.attrs["line_rate_window"]), int(g.attrs["line_rate_window_min"]),
                              int(g.attrs["line_rate_window_max"])), (1, 36, 2000))
        with h5py.File(outs["off"][0] / "results.h5") as f:
            self.assertEqual(int(f["wormhole"].attrs["line_rate_window"]), 0)

    def test_scenario_key(self):
        # [wormhole] line_rate_window: a bool, reported in the effective settings; a number is refused.
        out = self.tmp / "lrw"
        proc = subprocess.run([str(WORMHOLE), "run", str(SOURCE_DIR / "inputs" / "llm" / "micro-allreduce-16g.toml"),
                               "-o", str(out), "--set", "wormhole.enabled=true", "--set", "wormhole.line_rate_window=true"],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with h5py.File(out / "results.h5") as f:
            self.assertEqual(int(f["wormhole"].attrs["line_rate_window"]), 1)
        bad = subprocess.run([str(WORMHOLE), "run", str(SOURCE_DIR / "inputs" / "llm" / "micro-allreduce-16g.toml"),
                              "-o", str(self.tmp / "lrw-bad"), "--set", "wormhole.line_rate_window=3"],
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(bad.returncode, 2, bad.stderr)
        self.assertIn("line_rate_window", bad.stderr)


class WormholeSettingsErrors(WormholeTestCase):
    """Bad [wormhole] values: exit 2, the key named and a fix given, nothing run."""

    def check_rejected(self, override, *expected):
        proc = subprocess.run([str(WORMHOLE), "run", str(SOURCE_DIR / "inputs" / "llm" / "micro-allreduce-16g.toml"),
                               "-o", str(self.tmp / "bad"), "--set", override],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        for text in expected:
            self.assertIn(text, proc.stderr)
        self.assertIn("(fix: ", proc.stderr)

    def test_bad_settings_are_rejected(self):
        self.check_rejected("wormhole.thta=0.1", "thta", "theta")
        self.check_rejected("wormhole.theta=0", "theta must be above 0 and below 1")
        self.check_rejected("wormhole.theta=1.5", "theta must be above 0 and below 1")
        self.check_rejected("wormhole.window=0", "window must be at least 1 sample", "--set wormhole.window=2000")
        self.check_rejected("wormhole.sample_interval=5", "sample_interval")
        self.check_rejected("WORMHOLE_THETA=2", "WORMHOLE_THETA")
        self.check_rejected("wormhole=1", "wormhole.enabled=true")


if __name__ == "__main__":
    unittest.main(verbosity=2)
