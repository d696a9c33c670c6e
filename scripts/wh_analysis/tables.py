"""Scaling and sweep tables: reading them (CSV, JSON or Markdown) and their plots.

Table files
* CSV with a header row (`#` lines skipped), JSON (a list of objects, or an object whose "rows" is one),
  or Markdown (`| a | b |` tables; the first whose header has every required column is read, so the
  output of `scripts/bench_wormhole.py --out FILE` is accepted as it is).
* Cells are numbers; thousands separators are ignored, a trailing `x` / `×` is dropped (speedups
  "3.60x"), a trailing `%` divides by 100 (errors "0.030 %"), and `–`, `-`, `n/a` or an empty cell is
  missing (the row is left out of the plot with a note).

Scaling table (plot-scaling): columns `ranks` (MPI ranks, integer >= 1) and `wall_s` (wall-clock seconds
of the run), optional `label` (or `scenario`): one curve per label. Rows with the same label and ranks
are repetitions; the smallest wall_s is used. With r0 the smallest rank count of a curve:
  strong scaling: speedup(r) = wall_s(r0) / wall_s(r), efficiency(r) = speedup(r) · r0 / r
  weak scaling (--weak, work per rank fixed): efficiency(r) = wall_s(r0) / wall_s(r)

Sweep table (plot-sweep): columns `theta` (θ, also `θ`), `window` (l, also `l`), `error` (mean per-flow
relative FCT error as a fraction, or with `%`; also `mean FCT err`) and `speedup` (wall time off / on);
optional `p99_error` (`p99 FCT err`), `iter_error` (`iter err (max)`) and `label`.
"""
import csv
import json
import math
import re
from pathlib import Path

from .common import AnalysisError
from .plots import pyplot, save

SCALING_COLUMNS = {"ranks": ("ranks",), "wall_s": ("wall_s",), "label": ("label", "scenario")}
SWEEP_COLUMNS = {"theta": ("theta", "θ"), "window": ("window", "l"), "error": ("error", "mean fct err"),
                 "speedup": ("speedup",), "p99_error": ("p99_error", "p99 fct err"),
                 "iter_error": ("iter_error", "iter err (max)"), "label": ("label", "scenario")}
MISSING = {"", "-", "–", "—", "n/a", "na", "nan", "none", "null"}


def number(cell):
    """A table cell as a float (NaN if missing); raises ValueError if it is not a number."""
    if cell is None:
        return math.nan
    if isinstance(cell, (int, float)):
        return float(cell)
    s = str(cell).strip().replace(",", "").replace("\u202f", "").replace(" ", "")
    if s.lower() in MISSING:
        return math.nan
    scale = 1.0
    if s.endswith("%"):
        s, scale = s[:-1], 0.01
    elif s[-1:] in ("x", "×"):
        s = s[:-1]
    return float(s) * scale


def _markdown_tables(text):
    """(header, rows) of every `| a | b |` table in a Markdown text (separator lines dropped)."""
    tables, cur = [], []
    for line in text.splitlines() + [""]:
        if line.strip().startswith("|"):
            cur.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif cur:
            tables.append(cur)
            cur = []
    out = []
    for t in tables:
        body = [r for r in t[1:] if not all(re.fullmatch(r":?-{3,}:?", c) for c in r)]
        out.append((t[0], [dict(zip(t[0], r)) for r in body]))
    return out


def _canonical(row, columns):
    """row with its keys mapped to the canonical column names (case-insensitive aliases)."""
    lower = {str(k).strip().lower(): v for k, v in row.items()}
    return {name: lower[a.lower()] for name, aliases in columns.items() for a in aliases if a.lower() in lower}


