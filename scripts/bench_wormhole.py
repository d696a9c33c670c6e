#!/usr/bin/python3
"""Accuracy and speed of Wormhole (steady-state fast-forwarding) against packet mode.

Usage: bench_wormhole.py [--build DIR] [--data DIR] [--theta T] [--window L] [--only NAME[,NAME]] [--big]
                         [--sweep [--sweep-only] [--sweep-scenario PATH] [--sweep-thetas LIST]
                          [--sweep-windows LIST] [--sweep-set KEY=VALUE ...]]
                         [--out FILE] [--keep] [--timeout S]

Every scenario is run twice by the same binary in this one invocation, one run after the other (never two
simulations at once): the baseline in packet mode (Wormhole off: WORMHOLE=0, or wormhole.enabled=false in a
.toml scenario) and with Wormhole on (WORMHOLE=1 WORMHOLE_THETA=θ WORMHOLE_WINDOW=l, or wormhole.enabled /
.theta / .window), θ = 0.05 and l = 2000 unless --theta / --window. The binary is <build>/wormhole (default
<repo>/build); it is copied to the temporary folder first, so a rebuild during the benchmark cannot mix two
binaries. Runs are not pinned to a CPU (Wormhole's steady checks may use threads).

What is measured, per scenario and CC
* Wall time: time.perf_counter around the whole subprocess (start-up, input parsing, the simulation and the
  writing of every output, fct.txt and results.h5 included); speedup = wall off / wall on. "loop speedup" is
  the same ratio of the simulation loop's own time, the "events N in X s wall" of the summary.
* Events: N of the summary line "events N in X s wall" (executed events) of each run, and from the on-run's
  line "wormhole: S skips (B pulled back), C steady checks (K steady, smallest spread X), P packets credited, ~E events skipped (Q % of the model's
  executed + skipped), ..." the skips S, the skip-backs B (skips pulled back), the estimated skipped events E
  and Q = E / (executed − bookkeeping + E). Runs are made WITHOUT -q so that these lines are printed (stdout).
* Per-flow FCT error: both runs' fct.txt (HPCC format, `srcip dstip sport dport size start_ns fct_ns
  standalone_ns`) are joined on (srcip, dstip, sport, dport), which is unique per flow; for each flow in both,
  e = |fct_on - fct_off| / fct_off. Reported: the number of flows compared, the flows found in one file only
  ("unmatched off/on", i.e. finished in one run only), the mean of e, its p99 (nearest rank) and its maximum.
* Iteration-time error (.toml scenarios only): iterations.csv (`iteration,start_us,end_us,time_us,complete`)
  of both runs joined on the iteration number; per iteration |time_on - time_off| / time_off; the table shows
  the maximum over all iterations (an iteration incomplete in either run is listed under the notes).
* Targets: mean FCT error < 1 % and iteration-time error < 0.5 % ("ok" / "MISS"; "–" where not applicable).
  They are a report, never an exit status: the script exits 0 unless a run fails or an input is missing.

Scenarios of the `accuracy` table (default; --only keeps those whose name contains one of the substrings)
* Reference runs <data>/refruns/<name>/ (default data <repo>/tests/data), each config_dcqcn.txt and
  config_hpcc.txt present, run from inside that folder with -o to a temporary folder:
  hpcc-ring16-fattree-k4-1MB, hpcc-ring16-fattree-k4-16MB, hpcc-incast16to1-leafspine64-1MB,
  hpcc-bundled-example (HPCC only).
* inputs/llm/moe-32g.toml and inputs/llm/gpt7b-64g.toml (+ gpt13b-128g.toml with --big), each with the CC of
  its network config as shipped (SimAI.conf: CC_MODE 1, DCQCN) and with HPCC (--set CC_MODE=3). SimAI.conf
  carries the keys HPCC needs (HAS_WIN 1, VAR_WIN 1, U_TARGET 0.95, FAST_REACT 1, MI_THRESH 0, INT_MULTI 1,
  RATE_AI 50Mb/s), so HPCC runs on these scenarios with SimAI's own values; nothing else is changed.
* --no-tp: each GPT scenario also as "<name> no-TP", its TP collectives not simulated
  (workload.ignore_groups=["TP"]), as the Wormhole paper's evaluation ignores intra-node TP/SP traffic. In the
  GPT files TP flows are ~97 % of all flows and most events, each only a few µs long (shorter than any
  steady-state window), so the full scenarios measure something the paper did not.

`sweep` (--sweep): on one scenario (--sweep-scenario, a .toml scenario or an HPCC config.txt, default
inputs/llm/gpt7b-64g.toml, run with its shipped CC unless e.g. --sweep-set CC_MODE=3) one off-run as the
baseline, then one on-run for each θ in --sweep-thetas (default 0.01,0.03,0.05,0.1) and l in
--sweep-windows (default 500,1000,2000,4000). It prints a grid (rows θ, columns l, each cell: mean FCT error /
p99 FCT error / iteration-time error / events skipped % / speedup) and the same points one per row.
--sweep-only skips the accuracy table.

Time it takes (measured on the 2-core development machine, shared; one run at a time; on-runs took about as
long as the off-runs except where Wormhole skips much):
* refruns: the 7 config pairs (14 runs) take about 2 s in all (0.03-0.2 s per run).
* moe-32g: about 1.1 s per run with DCQCN, 1.6 s with HPCC; 4 runs, about 5 s.
  `--only ring16,bundled,incast,moe` thus takes under 10 s.
* gpt7b-64g: about 61 s per run with DCQCN, 72 s with HPCC (3.2 GB RSS, 460 MB of outputs per run, 3.8 M
  flows; comparing two fct.txt takes a few seconds); 4 runs, about 4.5 minutes.
  The default accuracy table therefore takes about 5 minutes in all.
* gpt13b-128g (--big only): about 4 minutes and 11 GB per packet-mode run, 1.2 GB of outputs; 4 runs,
  15-20 minutes (not measured by this script's author).
* sweep: 1 + #θ × #l runs of the sweep scenario, 17 by default: about 17 minutes on gpt7b-64g (DCQCN); a
  sweep on a refruns config.txt takes about a second.
Outputs of each pair of runs are deleted as soon as they are compared, unless --keep (then the temporary
folder is kept and its path printed). Tables (Markdown) go to stdout and, with --out FILE, to FILE; progress
goes to stderr. Python 3 standard library only.
"""
import argparse
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from array import array
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_BUILD = REPO / "build"
DEFAULT_DATA = REPO / "tests" / "data"
REFRUNS = ["hpcc-ring16-fattree-k4-1MB", "hpcc-ring16-fattree-k4-16MB", "hpcc-incast16to1-leafspine64-1MB",
           "hpcc-bundled-example"]
