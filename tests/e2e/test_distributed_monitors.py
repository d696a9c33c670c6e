#!/usr/bin/python3
"""End-to-end tests of the monitors in a distributed run (docs/distributed.md, "Outputs"): `mpirun -np N wormhole
run` with PORT_MON, QLEN_MON_FILE and the packet trace writes monitor.h5 (every dataset and attribute), qlen.txt and
the trace byte for byte as one process run with EVENT_ORDER portable, for 2 and 3 ranks: a fat tree in packet mode,
an incast whose PFC frames pull Wormhole's frozen partitions back (the paused and frozen columns), and a training
workload that the driver stops inside a window (what the ranks ran past the stop is left out). Environment as
test_refruns.py; needs mpirun (Open MPI)."""
import re
import shutil
import struct
import sys
import tempfile
import unittest
from pathlib import Path

import h5py
import numpy as np

from test_distributed import MPIRUN, RING, mpirun, wh
from test_refruns import SOURCE_DIR

CC = SOURCE_DIR / "inputs" / "cc-scenarios"
MONITORS = ["PORT_MON=1", "PORT_MON_INTERVAL=1000", "PORT_MON_NODES=all", "ENABLE_TRACE=1"]
HPCC_QLEN = ["QLEN_MON_START=2000000000", "QLEN_MON_END=2100000000"]  # blocks at 2.0 s and 2.1 s


def sets(*kv):
    return [x for s in kv for x in ("--set", s)]


def trace_header(path):
    """(nodes, ports, records) of a trace's 64-byte header."""
    head = path.read_bytes()[:64]
    assert head[:8] == b"WHTRACE1", head[:8]
    return struct.unpack_from("<QQQ", head, 16)


