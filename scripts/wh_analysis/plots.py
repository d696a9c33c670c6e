"""Figures of one run (matplotlib, Agg backend; PNG, PDF or SVG by the file name): FCT slowdown CDF and slowdown by flow size, per-layer
exposed communication of an iteration, PFC pauses over time, and the compare scatter plot.

Each function writes its PNG(s) and returns what it plotted as a dict, so that the command line can print
the figures' numbers and tests can check them.
"""
import math
import re
from pathlib import Path

import numpy as np

from .common import AnalysisError, nearest_rank, size_bins
from .load import table, workload_group
from .summary import pfc_pauses, pfc_stats

DPI = 100


def pyplot():
    """matplotlib.pyplot on the Agg backend (no display needed), imported on first use."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def matplotlib_ticker():
    import matplotlib.ticker
    return matplotlib.ticker


def dot_size(n):
    """Scatter marker area (points²): large for a few points, small for many."""
    return 24 if n <= 1000 else 8 if n <= 20000 else 3


def short(path):
    """The last two components of a path (a run's folder and file name), for axis labels."""
    p = Path(path)
    return str(Path(p.parent.name) / p.name) if p.parent.name else p.name


def save(fig, path):
    path = Path(path)
    if not path.parent.is_dir():
        raise AnalysisError(f"{path}: output directory {path.parent} does not exist")
    try:
        fig.savefig(path, dpi=DPI)
    except OSError as e:
        raise AnalysisError(f"{path}: cannot write: {e.strerror or e}")
    except ValueError as e:  # an extension matplotlib has no writer for
        raise AnalysisError(f"{path}: {e}")
    finally:
        pyplot().close(fig)


def plot_fct(fl, outdir, fmt="png", label=None):
    """fct_slowdown_cdf.png and fct_slowdown_by_size.png in outdir, over the finished flows.
    Slowdown = FCT / standalone FCT (ratio). By size: every flow as a dot (at most 50,000 drawn, evenly
    strided) and per size bin the p50 and p99 (nearest rank)."""
    plt = pyplot()
    outdir = Path(outdir)
    if not outdir.is_dir():
        raise AnalysisError(f"{outdir}: output directory does not exist")
    m = fl.slowdown_mask()
    slow, size = fl.slowdown(), fl.size[m]
    if len(slow) == 0:
        raise AnalysisError(f"{fl.path}: no finished flow to plot")
    s = np.sort(slow)
    info = {"flows": int(len(s)), "p50": float(nearest_rank(s, 50)), "p99": float(nearest_rank(s, 99)),
            "max": float(s[-1])}
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    ax.step(s, np.arange(1, len(s) + 1) / len(s), where="post", color="C0")
    for q, ls in (("p50", "--"), ("p99", ":")):
        ax.axvline(info[q], color="gray", ls=ls, lw=1, label=f"{q} {info[q]:.3g}")
    if s[-1] / max(s[0], 1e-12) > 20:
        ax.set_xscale("log")
    ax.set(xlabel=f"FCT slowdown (FCT / {fl.slowdown_label()})", ylabel="fraction of flows",
           title=f"FCT slowdown CDF{' of ' + label if label else ''} ({len(s):,} flows)", ylim=(0, 1.02))
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    cdf = outdir / f"fct_slowdown_cdf.{fmt}"
    save(fig, cdf)

    rows = []
    for lo, hi in size_bins(size):
        v = np.sort(slow[(size >= lo) & (size <= hi)])
        rows.append({"size_lo": lo, "size_hi": hi, "flows": int(len(v)), "p50": float(nearest_rank(v, 50)),
                     "p99": float(nearest_rank(v, 99))})
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    stride = max(1, len(slow) // 50000)
    ax.scatter(size[::stride], slow[::stride], s=dot_size(len(slow)), alpha=0.3, color="C0", lw=0, label="flows")
    mid = [math.sqrt(r["size_lo"] * r["size_hi"]) for r in rows]
    ax.plot(mid, [r["p50"] for r in rows], "o-", color="C1", label="p50 per size bin")
    ax.plot(mid, [r["p99"] for r in rows], "s--", color="C3", label="p99 per size bin")
    ax.set_xscale("log")
    ax.set(xlabel="flow size (bytes)", ylabel=f"FCT slowdown (FCT / {fl.slowdown_label()})",
           title=f"FCT slowdown by flow size{' of ' + label if label else ''} ({len(slow):,} flows)")
    ax.legend()
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    by_size = outdir / f"fct_slowdown_by_size.{fmt}"
    save(fig, by_size)
    return {"cdf": str(cdf), "by_size": str(by_size), "slowdown": info, "bins": rows}


def plot_overlay(runs, out):
    """One PNG overlaying the FCT slowdown CDFs of several runs (e.g. a job alone and beside another,
    from each job's fct.txt), one step line per run, p50 and p99 in the legend. runs: [(label, flows)].
    Slowdown = FCT / standalone FCT over the finished flows (nearest-rank percentiles)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    info, lo, hi = [], math.inf, 0.0
    for k, (label, fl) in enumerate(runs):
        m = fl.done() & (fl.ideal > 0)
        s = np.sort(fl.fct[m] / fl.ideal[m])
        if len(s) == 0:
            raise AnalysisError(f"{fl.path}: no finished flow to plot")
        r = {"label": label, "flows": int(len(s)), "p50": float(nearest_rank(s, 50)), "p99": float(nearest_rank(s, 99)),
             "mean_fct_us": float(np.mean(fl.fct[m])) / 1000.0}
        info.append(r)
        lo, hi = min(lo, s[0]), max(hi, s[-1])
        ax.step(s, np.arange(1, len(s) + 1) / len(s), where="post", color=f"C{k}",
                label=f"{label}: p50 {r['p50']:.3g}, p99 {r['p99']:.3g}")
    if hi / max(lo, 1e-12) > 20:
        ax.set_xscale("log")
    ax.set(xlabel="FCT slowdown (FCT / standalone FCT)", ylabel="fraction of flows", title="FCT slowdown CDFs",
           ylim=(0, 1.02))
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    save(fig, out)
    return {"png": str(out), "runs": info}


PHASES = ("fwd", "ig", "wg")


def layer_type(name):
    """A workload row's layer type: its name without a trailing number ("optimizer3" -> "optimizer")."""
    return re.sub(r"_?\d+$", "", name) or name


def plot_layers(f, iteration, out, by_type=None, job=None):
    """Per-layer exposed communication (µs) at the report GPU for one iteration of /workload/layers (or a job's,
    /jobs/<job>/layers, in a run of several jobs):
    a bar per workload row (forward order), stacked by phase (fwd, ig, wg); the part of each phase's
    collective hidden behind compute (comm − exposed) stacked above it, hatched. With more than 60 rows
    (or by_type True) the rows are summed by layer type (the name without a trailing number), one bar
    per type, busiest first, labelled with its row count."""
    plt = pyplot()
    group = workload_group(f, job)
    cols = ["iteration", "layer", "name"] + [f"{p}_{c}" for p in PHASES for c in ("exposed_ps", "comm_ps")]
    rows = table(f, f"{group}/layers", cols)
    its = sorted({int(i) for i in rows["iteration"]})
    if not its and f[group].attrs.get("exposure_by_group", 1) == 0:
        raise AnalysisError(f"{f.filename}: a Chakra trace's run has no per-layer view (/{group}/layers is empty: "
                            "a trace has no workload rows); plot-runs and summary show its iteration and exposure")
    if iteration not in its:
        raise AnalysisError(f"{f.filename}: /{group}/layers has no iteration {iteration} (iterations: "
                            f"{', '.join(map(str, its)) or 'none'})")
    r = rows[rows["iteration"] == iteration]
    r = r[np.argsort(r["layer"], kind="stable")]
    names = [n.decode() if isinstance(n, bytes) else str(n) for n in r["name"]]
    exposed = {p: r[f"{p}_exposed_ps"] / 1e6 for p in PHASES}
    hidden = {p: np.maximum(r[f"{p}_comm_ps"] - r[f"{p}_exposed_ps"], 0) / 1e6 for p in PHASES}
    rows = len(r)
    if by_type is None:
        by_type = rows > 60
    counts = None
    if by_type:
        types = [layer_type(n) for n in names]
        order = sorted(set(types), key=lambda t: -sum(float(exposed[p][i] + hidden[p][i]) for p in PHASES
                                                       for i in range(rows) if types[i] == t))
        idx = {t: k for k, t in enumerate(order)}
        k = np.array([idx[t] for t in types], dtype=np.int64)
        exposed = {p: np.bincount(k, weights=exposed[p], minlength=len(order)) for p in PHASES}
        hidden = {p: np.bincount(k, weights=hidden[p], minlength=len(order)) for p in PHASES}
        counts = np.bincount(k, minlength=len(order))
        names = [f"{t} (x{c})" for t, c in zip(order, counts)]
    x = np.arange(len(names))
    fig, ax = plt.subplots(figsize=(max(7.5 if by_type else 6.4, min(16.0, 0.18 * len(names) + 3)), 4.8 if by_type else 4.2))
    bottom = np.zeros(len(names))
    for i, p in enumerate(PHASES):
        ax.bar(x, exposed[p], bottom=bottom, color=f"C{i}", label=f"{p} exposed", width=0.8)
        bottom += exposed[p]
    for i, p in enumerate(PHASES):
        if hidden[p].any():
            ax.bar(x, hidden[p], bottom=bottom, color="none", edgecolor=f"C{i}", hatch="///", lw=0.5,
                   label=f"{p} hidden", width=0.8)
            bottom += hidden[p]
    if len(names) <= 60:
        ax.set_xticks(x)
        ax.set_xticklabels(names, rotation=90 if not by_type else 35, ha="center" if not by_type else "right",
                           fontsize=7 if not by_type else 8)
    else:
        ax.set_xlabel("workload row")
    wl = f[group].attrs.get("workload_file", "")
    gpu = int(f[group].attrs.get("report_gpu", 0))
    total = sum(float(v.sum()) for v in exposed.values())
    what = f"\n{rows:,} workload rows summed by layer type (the name without its number)" if by_type else ""
    ax.set(ylabel="communication time (us)",
           title=f"{Path(str(wl)).name}: iteration {iteration}, GPU {gpu}: {total:.1f} us exposed{what}")
    ax.title.set_fontsize(10)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    save(fig, out)
    top = np.argsort(-sum(exposed.values()), kind="stable")[:3]
    out_d = {"file": str(out), "iteration": iteration, "rows": int(rows), "report_gpu": gpu, "by_type": bool(by_type),
             "exposed_us": {p: float(exposed[p].sum()) for p in PHASES}, "exposed_total_us": total,
             "comm_us": {p: float(r[f"{p}_comm_ps"].sum() / 1e6) for p in PHASES}}
    if by_type:
        out_d["types"] = [{"type": n.rsplit(" (x", 1)[0], "rows": int(c),
                           "exposed_us": float(sum(exposed[p][i] for p in PHASES)),
                           "hidden_us": float(sum(hidden[p][i] for p in PHASES))}
                          for i, (n, c) in enumerate(zip(names, counts))]
        out_d["top"] = [{"type": out_d["types"][i]["type"], "exposed_us": out_d["types"][i]["exposed_us"]} for i in top]
    else:
        out_d["top"] = [{"layer": int(r["layer"][i]), "name": names[i],
                         "exposed_us": float(sum(exposed[p][i] for p in PHASES))} for i in top]
    return out_d


def plot_pfc(pfc, end_ns, t0_ns, out, source, label=None):
    """PFC pauses over time: the number of paused (port, class) pairs, switch ports and host NICs
    apart (top), and PAUSE frames received per time bin (bottom); time in µs since t0_ns."""
    plt = pyplot()
    st = pfc_stats(pfc, end_ns)
    iv, _ = pfc_pauses(pfc, end_ns)
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(6.4, 4.8), sharex=True)
    if st["frames"] == 0:
        ax1.text(0.5, 0.5, "no PFC frames", ha="center", va="center", transform=ax1.transAxes)
    lowest = 0
    for node_type, kind, color in ((1, "switch ports", "C0"), (0, "host NICs", "C1")):
        t, n = paused_series(iv, node_type, t0_ns)
        if len(t) < 2:
            continue
        lowest = min(lowest, int(n.min()))
        ax1.step((t - t0_ns) / 1e3, n, where="post", color=color, label=kind)
    ax1.yaxis.set_major_locator(matplotlib_ticker().MaxNLocator(integer=True))
    ax1.set(ylabel="paused ports", title=f"PFC pauses of {label or Path(source).name} ({st['frames']:,} frames)")
    if iv:
        ax1.legend(fontsize=8)
    pause_t = pfc["time_ns"][pfc["type"] == 1]
    width_us = 0.0
    if len(pause_t):
        _, edges, _ = ax2.hist((pause_t - t0_ns) / 1e3, bins=100, color="C3")
        width_us = float(edges[1] - edges[0])
    ax2.set(xlabel=f"time since {t0_ns / 1e9:.9f} s (us)",
            ylabel=f"PAUSE frames per {width_us:.3g} us" if width_us else "PAUSE frames")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    save(fig, out)
    return dict(st, file=str(out), min_paused_ports=lowest, title=ax1.get_title())


def paused_series(iv, node_type, t0_ns):
    """(times ns, paused ports) as a step function from t0_ns, over the pause intervals of one node type. A PAUSE
    and its RESUME in the same ns pause nothing: such zero-length intervals are left out, since an end sorted
    before its own start would step the count to -1."""
    sel = [(s, e) for s, e, _, nt, *_ in iv if nt == node_type and e > s]
    ev = sorted([(s, 1) for s, _ in sel] + [(e, -1) for _, e in sel])
    t = np.array([t0_ns] + [e[0] for e in ev], dtype=np.float64)
    n = np.concatenate([[0], np.cumsum([e[1] for e in ev])]).astype(np.int64)
    return t, n


def minor_log_labels(lo, hi):
    """Labels of a log axis's minor ticks that do not overlap: none across 20x or more, those at 2 and 5 x 10^k
    across 3x or more (2, 3, ..., 9 crowd each other near the next power of ten), all of them below that."""
    ticker = matplotlib_ticker()
    if hi / lo >= 20:
        return ticker.NullFormatter()

    def fmt(v, _):
        lead = round(v / 10 ** math.floor(math.log10(v) + 1e-9), 6)
        return f"{v:g}" if hi / lo < 3 or lead in (2.0, 5.0) else ""
    return ticker.FuncFormatter(fmt)


def plot_compare(c, out):
    """Scatter of the joined flows' FCT in A (x) against B (y), µs, log-log, with y = x and ±10 %."""
    plt = pyplot()
    a, b = c["_fct_a"] / 1e3, c["_fct_b"] / 1e3
    ok = (a > 0) & (b > 0)
    if not ok.any():
        raise AnalysisError("no joined flow with a positive FCT in both runs: nothing to plot")
    fig, ax = plt.subplots(figsize=(5.2, 5.0))
    stride = max(1, int(ok.sum()) // 200000)
    ax.scatter(a[ok][::stride], b[ok][::stride], s=dot_size(int(ok.sum())), alpha=0.5, lw=0)
    lo, hi = min(a[ok].min(), b[ok].min()) / 1.2, max(a[ok].max(), b[ok].max()) * 1.2
    g = np.geomspace(lo, hi, 50)
    ax.plot(g, g, "k-", lw=0.8, label="B = A")
    ax.plot(g, 1.1 * g, "k:", lw=0.8, label="±10 %")
    ax.plot(g, g / 1.1, "k:", lw=0.8)
    ax.set(xscale="log", yscale="log", xlim=(lo, hi), ylim=(lo, hi), xlabel=f"FCT in A (us): {short(c['a']['file'])}",
           ylabel=f"FCT in B (us): {short(c['b']['file'])}",
           title=f"FCT, B against A: {c['joined']:,} flows, mean error {100 * c['error']['mean']:.2f} %, "
                 f"p99 {100 * c['error']['p99']:.2f} %")
    ax.title.set_fontsize(10)
    plain = matplotlib_ticker().FuncFormatter(lambda v, _: f"{v:g}")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(plain)
        axis.set_minor_formatter(minor_log_labels(lo, hi))
    ax.tick_params(which="both", labelsize=8)
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    save(fig, out)
    return {"file": str(out), "points": int(ok.sum())}
