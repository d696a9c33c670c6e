#!/usr/bin/python3
"""End-to-end tests of SimAI's monitor files (BW_MON_FILE, RATE_MON_FILE, CNP_MON_FILE; docs/network-model.md §5.7):
SimAI's header lines; the bandwidth lines add up to the bytes each port sent (computed by hand from the flows'
sizes); every CNP count is the number of CNP-flagged ACKs the packet trace shows reaching the sender before the
sample; a DCQCN QP's first rate is its line rate; they change no result; a base config's (SimAI.conf's) monitor paths
are not written. Environment as test_refruns.py."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from collections import defaultdict
from pathlib import Path

import h5py
import numpy as np

SOURCE_DIR = Path(os.environ.get("WH_SOURCE_DIR", Path(__file__).resolve().parents[2]))
TEST_DATA = Path(os.environ.get("WH_TEST_DATA", SOURCE_DIR / "tests" / "data"))
WORMHOLE = Path(os.environ.get("WORMHOLE", SOURCE_DIR / "build" / "wormhole"))
sys.path.insert(0, str(SOURCE_DIR / "scripts"))
from wh_analysis import trace as tr  # noqa: E402

BUNDLED = TEST_DATA / "refruns" / "hpcc-bundled-example"
INCAST = TEST_DATA / "refruns" / "hpcc-incast16to1-leafspine64-1MB"
SIMAI = ["--set", "BW_MON_FILE=bw.txt", "--set", "RATE_MON_FILE=rate.txt", "--set", "CNP_MON_FILE=cnp.txt"]


def read_monitor(path):
    """(header, rows as lists of numbers) of a SimAI monitor file."""
    lines = path.read_text().splitlines()
    return lines[0], [[float(x) if "." in x else int(x) for x in ln.split(", ")] for ln in lines[1:]]


class SimaiMonitors(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="wh_e2e_simai_mon_"))

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def run_wh(self, config, out, *args):
        p = subprocess.run([str(WORMHOLE), "run", str(config), "-o", str(self.dir / out), *map(str, args)],
                           capture_output=True, text=True, timeout=600, cwd=self.dir)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return p, self.dir / out

    def test_bandwidth_adds_up_to_the_bytes_sent(self):
        # Four DCQCN flows of 1 B, 999 B, 1000 B and 2,500,001 B from hosts 2-5 to host 1 of the bundled example's
        # star (100 Gb/s): each sender's NIC sends its flow's payload plus 48 B a packet and nothing else; host 1
        # sends one 60-B ACK per data packet.
        shutil.copy(BUNDLED / "topology.txt", self.dir)
        sizes = [1, 999, 1000, 2_500_001]
        (self.dir / "flow.txt").write_text(f"{len(sizes)}\n" + "".join(f"{2 + k} 1 3 100 {s} 2.0\n"
                                                                        for k, s in enumerate(sizes)))
        lines = [ln for ln in (BUNDLED / "config_hpcc.txt").read_text().splitlines()
                 if not ln.startswith(("FLOW_FILE", "TRACE_FILE", "ENABLE_TRACE", "TRACE_OUTPUT_FILE"))]
        (self.dir / "config.txt").write_text("\n".join(lines + ["FLOW_FILE flow.txt"]) + "\n")
        dcqcn = ["--set", "CC_MODE=1", "--set", "RATE_AI=50Mb/s", "--set", "RATE_HAI=100Mb/s", "--set", "RP_TIMER=300"]
        _, plain = self.run_wh(self.dir / "config.txt", "plain", *dcqcn)
        p, out = self.run_wh(self.dir / "config.txt", "mon", *dcqcn, *SIMAI, "--set", "BW_MON_INTERVAL=10",
                             "--set", "QP_MON_INTERVAL=5", "--set", "MON_START=2000000")
        self.assertEqual((plain / "fct.txt").read_bytes(), (out / "fct.txt").read_bytes())  # no result changes
        self.assertIn(f"{out / 'bw.txt'} {out / 'rate.txt'} {out / 'cnp.txt'}", p.stdout)
        header, rows = read_monitor(out / "bw.txt")
        self.assertEqual(header, "time, node_id, port_id, bandwidth")
        sent = defaultdict(float)  # (node, port) -> bytes: Gbit/s x 10 us
        for t, node, port, gbps in rows:
            self.assertEqual((t - 2_000_000_000) % 10_000, 0)  # ns, on the 10-us grid from MON_START (2 s)
            sent[node, port] += gbps * 1e9 * 10e-6 / 8
        packets = [-(-s // 1000) for s in sizes]
        for k, s in enumerate(sizes):
            self.assertAlmostEqual(sent[2 + k, 1], s + 48 * packets[k], delta=0.01)
        self.assertAlmostEqual(sent[1, 1], 60 * sum(packets), delta=0.01)
        # The switch's port to host 1 carries all the data.
        self.assertAlmostEqual(max(v for (n, _), v in sent.items() if n == 0),
                               sum(sizes) + 48 * sum(packets), delta=0.01)
        header, rows = read_monitor(out / "rate.txt")
        self.assertEqual(header, "time, src, dst, sport, dport, size, curr_rate")
        first = {}
        for t, src, dst, sport, dport, size, rate in rows:
            first.setdefault((src, sport), (size, rate))
            self.assertLessEqual(rate, 100_000_000_000)
        self.assertIn(2_500_001, {size for size, _ in first.values()})
        self.assertTrue(all(rate == 100_000_000_000 for _, rate in first.values()))  # DCQCN starts at line rate
        self.assertEqual(read_monitor(out / "cnp.txt")[0], "time, src, dst, sport, dport, size, cnp_number")

    def test_cnp_counts_match_the_packet_trace(self):
        # The 16-to-1 DCQCN incast marks 12,044 packets: every CNP line's count is the number of ACKs and
        # NACKs with the CNP flag that reached the flow's sender before the sample instant, as the trace shows.
        trace_all = self.dir / "all.txt"
        n = int((INCAST / "topology.txt").read_text().split()[0])
        trace_all.write_text(f"{n}\n" + " ".join(map(str, range(n))) + "\n")
        _, out = self.run_wh(INCAST / "config_dcqcn.txt", "incast", *SIMAI,
                             "--set", "QP_MON_INTERVAL=20", "--set", "ENABLE_TRACE=1", "--set", f"TRACE_FILE={trace_all}")
        with h5py.File(out / "results.h5") as f:
            fl = f["flows"][:]
        flow_of = {(int(r["src"]), int(r["sport"])): int(r["id"]) for r in fl}
        _, rec = tr.read_trace(out / "mix.tr")
        src_of = {int(r["id"]): int(r["src"]) for r in fl}
        acks = rec[(rec["event"] == 0) & np.isin(rec["type"], (1, 2)) & ((rec["flags"] & 2) != 0)]
        cnp_times = defaultdict(list)
        for r in acks:
            if int(r["node"]) == src_of[int(r["flow"])]:
                cnp_times[int(r["flow"])].append(int(r["time_ps"]))
        _, rows = read_monitor(out / "cnp.txt")
        self.assertGreater(len(rows), 10)
        for t, src, dst, sport, dport, size, count in rows:
            times = np.array(cnp_times[flow_of[src, sport]])
            self.assertEqual(count, int((times < t * 1000).sum()), f"flow {flow_of[src, sport]} at {t} ns")
        # A marked flow's rate falls below its line rate.
        _, rates = read_monitor(out / "rate.txt")
        self.assertLess(min(r[6] for r in rates), max(r[6] for r in rates))

    def test_a_base_configs_monitor_paths_are_not_written(self):
        # SimAI.conf names /etc/astra-sim/... paths: a scenario on it writes none of them and says how to ask.
        scenario = SOURCE_DIR / "inputs" / "llm" / "micro-allreduce-16g.toml"
        p = subprocess.run([str(WORMHOLE), "run", str(scenario), "-o", str(self.dir / "m")], capture_output=True,
                           text=True, timeout=600, cwd=self.dir)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("BW_MON_FILE, RATE_MON_FILE, CNP_MON_FILE of the base config (SimAI's monitors, at its paths) "
                      "are not written", p.stderr)
        self.assertFalse(any((self.dir / "m").glob("*_bw.txt")))
        _, out = self.run_wh(scenario, "m2", "--set", "network.BW_MON_FILE=bw.txt", "--set", "network.BW_MON_INTERVAL=100")
        header, rows = read_monitor(out / "bw.txt")
        self.assertEqual(header, "time, node_id, port_id, bandwidth")
        self.assertGreater(len(rows), 0)
        self.assertFalse((out / "rate.txt").exists())  # only the file asked for
        # SimAI.conf's 10-ms bandwidth interval is longer than this run: an empty file, and a warning says why.
        p, out = self.run_wh(scenario, "m3", "--set", "network.BW_MON_FILE=bw.txt")
        self.assertEqual(len(read_monitor(out / "bw.txt")[1]), 0)
        self.assertIn("no sample of SimAI's monitors saw traffic", p.stderr)
        self.assertIn("BW_MON_INTERVAL 10000 us", p.stderr)

    @unittest.skipIf(shutil.which("mpirun") is None, "needs mpirun")
    def test_a_distributed_run_does_not_offer_the_monitors_it_cannot_write(self):
        # Over ranks none of SimAI's monitor files is written: no note says how to ask for them.
        scenario = SOURCE_DIR / "inputs" / "llm" / "micro-allreduce-16g.toml"
        root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
        p = subprocess.run([shutil.which("mpirun"), *root, "--oversubscribe", "-np", "2", str(WORMHOLE), "run",
                            str(scenario), "-o", str(self.dir / "d")], capture_output=True, text=True, timeout=600,
                           cwd=self.dir)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("SimAI's monitors, at its paths", p.stderr)
        self.assertNotIn("SimAI's monitor files", p.stderr)  # nor the warning kept for files asked for


if __name__ == "__main__":
    unittest.main()
