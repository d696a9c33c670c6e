#!/usr/bin/python3
"""Helper of scripts/slurm/sweep.sh and scaling.sh (run with Debian's /usr/bin/python3: h5py, numpy).

  sweep_tool.py plan GRID -o TASKS.tsv       the task list of a parameter grid
  sweep_tool.py collect SWEEP_DIR -o SUMMARY.csv   the summary table of a finished sweep
  sweep_tool.py scaling STUDY_DIR --label L -o SCALING.csv [--png PNG [--weak]]   scaling.sh's table

GRID is a space-separated list of axes KEY=V1,V2,... (any `wormhole run --set` key); the tasks are the
cartesian product, in order, the last axis varying fastest. With baselines (default) one packet-mode task
(WORMHOLE=0) is added per distinct combination of the axes whose key does not start with WORMHOLE_
(θ × l: a single baseline; CC × buffer: one per grid point), so every Wormhole task has a packet-mode run to
measure its error and speedup against.

TASKS.tsv: one line per array task, tab-separated: index, kind (wormhole | baseline), baseline index (-1
for baselines or without baselines), settings (KEY=VALUE separated by spaces).

SUMMARY.csv columns (one row per Wormhole task; `scripts/wh_analyze.py plot-sweep` reads it as it is):
  task, status (ok | failed: exit N | missing), settings, label (the settings but θ and l: one curve
  each in plot-sweep), theta, window (from the run's /run/settings),
  wall_s (the run's simulation wall time, /run wall_s), fct_mean_us, iteration_us (workload scenarios:
  mean iteration time), skipped_pct (/wormhole events_skipped_fraction × 100), replays (/wormhole),
  memo_warm (1 when the task warm-started from the shared memo file), baseline_wall_s,
  speedup (baseline_wall_s / wall_s), error (mean per-flow relative FCT error against the baseline, a
  fraction), p99_error, iter_error (max iteration-time error). Missing figures are empty cells.

SCALING.csv columns (one row per run folder r<ranks>-<k>-<job id>/; `wh_analyze.py plot-scaling` reads
ranks, wall_s and label and ignores the rest): ranks, wall_s (the run's simulation wall time, /run wall_s:
in a distributed run the slowest rank's, the same figure as the log's "events N in W s wall"), label, run,
then from the per-rank lines a distributed run's log ends with ("rank K: E events; compute X s, wait Y s,
communicate Z s; W windows; ..."): windows, compute_mean_s, compute_max_s, wait_mean_s,
communicate_mean_s (means and max over the ranks; empty for a 1-rank run, which has no such lines).
Beside it, SCALING-ranks.csv (SCALING.csv's name with -ranks before .csv): one row per rank of every
distributed run: ranks, run, rank, events, compute_s, wait_s, communicate_s, windows.
"""
import argparse
import csv
import itertools
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))


def die(msg):
    print(f"sweep_tool: error: {msg}", file=sys.stderr)
    sys.exit(2)


def parse_grid(text):
    axes = []
    for item in text.split():
        key, sep, values = item.partition("=")
        vals = [v for v in values.split(",") if v != ""]
        if not sep or not key or not vals:
            die(f"grid axis '{item}' is not KEY=V1,V2,... (e.g. WORMHOLE_THETA=0.05,0.1)")
        if any(k == key for k, _ in axes):
            die(f"grid axis {key} given twice")
        axes.append((key, vals))
    if not axes:
        die("empty grid (set WH_GRID, e.g. 'WORMHOLE_THETA=0.05,0.1 WORMHOLE_WINDOW=200,2000')")
    return axes


def cmd_plan(args):
    axes = parse_grid(args.grid)
    points = [list(zip([k for k, _ in axes], combo)) for combo in itertools.product(*[v for _, v in axes])]
    rows, baselines = [], {}
    for p in points:
        base = tuple((k, v) for k, v in p if not k.upper().startswith("WORMHOLE"))
        if args.baseline and base not in baselines:
            baselines[base] = None
        rows.append(p)
    lines, bidx = [], {}
    for i, p in enumerate(rows):
        lines.append([i, "wormhole", -1, p])
    for base in baselines:
        bidx[base] = len(lines)
        lines.append([len(lines), "baseline", -1, list(base)])
    for ln in lines:
        if ln[1] == "wormhole" and args.baseline:
            ln[2] = bidx[tuple((k, v) for k, v in ln[3] if not k.upper().startswith("WORMHOLE"))]
    with open(args.output, "x") as f:
        for i, kind, b, p in lines:
            f.write(f"{i}\t{kind}\t{b}\t{' '.join(f'{k}={v}' for k, v in p)}\n")
    print(len(lines))