TOMLS = ["inputs/llm/moe-32g.toml", "inputs/llm/gpt7b-64g.toml"]
BIG_TOMLS = ["inputs/llm/gpt13b-128g.toml"]
DEFAULT_SWEEP_SCENARIO = "inputs/llm/gpt7b-64g.toml"
DEFAULT_SWEEP_THETAS = [0.01, 0.03, 0.05, 0.1]
DEFAULT_SWEEP_WINDOWS = [500, 1000, 2000, 4000]
TARGET_FCT = 0.01   # mean per-flow FCT error
TARGET_ITER = 0.005  # iteration-time error
CC_NAMES = {"1": "DCQCN", "3": "HPCC", "7": "TIMELY", "8": "DCTCP", "10": "HPCC-PINT"}
STDERR_TAIL = 30

EVENTS_RE = re.compile(r"events (\d+) in ([0-9.eE+-]+) s wall")
SKIP_RE = re.compile(r"^wormhole: (\d+) skips \((\d+) pulled back\), (\d+) steady checks \(\d+ steady, smallest spread "
                     r"[0-9.a-z]+\), (\d+) packets credited, "
                     r"~(\d+) events skipped \(([0-9.eE+-]+) % of the model's executed \+ skipped\), ([0-9.eE+-]+) s of flow "
                     r"time fast-forwarded, at most (\d+) partitions", re.M)


