#!/usr/bin/python3
"""End-to-end tests of the monitors and the packet trace (docs/network-model.md §5.3, §5.4, §5.6): they change no
result (fct.txt and pfc.txt byte-identical with and without them, in packet mode and with Wormhole), qlen.txt has the
reference's format and the values an independent reconstruction from the packet trace gives, the port monitor's
bytes and paused time agree with the trace and pfc.txt, and a decoded trace gives back every flow's packets and
sizes. Environment as test_refruns.py."""
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

SOURCE_DIR = Path(os.environ.get("WH_SOURCE_DIR", Path(__file__).resolve().parents[2]))
TEST_DATA = Path(os.environ.get("WH_TEST_DATA", SOURCE_DIR / "tests" / "data"))
WORMHOLE = Path(os.environ.get("WORMHOLE", SOURCE_DIR / "build" / "wormhole"))
sys.path.insert(0, str(SOURCE_DIR / "scripts"))
from wh_analysis import trace as tr  # noqa: E402
from wh_analysis.summary import pfc_stats  # noqa: E402
from wh_analysis.load import pfc_from_results  # noqa: E402

RING = TEST_DATA / "refruns" / "hpcc-ring16-fattree-k4-1MB"
INCAST = TEST_DATA / "refruns" / "hpcc-incast16to1-leafspine64-1MB"
CRASH_MARKERS = ("terminate called", "Segmentation fault", "Aborted", "core dumped", "what():")
MONITORS_ON = ["--set", "PORT_MON=1", "--set", "PORT_MON_INTERVAL=1000", "--set", "PORT_MON_NODES=all",
               "--set", "QLEN_MON_START=2000000000", "--set", "QLEN_MON_END=2000500000", "--set", "ENABLE_TRACE=1"]


