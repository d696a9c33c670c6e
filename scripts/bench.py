#!/usr/bin/python3
"""Speed benchmark of wormhole against the HPCC ns-3 reference (a report, not a test: exit status 0).

Usage: bench.py [-r R] [--wormhole PATH] [--data DIR] [--no-pin]
                [--scale] [--scale-only] [--hosts N] [--setup GPUS [--setup-only] [--tp-only]]

Shipped scenarios: every inputs/<scenario>/config_dcqcn.txt and config_hpcc.txt is run R times (default
3) on a temporary copy. For each it prints the events and the simulation loop's events/s (from the
summary line "events N in X s wall (Y M events/s)", best run), the minimum wall time of the WHOLE process
(time.perf_counter around the subprocess, so start-up, input parsing and output writing count), the
reference's wall_s_min from <data>/<scenario>/summary.json (key "dcqcn" or "hpcc") and the speed ratio
ref / ours.

--scale adds (--scale-only runs only) a memory/speed run on a generated single-switch star: N hosts
(default 4000) at 100Gbps / 1us, flows host i -> host (i+1) % N of 100 KB at 2.0 s, DCQCN settings from
inputs/hpcc-ring16-fattree-k4-1MB/config_dcqcn.txt. It runs under `/usr/bin/time -v` and prints the peak
RSS, the RSS per node (peak RSS / nodes) and events/s.

--setup GPUS adds (with --setup-only runs only) a set-up run: a Spectrum-X cluster of GPUS GPUs (TP 8)
with one DP AllReduce of 1 MiB (--tp-only: one TP AllReduce of 1 MiB instead, all of whose flows stay in
a server), cut at 1 us of simulated time, so that the process is almost all set-up (topology, routing,
plans). It runs once under `/usr/bin/time -v` and prints the wall time, the peak RSS and the memory
estimate's line.

Targets (printed as PASS / FAIL, never an exit status): >= 10 M events/s on one core, >= 20x faster than
the reference on the 64-host incast (DCQCN), < 64 KB of RSS per node. Runs are pinned to one CPU
(sched_setaffinity) unless --no-pin. Standard library only.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO / "tests" / "data" / "refruns"
DEFAULT_WORMHOLE = REPO / "build" / "wormhole"
SCALE_BASE_CONFIG = REPO / "inputs" / "hpcc-ring16-fattree-k4-1MB" / "config_dcqcn.txt"
INCAST = "hpcc-incast16to1-leafspine64-1MB"
SUMMARY_RE = re.compile(r"events (\d+) in ([0-9.eE+-]+) s wall \(([0-9.eE+-]+) M events/s\)")
TARGET_EVENTS_M = 10.0
TARGET_RATIO = 20.0
TARGET_KB_PER_NODE = 64.0
RUN_TIMEOUT_S = 1800


def pin_to_one_cpu():
    cpus = sorted(os.sched_getaffinity(0))
    cpu = cpus[-1]
    return lambda: os.sched_setaffinity(0, {cpu})


def run_once(cmd, cwd, preexec):
    """Runs cmd; returns (whole-process wall s, stdout, stderr). Raises on a non-zero exit."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S,
                          preexec_fn=preexec)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} (in {cwd}) exited with {proc.returncode}:\n"
                           f"{proc.stderr.strip()}")
    return wall, proc.stdout, proc.stderr


def parse_summary(stdout):
    m = SUMMARY_RE.search(stdout)
    if not m:
        raise RuntimeError(f"no summary line 'events N in X s wall (Y M events/s)' in the output:\n{stdout}")
    return int(m.group(1)), float(m.group(2)), float(m.group(3))


def bench(binary, workdir, config, reps, preexec, wrap=()):
    """R runs; returns dict with min whole-process wall, events, best loop events/s, and raw outputs."""
    best = None
    for _ in range(reps):
        wall, out, err = run_once(list(wrap) + [str(binary), "run", config], workdir, preexec)
        events, loop_s, mev = parse_summary(out)
        r = {"wall": wall, "events": events, "loop_s": loop_s, "mev": mev, "stderr": err}
        if best is None:
            best = dict(r, stderrs=[err])
        else:
            best["stderrs"].append(err)
            if wall < best["wall"]:
                best["wall"] = wall
            if mev > best["mev"]:
                best["mev"], best["loop_s"] = mev, loop_s
    return best


