"""Comparing two runs flow by flow: the accuracy figure of the project.

A and B are each a results .h5 or an HPCC fct.txt. A is the baseline (the reference, or Wormhole off).

* Join key: (sip, dip, sport, dport, start_ns) of the finished flows (`--ignore-start`: the first four
  only). sip/dip are HPCC IPs (fct.txt prints them in hex; /flows holds node ids, converted with
  0x0b000001 + (id/256)·0x10000 + (id%256)·0x100); start_ns is whole ns, as both files store it. Within a
  run sport = 10000 + k for the k-th flow between a pair, so the key is unique; should a key repeat, its
  k-th occurrence in A (file order) is joined with its k-th in B. Flows not finished (results files list
  them with fct_ns = -1; fct.txt omits them) are not joined and counted apart. Flows whose start time
  depends on other flows (a workload's dependent steps) move when the network does: compare such runs
  with --ignore-start.
* Per joined flow the relative FCT error e = |fct_B - fct_A| / fct_A; reported: mean, p50, p99
  (nearest rank), max, and the signed mean of (fct_B - fct_A) / fct_A (bias).
* Iteration time (both results files with /workload): iterations joined on their index,
  e = |t_B - t_A| / t_A each, reported per iteration with the mean and max.
"""
import math

import numpy as np

from .common import fmt, pct, stats
from .load import is_hdf5, iteration_times_ps, load_flows


def _keys(fl, with_start):
    """(void keys, flow indices, repeated keys) of the finished flows: each key the join columns plus the
    occurrence number of that key, so repeated keys join in file order."""
    idx = np.flatnonzero(fl.done())
    cols = [fl.sip, fl.dip, fl.sport, fl.dport] + ([fl.start] if with_start else [])
    k = np.stack([c[idx] for c in cols], axis=1).astype(np.int64)
    order = np.lexsort(k.T[::-1]) if len(k) else np.zeros(0, dtype=np.int64)
    ks = k[order]
    new = np.ones(len(ks), dtype=bool)
    new[1:] = np.any(ks[1:] != ks[:-1], axis=1)
    occ = np.arange(len(ks)) - np.flatnonzero(new)[np.cumsum(new) - 1]
    full = np.ascontiguousarray(np.column_stack([ks, occ]).astype(np.int64))
    return full.view(np.dtype((np.void, 8 * full.shape[1]))).ravel(), idx[order], int((~new).sum())


def join(a, b, with_start=True):
    """(indices into a, indices into b, repeated keys in a, in b) of the flows joined on the key."""
    ka, ia, da = _keys(a, with_start)
    kb, ib, db = _keys(b, with_start)
    _, pa, pb = np.intersect1d(ka, kb, assume_unique=True, return_indices=True)
    return ia[pa], ib[pb], da, db


def _side(fl):
    return {"file": fl.path, "kind": fl.kind, "flows": len(fl), "finished": int(fl.done().sum())}


def compare(path_a, path_b, ignore_start=False):
    """The comparison as a dict (see the module docstring), plus the joined FCTs (ns) under "_fct_a" and
    "_fct_b" for the scatter plot."""
    a, b = load_flows(path_a), load_flows(path_b)
    ia, ib, da, db = join(a, b, not ignore_start)
    fa, fb = a.fct[ia].astype(np.float64), b.fct[ib].astype(np.float64)
    ok = fa > 0
    err = np.abs(fb[ok] - fa[ok]) / fa[ok]
    bias = (fb[ok] - fa[ok]) / fa[ok]
    out = {"a": _side(a), "b": _side(b),
           "key": "sip, dip, sport, dport" + ("" if ignore_start else ", start_ns"),
           "joined": int(len(ia)), "only_a": int(a.done().sum()) - len(ia), "only_b": int(b.done().sum()) - len(ib),
           "repeated_keys_a": da, "repeated_keys_b": db, "zero_fct_a": int((~ok).sum()),
           "error": stats(err), "bias_mean": float(bias.mean()) if len(bias) else math.nan,
           "fct_mean_us_a": float(fa.mean() / 1000) if len(fa) else math.nan,
           "fct_mean_us_b": float(fb.mean() / 1000) if len(fb) else math.nan,
           "_fct_a": fa, "_fct_b": fb}
    if not ignore_start and (out["only_a"] or out["only_b"]):
        ia4, _, _, _ = join(a, b, False)
        if len(ia4) > len(ia):
            out["hint"] = (f"{len(ia4) - len(ia)} more flows join without start_ns (their start times differ, "
                           f"e.g. dependent workload steps): try --ignore-start")
    out["iterations"] = _iterations(path_a, path_b, out)
    return out


