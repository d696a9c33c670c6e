#!/usr/bin/python3
"""End-to-end tests of `wormhole run SCENARIO.toml`: training workloads on generated GPU clusters.

Known answers by hand (comments), the shipped MoE scenario's outputs checked against each other,
and the bad-input cases of the workload issue (TP or PP not dividing, zero-size
collectives, a bad scenario key). Environment as test_refruns.py (WORMHOLE, WH_TEST_DATA, WH_SOURCE_DIR).
"""
import csv
import json
import os
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
SIMAI = TEST_DATA / "simai"
CRASH_MARKERS = ("terminate called", "Segmentation fault", "Aborted", "core dumped", "what():")

TP8_HEADER = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: {gpus}"


def run_toml(case, folder, name, text, expect=0):
    """Writes `text` as folder/NAME.toml and runs it into folder/NAME: asserts no crash and exit status `expect`
    on `case` (a unittest.TestCase). Returns (the finished process, the output folder)."""
    (folder / f"{name}.toml").write_text(text)
    out = folder / name
    p = subprocess.run([str(WORMHOLE), "run", str(folder / f"{name}.toml"), "-o", str(out)], capture_output=True,
                       text=True, timeout=300)
    for m in CRASH_MARKERS:
        case.assertNotIn(m, p.stderr)
    case.assertEqual(p.returncode, expect, p.stdout + p.stderr)
    return p, out


def scenario_text(gpus, workload="workload.txt", extra=""):
    return f"""name = "t"
[topology]
generator = "spectrum-x"
gpus = {gpus}
spines = 2
[workload]
file = "{workload}"
send_latency = "2us"
{extra}
[network]
config = "{SOURCE_DIR / 'inputs' / 'llm' / 'SimAI.conf'}"
"""