class BenchError(Exception):
    """A failure that ends the benchmark with a message (exit status 1)."""


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- scenarios

class Scenario:
    """One scenario with one CC: how to run it (cwd, target, extra --set) and how to switch Wormhole."""

    def __init__(self, name, cc, kind, cwd, target, sets=()):
        self.name, self.cc, self.kind, self.cwd, self.target, self.sets = name, cc, kind, cwd, target, list(sets)

    @property
    def label(self):
        return f"{self.name} {self.cc}"

    def wormhole_sets(self, on, theta=None, window=None):
        if self.kind == "config":
            return ["WORMHOLE=1", f"WORMHOLE_THETA={theta:g}", f"WORMHOLE_WINDOW={window}"] if on else ["WORMHOLE=0"]
        return (["wormhole.enabled=true", f"wormhole.theta={theta:g}", f"wormhole.window={window}"] if on
                else ["wormhole.enabled=false"])


def cc_name(mode):
    mode = mode.strip().strip('"').strip("'")
    return CC_NAMES.get(mode, mode.upper())


def config_cc(path):
    """CC_MODE of an HPCC config.txt as a name (None if the file has no CC_MODE line)."""
    for line in Path(path).read_text(errors="replace").splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "CC_MODE":
            return cc_name(parts[1])
    return None


def toml_cc(path):
    """CC of a .toml scenario: CC_MODE in its [network] table, else that of its network config file."""
    section, base, mode = None, None, None
    for line in Path(path).read_text(errors="replace").splitlines():
        line = line.split("#", 1)[0].strip()
        m = re.match(r"^\[([^\]]+)\]$", line)
        if m:
            section = m.group(1).strip()
            continue
        if section != "network" or "=" not in line:
            continue
        key, value = (s.strip() for s in line.split("=", 1))
        if key == "config":
            base = value.strip('"').strip("'")
        elif key == "CC_MODE":
            mode = value
    if mode is not None:
        return cc_name(mode)
    if base is not None and (Path(path).parent / base).is_file():
        return config_cc(Path(path).parent / base)
    return None


def override_cc(sets, default):
    for s in sets:
        k, _, v = s.partition("=")
        if k.strip() in ("CC_MODE", "network.CC_MODE"):
            return cc_name(v)
    return default


def scenario_from_path(path, sets=()):
    """A scenario from a .toml file or an HPCC config.txt (run from the config's folder)."""
    p = Path(path)
    if not p.is_absolute():
        p = (Path.cwd() / p) if (Path.cwd() / p).exists() else REPO / p
    if not p.is_file():
        raise BenchError(f"scenario not found: {path}")
    p = p.resolve()
    if p.suffix == ".toml":
        cc = override_cc(sets, toml_cc(p) or "shipped CC")
        return Scenario(p.stem, cc, "toml", REPO, str(p), sets)
    cc = override_cc(sets, config_cc(p) or "shipped CC")
    return Scenario(f"{p.parent.name}/{p.stem}", cc, "config", p.parent, p.name, sets)


NO_TP = 'workload.ignore_groups=["TP"]'


