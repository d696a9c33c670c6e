"""Comparing ensembles of runs: a baseline scenario run several times with a small perturbation (another SEED, a
send latency 1 ns longer) against a compared mode run the same way.

On a congested fabric one run is one draw of a chaotic process: a 1-ns change moves single flows' FCTs by tens of %
and the iteration time by several % (measured: GPT-7B on a DCN+ fabric, HPCC, 6 runs with send_latency +0..5 ns:
iteration 168.8 ms, standard deviation 6.1 %). Two single runs can then only be compared up to that noise; the
means of two ensembles can be compared to their standard error. Figures per run:

* `iteration_us`: the workload's iteration time, summed over iterations (None for flow files);
* `makespan_us`: last finish − first start of the finished flows;
* `mean_fct_us`: mean FCT of the finished flows;
and over the pooled flows of an ensemble the slowdown (FCT / standalone FCT) p50 / p90 / p99 per size bin and the
two-sample Kolmogorov–Smirnov statistic.

For a figure x, `compare(ref, test)` gives the relative difference of the means (mean_test − mean_ref) / mean_ref,
its standard error sqrt(s_ref² / n_ref + s_test² / n_test) / mean_ref (a lone test run is given the reference's
spread) and t = difference / standard error, significant when |t| exceeds Student's two-sided 95 % quantile at the
Welch–Satterthwaite degrees of freedom (Welch's t-test). A deterministic reference (all its runs alike, s = 0) makes
any difference significant: then the difference is the error.
"""
import math

import numpy as np

from .common import nearest_rank, size_bins
from .distribution import bin_name, ks_statistic
from .load import is_hdf5, iteration_times_ps, load_flows

FIGURES = ("iteration_us", "makespan_us", "mean_fct_us")
# Two-sided 95 % quantiles of Student's t for 1..30 degrees of freedom (any statistics table); above 30: 2.0.
T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
       2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t95(df):
    """The two-sided 95 % quantile of Student's t with `df` degrees of freedom (rounded down to whole)."""
    return T95[min(max(int(df), 1), 30) - 1] if df <= 30 else 2.0
PERCENTILES = (50, 90, 99)


def summarize(path):
    """The figures of one run (results .h5 or fct.txt) and its finished flows' (sizes, slowdowns)."""
    fl = load_flows(path)
    done = fl.done()
    out = {"flows": int(done.sum())}
    if done.any():
        fin = fl.start[done] + fl.fct[done]
        out["makespan_us"] = float(fin.max() - fl.start[done].min()) / 1e3
        out["mean_fct_us"] = float(fl.fct[done].mean()) / 1e3
    t = iteration_times_ps(path) if is_hdf5(path) else None
    out["iteration_us"] = sum(t.values()) / 1e6 if t else None
    m = done & (fl.ideal > 0)
    out["sizes"], out["slowdowns"] = fl.size[m], fl.fct[m] / fl.ideal[m]
    return out


def _moments(values):
    v = np.asarray(values, dtype=np.float64)
    return float(v.mean()), float(v.std(ddof=1)) if len(v) > 1 else 0.0, len(v)


def _difference(a, b):
    """Relative difference of the means of samples `b` and `a`, its standard error and t (a lone b is given a's
    spread); None if either is empty or a's mean is 0."""
    if not a or not b:
        return None
    ma, sa, na = _moments(a)
    mb, sb, nb = _moments(b)
    if nb == 1:
        sb = sa
    if ma == 0:
        return None
    rel = (mb - ma) / ma
    va, vb = sa * sa / na, sb * sb / nb
    se = math.sqrt(va + vb) / ma
    t = rel / se if se > 0 else (0.0 if rel == 0 else math.copysign(math.inf, rel))
    # Welch–Satterthwaite degrees of freedom (a lone compared run borrows the reference's spread and count); a
    # sample with no spread adds no term. With one run on each side nothing is known of the noise: never
    # significant. With spread known to be 0 (deterministic runs), any difference is.
    dfa, dfb = na - 1, (nb - 1 if nb > 1 else na - 1)
    denom = (va * va / dfa if va > 0 else 0.0) + (vb * vb / dfb if vb > 0 else 0.0)
    df = (va + vb) ** 2 / denom if denom > 0 else 0
    crit = t95(df) if df > 0 else 0.0
    if na == 1 and nb == 1:
        significant = False
    elif va + vb == 0:
        significant = rel != 0
    else:
        significant = abs(t) > crit
    return {"ref_mean": ma, "ref_sd": sa, "ref_n": na, "test_mean": mb, "test_sd": sb, "test_n": nb, "rel": rel,
            "rel_se": se, "t": t, "df": df, "t_crit": crit, "significant": significant}