def read_table(path, columns, required):
    """Rows of a CSV / JSON / Markdown table as dicts keyed by canonical column names (aliases in
    `columns`); AnalysisError naming the file and the missing columns."""
    p = Path(path)
    if not p.is_file():
        raise AnalysisError(f"{path}: no such file" if not p.exists() else f"{path}: is not a file")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise AnalysisError(f"{path}: cannot read as text: {e}")
    if text.lstrip().startswith(("[", "{")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise AnalysisError(f"{path}: not valid JSON: {e}")
        rows = data.get("rows") if isinstance(data, dict) else data
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise AnalysisError(f"{path}: JSON must be a list of objects or an object with a \"rows\" list")
        candidates = [({k for r in rows for k in r}, rows)]
    elif any(line.strip().startswith("|") for line in text.splitlines()):
        candidates = _markdown_tables(text)
    else:
        lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        reader = csv.DictReader(lines)
        rows = list(reader)
        candidates = [(reader.fieldnames or [], rows)]
    found = set()
    for header, rows in candidates:
        have = set(_canonical({h: None for h in header}, columns))
        if set(required) <= have:
            if not rows:
                raise AnalysisError(f"{path}: the table has no rows")
            return [_canonical(r, columns) for r in rows]
        if len(have & set(required)) >= len(found & set(required)):
            found = have
    missing = [c for c in required if c not in found]
    raise AnalysisError(f"{path}: no table with the column(s) {', '.join(missing)} "
                        f"(need {', '.join(required)}; see --help for the table format)")


def _num(path, i, row, col):
    try:
        return number(row.get(col))
    except ValueError:
        raise AnalysisError(f"{path}: row {i + 1}: column {col}: {row.get(col)!r} is not a number")


def scaling(path, weak=False):
    """Per label, rows {ranks, wall_s, speedup, efficiency} in rank order (see the module docstring)."""
    rows = read_table(path, SCALING_COLUMNS, ("ranks", "wall_s"))
    best = {}
    for i, r in enumerate(rows):
        ranks, wall = _num(path, i, r, "ranks"), _num(path, i, r, "wall_s")
        if math.isnan(ranks) or math.isnan(wall):
            continue
        if ranks < 1 or ranks != int(ranks) or wall <= 0:
            raise AnalysisError(f"{path}: row {i + 1}: ranks must be an integer >= 1 and wall_s > 0 "
                                f"(got {r.get('ranks')!r}, {r.get('wall_s')!r})")
        key = (str(r.get("label", "") or ""), int(ranks))
        best[key] = min(best.get(key, math.inf), wall)
    if not best:
        raise AnalysisError(f"{path}: no row with both ranks and wall_s")
    out = {}
    for label in sorted({k[0] for k in best}):
        pts = sorted((r, w) for (lb, r), w in best.items() if lb == label)
        r0, w0 = pts[0]
        out[label] = [{"ranks": r, "wall_s": w, "efficiency": w0 / w} if weak else
                      {"ranks": r, "wall_s": w, "speedup": w0 / w, "efficiency": (w0 / w) * r0 / r} for r, w in pts]
    return out


def plot_scaling(curves, out, weak):
    """Speedup (or, --weak, wall time) and parallel efficiency against ranks, one curve per label."""
    plt = pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.0, 3.8))
    allr = sorted({p["ranks"] for pts in curves.values() for p in pts})
    for i, (label, pts) in enumerate(curves.items()):
        r = [p["ranks"] for p in pts]
        ax1.plot(r, [p["wall_s"] if weak else p["speedup"] for p in pts], "o-", color=f"C{i}", label=label or None)
        ax2.plot(r, [p["efficiency"] for p in pts], "o-", color=f"C{i}", label=label or None)
    if not weak:
        r0 = min(p[0]["ranks"] for p in curves.values())
        ax1.plot(allr, [r / r0 for r in allr], "k:", lw=1, label="ideal")
        ax1.set(ylabel="speedup over the fewest ranks")
    else:
        ax1.set(ylabel="wall time (s)")
    ax2.axhline(1.0, color="k", ls=":", lw=1)
    top = max(p["efficiency"] for v in curves.values() for p in v)
    ax2.set(ylabel="parallel efficiency", ylim=(0, max(1.1, top * 1.05)))
    for ax in (ax1, ax2):
        ax.set_xscale("log", base=2)
        ax.set_xticks(allr)
        ax.set_xticklabels([str(r) for r in allr])
        ax.set_xlabel("MPI ranks")
        ax.grid(alpha=0.3)
    if any(curves) or not weak:
        ax1.legend(fontsize=8)
    fig.suptitle(("weak" if weak else "strong") + " scaling")
    fig.tight_layout()
    save(fig, out)