def accuracy_scenarios(data, big, only, no_tp=False):
    def wanted(name):
        return not only or any(s in name for s in only)

    out = []
    for name in REFRUNS:
        if not wanted(name):
            continue
        folder = data / "refruns" / name
        if not folder.is_dir():
            raise BenchError(f"reference scenario folder not found: {folder} (pass --data DIR, the folder that "
                             f"holds refruns/, or leave it out with --only)")
        found = False
        for cc in ("dcqcn", "hpcc"):
            cfg = folder / f"config_{cc}.txt"
            if cfg.is_file():
                out.append(Scenario(name, config_cc(cfg) or cc.upper(), "config", folder, cfg.name))
                found = True
        if not found:
            raise BenchError(f"{folder} has neither config_dcqcn.txt nor config_hpcc.txt")
    for rel in TOMLS + (BIG_TOMLS if big else []):
        path = REPO / rel
        if not wanted(path.stem) and not (no_tp and wanted(path.stem + " no-TP")):
            continue
        if not path.is_file():
            raise BenchError(f"scenario not found: {path}")
        shipped = toml_cc(path) or "shipped CC"
        variants = [(path.stem, [])]
        # The paper's evaluation setting: intra-node TP traffic not simulated (GPT scenarios).
        if no_tp and path.stem.startswith("gpt"):
            variants.append((path.stem + " no-TP", [NO_TP]))
        for name, extra in variants:
            if not wanted(name):
                continue
            out.append(Scenario(name, shipped, "toml", REPO, str(path), extra))
            if shipped != "HPCC":
                out.append(Scenario(name, "HPCC", "toml", REPO, str(path), extra + ["CC_MODE=3"]))
    return out


# ---------------------------------------------------------------- running

class Run:
    def __init__(self, outdir, wall, events, loop_s, skip):
        self.outdir, self.wall, self.events, self.loop_s, self.skip = outdir, wall, events, loop_s, skip


def tail(path, n=STDERR_TAIL):
    try:
        lines = Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return "(no stderr)"
    return "\n".join(lines[-n:]) if lines else "(stderr empty)"


def run_sim(binary, sc, workdir, tag, on, theta, window, timeout, step, extra_sets=(), extra_args=(), mode=""):
    """Runs one simulation (without -q), returns a Run; raises BenchError on a failure. `extra_sets` are more
    --set KEY=VALUE, `extra_args` more arguments (e.g. --memo FILE), `mode` a word for the progress line."""
    outdir = workdir / tag
    stdout_path, stderr_path = workdir / f"{tag}.stdout.txt", workdir / f"{tag}.stderr.txt"
    cmd = [str(binary), "run", sc.target, "-o", str(outdir)] + list(extra_args)
    for s in sc.sets + sc.wormhole_sets(on, theta, window) + list(extra_sets):
        cmd += ["--set", s]
    what = f"{sc.label} " + (f"Wormhole on (theta {theta:g}, window {window}{', ' + mode if mode else ''})" if on
                             else "packet mode")
    log(f"[{step}] {what} ...")
    with open(stdout_path, "w") as fo, open(stderr_path, "w") as fe:
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, cwd=sc.cwd, stdout=fo, stderr=fe, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise BenchError(f"{what}: timed out after {timeout} s\n  command: {' '.join(cmd)}\n  in: {sc.cwd}\n"
                             f"--- stderr (last lines) ---\n{tail(stderr_path)}")
        wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise BenchError(f"{what}: wormhole exited with status {proc.returncode}\n  command: {' '.join(cmd)}\n"
                         f"  in: {sc.cwd}\n--- stderr (last lines) ---\n{tail(stderr_path)}")
    out = stdout_path.read_text(errors="replace")
    m = EVENTS_RE.search(out)
    if not m:
        raise BenchError(f"{what}: no 'events N in X s wall' line in the output ({stdout_path}):\n{out[-2000:]}")
    sm = SKIP_RE.search(out)
    if on and not sm:
        raise BenchError(f"{what}: no 'wormhole: ... skips ...' line in the output: is Wormhole in this binary?\n"
                         f"{out[-2000:]}")
    if not on and sm:
        raise BenchError(f"{what}: the baseline printed a 'wormhole:' skip line: Wormhole was not switched off")
    skip = None
    if sm:
        skip = {"skips": int(sm.group(1)), "skip_backs": int(sm.group(2)), "checks": int(sm.group(3)),
                "packets": int(sm.group(4)), "skipped": int(sm.group(5)), "skipped_pct": float(sm.group(6)),
                "ff_time_s": float(sm.group(7)), "partitions": int(sm.group(8))}
    fct = outdir / "fct.txt"
    if not fct.is_file():
        raise BenchError(f"{what}: no {fct} after the run")
    if sc.kind == "toml" and not (outdir / "iterations.csv").is_file():
        raise BenchError(f"{what}: no {outdir / 'iterations.csv'} after the run")
    run = Run(outdir, wall, int(m.group(1)), float(m.group(2)), skip)
    run.stdout = out
    log(f"      {wall:.2f} s wall, {int(m.group(1)):,} events"
        + (f", {skip['skips']} skips, ~{skip['skipped']:,} events skipped ({skip['skipped_pct']:.2f} %)" if skip else ""))
    return run


