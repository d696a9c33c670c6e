#!/usr/bin/python3
"""What the monitors and the packet trace cost (a report, not a test: exit status 0 unless a run fails or a monitor
changes a result).

Usage: bench_monitors.py [-r R] [--wormhole PATH] [--config CONFIG] [--set KEY=VALUE ...]

Runs one HPCC config (default: the shipped 16 MB ring, DCQCN) R times (default 3) in each mode, in the same
invocation, and prints per mode the simulation loop's best wall time (the summary's "events N in X s wall"), its
ratio to the plain run, and the size of what the mode writes:
  plain      no monitor
  port-mon   PORT_MON 1, every switch port, one row per 10 µs (the defaults)
  port-1us   PORT_MON 1, every port of every node, one row per 1 µs
  qlen       QLEN_MON_FILE over the whole run (a 100-ns sample of every switch port)
  trace      ENABLE_TRACE 1, every node traced
  simai      SimAI's BW_MON_FILE (10 µs), RATE_MON_FILE and CNP_MON_FILE (1 µs)
It also checks that fct.txt and pfc.txt are byte-identical in every mode. Runs are pinned to one CPU.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EVENTS_RE = re.compile(r"events (\d+) in ([0-9.eE+-]+) s wall")


def modes(nodes_file):
    return {
        "plain": [],
        "port-mon": ["--set", "PORT_MON=1"],
        "port-1us": ["--set", "PORT_MON=1", "--set", "PORT_MON_INTERVAL=1000", "--set", "PORT_MON_NODES=all"],
        "qlen": ["--set", "QLEN_MON_START=2000000000", "--set", "QLEN_MON_END=2100000000"],
        "trace": ["--set", "ENABLE_TRACE=1", "--set", f"TRACE_FILE={nodes_file}"],
        "simai": ["--set", "BW_MON_FILE=bw.txt", "--set", "RATE_MON_FILE=rate.txt", "--set", "CNP_MON_FILE=cnp.txt",
                  "--set", "BW_MON_INTERVAL=10", "--set", "QP_MON_INTERVAL=1", "--set", "MON_START=2000000"],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-r", "--repeat", type=int, default=3)
    ap.add_argument("--wormhole", default=str(REPO / "build" / "wormhole"))
    ap.add_argument("--config", default=str(REPO / "inputs" / "hpcc-ring16-fattree-k4-16MB" / "config_dcqcn.txt"))
    ap.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    args = ap.parse_args()
    cpu = sorted(os.sched_getaffinity(0))[-1]
    tmp = Path(tempfile.mkdtemp(prefix="wh_bench_mon_"))
    try:
        n = int((Path(args.config).parent / "topology.txt").read_text().split()[0])
        nodes = tmp / "all.txt"
        nodes.write_text(f"{n}\n" + " ".join(map(str, range(n))) + "\n")
        results, ref = {}, None
        print(f"{args.config}: best of {args.repeat} runs per mode, simulation loop only")
        for name, extra in modes(nodes).items():
            best = None
            out = tmp / name
            for _ in range(args.repeat):
                shutil.rmtree(out, ignore_errors=True)
                p = subprocess.run([args.wormhole, "run", args.config, "-o", str(out), *extra,
                                    *[x for s in args.sets for x in ("--set", s)]],
                                   capture_output=True, text=True, preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
                if p.returncode != 0:
                    sys.exit(f"{name}: exit {p.returncode}\n{p.stderr}")
                m = EVENTS_RE.search(p.stdout)
                wall = float(m.group(2))
                best = wall if best is None else min(best, wall)
            outputs = {f: (out / f).read_bytes() for f in ("fct.txt", "pfc.txt")}
            if ref is None:
                ref = outputs
            elif outputs != ref:
                sys.exit(f"{name}: fct.txt or pfc.txt differs from the plain run")
            size = sum(f.stat().st_size for f in out.iterdir() if f.name in ("monitor.h5", "qlen.txt", "mix.tr", "bw.txt", "rate.txt", "cnp.txt"))
            results[name] = (best, size)
            base = results["plain"][0]
            print(f"  {name:9s} {best:8.3f} s  {best / base:6.3f}x  writes {size / 1e6:9.3f} MB  (fct.txt, pfc.txt identical)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