def read_tasks(path):
    tasks = []
    with open(path) as f:
        for line in f:
            i, kind, b, settings = line.rstrip("\n").split("\t")
            tasks.append({"index": int(i), "kind": kind, "baseline": int(b), "settings": settings})
    return tasks


def run_figures(folder):
    """Figures of one task folder (None when its results file is missing)."""
    import h5py
    from wh_analysis.load import iteration_times_ps
    res = os.path.join(folder, "results.h5")
    if not os.path.isfile(res):
        return None
    out = {}
    with h5py.File(res, "r") as f:
        run = f["run"].attrs
        out["wall_s"] = float(run["wall_s"])
        out["fct_mean_us"] = float(run["fct_mean_us"])
        settings = dict(f["run/settings"].asstr()[:].tolist()) if "run/settings" in f else {}
        out["theta"] = settings.get("WORMHOLE_THETA", "")
        out["window"] = settings.get("WORMHOLE_WINDOW", "")
        if "wormhole" in f:
            w = f["wormhole"].attrs
            out["theta"], out["window"] = float(w["theta"]), int(w["window"])
            out["skipped_pct"] = float(w["events_skipped_fraction"]) * 100
            out["replays"] = int(w["replays"]) if "replays" in w else ""
    it = iteration_times_ps(res)
    out["iteration_us"] = (sum(it.values()) / len(it) / 1e6) if it else ""
    out["memo_warm"] = 1 if os.path.exists(os.path.join(folder, "memo_warm")) else 0
    return out


def exit_code(folder):
    """The task's recorded exit status as text, or None when it never wrote one."""
    path = os.path.join(folder, "exit_code")
    return open(path).read().strip() if os.path.exists(path) else None


def fmt(v):
    if isinstance(v, float):
        return "" if math.isnan(v) else f"{v:.6g}"
    return v