def remove_run(workdir, tag):
    shutil.rmtree(workdir / tag, ignore_errors=True)
    for suffix in (".stdout.txt", ".stderr.txt"):
        (workdir / f"{tag}{suffix}").unlink(missing_ok=True)


# ---------------------------------------------------------------- comparing

def fct_records(path):
    """(key, fct_ns) per line of an HPCC fct.txt, in file order."""
    with open(path) as f:
        for n, line in enumerate(f, 1):
            p = line.split()
            if not p:
                continue
            if len(p) < 7:
                raise BenchError(f"{path}:{n}: expected 'srcip dstip sport dport size start_ns fct_ns ...'")
            yield (p[0], p[1], p[2], p[3]), int(p[6])


def rel(on, off):
    if off == 0:
        return 0.0 if on == 0 else math.inf
    return abs(on - off) / off


def compare_fct(off_path, on_path):
    """Per-flow relative FCT errors. Both files are read in lockstep: flows on the same line with the same key
    are compared at once, the others wait in a dict for their partner, so memory stays small when the two
    files list flows in (nearly) the same order, and the result does not depend on the order."""
    errs = array("d")
    off_wait, on_wait = {}, {}
    off_it, on_it = fct_records(off_path), fct_records(on_path)
    while True:
        a, b = next(off_it, None), next(on_it, None)
        if a is None and b is None:
            break
        if a is not None and b is not None and a[0] == b[0]:
            errs.append(rel(b[1], a[1]))
            continue
        if a is not None:
            if a[0] in on_wait:
                errs.append(rel(on_wait.pop(a[0]), a[1]))
            else:
                off_wait[a[0]] = a[1]
        if b is not None:
            if b[0] in off_wait:
                errs.append(rel(b[1], off_wait.pop(b[0])))
            else:
                on_wait[b[0]] = b[1]
    res = {"n": len(errs), "unmatched_off": len(off_wait), "unmatched_on": len(on_wait),
           "mean": None, "p99": None, "max": None}
    if errs:
        s = sorted(errs)
        res["mean"] = math.fsum(s) / len(s)
        res["p99"] = s[max(0, math.ceil(0.99 * len(s)) - 1)]
        res["max"] = s[-1]
    return res


def read_iterations(path):
    rows = {}
    with open(path) as f:
        header = f.readline().strip().split(",")
        try:
            i_it, i_time, i_done = header.index("iteration"), header.index("time_us"), header.index("complete")
        except ValueError:
            raise BenchError(f"{path}: header is not 'iteration,start_us,end_us,time_us,complete'")
        for line in f:
            p = line.strip().split(",")
            if len(p) > max(i_it, i_time, i_done):
                rows[int(p[i_it])] = (float(p[i_time]), p[i_done].strip() == "1")
    return rows


def compare_iterations(off_path, on_path, label, notes):
    off, on = read_iterations(off_path), read_iterations(on_path)
    worst = None
    for it in sorted(set(off) | set(on)):
        if it not in off or it not in on:
            notes.append(f"{label}: iteration {it} only in the {'off' if it in off else 'on'}-run's iterations.csv")
            continue
        (t_off, c_off), (t_on, c_on) = off[it], on[it]
        if not (c_off and c_on):
            notes.append(f"{label}: iteration {it} incomplete in the {'off' if not c_off else 'on'}-run")
        e = rel(t_on, t_off)
        worst = e if worst is None else max(worst, e)
    return worst


