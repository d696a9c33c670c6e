#!/usr/bin/python3
"""End-to-end tests of Chakra execution traces (docs/workloads.md §8): SimAI workloads converted by
scripts/simai_to_chakra.py run with the same flows (fct.txt byte for byte) and iteration time as the SimAI
files; node types and collectives wormhole does not run are clear errors; a .et given as the scenario is
named for what it is. Environment as test_refruns.py (WORMHOLE, WH_TEST_DATA, WH_SOURCE_DIR)."""
import csv
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import h5py

from test_workload import run_toml

SOURCE_DIR = Path(os.environ.get("WH_SOURCE_DIR", Path(__file__).resolve().parents[2]))
TEST_DATA = Path(os.environ.get("WH_TEST_DATA", SOURCE_DIR / "tests" / "data"))
WORMHOLE = Path(os.environ.get("WORMHOLE", SOURCE_DIR / "build" / "wormhole"))
CONVERTER = SOURCE_DIR / "scripts" / "simai_to_chakra.py"
PROTO = SOURCE_DIR / "src" / "workload" / "chakra" / "et_def.proto"

# TP 8 x DP 2 on 16 GPUs: a fwd TP AllReduce, an ig TP AllReduce, two wg DP AllReduces (update 1 ns each).
SMALL = """HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 16
2
a -1 1000 ALLREDUCE 1048576 1000 NONE 0 1000 ALLREDUCE 8388608 1
b -1 1000 NONE 0 1000 ALLREDUCE 1048576 1000 ALLREDUCE 8388608 1
"""


def scenario(gpus, workload_lines, send_latency="2us"):
    return f"""[topology]
generator = "spectrum-x"
gpus = {gpus}
spines = 2
[workload]
{workload_lines}
send_latency = "{send_latency}"
[network]
config = "{SOURCE_DIR / 'inputs' / 'llm' / 'SimAI.conf'}"
"""


