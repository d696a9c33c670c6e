#!/usr/bin/python3
"""End-to-end tests of `wormhole memo merge|stats|inspect` on memo files written with h5py from the
documented layout (memo/README.md): two files with one pattern in common merge into their union
with the hits added; stats and inspect describe it; a foreign or corrupt file is refused (exit 2,
file named). Environment as test_refruns.py."""
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

import h5py
import numpy as np

from test_refruns import REFRUNS, SOURCE_DIR, WORMHOLE, copy_scenario, read_fct, run

NS = np.dtype([("ns", "<u8"), ("description", h5py.string_dtype())])
ENTRY = np.dtype([("ns", "<u8"), ("wl_hash", "<u8"), ("vertices", "<u4"), ("edges", "<u4"),
                  ("vertex_offset", "<u8"), ("edge_offset", "<u8"), ("duration_ps", "<i8"),
                  ("visible_from_ps", "<i8"), ("hits", "<u8"), ("rejected", "u1")])
VERTEX = np.dtype([("rate_q", "<u8"), ("bottleneck_bps", "<u8"), ("line_bps", "<u8"), ("rtt_ns", "<u8"),
                   ("hops", "<u4"), ("fresh", "u1"), ("bytes", "<u8"), ("end_rate_bps", "<u8"),
                   ("goodput_bytes_per_ps", "<f8"), ("trend_per_ps", "<f8"), ("trend_age_ps", "<i8")])
CC = np.dtype([("kind", "u1"), ("rate_bps", "<u8"), ("timer0_ps", "<i8"), ("timer1_ps", "<i8"), ("timer2_ps", "<i8"),
               ("snd_nxt", "<u8"), ("a0", "<u8"), ("a1", "<u8"), ("a2", "<u8"), ("a3", "<u8"), ("x0", "<f8"),
               ("r0", "<u8"), ("r1", "<u8"), ("hop_u", "<f8", (5,)), ("hop_rc_bps", "<u8", (5,)),
               ("hop_stage", "<u4", (5,))])
EDGE = np.dtype([("u", "<u4"), ("v", "<u4"), ("weight", "<u4"), ("u_acks", "<u4"), ("v_acks", "<u4")])
G = 10**9


def write_memo(path, patterns):
    """patterns: list of (labels [(rate_q, bottleneck)], edges [(u, v, w)], hits)."""
    entries, vertices, edges = [], [], []
    for labels, es, hits in patterns:
        entries.append((7, 0, len(labels), len(es), len(vertices), len(edges), 5_000_000, 0, hits, 0))
        vertices += [(r, b, 100 * G, 4160, 2, 0, 1000 * (i + 1), 40 * G, 0.005, 0.0, 0) for i, (r, b) in enumerate(labels)]
        edges += [(u, v, w, 0, 0) for u, v, w in es]
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "wormhole-memo"
        f.attrs["layout_version"] = np.uint64(7)
        f.create_dataset("namespaces", data=np.array([(7, "DCQCN test")], dtype=NS))
        f.create_dataset("entries", data=np.array(entries, dtype=ENTRY))
        f.create_dataset("vertices", data=np.array(vertices, dtype=VERTEX))
        f.create_dataset("edges", data=np.array(edges, dtype=EDGE))
        # DCQCN at 40 Gb/s (target 40G, alpha 0.5, first CNP seen), no timer armed
        cc = [(1, 40 * G, -1, -1, -1, 0, 40 * G, 0, 0, 0, 0.5, 0, 0, [0] * 5, [0] * 5, [0] * 5)] * len(vertices)
        f.create_dataset("cc", data=np.array(cc, dtype=CC))


# A chain of three flows (the first at 30 Gb/s), the same chain listed the other way round, and a pair.
CHAIN = ([(30, 100 * G), (50, 100 * G), (50, 100 * G)], [(0, 1, 1), (1, 2, 1)], 2)
CHAIN_REVERSED = ([(50, 100 * G), (50, 100 * G), (30, 100 * G)], [(0, 1, 1), (1, 2, 1)], 5)
PAIR = ([(50, 100 * G), (50, 100 * G)], [(0, 1, 2)], 1)