def measure_pair(binary, sc, workdir, tag, theta, window, timeout, step, keep, notes, off=None):
    """Off-run (unless given) and on-run of sc; returns the row dict. Removes the on-run's files unless keep."""
    if off is None:
        off = run_sim(binary, sc, workdir, f"{tag}-off", False, theta, window, timeout, step + " off")
    on = run_sim(binary, sc, workdir, f"{tag}-on", True, theta, window, timeout, step + " on")
    f = compare_fct(off.outdir / "fct.txt", on.outdir / "fct.txt")
    if f["unmatched_off"] or f["unmatched_on"]:
        notes.append(f"{sc.label} θ={theta:g} l={window}: {f['unmatched_off']} flows only in the off-run's fct.txt, "
                     f"{f['unmatched_on']} only in the on-run's (not compared)")
    it_err = None
    if sc.kind == "toml":
        it_err = compare_iterations(off.outdir / "iterations.csv", on.outdir / "iterations.csv",
                                    f"{sc.label} θ={theta:g} l={window}", notes)
    if not keep:
        remove_run(workdir, f"{tag}-on")
    return {"sc": sc, "theta": theta, "window": window, "fct": f, "iter": it_err, "off": off, "on": on}


# ---------------------------------------------------------------- tables

def pct(x, digits=3):
    """x as a percentage; values below 10^-digits % in scientific notation, so that tiny is not shown as 0."""
    if x is None:
        return "–"
    if math.isinf(x):
        return "inf"
    if x == 0:
        return "0 %"
    if 100 * x < 10 ** -digits:
        return f"{100 * x:.1e} %"
    return f"{100 * x:.{digits}f} %"


def ratio(a, b):
    return f"{a / b:.2f}x" if b > 0 else "–"


def flag(x, target):
    if x is None:
        return "–"
    return "ok" if x < target else "MISS"


def md_table(header, rows, align=None):
    align = align or ["l"] * len(header)
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def accuracy_table(rows):
    header = ["scenario", "CC", "flows", "unmatched off/on", "mean FCT err", "p99 FCT err", "max FCT err",
              "iter err (max)", "events off", "events on", "skipped by on", "skips", "skip-backs",
              "wall off", "wall on", "speedup", "loop speedup", "FCT < 1 %", "iter < 0.5 %"]
    out = []
    for r in rows:
        f, off, on = r["fct"], r["off"], r["on"]
        out.append([r["sc"].name, r["sc"].cc, f"{f['n']:,}", f"{f['unmatched_off']}/{f['unmatched_on']}",
                    pct(f["mean"]), pct(f["p99"]), pct(f["max"]), pct(r["iter"], 4),
                    f"{off.events:,}", f"{on.events:,}",
                    f"{on.skip['skipped']:,} ({on.skip['skipped_pct']:.2f} %)", on.skip["skips"],
                    on.skip["skip_backs"], f"{off.wall:.2f} s", f"{on.wall:.2f} s", ratio(off.wall, on.wall),
                    ratio(off.loop_s, on.loop_s), flag(f["mean"], TARGET_FCT), flag(r["iter"], TARGET_ITER)])
    return md_table(header, out, ["l", "l"] + ["r"] * (len(header) - 2))


