"""Comparing two runs by their distributions, and against the noise floor of the baseline.

On a congested fabric per-flow errors are chaotic (a 1-ns change of one delay moves single flows' FCTs by
tens of %), so runs are judged by what does not depend on which flow got which share:

* the slowdown (FCT / standalone FCT) distribution of all finished flows: its p50, p90 and p99 per size bin
  (bins as plot-fct's), each B against A as a relative difference, and the two-sample Kolmogorov–Smirnov
  statistic D = max |F_A(x) − F_B(x)| over the pooled values (0: same distribution, 1: disjoint; where
  every flow has nearly the same slowdown, as on an uncongested fabric, a shift of 0.01 % already makes D = 1:
  read it with the percentiles);
* the iteration time (workload results), relative difference.

Against the noise of several runs of each (other SEEDs, a latency 1 ns longer): ensemble.py.
"""
import math

import numpy as np

from .common import nearest_rank, size_bins
from .load import is_hdf5, iteration_times_ps, load_flows

PERCENTILES = (50, 90, 99)


def ks_statistic(a, b):
    """Two-sample Kolmogorov–Smirnov D of the values `a` and `b` (NaN if either is empty)."""
    a, b = np.sort(np.asarray(a, dtype=np.float64)), np.sort(np.asarray(b, dtype=np.float64))
    if len(a) == 0 or len(b) == 0:
        return math.nan
    x = np.concatenate([a, b])
    fa = np.searchsorted(a, x, side="right") / len(a)
    fb = np.searchsorted(b, x, side="right") / len(b)
    return float(np.max(np.abs(fa - fb)))


def _slowdowns(fl):
    m = fl.done() & (fl.ideal > 0)
    return fl.size[m], fl.fct[m] / fl.ideal[m]


def _iteration(path):
    t = iteration_times_ps(path) if is_hdf5(path) else None
    return sum(t.values()) if t else None


def differences(path_a, path_b, bins=None):
    """B against A: {"ks", "bins": [{lo, hi, n_a, n_b, p50/p90/p99: (a, b, rel)}], "iteration": (a_us, b_us, rel)}."""
    a, b = load_flows(path_a), load_flows(path_b)
    sa, xa = _slowdowns(a)
    sb, xb = _slowdowns(b)
    if bins is None:
        bins = size_bins(np.concatenate([sa, sb])) if len(sa) + len(sb) else []
    rows = []
    for lo, hi in bins:
        va, vb = np.sort(xa[(sa >= lo) & (sa <= hi)]), np.sort(xb[(sb >= lo) & (sb <= hi)])
        row = {"lo": lo, "hi": hi, "n_a": int(len(va)), "n_b": int(len(vb))}
        for p in PERCENTILES:
            pa, pb = float(nearest_rank(va, p)), float(nearest_rank(vb, p))
            row[f"p{p}"] = (pa, pb, (pb - pa) / pa if pa > 0 else math.nan)
        rows.append(row)
    out = {"ks": ks_statistic(xa, xb), "bins": rows}
    ta, tb = _iteration(path_a), _iteration(path_b)
    if ta and tb:
        out["iteration"] = (ta / 1e6, tb / 1e6, (tb - ta) / ta)
    return out, bins


def bin_name(row):
    return f"{row['lo']:,} B" if row["lo"] == row["hi"] else f"{row['lo']:,}-{row['hi']:,} B"


def text(d):
    """Report lines of differences() (differences in %)."""
    lines = [f"slowdown (FCT / standalone FCT) distribution of all finished flows: KS statistic {d['ks']:.4f}"]
    for row in d["bins"]:
        parts = [f"p{p} {row[f'p{p}'][0]:.4f} -> {row[f'p{p}'][1]:.4f} ({100 * row[f'p{p}'][2]:+.3f} %)" for p in PERCENTILES]
        lines.append(f"  size {bin_name(row)} ({row['n_a']:,} / {row['n_b']:,} flows): " + "; ".join(parts))
    if "iteration" in d:
        a, b, rel = d["iteration"]
        lines.append(f"iteration time (sum): A {a:.3f} us, B {b:.3f} us, {100 * rel:+.4f} %")
    return lines
