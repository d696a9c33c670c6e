#!/usr/bin/python3
"""Speed and exactness of the distributed engine (mpirun -np N wormhole run) against one process.

Usage: bench_distributed.py [--build DIR] [--hosts-k K | --small | --scenario PATH] [--size BYTES] [--ranks LIST]
                            [--cc dcqcn|hpcc] [--seed S] [--out FILE] [--csv FILE] [--keep] [--timeout S]

--scenario PATH runs a given HPCC config.txt or .toml training workload (e.g. inputs/llm/gpt13b-128g.toml) instead
of the generated fat-tree, the same way (packet mode; the workload's METIS cut is weighed by its expected traffic).
--wormhole runs every run with Wormhole's fast-forward on (WORMHOLE=1 / wormhole.enabled=true, memoization off;
the scenario's other Wormhole settings as they are; with --small a 50-sample window, since its flows are shorter
than the default one) and compares results.h5's /wormhole group too.

Scenario (generated into a temporary folder, never committed): a three-tier fat-tree of parameter k (default 16:
k pods x k/2 edge switches x k/2 hosts = k^3/4 = 1,024 hosts; k^2/2 = 128 edge, 128 aggregation, k^2/4 = 64 core
switches; 3,072 links of 100Gbps, 1 us, as the HPCC generator writes them: hosts are nodes 0..H-1, then edge,
aggregation and core switches) and a random permutation traffic: every host sends one flow of --size bytes
(default 4 MB) to another host, every host receiving exactly one flow (a derangement drawn with --seed, default
1), all starting at 2 s. config.txt is inputs/hpcc-ring16-fattree-k4-1MB/config_dcqcn.txt (or config_hpcc.txt
with --cc hpcc) with its file paths pointed at the generated files. --small is k = 4 (16 hosts), a smoke test.

Runs, one at a time, all by the same binary (copied into the temporary folder first, so a rebuild during the
benchmark cannot mix two binaries), packet mode (WORMHOLE=0):
  1    wormhole run CFG -o DIR --set EVENT_ORDER=portable                (the reference)
  N    mpirun -np N wormhole run CFG -o DIR   for each N of --ranks (default 2,4; --oversubscribe beyond
       the CPU count, --allow-run-as-root as root)
and `wormhole partition CFG -n N` for each N (the METIS cut the run uses).

What is measured and how to read it
* exact: fct.txt and pfc.txt of every N-rank run must be byte-identical to the 1-process run's, and with
  h5diff installed (hdf5-tools) the /flows and /pfc tables of results.h5 equal; otherwise the script prints
  MISMATCH and exits 1 (as it does if a run fails).
* wall s: time.perf_counter around the whole subprocess (mpirun start-up, input parsing, partitioning, the
  simulation, the merge of outputs on rank 0 and their writing). loop s: the engine's own figure, W of
  "events N in W s wall" (the simulation loop). speedup = 1-process time / N-rank time, for both; parallel
  efficiency = speedup / N. With N above the CPU count the ranks share cores: such rows show correctness,
  not speed.
* per rank (rank 0 prints "rank R: E events; compute C s, wait W s, communicate M s; X windows; cut-link packets
  S sent, R received"): compute = running its own events, wait = blocked in the window's Allreduce (mostly
  load imbalance), communicate = exchanging cut-link packets (Alltoallv). Shares are of C + W + M. sync overhead
  = (W + M) / loop s: the part of the loop a rank spends not simulating. windows = lookahead windows (one
  Allreduce each); cut-link packets = packets that crossed a cut link (sent and received over all ranks match).
* memory: each process's peak RSS (GNU time's %M, each rank wrapped in /usr/bin/time under mpirun; the column is
  left out without it), rank 0 first, and the heaviest rank's over the one process's. A rank holds its share of
  the ports and flows, and all of what every rank holds alike (the driver, routes, programs, the MPI libraries:
  about 35 MB a rank on this machine against 26 MB for one process of a tiny run).
* cut (from wormhole partition): cut links (the edge cut), lookahead (the smallest delay of a cut link: the
  window length), imbalance (heaviest rank / mean; a node weighs 1 + ports + flows + MB of flow bytes through it), and
  per rank nodes / hosts / switches / ports / cut links / flows sent (for a training workload, the source-destination
  pairs of its expected traffic the rank sends).
* the load average (1, 5, 15 min) before the first run and after the last (the latter includes these runs' own
  ranks): a 1-min load well above 0 before means other work on the machine, which skews every time.
* other CPUs: the CPU time the whole machine was busy during a run (/proc/stat) minus the run's own (its
  processes' rusage), over the run's wall time: the CPUs' worth of other work. Above ~0.1 the times of that run
  are skewed (on 2 cores, 1.0 = a whole core taken); rerun when the machine is quiet.
* PFC frames / ECN marks / flows done: the runs' summary figures (the same in every exact run). A permutation
  rarely triggers PFC, so pfc.txt may be empty; fct.txt (one line per flow) carries the comparison.

Time it takes (the 2-core development machine, quiet): the default (k = 16, 4 MB, 75 M events) ~24 s in one
process, ~11 s with -np 2, ~12.5 s with -np 4 (oversubscribed): about 50 s in all; 1 MB flows take ~5 s in
one process. With other work on the machine (other CPUs ~1) the N-rank runs slow down most (-np 2 took 46 s):
check that column before reading speedups. --small (k = 4, 1.1 M events) about 2 s in all, mostly mpirun
start-up. Tables (Markdown) go to stdout and,
with --out FILE, to FILE; progress to stderr. Python 3 standard library only; helpers from bench_wormhole.py.
"""
import argparse
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_wormhole import (DEFAULT_BUILD, EVENTS_RE, REPO, BenchError, cli, log, md_table,  # noqa: E402
                            parse_list, tail)