def sweep_tables(rows, thetas, windows):
    by = {(r["theta"], r["window"]): r for r in rows}
    grid = []
    for t in thetas:
        line = [f"{t:g}"]
        for w in windows:
            r = by[(t, w)]
            line.append(f"{pct(r['fct']['mean'])} / {pct(r['fct']['p99'])} / {pct(r['iter'], 4)} / "
                        f"{r['on'].skip['skipped_pct']:.2f} % / {ratio(r['off'].wall, r['on'].wall)}")
        grid.append(line)
    grid_md = md_table(["θ \\ l"] + [str(w) for w in windows], grid, ["l"] + ["r"] * len(windows))
    header = ["θ", "l", "flows", "mean FCT err", "p99 FCT err", "max FCT err", "iter err (max)", "events on",
              "skipped %", "skips", "skip-backs", "wall on", "speedup", "FCT < 1 %", "iter < 0.5 %"]
    long_rows = []
    for t in thetas:
        for w in windows:
            r = by[(t, w)]
            f, on = r["fct"], r["on"]
            long_rows.append([f"{t:g}", w, f"{f['n']:,}", pct(f["mean"]), pct(f["p99"]), pct(f["max"]),
                              pct(r["iter"], 4), f"{on.events:,}", f"{on.skip['skipped_pct']:.2f} %",
                              on.skip["skips"], on.skip["skip_backs"], f"{on.wall:.2f} s",
                              ratio(r["off"].wall, on.wall), flag(f["mean"], TARGET_FCT), flag(r["iter"], TARGET_ITER)])
    return grid_md, md_table(header, long_rows, ["r"] * len(header))


# ---------------------------------------------------------------- main