def ref_wall(data, scenario, cc):
    p = data / scenario / "summary.json"
    try:
        with open(p) as f:
            return json.load(f)[cc]["wall_s_min"]
    except (OSError, KeyError, ValueError):
        return None


def print_table(header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    line = "  ".join(h.ljust(w) if i < 2 else h.rjust(w) for i, (h, w) in enumerate(zip(header, widths)))
    print(line)
    print("-" * len(line))
    for r in rows:
        print("  ".join(str(c).ljust(w) if i < 2 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths))))


def verdict(ok):
    return "PASS" if ok else "FAIL"


# ---------------------------------------------------------------- generated star (--scale)

def read_config_lines(path):
    """Config as a list of (key, value-text) pairs in file order (blank lines dropped)."""
    pairs = []
    with open(path) as f:
        for line in f:
            t = line.split(None, 1)
            if t:
                pairs.append((t[0], t[1].strip() if len(t) > 1 else ""))
    return pairs


def write_star(dirpath, n_hosts, flow_bytes=100_000, start_s=2.0):
    """Single switch (id n_hosts) with hosts 0..n_hosts-1; flows i -> (i+1) % n_hosts."""
    sw = n_hosts
    with open(dirpath / "topology.txt", "w") as f:
        f.write(f"{n_hosts + 1} 1 {n_hosts}\n{sw}\n")
        for h in range(n_hosts):
            f.write(f"{h} {sw} 100Gbps 0.001ms 0\n")
    with open(dirpath / "flow.txt", "w") as f:
        f.write(f"{n_hosts}\n")
        for h in range(n_hosts):
            f.write(f"{h} {(h + 1) % n_hosts} 3 100 {flow_bytes} {start_s:.9f}\n")
    with open(dirpath / "trace.txt", "w") as f:
        f.write("0\n")
    overrides = {"TOPOLOGY_FILE": "topology.txt", "FLOW_FILE": "flow.txt", "TRACE_FILE": "trace.txt",
                 "TRACE_OUTPUT_FILE": "out/mix.tr", "FCT_OUTPUT_FILE": "out/fct.txt",
                 "PFC_OUTPUT_FILE": "out/pfc.txt", "QLEN_MON_FILE": "out/qlen.txt"}
    with open(dirpath / "config.txt", "w") as f:
        for k, v in read_config_lines(SCALE_BASE_CONFIG):
            f.write(f"{k} {overrides.get(k, v)}\n")
    (dirpath / "out").mkdir(exist_ok=True)
    return n_hosts + 1


def time_v_field(stderr, name):
    for line in stderr.splitlines():
        line = line.strip()
        if line.startswith(name + ":"):
            return line.split(":", 1)[1].strip()
    return None


def scale_run(binary, tmp, n_hosts, reps, preexec):
    d = Path(tmp) / f"star{n_hosts}"
    d.mkdir()
    nodes = write_star(d, n_hosts)
    r = bench(binary, d, "config.txt", reps, preexec, wrap=("/usr/bin/time", "-v"))
    rss = [time_v_field(e, "Maximum resident set size (kbytes)") for e in r["stderrs"]]
    if None in rss:
        raise RuntimeError("no 'Maximum resident set size' in /usr/bin/time -v output")
    r["rss_kb"] = max(int(x) for x in rss)
    r["nodes"] = nodes
    with open(d / "out" / "fct.txt") as f:
        r["finished"] = sum(1 for line in f if line.strip())
    return r


SETUP_HEADER = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: {gpus}"
SETUP_DP = "ar -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 1048576 1"
SETUP_TP = "ar -1 1 ALLREDUCE 1048576 1 NONE 0 1 NONE 0 1"


