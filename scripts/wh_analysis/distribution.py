"""Comparing two runs by their distributions, and against the noise floor of the baseline.

On a congested fabric per-flow errors are chaotic (a 1-ns change of one delay moves single flows' FCTs by
tens of %), so runs are judged by what does not depend on which flow got which share:

* the slowdown (FCT / standalone FCT) distribution of all finished flows: its p50, p90 and p99 per size bin
  (bins as plot-fct's), each B against A as a relative difference, and the two-sample Kolmogorov–Smirnov
  statistic D = max |F_A(x) − F_B(x)| over the pooled values (0: same distribution, 1: disjoint; where
  every flow has nearly the same slowdown, as on an uncongested fabric, a shift of 0.01 % already makes D = 1:
  read it with the percentiles);
* the iteration time (workload results), relative difference.

With `noise` (other runs of A's scenario, e.g. other SEEDs) each figure is also computed for A against each
of them: the largest is the noise floor, and a difference of B's above it is flagged as significant.
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


def with_noise(path_a, path_b, noise):
    """differences(A, B) and, for each path in `noise`, differences(A, N) on the same bins; then the floor
    (largest |figure| over the noise runs) and which of B's figures exceed it."""
    d, bins = differences(path_a, path_b)
    out = {"b": d}
    if not noise:
        return out
    floors = [differences(path_a, n, bins)[0] for n in noise]
    floor = {"ks": max(f["ks"] for f in floors)}
    if "iteration" in d and all("iteration" in f for f in floors):
        floor["iteration"] = max(abs(f["iteration"][2]) for f in floors)
    for i, row in enumerate(d["bins"]):
        for p in PERCENTILES:
            vals = [abs(f["bins"][i][f"p{p}"][2]) for f in floors if not math.isnan(f["bins"][i][f"p{p}"][2])]
            floor[f"bin{i}_p{p}"] = max(vals) if vals else math.nan
    significant = []
    if d["ks"] > floor["ks"]:
        significant.append("KS")
    if "iteration" in floor and abs(d["iteration"][2]) > floor["iteration"]:
        significant.append("iteration time")
    for i, row in enumerate(d["bins"]):
        for p in PERCENTILES:
            f = floor[f"bin{i}_p{p}"]
            if not math.isnan(row[f"p{p}"][2]) and not math.isnan(f) and abs(row[f"p{p}"][2]) > f:
                significant.append(f"p{p} of {_bin_name(row)}")
    out.update({"noise_runs": len(noise), "floor": floor, "significant": significant})
    return out


def _bin_name(row):
    return f"{row['lo']:,} B" if row["lo"] == row["hi"] else f"{row['lo']:,}-{row['hi']:,} B"


def text(r):
    """Report lines (differences in %)."""
    d = r["b"]
    lines = [f"slowdown distribution of all finished flows: KS statistic {d['ks']:.4f}"
             + (f" (noise floor {r['floor']['ks']:.4f})" if "floor" in r else "")]
    for i, row in enumerate(d["bins"]):
        parts = []
        for p in PERCENTILES:
            pa, pb, rel = row[f"p{p}"]
            fl = r["floor"].get(f"bin{i}_p{p}") if "floor" in r else None
            parts.append(f"p{p} {pa:.4f} -> {pb:.4f} ({100 * rel:+.3f} %"
                         + (f", floor {100 * fl:.3f} %" if fl is not None and not math.isnan(fl) else "") + ")")
        lines.append(f"  size {_bin_name(row)} ({row['n_a']:,} / {row['n_b']:,} flows): " + "; ".join(parts))
    if "iteration" in d:
        a, b, rel = d["iteration"]
        fl = r.get("floor", {}).get("iteration")
        lines.append(f"iteration time (sum): A {a:.3f} us, B {b:.3f} us, {100 * rel:+.4f} %"
                     + (f" (noise floor {100 * fl:.4f} %)" if fl is not None else ""))
    if "floor" in r:
        s = r["significant"]
        lines.append(f"against the noise floor of {r['noise_runs']} other run(s) of A: "
                     + ("no difference above it" if not s else "above it: " + ", ".join(s)))
    return lines