class Monitors(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="wh_e2e_mon_"))

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def run_wh(self, config, out, *args, expect=0):
        p = subprocess.run([str(WORMHOLE), "run", str(config), "-o", str(self.dir / out), *map(str, args)],
                           capture_output=True, text=True, timeout=600, cwd=self.dir)
        for m in CRASH_MARKERS:
            self.assertNotIn(m, p.stderr)
        self.assertEqual(p.returncode, expect, p.stdout + p.stderr)
        return p, self.dir / out

    def trace_all(self, config_dir, name="all.txt"):
        """A TRACE_FILE listing every node of the scenario's topology."""
        n = int((config_dir / "topology.txt").read_text().split()[0])
        path = self.dir / name
        path.write_text(f"{n}\n" + " ".join(map(str, range(n))) + "\n")
        return path

    def test_monitors_change_no_result(self):
        # DCQCN ring (byte-identical to HPCC ns-3), the incast with 1-MiB buffers (ECN draws and 1,932 PFC frames),
        # HPCC with Wormhole's fast-forward, and a training workload: every monitor on at a 1-µs interval, every
        # node traced.
        cases = [(RING / "config_dcqcn.txt", []), (INCAST / "config_dcqcn.txt", ["--set", "BUFFER_SIZE=1"])]
        for k, (config, sets) in enumerate(cases):
            with self.subTest(config=config.name, sets=sets):
                trace_file = self.trace_all(config.parent, f"all{k}.txt")
                _, plain = self.run_wh(config, f"plain{k}", "-q", *sets)
                p, mon = self.run_wh(config, f"mon{k}", *sets, *MONITORS_ON, "--set", f"TRACE_FILE={trace_file}")
                for f in ("fct.txt", "pfc.txt"):
                    self.assertEqual((plain / f).read_bytes(), (mon / f).read_bytes(), f"{f} of {config}")
                for f in ("qlen.txt", "monitor.h5", "mix.tr"):
                    self.assertTrue((mon / f).is_file(), f)
                self.assertRegex(p.stdout, r"packet trace of \d+ nodes: about \d+ records, [\d.]+ MB \(estimate\)")
                if k == 0:
                    self.assertEqual((mon / "fct.txt").read_bytes(), (RING / "out_dcqcn" / "fct.txt").read_bytes())
        # Wormhole fast-forwards HPCC's bundled example (2 × 200 MB into one port) for 34 ms: the port monitor
        # marks the frozen ports' rows, whose packets never existed.
        bundled = SOURCE_DIR / "inputs" / "hpcc-bundled-example" / "config_hpcc.txt"
        _, plain = self.run_wh(bundled, "wh-plain", "-q", "--set", "WORMHOLE=1")
        _, mon = self.run_wh(bundled, "wh-mon", "-q", "--set", "WORMHOLE=1", "--set", "PORT_MON=1",
                             "--set", "PORT_MON_NODES=all")
        self.assertEqual((plain / "fct.txt").read_bytes(), (mon / "fct.txt").read_bytes())
        with h5py.File(mon / "monitor.h5") as m:
            frozen = m["frozen"][:]
            self.assertGreater(int(frozen.sum()), 1000)
            # Inside a freeze (the rows before and after frozen too) nothing is sent; its first and last rows may
            # hold what was sent before and after it.
            inner = (frozen[1:-1] == 1) & (frozen[:-2] == 1) & (frozen[2:] == 1)
            self.assertGreater(int(inner.sum()), 1000)
            self.assertTrue((m["utilisation"][1:-1][inner] == 0).all())
        scenario = SOURCE_DIR / "inputs" / "llm" / "micro-allreduce-16g.toml"
        _, plain = self.run_wh(scenario, "wl-plain", "-q")
        _, mon = self.run_wh(scenario, "wl-mon", "-q", "--set", "PORT_MON=1", "--set", "PORT_MON_NODES=all")
        self.assertEqual((plain / "fct.txt").read_bytes(), (mon / "fct.txt").read_bytes())
        # SimAI.conf's QLEN_MON_FILE and trace keys are SimAI's monitors: not ours, so nothing else is written.
        self.assertEqual(sorted(x.name for x in mon.iterdir() if not x.name.endswith(".csv")),
                         ["fct.txt", "monitor.h5", "pfc.txt", "results.h5"])

    def test_qlen_txt_format_and_values(self):
        # The ring with QLEN_MON_START 2.0 s and END 2.1 s: 1,000,001 samples of 100 ns per switch port, blocks at
        # 2.0 s (one sample) and 2.1 s (all of them). Every switch is traced: the queue a sample sees is the class-3
        # queue after the last trace event before its instant (ACKs travel in their flow's class at switches), which
        # gives the same histograms by another route.
        trace_file = self.trace_all(RING)
        _, out = self.run_wh(RING / "config_dcqcn.txt", "q", "-q", "--set", "QLEN_MON_START=2000000000",
                             "--set", "QLEN_MON_END=2100000000", "--set", "ENABLE_TRACE=1",
                             "--set", f"TRACE_FILE={trace_file}")
        text = (out / "qlen.txt").read_text()
        blocks = re.split(r"^time: (\d+)\n", text, flags=re.M)
        self.assertEqual(blocks[0], "")
        self.assertEqual([int(blocks[1]), int(blocks[3])], [2_000_000_000, 2_100_000_000])
        first = [list(map(int, ln.split())) for ln in blocks[2].splitlines()]
        last = [list(map(int, ln.split())) for ln in blocks[4].splitlines()]
        ports = [(s, i) for s in range(16, 36) for i in range(1, 5)]  # switches ascending, their 4 ports ascending
        self.assertEqual([tuple(x[:2]) for x in first], ports)
        self.assertEqual([tuple(x[:2]) for x in last], ports)
        self.assertTrue(all(x[2:] == [1] for x in first))           # at 2.0 s every queue is empty
        self.assertTrue(all(sum(x[2:]) == 1_000_001 for x in last))
        self.assertTrue(all(x[-1] > 0 for x in last))               # the list stops at the highest non-empty bucket
        _, rec = tr.read_trace(out / "mix.tr")
        samples = 2_000_000_000_000 + np.arange(1_000_001, dtype=np.int64) * 100_000  # ps
        busy = 0
        for node, ifx, *counts in last:
            ev = rec[(rec["node"] == node) & (rec["if_index"] == ifx) & ((rec["event"] == 1) | (rec["event"] == 2))
                     & (rec["cls"] == 3)]
            q = np.zeros(len(samples), dtype=np.int64)
            if len(ev):
                idx = np.searchsorted(ev["time_ps"], samples, side="left") - 1
                q = np.where(idx >= 0, ev["qlen"][np.maximum(idx, 0)].astype(np.int64), 0)
            want = np.bincount(q // 1000)
            self.assertEqual(list(want[: np.nonzero(want)[0][-1] + 1]), counts, f"switch {node} if {ifx}")
            busy += len(counts) > 1
        self.assertGreater(busy, 0)  # some queue reached 1000 B

    def test_port_monitor_agrees_with_trace_and_pfc(self):
        # The incast with 1-MiB buffers: PFC pauses the senders. Host ports and switch ports, 1-µs rows.
        trace_file = self.trace_all(INCAST)
        _, out = self.run_wh(INCAST / "config_dcqcn.txt", "m", "-q", "--set", "BUFFER_SIZE=1", "--set", "PORT_MON=1",
                             "--set", "PORT_MON_INTERVAL=1000", "--set", "PORT_MON_NODES=all",
                             "--set", "ENABLE_TRACE=1", "--set", f"TRACE_FILE={trace_file}")
        _, rec = tr.read_trace(out / "mix.tr")
        with h5py.File(out / "monitor.h5") as m, h5py.File(out / "results.h5") as r:
            ports = m["ports"][:]
            t = m["time_ns"][:]
            util, qmax, q, paused = (m[k][:] for k in ("utilisation", "queue_max_bytes", "queue_bytes", "paused"))
            self.assertEqual(int(m.attrs["interval_ns"]), 1000)
            self.assertEqual(util.shape, (len(t), len(ports)))
            self.assertTrue((np.diff(t) == 1000).all())
            self.assertTrue((qmax >= q).all())
            self.assertEqual(len(ports), 2 * len(r["topology/links"]))   # every port of every node
            self.assertFalse(m["frozen"][:].any())                      # packet mode
            # Bytes: a row's utilisation × rate × interval / 8 are the bytes whose transmission began in it.
            rate = ports["rate_bps"].astype(np.float64)
            sent = (util.astype(np.float64) * rate * 1e-6 / 8).sum(axis=0)
            # a row ending at t holds the transmissions that began in [t - interval, t)
            dequ = rec[(rec["event"] == 2) & (rec["time_ps"] >= (t[0] - 1000) * 1000) & (rec["time_ps"] < t[-1] * 1000)]
            by_port = np.bincount(dequ["port"], weights=dequ["size"], minlength=int(ports["port"].max()) + 1)
            np.testing.assert_allclose(sent, by_port[ports["port"]], rtol=1e-5, atol=1)
            # PFC: paused port-time of the monitor = that of /pfc (ns there, ps here: < 1 ns per pause).
            st = pfc_stats(pfc_from_results(r), int(r["run"].attrs["sim_end_ns"]))
            self.assertGreater(st["pauses"], 0)
            total_ns = float((paused.astype(np.float64) * 1000).sum())
            self.assertLess(abs(total_ns - 1000 * st["paused_port_time_us"]), st["pauses"] + 1e-3 * total_ns)

    def test_trace_gives_back_every_flows_packets(self):
        # Four flows of 1 B, 999 B, 1000 B and 2,500,001 B from hosts to host 1 on the HPCC bundled example's star;
        # every data packet is payload + 48 B (DCQCN) or + 90 B (HPCC: 42 of INT), every ACK 60 or 88 B.
        src = TEST_DATA / "refruns" / "hpcc-bundled-example"
        shutil.copy(src / "topology.txt", self.dir)
        sizes = [1, 999, 1000, 2_500_001]
        (self.dir / "flow.txt").write_text(f"{len(sizes)}\n" + "".join(f"{2 + k} 1 3 100 {s} 2.0\n"
                                                                        for k, s in enumerate(sizes)))
        (self.dir / "trace.txt").write_text("6\n0 1 2 3 4 5\n")
        lines = [ln for ln in (src / "config_hpcc.txt").read_text().splitlines()
                 if not ln.startswith(("FLOW_FILE", "TRACE_FILE", "ENABLE_TRACE", "TRACE_OUTPUT_FILE"))]
        (self.dir / "config.txt").write_text("\n".join(lines + ["FLOW_FILE flow.txt", "TRACE_FILE trace.txt",
                                                                "ENABLE_TRACE 1", "TRACE_OUTPUT_FILE out/mix.tr"]) + "\n")
        for cc, header, ack in (("hpcc", 90, 88), ("dcqcn", 48, 60)):
            with self.subTest(cc=cc):
                sets = ["--set", "CC_MODE=1", "--set", "RATE_AI=50Mb/s", "--set", "RATE_HAI=100Mb/s",
                        "--set", "RP_TIMER=300"] if cc == "dcqcn" else []
                p, out = self.run_wh(self.dir / "config.txt", cc, *sets)
                self.assertIn(f"-> {out / 'mix.tr'}", p.stdout)  # -o puts the trace there too
                header_d, rec = tr.read_trace(out / "mix.tr")
                self.assertTrue(header_d["complete"])
                flows = tr.per_flow(rec)
                self.assertEqual(sorted(flows), [0, 1, 2, 3])
                for k, s in enumerate(sizes):
                    d = flows[k]
                    n = -(-s // 1000)
                    self.assertEqual(d["data_packets"], n, f"flow {k}")
                    self.assertEqual(d["payload_bytes"], s)
                    self.assertEqual(d["wire_bytes"], s + n * header)
                    want_sizes = sorted({min(1000, s) + header, (s - (n - 1) * 1000) + header})
                    self.assertEqual(d["sizes"], want_sizes)
                    self.assertEqual(d["ack_sizes"], [ack])
                    self.assertEqual(d["acks_received"], n)  # L2_ACK_INTERVAL 1: an ACK per packet
                # The decoder on the command line says the same.
                q = subprocess.run([sys.executable, str(SOURCE_DIR / "scripts" / "wh_analyze.py"), "trace",
                                    str(out / "mix.tr"), "--flow", "3", "--text", "3"], capture_output=True, text=True)
                self.assertEqual(q.returncode, 0, q.stderr)
                self.assertIn(f"flow 3: 2,501 data packets sent by node 5 (2,500,001 B of payload, "
                              f"{2_500_001 + 2501 * header:,} B on the wire", q.stdout)
                self.assertEqual(len(q.stdout.strip().splitlines()), 1 + len(tr.counts(rec)) + 1 + 3)
                # A flow with no packet in the trace is named, not left out in silence.
                q = subprocess.run([sys.executable, str(SOURCE_DIR / "scripts" / "wh_analyze.py"), "trace",
                                    str(out / "mix.tr"), "--flow", "3", "999"], capture_output=True, text=True)
                self.assertEqual(q.returncode, 0, q.stderr)
                self.assertIn("flow 999: not in the trace", q.stdout)
                self.assertIn("flow 3: 2,501 data packets", q.stdout)

    def test_scenario_asks_for_its_own_monitors(self):
        # A training workload: SimAI.conf's ENABLE_TRACE 1 and QLEN_MON_FILE are SimAI's (not written, see
        # test_monitors_change_no_result); set on the command line they are ours, in the output folder under
        # SimAI.conf's file names. GPU 0's flows are 9000-B packets (SimAI's payload) + 48 B.
        nodes = self.dir / "gpu0.txt"
        nodes.write_text("1\n0\n")
        scenario = SOURCE_DIR / "inputs" / "llm" / "micro-allreduce-16g.toml"
        p, out = self.run_wh(scenario, "wl", "--set", "ENABLE_TRACE=1", "--set", f"TRACE_FILE={nodes}",
                             "--set", "QLEN_MON_START=0", "--set", "QLEN_MON_END=200000")
        self.assertIn(f"-> {out / 'llama_hpn7_mix.tr'}", p.stdout)
        self.assertTrue((out / "llama_hpn7_qlen.txt").is_file())
        self.assertNotIn("holds no block", p.stderr)
        _, rec = tr.read_trace(out / "llama_hpn7_mix.tr")
        # The set-up's size estimate counts GPU 0's packets both ways, its ACKs' Enqu too (82,320 records; it
        # said 65,248 when it left that out).
        estimate = int(re.search(r"packet trace of 1 nodes: about (\d+) records", p.stdout).group(1))
        self.assertLess(abs(estimate - len(rec)) / len(rec), 0.02, (estimate, len(rec)))
        flows = tr.per_flow(rec)
        with h5py.File(out / "results.h5") as f:
            fl = f["flows"][:]
        mine = fl[fl["src"] == 0]
        self.assertEqual(sorted(flows), [int(x) for x in mine["id"]])
        for r in mine:
            d = flows[int(r["id"])]
            self.assertEqual(d["payload_bytes"], int(r["size_bytes"]))
            self.assertEqual(d["data_packets"], -(-int(r["size_bytes"]) // 9000))
            self.assertEqual(max(d["sizes"]), 9048)
        # Asked for on the command line, the trace needs its nodes: SimAI.conf's TRACE_FILE does not exist here.
        p, _ = self.run_wh(scenario, "wl-bad", "--set", "ENABLE_TRACE=1", expect=2)
        self.assertRegex(p.stderr, r"SimAI\.conf:7: TRACE_FILE /etc/astra-sim/simulation/trace1\.txt not found")
        self.assertFalse((self.dir / "wl-bad" / "fct.txt").exists())

    def test_a_qlen_file_left_empty_is_warned_about(self):
        # The 1.69-ms workload ends long before QLEN_MON_START's default of 2 s: qlen.txt stays empty, and
        # the run says why (it said nothing).
        scenario = SOURCE_DIR / "inputs" / "llm" / "micro-allreduce-16g.toml"
        p, out = self.run_wh(scenario, "wl-qlen", "--set", "QLEN_MON_FILE=q.txt")
        self.assertEqual((out / "q.txt").read_text(), "")
        self.assertIn(f"wormhole: warning: {out / 'q.txt'} holds no block: the run ended at 0.001690266 s, before "
                      "QLEN_MON_START 2 s (its default); set QLEN_MON_START (ns) within the run, e.g. 0", p.stderr)
        # Samples off the 100-ns grid never meet a 100-ms mark, whatever the run's length.
        p, out = self.run_wh(scenario, "wl-qlen-grid", "--set", "QLEN_MON_FILE=q.txt", "--set", "QLEN_MON_START=50",
                             "--set", "QLEN_MON_END=200000000")
        self.assertIn("holds no block: its histograms are written at multiples of 100 ms of simulated time (as the "
                      "reference writes them), and its samples, every 100 ns from QLEN_MON_START 50 ns (--set), never "
                      "fall on one", p.stderr)
        # A flow-file config always names a qlen file, and the reference's turn it off with a start past the
        # stop time (5 s against 4 s here): no warning there.
        p, out = self.run_wh(RING / "config_dcqcn.txt", "ring-qlen")
        self.assertEqual((out / "qlen.txt").read_text(), "")
        self.assertNotIn("holds no block", p.stderr)

    def test_a_flow_file_runs_rows_end_with_its_traffic(self):
        # The ring's flows end at 2.000099347 s; its finished flows' cancelled timers run to 2.010 s. Rows go
        # through the interval holding the last flow's end: one 1-ms row holds all the traffic (none was
        # kept when rows were cut at the last whole interval). With flows cut by the stop time (2.00005 s),
        # rows go to the run's last whole interval, as before: not cut back to the last finished flow.
        _, out = self.run_wh(RING / "config_dcqcn.txt", "ring-1ms", "--set", "PORT_MON=1", "--set", "PORT_MON_INTERVAL=1000000")
        with h5py.File(out / "monitor.h5") as m:
            self.assertEqual(list(m["time_ns"][:]), [2_001_000_000])
            self.assertGreater(float(m["utilisation"][()].max()), 0.08)
        _, out = self.run_wh(RING / "config_dcqcn.txt", "ring-stop", "--set", "PORT_MON=1",
                             "--set", "SIMULATOR_STOP_TIME=2.00005")
        with h5py.File(out / "monitor.h5") as m:
            self.assertEqual(list(m["time_ns"][:]), [2_000_010_000 + 10_000 * k for k in range(4)])

    def test_bad_monitor_settings(self):
        p, _ = self.run_wh(RING / "config_dcqcn.txt", "bad", "--set", "PORT_MON=1", "--set", "PORT_MON_NODES=2 16 99",
                           expect=2)
        self.assertIn("PORT_MON_NODES names node 99, but the topology has 36 nodes", p.stderr)
        self.assertFalse((self.dir / "bad").exists())  # refused before any output
        # A missing TRACE_FILE is named with the setting that gave it, before any output.
        p, _ = self.run_wh(RING / "config_dcqcn.txt", "bad-trace", "--set", "TRACE_FILE=missing.txt", expect=2)
        self.assertRegex(p.stderr, r"command line: TRACE_FILE missing\.txt not found beside the config: "
                                   r"\S*/hpcc-ring16-fattree-k4-1MB/missing\.txt \(fix: ")
        self.assertFalse((self.dir / "bad-trace").exists())


if __name__ == "__main__":
    unittest.main()