class Chakra(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="wh_e2e_chakra_"))

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def run_wh(self, name, text, expect=0):
        return run_toml(self, self.dir, name, text, expect)

    def convert(self, workload, gpus):
        prefix = self.dir / "traces" / "t"
        p = subprocess.run(["/usr/bin/python3", str(CONVERTER), str(workload), "--gpus", str(gpus), "--gpus-per-server", "8",
                            "-o", str(prefix)], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertTrue((self.dir / "traces" / f"t.{gpus - 1}.et").exists())
        return prefix

    def same_run(self, workload, gpus):
        prefix = self.convert(workload, gpus)
        _, simai = self.run_wh("simai", scenario(gpus, f'file = "{workload}"'))
        p, chakra = self.run_wh("chakra", scenario(gpus, f'chakra = "{prefix}"\ncomm_groups = "{prefix}.comm_groups.json"'))
        self.assertIn(f"({gpus} ranks)", p.stdout)
        self.assertEqual((simai / "fct.txt").read_bytes(), (chakra / "fct.txt").read_bytes())
        self.assertEqual((simai / "iterations.csv").read_text(), (chakra / "iterations.csv").read_text())
        with open(simai / "collectives.csv") as a, open(chakra / "collectives.csv") as b:
            ca, cb = list(csv.DictReader(a)), list(csv.DictReader(b))
        self.assertEqual(len(ca), len(cb))
        # The same flows over the same links: the link-class bytes add up alike, collective by collective.
        key = lambda c: (c["op"], c["group_first"], c["ranks"], c["bytes"], c["start_us"])  # noqa: E731
        link = ("nvlink_bytes", "nic_bytes", "fabric_hop_bytes")
        self.assertEqual(sorted((key(c), [c[k] for k in link]) for c in ca),
                         sorted((key(c), [c[k] for k in link]) for c in cb))
        self.assertGreater(sum(int(c["nvlink_bytes"]) + int(c["nic_bytes"]) for c in cb), 0)
        # Exposed communication of a trace is ASTRA-sim's figure, one total per GPU: finish - GPU compute
        # (here: the SimAI run's blocked time plus its update delays and waits, since both run alike).
        self.assertIn("(finish - GPU compute, as ASTRA-sim; not split by group)", p.stdout)
        self.assertIn("slowest GPU", p.stdout)
        with open(chakra / "end_to_end.csv") as f:
            e2e = list(csv.DictReader(f))[0]
        self.assertEqual(e2e["Expose TP comm"], "")
        with open(simai / "end_to_end.csv") as f:
            self.assertEqual(e2e["total comp"], list(csv.DictReader(f))[0]["total comp"])
        with open(simai / "gpus.csv") as a, open(chakra / "gpus.csv") as b:
            ga, gb = list(csv.DictReader(a)), list(csv.DictReader(b))
        self.assertEqual(len(gb), gpus)
        total = float((chakra / "iterations.csv").read_text().splitlines()[1].split(",")[2])
        for x, y in zip(ga, gb):
            self.assertEqual(y["compute_us"], x["compute_us"])  # every GPU compute node, as the SimAI rows
            self.assertEqual((y["finish_us"], y["bubble_us"], y["exposed_tp_us"]), (x["finish_us"], "", ""))
            self.assertAlmostEqual(float(y["exposed_us"]), float(x["finish_us"]) - float(x["compute_us"]), delta=0.0011)
            self.assertGreaterEqual(float(y["exposed_us"]), float(x["exposed_us"]))
            self.assertLessEqual(float(y["finish_us"]), total)
        self.assertEqual(e2e["total exposed comm"].split()[0], gb[0]["exposed_us"])
        slowest = int(re.search(r"slowest GPU (\d+)", p.stdout).group(1))
        self.assertEqual(float(gb[slowest]["exposed_us"]), max(float(y["exposed_us"]) for y in gb))
        # Every flow's collective, ring and step in /workload/flows, as the SimAI run lists them (the trace's
        # once had none).
        with h5py.File(simai / "results.h5") as a, h5py.File(chakra / "results.h5") as b:
            ta, tb = a["/workload/flows"][:], b["/workload/flows"][:]
            self.assertEqual(len(tb), len(b["/flows"]))
            cols = ("flow", "ring", "step", "src_gpu", "dst_gpu")
            self.assertEqual(sorted(zip(*(ta[c] for c in cols))), sorted(zip(*(tb[c] for c in cols))))
            names = [c["op"] for c in cb]
            self.assertEqual(sorted(names[i] for i in tb["collective"]), sorted(c["op"] for c in (ca[i] for i in ta["collective"])))
        return simai

    def test_converted_workload_gives_the_same_flows_and_iteration_time(self):
        (self.dir / "w.txt").write_text(SMALL)
        simai = self.same_run(self.dir / "w.txt", 16)
        self.assertIn("0,0.000,414.755,414.755,1", (simai / "iterations.csv").read_text())  # as test_jobs.py's job alone

    def test_converted_moe_workload_with_ep_all_to_all(self):
        # workload_ep_test: TP 4, EP 4 on 32 GPUs, EP AllToAlls and ECN marks: still byte-identical.
        self.same_run(TEST_DATA / "simai" / "SimAI@pr288" / "example" / "workload_ep_test.txt", 32)

    def test_the_converter_checks_its_input_and_leaves_no_stale_ranks(self):
        # Groups that do not tile the GPUs would name ranks without a trace: refused as wormhole refuses the
        # SimAI file, at line 1. A missing file is named. Converting fewer GPUs to the same prefix removes the
        # earlier conversion's higher ranks, which wormhole would read too.
        conv = lambda w, gpus: subprocess.run(  # noqa: E731
            ["/usr/bin/python3", str(CONVERTER), str(w), "--gpus", str(gpus), "--gpus-per-server", "8",
             "-o", str(self.dir / "c" / "t")], capture_output=True, text=True, timeout=120)
        ep = SOURCE_DIR / "inputs" / "llm" / "workload_ep_test.txt"  # TP 4, EP 4
        p = conv(ep, 8)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("workload_ep_test.txt:1: EP 4 not dividing DP 2 (DP = GPUs 8 / TP 4) (fix: use an ep: that divides 2",
                      p.stderr)
        self.assertFalse((self.dir / "c" / "t.0.et").exists())
        p = conv(ep, 30)
        self.assertIn("--gpus 30 is not a whole number of 8-GPU servers", p.stderr)
        (self.dir / "neg.txt").write_text(ep.read_text().replace("ep: 4", "ep: -4"))
        self.assertIn("neg.txt:1: TP 4 or EP -4 is negative", conv(self.dir / "neg.txt", 32).stderr)
        # A pipeline is not converted: said, as the all_gpus mismatch is.
        (self.dir / "pp.txt").write_text(SMALL.replace("pp: 1", "pp: 2"))
        p = conv(self.dir / "pp.txt", 16)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("pp.txt:1: note: pp 2 is taken as 1: the traces hold no pipeline stages or transfers", p.stderr)
        p = conv(self.dir / "none.txt", 32)
        self.assertIn("none.txt: cannot read the workload (No such file or directory)", p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        self.assertEqual(conv(ep, 64).returncode, 0)
        p = conv(ep, 32)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("removed 32 traces of an earlier conversion", p.stdout)
        self.assertEqual(len(list((self.dir / "c").glob("t.*.et"))), 32)

    def write_trace(self, nodes):
        """Rank 0 and 1 traces with the given nodes (dicts) via the schema compiled here."""
        out = self.dir / "pb"
        out.mkdir(exist_ok=True)
        subprocess.run(["protoc", f"-I{PROTO.parent}", f"--python_out={out}", PROTO.name], check=True)
        sys.path.insert(0, str(out))
        pb = importlib.import_module("et_def_pb2")
        for r in range(2):
            with open(self.dir / f"bad.{r}.et", "wb") as f:
                for msg in [pb.GlobalMetadata(version="0.0.4")] + [pb.Node(**n(pb)) for n in nodes]:
                    data = msg.SerializeToString()
                    f.write(bytes([len(data)]) if len(data) < 128 else bytes([len(data) & 0x7F | 0x80, len(data) >> 7]))
                    f.write(data)
        return self.dir / "bad"

    def test_unsupported_nodes_are_clear_errors(self):
        cases = [
            (lambda pb: dict(id=1, name="load", type=pb.MEM_LOAD_NODE), "node 1 (load): node type MEM_LOAD_NODE is not supported"),
            (lambda pb: dict(id=2, name="bc", type=pb.COMM_COLL_NODE,
                             attr=[pb.AttributeProto(name="comm_type", int64_val=pb.BROADCAST),
                                   pb.AttributeProto(name="comm_size", int64_val=1024)]),
             "node 2 (bc): collective BROADCAST is not supported"),
            (lambda pb: dict(id=3, name="c", type=pb.COMP_NODE, ctrl_deps=[7]), "node 3 (c) depends on node 7"),
        ]
        for node, msg in cases:
            with self.subTest(msg=msg):
                prefix = self.write_trace([node])
                p, out = self.run_wh("bad", scenario(16, f'chakra = "{prefix}"'), expect=2)
                self.assertIn(msg, p.stderr)
                self.assertIn("bad.0.et", p.stderr)
                self.assertFalse(out.exists())
        # A trace given where a scenario belongs is named for what it is (it was read as a config file).
        prefix = self.write_trace([lambda pb: dict(id=1, name="c", type=pb.COMP_NODE, duration_micros=5)])
        p = subprocess.run([str(WORMHOLE), "run", f"{prefix}.0.et"], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("a Chakra execution trace is not a scenario or an HPCC config", p.stderr)
        self.assertNotIn("did you mean", p.stderr)
        # Iterations are refused where they are given: the file's line (it named the [workload] header), or
        # the command line (it named the file).
        p, out = self.run_wh("iters", scenario(16, f'chakra = "{prefix}"\niterations = 2'), expect=2)
        self.assertIn("iters.toml:7: workload.iterations: a Chakra trace runs once", p.stderr)
        (self.dir / "once.toml").write_text(scenario(16, f'chakra = "{prefix}"'))
        p = subprocess.run([str(WORMHOLE), "run", str(self.dir / "once.toml"), "-o", str(self.dir / "once"), "--set",
                            "workload.iterations=2"], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("command line: workload.iterations: a Chakra trace runs once", p.stderr)
        # A prefix with no traces: the error says what was looked for and against what a relative one is taken.
        p, out = self.run_wh("none", scenario(16, 'chakra = "nowhere/t"'), expect=2)
        self.assertIn('no Chakra trace "nowhere/t": looked for ' + str(self.dir / "nowhere" / "t.0.et"), p.stderr)
        self.assertIn("relative to the scenario's folder", p.stderr)
        self.assertFalse(out.exists())
        # Compute only: two ranks of one 5-us node each: the iteration is 5 us.
        p, out = self.run_wh("comp", scenario(16, f'chakra = "{prefix}"'))
        self.assertIn("iteration 0: 5.000 us", p.stdout)

    def test_a_missing_rank_or_a_group_beyond_the_ranks_is_an_input_error(self):
        # Traces are read from rank 0 up to the first missing file: a gap (rank 5's file deleted, rank 6's
        # there) and a group naming a rank without a trace are errors at set-up naming the file and what
        # to fix, with nothing written (a run of 5 ranks once stalled with "workload incomplete").
        (self.dir / "w.txt").write_text(SMALL)
        prefix = self.convert(self.dir / "w.txt", 16)
        trace = f'chakra = "{prefix}"\ncomm_groups = "{prefix}.comm_groups.json"'
        Path(f"{prefix}.5.et").unlink()
        p, out = self.run_wh("gap", scenario(16, trace), expect=2)
        self.assertIn("t.5.et: rank 5's trace is missing, though", p.stderr)
        self.assertIn("t.6.et exists", p.stderr)
        self.assertFalse(out.exists())
        for r in range(5, 16):
            Path(f"{prefix}.{r}.et").unlink(missing_ok=True)
        p, out = self.run_wh("groups", scenario(16, trace), expect=2)
        self.assertIn("t.comm_groups.json", p.stderr)
        self.assertRegex(p.stderr, r'group "TP0" \(of node \d+ of .*t\.0\.et\) holds rank 7, but the trace has 5 ranks')
        self.assertFalse(out.exists())

    def write_ranks(self, ranks, groups):
        """One trace per rank (`ranks`: per rank a list of (name, kind, deps, attrs) with kind "comp", "coll",
        "send"; node ids are list positions) and the groups file; returns the prefix."""
        out = self.dir / "pb"
        out.mkdir(exist_ok=True)
        subprocess.run(["protoc", f"-I{PROTO.parent}", f"--python_out={out}", PROTO.name], check=True)
        sys.path.insert(0, str(out))
        pb = importlib.import_module("et_def_pb2")
        prefix = self.dir / "hand" / "t"
        prefix.parent.mkdir(exist_ok=True)
        types = {"comp": pb.COMP_NODE, "coll": pb.COMM_COLL_NODE, "send": pb.COMM_SEND_NODE}
        for r, nodes in enumerate(ranks):
            with open(f"{prefix}.{r}.et", "wb") as f:
                msgs = [pb.GlobalMetadata(version="0.0.4")]
                for i, (name, kind, deps, attrs) in enumerate(nodes):
                    n = pb.Node(id=i, name=name, type=types[kind])
                    n.ctrl_deps.extend(deps)
                    for k, v in attrs.items():
                        n.attr.append(pb.AttributeProto(name=k, string_val=v) if isinstance(v, str)
                                      else pb.AttributeProto(name=k, int64_val=v))
                    msgs.append(n)
                for msg in msgs:
                    data = msg.SerializeToString()
                    f.write(bytes([len(data)]) if len(data) < 128 else bytes([len(data) & 0x7F | 0x80, len(data) >> 7]))
                    f.write(data)
        (self.dir / "hand" / "groups.json").write_text(json.dumps(groups))
        return prefix

    def packet_and_memo(self, ranks, groups, gpus, memo, name="", send_latency="2us"):
        """Writes the hand-made trace (write_ranks) and runs it in packet mode and with `memo` (a [wormhole]
        table); asserts the two runs' completions are alike (fct.txt sorted: flows ending at one ps may be
        listed in another order). Returns (the trace's [workload] lines, the memo run's process, the packet
        run's output folder, the memo run's, its collective memo attributes)."""
        prefix = self.write_ranks(ranks, groups)
        trace = f'chakra = "{prefix}"\ncomm_groups = "{prefix.parent / "groups.json"}"'
        _, pkt = self.run_wh(f"pkt{name}", scenario(gpus, trace, send_latency))
        p, wh = self.run_wh(f"wh{name}", scenario(gpus, trace, send_latency) + memo)
        self.assertEqual(sorted((pkt / "fct.txt").read_text().splitlines()), sorted((wh / "fct.txt").read_text().splitlines()))
        return trace, p, pkt, wh, self.memo_attrs(wh)

    def memo_attrs(self, out):
        with h5py.File(out / "results.h5") as f:
            return {k[len("collective_memo_"):]: int(v) for k, v in f["/wormhole"].attrs.items()
                    if k.startswith("collective_memo_")}

    def tp_rows(self, rows, gpus):
        """A SimAI workload of `rows` layers, TP 8 over `gpus` GPUs (two 1-MiB AllReduces a layer, 1 us of
        compute between them), written to w.txt and converted: the trace's [workload] lines and the
        collective memo's [wormhole] table."""
        text = (f"HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: {gpus}\n"
                + f"{rows}\n" + "".join(f"l{i} -1 1000 ALLREDUCE 1048576 1000 ALLREDUCE 1048576 1000 NONE 0 100\n"
                                         for i in range(rows)))
        (self.dir / "w.txt").write_text(text)
        prefix = self.convert(self.dir / "w.txt", gpus)
        return (f'chakra = "{prefix}"\ncomm_groups = "{prefix}.comm_groups.json"',
                "[wormhole]\nenabled = true\ncollective_memo = true\n")

    def test_collective_memo_replays_a_trace_as_packet_mode(self):
        # One 8-GPU server, TP 8: 24 AllReduces of 896 flows each on its NVSwitch, 1 us of compute between
        # them (test_collective_memo.py's first case, as a trace): 2 patterns simulated, 22 replayed, and
        # fct.txt is packet mode's byte for byte, as the SimAI file's run with the memo.
        trace, memo = self.tp_rows(12, 8)
        _, pkt = self.run_wh("pkt", scenario(8, trace))
        p, wh = self.run_wh("wh", scenario(8, trace) + memo)
        _, simai = self.run_wh("simai", scenario(8, f'file = "{self.dir / "w.txt"}"') + memo)
        self.assertEqual((pkt / "fct.txt").read_bytes(), (wh / "fct.txt").read_bytes())
        self.assertEqual((simai / "fct.txt").read_bytes(), (wh / "fct.txt").read_bytes())
        self.assertNotIn("collective memo is not used", p.stderr)
        a = self.memo_attrs(wh)
        self.assertEqual((a["considered"], a["recorded"], a["replayed"], a["replayed_flows"]), (24, 2, 22, 22 * 896))
        self.assertEqual((a["conflicts"], a["overlaps"], a["busy"]), (0, 0, 0))
        # The analysis script's summary says a trace's exposure is one total, as the run's own summary does
        # (it once listed zeros per group, as if nothing were exposed).
        p = subprocess.run(["/usr/bin/python3", str(SOURCE_DIR / "scripts" / "wh_analyze.py"), "summary",
                            str(wh / "results.h5")], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("8 GPUs, a Chakra trace; complete", p.stdout)
        self.assertRegex(p.stdout, r"exposed communication [0-9.]+ us \(finish - GPU compute, as ASTRA-sim; not split by group\)")
        self.assertNotIn("TP 0.000", p.stdout)

    def test_two_servers_follow_one_recording_from_a_trace(self):
        # Both servers' TP groups issue each new pattern at the same ps: one simulates it, the other follows
        # the recording as it runs (its end not known, the look-ahead does not search past the members' own
        # part: SimAI's rule), as from the SimAI file: the same counts, packet mode's completions.
        trace, memo = self.tp_rows(6, 16)
        _, pkt = self.run_wh("pkt", scenario(16, trace))
        _, wh = self.run_wh("wh", scenario(16, trace) + memo)
        _, simai = self.run_wh("simai", scenario(16, f'file = "{self.dir / "w.txt"}"') + memo)
        self.assertEqual(sorted((pkt / "fct.txt").read_text().splitlines()), sorted((wh / "fct.txt").read_text().splitlines()))
        a, b = self.memo_attrs(wh), self.memo_attrs(simai)
        self.assertEqual(a["considered"], 24)
        # 2 patterns (the first collective's, then the next ones'), each recorded on one server while the
        # other server follows it: 22 replayed, those 2 followers included.
        self.assertEqual((a["recorded"], a["replayed"], a["conflicts"], a["follow_failures"]), (2, 22, 0, 0))
        for k in ("recorded", "replayed", "overlaps", "conflicts", "follow_failures"):
            self.assertEqual(a[k], b[k], k)

    def test_a_follower_on_a_rail_leaf_sees_what_waits_for_its_members(self):
        # Two DP groups, GPUs 0 and 8 on rail leaf 0 and GPUs 1 and 9 on rail leaf 1, each an AllReduce, 1 us
        # of compute and a second AllReduce. Both groups issue each at the same ps: one leaf records, the
        # other could follow. On a rail leaf a follower's members are searched as the SimAI driver searches
        # them there (its own part taken to end now): the second AllReduce, which waits for the first, could
        # then come in its way, so the first is left to the network; the second, with nothing after it, follows.
        # (Its recording is not kept as a pattern: the first AllReduce's finished QPs are still listed at the
        # NICs when it ends. What is counted here does not depend on that.)
        ar = lambda g: {"comm_type": 0, "comm_size": 1 << 20, "pg_name": g}  # noqa: E731
        def member(g):
            return [("ar0", "coll", [], ar(g)), ("c0", "comp", [0], {"duration_nanos": 1000}), ("ar1", "coll", [1], ar(g))]
        idle = [("idle", "comp", [], {"duration_nanos": 1})]
        ranks = [member("dp0"), member("dp1")] + [idle] * 6 + [member("dp0"), member("dp1")] + [idle] * 6
        memo = "[wormhole]\nenabled = true\ncollective_memo = true\nfast_forward = false\n"
        _, p, _, _, a = self.packet_and_memo(ranks, {"dp0": [0, 8], "dp1": [1, 9]}, 16, memo)
        self.assertEqual((a["considered"], a["replayed"], a["overlaps"], a["conflicts"]), (4, 1, 1, 0), p.stdout)

    def test_two_groups_of_one_nvswitch_decided_together(self):
        # Two TP groups on one server's NVSwitch (GPUs 0-3, 4-7), each layer a TP AllReduce, 0.2 us of
        # compute and an all-to-all pairing GPU i with i + 4 over the NVSwitch. Both groups issue each
        # AllReduce at the same ps, by separate events. Decided one by one, the other group's AllReduce
        # is of unknown end, so its all-to-all could reach a member 0.2 us + the send latency later, within
        # the replay: every hit is left to the network. Decided together, each group's AllReduce is taken
        # to end as its pattern says, and the all-to-all comes after both replays: they are replayed, with
        # packet mode's completions.
        layers = 6
        def member(tp, ep):
            nodes = []
            for k in range(layers):
                dep = [len(nodes) - 1] if nodes else []
                nodes.append((f"tp{k}", "coll", dep, {"comm_type": 0, "comm_size": 1 << 20, "pg_name": tp}))
                nodes.append((f"c{k}", "comp", [len(nodes) - 1], {"duration_nanos": 200}))
                nodes.append((f"ep{k}", "coll", [len(nodes) - 1], {"comm_type": 6, "comm_size": 1 << 16, "pg_name": ep}))
                nodes.append((f"d{k}", "comp", [len(nodes) - 1], {"duration_nanos": 1000}))
            return nodes
        ranks = [member("tpa" if r < 4 else "tpb", f"ep{r % 4}") for r in range(8)]
        groups = {"tpa": [0, 1, 2, 3], "tpb": [4, 5, 6, 7], **{f"ep{i}": [i, i + 4] for i in range(4)}}
        memo = "[wormhole]\nenabled = true\ncollective_memo = true\nmemo = true\nfast_forward = false\n"
        trace, p, _, wh, a = self.packet_and_memo(ranks, groups, 8, memo)
        # 6 layers x (2 AllReduces + 4 all-to-alls); 8 patterns recorded (a group's first AllReduces and
        # all-to-alls meet islands in new states), the 28 others replayed (one by one: 4, and 24 overlaps).
        self.assertEqual((a["considered"], a["recorded"], a["replayed"], a["overlaps"], a["conflicts"]), (36, 8, 28, 0, 0))
        # In verify mode a hit may be simulated instead of replayed, so nothing is assumed: with the memo
        # file's completions doubled (a wrong pattern that takes longer than the truth), a verified
        # AllReduce ends long before its pattern says, and its group's all-to-all reaches the other group's
        # replay (it was: 8 conflicts). Decided alone, no replay meets it.
        with h5py.File(wh / "memo.h5", "r+") as f:
            flows = f["/collective_flows"][:]
            flows["finish_ps"] *= 2
            f["/collective_flows"][:] = flows
        (self.dir / "warm.toml").write_text(scenario(8, trace) + memo.replace("fast_forward", "verify = 0.5\nfast_forward"))
        p = subprocess.run([str(WORMHOLE), "run", str(self.dir / "warm.toml"), "-o", str(self.dir / "warm"),
                            "--memo", str(wh / "memo.h5")], capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        b = self.memo_attrs(self.dir / "warm")
        self.assertGreater(b["verify_failures"], 0)
        self.assertEqual(b["conflicts"], 0, p.stderr)

    def test_a_simulated_collective_ahead_of_traffic_counts_its_least_time(self):
        # As above, but the second group's AllReduce is 4 MiB and grows by 64 KiB a layer: never a pattern,
        # always simulated, its end not known when the first group's 1-MiB repeats are decided. Its flows
        # cannot end before the send latency and their bytes at the GPUs' port rate allow (the ring's steps,
        # what its members have still to send), so its group's all-to-all, which waits for it, comes after
        # the first group's replay: the repeats are replayed, with packet mode's completions and no conflict
        # (taking it to end at once, they met 'later traffic': replayed 0, overlaps 4). The first group's
        # first two AllReduces are recorded (the second meets its island in another state).
        layers = 6
        def member(tp, ep, grow):
            nodes = []
            for k in range(layers):
                dep = [len(nodes) - 1] if nodes else []
                size = (4 << 20) + k * (64 << 10) if grow else 1 << 20
                nodes.append((f"tp{k}", "coll", dep, {"comm_type": 0, "comm_size": size, "pg_name": tp}))
                nodes.append((f"c{k}", "comp", [len(nodes) - 1], {"duration_nanos": 200}))
                nodes.append((f"ep{k}", "coll", [len(nodes) - 1], {"comm_type": 6, "comm_size": 1 << 16, "pg_name": ep}))
                nodes.append((f"d{k}", "comp", [len(nodes) - 1], {"duration_nanos": 1000}))
            return nodes
        ranks = [member("tpa" if r < 4 else "tpb", f"ep{r % 4}", r >= 4) for r in range(8)]
        groups = {"tpa": [0, 1, 2, 3], "tpb": [4, 5, 6, 7], **{f"ep{i}": [i, i + 4] for i in range(4)}}
        memo = "[wormhole]\nenabled = true\ncollective_memo = true\nfast_forward = false\n"
        _, p, _, _, a = self.packet_and_memo(ranks, groups, 8, memo)
        self.assertEqual((a["considered"], a["recorded"]), (36, 2), p.stdout)
        self.assertEqual((a["replayed"], a["overlaps"], a["conflicts"]), (4, 0, 0), p.stdout)

    def test_a_flow_injected_at_the_decision_instant_is_not_read(self):
        # GPUs 0-3 issue a 1-MiB AllReduce every 50 us; GPUs 4 and 5 start a 4-MiB AllReduce 149.998 us in.
        # With a send latency of 2.001 us flows of the latter are handed to the network at the very ps at
        # which offers of the TP group are decided, after the decision's event was queued: the network gives
        # them their state after it. The look-ahead must not read a flow's progress then (it once did: "flow
        # 288 has no QP state", exit 1).
        ar = lambda g, size: {"comm_type": 0, "comm_size": size, "pg_name": g}  # noqa: E731
        member = [("b0", "coll", [], ar("tp", 1 << 20))]  # then one every 50 us: a chain of computes
        for k in range(1, 5):
            member.append((f"w{k}", "comp", [len(member) - 2] if k > 1 else [], {"duration_nanos": 50000}))
            member.append((f"b{k}", "coll", [len(member) - 1], ar("tp", 1 << 20)))
        other = [("wait", "comp", [], {"duration_nanos": 149998}), ("A", "coll", [0], ar("a", 4 << 20))]
        idle = [("idle", "comp", [], {"duration_nanos": 1})]
        memo = "[wormhole]\nenabled = true\ncollective_memo = true\nfast_forward = false\n"
        _, p, _, _, a = self.packet_and_memo([member] * 4 + [other] * 2 + [idle] * 2, {"tp": [0, 1, 2, 3], "a": [4, 5]},
                                             8, memo, send_latency="2001ps")
        self.assertEqual((a["considered"], a["replayed"], a["conflicts"]), (6, 3, 0), p.stdout)

    def test_a_collective_is_as_short_as_its_group_s_smallest_node_says(self):
        # GPU 5 issues a 1-KiB AllReduce with GPU 4 at once; GPU 4's node of it says 1 GiB, and after it GPU 4
        # sends 1 MiB to GPU 0, a member of the TP group next to them. The collective is planned from GPU 5's
        # node (the first to issue), so it is over in microseconds: the look-ahead must not take it to last
        # what GPU 4's node says (it once did: the send met the TP group's replay, 1 conflict, fct.txt off).
        def ranks(big):
            ar = {"comm_type": 0, "comm_size": 1 << 20, "pg_name": "tp"}
            member = [("ar0", "coll", [], ar), ("c0", "comp", [0], {"duration_nanos": 1000}),
                      ("ar1", "coll", [1], ar), ("c1", "comp", [2], {"duration_nanos": 1000}), ("ar2", "coll", [3], ar)]
            r4 = [("wait", "comp", [], {"duration_nanos": 38000}),
                  ("a", "coll", [0], {"comm_type": 0, "comm_size": big, "pg_name": "a"}),
                  ("send", "send", [1], {"comm_size": 1 << 20, "comm_dst": 0, "comm_tag": 7})]
            r5 = [("a", "coll", [], {"comm_type": 0, "comm_size": 1024, "pg_name": "a"})]
            return [member] * 4 + [r4, r5] + [[("idle", "comp", [], {"duration_nanos": 1})]] * 2
        memo = "[wormhole]\nenabled = true\ncollective_memo = true\nfast_forward = false\n"
        _, p, _, _, a = self.packet_and_memo(ranks(1 << 30), {"tp": [0, 1, 2, 3], "a": [4, 5]}, 8, memo)
        self.assertEqual((a["conflicts"], a["overlaps"]), (0, 1), p.stderr)

    def test_a_send_due_during_a_replay_keeps_the_collective_from_being_replayed(self):
        # GPUs 0-3 run three AllReduces on their share of one server's NVSwitch, 1 us of compute between;
        # GPU 4 (the same NVSwitch, no member) computes, then sends 1 MiB to GPU 0. A trace has no SimAI rule
        # that blocks it, so the memo replays a collective only where no such send can come before the
        # replay ends: the one the send lands in is simulated, and every completion is packet mode's.
        def ranks(send_after_ns):
            ar = {"comm_type": 0, "comm_size": 1 << 20, "pg_name": "tp"}  # ALL_REDUCE
            member = [("ar0", "coll", [], ar), ("c0", "comp", [0], {"duration_nanos": 1000}),
                      ("ar1", "coll", [1], ar), ("c1", "comp", [2], {"duration_nanos": 1000}),
                      ("ar2", "coll", [3], ar)]
            sender = [("wait", "comp", [], {"duration_nanos": send_after_ns}),
                      ("send", "send", [0], {"comm_size": 1 << 20, "comm_dst": 0, "comm_tag": 7})]
            idle = [("idle", "comp", [], {"duration_nanos": 1})]
            return [member] * 4 + [sender] + [idle] * 3
        memo = "[wormhole]\nenabled = true\ncollective_memo = true\nfast_forward = false\n"
        # First with the send long after: the last two collectives repeat the first one's pattern.
        _, _, pkt, _, a = self.packet_and_memo(ranks(10_000_000), {"tp": [0, 1, 2, 3]}, 8, memo, "_late")
        self.assertGreaterEqual(a["replayed"], 1)
        with open(pkt / "collectives.csv") as f:
            spans = [(float(c["start_us"]), float(c["end_us"])) for c in csv.DictReader(f) if c["op"] == "AllReduce"]
        self.assertEqual(len(spans), 3)
        with open(pkt / "collectives.csv") as f:  # the send is listed with the collectives, as a SimAI pipeline transfer
            sends = [c for c in csv.DictReader(f) if c["op"] == "SendRecv"]
        self.assertEqual([(c["group"], c["group_first"], c["ranks"], c["bytes"], c["flows"]) for c in sends],
                         [("P2P", "0", "2", str(1 << 20), "1")])
        # Now the send is due in the middle of the last collective that the run above replayed.
        middle_ns = int(1000 * (spans[2][0] + spans[2][1]) / 2)
        _, p, _, _, b = self.packet_and_memo(ranks(middle_ns), {"tp": [0, 1, 2, 3]}, 8, memo)
        self.assertEqual(b["conflicts"], 0, p.stderr)
        self.assertEqual(b["overlaps"], a["overlaps"] + 1)
        self.assertEqual(b["replayed"], a["replayed"] - 1)

    def test_a_send_readied_beside_the_last_issue_is_seen(self):
        # Each member in turn also sends 1 MiB to its neighbour, readied by the same compute's end as its
        # last AllReduce: when that member is the last to issue, the send is made ready after the collective
        # within one event, and the look-ahead must see it (it once ran before, missed it, and replayed the
        # collective as if the island were empty: a conflict, FCTs off packet mode's).
        ar = {"comm_type": 0, "comm_size": 1 << 20, "pg_name": "tp"}
        def member(send_to):
            m = [("ar0", "coll", [], ar), ("c0", "comp", [0], {"duration_nanos": 1000}),
                 ("ar1", "coll", [1], ar), ("c1", "comp", [2], {"duration_nanos": 1000}),
                 ("ar2", "coll", [3], ar)]
            if send_to is not None:
                m.append(("send", "send", [3], {"comm_size": 1 << 20, "comm_dst": send_to, "comm_tag": 7}))
            return m
        memo = "[wormhole]\nenabled = true\ncollective_memo = true\nfast_forward = false\n"
        for sender in range(4):
            with self.subTest(sender=sender):
                ranks = [member((r + 1) % 4 if r == sender else None) for r in range(4)]
                idle = [[("idle", "comp", [], {"duration_nanos": 1})]] * 4
                _, p, _, _, a = self.packet_and_memo(ranks + idle, {"tp": [0, 1, 2, 3]}, 8, memo, str(sender))
                self.assertEqual(a["conflicts"], 0, p.stderr)
                self.assertEqual(a["considered"], 3)
                self.assertEqual(a["replayed"], 0)  # the last one meets the send; the first two differ


if __name__ == "__main__":
    unittest.main(verbosity=2)
