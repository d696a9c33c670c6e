#!/usr/bin/python3
"""End-to-end tests of the collective memo: TP collectives on a server's NVSwitch (a closed island) are
simulated once per pattern and replayed afterwards, exactly. Packet mode (Wormhole off) is the truth:
with no random draw involved, fct.txt must be byte-identical. Environment as test_workload.py."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import h5py

SOURCE_DIR = Path(os.environ.get("WH_SOURCE_DIR", Path(__file__).resolve().parents[2]))
WORMHOLE = Path(os.environ.get("WORMHOLE", SOURCE_DIR / "build" / "wormhole"))
CRASH_MARKERS = ("terminate called", "Segmentation fault", "Aborted", "core dumped", "what():")


def workload(gpus, tp, rows):
    """`rows` layers, each a 1-MiB AllReduce on the TP group forward and backward (ig), 1 µs of compute."""
    head = f"HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: {tp} ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: {gpus}\n"
    body = "".join(f"l{i} -1 1000 ALLREDUCE 1048576 1000 ALLREDUCE 1048576 1000 NONE 0 100\n" for i in range(rows))
    return head + f"{rows}\n" + body


class CollectiveMemo(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="wh_e2e_cmemo_"))

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def scenario(self, gpus, tp, rows, text=None, iterations=1):
        (self.dir / "w.txt").write_text(text or workload(gpus, tp, rows))
        sc = self.dir / "s.toml"
        sc.write_text(f"""name = "t"
