"""Figures of several runs side by side, each labelled by its run name: the FCT slowdown CDFs and the slowdown
per flow size of N runs overlaid (plot-fct with several files), and the iteration times and exposed communication
of N training-workload runs as bars (plot-runs)."""
from pathlib import Path

import numpy as np

from .common import AnalysisError, nearest_rank, size_bins
from .load import load_flows, open_results, table, workload_group
from .plots import pyplot, save

GROUPS = ("tp", "dp", "ep", "dp_ep", "pp")  # pp: exposed pipeline communication (0 without a pipeline)
# A Chakra trace's exposure is one total per GPU (ASTRA-sim's finish - GPU compute), drawn as this segment.
UNGROUPED = "ungrouped"


def run_labels(paths, given=None):
    """The name of each run: --label values if given (as many as runs), else the run's folder (out/<name>/results.h5
    -> <name>; a bare fct.txt: its folder too), made unique with the file name where folders repeat."""
    if given:
        if len(given) != len(paths):
            raise AnalysisError(f"{len(given)} --label values for {len(paths)} runs: give one per run, in order")
        return list(given)
    names = [Path(p).resolve().parent.name or Path(p).stem for p in paths]
    return [f"{n}/{Path(p).name}" if names.count(n) > 1 else n for n, p in zip(names, paths)]


def plot_fct_overlay(paths, labels, outdir, fmt="png"):
    """fct_slowdown_cdf.<fmt> and fct_slowdown_by_size.<fmt> with one curve per run. Every run's slowdown divides
    by the true ideal FCT when each file has it (results files), else all by the reference's standalone FCT."""
    plt = pyplot()
    fls = [load_flows(p) for p in paths]
    reference = not all(fl.has_true_ideal() for fl in fls)
    over = fls[0].slowdown_label(reference)
    runs, series = [], []
    for fl, label in zip(fls, labels):
        slow = fl.slowdown(reference)
        size = fl.size[fl.slowdown_mask(reference)]
        if len(slow) == 0:
            raise AnalysisError(f"{fl.path}: no finished flow to plot")
        s = np.sort(slow)
        runs.append({"label": label, "file": fl.path, "flows": int(len(s)), "p50": float(nearest_rank(s, 50)),
                     "p99": float(nearest_rank(s, 99)), "max": float(s[-1])})
        series.append((s, slow, size))
    fig, ax = plt.subplots(figsize=(7.0, 4.4))
    lo = min(s[0] for s, _, _ in series)
    hi = max(s[-1] for s, _, _ in series)
    for i, ((s, _, _), r) in enumerate(zip(series, runs)):
        ax.step(s, np.arange(1, len(s) + 1) / len(s), where="post", color=f"C{i}",
                label=f"{r['label']}: {r['flows']:,} flows, p50 {r['p50']:.3g}, p99 {r['p99']:.3g}")
    if hi / max(lo, 1e-12) > 20:
        ax.set_xscale("log")
    ax.set(xlabel=f"FCT slowdown (FCT / {over})", ylabel="fraction of flows", ylim=(0, 1.02),
           title=f"FCT slowdown CDF of {len(runs)} runs")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    outdir = Path(outdir)
    cdf = outdir / f"fct_slowdown_cdf.{fmt}"
    save(fig, cdf)
    bins = size_bins(np.concatenate([size for _, _, size in series]))
    fig, ax = plt.subplots(figsize=(7.0, 4.4))
    mid = [np.sqrt(max(lo_, 1) * max(hi_, 1)) for lo_, hi_ in bins]
    for i, ((_, slow, size), r) in enumerate(zip(series, runs)):
        p50, p99 = [], []
        for b_lo, b_hi in bins:
            v = np.sort(slow[(size >= b_lo) & (size <= b_hi)])
            p50.append(float(nearest_rank(v, 50)) if len(v) else np.nan)
            p99.append(float(nearest_rank(v, 99)) if len(v) else np.nan)
        r["bins"] = [{"size_lo": a, "size_hi": b, "p50": x, "p99": y} for (a, b), x, y in zip(bins, p50, p99)]
        ax.plot(mid, p50, "o-", color=f"C{i}", label=f"{r['label']} p50")
        ax.plot(mid, p99, "s--", color=f"C{i}", alpha=0.7, label=f"{r['label']} p99")
    ax.set_xscale("log")
    ax.set(xlabel="flow size (bytes)", ylabel=f"FCT slowdown (FCT / {over})",
           title=f"FCT slowdown by flow size: p50 and p99 per size bin, {len(runs)} runs")
    ax.legend(fontsize=8, ncol=2)
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    by_size = outdir / f"fct_slowdown_by_size.{fmt}"
    save(fig, by_size)
    return {"cdf": str(cdf), "by_size": str(by_size), "slowdown_over": over, "runs": runs}