class WorkloadRuns(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="wh_e2e_workload_"))

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def run_wh(self, scenario, *args, expect=0, timeout=300):
        out = self.dir / "out"
        p = subprocess.run([str(WORMHOLE), "run", str(scenario), "-o", str(out), *args], capture_output=True,
                           text=True, timeout=timeout)
        for m in CRASH_MARKERS:
            self.assertNotIn(m, p.stderr)
        self.assertEqual(p.returncode, expect, p.stdout + p.stderr)
        return p, out

    def write(self, name, text):
        path = self.dir / name
        path.write_text(text)
        return path

    def test_simai_environment_variables_are_noted(self):
        # A SimAI user's environment may still set SimAI's variables; wormhole reads none, and says so.
        scenario = SOURCE_DIR / "inputs" / "llm" / "micro-allreduce-16g.toml"
        env = dict(os.environ, AS_SEND_LAT="2", AS_PXN_ENABLE="1")
        env.pop("AS_NVLS_ENABLE", None)
        p = subprocess.run([str(WORMHOLE), "run", str(scenario), "-o", str(self.dir / "out")], capture_output=True,
                           text=True, timeout=300, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("wormhole: note: AS_SEND_LAT=2 is SimAI's environment variable and is not read: set "
                      "workload.send_latency in the scenario", p.stderr)
        self.assertIn("wormhole: note: AS_PXN_ENABLE=1 is SimAI's environment variable and is not read", p.stderr)
        self.assertNotIn("AS_NVLS_ENABLE", p.stderr)

    def test_compute_only_iteration_time(self):
        # Rows (fwd, ig, wg compute; update) a = (1000, 2000, 3000; 100), b = (10, 20, 30; 5), every
        # collective NONE or size 0. One iteration: forward 1000+100+10+5, backward b 20+5+30,
        # a 2000+100+3000 -> 6270 ns, then a's wg update -> 6370 ns. Two: the second forward waits for
        # a's wg (6370), runs 6270 more and a's update: 12,740 ns.
        self.write("workload.txt", TP8_HEADER.format(gpus=16) + "\n2\n"
                   "a -1 1000 NONE 0 2000 ALLREDUCE 0 3000 NONE 0 100\n"
                   "b\t-1\t10\tNONE\t20971520\t20\tNONE\t0\t30\tREDUCESCATTER\t0\t5")  # no final newline
        sc = self.write("s.toml", scenario_text(16, extra="iterations = 2"))
        p, out = self.run_wh(sc)
        self.assertIn("iteration 0: 6.370 us", p.stdout)
        self.assertIn("iteration 1: 6.370 us (ends at 12.740 us)", p.stdout)
        with h5py.File(out / "results.h5") as f:
            it = f["/workload/iterations"][:]
            self.assertEqual(list(it["end_ps"]), [6_370_000, 12_740_000])
            self.assertEqual(len(f["/workload/collectives"]), 0)
            self.assertEqual(len(f["/flows"]), 0)
            # Per GPU, each alike: compute 2 × (1000 + 2000 + 3000 + 10 + 20 + 30) = 12,120 ns; update delays
            # waited for 2 × (100 + 5 after fwd, 5 + 100 after ig) = 420 ns, and a's wg update (run in the
            # background) waited before the second forward and at the end, 2 × 100 ns: 620 ns; nothing
            # exposed; the program ends after a's last wg update at 12,740 ns = 12,120 + 620.
            gpus = f["/workload/gpus"][:]
            self.assertEqual(list(gpus["gpu"]), list(range(16)))
            for col, want in (("compute_ps", 12_120_000), ("exposed_ps", 0), ("update_ps", 620_000),
                              ("finish_ps", 12_740_000)):
                self.assertTrue((gpus[col] == want).all(), f"{col}: {gpus[col]}")
            self.assertEqual(int(f["/workload"].attrs["complete"]), 1)
        with open(out / "gpus.csv") as fh:
            rows = list(csv.DictReader(fh))
        self.assertEqual(len(rows), 16)
        self.assertEqual((rows[3]["compute_us"], rows[3]["exposed_us"], rows[3]["update_us"], rows[3]["finish_us"]),
                         ("12.120", "0.000", "0.620", "12.740"))

    def test_tp8_allreduce_hand_count_8_and_16_gpus(self):
        # TP-8 ring AllReduce of 16 MiB: 8 rings x 2(8-1) steps x 8 ranks = 896 flows of
        # 16 MiB / 8 / 8 = 262,144 B per TP group; 16 GPUs have two TP groups -> 1792 flows.
        for gpus, flows in ((8, 896), (16, 1792)):
            with self.subTest(gpus=gpus):
                self.write("workload.txt", TP8_HEADER.format(gpus=gpus) +
                           "\n1\nar -1 1 ALLREDUCE 16777216 1 NONE 0 1 NONE 0 1\n")
                sc = self.write("s.toml", scenario_text(gpus))
                _, out = self.run_wh(sc)
                lines = (out / "fct.txt").read_text().split()
                rows = [lines[i:i + 8] for i in range(0, len(lines), 8)]
                self.assertEqual(len(rows), flows)
                self.assertTrue(all(int(r[4]) == 262144 for r in rows))
                with open(out / "collectives.csv") as f:
                    coll = list(csv.DictReader(f))
                self.assertEqual(len(coll), gpus // 8)
                for c in coll:
                    self.assertEqual((c["op"], c["group"], c["ranks"], c["flows"]), ("AllReduce", "TP", "8", "896"))
                    self.assertEqual(int(c["flow_bytes"]), 896 * 262144)

    def test_zero_size_collectives_complete_at_once(self):
        # Typed collectives of size 0 and a 1-byte wg AllReduce on the DP group (2 ranks, chunk 0 B):
        # no flows, no hang; the iteration is the compute time: 1+1+1+1 (fwd, update) then
        # ig 1 + update 1 + wg 1 per row, + the last wg's update 1 = 11 ns.
        self.write("workload.txt", TP8_HEADER.format(gpus=16) + "\n2\n"
                   "a -1 1 ALLGATHER 0 1 REDUCESCATTER 0 1 ALLREDUCE 1 1\n"
                   "b -1 1 ALLTOALL_EP 0 1 NONE 0 1 ALLGATHER_DP_EP 0 1\n")
        sc = self.write("s.toml", scenario_text(16))
        p, out = self.run_wh(sc)
        self.assertIn("iteration 0: 0.011 us", p.stdout)
        with h5py.File(out / "results.h5") as f:
            self.assertEqual(len(f["/flows"]), 0)

    def test_all_gpus_mismatch_runs_on_the_topologys_gpus(self):
        # A workload for 16 GPUs on 32: a warning, and DP = 32 / 8 = 4 as SimAI's ns-3 backend. The wg
        # AllReduce of 4 MiB on each of the 8 DP groups (one GPU per server: 1 ring): 2(4-1) steps x 4 ranks
        # = 24 flows of 4 MiB / 4 = 1 MiB; 8 groups -> 192 flows.
        wl = self.write("workload.txt", TP8_HEADER.format(gpus=16) + "\n1\nar -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 4194304 1\n")
        sc = self.write("s.toml", scenario_text(32))
        p, out = self.run_wh(sc)
        self.assertIn(f"wormhole: warning: {wl}:1: all_gpus 16 differs from the 32 GPUs the workload runs on: using 32 "
                      "(DP = 4)", p.stderr)
        self.assertIn("32 GPUs (8 per server, TP 8 DP 4 EP 1)", p.stdout)
        lines = (out / "fct.txt").read_text().split()
        rows = [lines[i:i + 8] for i in range(0, len(lines), 8)]
        self.assertEqual(len(rows), 192)
        self.assertTrue(all(int(r[4]) == 1048576 for r in rows))

    def test_pipeline_stages_send_activations_and_gradients(self):
        # 16 GPUs, TP 8, PP 2: stage 0 = server 0 (GPUs 0-7), stage 1 = server 1 (8-15), DP 1. Two micro-batches
        # (ga 2) of one row: 2 activations g -> g+8 and 2 gradients g+8 -> g per GPU pair = 32 flows of pp_comm
        # 1 MiB across the fabric, nothing else (no collectives). The report GPU 0 (stage 0) waits for the
        # gradients: a bubble, and exposed PP communication.
        header = TP8_HEADER.format(gpus=16).replace("pp: 1", "pp: 2").replace("ga: 1", "ga: 2") + " pp_comm: 1048576"
        self.write("workload.txt", header + "\n2\n" + "mb -1 50000 NONE 0 100000 NONE 0 0 NONE 0 0\n" * 2)
        sc = self.write("s.toml", scenario_text(16))
        p, out = self.run_wh(sc)
        self.assertIn("TP 8 DP 1 EP 1 PP 2 1F1B", p.stdout)
        lines = (out / "fct.txt").read_text().split()
        rows = [lines[i:i + 8] for i in range(0, len(lines), 8)]
        self.assertEqual(len(rows), 32)
        node = lambda ip: (int(ip, 16) >> 8) & 0xFFFF
        pairs = sorted((node(r[0]), node(r[1])) for r in rows)
        self.assertEqual(pairs, sorted(x for g in range(8) for x in [(g, g + 8)] * 2 + [(g + 8, g)] * 2))
        self.assertTrue(all(int(r[4]) == 1048576 for r in rows))
        with open(out / "end_to_end.csv") as f:
            e2e = list(csv.DictReader(f, skipinitialspace=True))[0]
        bubble = float(e2e["bubble time"].split()[0])
        exposed_pp = float(e2e["Expose_PP_comm"].split()[0])
        self.assertGreater(exposed_pp, 0)
        self.assertGreater(bubble, 100.0)  # at least one backward of stage 1 (100 us)
        # The per-GPU view splits the same way: GPU 0's gpus.csv row holds the summary's PP and bubble, its
        # exposed_us includes PP (the summary's total), and stage 0 (GPUs 0-7: compute 2 x 150 us, nothing
        # but pipeline waits) finishes at compute + exposed + bubble exactly.
        with open(out / "gpus.csv") as f:
            gpus = list(csv.DictReader(f))
        self.assertEqual(len(gpus), 16)
        g0 = gpus[0]
        self.assertEqual((float(g0["exposed_pp_us"]), float(g0["bubble_us"])), (exposed_pp, bubble))
        self.assertEqual(float(g0["exposed_us"]), float(e2e["total exposed comm"].split()[0]))
        for g in gpus:
            parts = sum(round(float(g[c]) * 1000) for c in ("exposed_tp_us", "exposed_dp_us", "exposed_ep_us",
                                                             "exposed_dp_ep_us", "exposed_pp_us"))
            self.assertEqual(round(float(g["exposed_us"]) * 1000), parts, g)
            self.assertGreater(float(g["exposed_pp_us"]), 0, g)
        for g in gpus[:8]:
            self.assertEqual(g["compute_us"], "300.000")
            ns = sum(round(float(g[c]) * 1000) for c in ("compute_us", "exposed_us", "bubble_us", "update_us"))
            self.assertLessEqual(abs(round(float(g["finish_us"]) * 1000) - ns), 2, g)  # each column truncated
        slowest = max(range(16), key=lambda i: (round(float(gpus[i]["exposed_us"]) * 1000), -i))
        self.assertRegex(p.stdout, rf"slowest GPU {slowest}( \(the GPU above\))?: compute 300\.000 us; exposed "
                         rf"communication {gpus[slowest]['exposed_us']} us \(TP 0\.000, DP 0\.000, EP 0\.000, "
                         rf"DP_EP 0\.000, PP {gpus[slowest]['exposed_pp_us']}\); pipeline bubble "
                         rf"{gpus[slowest]['bubble_us']} us; ")
        with h5py.File(out / "results.h5") as f:
            w = f["/workload"]
            self.assertEqual(int(w.attrs["slowest_gpu"]), slowest)
            hg = w["gpus"][:]
            self.assertEqual(int(hg["exposed_pp_ps"][0]), int(w.attrs["exposed_pp_ps"]))
            self.assertEqual(int(hg["bubble_ps"][0]), int(w.attrs["bubble_ps"]))
            self.assertEqual(int(hg["exposed_ps"][0]), int(w.attrs["total_exposed_ps"]))
            pp_slowest, bubble_slowest = int(hg["exposed_pp_ps"][slowest]), int(hg["bubble_ps"][slowest])
        # plot-runs stacks the same figures: PP among the groups, the bubble beside them.
        a = subprocess.run([sys.executable, str(SOURCE_DIR / "scripts" / "wh_analyze.py"), "plot-runs",
                            str(out / "results.h5"), "-o", str(self.dir / "runs.png"), "--json"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(a.returncode, 0, a.stderr)
        run = json.loads(a.stdout)["runs"][0]
        self.assertEqual((run["slowest_gpu"], run["slowest"]["pp"], run["slowest_bubble_ps"]),
                         (slowest, pp_slowest, bubble_slowest))
        self.assertEqual((run["report"]["pp"] // 1000, run["report_bubble_ps"] // 1000),  # the CSV: whole ns
                         (round(exposed_pp * 1e3), round(bubble * 1e3)))
        with open(out / "collectives.csv") as f:
            coll = list(csv.DictReader(f))
        self.assertEqual(len(coll), 32)  # one row per transfer
        self.assertTrue(all(c["op"] == "SendRecv" and c["group"] == "PP" for c in coll))
        # The SimAI switch: PP taken as 1, no flows at all (DP 2 has nothing to send here).
        p, out = self.run_wh(sc, "--set", "workload.pipeline=none")
        self.assertEqual((out / "fct.txt").read_text(), "")

    def test_workload_topology_mismatches(self):
        cases = [
            (TP8_HEADER.format(gpus=16).replace("group: 8", "group: 3"), "TP"),
            (TP8_HEADER.format(gpus=16).replace("pp: 1", "pp: 3"), "not divisible by PP 3"),
            # PP 2 with ga 3 but one row: no row name occurs 3 times -> refused before any output
            (TP8_HEADER.format(gpus=16).replace("pp: 1", "pp: 2").replace("ga: 1", "ga: 3") + " pp_comm: 1024",
             "cannot find the workload's 3 micro-batches"),
        ]
        for header, msg in cases:
            with self.subTest(msg=msg):
                wl = self.write("workload.txt", header + "\n1\nar -1 1 ALLREDUCE 1048576 1 NONE 0 1 NONE 0 1\n")
                sc = self.write("s.toml", scenario_text(16))
                p, out = self.run_wh(sc, expect=2)
                self.assertIn(f"{wl}:1:", p.stderr)
                self.assertIn(msg, p.stderr)
                self.assertFalse(out.exists(), "nothing is written for bad input")

    def test_written_topology_round_trip(self):
        # 16 GPUs + 2 NVSwitches + 8 leaves + 2 spines = 28 nodes; 16 NVLink + 16 NIC + 8 x 2 leaf-spine
        # = 48 links. A generated fabric written out (SimAI format) and read back as a file gives the same run;
        # write_format = "hpcc" writes the 3-token topology.txt header.
        self.write("workload.txt", TP8_HEADER.format(gpus=16) + "\n1\nar -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 4194304 1\n")
        sc = self.write("s.toml", scenario_text(16).replace("spines = 2", "spines = 2\nwrite = \"topo.txt\""))
        _, out = self.run_wh(sc)
        first = (out / "fct.txt").read_text()
        self.assertEqual((out / "topo.txt").read_text().split("\n")[0], "28 8 2 10 48 H100")
        topo = self.dir / "topo.txt"
        shutil.copy(out / "topo.txt", topo)
        shutil.rmtree(out)
        sc2 = self.write("s2.toml", scenario_text(16).replace('generator = "spectrum-x"\ngpus = 16\nspines = 2',
                                                              f'file = "{topo}"\nwrite = "again.txt"\n'
                                                              'write_format = "hpcc"'))
        _, out = self.run_wh(sc2)
        self.assertEqual((out / "fct.txt").read_text(), first)
        self.assertGreater(len(first), 0)
        self.assertEqual((out / "again.txt").read_text().split("\n")[0], "28 12 48")

    def test_bad_scenario_names_file_and_line(self):
        sc = self.write("s.toml", scenario_text(16).replace("gpus = 16", "gpus = 16\nnic_rat = \"400Gbps\""))
        self.write("workload.txt", TP8_HEADER.format(gpus=16) + "\n1\nar -1 1 NONE 0 1 NONE 0 1 NONE 0 1\n")
        p, out = self.run_wh(sc, expect=2)
        self.assertIn(f"{sc}:5:", p.stderr)
        self.assertIn("nic_rate", p.stderr)
        self.assertFalse(out.exists())

    def test_moe_scenario_outputs_agree(self):
        # The shipped MoE scenario (TP 4, EP 4, 32 GPUs): flows, collectives and times must agree
        # across the HDF5 tables and the CSVs.
        scenario = SOURCE_DIR / "inputs" / "llm" / "moe-32g.toml"
        p, out = self.run_wh(scenario)
        with h5py.File(out / "results.h5") as f:
            w = f["/workload"]
            coll = w["collectives"][:]
            flows = f["/flows"][:]
            self.assertEqual(int(w.attrs["complete"]), 1)
            self.assertEqual((int(w.attrs["tp"]), int(w.attrs["ep"]), int(w.attrs["dp"])), (4, 4, 8))
            self.assertEqual(int(coll["flows"].sum()), len(flows))
            self.assertEqual(int(coll["flow_bytes"].sum()), int(flows["size_bytes"].sum()))
            # Every flow finished, and the iteration ends after the last flow (update delays follow).
            self.assertTrue((flows["finished"] == 1).all())
            end = int(w["iterations"][0]["end_ps"])
            self.assertGreaterEqual(end, int(flows["finish_ns"].max()) * 1000)
            self.assertEqual(end, int(w.attrs["total_time_ps"]))
            # EP AllToAll among 4 ranks: 4 x 3 direct flows of S / 4 bytes.
            a2a = coll[(coll["op"] == b"AllToAll") & (coll["group"] == b"EP")]
            self.assertGreater(len(a2a), 0)
            self.assertTrue((a2a["flows"] == 12).all())
            self.assertTrue((a2a["flow_bytes"] == 12 * (a2a["bytes"] // 4)).all())
            # DP_EP groups: DP 8 / EP 4 = 2 ranks, one ring of 2 steps for the AllGather.
            dpep = coll[coll["group"] == b"DP_EP"]
            self.assertGreater(len(dpep), 0)
            self.assertTrue((dpep["ranks"] == 2).all())
            exposed = sum(int(w.attrs[k]) for k in ("exposed_tp_ps", "exposed_dp_ps", "exposed_ep_ps", "exposed_dp_ep_ps"))
            self.assertEqual(exposed, int(w.attrs["total_exposed_ps"]))
            # Every flow tagged with its collective: its ends are the collective's GPUs, its bytes sum to it.
            tags = w["flows"][:]
            self.assertEqual(list(tags["flow"]), list(range(len(flows))))
            self.assertTrue((tags["src_gpu"] == flows["src"]).all() and (tags["dst_gpu"] == flows["dst"]).all())
            self.assertTrue((tags["iteration"] == coll["iteration"][tags["collective"]]).all())
            self.assertTrue((tags["group"] == coll["group"][tags["collective"]]).all())
            per = np.bincount(tags["collective"], weights=flows["size_bytes"], minlength=len(coll))
            self.assertTrue((per == coll["flow_bytes"]).all())
            # A ring's steps: TP AllReduce over 4 ranks, 2 × 3 steps.
            tp_ar = tags[(tags["group"] == b"TP") & (coll["op"][tags["collective"]] == b"AllReduce")]
            self.assertEqual(sorted(set(int(x) for x in tp_ar["step"])), list(range(6)))
            # By link class: a flow goes over NVLink or out of its NIC; TP groups stay inside a server.
            self.assertTrue((coll["nvlink_bytes"] + coll["nic_bytes"] == coll["flow_bytes"]).all())
            tp = coll[coll["group"] == b"TP"]
            self.assertTrue((tp["nvlink_bytes"] == tp["flow_bytes"]).all() and (tp["fabric_hop_bytes"] == 0).all())
            self.assertGreater(int(coll["nic_bytes"].sum()), 0)
            # Per GPU: the report GPU's row is the EndToEnd view; every GPU computes alike; compute + exposed +
            # update is at most its finish (the rest: waiting for other GPUs), the finish at most the total.
            gpus = w["gpus"][:]
            self.assertEqual(len(gpus), 32)
            g0 = gpus[int(w.attrs["report_gpu"])]
            self.assertEqual(int(g0["exposed_ps"]), int(w.attrs["total_exposed_ps"]))
            self.assertEqual(int(g0["compute_ps"]), int(w.attrs["total_compute_ps"]))
            self.assertTrue((gpus["compute_ps"] == g0["compute_ps"]).all())
            busy = gpus["compute_ps"] + gpus["exposed_ps"] + gpus["update_ps"]
            self.assertTrue((busy <= gpus["finish_ps"]).all() and (gpus["finish_ps"] <= end).all())
            # The run record: every scenario key, the generator's defaults included, and the fabric by role.
            sc = dict(f["run/scenario"].asstr()[:].tolist())
            self.assertEqual((sc["topology.generator"], sc["topology.gpus"], sc["topology.nic_rate"]),
                             ("spectrum-x", "32", "400Gbps"))
            self.assertEqual((sc["topology.spines"], sc["topology.nvlink_rate"], sc["topology.nvlink_delay"]),
                             ("64", "2880Gbps", "25000ps"))  # the generator's defaults
            self.assertEqual((sc["workload.iterations"], sc["workload.send_latency"]), ("1", "6000000ps"))
            roles = f["topology/nodes"]["role"].astype(str)
            self.assertEqual([int((roles == r).sum()) for r in ("host", "nvswitch", "switch")], [32, 4, 72])
            kinds = f["topology/links"]["kind"].astype(str)
            self.assertEqual(int((kinds == "nvlink").sum()), 32)
            self.assertEqual(f["run"].attrs["cc"], "DCQCN (CC_MODE 1)")
            slowest = int(w.attrs["slowest_gpu"])
            self.assertEqual(slowest, int(np.argmax(gpus["exposed_ps"])))
            self.assertEqual(int(gpus["finish_ps"].max()), end)
        self.assertRegex(p.stdout, rf"slowest GPU {slowest}( \(the GPU above\))?: compute 137078\.497 us")
        with open(out / "end_to_end.csv") as f:
            row = next(csv.DictReader(f))
        self.assertAlmostEqual(float(row["Total time"]), end / 1e6, places=2)

    def test_ignored_group_sends_nothing(self):
        # ignore_groups = ["TP"]: every TP collective completes at issue; the other groups' flows are
        # exactly those of the full run's non-TP collectives, and no time is exposed to TP.
        scenario = SOURCE_DIR / "inputs" / "llm" / "moe-32g.toml"
        _, out = self.run_wh(scenario, "-q")
        with h5py.File(out / "results.h5") as f:
            coll = f["/workload"]["collectives"][:]
            non_tp = coll[coll["group"] != b"TP"]
            expected = (int(non_tp["flows"].sum()), int(non_tp["flow_bytes"].sum()))
            self.assertGreater(int(coll[coll["group"] == b"TP"]["flows"].sum()), 0)
        _, out = self.run_wh(scenario, "-q", "--set", 'workload.ignore_groups=["TP"]')
        with h5py.File(out / "results.h5") as f:
            w = f["/workload"]
            flows = f["/flows"][:]
            self.assertEqual((len(flows), int(flows["size_bytes"].sum())), expected)
            self.assertEqual(int(w.attrs["exposed_tp_ps"]), 0)
            self.assertFalse((w["collectives"][:]["group"] == b"TP").any())
        p, _ = self.run_wh(scenario, "-q", "--set", 'workload.ignore_groups=["XP"]', expect=2)
        self.assertIn('"XP" is not a communication group', p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