[topology]
generator = "spectrum-x"
gpus = {gpus}
spines = 2
[workload]
file = "w.txt"
send_latency = "2us"
iterations = {iterations}
[network]
config = "{SOURCE_DIR / 'inputs' / 'llm' / 'SimAI.conf'}"
""")
        return sc

    def run_wh(self, sc, name, *sets):
        out = self.dir / name
        args = [str(WORMHOLE), "run", str(sc), "-o", str(out)]
        for s in sets:
            args += ["--set", s]
        p = subprocess.run(args, capture_output=True, text=True, timeout=300)
        for m in CRASH_MARKERS:
            self.assertNotIn(m, p.stderr)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return p, out

    def memo_attrs(self, out):
        with h5py.File(out / "results.h5") as f:
            return {k[len("collective_memo_"):]: int(v) for k, v in f["/wormhole"].attrs.items()
                    if k.startswith("collective_memo_")}

    def test_repeated_tp_allreduce_replayed_byte_identical(self):
        # One 8-GPU server, TP 8: 24 AllReduces (12 rows, fwd and ig) of 8 rings x 14 steps x 8 GPUs = 896
        # flows each, alone on the server's NVSwitch. The members issue at the same ps in an order that
        # rotates by 3 from one collective to the next (it follows the previous one's completions); their
        # flows start in the collective's own order all the same, so that order is no part of the pattern.
        # The first starts on a fresh island (no round-robin position yet): 1 + 1 patterns are simulated,
        # the other 22 collectives repeat the second (fwd and ig alike). (When the issue order decided the
        # order the flows started in, it was 1 + 8 patterns and 15 replays.)
        sc = self.scenario(8, 8, 12)
        p0, pkt = self.run_wh(sc, "pkt")
        p1, wh = self.run_wh(sc, "wh", "WORMHOLE=1", "WORMHOLE_COLLECTIVE_MEMO=1")
        self.assertEqual((pkt / "fct.txt").read_bytes(), (wh / "fct.txt").read_bytes())
        # Every field of every flow's row, the replayed flows' bounds (min_fct_ns) and NIC-derived ones included.
        with h5py.File(pkt / "results.h5") as a, h5py.File(wh / "results.h5") as b:
            self.assertEqual(a["/flows"][:].tobytes(), b["/flows"][:].tobytes())
        self.assertIn("iteration 0: 839.140 us", p0.stdout)
        self.assertIn("iteration 0: 839.140 us", p1.stdout)
        a = self.memo_attrs(wh)
        self.assertEqual((a["considered"], a["recorded"], a["replayed"], a["replayed_flows"]), (24, 2, 22, 22 * 896))
        self.assertEqual((a["verify_failures"], a["conflicts"], a["not_island"], a["busy"]), (0, 0, 0, 0))
        self.assertIn("22 replayed (19712 flows)", p1.stdout)
        summary = subprocess.run([sys.executable, str(SOURCE_DIR / "scripts" / "wh_analyze.py"), "summary", str(wh / "results.h5")],
                                 capture_output=True, text=True, timeout=120)
        self.assertEqual(summary.returncode, 0, summary.stderr)
        self.assertIn("coll memo 24 collectives: 22 replayed (19,712 flows), 2 simulated and kept as patterns", summary.stdout)

    def test_verify_mode_simulates_a_hit_and_finds_it_equal(self):
        sc = self.scenario(8, 8, 12)
        _, pkt = self.run_wh(sc, "pkt")
        p, wh = self.run_wh(sc, "wh", "WORMHOLE=1", "WORMHOLE_VERIFY=1", "WORMHOLE_COLLECTIVE_MEMO=1")
        self.assertEqual((pkt / "fct.txt").read_bytes(), (wh / "fct.txt").read_bytes())
        a = self.memo_attrs(wh)
        # verify = 1: every hit is simulated instead and compared (the run is packet mode).
        self.assertEqual((a["verified"], a["verify_failures"], a["replayed"]), (22, 0, 0))
        _, wh2 = self.run_wh(sc, "wh2", "WORMHOLE=1", "WORMHOLE_VERIFY=2", "WORMHOLE_COLLECTIVE_MEMO=1")
        a = self.memo_attrs(wh2)
        self.assertEqual((a["verified"], a["verify_failures"], a["replayed"]), (2, 0, 20))  # the first two hits
        self.assertNotIn("differ from their recorded pattern", p.stderr)

    def test_hpcc_replays_verified(self):
        # HPCC (INT on every hop): with SimAI.conf's NS_TRUNCATION 1, 3 patterns (HPCC's key also holds the
        # ports' byte counters modulo INT's 128-B unit); of the 21 hits, 10 replayed and 11 simulated again
        # (verify = 0.5: the running quota ceil(h / 2)) equal their patterns; fct.txt is packet mode's.
        sc = self.scenario(8, 8, 12)
        _, pkt = self.run_wh(sc, "pkt", "CC_MODE=3")
        _, wh = self.run_wh(sc, "wh", "CC_MODE=3", "WORMHOLE=1", "WORMHOLE_COLLECTIVE_MEMO=1", "WORMHOLE_VERIFY=0.5")
        self.assertEqual((pkt / "fct.txt").read_bytes(), (wh / "fct.txt").read_bytes())
        a = self.memo_attrs(wh)
        self.assertEqual((a["recorded"], a["replayed"], a["verified"], a["verify_failures"]), (3, 10, 11, 0))

    def test_hpcc_without_ns_truncation(self):
        # Without NS_TRUNCATION collectives start at any ps, and INT stamps read the clock in whole ns and the
        # byte counters in 128-B units: the key holds the start's ps within its ns and the counters'
        # remainders, so no collective here repeats a pattern (once 36 of 36 verified hits differed and a
        # 64-MiB run came out 1.0 % long). The run is packet mode's.
        sc = self.scenario(8, 8, 12)
        sets = ("CC_MODE=3", "NS_TRUNCATION=0")
        _, pkt = self.run_wh(sc, "pkt", *sets)
        _, wh = self.run_wh(sc, "wh", *sets, "WORMHOLE=1", "WORMHOLE_COLLECTIVE_MEMO=1", "WORMHOLE_VERIFY=1")
        self.assertEqual((pkt / "fct.txt").read_bytes(), (wh / "fct.txt").read_bytes())
        a = self.memo_attrs(wh)
        self.assertEqual((a["considered"], a["recorded"], a["replayed"], a["verify_failures"]), (24, 24, 0, 0))

    def test_two_servers_follow_one_recording(self):
        # Both servers' TP groups issue every collective at the same ps: one simulates each new pattern,
        # the other replays it as it runs. The same completions as packet mode; only the order of lines of
        # equal completion time may differ between the servers.
        sc = self.scenario(16, 8, 6)
        _, pkt = self.run_wh(sc, "pkt")
        _, wh = self.run_wh(sc, "wh", "WORMHOLE=1", "WORMHOLE_COLLECTIVE_MEMO=1")
        self.assertEqual(sorted((pkt / "fct.txt").read_text().splitlines()),
                         sorted((wh / "fct.txt").read_text().splitlines()))
        a = self.memo_attrs(wh)
        self.assertEqual(a["considered"], 24)
        self.assertEqual(a["recorded"] + a["replayed"], 24)
        self.assertGreaterEqual(a["replayed"], 12)  # at least the second server's every collective

    def test_nvswitch_shared_by_two_groups_replayed_byte_identical(self):
        # TP 4 on an 8-GPU server: two TP groups share one NVSwitch. Each collective runs on its
        # sub-island (the switch ports facing its members, and theirs), touching the other group only
        # through the switch's shared buffer, far below its PFC thresholds here: 16 collectives, the two
        # groups' first two (4) simulated, the other 12 replayed, and fct.txt is packet mode's. The
        # patterns keep the buffer peak they were recorded at, through a memo file and a warm start.
        sc = self.scenario(8, 4, 4)
        _, pkt = self.run_wh(sc, "pkt")
        on = ("WORMHOLE=1", "WORMHOLE_MEMO=1", "WORMHOLE_COLLECTIVE_MEMO=1")
        _, wh = self.run_wh(sc, "wh", *on)
        self.assertEqual((pkt / "fct.txt").read_bytes(), (wh / "fct.txt").read_bytes())
        a = self.memo_attrs(wh)
        self.assertEqual((a["considered"], a["not_island"], a["busy"], a["recorded"], a["replayed"]), (16, 0, 0, 4, 12))
        self.assertEqual((a["conflicts"], a["follow_failures"], a["margin_violations"]), (0, 0, 0))
        with h5py.File(wh / "memo.h5") as f:
            self.assertEqual(len(f["/collectives"]), 4)  # per group: its switch ports' interface numbers are in the key
            self.assertTrue(all(int(x) > 0 for x in f["/collective_shared"]["peak"]))
            self.assertEqual(set(int(n) for n in f["/collectives"]["ports"]), {8})  # 4 switch ports, 4 GPU ports
        p = subprocess.run([str(WORMHOLE), "run", str(sc), "-o", str(self.dir / "warm"), "--memo", str(wh / "memo.h5"),
                            *sum((["--set", s] for s in on), [])], capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual((pkt / "fct.txt").read_bytes(), (self.dir / "warm" / "fct.txt").read_bytes())
        a = self.memo_attrs(self.dir / "warm")
        self.assertEqual((a["recorded"], a["replayed"], a["margin_violations"]), (0, 16, 0))

    def test_shared_buffer_margin_refuses_recordings_and_flags_replays(self):
        # The sub-island's runs stand only where the switch's buffer stays clear of every PFC threshold.
        # A 1-MB buffer (BUFFER_SIZE 1): the two groups' first collectives, recorded side by side, fit;
        # each later replay beside the other group's stands for both recorded peaks plus what is in the
        # buffer, which does not: all 12 are flagged (fct.txt is still packet mode's: nothing paused). A
        # warm start from a file whose patterns claim 30 MB of the 32-MB buffer: every replay is flagged
        # and warned about.
        sc = self.scenario(8, 4, 4)
        _, pkt = self.run_wh(sc, "pkt", "BUFFER_SIZE=1")
        _, small = self.run_wh(sc, "small", "BUFFER_SIZE=1", "WORMHOLE=1", "WORMHOLE_COLLECTIVE_MEMO=1")
        self.assertEqual((pkt / "fct.txt").read_bytes(), (small / "fct.txt").read_bytes())
        a = self.memo_attrs(small)
        self.assertEqual((a["recorded"], a["replayed"], a["not_kept"], a["margin_violations"]), (4, 12, 0, 12))
        on = ("WORMHOLE=1", "WORMHOLE_MEMO=1", "WORMHOLE_COLLECTIVE_MEMO=1")
        _, cold = self.run_wh(sc, "cold", *on)
        with h5py.File(cold / "memo.h5", "r+") as f:
            peaks = f["/collective_shared"][:]
            peaks["peak"] = 30_000_000
            f["/collective_shared"][:] = peaks
        p = subprocess.run([str(WORMHOLE), "run", str(sc), "-o", str(self.dir / "warm"), "--memo", str(cold / "memo.h5"),
                            *sum((["--set", s] for s in on), [])], capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        a = self.memo_attrs(self.dir / "warm")
        self.assertEqual((a["replayed"], a["margin_violations"]), (16, 16))
        self.assertIn("came near a PFC threshold", p.stderr)

    DP_OVER_NVSWITCH = ("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 4 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 16\n4\n"
                        "l0 -1 1000 ALLREDUCE 1048576 1000 ALLREDUCE 1048576 1000 ALLREDUCE 4194304 100\n"
                        "l1 -1 1000 ALLREDUCE 1048576 1000 ALLREDUCE 1048576 1000 NONE 0 100\n"
                        "l2 -1 1000 ALLREDUCE 1048576 1000 ALLREDUCE 1048576 1000 NONE 0 100\n"
                        "l3 -1 1000 ALLREDUCE 1048576 1000 ALLREDUCE 1048576 1000 ALLREDUCE 4194304 100\n")

    def test_member_busy_with_a_dp_ring_over_the_nvswitch_is_not_replayed(self):
        # 16 GPUs, TP 4, DP 4: the DP group {0, 4, 8, 12} has a ring step 0 -> 4 over server 0's
        # NVSwitch, and its wg AllReduce runs beside the backward pass's TP collectives. A TP collective
        # one of whose GPUs has such a collective running could see its flows arrive while replayed: it
        # is simulated (busy). fct.txt is packet mode's.
        sc = self.scenario(16, 4, 4, text=self.DP_OVER_NVSWITCH)
        _, pkt = self.run_wh(sc, "pkt")
        _, wh = self.run_wh(sc, "wh", "WORMHOLE=1", "WORMHOLE_COLLECTIVE_MEMO=1")
        self.assertEqual((pkt / "fct.txt").read_bytes(), (wh / "fct.txt").read_bytes())
        a = self.memo_attrs(wh)
        self.assertEqual((a["considered"], a["busy"], a["replayed"], a["follow_failures"], a["conflicts"]), (40, 12, 16, 0, 0))

    def test_recording_disturbed_by_a_later_collective_warns_its_followers(self):
        # Two iterations of the workload above: a DP collective issued while a TP collective is being
        # recorded sends over its sub-island. The recording is not kept, and the collective that followed
        # it on the other sub-island (same pattern, same start) is counted and warned about: its
        # completions were replayed from a run that another flow then changed.
        sc = self.scenario(16, 4, 4, text=self.DP_OVER_NVSWITCH, iterations=2)
        p, wh = self.run_wh(sc, "wh", "WORMHOLE=1", "WORMHOLE_COLLECTIVE_MEMO=1")
        a = self.memo_attrs(wh)
        self.assertEqual((a["not_kept"], a["follow_failures"]), (1, 1))
        self.assertIn("which another flow then disturbed: their completions may be off", p.stderr)

    def test_patterns_survive_a_memo_file_round_trip_and_a_merge(self):
        # With memoization on, the 2 patterns go to memo.h5; a warm start from it replays all 24 collectives
        # (none simulated), still byte-identical to packet mode; a merge of two files keeps 2 patterns.
        sc = self.scenario(8, 8, 12)
        _, pkt = self.run_wh(sc, "pkt")
        on = ("WORMHOLE=1", "WORMHOLE_MEMO=1", "WORMHOLE_COLLECTIVE_MEMO=1")
        _, cold = self.run_wh(sc, "cold", *on)
        with h5py.File(cold / "memo.h5") as f:
            rows = f["/collectives"][:]
            self.assertEqual(len(rows), 2)
            self.assertEqual(int(rows["hits"].sum()), 22)
            self.assertEqual(set(int(n) for n in rows["flows"]), {896})
            self.assertEqual(len(f["/collective_flows"]), 2 * 896)
        p = subprocess.run([str(WORMHOLE), "run", str(sc), "-o", str(self.dir / "warm"), "--memo", str(cold / "memo.h5"),
                            *sum((["--set", s] for s in on), [])], capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual((pkt / "fct.txt").read_bytes(), (self.dir / "warm" / "fct.txt").read_bytes())
        a = self.memo_attrs(self.dir / "warm")
        self.assertEqual((a["recorded"], a["replayed"]), (0, 24))
        # Nothing was left to check for steadiness: no spread was seen (it read "inf").
        self.assertIn("0 steady checks (0 steady, smallest spread none)", p.stdout)
        m = subprocess.run([str(WORMHOLE), "memo", "merge", str(cold / "memo.h5"), str(self.dir / "warm" / "memo.h5"),
                            "-o", str(self.dir / "m.h5")], capture_output=True, text=True, timeout=60)
        self.assertEqual(m.returncode, 0, m.stderr)
        self.assertIn("2 collective patterns", m.stdout)
        st = subprocess.run([str(WORMHOLE), "memo", "stats", str(self.dir / "m.h5")], capture_output=True, text=True,
                            timeout=60)
        self.assertIn("collective patterns: 2 (1792 flows in all, 46 hits; 0 recorded with skips)", st.stdout)  # 22 + 24
        ins = subprocess.run([str(WORMHOLE), "memo", "inspect", str(self.dir / "m.h5"), "-n", "1"], capture_output=True,
                             text=True, timeout=60)
        lines = ins.stdout.splitlines()
        head = lines.index("collective patterns:")
        self.assertEqual(lines[head + 1].split(),
                         ["#", "namespace", "flows", "ports", "duration_us", "port_bytes", "hits", "recorded"])
        self.assertEqual(lines[head + 2].split()[2], "896")
        self.assertEqual(lines[head + 2].split()[7], "exact")
        self.assertEqual(lines[head + 3], "... 1 more (--limit 0 lists all)")

    def dp_scenario(self, iterations, size, rows=1):
        """16 GPUs in two servers, TP 8: each row's wg AllReduce (`size` B) runs on 8 DP groups of 2, GPU i
        and i + 8, whose rail leaf (leaf i) links to the spines too: an open island, used as the sub-island of
        the two GPUs' ports. With one row, an iteration's forward waits for the last one's wg."""
        head = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 16\n"
        body = "".join(f"l{i} -1 1000 NONE 0 1000 NONE 0 1000 ALLREDUCE {size} 100\n" for i in range(rows))
        return self.scenario(16, 8, rows, head + f"{rows}\n" + body, iterations)

    def test_dp_rings_on_rail_leaves_replayed_as_packet_mode(self):
        # 6 iterations x 8 rails = 48 DP AllReduces, each alone on its rail leaf: with fast-forward off the
        # memo's patterns are simulated packet for packet, so the completions (fct.txt sorted: rails end at the
        # same ps) are packet mode's. 1 + 1 patterns (the first on fresh leaves), each recorded on one rail; the
        # other 7 rails do not follow it (its end is not known yet, and the next iteration's AllReduce could
        # come before: left to the network); the 32 of the last 4 iterations replayed, each known to end
        # before the next iteration's can be issued.
        sc = self.dp_scenario(6, 8 << 20)
        _, pkt = self.run_wh(sc, "pkt")
        p, wh = self.run_wh(sc, "wh", "WORMHOLE=1", "WORMHOLE_FAST_FORWARD=0", "WORMHOLE_COLLECTIVE_MEMO=1")
        self.assertEqual(sorted((pkt / "fct.txt").read_text().splitlines()),
                         sorted((wh / "fct.txt").read_text().splitlines()))
        a = self.memo_attrs(wh)
        self.assertEqual((a["considered"], a["not_island"], a["busy"], a["overlaps"], a["conflicts"]), (48, 0, 0, 14, 0))
        self.assertEqual((a["recorded"], a["replayed"], a["approximate"]), (2, 32, 0))
        self.assertNotIn("recorded with skips", p.stdout)
        # The events the replays stand for, 4 per data packet and link: each of the 32 replays has 4 flows of
        # 4 MiB (2 steps, both ways), ceil(4 MiB / 9000 B) = 467 packets each, over 2 links. With the events
        # executed they make up what packet mode executed, within 2 %.
        self.assertEqual(a["events_replayed"], 32 * 2 * 2 * 467 * 4 * 2)
        with h5py.File(pkt / "results.h5") as f0, h5py.File(wh / "results.h5") as f1:
            executed = int(f1["/run"].attrs["events"]) + a["events_replayed"]
            self.assertLess(abs(executed / int(f0["/run"].attrs["events"]) - 1), 0.02)
        # Verify mode with every decision sampled: the 14 followers and the 32 hits are simulated and compared.
        _, v = self.run_wh(sc, "verify", "WORMHOLE=1", "WORMHOLE_FAST_FORWARD=0", "WORMHOLE_COLLECTIVE_MEMO=1",
                           "WORMHOLE_VERIFY=1")
        a = self.memo_attrs(v)
        self.assertEqual((a["recorded"], a["verified"], a["verify_failures"], a["replayed"]), (2, 46, 0, 0))

    def test_fast_forwarded_recording_replayed_and_kept_in_the_memo_file(self):
        # Long DP ring steps (128 MiB, 2.7 ms each) are fast-forwarded while their first collective is recorded:
        # its pattern is approximate, and its replays carry what the recording skipped (skipped_ns in /flows).
        # A warm start replays every collective from the file (the cold run simulated 14 of them beside their
        # recordings, skipped on their own); the skips survive the file and a merge (both warm starts alike);
        # verify mode simulates the hits packet for packet and measures them within the error bound.
        sc = self.dp_scenario(4, 128 << 20)
        on = ("WORMHOLE=1", "WORMHOLE_MEMO=1", "WORMHOLE_COLLECTIVE_MEMO=1", "WORMHOLE_WINDOW=100")
        p, cold = self.run_wh(sc, "cold", *on)
        a = self.memo_attrs(cold)
        self.assertEqual((a["considered"], a["not_island"], a["conflicts"], a["overlaps"]), (32, 0, 0, 14))
        self.assertEqual((a["recorded"], a["approximate"], a["replayed"], a["approximate_replays"]), (2, 2, 16, 16))
        self.assertIn("patterns recorded with skips", p.stdout)
        with h5py.File(cold / "results.h5") as f:
            flows = f["/flows"][:]
        self.assertTrue((flows["skipped_ns"] > 0).all())  # recorded flows and replayed ones alike
        with h5py.File(cold / "memo.h5") as f:
            skips = f["/collective_skips"][:]
            self.assertEqual(len(skips), len(f["/collective_flows"]))
            self.assertTrue((skips["skipped_ps"] > 0).all())
        m = subprocess.run([str(WORMHOLE), "memo", "merge", str(cold / "memo.h5"), "-o", str(self.dir / "m.h5")],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(m.returncode, 0, m.stderr)
        st = subprocess.run([str(WORMHOLE), "memo", "stats", str(self.dir / "m.h5")], capture_output=True, text=True,
                            timeout=60)
        self.assertIn("collective patterns: 2 (8 flows in all, 16 hits; 2 recorded with skips)", st.stdout)
        for name, memo in (("warm", cold / "memo.h5"), ("merged", self.dir / "m.h5")):
            p = subprocess.run([str(WORMHOLE), "run", str(sc), "-o", str(self.dir / name), "--memo", str(memo),
                                *sum((["--set", s] for s in on), [])], capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            w = self.memo_attrs(self.dir / name)
            self.assertEqual((w["recorded"], w["replayed"], w["approximate_replays"]), (0, 32, 32))
            with h5py.File(self.dir / name / "results.h5") as f:
                self.assertTrue((f["/flows"][:]["skipped_ns"] > 0).all())
        self.assertEqual((self.dir / "warm" / "fct.txt").read_bytes(), (self.dir / "merged" / "fct.txt").read_bytes())
        mean = lambda out: sum(int(l.split()[6]) for l in (out / "fct.txt").read_text().splitlines()) / 32 / 2
        self.assertLess(abs(mean(self.dir / "warm") / mean(cold) - 1), 0.01)
        p = subprocess.run([str(WORMHOLE), "run", str(sc), "-o", str(self.dir / "verify"), "--memo", str(cold / "memo.h5"),
                            *sum((["--set", s] for s in on + ("WORMHOLE_VERIFY=1",)), [])],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        v = self.memo_attrs(self.dir / "verify")
        self.assertGreaterEqual(v["verified"], 1)
        self.assertEqual(v["verify_failures"], 0)
        with h5py.File(self.dir / "verify" / "results.h5") as f:
            worst = float(f["/wormhole"].attrs["collective_memo_verify_max_error"])
        self.assertGreater(worst, 0)
        self.assertLessEqual(worst, 0.01)
        self.assertIn("largest completion error", p.stdout)

    def packet_and_memo_agree(self, sc, name):
        """Packet mode and the collective memo alone (fast-forward off) on `sc`: the sorted fct.txt lines agree."""
        _, pkt = self.run_wh(sc, name + "-pkt")
        p, wh = self.run_wh(sc, name + "-wh", "WORMHOLE=1", "WORMHOLE_FAST_FORWARD=0", "WORMHOLE_COLLECTIVE_MEMO=1")
        self.assertEqual(sorted((pkt / "fct.txt").read_text().splitlines()),
                         sorted((wh / "fct.txt").read_text().splitlines()))
        self.assertNotIn("started on an island", p.stderr)
        return self.memo_attrs(wh)

    def test_look_ahead_counts_each_backward_step_once(self):
        # wg AllReduces in rows 6, 4, 2, 0 (backward order), row 1 without one, row 0 with 100 us of wg compute:
        # row 2's replay (about 180 us) must not be made, since row 0's can be issued 103 us after it starts.
        # (The look-ahead counted a backward step's wg compute twice: 16 flows started on replayed leaves and
        # row 0's AllReduce ended 4.5 % early.)
        head = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 16\n"
        wg = {0: (100000, 8 << 20), 2: (1000, 8 << 20), 3: (600000, 0), 4: (1000, 8 << 20), 5: (600000, 0), 6: (1000, 8 << 20)}
        rows = "".join(f"l{i} -1 1000 NONE 0 1000 NONE 0 {wg.get(i, (1000, 0))[0]} "
                       f"{'ALLREDUCE' if wg.get(i, (0, 0))[1] else 'NONE'} {wg.get(i, (0, 0))[1]} 100\n" for i in range(7))
        a = self.packet_and_memo_agree(self.scenario(16, 8, 7, head + "7\n" + rows), "bwd")
        self.assertEqual(a["conflicts"], 0)
        self.assertGreater(a["overlaps"], 0)

    def test_look_ahead_starts_where_a_program_stands_in_its_own_time(self):
        # 6 rows of 200 us ig compute, 1 us wg compute and a 1-MiB DP AllReduce (2 GPUs on a rail leaf),
        # 2 iterations: 96 collectives. When a row's AllReduce is offered, its GPUs' programs have already
        # run ahead to the next row's wg issue, 201 us on, where they wait for the client's clock; the
        # look-ahead starts there. (Counting from the client's time with the ig compute under way as 0, it
        # saw an issue 1 us on: 16 replayed, 78 left to the network.) All but the first row's 7 followers of
        # each of the 2 recordings are replayed, exactly: sorted fct.txt is packet mode's, and verify mode
        # (every collective after the 2 recordings simulated) finds its 86 hits equal to their patterns.
        head = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 16\n"
        rows = "".join(f"l{i} -1 1000 NONE 0 200000 NONE 0 1000 ALLREDUCE 1048576 0\n" for i in range(6))
        sc = self.scenario(16, 8, 6, head + "6\n" + rows, 2)
        a = self.packet_and_memo_agree(sc, "ahead")
        self.assertEqual((a["considered"], a["recorded"], a["replayed"], a["overlaps"], a["conflicts"]), (96, 2, 80, 14, 0))
        _, v = self.run_wh(sc, "ahead-verify", "WORMHOLE=1", "WORMHOLE_FAST_FORWARD=0", "WORMHOLE_COLLECTIVE_MEMO=1",
                           "WORMHOLE_VERIFY=1")
        a = self.memo_attrs(v)
        self.assertEqual((a["verified"], a["verify_failures"]), (86, 0))

    def test_pipeline_peers_keep_a_leaf_from_being_replayed(self):
        # TP 2 over two 1-GPU servers, PP 2: a stage's TP AllReduce runs on a rail leaf, and the other stage's
        # activations reach its GPUs from outside every group of theirs. (They were not followed: 4 flows started
        # on replayed leaves, the iteration 1 us short.)
        (self.dir / "w.txt").write_text(
            "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 1 pp: 2 vpp: 1 ga: 4 all_gpus: 4 pp_comm: 65536\n4\n"
            "mb -1 1000 ALLREDUCE 8388608 1000 NONE 0 1000 NONE 0 100\n"
            + "mb -1 100000 ALLREDUCE 8388608 1000 NONE 0 1000 NONE 0 100\n" * 3)
        sc = self.dir / "pp.toml"
        sc.write_text(f"""name = "pp"
[topology]
generator = "spectrum-x"
gpus = 4
gpus_per_server = 1
nvswitches_per_server = 0
spines = 2
[workload]
file = "w.txt"
send_latency = "2us"
[network]
config = "{SOURCE_DIR / 'inputs' / 'llm' / 'SimAI.conf'}"
""")
        a = self.packet_and_memo_agree(sc, "pp")
        self.assertEqual((a["conflicts"], a["replayed"]), (0, 0))
        self.assertGreater(a["overlaps"], 0)

    def test_pipeline_stages_sharing_an_nvswitch_are_not_replayed_there(self):
        # One 8-GPU server, TP 4, PP 2: the two stages' TP groups share the NVSwitch, and each stage's
        # activations and gradients cross it towards the other's GPUs. (Replayed as before: 16 flows started
        # on replayed sub-islands and 2,028 of 3,136 fct.txt lines differed from packet mode's.)
        text = ("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 4 ep: 1 pp: 2 vpp: 1 ga: 4 all_gpus: 8 "
                "pp_comm: 1048576\n4\n"
                + "mb -1 1000 ALLREDUCE 8388608 1000 ALLREDUCE 8388608 1000 NONE 0 100\n"
                  "mb -1 20000 ALLREDUCE 8388608 1000 ALLREDUCE 8388608 1000 NONE 0 100\n" * 2)
        sc = self.scenario(8, 4, 4, text, iterations=2)
        a = self.packet_and_memo_agree(sc, "ppnv")
        self.assertEqual((a["conflicts"], a["replayed"]), (0, 0))

    def test_approximate_patterns_replayed_only_under_as_tight_a_bound(self):
        # A cold run records the DP rings with skips (bound 1 %). A warm start without fast-forward, or with a
        # 0.5 % bound, may not replay them: it simulates those collectives (without fast-forward: packet mode's
        # completions) and its memo file holds its own patterns instead; a merge keeps the tighter one.
        sc = self.dp_scenario(4, 128 << 20)
        on = ("WORMHOLE=1", "WORMHOLE_MEMO=1", "WORMHOLE_COLLECTIVE_MEMO=1", "WORMHOLE_WINDOW=100")
        _, cold = self.run_wh(sc, "cold", *on)
        _, pkt = self.run_wh(sc, "pkt")
        err = {}
        for name, extra in {"noff": ("WORMHOLE_FAST_FORWARD=0",), "tight": ("WORMHOLE_ERROR_BOUND=0.005",)}.items():
            p = subprocess.run([str(WORMHOLE), "run", str(sc), "-o", str(self.dir / name), "--memo", str(cold / "memo.h5"),
                                *sum((["--set", s] for s in on + extra), [])], capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            err[name] = p.stderr
            self.assertEqual(self.memo_attrs(self.dir / name)["recorded"], 2, name)  # in place of the file's two
        self.assertEqual(self.memo_attrs(self.dir / "noff")["approximate_replays"], 0)
        self.assertIn("only the collective patterns recorded without skips are used", err["noff"])
        self.assertEqual(sorted((pkt / "fct.txt").read_text().splitlines()),
                         sorted((self.dir / "noff" / "fct.txt").read_text().splitlines()))
        stats = lambda f: subprocess.run([str(WORMHOLE), "memo", "stats", str(f)], capture_output=True, text=True,
                                         timeout=60).stdout
        self.assertIn("0 recorded with skips", stats(self.dir / "noff" / "memo.h5"))
        with h5py.File(self.dir / "tight" / "memo.h5") as f:
            self.assertEqual(set(f["/collective_skips"][:]["error_bound"]), {0.005})
        m = subprocess.run([str(WORMHOLE), "memo", "merge", str(cold / "memo.h5"), str(self.dir / "noff" / "memo.h5"),
                            "-o", str(self.dir / "m.h5")], capture_output=True, text=True, timeout=60)
        self.assertEqual(m.returncode, 0, m.stderr)
        self.assertIn("0 recorded with skips", stats(self.dir / "m.h5"))

    def test_tampered_warm_start_caught_by_verify_mode(self):
        # Every completion of the memo file doubled (still a valid file): with every hit verified, each
        # differs, is warned about and not replayed; the run is packet mode's.
        sc = self.scenario(8, 8, 12)
        _, pkt = self.run_wh(sc, "pkt")
        on = ("WORMHOLE=1", "WORMHOLE_MEMO=1", "WORMHOLE_COLLECTIVE_MEMO=1")
        _, cold = self.run_wh(sc, "cold", *on)
        with h5py.File(cold / "memo.h5", "r+") as f:
            flows = f["/collective_flows"][:]
            flows["finish_ps"] *= 2
            f["/collective_flows"][:] = flows
        p = subprocess.run([str(WORMHOLE), "run", str(sc), "-o", str(self.dir / "warm"), "--memo", str(cold / "memo.h5"),
                            *sum((["--set", s] for s in on + ("WORMHOLE_VERIFY=1",)), [])],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual((pkt / "fct.txt").read_bytes(), (self.dir / "warm" / "fct.txt").read_bytes())
        a = self.memo_attrs(self.dir / "warm")
        self.assertEqual(a["replayed"], 0)
        self.assertGreater(a["verify_failures"], 0)
        self.assertIn("differ from their recorded pattern", p.stderr)

    def test_corrupt_pattern_refused(self):
        sc = self.scenario(8, 8, 4)
        _, cold = self.run_wh(sc, "cold", "WORMHOLE=1", "WORMHOLE_MEMO=1", "WORMHOLE_COLLECTIVE_MEMO=1")
        with h5py.File(cold / "memo.h5", "r+") as f:
            flows = f["/collective_flows"][:]
            flows["order"][1] = flows["order"][0]  # no longer a permutation
            f["/collective_flows"][:] = flows
        p = subprocess.run([str(WORMHOLE), "memo", "stats", str(cold / "memo.h5")], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("not a permutation of its flows (corrupt file)", p.stderr)

    def test_corrupt_skips_refused(self):
        # An exact pattern's /collective_skips rows are all -1: one row claiming a skip is refused, not read
        # as a pattern half exact.
        sc = self.scenario(8, 8, 4)
        _, cold = self.run_wh(sc, "cold", "WORMHOLE=1", "WORMHOLE_MEMO=1", "WORMHOLE_COLLECTIVE_MEMO=1")
        with h5py.File(cold / "memo.h5", "r+") as f:
            skips = f["/collective_skips"][:]
            self.assertTrue((skips["skipped_ps"] == -1).all())
            skips["skipped_ps"][1] = 5
            f["/collective_skips"][:] = skips
        p = subprocess.run([str(WORMHOLE), "memo", "stats", str(cold / "memo.h5")], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("has a row of /collective_skips out of range or unlike its other rows (corrupt file)", p.stderr)

    def test_off_by_default(self):
        sc = self.scenario(8, 8, 4)
        p, wh = self.run_wh(sc, "wh", "WORMHOLE=1")
        self.assertNotIn("collective memo", p.stdout)
        self.assertEqual(self.memo_attrs(wh), {})

    def test_a_flow_file_run_says_it_does_not_use_it(self):
        # set on a flow file's run, it was ignored without a word
        config = SOURCE_DIR / "inputs" / "hpcc-bundled-example" / "config_hpcc.txt"
        p = subprocess.run([str(WORMHOLE), "run", str(config), "-o", str(self.dir / "ff"), "-q", "--set", "WORMHOLE=1",
                            "--set", "WORMHOLE_COLLECTIVE_MEMO=1"], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("wormhole: warning: the collective memo is not used in this run: a flow file's flows are no "
                      "collectives", p.stderr)


if __name__ == "__main__":
    unittest.main()