def _percentile(run, lo, hi, p):
    v = np.sort(run["slowdowns"][(run["sizes"] >= lo) & (run["sizes"] <= hi)])
    return float(nearest_rank(v, p)) if len(v) else None


def compare(ref, test):
    """`ref`, `test`: lists of summarize() results. Returns {figure: {ref_mean, ref_sd, ref_n, test_mean, test_sd,
    test_n, rel, rel_se, t, significant}} for every figure of FIGURES both have in every run; "bins": per size bin
    {lo, hi, "p50"/"p90"/"p99": the same dict over the runs' slowdown percentiles in that bin}; "ks": the KS
    statistic of the pooled slowdowns and "ks_floor": the largest of one reference run against the pooled
    reference (what one more run of the reference shows; 0 with one reference run)."""
    out = {}
    for k in FIGURES:
        a = [r[k] for r in ref if r.get(k) is not None]
        b = [r[k] for r in test if r.get(k) is not None]
        if len(a) == len(ref) and len(b) == len(test) and (d := _difference(a, b)):
            out[k] = d
    sizes = [r["sizes"] for r in ref + test]
    bins = size_bins(np.concatenate(sizes)) if sizes and sum(len(x) for x in sizes) else []
    rows = []
    for lo, hi in bins:
        row = {"lo": lo, "hi": hi}
        for p in PERCENTILES:
            a = [x for r in ref if (x := _percentile(r, lo, hi, p)) is not None]
            b = [x for r in test if (x := _percentile(r, lo, hi, p)) is not None]
            row[f"p{p}"] = _difference(a, b)
        rows.append(row)
    out["bins"] = rows
    xa = np.concatenate([r["slowdowns"] for r in ref]) if ref else np.zeros(0)
    xb = np.concatenate([r["slowdowns"] for r in test]) if test else np.zeros(0)
    out["ks"] = ks_statistic(xa, xb)
    out["ks_floor"] = max((ks_statistic(xa, r["slowdowns"]) for r in ref), default=0.0) if len(ref) > 1 else 0.0
    return out


def worst_bin(c, p):
    """The difference dict of percentile p in the bin where it differs most (relative), or None without bins."""
    ds = [row[f"p{p}"] for row in c.get("bins", []) if row[f"p{p}"]]
    return max(ds, key=lambda d: abs(d["rel"]), default=None)


def significant(c):
    """Names of the figures whose difference is significant (Welch's t-test at 95 %)."""
    names = [k for k in FIGURES if c.get(k, {}).get("significant")]
    names += [f"p{p} of {bin_name(row)}" for row in c.get("bins", []) for p in PERCENTILES
              if row[f"p{p}"] and row[f"p{p}"]["significant"]]
    return names


def _line(label, d, unit=""):
    return (f"{label}: reference {d['ref_mean']:.4g}{unit} (sd {100 * d['ref_sd'] / d['ref_mean']:.2f} %, {d['ref_n']} "
            f"run{'s' if d['ref_n'] > 1 else ''}), compared {d['test_mean']:.4g}{unit} ({d['test_n']} "
            f"run{'s' if d['test_n'] > 1 else ''}): {100 * d['rel']:+.3f} % ± {100 * d['rel_se']:.3f} %, t = {d['t']:.2f}"
            + (f" (95 % bound {d['t_crit']:.2f})" if d["t_crit"] else "")
            + (" (significant)" if d["significant"] else ""))


def text(c):
    """Report lines for compare(ref, test) (differences in %)."""
    lines = [_line(k.replace("_us", ""), c[k], " us") for k in FIGURES if k in c]
    for row in c["bins"]:
        for p in PERCENTILES:
            if row[f"p{p}"]:
                lines.append(_line(f"slowdown p{p} of {bin_name(row)}", row[f"p{p}"]))
    lines.append(f"pooled slowdowns: KS {c['ks']:.4f} (one reference run against the pooled reference: up to "
                 f"{c['ks_floor']:.4f})")
    return lines
