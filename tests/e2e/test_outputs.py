#!/usr/bin/python3
"""End-to-end tests of what a run reports beyond the flows: the true ideal FCT and slowdown, the drop and
retransmission counters, the run record in results.h5 (docs/results.md) and the CC in the summary.
Environment as test_refruns.py (WORMHOLE, WH_TEST_DATA, WH_SOURCE_DIR)."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

import h5py
import numpy as np

SOURCE_DIR = Path(os.environ.get("WH_SOURCE_DIR", Path(__file__).resolve().parents[2]))
TEST_DATA = Path(os.environ.get("WH_TEST_DATA", SOURCE_DIR / "tests" / "data"))
WORMHOLE = Path(os.environ.get("WORMHOLE", SOURCE_DIR / "build" / "wormhole"))
RING_CONFIG = TEST_DATA / "refruns" / "hpcc-ring16-fattree-k4-1MB" / "config_dcqcn.txt"
CRASH_MARKERS = ("terminate called", "Segmentation fault", "Aborted", "core dumped", "what():")
SCENARIO = SOURCE_DIR / "inputs" / "llm" / "moe-32g.toml"


# host 0 – switch 2 – switch 3 – switch 4 – host 1: an idle 3-switch path, 100 Gb/s, 1 µs per link.
PATH3 = "5 3 4\n2 3 4\n0 2 100Gbps 0.001ms 0\n2 3 100Gbps 0.001ms 0\n3 4 100Gbps 0.001ms 0\n4 1 100Gbps 0.001ms 0\n"
SIZES = [1, 48, 999, 1000, 1001, 4000, 64000, 100000, 1000000, 4000000]


def config_text(**keys):
    """The ring's DCQCN config (run.py's settings) pointed at topology.txt / flow.txt here, with `keys` set."""
    lines = []
    for line in RING_CONFIG.read_text().splitlines():
        k = line.split()[0] if line.split() else ""
        if k in keys or k in ("TOPOLOGY_FILE", "FLOW_FILE", "TRACE_FILE", "TRACE_OUTPUT_FILE", "QLEN_MON_FILE",
                              "QLEN_MON_START", "QLEN_MON_END"):
            continue
        lines.append(line)
    lines += ["TOPOLOGY_FILE topology.txt", "FLOW_FILE flow.txt"] + [f"{k} {v}" for k, v in keys.items()]
    return "\n".join(lines) + "\n"


class Case(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="wh_e2e_outputs_"))

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def run_wh(self, *args, expect=0, timeout=300):
        p = subprocess.run([str(WORMHOLE), "run", *map(str, args)], capture_output=True, text=True, timeout=timeout,
                           cwd=self.dir)
        for m in CRASH_MARKERS:
            self.assertNotIn(m, p.stderr)
        self.assertEqual(p.returncode, expect, p.stdout + p.stderr)
        return p

    def write(self, name, text):
        (self.dir / name).write_text(text)
        return self.dir / name


class TrueIdealFct(Case):
    def test_single_flow_sweep_never_beats_its_ideal(self):
        # One flow at a time (10 ms apart) over an idle 3-switch path, sizes 1 B to 4 MB, each CC. The
        # reference's standalone FCT charges a full payload per hop and the payload's headers at the bottleneck
        # only, so a lone 1-B flow shows a slowdown of 0.965; the true ideal (docs/network-model.md §5.1) is a
        # lower bound: every slowdown >= 1, and DCQCN, which sends at line rate on an idle path, meets it
        # exactly but where a 49-B last packet waits 1 ns behind the previous packet's ACK at the receiver.
        self.write("topology.txt", PATH3)
        self.write("flow.txt", f"{len(SIZES)}\n" + "".join(f"0 1 3 100 {s} {2 + 0.01 * i:.6f}\n"
                                                          for i, s in enumerate(SIZES)))
        self.write("config.txt", config_text(RATE_AI="50Mb/s", RATE_HAI="100Mb/s"))
        for cc, extra in (("dcqcn", []), ("hpcc", ["--set", "HAS_WIN=1", "--set", "VAR_WIN=1"]), ("timely", []),
                          ("dctcp", []), ("hpcc-pint", ["--set", "HAS_WIN=1", "--set", "VAR_WIN=1"])):
            with self.subTest(cc=cc):
                p = self.run_wh("config.txt", "-o", f"out-{cc}", "--set", f"CC_MODE={cc}", *extra)
                with h5py.File(self.dir / f"out-{cc}" / "results.h5") as f:
                    fl = f["flows"][:]
                    run = f["run"].attrs
                    self.assertTrue((fl["finished"] == 1).all())
                    self.assertTrue((fl["slowdown"] >= 1).all(), f"{cc}: {fl['slowdown']}")
                    self.assertTrue((fl["min_fct_ns"] <= fl["fct_ns"]).all())
                    self.assertLess(float(fl["slowdown_ref"][0]), 0.97)  # the reference's ratio for 1 B
                    self.assertEqual(float(run["slowdown_max"]), float(fl["slowdown"].max()))
                if cc == "dcqcn":
                    self.assertEqual([float(x) for x in fl["slowdown"][[0, 1, 2, 3, 5, 6, 7, 8, 9]]], [1.0] * 9)
                    self.assertEqual(int(fl["fct_ns"][4] - fl["min_fct_ns"][4]), 1)
                    # 1 MB: 1000 × 83 + 3 × 83 (the last packet's remaining hops) + 4 × 1000 + the ACK 4 × 1004.
                    self.assertEqual(int(fl["min_fct_ns"][8]), 1003 * 83 + 4000 + 4 * 1004)
                    self.assertIn("; CC DCQCN (CC_MODE 1); PFC frames 0;", p.stdout)
                    self.assertRegex(p.stdout, r"slowdown mean 1\.0000 p50 1\.0000 p99 1\.0001 \(over the true ideal FCT; "
                                               r"over the reference's standalone FCT: mean 0\.9868\)")


class Counters(Case):
    def test_lossy_links_count_drops_and_retransmissions(self):
        # 1 % loss on every link of the 3-switch path, a 1 ms RTO, one 4 MB flow: the losses are link-error
        # drops, go-back-N resends at least one packet per data packet lost, and the summary says so.
        self.write("topology.txt", PATH3)
        self.write("flow.txt", "1\n0 1 3 100 4000000 2.0\n")
        self.write("config.txt", config_text(ERROR_RATE_PER_LINK="0.01", RTO_US="1000"))
        p = self.run_wh("config.txt", "-o", "out")
        with h5py.File(self.dir / "out" / "results.h5") as f:
            run = f["run"].attrs
            dropped = int(run["packets_dropped"])
            self.assertGreater(dropped, 0)
            self.assertEqual(int(run["drops_loss"]), dropped)
            self.assertEqual(int(run["drops_buffer"]) + int(run["drops_link_down"]), 0)
            retx = int(run["retransmitted_packets"])
            self.assertGreater(retx, 0)
            self.assertEqual(int(run["retransmitted_bytes"]), 1000 * retx)  # 4 MB: every packet carries 1000 B
            self.assertEqual(int(f["flows"]["finished"][0]), 1)
        self.assertIn(f"drops {dropped} (buffer 0, loss {dropped}, link down 0)", p.stdout)
        self.assertIn(f"retransmitted {retx} packets ({1000 * retx} B of payload)", p.stdout)
        self.assertRegex(p.stdout, r"retransmission timeouts \d+")


class MisspelledCommandLine(Case):
    # A misspelled command was reported as a missing one, and a misspelled option's value was taken for
    # the scenario ("scenario: File does not exist: x"); the fix pointed to wormhole --help, which lists
    # no option of run.
    def wh(self, *args):
        p = subprocess.run([str(WORMHOLE), *map(str, args)], capture_output=True, text=True, timeout=60, cwd=self.dir)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        return p.stderr

    def test_a_misspelled_command_is_named_with_the_closest(self):
        err = self.wh("rnu", SCENARIO)
        self.assertIn('unknown command "rnu" of wormhole (fix: did you mean run? the commands are run, partition, memo', err)
        self.assertIn('unknown command "stat" of wormhole memo (fix: did you mean stats?', self.wh("memo", "stat", "m.h5"))

    def test_a_misspelled_option_is_named_not_the_file_after_it(self):
        err = self.wh("run", "--memo-outt", "x", SCENARIO)
        self.assertIn("unknown option --memo-outt of wormhole run (fix: did you mean --memo-out? see wormhole run --help)", err)
        self.assertNotIn("File does not exist", err)
        self.assertIn("did you mean --output-dir?", self.wh("run", SCENARIO, "--ouput-dir=out"))
        self.assertIn("did you mean --output-dir?", self.wh("run", SCENARIO, "--output", "out"))  # shortened
        self.assertIn("settings are given as --set KEY=VALUE, e.g. --set WORMHOLE=1", self.wh("run", SCENARIO, "--wormhole"))
        self.assertIn("(fix: see wormhole run --help)", self.wh("run"))  # scenario is required


class MissingScenario(Case):
    def test_a_missing_scenario_says_what_a_scenario_is(self):
        p = self.run_wh("inputs/nope/config.txt", expect=2)
        self.assertIn("File does not exist: inputs/nope/config.txt", p.stderr)
        self.assertIn("fix: check the path: a scenario is a .toml file or an HPCC config.txt", p.stderr)

    def test_a_missing_input_names_the_path_it_was_looked_for_at(self):
        # A config whose TOPOLOGY_FILE is beside it reads every relative input from there: the error
        # gives the path as typed and where it was looked for (it gave the joined path as if typed, and
        # a working-folder path that was never tried).
        config = "inputs/hpcc-ring16-fattree-k4-1MB/config_dcqcn.txt"
        ring = SOURCE_DIR / "inputs" / "hpcc-ring16-fattree-k4-1MB"
        for key, want in (("FLOW_FILE", f"FLOW_FILE nope.txt not found beside the config: {ring / 'nope.txt'} (fix: give "
                                        "a path relative to the config's folder"),
                          ("TOPOLOGY_FILE", f"TOPOLOGY_FILE nope.txt not found: {SOURCE_DIR / 'nope.txt'} (nor beside the "
                                            f"config: {ring / 'nope.txt'}) (fix: ")):
            p = subprocess.run([str(WORMHOLE), "run", config, "--set", f"{key}=nope.txt", "-o", str(self.dir / "out")],
                               capture_output=True, text=True, timeout=60, cwd=SOURCE_DIR)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(want, p.stderr)
            self.assertFalse((self.dir / "out").exists())

    def test_a_config_named_from_its_own_folder_is_not_said_to_be_elsewhere(self):
        # Run as `wormhole run config_dcqcn.txt` from the config's folder, a missing input was looked for
        # in that folder, and the hint said the config's TOPOLOGY_FILE was not beside it.
        ring = SOURCE_DIR / "inputs" / "hpcc-ring16-fattree-k4-1MB"
        for key in ("FLOW_FILE", "TOPOLOGY_FILE"):
            p = subprocess.run([str(WORMHOLE), "run", "config_dcqcn.txt", "--set", f"{key}=nope.txt", "-o",
                                str(self.dir / "out")], capture_output=True, text=True, timeout=60, cwd=ring)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(f"{key} nope.txt not found: {ring / 'nope.txt'} (fix: give a path relative to the config's "
                          "folder (the current directory), or an absolute path)", p.stderr)
            self.assertNotIn("not beside", p.stderr)
            self.assertNotIn("nor beside", p.stderr)
            self.assertFalse((self.dir / "out").exists())

    def test_a_missing_memo_file_is_not_called_a_scenario(self):
        scenario = SOURCE_DIR / "inputs" / "llm" / "micro-allreduce-16g.toml"
        p = self.run_wh(scenario, "--memo", "none.h5", expect=2)
        self.assertIn("--memo: File does not exist: none.h5 (fix: check the path)", p.stderr)


class FileSizeLimit(Case):
    def test_a_file_size_limit_names_the_file_and_exits_4(self):
        # ulimit -f: the write past the limit fails (EFBIG) and the writer says which file, as a full
        # disk does; the signal the kernel sends for it used to end the process without a word.
        import resource
        scenario = SOURCE_DIR / "inputs" / "llm" / "moe-32g.toml"
        limit = 3_000_000  # fct.txt (about 1 MB) fits, results.h5 does not
        p = subprocess.run([str(WORMHOLE), "run", str(scenario), "-o", str(self.dir / "out"), "-q"], capture_output=True,
                           text=True, timeout=300, cwd=self.dir,
                           preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)))
        for m in CRASH_MARKERS:
            self.assertNotIn(m, p.stderr)
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertIn("results.h5", p.stderr)
        self.assertIn("File too large", p.stderr)
        self.assertEqual(sorted(x.name for x in (self.dir / "out").iterdir() if x.name.startswith("results.h5")), [])


class UnwritableOutputFolder(Case):
    """An output folder this user cannot write to is refused before the run, naming the folder and the fix
    (it named QLEN_MON_FILE's folder and said to create a folder that existed). As root every folder is
    writable, so the runs drop to user nobody."""

    def run_as_user(self, *args):
        cmd = [str(WORMHOLE), "run", *map(str, args)]
        if os.geteuid() == 0:
            if not shutil.which("setpriv"):
                self.skipTest("running as root without setpriv")
            cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + cmd
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=self.dir)
        for m in CRASH_MARKERS:
            self.assertNotIn(m, p.stderr)
        return p

    def test_refused_naming_the_folder(self):
        os.chmod(self.dir, 0o755)
        self.write("topology.txt", PATH3)
        self.write("flow.txt", "1\n0 1 3 100 1000000 2.0\n")
        self.write("config.txt", config_text())
        locked = self.dir / "locked"
        locked.mkdir()
        (locked / "fct.txt").write_text("a previous run's\n")
        os.chmod(locked, 0o555)
        try:
            self.check_refusals(locked)
        finally:
            os.chmod(locked, 0o755)  # before tearDown removes it

    def check_refusals(self, locked):
        config = self.dir / "config.txt"
        p = self.run_as_user(config, "-o", locked)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn(f"--output-dir {locked} is not writable: Permission denied", p.stderr)
        self.assertIn("let this user create files in it, or choose another folder for --output-dir", p.stderr)
        self.assertNotIn("QLEN_MON_FILE", p.stderr)
        self.assertNotIn("create the directory", p.stderr)
        self.assertEqual((locked / "fct.txt").read_text(), "a previous run's\n")
        # The config's own output path, without -o: the key that names it.
        config = self.write("config2.txt", config_text(FCT_OUTPUT_FILE="locked/fct.txt", PFC_OUTPUT_FILE="pfc.txt"))
        p = self.run_as_user(config)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn(f"FCT_OUTPUT_FILE {locked}/fct.txt: directory {locked} is not writable", p.stderr)
        # A training scenario's output folder (its files copied here: the source tree may be private to root).
        for name in ("micro-allreduce-16g.toml", "microAllReduce_16g.txt", "SimAI.conf"):
            shutil.copy(SOURCE_DIR / "inputs" / "llm" / name, self.dir / name)
        p = self.run_as_user(self.dir / "micro-allreduce-16g.toml", "-o", locked)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn(f"--output-dir {locked} is not writable: Permission denied", p.stderr)
        # A folder that cannot be made inside it: the command line's -o is named, not the scenario file.
        p = self.run_as_user(self.dir / "micro-allreduce-16g.toml", "-o", locked / "sub")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn(f"command line: --output-dir {locked / 'sub'}: Permission denied", p.stderr)
        self.assertEqual(sorted(x.name for x in locked.iterdir()), ["fct.txt"])


if __name__ == "__main__":
    unittest.main()
