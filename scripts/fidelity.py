#!/usr/bin/python3
"""Fidelity report: wormhole against the HPCC ns-3 reference runs.

Usage: fidelity.py [--cc dcqcn|hpcc|all] [--seeds N] [--wormhole PATH] [--data DIR]

For every scenario folder in DIR (default <repo>/tests/data/refruns) and every selected CC that has
both a config_<cc>.txt and a reference out_<cc>/fct.txt, the inputs are copied to a temporary folder,
`wormhole run config_<cc>.txt` is run there, and its fct.txt is joined per flow with the reference's on
(sip, dip, sport, dport). The table gives the per-flow relative FCT error |ours - ref| / ref (mean,
nearest-rank p99 and max, in %), mean FCT and makespan (ours vs ref, µs) and the PFC frame count (lines
of pfc.txt, ours vs ref).

With --seeds N > 1 every run is repeated with `--set SEED=k` for k = 1..N and a second table shows the
spread (min / mean / max over the seeds) of the mean FCT and of the makespan, and where the reference's
mean FCT falls in it. The DCQCN incast depends on random ECN marking (our RNG is not ns-3's), so its
per-flow FCTs are not expected to match; the ring scenarios have no congestion and match exactly.

Exit status: 0 when every run completed (whatever the errors are: this is a report, not a test),
1 if a wormhole run failed, 2 if the wormhole binary is missing or the data folder is empty.
Standard library only; run it with /usr/bin/python3 or any Python >= 3.8.
"""
import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO / "tests" / "data" / "refruns"
DEFAULT_WORMHOLE = REPO / "build" / "wormhole"
RUN_TIMEOUT_S = 600


def read_fct(path):
    """fct.txt -> {(sip, dip, sport, dport): (start_ns, fct_ns)}."""
    flows = {}
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            t = line.split()
            if not t:
                continue
            if len(t) < 8:
                raise ValueError(f"{path}:{lineno}: expected 8 fields, got {len(t)}")
            key = (t[0], t[1], int(t[2]), int(t[3]))
            flows[key] = (int(t[5]), int(t[6]))
    return flows


def count_lines(path):
    try:
        with open(path) as f:
            return sum(1 for line in f if line.strip())
    except FileNotFoundError:
        return None


def nearest_rank(values, p):
    if not values:
        return math.nan
    s = sorted(values)
    return s[max(1, math.ceil(p * len(s))) - 1]


def mean(values):
    return sum(values) / len(values) if values else math.nan


def makespan_us(flows):
    if not flows:
        return math.nan
    first = min(start for start, _ in flows.values())
    last = max(start + fct for start, fct in flows.values())
    return (last - first) / 1000.0


def mean_fct_us(flows):
    return mean([fct / 1000.0 for _, fct in flows.values()])


def copy_inputs(scenario_dir, dest):
    """Copies the scenario's input files (not the reference outputs) into dest."""
    for p in scenario_dir.iterdir():
        if p.is_file():
            shutil.copy2(p, dest / p.name)


def run_wormhole(wormhole, workdir, cc, seed=None):
    (workdir / "out" / cc).mkdir(parents=True, exist_ok=True)
    # Remove outputs of a previous run in the same folder, so a failed run cannot report stale files.
    for name in ("fct.txt", "pfc.txt", "results.h5"):
        (workdir / "out" / cc / name).unlink(missing_ok=True)
    cmd = [str(wormhole), "run", f"config_{cc}.txt", "-q"]
    if seed is not None:
        cmd += ["--set", f"SEED={seed}"]
    proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} (in {workdir}) exited with {proc.returncode}:\n"
                           f"{proc.stderr.strip()}")
    ours = read_fct(workdir / "out" / cc / "fct.txt")
    pfc = count_lines(workdir / "out" / cc / "pfc.txt")
    warnings = [l for l in proc.stderr.splitlines() if l.strip()]
    return ours, pfc, warnings


def compare(ours, ref):
    matched = sorted(set(ours) & set(ref))
    errs = [abs(ours[k][1] - ref[k][1]) / ref[k][1] * 100.0 for k in matched if ref[k][1] > 0]
    return matched, errs