class MemoCommands(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="wh_e2e_memo_"))

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def wh(self, *args, expect=0):
        p = subprocess.run([str(WORMHOLE), "memo", *map(str, args)], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, expect, p.stdout + p.stderr)
        return p

    def test_merge_stats_inspect(self):
        write_memo(self.dir / "a.h5", [CHAIN, PAIR])
        write_memo(self.dir / "b.h5", [CHAIN_REVERSED])
        p = self.wh("merge", self.dir / "a.h5", self.dir / "b.h5", "-o", self.dir / "m.h5")
        self.assertIn("2 patterns and 0 collective patterns in 1 namespaces from 2 files", p.stdout)
        with h5py.File(self.dir / "m.h5") as f:
            e = f["entries"][:]
            self.assertEqual(sorted(int(x) for x in e["vertices"]), [2, 3])
            self.assertEqual(int(e[e["vertices"] == 3]["hits"][0]), 7)  # 2 + 5
            self.assertEqual(len(f["vertices"]), 5)
        p = self.wh("stats", self.dir / "m.h5")
        self.assertIn("2 patterns, 5 flows and 3 contention edges in all, 8 hits, 0 rejected by verify mode", p.stdout)
        self.assertIn("DCQCN test", p.stdout)
        p = self.wh("merge", self.dir / "m.h5", self.dir / "m.h5", "-o", self.dir / "twice.h5", expect=2)
        self.assertIn("given twice to memo merge", p.stderr)
        p = self.wh("inspect", self.dir / "m.h5", "--limit", "1")
        self.assertIn("... 1 more", p.stdout)

    def test_foreign_and_corrupt_files(self):
        (self.dir / "text.h5").write_text("hello\n")
        p = self.wh("stats", self.dir / "text.h5", expect=2)
        self.assertIn("text.h5: not an HDF5 file", p.stderr)
        with h5py.File(self.dir / "other.h5", "w") as f:
            f.create_dataset("flows", data=np.arange(3))
        p = self.wh("inspect", self.dir / "other.h5", expect=2)
        self.assertIn("not a wormhole memo file", p.stderr)
        write_memo(self.dir / "bad.h5", [CHAIN])
        with h5py.File(self.dir / "bad.h5", "a") as f:
            e = f["entries"][:]
            e["vertex_offset"] = 99
            f["entries"][...] = e
        p = self.wh("merge", self.dir / "bad.h5", "-o", self.dir / "x.h5", expect=2)
        self.assertIn("points past the vertex or edge tables", p.stderr)
        self.assertFalse((self.dir / "x.h5").exists())

    def test_a_run_records_its_patterns(self):
        # The bundled example with WORMHOLE_MEMO 1: its two flows share the switch port to host 1
        # (one contention edge of weight 1) and converge once before the skip: one pattern.
        work = copy_scenario("hpcc-bundled-example", self.dir)
        p = run(work, "config_hpcc.txt", "--set", "WORMHOLE=1", "--set", "WORMHOLE_MEMO=1")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("memo: 4 unsteady periods: 0 replayed (0 hits), 1 simulated to convergence (1 new patterns",
                      p.stdout)
        memo = work / "out" / "hpcc" / "memo.h5"
        with h5py.File(memo) as f:
            self.assertEqual(f.attrs["format"], "wormhole-memo")
            e = f["entries"][:]
            self.assertEqual((len(e), int(e[0]["vertices"]), int(e[0]["edges"])), (1, 2, 1))
            self.assertEqual(int(f["edges"][0]["weight"]), 1)
            self.assertTrue((f["vertices"][:]["bytes"] > 0).all())
            self.assertIn("CC_MODE=3", f["namespaces"][0]["description"].decode())
        p = self.wh("stats", memo)
        self.assertIn("1 patterns, 2 flows and 1 contention edges", p.stdout)
        # results.h5 records what memoization did, and the analysis CLI shows it
        with h5py.File(work / "out" / "hpcc" / "results.h5") as f:
            w = f["wormhole"].attrs
            self.assertEqual((int(w["memo"]), int(w["memo_periods"]), int(w["memo_converged"]), int(w["memo_patterns"])),
                             (1, 4, 1, 1))
            self.assertTrue(w["memo_output"].endswith("memo.h5"))
        p = subprocess.run(["/usr/bin/python3", str(SOURCE_DIR / "scripts" / "wh_analyze.py"), "summary",
                            str(work / "out" / "hpcc" / "results.h5")], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("memo      4 unsteady periods: 0 replayed (0 pulled back, 0 cut short, 0 refused), 1 simulated to convergence",
                      p.stdout)

    def test_warm_start(self):
        # A second run of the bundled example from the first one's memo file: the pattern is known from
        # time 0, so the period at the flows' start is replayed instead of simulated; the FCTs stay within
        # the accuracy target of the reference (HPCC ns-3) output.
        work = copy_scenario("hpcc-bundled-example", self.dir)
        p = run(work, "config_hpcc.txt", "--set", "WORMHOLE=1", "--set", "WORMHOLE_MEMO=1")
        self.assertEqual(p.returncode, 0, p.stderr)
        db = self.dir / "warm.h5"
        shutil.copy2(work / "out" / "hpcc" / "memo.h5", db)
        p = run(work, "config_hpcc.txt", "--set", "WORMHOLE=1", "--memo", str(db))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("memo: 4 unsteady periods: 1 replayed (1 hits), 0 simulated to convergence", p.stdout)
        self.assertIn(f"(warm start: 1 patterns from {db})", p.stdout)
        self.assertRegex(p.stdout, r"wormhole: 1 memoized periods replayed \(0 pulled back, 0 cut short where a flow neared its end, 0 refused\)")
        ref = {tuple(l.split()[:4]): int(l.split()[6])
               for l in (REFRUNS / "hpcc-bundled-example" / "out_hpcc" / "fct.txt").read_text().splitlines() if l.strip()}
        ours = {tuple(l.split()[:4]): int(l.split()[6])
                for l in (work / "out" / "hpcc" / "fct.txt").read_text().splitlines() if l.strip()}
        self.assertEqual(set(ref), set(ours))
        errs = [abs(ours[k] - ref[k]) / ref[k] for k in ref]
        self.assertLess(sum(errs) / len(errs), 0.01)  # the accuracy target: mean FCT error < 1 %

    def test_warm_start_refusals(self):
        # Each refused before anything is written: the earlier run's fct.txt survives untouched.
        work = copy_scenario("hpcc-bundled-example", self.dir)
        p = run(work, "config_hpcc.txt", "--set", "WORMHOLE=1", "--set", "WORMHOLE_MEMO=1")
        self.assertEqual(p.returncode, 0, p.stderr)
        db = work / "out" / "hpcc" / "memo.h5"
        fct = work / "out" / "hpcc" / "fct.txt"
        before = fct.read_bytes()
        # another namespace: the same network with DCQCN
        p = run(work, "config_hpcc.txt", "--set", "WORMHOLE=1", "--set", "CC_MODE=1", "--memo", str(db))
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn(str(db), p.stderr)
        self.assertIn("the memo file is not for this run's settings", p.stderr)
        self.assertIn("CC_MODE=3 there, CC_MODE=1 here", p.stderr)
        # another θ, another rate quantum: the detection settings are part of the namespace
        for key, value in (("WORMHOLE_THETA", "0.1"), ("WORMHOLE_MEMO_RATE_QUANTUM_GBPS", "0.5")):
            p = run(work, "config_hpcc.txt", "--set", "WORMHOLE=1", "--set", f"{key}={value}", "--memo", str(db))
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn(f"{key}={value} here", p.stderr)
        # A setting only some runs describe (the line-rate window, with its error bound) is matched by name:
        # compared item by item in order, its absence shifted every later item, and the message named
        # "WORMHOLE_LINE_RATE_WINDOW=1 there, WORMHOLE_SAMPLE_INTERVAL_US=1 here", a setting alike in both.
        lrw = self.dir / "lrw"
        p = run(work, "config_hpcc.txt", "-o", str(lrw), "--set", "WORMHOLE=1", "--set", "WORMHOLE_MEMO=1", "--set",
                "WORMHOLE_LINE_RATE_WINDOW=1")
        self.assertEqual(p.returncode, 0, p.stderr)
        p = run(work, "config_hpcc.txt", "--set", "WORMHOLE=1", "--memo", str(lrw / "memo.h5"))
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("WORMHOLE_LINE_RATE_WINDOW=1 there, WORMHOLE_LINE_RATE_WINDOW not set here", p.stderr)
        # Wormhole off
        p = run(work, "config_hpcc.txt", "--memo", str(db))
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("--memo given but Wormhole is off", p.stderr)
        self.assertNotIn("Wormhole settings are given", p.stderr)  # the setting --memo implies is not the user's
        # not a memo file
        p = run(work, "config_hpcc.txt", "--set", "WORMHOLE=1", "--memo", str(work / "out" / "hpcc" / "results.h5"))
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("not a wormhole memo file", p.stderr)
        # --memo-out onto another output, or onto a folder: refused before the run (it overwrote results.h5)
        for target, said in ((fct.parent / "results.h5", "is also where the run writes"), (fct.parent, "is a directory")):
            p = run(work, "config_hpcc.txt", "--set", "WORMHOLE=1", "--set", "WORMHOLE_MEMO=1", "--memo-out", str(target))
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn(said, p.stderr)
        self.assertEqual(fct.read_bytes(), before)

    def test_memo_out_onto_a_training_runs_results_is_refused(self):
        # A .toml scenario's outputs are named from its [output] dir (or -o): the check once ran before they
        # were, so --memo-out onto results.h5 was let through and the memo file replaced the results.
        out = self.dir / "train"
        out.mkdir()
        scenario = SOURCE_DIR / "inputs" / "llm" / "micro-allreduce-16g.toml"
        for target in (out / "results.h5", out / "fct.txt", out / "gpus.csv", out / "end_to_end.csv"):
            p = subprocess.run([str(WORMHOLE), "run", str(scenario), "-o", str(out), "-q", "--set", "wormhole.enabled=true",
                                "--set", "wormhole.memo=true", "--memo-out", str(target)], capture_output=True, text=True)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn(f"--memo-out {target} is also where the run writes", p.stderr)
        self.assertEqual(sorted(out.iterdir()), [])  # refused before anything was written
        # Into the folder -o is about to make: accepted (the folder is made before the memo file's is checked).
        fresh = self.dir / "fresh"
        p = subprocess.run([str(WORMHOLE), "run", str(scenario), "-o", str(fresh), "-q", "--set", "wormhole.enabled=true",
                            "--set", "wormhole.memo=true", "--memo-out", str(fresh / "m.h5")], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertTrue((fresh / "m.h5").is_file() and (fresh / "results.h5").is_file())
        (self.dir / "cfg").mkdir()
        work = copy_scenario("hpcc-bundled-example", self.dir / "cfg")
        p = run(work, "config_hpcc.txt", "-o", str(work / "new"), "--set", "WORMHOLE=1", "--set", "WORMHOLE_MEMO=1",
                "--memo-out", str(work / "new" / "m.h5"))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertTrue((work / "new" / "m.h5").is_file())
        # ... but not as the folder -o is about to make (it failed only when the memo file was written, at the end).
        p = run(work, "config_hpcc.txt", "-o", str(work / "newer"), "--set", "WORMHOLE=1", "--set", "WORMHOLE_MEMO=1",
                "--memo-out", str(work / "newer"))
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("is a directory", p.stderr)
        self.assertFalse((work / "newer" / "fct.txt").exists())
        # ... nor into a folder that does not exist: refused before -o's folder is made (it was left behind, empty),
        # with a hint that fits --memo-out (it named --output-dir, which this run had given as -o).
        p = run(work, "config_hpcc.txt", "-o", str(work / "newest"), "--set", "WORMHOLE=1", "--set", "WORMHOLE_MEMO=1",
                "--memo-out", str(work / "nowhere" / "m.h5"))
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("does not exist (fix: create it (mkdir -p", p.stderr)
        self.assertNotIn("--output-dir", p.stderr)
        self.assertFalse((work / "newest").exists())
        # ... nor onto a monitor's file (the config's queue monitor writes qlen.txt there).
        p = run(work, "config_hpcc.txt", "-o", str(work / "new"), "--set", "WORMHOLE=1", "--set", "WORMHOLE_MEMO=1",
                "--memo-out", str(work / "new" / "qlen.txt"))
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("is also where the run writes", p.stderr)

    def test_memo_flag_beside_an_explicit_memo_setting(self):
        # --memo implies WORMHOLE_MEMO 1: said again with --set it is no "set twice" warning (it was one,
        # naming "command line:0 ... line 0"); turned off with --set it contradicts --memo and is refused.
        work = copy_scenario("hpcc-bundled-example", self.dir)
        p = run(work, "config_hpcc.txt", "--set", "WORMHOLE=1", "--set", "WORMHOLE_MEMO=1")
        self.assertEqual(p.returncode, 0, p.stderr)
        db = self.dir / "warm.h5"
        shutil.copy2(work / "out" / "hpcc" / "memo.h5", db)
        p = run(work, "config_hpcc.txt", "--set", "WORMHOLE=1", "--set", "WORMHOLE_MEMO=1", "--memo", str(db))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("is also set", p.stderr)
        self.assertIn("1 replayed", p.stdout)
        for off in ("WORMHOLE_MEMO=0", "wormhole.memo=false"):
            p = run(work, "config_hpcc.txt", "--set", "WORMHOLE=1", "--set", off, "--memo", str(db))
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn("turns it off", p.stderr)

    def test_same_result_for_any_thread_count(self):
        # GPT-7B on 64 GPUs without TP (0.3 s with memoization): 56 DP ring steps on identical rails (each
        # ring one partition: its flows' ACKs leave through the ports of each other's data), one pattern
        # replayed 48 times. Lookups run on oneTBB threads; the outcome must not depend on how many.
        outs = {}
        for threads in (1, 2, 4):
            out = self.dir / f"t{threads}"
            p = subprocess.run([str(WORMHOLE), "run", str(SOURCE_DIR / "inputs" / "llm" / "gpt7b-64g.toml"), "-o", str(out),
                                "--set", "wormhole.enabled=true", "--set", "wormhole.memo=true", "--set",
                                f"wormhole.threads={threads}", "--set", 'workload.ignore_groups=["TP"]'],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            m = re.search(r"memo: (\d+) unsteady periods: (\d+) replayed \((\d+) hits\)", p.stdout)
            self.assertIsNotNone(m, p.stdout)
            self.assertGreater(int(m.group(2)), 40)  # most of the 56 ring steps (8 rings x 7 steps) replayed
            outs[threads] = ((out / "fct.txt").read_bytes(), (out / "iterations.csv").read_bytes(), m.groups())
        self.assertEqual(outs[1], outs[2])
        self.assertEqual(outs[1], outs[4])

    def bundled_memo(self):
        """A real memo file: the bundled example's one pattern (HPCC), and the work folder."""
        work = copy_scenario("hpcc-bundled-example", self.dir)
        p = run(work, "config_hpcc.txt", "--set", "WORMHOLE=1", "--set", "WORMHOLE_MEMO=1")
        self.assertEqual(p.returncode, 0, p.stderr)
        db = self.dir / "real.h5"
        shutil.copy2(work / "out" / "hpcc" / "memo.h5", db)
        return work, db

    def test_an_empty_file_of_this_namespace_is_used(self):
        # The 1-MB ring's flows end before any window fills: its memo.h5 describes the run's settings but
        # holds no pattern. A warm start from it is a run with nothing to replay (a note says so), the same
        # fct.txt as the cold run.
        work = copy_scenario("hpcc-ring16-fattree-k4-1MB", self.dir)
        p = run(work, "config_dcqcn.txt", "-o", str(self.dir / "cold"), "--set", "WORMHOLE=1", "--set", "WORMHOLE_MEMO=1")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("0 patterns", p.stdout)
        p = run(work, "config_dcqcn.txt", "-o", str(self.dir / "warm"), "--set", "WORMHOLE=1",
                "--memo", str(self.dir / "cold" / "memo.h5"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("holds no pattern for this run's settings", p.stderr)
        self.assertEqual((self.dir / "warm" / "fct.txt").read_bytes(), (self.dir / "cold" / "fct.txt").read_bytes())

    def test_corrupt_values_are_refused(self):
        # A real file edited the way a corrupt one could be: each is refused (exit 2, file named) before
        # the run starts, never used and never a crash.
        work, db = self.bundled_memo()
        cases = [("cc", "kind", 1, "CC state of kind 1 where CC_MODE 3 keeps kind 2"),
                 ("entries", "vertex_offset", 2**64 - 1, "points past the vertex or edge tables"),
                 ("vertices", "goodput_bytes_per_ps", float("nan"), "not a finite number"),
                 ("vertices", "trend_age_ps", 10**13, "an age outside its period"),
                 ("entries", "duration_ps", -5, "has a duration of -5 ps"),
                 ("entries", "duration_ps", 2**63 - 1, "has a duration of 9223372036854775807 ps"),
                 ("cc", "rate_bps", 0, "a CC rate of 0 bit/s"),
                 ("cc", "x0", float("nan"), "a CC state with a value that is not a finite number"),
                 ("cc", "timer0_ps", 5 * 10**12, "a CC timer 5000000000000 ps away")]
        for table, field, value, message in cases:
            with self.subTest(field=field, value=value):
                bad = self.dir / f"bad-{field}-{len(message)}.h5"
                shutil.copy2(db, bad)
                with h5py.File(bad, "r+") as f:
                    rows = f[table][:]
                    rows[field] = value
                    f[table][...] = rows
                p = run(work, "config_hpcc.txt", "--set", "WORMHOLE=1", "--memo", str(bad))
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertIn(str(bad), p.stderr)
                self.assertIn(message, p.stderr)

    def test_other_namespaces_survive_a_warm_start(self):
        # A file with two namespaces (HPCC, and DCQCN at θ = 0.5 where its flows converge too) warm-starts
        # the HPCC run; the run's own memo.h5 keeps both namespaces and the DCQCN entry, unused.
        work, hpcc = self.bundled_memo()
        p = run(work, "config_hpcc.txt", "--set", "WORMHOLE=1", "--set", "WORMHOLE_MEMO=1", "--set", "CC_MODE=1",
                "--set", "WORMHOLE_THETA=0.5", "--set", "FCT_OUTPUT_FILE=out/dcqcn/fct.txt",
                "--set", "PFC_OUTPUT_FILE=out/dcqcn/pfc.txt")
        self.assertEqual(p.returncode, 0, p.stderr)
        both = self.dir / "both.h5"
        self.wh("merge", hpcc, work / "out" / "dcqcn" / "memo.h5", "-o", both)
        with h5py.File(both, "r+") as f:  # hits of earlier runs: not counted again in this run's file
            rows = f["entries"][:]
            rows["hits"] = 5
            f["entries"][...] = rows
        with h5py.File(both) as f:
            self.assertEqual(len(f["namespaces"]), 2)
            n = len(f["entries"])
        self.assertGreaterEqual(n, 2)
        p = run(work, "config_hpcc.txt", "--set", "WORMHOLE=1", "--memo", str(both), "--set", "WORMHOLE_MEMO=1")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("1 replayed (1 hits)", p.stdout)
        with h5py.File(work / "out" / "hpcc" / "memo.h5") as f:
            self.assertEqual(len(f["namespaces"]), 2)
            self.assertEqual(len(f["entries"]), n)
            self.assertEqual(int(f["entries"][:]["hits"].sum()), 1)  # this run's hit only

    def test_path_classes_are_labels_of_the_key(self):
        # The 16-MB ring on a k = 4 fat tree with 200-µs windows (θ 0.1: HPCC's rates swing about 6 %): its
        # 16 flows run on paths of 2, 4 and 6 hops (same edge switch, same pod, across the core) with
        # different base RTTs, and each flow's ACKs wait behind the next flow's data, so the ring is one
        # partition whose key labels every flow with its path class. A warm start replays it and stays
        # within 0.5 % of packet mode (a key blind to the path replayed every flow from one class's
        # record and was 4.8 % off).
        work = copy_scenario("hpcc-ring16-fattree-k4-16MB", self.dir)
        ff = ["--set", "WORMHOLE=1", "--set", "WORMHOLE_WINDOW=200", "--set", "WORMHOLE_THETA=0.1"]
        for name, extra in (("off", ["--set", "WORMHOLE=0"]), ("cold", ff + ["--set", "WORMHOLE_MEMO=1"])):
            p = run(work, "config_hpcc.txt", "-o", str(self.dir / name), *extra)
            self.assertEqual(p.returncode, 0, p.stderr)
        with h5py.File(self.dir / "cold" / "memo.h5") as f:
            entries = f["entries"][:]
            self.assertGreater(len(entries), 0)
            self.assertTrue(all(int(n) == 16 for n in entries["vertices"]))  # the whole ring, one partition
            self.assertEqual(sorted(set(int(h) for h in f["vertices"][:]["hops"])), [2, 4, 6])
        p = run(work, "config_hpcc.txt", "-o", str(self.dir / "warm"), *ff, "--memo", str(self.dir / "cold" / "memo.h5"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("1 replayed (1 hits)", p.stdout)
        off, warm = read_fct(self.dir / "off" / "fct.txt"), read_fct(self.dir / "warm" / "fct.txt")
        errs = [abs(warm[k][1] - off[k][1]) / off[k][1] for k in off]
        self.assertLess(sum(errs) / len(errs), 0.005)

if __name__ == "__main__":
    unittest.main(verbosity=2)
