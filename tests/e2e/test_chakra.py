#!/usr/bin/python3
"""End-to-end tests of Chakra execution traces (docs/workloads.md §8): SimAI workloads converted by
scripts/simai_to_chakra.py run with the same flows (fct.txt byte for byte) and iteration time as the SimAI
files; node types and collectives wormhole does not run are clear errors; a .et given as the scenario is
named for what it is. Environment as test_refruns.py (WORMHOLE, WH_TEST_DATA, WH_SOURCE_DIR)."""
import csv
import importlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

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


def scenario(gpus, workload_lines):
    return f"""[topology]
generator = "spectrum-x"
gpus = {gpus}
spines = 2
[workload]
{workload_lines}
send_latency = "2us"
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
        return simai

    def test_converted_workload_gives_the_same_flows_and_iteration_time(self):
        (self.dir / "w.txt").write_text(SMALL)
        simai = self.same_run(self.dir / "w.txt", 16)
        self.assertIn("0,0.000,414.755,414.755,1", (simai / "iterations.csv").read_text())  # as test_jobs.py's job alone

    def test_converted_moe_workload_with_ep_all_to_all(self):
        # workload_ep_test: TP 4, EP 4 on 32 GPUs, EP AllToAlls and ECN marks: still byte-identical.
        self.same_run(TEST_DATA / "simai" / "SimAI@pr288" / "example" / "workload_ep_test.txt", 32)

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
        # Compute only: two ranks of one 5-us node each: the iteration is 5 us.
        p, out = self.run_wh("comp", scenario(16, f'chakra = "{prefix}"'))
        self.assertIn("iteration 0: 5.000 us", p.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