def fmt(x, spec=".1f"):
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def print_table(header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    line = "  ".join(h.ljust(w) if i < 2 else h.rjust(w) for i, (h, w) in enumerate(zip(header, widths)))
    print(line)
    print("-" * len(line))
    for r in rows:
        print("  ".join(str(c).ljust(w) if i < 2 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cc", choices=["dcqcn", "hpcc", "all"], default="all")
    ap.add_argument("--seeds", type=int, default=1, help="also run SEED=1..N and report the spread (N > 1)")
    ap.add_argument("--wormhole", default=os.environ.get("WORMHOLE", str(DEFAULT_WORMHOLE)),
                    help=f"wormhole binary (default $WORMHOLE or {DEFAULT_WORMHOLE})")
    ap.add_argument("--data", default=str(DEFAULT_DATA), help=f"reference runs folder (default {DEFAULT_DATA})")
    args = ap.parse_args()

    wormhole = Path(args.wormhole).resolve()
    if not wormhole.is_file() or not os.access(wormhole, os.X_OK):
        print(f"fidelity.py: error: wormhole binary not found or not executable: {wormhole}\n"
              f"  build it with `cmake --build {REPO / 'build'}` or pass --wormhole PATH", file=sys.stderr)
        return 2
    data = Path(args.data).resolve()
    scenarios = sorted(p for p in data.iterdir() if p.is_dir()) if data.is_dir() else []
    if not scenarios:
        print(f"fidelity.py: error: no scenario folders in {data}", file=sys.stderr)
        return 2
    ccs = ["dcqcn", "hpcc"] if args.cc == "all" else [args.cc]

    rows, spread_rows, notes, failed = [], [], [], False
    with tempfile.TemporaryDirectory(prefix="wh-fidelity-") as tmp:
        # Run a private copy: the build folder's binary may be relinked while this report runs.
        shutil.copy2(wormhole, Path(tmp) / "wormhole")
        binary = Path(tmp) / "wormhole"
        for sc in scenarios:
            for cc in ccs:
                cfg, ref_fct = sc / f"config_{cc}.txt", sc / f"out_{cc}" / "fct.txt"
                if not cfg.is_file() or not ref_fct.is_file():
                    notes.append(f"{sc.name} {cc}: skipped (no {cfg.name} or out_{cc}/fct.txt)")
                    continue
                work = Path(tmp) / f"{sc.name}-{cc}"
                work.mkdir()
                copy_inputs(sc, work)
                ref = read_fct(ref_fct)
                ref_pfc = count_lines(sc / f"out_{cc}" / "pfc.txt")
                try:
                    ours, pfc, warns = run_wormhole(binary, work, cc)
                except (RuntimeError, subprocess.TimeoutExpired, OSError, ValueError) as e:
                    failed = True
                    notes.append(f"{sc.name} {cc}: RUN FAILED: {e}")
                    rows.append([sc.name, cc, "FAILED"] + ["-"] * 9)
                    continue
                notes += [f"{sc.name} {cc}: {w}" for w in warns]
                matched, errs = compare(ours, ref)
                rows.append([sc.name, cc, f"{len(matched)}/{len(ref)}" + ("" if len(ours) == len(ref) else f" (ours {len(ours)})"),
                             fmt(mean(errs), ".2f"), fmt(nearest_rank(errs, 0.99), ".2f"),
                             fmt(max(errs) if errs else math.nan, ".2f"),
                             fmt(mean_fct_us(ours)), fmt(mean_fct_us(ref)),
                             fmt(makespan_us(ours)), fmt(makespan_us(ref)),
                             "n/a" if pfc is None else pfc, "n/a" if ref_pfc is None else ref_pfc])

                if args.seeds > 1:
                    means, spans = [], []
                    for seed in range(1, args.seeds + 1):
                        try:
                            o, _, _ = run_wormhole(binary, work, cc, seed)
                        except (RuntimeError, subprocess.TimeoutExpired, OSError, ValueError) as e:
                            failed = True
                            notes.append(f"{sc.name} {cc} SEED={seed}: RUN FAILED: {e}")
                            continue
                        means.append(mean_fct_us(o))
                        spans.append(makespan_us(o))
                    if not means:
                        continue
                    r = mean_fct_us(ref)
                    lo, hi = min(means), max(means)
                    if r < lo:
                        where = f"below ({(lo - r) / r * 100:.1f}% under min)"
                    elif r > hi:
                        where = f"above ({(r - hi) / r * 100:.1f}% over max)"
                    else:
                        where = f"inside ({sum(m <= r for m in means)}/{len(means)} seeds <= ref)"
                    spread_rows.append([sc.name, cc, len(means),
                                        f"{fmt(lo)} / {fmt(mean(means))} / {fmt(hi)}", fmt(r), where,
                                        f"{fmt(min(spans))} / {fmt(mean(spans))} / {fmt(max(spans))}",
                                        fmt(makespan_us(ref))])

    print(f"wormhole {wormhole}\nreference {data}\n")
    print("per-flow FCT error |ours-ref|/ref over flows matched on (sip, dip, sport, dport); p99 nearest rank")
    print_table(["scenario", "cc", "matched", "err mean%", "err p99%", "err max%", "FCT mean us",
                 "ref", "makespan us", "ref", "PFC", "ref"], rows)
    if spread_rows:
        print(f"\nspread over seeds (SEED=1..{args.seeds}), min / mean / max")
        print_table(["scenario", "cc", "seeds", "mean FCT us", "ref", "ref mean FCT is", "makespan us", "ref"],
                    spread_rows)
    if notes:
        print("\nnotes:")
        for n in dict.fromkeys(notes):
            print(f"  {n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
