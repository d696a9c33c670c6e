#!/usr/bin/python3
"""End-to-end tests of the distributed engine: `mpirun -np N wormhole run CONFIG` gives, for N = 2, 3 and 4
(oversubscribed on a 2-core machine), byte-identical fct.txt and pfc.txt and the same HDF5 flow and PFC tables
and run statistics as one process run with EVENT_ORDER portable; cuts chosen by METIS or given as a rank map;
clear errors for what it cannot do. Environment as test_refruns.py; needs mpirun (Open MPI)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import h5py
import numpy as np

from test_refruns import REFRUNS, SOURCE_DIR, WORMHOLE

RING = REFRUNS / "hpcc-ring16-fattree-k4-1MB"
INCAST = REFRUNS / "hpcc-incast16to1-leafspine64-1MB"
MPIRUN = shutil.which("mpirun")


def wh(*args):
    return subprocess.run([str(WORMHOLE), *map(str, args)], capture_output=True, text=True, timeout=300)


def mpirun(n, *args):
    root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    return subprocess.run([MPIRUN, *root, "--oversubscribe", "-np", str(n), str(WORMHOLE), *map(str, args)],
                          capture_output=True, text=True, timeout=300)


# /run attributes that are not results: how long it took, and the command line.
TIMING = {"wall_s", "events_per_s", "command_line"}


class Distributed(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="wh_e2e_dist_"))

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def one_process(self, config, name, *sets):
        out = self.dir / name
        p = wh("run", config, "-o", out, "-q", "--set", "EVENT_ORDER=portable", *sets)
        self.assertEqual(p.returncode, 0, p.stderr)
        return out

    def assert_same_results(self, a, b):
        for f in ("fct.txt", "pfc.txt"):
            self.assertEqual((a / f).read_bytes(), (b / f).read_bytes(), f"{f} of {b.name} differs from {a.name}")
        with h5py.File(a / "results.h5") as x, h5py.File(b / "results.h5") as y:
            for table in ("flows", "pfc"):
                self.assertEqual(x[table].dtype, y[table].dtype)
                # bytes, not values: an unfinished flow's slowdown is NaN, and NaN != NaN
                self.assertEqual(x[table][()].tobytes(), y[table][()].tobytes(), f"/{table} of {b.name}")
            ax, ay = dict(x["run"].attrs), dict(y["run"].attrs)
            for k in set(ax) | set(ay):
                if k not in TIMING:  # as text: NaN statistics (no flow finished) are equal too
                    self.assertEqual(repr(ax.get(k)), repr(ay.get(k)), f"/run attribute {k} of {b.name}")
            settings = lambda h: {k: v for k, v in h["run/settings"][()] if not k.endswith(b"_FILE")}
            self.assertEqual(settings(x), settings(y))
            for table in ("topology/nodes", "topology/links"):  # rank 0 alone makes the fabric's record
                self.assertGreater(len(y[table]), 0, f"/{table} of {b.name}")
                self.assertEqual(x[table][()].tolist(), y[table][()].tolist(), f"/{table} of {b.name}")

    def test_identical_for_2_3_4_ranks(self):
        # A fat tree with DCQCN and with HPCC (INT in every packet), and an incast whose 1-MB switch buffers
        # make 1,932 PFC frames: the frames' order in pfc.txt is the one-process order too.
        cases = [(RING / "config_dcqcn.txt", []), (RING / "config_hpcc.txt", []),
                 (INCAST / "config_dcqcn.txt", ["--set", "BUFFER_SIZE=1"]),
                 # PFC RESUMEs sent while the packet pool grows: one process used to write the packet's ingress
                 # port and ECN mark through a reference the growth had invalidated (2 ranks grow it at other
                 # moments, so the runs differed: 980 vs 1,046 PFC frames)
                 (SOURCE_DIR / "inputs" / "cc-scenarios" / "incast8" / "config_dcqcn.txt", ["--set", "BUFFER_SIZE=1"])]
        for k, (config, sets) in enumerate(cases):
            ref = self.one_process(config, f"one{k}", *sets)
            if k == 2:
                self.assertEqual(len((ref / "pfc.txt").read_text().splitlines()), 1932)
            for n in ((2, 3, 4) if k < 3 else (2,)):
                with self.subTest(config=str(config), ranks=n):
                    out = self.dir / f"r{k}-{n}"
                    p = mpirun(n, "run", config, "-o", out, *sets)
                    self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                    self.assert_same_results(ref, out)
                    # the start-up summary and the per-rank time breakdown
                    self.assertIn(f"distributed run over {n} ranks", p.stdout)
                    self.assertEqual(len(re.findall(r"rank \d+: \d+ nodes", p.stdout)), n)
                    events = [int(e) for e in re.findall(r"rank \d+: (\d+) events; compute [\d.]+ s, wait [\d.]+ s, "
                                                         r"communicate [\d.]+ s", p.stdout)]
                    self.assertEqual(len(events), n, p.stdout)
                    total = int(re.search(r"^events (\d+) in", p.stdout, re.M).group(1))
                    self.assertEqual(sum(events), total)

    def assert_same_wormhole(self, a, b):
        with h5py.File(a / "results.h5") as x, h5py.File(b / "results.h5") as y:
            ax, ay = dict(x["wormhole"].attrs), dict(y["wormhole"].attrs)
            self.assertEqual(set(ax), set(ay))
            for k in ax:
                if k != "memo_output":  # where each run wrote its memo file
                    self.assertEqual(repr(ax[k]), repr(ay[k]), f"/wormhole attribute {k} of {b.name}")
            for name in x["wormhole"]:
                self.assertEqual(x["wormhole"][name][()].tobytes(), y["wormhole"][name][()].tobytes(), name)
            return {k: int(ax[k]) for k in ("skips", "skip_backs", "steady_checks", "memo_followed", "memo_follows_cut", "replays_cut")
                    if k in ax}

    def assert_same_memo(self, a, b):
        # row by row as text (h5diff calls tables of different lengths "not comparable" and exits 0; the
        # namespace descriptions are variable-length strings, whose bytes are pointers)
        def tables(path):
            out = {}
            with h5py.File(path) as h:
                h.visititems(lambda name, o: out.__setitem__(name, [repr(tuple(r)) if o.dtype.names else repr(r)
                                                                     for r in o[()]])
                             if isinstance(o, h5py.Dataset) else None)
            return out
        x, y = tables(a / "memo.h5"), tables(b / "memo.h5")
        self.assertTrue(x)
        self.assertEqual(x, y, f"memo.h5 of {b.name}")

    def test_wormhole_identical_for_2_3_4_ranks(self):
        # Wormhole's decisions fall on its ticks, which every rank holds together between windows, or on flow
        # starts, which every rank runs: the fast-forward outcome is that of one process. A TIMELY incast with
        # 1-MB buffers: PFC frames reach a frozen partition (an interrupt: its pull-back waits for the next
        # tick); an HPCC permutation; a lone pair of long HPCC flows
        # (94 % of the events skipped); training workloads, one cut short by max_time. A loose error bound (99 %)
        # lets these short-window runs skip where the trend of their goodput would otherwise stop them: what is
        # tested here is that every rank takes the same decisions, not their accuracy. (DCQCN flows in these
        # short runs are never steady: a cut rate waits for DCQCN's RP_TIMER, longer than the runs' windows.)
        cc = SOURCE_DIR / "inputs" / "cc-scenarios"
        loose = "WORMHOLE_ERROR_BOUND=0.99"
        cases = [(cc / "incast8" / "config_timely.txt", ["BUFFER_SIZE=1", "WORMHOLE_WINDOW=100", loose], (2, 3, 4)),
                 (cc / "permutation16" / "config_hpcc.txt", ["WORMHOLE_WINDOW=50", loose], (3,)),
                 # verify mode: the samples' simulated bytes are summed over the senders' ranks at a tick
                 (cc / "permutation16" / "config_hpcc.txt", ["WORMHOLE_WINDOW=50", "WORMHOLE_VERIFY=0.5", loose], (2,)),
                 (SOURCE_DIR / "inputs" / "hpcc-bundled-example" / "config_hpcc.txt", [], (2,))]
        for k, (config, sets, ranks) in enumerate(cases):
            sets = [x for kv in ["WORMHOLE=1", *sets] for x in ("--set", kv)]
            ref = self.one_process(config, f"wh{k}", *sets)
            for n in ranks:
                with self.subTest(config=str(config), ranks=n):
                    out = self.dir / f"wh{k}-{n}"
                    p = mpirun(n, "run", config, "-o", out, *sets)
                    self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                    self.assert_same_results(ref, out)
                    got = self.assert_same_wormhole(ref, out)
                    self.assertGreater(got["skips"], 0)
                    if k == 2:  # verified decisions, some of them failed (their flows are not skipped again)
                        with h5py.File(out / "results.h5") as f:
                            self.assertGreater(len(f["wormhole/verify"]), 0)
                    if k == 0:  # PFC frames pulled a partition back; the frames are there
                        # (4 pull-backs when a skip could come before the goodput's trend was measured)
                        self.assertEqual(got["skip_backs"], 1)
                        self.assertEqual(len((out / "pfc.txt").read_text().splitlines()), 750)
                    self.assertIn("wormhole: ", p.stdout)
        # Memoization: the ranks shard the store, replay the same periods as one process, also from a warm start,
        # and their shards merged are the one process's memo file.
        config = cc / "permutation16" / "config_hpcc.txt"
        sets = [x for kv in ("WORMHOLE=1", "WORMHOLE_WINDOW=50", "WORMHOLE_MEMO=1", loose) for x in ("--set", kv)]
        ref = self.one_process(config, "memo-one", *sets)
        # (The last also verifies each replay: the samples' bytes come from the senders' ranks.)
        runs = ((3, []), (2, ["--memo", ref / "memo.h5"]), (2, ["--memo", ref / "memo.h5", "--set", "WORMHOLE_VERIFY=1"]))
        for i, (n, warm) in enumerate(runs):
            with self.subTest(memo=n, warm=bool(warm), verify=i == 2):
                one = self.one_process(config, f"memo-one{i}", *sets, *warm) if warm else ref
                out = self.dir / f"memo-{i}"
                p = mpirun(n, "run", config, "-o", out, *sets, *warm)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                self.assert_same_results(one, out)
                self.assert_same_wormhole(one, out)
                self.assert_same_memo(one, out)
                # Each rank held its shard of the store and wrote it apart; rank 0 merged the files into memo.h5
                # (above: the one process's, table for table) and removed them.
                held = re.search(r"; (\d+) patterns \(held over (\d+) ranks: ([\d, ]+)\) ->", p.stdout)
                self.assertIsNotNone(held, p.stdout)
                shares = [int(k) for k in held.group(3).split(", ")]
                self.assertEqual((int(held.group(2)), sum(shares)), (n, int(held.group(1))))
                self.assertEqual(sorted(f.name for f in out.glob("memo*")), ["memo.h5"])
                # byte for byte too: its tables carry no modification times (the shards and the merge were made
                # at other seconds than the one process's file)
                self.assertEqual((one / "memo.h5").read_bytes(), (out / "memo.h5").read_bytes())
                replayed = int(re.search(r"memo: \d+ unsteady periods: (\d+) replayed", p.stdout).group(1))
                self.assertEqual(replayed, (0 if i == 2 else 1) if warm else 0)  # verified replays are simulated instead
        # Workloads: MoE with memoization, cut short by max_time; the micro all-reduce (500-ns cut links, ticks
        # every 1 µs: what a tick moves over a cut link is exchanged before the next window) ending by the
        # driver's stop inside a window.
        llm = SOURCE_DIR / "inputs" / "llm"
        # The HPCC case: two held ACKs released in one ps by events of equal key used to run in the order of their
        # rank-local held slots (fct.txt differed on 2 and 4 ranks).
        hpcc = ("CC_MODE=3", 'workload.ignore_groups=["TP"]', "wormhole.memo=true", "wormhole.window=50",
                "wormhole.theta=0.1", "wormhole.error_bound=0.99")
        hpcc_cut = tuple(s.replace("theta=0.1", "theta=0.01") for s in hpcc)
        # Followers (periods held beside an isomorphic one started with them): (replayed from it, released early)
        follows = {hpcc: (6, 0), hpcc_cut: (0, 7)}
        for name, extra, rc, skips in (("moe-32g", ("CC_MODE=7", "wormhole.memo=true", "wormhole.window=20",
                                                    'workload.max_time="30ms"', "wormhole.error_bound=0.99"), 3, 13),
                                       ("moe-32g", hpcc, 0, 78),
                                       # θ 0.01: periods held beside their leaders, released early from their state
                                       ("moe-32g", hpcc_cut, 0, 31),
                                       ("micro-allreduce-16g", ("CC_MODE=3", "wormhole.window=5", "wormhole.error_bound=0.99"),
                                        0, 26)):
            with self.subTest(workload=name, sets=extra):
                sets = [x for kv in ("wormhole.enabled=true", *extra) for x in ("--set", kv)]
                name = f"{name}-{skips}"
                ref = self.dir / f"{name}-one"
                toml = llm / f"{name.rsplit('-', 1)[0]}.toml"
                p = wh("run", toml, "-o", ref, "-q", "--set", "EVENT_ORDER=portable", *sets)
                self.assertEqual(p.returncode, rc, p.stderr)  # 3: incomplete
                out = self.dir / f"{name}-two"
                p = mpirun(2, "run", toml, "-o", out, *sets)
                self.assertEqual(p.returncode, rc, p.stdout + p.stderr)
                self.assert_same_results(ref, out)
                self.assert_same_workload(ref, out)
                got = self.assert_same_wormhole(ref, out)
                self.assertEqual(got["skips"], skips)
                if "wormhole.memo=true" in extra:
                    self.assert_same_memo(ref, out)
                if extra in follows:  # held, replayed or released from the leader's state on every rank alike
                    self.assertEqual((got["memo_followed"], got["memo_follows_cut"]), follows[extra])

    def test_followers_of_a_repeat_identical_over_ranks(self):
        # Three alike groups of four flows on a star (a centre flow sharing its NIC with two others and its
        # receiver's port with a fourth from a 50-Gb/s host): X starts at 0, L and F together at 10 us, so F
        # follows L, and L converges into X's pattern stored meanwhile (a repeat). F replays L's own period; the
        # pattern's shard may be on another rank than L's flows, and every rank releases F alike.
        # (tests/unit/test_memo_follow.cpp has the same case against packet mode.)
        work = self.dir / "star"
        work.mkdir()
        links = [f"{h} 15 {50 if h in (2, 6, 11) else 100}Gbps 0.001ms 0" for h in range(15)]
        (work / "topology.txt").write_text("16 1 15\n15\n" + "\n".join(links) + "\n")
        flows = [(0, 1, 0), (2, 1, 0), (0, 3, 0), (0, 4, 0), (6, 7, 1e-5), (5, 7, 1e-5), (5, 8, 1e-5), (5, 9, 1e-5),
                 (11, 12, 1e-5), (10, 12, 1e-5), (10, 13, 1e-5), (10, 14, 1e-5)]
        (work / "flow.txt").write_text("12\n" + "".join(f"{a} {b} 3 100 40000000 {t:.9f}\n" for a, b, t in flows))
        (work / "trace.txt").write_text("0\n")
        config = (RING / "config_dcqcn.txt").read_text()
        for key, value in (("ENABLE_QCN", "0"), ("TOPOLOGY_FILE", "topology.txt"), ("FLOW_FILE", "flow.txt"),
                           ("TRACE_FILE", "trace.txt"), ("KMAX_MAP", "3 50000000000 1600 100000000000 1600 400000000000 6400"),
                           ("KMIN_MAP", "3 50000000000 400 100000000000 400 400000000000 1600"),
                           ("PMAX_MAP", "3 50000000000 0.20 100000000000 0.20 400000000000 0.20")):
            config = re.sub(rf"^{key} .*$", f"{key} {value}", config, flags=re.M)
        (work / "config.txt").write_text(config)
        sets = [x for kv in ("WORMHOLE=1", "WORMHOLE_WINDOW=500", "WORMHOLE_MEMO=1") for x in ("--set", kv)]
        ref = self.one_process(work / "config.txt", "star-one", *sets)
        for n in (2, 3):
            with self.subTest(ranks=n):
                out = self.dir / f"star-{n}"
                p = mpirun(n, "run", work / "config.txt", "-o", out, *sets)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                self.assert_same_results(ref, out)
                got = self.assert_same_wormhole(ref, out)
                self.assertEqual(got["memo_followed"], 2)  # F, and later one more
                self.assertEqual((ref / "memo.h5").read_bytes(), (out / "memo.h5").read_bytes())
                self.assertRegex(p.stdout, r"simulated to convergence \(\d+ new patterns, [1-9]\d* repeats\)")

    def test_cut_replays_identical_over_ranks(self):
        # A replay cut short where a flow nears its end: each flow's room is measured by its sender's rank and
        # summed over the ranks, so every rank cuts alike. Two pairs exchanging flows on a star (each flow's ACKs
        # cross the other's data: one partition, no port shared); the second pair's 3-MB flow would end inside
        # the first pair's recorded period (tests/unit/test_memo_replay.cpp has the case against packet mode).
        work = self.dir / "cut"
        work.mkdir()
        (work / "topology.txt").write_text("7 1 6\n6\n" + "\n".join(f"{h} 6 100Gbps 0.001ms 0" for h in range(6)) + "\n")
        flows = [(0, 1, 60000000, 0), (1, 0, 60000000, 0), (2, 3, 60000000, 1e-3), (3, 2, 3000000, 1e-3)]
        (work / "flow.txt").write_text("4\n" + "".join(f"{a} {b} 3 100 {n} {2 + t:.9f}\n" for a, b, n, t in flows))
        (work / "trace.txt").write_text("0\n")
        config = (RING / "config_dcqcn.txt").read_text()
        for key, value in (("ENABLE_QCN", "0"), ("TOPOLOGY_FILE", "topology.txt"), ("FLOW_FILE", "flow.txt"),
                           ("TRACE_FILE", "trace.txt")):
            config = re.sub(rf"^{key} .*$", f"{key} {value}", config, flags=re.M)
        (work / "config.txt").write_text(config)
        sets = [x for kv in ("WORMHOLE=1", "WORMHOLE_WINDOW=500", "WORMHOLE_MEMO=1") for x in ("--set", kv)]
        ref = self.one_process(work / "config.txt", "cut-one", *sets)
        # Each pair's two senders on two ranks: the replay's room comes from both.
        (work / "map.txt").write_text("".join(f"{n} {n % 2}\n" for n in range(7)))
        out = self.dir / "cut-2"
        p = mpirun(2, "run", work / "config.txt", "-o", out, "--rank-map", work / "map.txt", *sets)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assert_same_results(ref, out)
        got = self.assert_same_wormhole(ref, out)
        self.assertEqual(got["replays_cut"], 1)
        self.assertEqual((ref / "memo.h5").read_bytes(), (out / "memo.h5").read_bytes())

    def test_training_workloads_identical(self):
        # The workload driver runs on every rank in its own lagging time; its flows start send_latency after
        # their release, which bounds the windows. The MoE model's 19,392 flows cross the METIS cut (weighed by
        # one iteration's expected traffic); the micro all-reduce's 16 GPUs split 8 / 8 over two servers.
        for name, ranks in (("micro-allreduce-16g", (2, 3)), ("moe-32g", (2,))):
            scenario = SOURCE_DIR / "inputs" / "llm" / f"{name}.toml"
            ref = self.dir / f"{name}-one"
            p = wh("run", scenario, "-o", ref, "-q", "--set", "EVENT_ORDER=portable")
            self.assertEqual(p.returncode, 0, p.stderr)
            for n in ranks:
                with self.subTest(scenario=name, ranks=n):
                    out = self.dir / f"{name}-{n}"
                    p = mpirun(n, "run", scenario, "-o", out)
                    self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                    self.assert_same_results(ref, out)
                    self.assert_same_workload(ref, out)
                    if name.startswith("micro") and n == 2:  # weighed by its traffic: one server per rank
                        self.assertEqual(re.findall(r"rank \d+: \d+ nodes \((\d+) hosts", p.stdout), ["8", "8"])
                    if name == "moe-32g":
                        sent = [int(x) for x in re.findall(r"cut-link packets (\d+) sent", p.stdout)]
                        self.assertTrue(all(k > 0 for k in sent), p.stdout)

    def assert_same_workload(self, a, b):
        with h5py.File(a / "results.h5") as x, h5py.File(b / "results.h5") as y:
            self.assertEqual(dict(x["workload"].attrs), dict(y["workload"].attrs))
            for table in ("iterations", "layers", "collectives"):
                # row by row as text: the tables hold strings (their bytes are pointers) and NaN
                rows = lambda t: [repr(tuple(r)) for r in t[()]]
                self.assertEqual(rows(x["workload"][table]), rows(y["workload"][table]), table)
        for csv in sorted(a.glob("*.csv")):
            self.assertEqual(csv.read_bytes(), (b / csv.name).read_bytes(), csv.name)

    def test_flows_finishing_in_identical_events(self):
        # 128-byte TP flows on 2,880-Gb/s NVLink: a 60-byte ACK serialises in 0 ns (NS_TRUNCATION), so several
        # ACKs reach a GPU through one wire in the same ps, each arrival its own event with the same time, key
        # and owner. One process runs them one by one (the driver's releases of each are numbered from 0); the
        # distributed run used to merge their completions into one event for the driver, numbering the releases
        # 0, 1, 2, 3: same fct.txt, but the flows' ids (/flows) in another order.
        d = self.dir / "tiny"
        d.mkdir()
        shutil.copy2(SOURCE_DIR / "inputs" / "llm" / "SimAI.conf", d / "SimAI.conf")
        head = ("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 8 ga: 1 all_gpus: 16 "
                "checkpoints: 0 checkpoint_initiates: 0\n2\n")
        row = "{} -1 1000 ALLREDUCE 8192 1 NONE 0 1 ALLREDUCE 8192 1\n"
        (d / "tiny.txt").write_text(head + row.format("layer_a") + row.format("layer_b"))
        toml = (SOURCE_DIR / "inputs" / "llm" / "micro-allreduce-16g.toml").read_text()
        (d / "tiny.toml").write_text(toml.replace("microAllReduce_16g.txt", "tiny.txt"))
        ref = self.dir / "tiny-one"
        p = wh("run", d / "tiny.toml", "-o", ref, "-q", "--set", "EVENT_ORDER=portable")
        self.assertEqual(p.returncode, 0, p.stderr)
        with h5py.File(ref / "results.h5") as h:
            self.assertIn(128, set(h["flows"]["size_bytes"][()]))
        p = mpirun(2, "run", d / "tiny.toml", "-o", self.dir / "tiny-two")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assert_same_results(ref, self.dir / "tiny-two")
        self.assert_same_workload(ref, self.dir / "tiny-two")

    def test_pipelined_workload_identical(self):
        # PP 2 (stages = the two servers), 2 micro-batches with TP AllReduces: activation and gradient flows
        # between the stages cross the cut like any other; 2 ranks give the one-process results.
        d = self.dir / "pp"
        d.mkdir()
        shutil.copy2(SOURCE_DIR / "inputs" / "llm" / "SimAI.conf", d / "SimAI.conf")
        head = ("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 2 vpp: 1 ga: 2 all_gpus: 16 "
                "pp_comm: 1048576\n2\n")
        row = "mb -1 50000 ALLREDUCE 1048576 100000 NONE 0 0 NONE 0 0\n"
        (d / "pp.txt").write_text(head + row + row)
        toml = (SOURCE_DIR / "inputs" / "llm" / "micro-allreduce-16g.toml").read_text()
        (d / "pp.toml").write_text(toml.replace("microAllReduce_16g.txt", "pp.txt"))
        ref = self.dir / "pp-one"
        p = wh("run", d / "pp.toml", "-o", ref, "-q", "--set", "EVENT_ORDER=portable")
        self.assertEqual(p.returncode, 0, p.stderr)
        p = mpirun(2, "run", d / "pp.toml", "-o", self.dir / "pp-two")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assert_same_results(ref, self.dir / "pp-two")
        self.assert_same_workload(ref, self.dir / "pp-two")
        self.assertIn(",SendRecv,PP,", (ref / "collectives.csv").read_text())

    def test_incomplete_workloads_identical(self):
        # max_time cuts the workload short: before the first window (routes must still be built: maxRtt),
        # and in the middle (the end time is the last event over every rank and the driver's own time; the
        # watchdog's "stopped" vs "no runnable events" is decided over every rank).
        scenario = SOURCE_DIR / "inputs" / "llm" / "micro-allreduce-16g.toml"
        for max_time in ("300us", "1000us"):
            with self.subTest(max_time=max_time):
                sets = ["--set", f'workload.max_time="{max_time}"']
                ref = self.dir / f"one-{max_time}"
                p1 = wh("run", scenario, "-o", ref, "-q", "--set", "EVENT_ORDER=portable", *sets)
                self.assertEqual(p1.returncode, 3, p1.stderr)  # incomplete
                out = self.dir / f"two-{max_time}"
                p2 = mpirun(2, "run", scenario, "-o", out, "--linear", *sets)
                self.assertEqual(p2.returncode, 3, p2.stdout + p2.stderr)
                self.assert_same_results(ref, out)
                self.assert_same_workload(ref, out)
                said = lambda p: re.search(r"workload incomplete: (.*)", p.stderr).group(1)
                self.assertEqual(said(p1), said(p2))

    def write_scenario(self, topology, flows):
        (self.dir / "topology.txt").write_text("\n".join(topology) + "\n")
        (self.dir / "flow.txt").write_text(f"{len(flows)}\n" + "".join(f + "\n" for f in flows))
        shutil.copy2(RING / "config_dcqcn.txt", self.dir / "config.txt")
        shutil.copy2(RING / "trace.txt", self.dir / "trace.txt")
        return self.dir / "config.txt"

    def test_flow_inside_one_rank_and_flow_across_every_rank(self):
        # A chain of three switches 5 - 6 - 7 with hosts 0, 1 on switch 5, host 2 on 6, hosts 3, 4 on 7; the map
        # puts each switch with its hosts on its own rank. Flow 0 -> 1 stays on rank 0; 0 -> 3 and 4 -> 1 cross
        # every rank (both ways, so ACKs do too); 2 -> 3 crosses one cut; all share links, so they interact.
        topo = ["8 3 7", "5 6 7", "0 5 100Gbps 0.001ms 0", "1 5 100Gbps 0.001ms 0", "2 6 100Gbps 0.001ms 0",
                "3 7 100Gbps 0.001ms 0", "4 7 100Gbps 0.001ms 0", "5 6 100Gbps 0.001ms 0", "6 7 100Gbps 0.001ms 0"]
        config = self.write_scenario(topo, ["0 1 3 100 2000000 2.0", "0 3 3 100 3000000 2.0",
                                            "4 1 3 100 3000000 2.00001", "2 3 3 100 1000000 2.00002"])
        (self.dir / "map.txt").write_text("# node rank\n0 0\n1 0\n5 0\n2 1\n6 1\n3 2\n4 2\n7 2\n")
        ref = self.one_process(config, "one")
        self.assertEqual(len((ref / "fct.txt").read_text().splitlines()), 4)
        p = mpirun(3, "run", config, "-o", self.dir / "three", "--rank-map", self.dir / "map.txt")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assert_same_results(ref, self.dir / "three")
        self.assertIn("3 ranks, 2 cut links", p.stdout)
        self.assertIn("(rank map ", p.stdout)
        self.assertIn("rank 1: 2 nodes (1 hosts, 1 switches), 4 ports, 2 cut links, 1 flows sent", p.stdout)
        sent = [int(x) for x in re.findall(r"cut-link packets (\d+) sent", p.stdout)]
        self.assertTrue(all(s > 0 for s in sent), p.stdout)

    def test_the_smallest_delay_cut_link_sets_the_lookahead(self):
        # Two switches with four hosts each joined by a 50-ns link, the cut: windows of 50 ns, results unchanged.
        topo = ["10 2 9", "8 9"] + [f"{h} 8 100Gbps 0.001ms 0" for h in range(4)] + \
               [f"{h} 9 100Gbps 0.001ms 0" for h in range(4, 8)] + ["8 9 100Gbps 0.00005ms 0"]
        config = self.write_scenario(topo, [f"{h} {h + 4} 3 100 1000000 2.0" for h in range(4)] +
                                     [f"{h + 4} {h} 3 100 500000 2.0" for h in range(4)])
        ref = self.one_process(config, "one")
        p = mpirun(2, "run", config, "-o", self.dir / "two")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assert_same_results(ref, self.dir / "two")
        self.assertIn("1 cut link, imbalance", p.stdout)
        self.assertIn("lookahead 50 ns", p.stdout)
        self.assertIn("WARNING: lookahead below 100 ns", p.stdout)

    def test_more_ranks_than_nodes_idle(self):
        # 4 ranks on a 3-node network: one node per rank, rank 3 owns nothing and idles; same results.
        topo = ["3 1 2", "2", "0 2 100Gbps 0.001ms 0", "1 2 100Gbps 0.001ms 0"]
        config = self.write_scenario(topo, ["0 1 3 100 100000 2.0", "1 0 3 100 50000 2.0"])
        ref = self.one_process(config, "one")
        p = mpirun(4, "run", config, "-o", self.dir / "four")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assert_same_results(ref, self.dir / "four")
        self.assertIn("4 ranks, 1 idle rank (more ranks than nodes to own)", p.stdout)
        self.assertIn("rank 3: 0 nodes (0 hosts, 0 switches)", p.stdout)

    def test_clear_errors(self):
        topo = ["3 1 2", "2", "0 2 100Gbps 0.001ms 0", "1 2 100Gbps 0.001ms 0"]
        config = self.write_scenario(topo, ["0 1 3 100 100000 2.0"])
        cases = [
            # a rank map that names a rank the run does not have, with its file and line
            ((2, "run", config, "--rank-map", self.dir / "bad.txt"), "bad.txt:3: rank 5 but the run has 2 ranks",
             "use ranks 0 .. 1"),
            ((2, "run", config, "--rank-map", self.dir / "short.txt"), "node 2 has no rank", "list every node"),
            ((2, "run", self.dir / "s.toml"), "s.toml: no [topology] table", "add [topology]"),
            ((2, "run", config, "--set", "EVENT_ORDER=reference"), "orders same-time events portably", "one process"),
            # a scenario's reader takes a quoted value: still refused
            ((2, "run", SOURCE_DIR / "inputs" / "llm" / "micro-allreduce-16g.toml", "--set",
              'network.EVENT_ORDER="reference"'), "orders same-time events portably", "one process"),
            ((2, "run", config, "--linear", "--rank-map", self.dir / "short.txt"), "both choose the cut", "give one"),
        ]
        (self.dir / "bad.txt").write_text("0 0\n1 1\n2 5\n")
        (self.dir / "short.txt").write_text("0 0\n1 1\n")
        (self.dir / "s.toml").write_text("")
        (self.dir / "out").mkdir()
        (self.dir / "out" / "fct.txt").write_text("previous run\n")
        for args, what, fix in cases:
            with self.subTest(args=args[1:]):
                p = mpirun(*args, "-o", self.dir / "out")
                self.assertNotEqual(p.returncode, 0, p.stdout + p.stderr)
                self.assertEqual(p.stderr.count("wormhole: error"), 1, p.stderr)  # said once, not by every rank
                self.assertIn(what, p.stderr)
                self.assertIn(fix, p.stderr)
                self.assertEqual((self.dir / "out" / "fct.txt").read_text(), "previous run\n")
                # a refused run makes no output folder either (one made for nothing is a mess to clean up)
                p = mpirun(*args, "-o", self.dir / "never")
                self.assertNotEqual(p.returncode, 0)
                self.assertFalse((self.dir / "never").exists())
        # --memo-out onto the run's own fct.txt: refused before the run (it was overwritten after it)
        p = mpirun(2, "run", config, "-o", self.dir / "out", "--set", "WORMHOLE=1", "--set", "WORMHOLE_MEMO=1",
                   "--memo-out", self.dir / "out" / "fct.txt")
        self.assertNotEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(p.stderr.count("wormhole: error"), 1, p.stderr)
        self.assertIn("is also where the run writes", p.stderr)
        self.assertEqual((self.dir / "out" / "fct.txt").read_text(), "previous run\n")


if __name__ == "__main__":
    if MPIRUN is None:
        print("SKIP: mpirun not found (install openmpi-bin: scripts/setup.sh)", file=sys.stderr)
        sys.exit(77)
    unittest.main(verbosity=2)
