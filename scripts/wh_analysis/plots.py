"""PNG figures of one run (matplotlib, Agg backend): FCT slowdown CDF and slowdown by flow size, per-layer
exposed communication of an iteration, PFC pauses over time, and the compare scatter plot.

Each function writes its PNG(s) and returns what it plotted as a dict, so that the command line can print
the figures' numbers and tests can check them.
"""
import math
from pathlib import Path

import numpy as np

from .common import AnalysisError, nearest_rank, size_bins
from .load import table
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


def plot_fct(fl, outdir):
    """fct_slowdown_cdf.png and fct_slowdown_by_size.png in outdir, over the finished flows.
    Slowdown = FCT / standalone FCT (ratio). By size: every flow as a dot (at most 50,000 drawn, evenly
    strided) and per size bin the p50 and p99 (nearest rank)."""
    plt = pyplot()
    outdir = Path(outdir)
    if not outdir.is_dir():
        raise AnalysisError(f"{outdir}: output directory does not exist")
    m = fl.done() & (fl.ideal > 0)
    slow, size = fl.fct[m] / fl.ideal[m], fl.size[m]
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
    ax.set(xlabel="FCT slowdown (FCT / standalone FCT)", ylabel="fraction of flows",
           title=f"FCT slowdown CDF ({len(s):,} flows)", ylim=(0, 1.02))
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    cdf = outdir / "fct_slowdown_cdf.png"
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
    ax.set(xlabel="flow size (bytes)", ylabel="FCT slowdown", title="FCT slowdown by flow size")
    ax.legend()
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    by_size = outdir / "fct_slowdown_by_size.png"
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


def plot_layers(f, iteration, out):
    """Per-layer exposed communication (µs) at the report GPU for one iteration of /workload/layers:
    a bar per workload row (forward order), stacked by phase (fwd, ig, wg); the part of each phase's
    collective hidden behind compute (comm − exposed) stacked above it, hatched."""
    plt = pyplot()
    if "workload" not in f:
        raise AnalysisError(f"{f.filename}: no /workload group (not a training-workload run): nothing to plot")
    cols = ["iteration", "layer", "name"] + [f"{p}_{c}" for p in PHASES for c in ("exposed_ps", "comm_ps")]
    rows = table(f, "workload/layers", cols)
    its = sorted({int(i) for i in rows["iteration"]})
    if iteration not in its:
        raise AnalysisError(f"{f.filename}: /workload/layers has no iteration {iteration} (iterations: "
                            f"{', '.join(map(str, its)) or 'none'})")
    r = rows[rows["iteration"] == iteration]
    r = r[np.argsort(r["layer"], kind="stable")]
    names = [n.decode() if isinstance(n, bytes) else str(n) for n in r["name"]]
    x = np.arange(len(r))
    exposed = {p: r[f"{p}_exposed_ps"] / 1e6 for p in PHASES}
    hidden = {p: np.maximum(r[f"{p}_comm_ps"] - r[f"{p}_exposed_ps"], 0) / 1e6 for p in PHASES}
    fig, ax = plt.subplots(figsize=(max(6.4, min(16.0, 0.18 * len(r) + 3)), 4.2))
    bottom = np.zeros(len(r))
    for i, p in enumerate(PHASES):
        ax.bar(x, exposed[p], bottom=bottom, color=f"C{i}", label=f"{p} exposed", width=0.8)
        bottom += exposed[p]
    for i, p in enumerate(PHASES):
        if hidden[p].any():
            ax.bar(x, hidden[p], bottom=bottom, color="none", edgecolor=f"C{i}", hatch="///", lw=0.5,
                   label=f"{p} hidden", width=0.8)
            bottom += hidden[p]
    if len(r) <= 60:
        ax.set_xticks(x)
        ax.set_xticklabels(names, rotation=90, fontsize=7)
    else:
        ax.set_xlabel("workload row")
    wl = f["workload"].attrs.get("workload_file", "")
    gpu = int(f["workload"].attrs.get("report_gpu", 0))
    total = sum(float(v.sum()) for v in exposed.values())
    ax.set(ylabel="communication (us)",
           title=f"{Path(str(wl)).name}: iteration {iteration}, GPU {gpu}: {total:.1f} us exposed")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    save(fig, out)
    top = np.argsort(-sum(exposed.values()), kind="stable")[:3]
    return {"file": str(out), "iteration": iteration, "rows": int(len(r)), "report_gpu": gpu,
            "exposed_us": {p: float(exposed[p].sum()) for p in PHASES}, "exposed_total_us": total,
            "comm_us": {p: float(r[f"{p}_comm_ps"].sum() / 1e6) for p in PHASES},
            "top": [{"layer": int(r["layer"][i]), "name": names[i],
                     "exposed_us": float(sum(exposed[p][i] for p in PHASES))} for i in top]}


def plot_pfc(pfc, end_ns, t0_ns, out, source):
    """PFC pauses over time: the number of paused (port, class) pairs, switch ports and host NICs
    apart (top), and PAUSE frames received per time bin (bottom); time in µs since t0_ns."""
    plt = pyplot()
    st = pfc_stats(pfc, end_ns)
    iv, _ = pfc_pauses(pfc, end_ns)
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(6.4, 4.8), sharex=True)
    if st["frames"] == 0:
        ax1.text(0.5, 0.5, "no PFC frames", ha="center", va="center", transform=ax1.transAxes)
    for node_type, label, color in ((1, "switch ports", "C0"), (0, "host NICs", "C1")):
        sel = [(s, e) for s, e, _, nt, *_ in iv if nt == node_type]
        if not sel:
            continue
        ev = sorted([(s, 1) for s, _ in sel] + [(e, -1) for _, e in sel])
        t = np.array([t0_ns] + [e[0] for e in ev], dtype=np.float64)
        n = np.concatenate([[0], np.cumsum([e[1] for e in ev])])
        ax1.step((t - t0_ns) / 1e3, n, where="post", color=color, label=label)
    ax1.yaxis.set_major_locator(matplotlib_ticker().MaxNLocator(integer=True))
    ax1.set(ylabel="paused ports", title=f"PFC pauses ({st['frames']:,} frames, {Path(source).name})")
    if iv:
        ax1.legend(fontsize=8)
    pause_t = pfc["time_ns"][pfc["type"] == 1]
    if len(pause_t):
        ax2.hist((pause_t - t0_ns) / 1e3, bins=100, color="C3")
    ax2.set(xlabel=f"time since {t0_ns / 1e9:.9f} s (us)", ylabel="PAUSE frames / bin")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    save(fig, out)
    return dict(st, file=str(out))


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
           title=f"{c['joined']:,} flows: mean error {100 * c['error']['mean']:.2f} %, "
                 f"p99 {100 * c['error']['p99']:.2f} %")
    plain = matplotlib_ticker().FuncFormatter(lambda v, _: f"{v:g}")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(plain)
        axis.set_minor_formatter(plain if hi / lo < 20 else matplotlib_ticker().NullFormatter())
    ax.tick_params(which="both", labelsize=8)
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    save(fig, out)
    return {"file": str(out), "points": int(ok.sum())}