def setup_run(binary, tmp, gpus, tp_only):
    """One run of a Spectrum-X cluster cut at 1 us: (wall s, peak RSS KB, estimate line)."""
    d = Path(tmp) / f"setup{gpus}"
    d.mkdir()
    (d / "workload.txt").write_text(SETUP_HEADER.format(gpus=gpus) + "\n1\n" + (SETUP_TP if tp_only else SETUP_DP) + "\n")
    (d / "sx.toml").write_text(f"""name = "sx{gpus}"
[topology]
generator = "spectrum-x"
gpus = {gpus}
[workload]
file = "workload.txt"
max_time = "1us"
[network]
config = "{REPO / 'inputs' / 'llm' / 'SimAI.conf'}"
[output]
dir = "{d / 'out'}"
""")
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-v", str(binary), "run", str(d / "sx.toml"), "--memory-limit", "none"],
                       cwd=d, capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - t0
    if p.returncode not in (0, 3):  # 3: cut at max_time
        raise RuntimeError(f"exit {p.returncode}: {p.stderr[-2000:]}")
    rss = time_v_field(p.stderr, "Maximum resident set size (kbytes)")
    est = next((line for line in p.stdout.splitlines() if line.startswith("memory estimate:")), "")
    return wall, int(rss), est


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-r", "--reps", type=int, default=3, help="runs per scenario (min wall time is kept)")
    ap.add_argument("--wormhole", default=os.environ.get("WORMHOLE", str(DEFAULT_WORMHOLE)))
    ap.add_argument("--data", default=str(DEFAULT_DATA), help="reference runs (summary.json per scenario)")
    ap.add_argument("--no-pin", action="store_true", help="do not pin the runs to one CPU")
    ap.add_argument("--scale", action="store_true", help="also run the generated N-host star")
    ap.add_argument("--scale-only", action="store_true", help="run only the generated N-host star")
    ap.add_argument("--hosts", type=int, default=4000, help="hosts of the --scale star (default 4000)")
    ap.add_argument("--setup", type=int, metavar="GPUS", help="also time the set-up of a Spectrum-X cluster")
    ap.add_argument("--setup-only", action="store_true", help="run only the --setup cluster")
    ap.add_argument("--tp-only", action="store_true", help="--setup with a TP AllReduce instead of a DP one")
    args = ap.parse_args()
    if args.setup_only and not args.setup:
        ap.error("--setup-only needs --setup GPUS")

    wormhole = Path(args.wormhole).resolve()
    if not wormhole.is_file() or not os.access(wormhole, os.X_OK):
        print(f"bench.py: error: wormhole binary not found or not executable: {wormhole}\n"
              f"  build it with `cmake --build {REPO / 'build'}` or pass --wormhole PATH", file=sys.stderr)
        return 2
    data = Path(args.data).resolve()
    preexec = None if args.no_pin else pin_to_one_cpu()
    reps = max(1, args.reps)
    print(f"wormhole {wormhole}; {reps} runs each, min wall of the whole process; "
          f"{'not pinned' if preexec is None else 'pinned to one CPU'}; {os.cpu_count()} CPUs\n")

    targets = []  # (description, measured text, ok)
    with tempfile.TemporaryDirectory(prefix="wh-bench-") as tmp:
        # A private copy, so a concurrent relink of the build folder cannot break a run.
        binary = Path(tmp) / "wormhole"
        shutil.copy2(wormhole, binary)

        if args.setup:
            kind = "TP" if args.tp_only else "DP"
            try:
                wall, rss, est = setup_run(binary, tmp, args.setup, args.tp_only)
            except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
                print(f"setup run FAILED: {e}", file=sys.stderr)
            else:
                print(f"setup: Spectrum-X {args.setup} GPUs, one {kind} AllReduce of 1 MiB, cut at 1 us: "
                      f"wall {wall:.2f} s, peak RSS {rss / 1024:.1f} MiB")
                print(f"  {est}")
            if args.setup_only:
                return 0

        if not args.scale_only:
            rows, loop_rates, incast_ratio = [], [], None
            for sc in sorted(p for p in (REPO / "inputs").iterdir() if p.is_dir()):
                for cc in ("dcqcn", "hpcc"):
                    if not (sc / f"config_{cc}.txt").is_file():
                        continue
                    work = Path(tmp) / f"{sc.name}-{cc}"
                    shutil.copytree(sc, work, ignore=shutil.ignore_patterns("out", "out_*"))
                    (work / "out" / "dcqcn").mkdir(parents=True)
                    (work / "out" / "hpcc").mkdir(parents=True)
                    try:
                        r = bench(binary, work, f"config_{cc}.txt", reps, preexec)
                    except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
                        print(f"{sc.name} {cc}: RUN FAILED: {e}", file=sys.stderr)
                        rows.append([sc.name, cc, "FAILED", "-", "-", "-", "-", "-"])
                        continue
                    ref = ref_wall(data, sc.name, cc)
                    ratio = ref / r["wall"] if ref else None
                    loop_rates.append(r["mev"])
                    if sc.name == INCAST and cc == "dcqcn":
                        incast_ratio = ratio
                    rows.append([sc.name, cc, r["events"], f"{r['mev']:.2f}",
                                 f"{r['events'] / r['wall'] / 1e6:.2f}", f"{r['wall']:.4f}",
                                 "n/a" if ref is None else f"{ref:.2f}",
                                 "n/a" if ratio is None else f"{ratio:.1f}x"])
            print_table(["scenario", "cc", "events", "M ev/s loop", "M ev/s process", "wall s min",
                         "ref wall s min", "speed ref/ours"], rows)
            print("(M ev/s loop: the summary line, simulation loop only, best run; "
                  "M ev/s process: events / whole-process wall min)")
            if loop_rates:
                targets.append((f">= {TARGET_EVENTS_M:.0f} M events/s on one core (slowest shipped scenario, loop)",
                                f"{min(loop_rates):.2f} M/s", min(loop_rates) >= TARGET_EVENTS_M))
            targets.append((f">= {TARGET_RATIO:.0f}x faster than the reference on the 64-host incast (DCQCN, "
                            "whole process)", "n/a" if incast_ratio is None else f"{incast_ratio:.1f}x",
                            incast_ratio is not None and incast_ratio >= TARGET_RATIO))

        if args.scale or args.scale_only:
            print()
            try:
                r = scale_run(binary, tmp, args.hosts, reps, preexec)
            except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
                print(f"scale run FAILED: {e}", file=sys.stderr)
                targets.append(("scale run", "FAILED", False))
            else:
                kb_node = r["rss_kb"] / r["nodes"]
                print(f"scale: star of {args.hosts} hosts + 1 switch ({r['nodes']} nodes), {args.hosts} flows "
                      f"of 100 KB ({r['finished']} finished)")
                print_table(["scenario", "cc", "events", "M ev/s loop", "M ev/s process", "wall s min",
                             "peak RSS MB", "RSS/node KB"],
                            [[f"star{args.hosts}", "dcqcn", r["events"], f"{r['mev']:.2f}",
                              f"{r['events'] / r['wall'] / 1e6:.2f}", f"{r['wall']:.4f}",
                              f"{r['rss_kb'] / 1024:.1f}", f"{kb_node:.2f}"]])
                targets.append((f">= {TARGET_EVENTS_M:.0f} M events/s on one core (star{args.hosts}, loop)",
                                f"{r['mev']:.2f} M/s", r["mev"] >= TARGET_EVENTS_M))
                targets.append((f"< {TARGET_KB_PER_NODE:.0f} KB RSS per node (star{args.hosts}, peak RSS / nodes)",
                                f"{kb_node:.2f} KB", kb_node < TARGET_KB_PER_NODE))

    print("\ntargets:")
    for what, got, ok in targets:
        print(f"  {verdict(ok)}  {what}: {got}")
    if not (args.scale or args.scale_only):
        print(f"  (not measured: < {TARGET_KB_PER_NODE:.0f} KB per node; run with --scale)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