def sweep(path, metric="error"):
    """Rows {label, theta, window, error, speedup, pareto} of a sweep table with `metric` (error, p99_error
    or iter_error) as the error; rows missing a value are returned under "skipped"."""
    rows = read_table(path, SWEEP_COLUMNS, ("theta", "window", metric, "speedup"))
    pts, skipped = [], []
    for i, r in enumerate(rows):
        v = {c: _num(path, i, r, c) for c in ("theta", "window", metric, "speedup")}
        if any(math.isnan(x) for x in v.values()):
            skipped.append(i + 1)
            continue
        pts.append({"label": str(r.get("label", "") or ""), "theta": v["theta"], "window": int(v["window"]),
                    "error": v[metric], "speedup": v["speedup"]})
    if not pts:
        raise AnalysisError(f"{path}: no row with theta, window, {metric} and speedup all given")
    for p in pts:  # Pareto-optimal within its label: no point of the same label at least as fast and as
        # accurate and better in one (points of different labels — e.g. CCs — are different curves).
        p["pareto"] = not any(q is not p and q["label"] == p["label"] and q["speedup"] >= p["speedup"]
                              and q["error"] <= p["error"] and (q["speedup"] > p["speedup"] or q["error"] < p["error"])
                              for q in pts)
    return pts, skipped


def plot_sweep(pts, out, metric):
    """Error (%) against speedup with each label's Pareto front. One label (or none): colour = θ, marker =
    l. Several labels (e.g. a CC × buffer sweep): colour = label, marker = (θ, l)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    labels = sorted({p["label"] for p in pts})
    thetas = sorted({p["theta"] for p in pts})
    windows = sorted({p["window"] for p in pts})
    markers = "osD^v<>PX*"
    by_label = len(labels) > 1
    tw = sorted({(p["theta"], p["window"]) for p in pts})
    for p in pts:
        colour = labels.index(p["label"]) if by_label else thetas.index(p["theta"])
        marker = tw.index((p["theta"], p["window"])) if by_label else windows.index(p["window"])
        ax.scatter([p["speedup"]], [100 * p["error"]], color=f"C{colour % 10}", marker=markers[marker % len(markers)],
                   s=40, zorder=3)
    for i, label in enumerate(labels):
        front = sorted((p for p in pts if p["pareto"] and p["label"] == label), key=lambda p: p["speedup"])
        ax.plot([p["speedup"] for p in front], [100 * p["error"] for p in front], "--", lw=0.8,
                color=f"C{i % 10}" if by_label else "k",
                label=f"Pareto front {label}" if by_label else "Pareto front")
    if by_label:
        for k, (t, w) in enumerate(tw):
            ax.scatter([], [], color="gray", marker=markers[k % len(markers)], label=f"θ = {t:g}, l = {w}")
    else:
        for i, t in enumerate(thetas):
            ax.scatter([], [], color=f"C{i % 10}", marker="o", label=f"θ = {t:g}")
        for j, w in enumerate(windows):
            ax.scatter([], [], color="gray", marker=markers[j % len(markers)], label=f"l = {w}")
    errs = [p["error"] for p in pts]
    if min(errs) > 0 and max(errs) / min(errs) > 100:
        ax.set_yscale("log")
    ax.axvline(1.0, color="gray", lw=0.8, ls=":")
    name = {"error": "mean FCT error", "p99_error": "p99 FCT error", "iter_error": "iteration-time error"}[metric]
    ax.set(xlabel="speedup (wall time Wormhole off / on)", ylabel=f"{name} (%)",
           title=f"θ × l sweep: {name} vs speedup")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    save(fig, out)