BUILD_DIRS = [DEFAULT_BUILD]
GNU_TIME = "/usr/bin/time"
TEMPLATE = REPO / "inputs" / "hpcc-ring16-fattree-k4-1MB"
PATH_KEYS = ("TOPOLOGY_FILE", "FLOW_FILE", "TRACE_FILE", "TRACE_OUTPUT_FILE", "FCT_OUTPUT_FILE", "PFC_OUTPUT_FILE",
             "QLEN_MON_FILE")
RANK_RE = re.compile(r"^rank (\d+): (\d+) events; compute ([0-9.eE+-]+) s, wait ([0-9.eE+-]+) s, communicate "
                     r"([0-9.eE+-]+) s; (\d+) windows; cut-link packets (\d+) sent, (\d+) received", re.M)
CUT_RE = re.compile(r"(\d+) ranks, (\d+) cut links, imbalance ([0-9.]+), lookahead (\d+) ns")
FLOWS_RE = re.compile(r"flows finished (\d+)/(\d+)")
WORKLOAD_FLOWS_RE = re.compile(r"collectives \d+; flows (\d+);")  # a training workload's summary
ITERATION_RE = re.compile(r"^iteration \d+: ([0-9.]+) us", re.M)
PFC_RE = re.compile(r"PFC frames (\d+); ECN marks (\d+)")
PART_RE = re.compile(r"^rank (\d+): (\d+) nodes \((\d+) hosts, (\d+) switches\), (\d+) ports, (\d+) cut links, "
                     r"(\d+) (?:flows sent|source-destination pairs)", re.M)


# ---------------------------------------------------------------- scenario