@unittest.skipUnless(MPIRUN, "mpirun not found")
class DistributedMonitors(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="wh_e2e_dmon_"))

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def nodes_file(self, name, nodes):
        path = self.dir / name
        path.write_text(f"{len(nodes)}\n" + " ".join(map(str, nodes)) + "\n")
        return path

    def assert_same_monitors(self, a, b, qlen, trace):
        """monitor.h5, `qlen` and `trace` (file names) of run folder b are those of a."""
        for f in ("fct.txt", qlen, trace):
            self.assertTrue((b / f).is_file(), f"{b.name} wrote no {f}")
            self.assertEqual((a / f).read_bytes(), (b / f).read_bytes(), f"{f} of {b.name} differs from {a.name}")
        with h5py.File(a / "monitor.h5") as x, h5py.File(b / "monitor.h5") as y:
            self.assertEqual(sorted(x), ["frozen", "paused", "ports", "queue_bytes", "queue_max_bytes", "time_ns",
                                         "utilisation"])
            self.assertEqual(sorted(x), sorted(y))
            for name in x:
                self.assertEqual(x[name].shape, y[name].shape, name)
                if x[name].dtype.names:  # /ports: variable-length strings, compared as values
                    self.assertEqual([tuple(r) for r in x[name][()]], [tuple(r) for r in y[name][()]], name)
                else:
                    self.assertEqual(x[name].dtype, y[name].dtype, name)
                    self.assertEqual(x[name][()].tobytes(), y[name][()].tobytes(), f"/{name} of {b.name}")
            self.assertEqual({k: repr(v) for k, v in x.attrs.items()}, {k: repr(v) for k, v in y.attrs.items()})

    def check(self, config, name, ranks, extra, qlen="qlen.txt", trace="mix.tr", rc=0):
        """Runs `config` in one process (portable order) and over each of `ranks`; returns the one-process folder."""
        one = self.dir / f"{name}-one"
        p = wh("run", config, "-o", one, "-q", "--set", "EVENT_ORDER=portable", *extra)
        self.assertEqual(p.returncode, rc, p.stderr)
        for n in ranks:
            with self.subTest(case=name, ranks=n):
                out = self.dir / f"{name}-{n}"
                p = mpirun(n, "run", config, "-o", out, *extra)
                self.assertEqual(p.returncode, rc, p.stdout + p.stderr)
                self.assert_same_monitors(one, out, qlen, trace)
                self.assertNotIn("writes no", p.stderr)
                self.assertIn("monitor.h5", p.stdout)  # the summary names the monitors' files
        return one

    def test_fat_tree_packet_mode(self):
        # Every node of the k = 4 fat tree traced (16 hosts, 20 switches, cut over 2 and 3 ranks), every port
        # monitored in 1-µs rows, the reference's queue histograms over 100 ms.
        nodes = self.nodes_file("all.txt", range(36))
        one = self.check(RING / "config_dcqcn.txt", "ring", (2, 3),
                         sets(*MONITORS, *HPCC_QLEN, f"TRACE_FILE={nodes}"))
        with h5py.File(one / "monitor.h5") as m:
            # 1-µs rows from 2.0 s through the interval of the last flow's end, 2.000099347 s; not on to the
            # run's last event, a finished flow's cancelled RTO timer at 2.010 s (its 9,900 idle rows were
            # written too)
            self.assertEqual(m["utilisation"].shape, (100, 96))
            self.assertEqual(int(m["time_ns"][-1]), 2_000_100_000)
            self.assertGreater(float(m["utilisation"][()].max()), 1.0)  # a busy 100G link (ns truncation: 1.019+)
            self.assertGreater(int(m["queue_max_bytes"][()].max()), 1000)
            self.assertEqual(int(m["time_ns"][0]), 2_000_001_000)
        blocks = re.split(r"^time: (\d+)\n", (one / "qlen.txt").read_text(), flags=re.M)
        self.assertEqual([int(blocks[1]), int(blocks[3])], [2_000_000_000, 2_100_000_000])
        last = [list(map(int, ln.split())) for ln in blocks[4].splitlines()]
        self.assertEqual(len(last), 80)  # 20 switches x 4 ports
        self.assertTrue(all(sum(x[2:]) == 1_000_001 for x in last))
        self.assertTrue(any(len(x) > 3 for x in last))  # some queue reached 1000 B
        _, _, records = trace_header(one / "mix.tr")
        self.assertEqual((one / "mix.tr").stat().st_size, 64 + 48 * records)
        rec = np.frombuffer((one / "mix.tr").read_bytes()[64:], dtype=np.dtype([("time_ps", "<i8"), ("rest", "V40")]))
        self.assertGreater(records, 300_000)
        self.assertTrue((np.diff(rec["time_ps"]) >= 0).all())

    def test_wormhole_incast_with_pfc(self):
        # TIMELY 8-to-1 with 1-MB buffers and Wormhole: partitions frozen (the frozen column), PFC frames pulling
        # them back at ticks (the paused column); ports of switches and hosts on every rank.
        nodes = self.nodes_file("i8.txt", range(int((CC / "incast8" / "topology.txt").read_text().split()[0])))
        extra = sets(*MONITORS, *HPCC_QLEN, f"TRACE_FILE={nodes}", "WORMHOLE=1", "BUFFER_SIZE=1",
                     "WORMHOLE_WINDOW=100", "WORMHOLE_ERROR_BOUND=0.99")
        one = self.check(CC / "incast8" / "config_timely.txt", "incast", (2, 3), extra)
        with h5py.File(one / "monitor.h5") as m:
            self.assertGreater(int(m["frozen"][()].sum()), 1000)
            self.assertGreater(float(m["paused"][()].max()), 0.5)
        self.assertGreater(len((one / "pfc.txt").read_text().splitlines()), 100)

    def test_workload_stopped_inside_a_window(self):
        # The micro all-reduce ends when its last GPU finishes, inside a window: the ranks ran on to its end, and
        # their rows, samples and records after the stop are left out. Hosts, an NVSwitch, leaves and spines traced.
        nodes = self.nodes_file("some.txt", [0, 1, 8, 15, 16, 18, 40, 60, 89])
        toml = SOURCE_DIR / "inputs" / "llm" / "micro-allreduce-16g.toml"
        # SimAI.conf names the queue file and the trace llama_hpn7_*; the workload starts at 0 (a block at 0 only).
        one = self.check(toml, "micro", (2,), sets(*MONITORS, "QLEN_MON_START=0", "QLEN_MON_END=200000000",
                                                   f"TRACE_FILE={nodes}"),
                         qlen="llama_hpn7_qlen.txt", trace="llama_hpn7_mix.tr")
        with h5py.File(one / "monitor.h5") as m, h5py.File(one / "results.h5") as r:
            end_ns = int(r["run"].attrs["sim_end_ns"])
            self.assertEqual(int(m["time_ns"][-1]), end_ns // 1000 * 1000)  # the last whole row before the stop
            self.assertGreater(float(m["utilisation"][()].max()), 0.9)
        _, _, records = trace_header(one / "llama_hpn7_mix.tr")
        self.assertGreater(records, 10_000)


if __name__ == "__main__":
    unittest.main(verbosity=2)