def _iterations(path_a, path_b, out):
    ta = iteration_times_ps(path_a) if is_hdf5(path_a) else None
    tb = iteration_times_ps(path_b) if is_hdf5(path_b) else None
    if ta is None or tb is None:
        if (ta is None) != (tb is None):
            out["iteration_note"] = (f"iteration time not compared: only {'A' if ta is not None else 'B'} is a "
                                     f"results file with /workload")
        return None
    rows = []
    for i in sorted(set(ta) & set(tb)):
        e = abs(tb[i] - ta[i]) / ta[i] if ta[i] > 0 else math.nan
        rows.append({"index": i, "a_us": ta[i] / 1e6, "b_us": tb[i] / 1e6, "error": e})
    if set(ta) != set(tb):
        out["iteration_note"] = f"iterations in one run only: {sorted(set(ta) ^ set(tb))}"
    errs = [r["error"] for r in rows if not math.isnan(r["error"])]
    out["iteration_error_mean"] = sum(errs) / len(errs) if errs else math.nan
    out["iteration_error_max"] = max(errs) if errs else math.nan
    return rows


def text(c):
    """The comparison dict as text lines (errors in %)."""
    side = lambda s: (f"{s['file']} ({s['kind']}: {s['flows']:,} flows"  # noqa: E731
                      + (f", {s['finished']:,} finished)" if s["kind"] == "results" else ")"))
    e = c["error"]
    lines = [f"A (baseline) {side(c['a'])}", f"B            {side(c['b'])}",
             f"joined on ({c['key']}): {c['joined']:,} flows; unmatched finished flows: {c['only_a']:,} only in A, "
             f"{c['only_b']:,} only in B"]
    if c["repeated_keys_a"] or c["repeated_keys_b"]:
        lines.append(f"repeated keys (joined in file order): {c['repeated_keys_a']} in A, {c['repeated_keys_b']} in B")
    if c["zero_fct_a"]:
        lines.append(f"{c['zero_fct_a']} joined flows with FCT 0 in A left out of the errors")
    lines.append(f"relative FCT error |B - A| / A: mean {pct(e['mean'])}, p50 {pct(e['p50'])}, p99 {pct(e['p99'])}, "
                 f"max {pct(e['max'])}; signed mean (B - A) / A {pct(c['bias_mean'])}")
    lines.append(f"mean FCT of the joined flows: A {fmt(c['fct_mean_us_a'])} us, B {fmt(c['fct_mean_us_b'])} us")
    for r in c["iterations"] or []:
        lines.append(f"iteration {r['index']}: A {r['a_us']:.3f} us, B {r['b_us']:.3f} us, error {pct(r['error'], 4)}")
    if c["iterations"]:
        lines.append(f"iteration-time error: mean {pct(c['iteration_error_mean'], 4)}, "
                     f"max {pct(c['iteration_error_max'], 4)}")
    for side, name in (("a", "A"), ("b", "B")):
        if c[side]["finished"] == 0:
            lines.append(f"note: {name} has no finished flow")
    for k in ("iteration_note", "hint"):
        if k in c:
            lines.append(f"note: {c[k]}")
    return lines