def fat_tree(k):
    """(nodes, switch ids, links) of a three-tier k-ary fat-tree, hosts first (HPCC generator numbering)."""
    if k < 2 or k % 2:
        raise BenchError(f"--hosts-k {k}: the fat-tree parameter must be even and >= 2")
    h = k // 2
    hosts, edges, aggs, cores = k * h * h, k * h, k * h, h * h
    edge0, agg0, core0 = hosts, hosts + edges, hosts + edges + aggs
    links = [(x, edge0 + x // h) for x in range(hosts)]
    for pod in range(k):
        for e in range(h):
            for a in range(h):
                links.append((edge0 + pod * h + e, agg0 + pod * h + a))
    for pod in range(k):
        for a in range(h):  # aggregation switch a of every pod reaches cores a*h .. a*h+h-1
            for c in range(h):
                links.append((agg0 + pod * h + a, core0 + a * h + c))
    return hosts, hosts + edges + aggs + cores, list(range(edge0, core0 + cores)), links


def write_scenario(folder, k, size, seed, cc):
    hosts, nodes, switches, links = fat_tree(k)
    topo = [f"{nodes} {len(switches)} {len(links)}", " ".join(map(str, switches))]
    topo += [f"{a} {b} 100Gbps 0.001ms 0" for a, b in links]
    (folder / "topology.txt").write_text("\n".join(topo) + "\n")
    rng = random.Random(seed)
    dst = list(range(hosts))
    while True:  # a uniformly random derangement: nobody sends to itself, everybody receives once
        rng.shuffle(dst)
        if all(s != d for s, d in enumerate(dst)):
            break
    flows = [str(hosts)] + [f"{s} {d} 3 100 {size} 2.000000000" for s, d in enumerate(dst)]
    (folder / "flow.txt").write_text("\n".join(flows) + "\n")
    (folder / "trace.txt").write_text("1\n0\n")
    template = TEMPLATE / f"config_{cc}.txt"
    if not template.is_file():
        raise BenchError(f"config template not found: {template}")
    out, seen = [], set()
    files = {"TOPOLOGY_FILE": "topology.txt", "FLOW_FILE": "flow.txt", "TRACE_FILE": "trace.txt",
             "TRACE_OUTPUT_FILE": "out/mix.tr", "FCT_OUTPUT_FILE": "out/fct.txt", "PFC_OUTPUT_FILE": "out/pfc.txt",
             "QLEN_MON_FILE": "out/qlen.txt"}
    for line in template.read_text().splitlines():
        parts = line.split()
        if parts and parts[0] in files:
            line = f"{parts[0]} {folder / files[parts[0]]}"
            seen.add(parts[0])
        elif parts and parts[0] == "KMAX_MAP" and "100000000000" not in parts:
            raise BenchError(f"{template}: KMAX_MAP has no entry for 100Gbps links")
        out.append(line)
    if seen != set(files):
        raise BenchError(f"{template}: no {', '.join(sorted(set(files) - seen))} line to rewrite")
    (folder / "out").mkdir(exist_ok=True)
    cfg = folder / "config.txt"
    cfg.write_text("\n".join(out) + "\n")
    return cfg, hosts, nodes, len(switches), len(links)


# ---------------------------------------------------------------- running

def mpirun(n):
    cmd = ["mpirun", "-np", str(n)]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    if n > (os.cpu_count() or 1):
        cmd.append("--oversubscribe")
    return cmd


def cpu_busy():
    """(CPU seconds the whole machine has been busy, user + nice + system + irq + softirq; CPU seconds of this
    process's finished children, mpirun's ranks included), or None without /proc/stat."""
    try:
        f = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:8]]
    except (OSError, ValueError):
        return None
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (f[0] + f[1] + f[2] + f[5] + f[6]) / os.sysconf("SC_CLK_TCK"), ru.ru_utime + ru.ru_stime


def copy_binary(binary, local, tries=60):
    """Copies the binary and returns its --version; retries for a while if it is missing or half-written (its
    build folder being rebuilt)."""
    for i in range(tries):
        try:
            shutil.copy2(binary, local)
            v = subprocess.run([str(local), "--version"], capture_output=True, text=True, timeout=30)
            if v.returncode == 0:
                return v.stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass
        if i == 0:
            log(f"bench_distributed: {binary} missing or not runnable (being rebuilt?); retrying for {tries} s")
        time.sleep(1)
    raise BenchError(f"{binary}: could not copy a runnable binary in {tries} s")


def run(cmd, workdir, tag, what, timeout, stats=None):
    """Runs one command; returns (wall s, stdout). Raises BenchError on a failure or timeout. With a dict
    `stats`, stats["other"] = the CPUs' worth of other processes' work during the run (machine busy time
    minus this run's own CPU time, over the wall time)."""
    out_path, err_path = workdir / f"{tag}.stdout.txt", workdir / f"{tag}.stderr.txt"
    with open(out_path, "w") as fo, open(err_path, "w") as fe:
        c0 = cpu_busy()
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, cwd=workdir, stdout=fo, stderr=fe, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise BenchError(f"{what}: timed out after {timeout} s\n  command: {' '.join(cmd)}\n"
                             f"--- stderr (last lines) ---\n{tail(err_path)}")
        wall = time.perf_counter() - t0
        c1 = cpu_busy()
    if stats is not None and c0 and c1 and wall > 0:
        stats["other"] = max(0.0, (c1[0] - c0[0]) - (c1[1] - c0[1])) / wall
    if proc.returncode != 0:
        raise BenchError(f"{what}: exited with status {proc.returncode}\n  command: {' '.join(cmd)}\n"
                         f"--- stderr (last lines) ---\n{tail(err_path)}")
    return wall, out_path.read_text(errors="replace")