def cmd_collect(args):
    from wh_analysis.common import AnalysisError
    from wh_analysis.compare import compare
    d = args.sweep_dir
    tasks = read_tasks(os.path.join(d, "tasks.tsv"))
    cols = ["task", "status", "settings", "label", "theta", "window", "wall_s", "fct_mean_us", "iteration_us", "skipped_pct",
            "replays", "memo_warm", "baseline_wall_s", "speedup", "error", "p99_error", "iter_error"]
    rows, bad = [], 0
    for t in tasks:
        if t["kind"] != "wormhole":
            continue
        folder = os.path.join(d, f"task-{t['index']}")
        row = {c: "" for c in cols}
        # plot-sweep draws one curve per label: the grid's axes other than θ and l (e.g. "CC_MODE=1")
        label = " ".join(kv for kv in t["settings"].split()
                         if kv.split("=", 1)[0].upper() not in ("WORMHOLE_THETA", "WORMHOLE_WINDOW"))
        row.update(task=t["index"], settings=t["settings"], label=label)
        rc = exit_code(folder)
        try:  # one unreadable task must not cost the other rows
            fig = run_figures(folder) if rc == "0" else None
        except (OSError, KeyError, ValueError, AnalysisError) as e:
            fig, rc = None, f"0, results unreadable: {e}"
        if fig is None:
            row["status"] = f"failed: exit {rc}" if rc not in (None, "0") else "missing"
            bad += 1
            rows.append(row)
            continue
        row.update(fig, status="ok")
        if t["baseline"] >= 0:
            bfolder = os.path.join(d, f"task-{t['baseline']}")
            try:
                bfig = run_figures(bfolder) if exit_code(bfolder) == "0" else None
                if bfig is None:
                    row["status"] = "ok; no baseline (it failed or is missing)"
                else:
                    c = compare(os.path.join(bfolder, "results.h5"), os.path.join(folder, "results.h5"),
                                ignore_start=bfig["iteration_us"] != "")
                    row["baseline_wall_s"] = bfig["wall_s"]
                    row["speedup"] = bfig["wall_s"] / fig["wall_s"] if fig["wall_s"] > 0 else ""
                    row["error"], row["p99_error"] = c["error"]["mean"], c["error"]["p99"]
                    if c.get("iteration_error_max") is not None:
                        row["iter_error"] = c["iteration_error_max"]
            except (OSError, KeyError, ValueError, AnalysisError) as e:
                row["status"] = f"ok; baseline unreadable: {e}"
        rows.append(row)
    with open(args.output, "x", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({k: fmt(v) for k, v in r.items()})
    print(f"{args.output}: {len(rows)} tasks, {len(rows) - bad} ok, {bad} failed or missing")
    return 1 if bad else 0


# the per-rank line a distributed run's log ends with (rank 0 prints one per rank)
RANK_LINE = re.compile(r"^rank (\d+): (\d+) events; compute ([0-9.]+) s, wait ([0-9.]+) s, "
                       r"communicate ([0-9.]+) s; (\d+) windows")


def rank_lines(log_path):
    """[(rank, events, compute_s, wait_s, communicate_s, windows)] from a distributed run's log."""
    out = []
    try:
        with open(log_path, errors="replace") as f:
            for line in f:
                m = RANK_LINE.match(line)
                if m:
                    out.append((int(m[1]), int(m[2]), float(m[3]), float(m[4]), float(m[5]), int(m[6])))
    except OSError:
        pass
    return sorted(out)


def cmd_scaling(args):
    """scaling.csv of a scaling.sh study: one row per run folder r<ranks>-<k>-<job id>/ with a results file,
    and the per-rank figures of the distributed runs beside it."""
    import h5py
    rows, per_rank, bad = [], [], []
    for name in sorted(os.listdir(args.study_dir)):
        folder = os.path.join(args.study_dir, name)
        if not (os.path.isdir(folder) and name.startswith("r")):
            continue
        res = os.path.join(folder, "results.h5")
        if not os.path.isfile(res):
            bad.append(name)
            continue
        try:
            with h5py.File(res, "r") as f:
                wall = float(f["run"].attrs["wall_s"])
        except (OSError, KeyError) as e:
            bad.append(f"{name} (results.h5 unreadable: {e})")
            continue
        ranks = int(name[1:].split("-")[0])
        lines = rank_lines(os.path.join(folder, "log"))
        extra = ["", "", "", "", ""]
        if lines:
            n = len(lines)
            extra = [lines[0][5], f"{sum(r[2] for r in lines) / n:.6g}", f"{max(r[2] for r in lines):.6g}",
                     f"{sum(r[3] for r in lines) / n:.6g}", f"{sum(r[4] for r in lines) / n:.6g}"]
            per_rank += [(ranks, name, *r) for r in lines]
        rows.append((ranks, wall, name, extra))
    with open(args.output, "x", newline="") as f:
        w = csv.writer(f)
        w.writerow(["ranks", "wall_s", "label", "run", "windows", "compute_mean_s", "compute_max_s", "wait_mean_s",
                    "communicate_mean_s"])
        for r, wall, name, extra in sorted(rows):
            w.writerow([r, f"{wall:.6g}", args.label, name, *extra])
    base, ext = os.path.splitext(args.output)
    with open(f"{base}-ranks{ext or '.csv'}", "x", newline="") as f:
        w = csv.writer(f)
        w.writerow(["ranks", "run", "rank", "events", "compute_s", "wait_s", "communicate_s", "windows"])
        for r in sorted(per_rank):
            w.writerow([*r[:3], r[3], f"{r[4]:.6g}", f"{r[5]:.6g}", f"{r[6]:.6g}", r[7]])
    print(f"{args.output}: {len(rows)} runs" + (f"; no results in {', '.join(bad)}" if bad else ""))
    with open(args.output) as f:
        print(f.read(), end="")
    rc = 1 if bad or not rows else 0
    if args.png and rows:  # the figure, by the same reader a user runs on scaling.csv
        import subprocess
        p = subprocess.run([sys.executable, os.path.join(HERE, "..", "wh_analyze.py"), "plot-scaling", args.output,
                            "-o", args.png] + (["--weak"] if args.weak else []))
        rc = rc or (1 if p.returncode else 0)
    return rc


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("plan")
    p.add_argument("grid")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--no-baseline", dest="baseline", action="store_false")
    p = sub.add_parser("collect")
    p.add_argument("sweep_dir")
    p.add_argument("-o", "--output", required=True)
    p = sub.add_parser("scaling")
    p.add_argument("study_dir")
    p.add_argument("--label", default="")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--png", help="also draw it with `wh_analyze.py plot-scaling` into this file")
    p.add_argument("--weak", action="store_true", help="with --png: weak scaling")
    args = ap.parse_args()
    return {"plan": cmd_plan, "collect": cmd_collect, "scaling": cmd_scaling}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main() or 0)
