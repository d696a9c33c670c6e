#!/usr/bin/python3
"""End-to-end tests of `wormhole partition` (METIS cuts of a scenario's network over MPI ranks; the distributed
run itself: test_distributed.py). Environment as test_refruns.py."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from test_refruns import REFRUNS, SOURCE_DIR, WORMHOLE

RING = REFRUNS / "hpcc-ring16-fattree-k4-1MB"


def wh(*args, env=None, cwd=None):
    return subprocess.run([str(WORMHOLE), *map(str, args)], capture_output=True, text=True, timeout=120, env=env,
                          cwd=cwd)


def read_map(path):
    return [int(line.split()[1]) for line in Path(path).read_text().splitlines()]


class Partition(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="wh_e2e_partition_"))

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_fat_tree_over_2_3_4_ranks_is_deterministic(self):
        # 16 hosts and 20 switches of a k = 4 fat tree, every link 1 µs: the lookahead is 1 µs whatever the cut;
        # the same input gives the same map every time.
        for n in (2, 3, 4):
            with self.subTest(ranks=n):
                maps = []
                for k in range(2):
                    p = wh("partition", RING / "config_dcqcn.txt", "-n", n, "--map", self.dir / f"m{n}-{k}.txt")
                    self.assertEqual(p.returncode, 0, p.stderr)
                    maps.append(read_map(self.dir / f"m{n}-{k}.txt"))
                self.assertEqual(maps[0], maps[1])
                self.assertEqual(len(maps[0]), 36)
                self.assertEqual(sorted(set(maps[0])), list(range(n)))
                self.assertIn(f"{n} ranks", p.stdout)
                self.assertIn("lookahead 1000 ns", p.stdout)
                self.assertIn("bytes of the 16 flows", p.stdout)
                # per-rank lines add up to the network
                nodes = sum(int(x) for x in re.findall(r"rank \d+: (\d+) nodes", p.stdout))
                flows = sum(int(x) for x in re.findall(r"(\d+) flows sent", p.stdout))
                self.assertEqual((nodes, flows), (36, 16))

    def test_the_cut_link_with_the_smallest_delay_sets_the_lookahead(self):
        # Two switches with four hosts each; the switch-to-switch link (50 ns) is the only sensible cut for two
        # ranks: the lookahead is its delay, with a warning that it is tiny; the hosts' 1-µs links stay whole.
        topo = ["10 2 9", "8 9"] + [f"{h} 8 100Gbps 0.001ms 0" for h in range(4)] + \
               [f"{h} 9 100Gbps 0.001ms 0" for h in range(4, 8)] + ["8 9 100Gbps 0.00005ms 0"]
        (self.dir / "topology.txt").write_text("\n".join(topo) + "\n")
        (self.dir / "flow.txt").write_text("4\n" + "".join(f"{h} {h + 4} 3 100 1000000 2.0\n" for h in range(4)))
        shutil.copy2(RING / "config_dcqcn.txt", self.dir / "config.txt")
        p = wh("partition", self.dir / "config.txt", "-n", 2, "--map", self.dir / "m.txt", "--set", "ERROR_RATE_PER_LINK=0")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("1 cut link,", p.stdout)
        self.assertIn("lookahead 50 ns", p.stdout)
        self.assertIn("WARNING: lookahead below 100 ns", p.stdout)
        m = read_map(self.dir / "m.txt")
        self.assertEqual(len({m[h] for h in (0, 1, 2, 3, 8)}), 1)
        self.assertEqual(len({m[h] for h in (4, 5, 6, 7, 9)}), 1)
        self.assertNotEqual(m[0], m[4])

    def test_servers_are_never_split(self):
        # 16 GPUs in two servers of 8, each with two NVSwitches (nvswitches_per_server = 2), on a generated
        # rail-optimised fabric: over 2, 3 and 4 ranks each server's GPUs and both its NVSwitches stay on one
        # rank — also with the linear split, which knows nothing of traffic and keeps them together only
        # because they are one group. SimAI numbering: GPUs 0-15, then the NVSwitches, two per server.
        scenario = self.dir / "s.toml"
        src = (SOURCE_DIR / "inputs" / "llm" / "micro-allreduce-16g.toml").read_text()
        scenario.write_text(src.replace('gpu_type = "A100"', 'gpu_type = "A100"\nnvswitches_per_server = 2')
                               .replace('file = "microAllReduce_16g.txt"',
                                        f'file = "{SOURCE_DIR / "inputs" / "llm" / "microAllReduce_16g.txt"}"')
                               .replace('config = "SimAI.conf"', f'config = "{SOURCE_DIR / "inputs" / "llm" / "SimAI.conf"}"'))
        for extra in ([], ["--linear"]):
            for n in (2, 3, 4):
                with self.subTest(ranks=n, linear=bool(extra)):
                    p = wh("partition", scenario, "-n", n, "--map", self.dir / "m.txt", *extra)
                    self.assertEqual(p.returncode, 0, p.stderr)
                    self.assertIn("link weights: bytes of one iteration", p.stdout)  # the workload's traffic
                    # per rank, the pairs of that traffic its GPUs send (not flows: they are summed per pair)
                    pairs = int(re.search(r"\((\d+) source-destination pairs, spread over their ECMP paths\) routed", p.stdout).group(1))
                    per_rank = re.findall(r"(\d+) source-destination pairs of its expected traffic", p.stdout)
                    self.assertEqual((len(per_rank), sum(map(int, per_rank))), (n, pairs), p.stdout)
                    self.assertNotIn("flows sent", p.stdout)
                    m = read_map(self.dir / "m.txt")
                    for server in range(2):
                        nodes = list(range(8 * server, 8 * server + 8)) + [16 + 2 * server, 17 + 2 * server]
                        self.assertEqual(len({m[g] for g in nodes}), 1, p.stdout)

    def test_bad_rank_counts(self):
        # More ranks than the ring's 36 nodes: one node each, the other 64 idle.
        p = wh("partition", RING / "config_dcqcn.txt", "-n", 100, "--map", self.dir / "m100.txt")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("100 ranks, 64 idle ranks (more ranks than nodes to own)", p.stdout)
        self.assertEqual(sorted(read_map(self.dir / "m100.txt")), list(range(36)))
        p = wh("partition", RING / "config_dcqcn.txt", "-n", 0)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("give at least 1 rank", p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