def mode_sets(cfg, wormhole, window=None):
    toml = str(cfg).endswith(".toml")
    if not wormhole:
        return ["--set", "wormhole.enabled=false" if toml else "WORMHOLE=0"]
    sets = (["--set", "wormhole.enabled=true", "--set", "wormhole.memo=false"] if toml
            else ["--set", "WORMHOLE=1", "--set", "WORMHOLE_MEMO=0"])
    if window:
        sets += ["--set", f"wormhole.window={window}" if toml else f"WORMHOLE_WINDOW={window}"]
    return sets


def peak_rss_wrapper(workdir, n):
    """The words that run a command under GNU time (/usr/bin/time, Debian package `time`), each process writing
    its peak RSS (KiB) to rss<n>.<rank> in `workdir` (the rank from Open MPI's, MPICH's or Slurm's environment);
    [] without GNU time."""
    if not os.access(GNU_TIME, os.X_OK):
        return []
    out = f"{workdir}/rss{n}." + "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${SLURM_PROCID:-0}}}"
    return ["sh", "-c", f'exec {GNU_TIME} -f %M -o "{out}" "$@"', "sh"]


def read_peak_rss(workdir, n):
    """Peak RSS in KiB of each rank (rank 0 first) as peak_rss_wrapper wrote them, or None."""
    files = [workdir / f"rss{n}.{r}" for r in range(n)]
    try:
        return [int(f.read_text().split()[-1]) for f in files]
    except (OSError, ValueError, IndexError):
        return None


def simulate(binary, cfg, workdir, n, timeout, wormhole=False, window=None):
    outdir = workdir / f"np{n}"
    cmd = peak_rss_wrapper(workdir, n) + [str(binary), "run", str(cfg), "-o", str(outdir),
                                          *mode_sets(cfg, wormhole, window)]
    cmd = cmd + ["--set", "EVENT_ORDER=portable"] if n == 1 else mpirun(n) + cmd
    what = "1 process" if n == 1 else f"mpirun -np {n}"
    log(f"  {what} ...")
    stats = {}
    wall, out = run(cmd, workdir, f"np{n}", what, timeout, stats)
    m = EVENTS_RE.search(out)
    if not m:
        raise BenchError(f"{what}: no 'events N in W s wall' line in the output:\n{out[-2000:]}")
    ranks = [{"rank": int(r[0]), "events": int(r[1]), "compute": float(r[2]), "wait": float(r[3]),
              "comm": float(r[4]), "windows": int(r[5]), "sent": int(r[6]), "received": int(r[7])}
             for r in RANK_RE.findall(out)]
    if n > 1 and sorted(r["rank"] for r in ranks) != list(range(n)):
        raise BenchError(f"{what}: expected one 'rank R: ...' line per rank 0..{n - 1}:\n{out[-3000:]}")
    for name in ("fct.txt", "pfc.txt"):
        if not (outdir / name).is_file():
            raise BenchError(f"{what}: no {outdir / name} after the run")
    fm, pm, cm = FLOWS_RE.search(out), PFC_RE.search(out), CUT_RE.search(out)
    if not fm and (wm := WORKLOAD_FLOWS_RE.search(out)):  # a training workload: all its flows ran if it completed
        fm = re.match(r"(\d+)/(\d+)", f"{wm.group(1)}/{wm.group(1)}")
    if not fm or not pm:
        raise BenchError(f"{what}: no 'flows finished F/T' or 'PFC frames P; ECN marks E' in the output:\n{out[-2000:]}")
    other = stats.get("other")
    log(f"      {wall:.2f} s wall, {int(m.group(1)):,} events, loop {float(m.group(2)):.2f} s"
        + (f"; other processes used {other:.2f} CPUs meanwhile" if other is not None else ""))
    return {"other": other, "n": n, "rss": read_peak_rss(workdir, n), "wall": wall, "events": int(m.group(1)),
            "loop": float(m.group(2)), "ranks": ranks,
            "outdir": outdir, "flows": f"{fm.group(1)}/{fm.group(2)}", "pfc": int(pm.group(1)), "ecn": int(pm.group(2)),
            "cut": (int(cm.group(2)), float(cm.group(3)), int(cm.group(4))) if cm else None}


