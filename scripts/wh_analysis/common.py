"""Shared helpers: the bad-input exception, nearest-rank percentiles, the HPCC IP encoding, formatting."""
import math

import numpy as np


class AnalysisError(Exception):
    """Bad input (missing file, wrong format, missing dataset or column): reported as
    `wh_analyze: error: <message>` with exit status 2. The message names the file."""


def nearest_rank(sorted_values, pct):
    """Nearest-rank percentile of an ascending sequence: the value at 1-based rank ceil(pct/100 * n).

    pct is an integer percentage (50, 99); integer arithmetic, as the C++ writer and refruns' summary.json
    compute it (ceil(0.99 * n) in floating point can land one rank too high). NaN for an empty sequence.
    """
    n = len(sorted_values)
    if n == 0:
        return math.nan
    rank = min(max((int(pct) * n + 99) // 100, 1), n)
    return sorted_values[rank - 1]


def stats(values):
    """{n, mean, p50, p99, max} of a 1-D array (nearest-rank percentiles; NaN entries when empty)."""
    v = np.sort(np.asarray(values, dtype=np.float64))
    if len(v) == 0:
        return {"n": 0, "mean": math.nan, "p50": math.nan, "p99": math.nan, "max": math.nan}
    return {"n": int(len(v)), "mean": float(math.fsum(v) / len(v)), "p50": float(nearest_rank(v, 50)),
            "p99": float(nearest_rank(v, 99)), "max": float(v[-1])}


def node_ip(node):
    """HPCC's IPv4 of a node id (as fct.txt prints it in hex): 0x0b000001 + (id/256)·0x10000 + (id%256)·0x100.
    Works element-wise on numpy integer arrays."""
    node = np.asarray(node, dtype=np.int64)
    return 0x0B000001 + (node // 256) * 0x10000 + (node % 256) * 0x100


def ip_node(ip):
    """Inverse of node_ip (node id of an HPCC IPv4 given as an integer)."""
    ip = np.asarray(ip, dtype=np.int64)
    return ((ip >> 16) - 0x0B00) * 256 + ((ip >> 8) & 0xFF)


def fmt(x, spec=".3f", none="n/a"):
    """A number for a text report; NaN/None as `none`."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return none
    return format(x, spec)


def pct(x, digits=3):
    """A ratio as a percentage ("0.123 %"); tiny non-zero values in scientific notation, never shown as 0."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if math.isinf(x):
        return "inf"
    if x == 0:
        return "0 %"
    if abs(100 * x) < 10 ** -digits:
        return f"{100 * x:.1e} %"
    return f"{100 * x:.{digits}f} %"


def json_clean(obj):
    """obj with NaN/inf floats replaced by None and numpy scalars by Python ones, for strict JSON."""
    if isinstance(obj, dict):
        return {k: json_clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_clean(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def size_bins(sizes):
    """Bins of flow sizes (bytes): one per distinct size if there are at most 12, otherwise 12 bins
    equally wide in log(size), with 0-byte flows (no log) in a bin of their own. Returns a list of (lo, hi)
    inclusive bounds covering every size."""
    distinct = np.unique(sizes)
    if len(distinct) <= 12:
        return [(int(s), int(s)) for s in distinct]
    zero = [(0, 0)] if distinct[0] == 0 else []
    positive = distinct[distinct > 0]
    edges = np.unique(np.floor(np.geomspace(positive[0], positive[-1] + 1, 13)).astype(np.int64))
    bins = [(int(lo), int(hi) - 1) for lo, hi in zip(edges[:-1], edges[1:])]
    bins[-1] = (bins[-1][0], int(positive[-1]))
    return zero + [b for b in bins if np.any((sizes >= b[0]) & (sizes <= b[1]))]