def workload_figures(path, job=None):
    """{iterations: [time_ps], at the report GPU and at the slowest GPU: exposed communication by group
    {tp, dp, ep, dp_ep, pp, ungrouped: ps} and the pipeline bubble (report_bubble_ps, slowest_bubble_ps), ...}
    of a training-workload results file. A Chakra trace's exposure is all "ungrouped" (exposure_by_group 0);
    a file written before /workload/gpus had PP columns reads 0 for them, and a Chakra file from before
    layout 5 (exposure_measured 0) has no exposed figures ("report" absent). `job`: that job's report
    (/jobs/<job>) in a run of several jobs."""
    with open_results(path) as f:
        group = workload_group(f, job)
        w = f[group]
        its = table(f, f"{group}/iterations", ("time_ps",))["time_ps"]
        report = int(w.attrs.get("report_gpu", 0))
        out = {"file": str(path), "iterations_ps": [int(x) for x in its], "report_gpu": report,
               "report": {g: int(w.attrs.get(f"exposed_{g}_ps", 0)) for g in GROUPS},
               "report_bubble_ps": int(w.attrs.get("bubble_ps", 0)),
               "compute_ps": int(w.attrs.get("total_compute_ps", 0)), "complete": int(w.attrs.get("complete", 1)),
               "exposure_by_group": int(w.attrs.get("exposure_by_group", 1))}
        out["report"][UNGROUPED] = 0
        if not int(w.attrs.get("exposure_measured", 1)):  # a Chakra file before layout 5: nothing to show
            del out["report"]
            return out
        if not out["exposure_by_group"]:  # a Chakra trace: one total per GPU
            out["report"] = {g: 0 for g in GROUPS}
            out["report"][UNGROUPED] = int(w.attrs.get("total_exposed_ps", 0))
        if "gpus" in w:
            gpus = w["gpus"][:]
            names = gpus.dtype.names
            slow = int(w.attrs.get("slowest_gpu", int(np.argmax(gpus["exposed_ps"]))))
            out["slowest_gpu"] = slow
            out["slowest"] = {g: int(gpus[f"exposed_{g}_ps"][slow]) if f"exposed_{g}_ps" in names else 0
                              for g in GROUPS}
            out["slowest"][UNGROUPED] = 0 if out["exposure_by_group"] else int(gpus["exposed_ps"][slow])
            out["slowest_bubble_ps"] = int(gpus["bubble_ps"][slow]) if "bubble_ps" in names else 0
        return out


def plot_runs(paths, labels, out, job=None):
    """Two panels for N training-workload runs: each iteration's time per run (grouped bars, ms), and the
    communication exposed at the report GPU and at the slowest GPU, stacked by group (TP, DP, EP, DP_EP, PP; ms),
    with the pipeline bubble (waiting for a peer stage; not exposure) as a hatched segment on top. `job`: in runs of
    several jobs, that job's report in each."""
    plt = pyplot()
    figs = [workload_figures(p, job) for p in paths]
    n_it = max(len(x["iterations_ps"]) for x in figs)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(max(9.0, 2.2 + 1.3 * len(figs)), 4.4),
                                   gridspec_kw={"width_ratios": [1, 1.3]})
    width = 0.8 / len(figs)
    for i, (x, label) in enumerate(zip(figs, labels)):
        t = np.array(x["iterations_ps"], dtype=np.float64) / 1e9
        pos = np.arange(len(t)) + (i - (len(figs) - 1) / 2) * width
        bars = ax1.bar(pos, t, width=width * 0.95, color=f"C{i}", label=label)
        if len(figs) * n_it <= 12:
            ax1.bar_label(bars, fmt="%.3g", fontsize=7)
    ax1.set_xticks(range(n_it))
    ax1.set_xticklabels([f"iteration {k}" for k in range(n_it)])
    ax1.set(ylabel="iteration time (ms)", title="iteration time")
    ax1.legend(fontsize=8)
    ax1.grid(axis="y", alpha=0.3)
    ticks, names = [], []
    any_bubble = False
    any_trace = any(not x.get("exposure_by_group", 1) for x in figs)
    labelled = set()
    for i, (x, label) in enumerate(zip(figs, labels)):
        for j, (who, gpu) in enumerate((("report", x["report_gpu"]), ("slowest", x.get("slowest_gpu")))):
            if who not in x:  # no slowest GPU, or (a Chakra trace) no exposed figures at all
                continue
            pos = 3 * i + j
            bottom = 0.0
            for k, g in enumerate(GROUPS + (UNGROUPED,)):
                if g == UNGROUPED and not any_trace:
                    continue  # no trace among the runs: no segment and no legend entry for it
                name = "not split (trace)" if g == UNGROUPED else g.upper()
                v = x[who][g] / 1e9
                ax2.bar(pos, v, bottom=bottom, color=f"C{k + 4}", width=0.8, label=None if name in labelled else name,
                        edgecolor="white" if who == "report" else "black", lw=0.5)
                labelled.add(name)
                bottom += v
            bubble = x[f"{who}_bubble_ps"] / 1e9
            if bubble > 0:
                ax2.bar(pos, bubble, bottom=bottom, color="none", hatch="//", width=0.8, edgecolor="grey", lw=0.5,
                        label="PP bubble" if not any_bubble else None)
                any_bubble = True
            ticks.append(pos)
            names.append(f"{label}\nGPU {gpu}" + (" (report)" if who == "report" else " (slowest)"))
    ax2.set_xticks(ticks)
    ax2.set_xticklabels(names, fontsize=7, rotation=30, ha="right")
    ax2.set(ylabel="exposed communication (ms)", title="communication exposed, by group"
            + (" + PP bubble" if any_bubble else ""))
    ax2.legend(fontsize=8, title="group", title_fontsize=8)
    ax2.grid(axis="y", alpha=0.3)
    fig.suptitle(f"{len(figs)} training-workload run{'s' if len(figs) > 1 else ''}" + (f", job {job}" if job else ""),
                 fontsize=11)
    fig.tight_layout()
    save(fig, out)
    return {"file": str(out), "runs": [dict(x, label=label) for x, label in zip(figs, labels)]}