def partition(binary, cfg, workdir, n, timeout):
    _, out = run([str(binary), "partition", str(cfg), "-n", str(n)], workdir, f"part{n}", f"partition -n {n}",
                 timeout)
    m = CUT_RE.search(out)
    if not m:
        raise BenchError(f"wormhole partition -n {n}: no 'N ranks, C cut links, imbalance I, lookahead L ns' line:\n"
                         f"{out[-2000:]}")
    return {"cut": int(m.group(2)), "imbalance": float(m.group(3)), "lookahead": int(m.group(4)),
            "ranks": [tuple(int(x) for x in r) for r in PART_RE.findall(out)]}


def identical(a, b):
    return a.read_bytes() == b.read_bytes()


def same_tables(a, b, wormhole=False):
    """results.h5's /flows and /pfc tables (and /wormhole) equal (h5diff, hdf5-tools); None without h5diff."""
    h5diff = shutil.which("h5diff")
    if h5diff is None:
        return None
    groups = ("/flows", "/pfc") + (("/wormhole",) if wormhole else ())

    def equal(t):
        # h5diff exits 0 on tables it calls "not comparable" (other lengths): that is a difference too,
        # unless both are empty
        p = subprocess.run([h5diff, "-c", str(a), str(b), t], capture_output=True, text=True)
        bad = [ln for ln in p.stdout.splitlines() if ln.startswith("Not comparable") and "empty dataset" not in ln]
        return p.returncode == 0 and not bad
    return all(equal(t) for t in groups)


# ---------------------------------------------------------------- report

def x(a, b):
    return f"{a / b:.2f}x" if b > 0 else "–"


def share(v, total):
    return f"{100 * v / total:.1f} %" if total > 0 else "–"


def report(runs, parts, exact, head):
    base = runs[0]
    speed = []
    for r in runs:
        n = r["n"]
        sw, sl = base["wall"] / r["wall"], base["loop"] / r["loop"] if r["loop"] > 0 else 0
        speed.append([str(n) if n > 1 else "1 (portable)", f"{r['wall']:.3f}", f"{r['loop']:.3f}", f"{r['events']:,}",
                      r["flows"], f"{r['pfc']:,}", f"{r['ecn']:,}",
                      "?" if r["other"] is None else f"{r['other']:.2f}"]
                     + ([f"{sw:.2f}x", f"{sl:.2f}x", f"{100 * sw / n:.0f} %", f"{100 * sl / n:.0f} %",
                         "yes" if exact[n] else "MISMATCH"] if n > 1 else ["–"] * 4 + ["reference"]))
    cut = [[str(n), p["cut"], f"{p['lookahead']} ns", f"{p['imbalance']:.3f}",
            " / ".join(str(q[1]) for q in p["ranks"]), " / ".join(str(q[4]) for q in p["ranks"]),
            " / ".join(str(q[5]) for q in p["ranks"]), " / ".join(str(q[6]) for q in p["ranks"])]
           for n, p in sorted(parts.items())]
    per = []
    for r in runs[1:]:
        for q in r["ranks"]:
            busy = q["compute"] + q["wait"] + q["comm"]
            per.append([str(r["n"]), str(q["rank"]), f"{q['events']:,}", f"{q['compute']:.3f}", f"{q['wait']:.3f}",
                        f"{q['comm']:.3f}", share(q["compute"], busy), share(q["wait"], busy), share(q["comm"], busy),
                        share(q["wait"] + q["comm"], r["loop"]), f"{q['windows']:,}", f"{q['sent']:,}",
                        f"{q['received']:,}"])
    mib = lambda kib: f"{kib / 1024:.1f}"
    memory = [[str(r["n"]) if r["n"] > 1 else "1 (portable)", " / ".join(mib(v) for v in r["rss"]),
               mib(max(r["rss"])), f"{max(r['rss']) / max(base['rss']):.2f}x" if r["n"] > 1 else "–"]
              for r in runs if r["rss"] and base["rss"]]
    return (head + "\n\n## speed and exactness\n\nspeedup and efficiency: whole process / simulation loop; "
            "exact = fct.txt and pfc.txt byte-identical to the 1-process run (and /flows, /pfc equal by h5diff); other CPUs = other processes' "
            "load during the run (0 = the machine was ours).\n\n"
            + md_table(["ranks", "wall s", "loop s", "events", "flows done", "PFC frames", "ECN marks", "other CPUs",
                        "speedup", "loop speedup", "efficiency", "loop efficiency", "exact"], speed, ["r"] * 12 + ["l"])
            + "\n\n## cut (wormhole partition)\n\nper rank: nodes / ports / cut links / flows sent (a training workload: "
            "source-destination pairs of its expected traffic), rank 0 first.\n\n"
            + md_table(["ranks", "cut links", "lookahead", "imbalance", "nodes", "ports", "cut links per rank",
                        "flows sent (pairs)"], cut, ["r"] * 8)
            + "\n\n## per rank\n\nshares of compute + wait + communicate; sync overhead = (wait + communicate) / "
            "loop s.\n\n"
            + md_table(["ranks", "rank", "events", "compute s", "wait s", "communicate s", "compute", "wait",
                        "communicate", "sync overhead", "windows", "cut-link pkts sent", "received"], per,
                       ["r"] * 13)
            + ("\n\n## memory\n\npeak RSS per process (GNU time's %M), rank 0 first; largest / 1 process = the "
               "heaviest rank's peak over the one process's. A rank's MPI libraries take about 9 MiB more than one "
               "process holds without them (34 against 25 MiB for a 16-GPU run on the development machine), so a "
               "small scenario's ranks each take more than its one process.\n\n"
               + md_table(["ranks", "peak RSS per rank MiB", "largest MiB", "largest / 1 process"], memory, ["r"] * 4)
               if memory else "\n\n(no peak RSS per rank: GNU time, /usr/bin/time, is not installed, or a rank's "
               "file is missing)") + "\n")


