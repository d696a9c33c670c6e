#!/usr/bin/python3
"""What memoization adds to Wormhole: full Wormhole (steady-state skipping + memoized unsteady periods)
against steady-state skipping alone and against packet mode, and a warm start from the first run's memo file.

Usage: bench_memo.py [--build DIR] [--data DIR] [--theta T] [--window L] [--only NAME[,NAME]] [--cc NAME] [--big]
                     [--scenario PATH [--set KEY=VALUE ...]] [--out FILE] [--keep] [--timeout S]

Each scenario (the accuracy scenarios of bench_wormhole.py with --no-tp: refruns configs, moe-32g, gpt7b-64g and
"gpt7b-64g no-TP", + gpt13b-128g with --big; each GPT/MoE one with its shipped DCQCN and with HPCC; --only keeps
those whose name contains one of the substrings, --cc those with that CC; --scenario PATH runs only that .toml
scenario or HPCC config.txt, with --set overrides) is run four times by the same binary, one run at a time:
  off   packet mode (Wormhole off)
  ff    Wormhole with memoization off: steady-state detection and fast-forward only
  memo  full Wormhole, cold: [wormhole] memo = true (WORMHOLE_MEMO=1); writes memo.h5
  warm  full Wormhole warm-started from the memo run's memo.h5 (wormhole run --memo FILE)
θ and l as given (default 0.05 and 2000) for ff, memo and warm.

Reported per scenario: wall time of each run (whole process, time.perf_counter around the subprocess), the
speedups memo/ff (what memoization adds; the paper reports 1.93-8.43x), off/memo, and memo/warm (the warm-start
speedup); events skipped (% of executed + skipped, the runs' own estimate); from the memo run's summary line
"memo: P unsteady periods: R replayed (H hits), C simulated to convergence (...), E ended before converging; N
patterns": the replay rate R / (R + C) — of the periods that could be served, the share replayed (E, periods
cut short by a flow's end or a membership change, are neither) —, the replays R and distinct patterns N, and
the same for the warm run; the memo file's size on disk; per-flow FCT error against the
off-run (mean and p99 of |on - off| / off over flows joined on (srcip, dstip, sport, dport)) for ff, memo and
warm, and the worst iteration-time error (.toml scenarios). Targets: mean FCT error < 1 %, iteration < 0.5 %.

Time it takes: 4 runs per scenario; refruns and moe-32g take seconds; gpt7b-64g about 55-70 s per run where
little is skipped (about 5 minutes per CC); the no-TP variants a few seconds per run; gpt13b-128g (--big) about
4 minutes and 11 GB per run where little is skipped. Python 3 standard library only; the comparison and
run helpers are bench_wormhole.py's.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_wormhole import (DEFAULT_BUILD, DEFAULT_DATA, TARGET_FCT, TARGET_ITER, BenchError,  # noqa: E402
                            accuracy_scenarios, compare_fct, compare_iterations, flag, log, md_table, pct,
                            cli, remove_run, run_sim, scenario_from_path)

MEMO_RE = re.compile(r"^memo: (\d+) unsteady periods: (\d+) replayed \((\d+) hits\), (\d+) simulated to convergence "
                     r"\((\d+) new patterns, (\d+) repeats\), (\d+) ended before converging [^;]*; (\d+) patterns -> "
                     r"(.+?)( \(warm start.*)?$", re.M)


def memo_stats(run, what):
    m = MEMO_RE.search(run.stdout)
    if not m:
        raise BenchError(f"{what}: no 'memo: ...' summary line in the output:\n{run.stdout[-2000:]}")
    periods, replayed, hits, converged = int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4))
    # Of the periods that could be served at all (replayed, or simulated until they converged), the
    # share replayed; periods that ended first (a flow ended, membership changed) are neither.
    servable = replayed + converged
    return {"periods": periods, "hits": hits, "replayed": replayed, "patterns": int(m.group(8)),
            "file": Path(m.group(9).strip()), "hit_rate": replayed / servable if servable else None}


def memo_sets(sc):
    return ["WORMHOLE_MEMO=1"] if sc.kind == "config" else ["wormhole.memo=true"]


def measure(binary, sc, workdir, tag, theta, window, timeout, step, keep, notes):
    """The four runs of one scenario; returns the row dict."""
    off = run_sim(binary, sc, workdir, f"{tag}-off", False, theta, window, timeout, f"{step} off")
    ff = run_sim(binary, sc, workdir, f"{tag}-ff", True, theta, window, timeout, f"{step} ff", mode="memo off")
    memo = run_sim(binary, sc, workdir, f"{tag}-memo", True, theta, window, timeout, f"{step} memo",
                   extra_sets=memo_sets(sc), mode="memo, cold")
    ms = memo_stats(memo, f"{sc.label} memo")
    if not ms["file"].is_file():
        raise BenchError(f"{sc.label}: the memo run wrote no {ms['file']}")
    db = workdir / f"{tag}-memo.h5"
    shutil.copy2(ms["file"], db)
    warm = run_sim(binary, sc, workdir, f"{tag}-warm", True, theta, window, timeout, f"{step} warm",
                   extra_args=["--memo", str(db)], mode="memo, warm start")
    ws = memo_stats(warm, f"{sc.label} warm")
    row = {"sc": sc, "off": off, "ff": ff, "memo": memo, "warm": warm, "ms": ms, "ws": ws,
           "db_bytes": db.stat().st_size, "fct": {}, "iter": {}}
    for name, run in (("ff", ff), ("memo", memo), ("warm", warm)):
        f = compare_fct(off.outdir / "fct.txt", run.outdir / "fct.txt")
        if f["unmatched_off"] or f["unmatched_on"]:
            notes.append(f"{sc.label} {name}: {f['unmatched_off']} flows only in the off-run's fct.txt, "
                         f"{f['unmatched_on']} only in the {name}-run's (not compared)")
        row["fct"][name] = f
        if sc.kind == "toml":
            row["iter"][name] = compare_iterations(off.outdir / "iterations.csv", run.outdir / "iterations.csv",
                                                   f"{sc.label} {name}", notes)
    if not keep:
        for name in ("off", "ff", "memo", "warm"):
            remove_run(workdir, f"{tag}-{name}")
    return row


def x(a, b):
    return f"{a / b:.2f}x" if b > 0 else "–"


def tables(rows):
    speed = []
    for r in rows:
        sk = [r[n].skip["skipped_pct"] for n in ("ff", "memo", "warm")]
        speed.append([r["sc"].name, r["sc"].cc, f"{r['off'].wall:.2f}", f"{r['ff'].wall:.2f}", f"{r['memo'].wall:.2f}",
                      f"{r['warm'].wall:.2f}", x(r["ff"].wall, r["memo"].wall), x(r["off"].wall, r["memo"].wall),
                      x(r["memo"].wall, r["warm"].wall), x(r["off"].wall, r["warm"].wall),
                      " / ".join(f"{s:.1f}" for s in sk)])
    memo = []
    for r in rows:
        ms, ws = r["ms"], r["ws"]
        memo.append([r["sc"].name, r["sc"].cc, ms["periods"], pct(ms["hit_rate"], 1), ms["replayed"], ms["patterns"],
                     f"{r['db_bytes'] / 1024:.1f}", ws["periods"], pct(ws["hit_rate"], 1), ws["replayed"]])
    # "replay rate" = replayed / (replayed + simulated to convergence)
    acc = []
    for r in rows:
        f, it = r["fct"], r["iter"]
        acc.append([r["sc"].name, r["sc"].cc, f["memo"]["n"]]
                   + [pct(f[n]["mean"]) for n in ("ff", "memo", "warm")] + [pct(f[n]["p99"]) for n in ("memo", "warm")]
                   + [pct(it.get(n)) for n in ("ff", "memo", "warm")]
                   + [flag(max(f["memo"]["mean"] or 0, f["warm"]["mean"] or 0), TARGET_FCT),
                      flag(max(it["memo"], it["warm"]) if it.get("memo") is not None else None, TARGET_ITER)])
    return (md_table(["scenario", "CC", "wall off s", "ff s", "memo s", "warm s", "memo vs ff", "memo vs off",
                      "warm vs memo", "warm vs off", "events skipped % ff / memo / warm"], speed, ["l", "l"] + ["r"] * 9),
            md_table(["scenario", "CC", "periods", "replay rate", "replayed", "patterns", "memo.h5 KB", "warm periods",
                      "warm replay rate", "warm replayed"], memo, ["l", "l"] + ["r"] * 8),
            md_table(["scenario", "CC", "flows", "mean FCT err ff", "memo", "warm", "p99 memo", "p99 warm",
                      "iter err ff", "memo", "warm", "FCT < 1 %", "iter < 0.5 %"], acc, ["l", "l"] + ["r"] * 11))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--build", default=str(DEFAULT_BUILD), help=f"folder with the wormhole binary (default {DEFAULT_BUILD})")
    ap.add_argument("--data", default=str(DEFAULT_DATA), help=f"test data root holding refruns/ (default {DEFAULT_DATA})")
    ap.add_argument("--theta", type=float, default=0.05, help="Wormhole θ (default 0.05)")
    ap.add_argument("--window", type=int, default=2000, help="Wormhole window l (default 2000)")
    ap.add_argument("--only", default="", help="NAME[,NAME]: scenarios whose name contains one of these")
    ap.add_argument("--cc", default="", help="only scenarios run with this CC (DCQCN, HPCC, ...)")
    ap.add_argument("--big", action="store_true", help="add gpt13b-128g (~4 min and 11 GB per packet-mode run)")
    ap.add_argument("--scenario", help="run only this .toml scenario or HPCC config.txt")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override for --scenario (repeatable)")
    ap.add_argument("--out", help="also write the tables to this file")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder with every run's outputs")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per run (default 3600)")
    args = ap.parse_args()
    binary = Path(args.build).resolve() / "wormhole"
    if not binary.is_file() or not os.access(binary, os.X_OK):
        raise BenchError(f"wormhole binary not found or not executable: {binary} (build it, or pass --build DIR)")
    if not 0 < args.theta < 1 or args.window < 1:
        raise BenchError("--theta must be in (0, 1) and --window >= 1")
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    if args.scenario:
        scenarios = [scenario_from_path(args.scenario, args.set)]
    else:
        scenarios = accuracy_scenarios(Path(args.data).resolve(), args.big, only, no_tp=True)
    if args.cc:
        scenarios = [sc for sc in scenarios if sc.cc.upper() == args.cc.upper()]
    if not scenarios:
        raise BenchError(f"--only {args.only}: no scenario matches")
    workdir = Path(tempfile.mkdtemp(prefix="bench_memo_"))
    notes = []
    try:
        local = workdir / "wormhole"
        shutil.copy2(binary, local)  # a rebuild during the benchmark cannot mix two binaries
        version = subprocess.run([str(local), "--version"], capture_output=True, text=True).stdout.strip()
        log(f"bench_memo: {4 * len(scenarios)} runs, one at a time; work folder {workdir}")
        rows = [measure(local, sc, workdir, f"s{i}", args.theta, args.window, args.timeout,
                        f"{i + 1}/{len(scenarios)}", args.keep, notes) for i, sc in enumerate(scenarios)]
        speed, memo, acc = tables(rows)
        text = (f"# Memoization benchmark\n\n{version or 'wormhole'} ({binary}), {time.strftime('%Y-%m-%d %H:%M')}, "
                f"{os.cpu_count()} CPUs; θ = {args.theta:g}, l = {args.window}. ff = steady-state skipping alone, "
                f"memo = full Wormhole (cold), warm = full Wormhole warm-started from the memo run's file.\n\n"
                f"## speed\n\n{speed}\n\n## memoization\n\n{memo}\n\n## accuracy against packet mode\n\n{acc}\n")
        if notes:
            text += "\nNotes:\n" + "\n".join(f"* {n}" for n in notes) + "\n"
        print(text, end="")
        if args.out:
            Path(args.out).write_text(text)
    finally:
        if args.keep:
            log(f"bench_memo: outputs kept in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    cli(main, "bench_memo")