def parse_list(text, conv, what):
    try:
        vals = [conv(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise BenchError(f"{what}: '{text}' is not a comma-separated list of numbers")
    if not vals:
        raise BenchError(f"{what}: empty list")
    return vals


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--build", default=str(DEFAULT_BUILD), help=f"build folder with the wormhole binary "
                    f"(default {DEFAULT_BUILD})")
    ap.add_argument("--data", default=str(DEFAULT_DATA), help=f"test data root holding refruns/ "
                    f"(default {DEFAULT_DATA})")
    ap.add_argument("--theta", type=float, default=0.05, help="Wormhole θ of the accuracy table (default 0.05)")
    ap.add_argument("--window", type=int, default=2000, help="Wormhole window l of the accuracy table (default 2000)")
    ap.add_argument("--only", default="", help="NAME[,NAME]: accuracy scenarios whose name contains one of these")
    ap.add_argument("--big", action="store_true", help="add gpt13b-128g (~4 min and 11 GB per packet-mode run)")
    ap.add_argument("--no-tp", action="store_true",
                    help="also run each GPT scenario with its TP collectives not simulated (workload.ignore_groups="
                         "[\"TP\"]: the Wormhole paper's evaluation setting), named '<scenario> no-TP'")
    ap.add_argument("--sweep", action="store_true", help="also run the θ × l sweep")
    ap.add_argument("--sweep-only", action="store_true", help="run only the sweep (implies --sweep)")
    ap.add_argument("--sweep-scenario", default=DEFAULT_SWEEP_SCENARIO,
                    help=f"a .toml scenario or an HPCC config.txt (default {DEFAULT_SWEEP_SCENARIO})")
    ap.add_argument("--sweep-thetas", default=",".join(f"{t:g}" for t in DEFAULT_SWEEP_THETAS))
    ap.add_argument("--sweep-windows", default=",".join(str(w) for w in DEFAULT_SWEEP_WINDOWS))
    ap.add_argument("--sweep-set", action="append", default=[], metavar="KEY=VALUE",
                    help="extra --set for every run of the sweep (off and on), e.g. CC_MODE=3")
    ap.add_argument("--out", help="also write the tables to this file")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder with every run's outputs")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per run (default 3600)")
    args = ap.parse_args()
    if args.sweep_only:
        args.sweep = True

    binary = Path(args.build).resolve() / "wormhole"
    if not binary.is_file() or not os.access(binary, os.X_OK):
        raise BenchError(f"wormhole binary not found or not executable: {binary}\n"
                         f"  build it (cmake --build {args.build}) or pass --build DIR (the folder holding wormhole)")
    if args.theta <= 0 or args.window < 1:
        raise BenchError("--theta must be > 0 and --window >= 1")
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    scenarios = [] if args.sweep_only else accuracy_scenarios(Path(args.data).resolve(), args.big, only, args.no_tp)
    if not args.sweep_only and not scenarios:
        raise BenchError(f"--only {args.only}: no accuracy scenario matches (names: {', '.join(REFRUNS)}, "
                         f"{', '.join(Path(t).stem for t in TOMLS)}; {', '.join(Path(t).stem for t in BIG_TOMLS)} "
                         f"only with --big; '<gpt scenario> no-TP' only with --no-tp)")
    sweep_sc = thetas = windows = None
    if args.sweep:
        sweep_sc = scenario_from_path(args.sweep_scenario, args.sweep_set)
        thetas = parse_list(args.sweep_thetas, float, "--sweep-thetas")
        windows = parse_list(args.sweep_windows, int, "--sweep-windows")
        if min(thetas) <= 0 or min(windows) < 1:
            raise BenchError("sweep θ must be > 0 and windows >= 1")

    workdir = Path(tempfile.mkdtemp(prefix="bench_wormhole_"))
    sections, notes = [], []
    try:
        local = workdir / "wormhole"
        shutil.copy2(binary, local)
        version = subprocess.run([str(local), "--version"], capture_output=True, text=True).stdout.strip()
        n_runs = 2 * len(scenarios) + (1 + len(thetas) * len(windows) if args.sweep else 0)
        log(f"bench_wormhole: {n_runs} runs, one at a time; work folder {workdir}")
        head = [f"# Wormhole benchmark", "",
                f"{version or 'wormhole'} ({binary}), {time.strftime('%Y-%m-%d %H:%M')}, "
                f"{os.cpu_count()} CPUs. Errors are |on - off| / off per flow (FCT) or per iteration; "
                f"speedup = whole-process wall time off / on."]
        step = 0

        if scenarios:
            rows = []
            for i, sc in enumerate(scenarios):
                step += 2
                tag = f"acc{i}"
                rows.append(measure_pair(local, sc, workdir, tag, args.theta, args.window, args.timeout,
                                         f"{step - 1}-{step}/{n_runs}", args.keep, notes))
                if not args.keep:
                    remove_run(workdir, f"{tag}-off")
            sections.append(f"## accuracy (θ = {args.theta:g}, l = {args.window})\n\n" + accuracy_table(rows))

        if args.sweep:
            step += 1
            off = run_sim(local, sweep_sc, workdir, "sweep-off", False, None, None, args.timeout,
                          f"{step}/{n_runs} sweep baseline")
            rows = []
            for t in thetas:
                for w in windows:
                    step += 1
                    rows.append(measure_pair(local, sweep_sc, workdir, f"sweep-t{t:g}-l{w}", t, w, args.timeout,
                                             f"{step}/{n_runs} sweep", args.keep, notes, off=off))
            grid, long_table = sweep_tables(rows, thetas, windows)
            extra = f", extra --set {' '.join(args.sweep_set)}" if args.sweep_set else ""
            sections.append(
                f"## sweep: {sweep_sc.name} ({sweep_sc.cc}{extra}); baseline {off.wall:.2f} s wall, "
                f"{off.events:,} events\n\n"
                "Each cell: mean FCT err / p99 FCT err / iteration err (max) / events skipped % / speedup.\n\n"
                + grid + "\n\n" + long_table)

        text = "\n".join(head) + "\n\n" + "\n\n".join(sections) + "\n"
        if notes:
            text += "\nNotes:\n" + "\n".join(f"* {n}" for n in notes) + "\n"
        if args.keep:
            text += f"\nOutputs kept in {workdir}\n"
        print(text, end="")
        if args.out:
            Path(args.out).write_text(text)
            log(f"bench_wormhole: tables written to {args.out}")
    finally:
        if args.keep:
            log(f"bench_wormhole: outputs kept in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


def cli(main_fn, name):
    """Runs a benchmark's main: exit status 1 with a message on a BenchError, 130 on ^C."""
    try:
        sys.exit(main_fn())
    except BenchError as e:
        print(f"{name}: error: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        print(f"{name}: interrupted", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    cli(main, "bench_wormhole")