def loadavg():
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--build", help="folder with the wormhole binary (default: the first of "
                    + ", ".join(str(d) for d in BUILD_DIRS) + " that has one)")
    ap.add_argument("--hosts-k", type=int, default=16, help="fat-tree parameter k: k^3/4 hosts (default 16: 1,024)")
    ap.add_argument("--small", action="store_true", help="smoke test: k = 4 (16 hosts)")
    ap.add_argument("--scenario", help="run this scenario (an HPCC config.txt or a .toml training workload) instead of "
                                       "the generated fat-tree permutation; packet mode")
    ap.add_argument("--wormhole", action="store_true", help="Wormhole's fast-forward on in every run (memoization "
                                                            "off); /wormhole compared too")
    ap.add_argument("--size", type=int, default=4000000, help="bytes per flow (default 4000000: ~25 s in one process)")
    ap.add_argument("--ranks", default="2,4", help="rank counts to run besides 1 process (default 2,4)")
    ap.add_argument("--cc", choices=("dcqcn", "hpcc"), default="dcqcn", help="CC: the template config (default dcqcn)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the permutation (default 1)")
    ap.add_argument("--out", help="also write the report to this file")
    ap.add_argument("--csv", help="also write ranks,wall_s,label rows (wall_s = the simulation loop) to this file, "
                                  "for scripts/wh_analyze.py plot-scaling")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (scenario and every run's outputs)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per run (default 3600)")
    args = ap.parse_args()
    k = 4 if args.small else args.hosts_k
    ranks = parse_list(args.ranks, int, "--ranks")
    if min(ranks) < 2 or len(set(ranks)) != len(ranks):
        raise BenchError("--ranks: distinct rank counts >= 2")
    if args.size < 1:
        raise BenchError("--size must be >= 1")
    dirs = [Path(args.build)] if args.build else BUILD_DIRS
    for _ in range(30):  # a build folder being rebuilt may lack its binary for a moment
        binary = next((d.resolve() / "wormhole" for d in dirs if os.access(d / "wormhole", os.X_OK)), None)
        if binary is not None:
            break
        time.sleep(1)
    if binary is None:
        raise BenchError(f"no wormhole binary in {', '.join(map(str, dirs))} (build it, or pass --build DIR)")
    if shutil.which("mpirun") is None:
        raise BenchError("mpirun not found on PATH")

    workdir = Path(tempfile.mkdtemp(prefix="bench_distributed_"))
    try:
        local = workdir / "wormhole"
        version = copy_binary(binary, local)  # a rebuild during the benchmark cannot mix two binaries
        built = time.strftime("%Y-%m-%d %H:%M", time.localtime(local.stat().st_mtime))
        if args.scenario:
            cfg = Path(args.scenario).resolve()
            if not cfg.is_file():
                raise BenchError(f"--scenario {args.scenario}: no such file")
            hosts = nodes = switches = links = None
        else:
            cfg, hosts, nodes, switches, links = write_scenario(workdir, k, args.size, args.seed, args.cc)
        load0 = loadavg()
        log(f"bench_distributed: {cfg if args.scenario else f'k = {k} fat-tree ({hosts} hosts)'}, {1 + len(ranks)} runs one at a time; "
            f"work folder {workdir}")
        parts = {n: partition(local, cfg, workdir, n, args.timeout) for n in ranks}
        # --small's 4-MB flows last 320 µs: shorter than the default 2-ms window, so nothing would be skipped
        window = 50 if args.wormhole and args.small else None
        runs = [simulate(local, cfg, workdir, 1, args.timeout, args.wormhole, window)]
        exact = {}
        for n in ranks:
            runs.append(simulate(local, cfg, workdir, n, args.timeout, args.wormhole, window))
            exact[n] = all(identical(runs[0]["outdir"] / f, runs[-1]["outdir"] / f) for f in ("fct.txt", "pfc.txt"))
            tables = same_tables(runs[0]["outdir"] / "results.h5", runs[-1]["outdir"] / "results.h5", args.wormhole)
            if tables is not None:
                exact[n] = exact[n] and tables
            if not exact[n]:
                log(f"      MISMATCH: fct.txt or pfc.txt of -np {n} differs from the 1-process run's")
            if not args.keep:
                shutil.rmtree(runs[-1]["outdir"], ignore_errors=True)
        mode = ("Wormhole fast-forward on (memoization off" + (f", window {window} samples" if window else "") + ")"
                if args.wormhole else "packet mode")
        what = (f"Scenario: {cfg}, {mode}" if args.scenario else
                f"Scenario: k = {k} fat-tree, {hosts} hosts, {nodes} nodes ({switches} switches), "
                f"{links} links of 100Gbps / 1 us; random permutation, {hosts} flows of {args.size:,} B (seed "
                f"{args.seed}) at 2 s; {args.cc.upper()}, {mode}")
        head = (f"# Distributed engine benchmark\n\n{version or 'wormhole'} ({binary}, built {built}), "
                f"{time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} CPUs, load average {load0} before the runs, "
                f"{loadavg()} after them. {what}. 1 process with EVENT_ORDER=portable; "
                f"N ranks by mpirun -np N"
                + (f" (--oversubscribe above {os.cpu_count()}: correctness only)" if max(ranks) > (os.cpu_count() or 1)
                   else "") + ".")
        ref = runs[0]["outdir"]
        notes = [f"reference outputs: fct.txt {(ref / 'fct.txt').stat().st_size:,} B, "
                 f"pfc.txt {(ref / 'pfc.txt').stat().st_size:,} B (compared byte for byte)"]
        for r in runs:
            if hosts is not None and r["flows"] != f"{hosts}/{hosts}":
                notes.append(f"{r['n']} rank(s): only {r['flows']} flows finished before SIMULATOR_STOP_TIME")
            p = parts.get(r["n"])
            if p and r["cut"] and r["cut"] != (p["cut"], p["imbalance"], p["lookahead"]):
                notes.append(f"-np {r['n']}: the run's cut {r['cut']} differs from wormhole partition's")
        text = report(runs, parts, exact, head) + "\nNotes:\n" + "\n".join(f"* {n}" for n in notes) + "\n"
        bad = [n for n in ranks if not exact[n]]
        if bad:
            text += "\nMISMATCH: fct.txt / pfc.txt differ from the 1-process run for -np " + ", ".join(map(str, bad)) + "\n"
        if args.keep:
            text += f"\nOutputs kept in {workdir}\n"
        print(text, end="")
        if args.out:
            Path(args.out).write_text(text)
            log(f"bench_distributed: report written to {args.out}")
        if args.csv:
            label = Path(args.scenario).name if args.scenario else f"fat-tree k={k} permutation"
            rows = ["ranks,wall_s,label"] + [f"{r['n']},{r['loop']},{label}" for r in runs]
            Path(args.csv).write_text("\n".join(rows) + "\n")
            log(f"bench_distributed: scaling rows written to {args.csv}")
    finally:
        if args.keep:
            log(f"bench_distributed: outputs kept in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    cli(main, "bench_distributed")
