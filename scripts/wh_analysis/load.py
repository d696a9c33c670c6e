"""Readers for a run's outputs: the HDF5 results file and the HPCC text files (fct.txt, pfc.txt).

Every reader raises AnalysisError naming the file (and the dataset, column or line) on bad input.
The results layout is docs/results.md; fct.txt is `sip dip sport dport size start_ns fct_ns
standalone_fct_ns` (IPs as 8 hex digits, the rest decimal), pfc.txt `time_ns node node_type if_index type`.
"""
from pathlib import Path

import h5py
import numpy as np

from .common import AnalysisError, node_ip

FCT_FORMAT = "sip dip sport dport size start_ns fct_ns standalone_fct_ns"
PFC_FORMAT = "time_ns node node_type if_index type"
FLOW_FIELDS = ("src", "dst", "sport", "dport", "size_bytes", "start_ns", "fct_ns", "ideal_fct_ns", "finished")
PFC_FIELDS = ("time_ns", "node", "node_type", "if_index", "type", "cls")


def _check_file(path):
    p = Path(path)
    if not p.exists():
        raise AnalysisError(f"{path}: no such file")
    if p.is_dir():
        raise AnalysisError(f"{path}: is a directory, not a file")
    return p


def run_file(path):
    """A run's output folder stands for the results.h5 in it; any other path is returned as given.
    AnalysisError for a folder without results.h5."""
    p = Path(path)
    if not p.is_dir():
        return path
    if (p / "results.h5").is_file():
        return str(p / "results.h5")
    raise AnalysisError(f"{path}: a folder without results.h5 (give a run's output folder, a results .h5 or an "
                        "HPCC fct.txt)")


def is_hdf5(path):
    """True if path is an existing HDF5 file (by its signature, not its name)."""
    p = _check_file(path)
    try:
        return bool(h5py.is_hdf5(str(p)))
    except OSError as e:
        raise AnalysisError(f"{path}: cannot read: {e}")


def open_results(path):
    """Opens a results .h5 read-only; AnalysisError if it is missing or not HDF5."""
    if not is_hdf5(path):
        raise AnalysisError(f"{path}: not an HDF5 file (expected a wormhole results.h5)")
    try:
        return h5py.File(str(path), "r")
    except OSError as e:
        raise AnalysisError(f"{path}: cannot open as HDF5: {e}")


def table(f, name, fields):
    """Reads the listed fields of compound dataset `name` (e.g. "workload/layers") as a structured array.
    AnalysisError naming the file and dataset if it or a field is missing."""
    if name not in f or not isinstance(f[name], h5py.Dataset):
        raise AnalysisError(f"{f.filename}: no dataset /{name} (is this a wormhole results file? layout in "
                            f"docs/results.md)")
    ds = f[name]
    have = ds.dtype.names or ()
    missing = [c for c in fields if c not in have]
    if missing:
        raise AnalysisError(f"{f.filename}: dataset /{name} has no field(s) {', '.join(missing)}")
    if ds.shape[0] == 0:
        return np.zeros(0, dtype=[(c, ds.dtype[c]) for c in fields])
    return ds.fields(list(fields))[:]


def attrs(f, name, keys=()):
    """Attributes of group `name` as a dict (strings decoded); AnalysisError if the group or a key is missing."""
    if name not in f:
        raise AnalysisError(f"{f.filename}: no group /{name} (is this a wormhole results file? layout in "
                            f"docs/results.md)")
    a = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f[name].attrs.items()}
    missing = [k for k in keys if k not in a]
    if missing:
        raise AnalysisError(f"{f.filename}: /{name} has no attribute(s) {', '.join(missing)}")
    return a


class Flows:
    """One run's flows as numpy arrays (one element per flow; times and sizes integers).

    sip, dip: HPCC IPv4 as integers; sport, dport; size (bytes); start, fct, ideal (ns; fct = -1 when not
    finished; ideal is the reference's standalone FCT, fct.txt's column 8); min_fct (ns: the true ideal FCT of
    a results file of layout 4 or later, None otherwise); finished (bool). kind is "results" (.h5: every flow,
    finished or not) or "fct.txt" (only finished flows are listed there)."""

    def __init__(self, path, kind, sip, dip, sport, dport, size, start, fct, ideal, finished, min_fct=None):
        self.path, self.kind = str(path), kind
        self.sip, self.dip, self.sport, self.dport = sip, dip, sport, dport
        self.size, self.start, self.fct, self.ideal, self.finished = size, start, fct, ideal, finished
        self.min_fct = min_fct

    def __len__(self):
        return len(self.sip)

    def done(self):
        """Boolean mask of finished flows."""
        return self.finished

    def has_true_ideal(self):
        """Whether the flows carry the true ideal FCT (a results file of layout 4 or later)."""
        return self.min_fct is not None

    def denominator(self, reference=False):
        """The slowdown's denominator per flow (ns): the true ideal FCT where the file has it (unless
        `reference`), else the reference's standalone FCT."""
        return self.ideal if reference or self.min_fct is None else self.min_fct

    def slowdown_mask(self, reference=False):
        """Finished flows with a positive denominator."""
        return self.finished & (self.denominator(reference) > 0)

    def slowdown(self, reference=False):
        """FCT / ideal of the finished flows (ratio, unclamped): over the true ideal FCT (the writer's /flows
        slowdown) when the file has it, else (or with `reference`) over the reference's standalone FCT (the
        ratio fct.txt gives, as summary.json computes it)."""
        m = self.slowdown_mask(reference)
        return self.fct[m] / self.denominator(reference)[m]

    def slowdown_label(self, reference=False):
        """What slowdown() divides by, for axis labels and reports."""
        return "standalone FCT" if reference or self.min_fct is None else "true ideal FCT"


def flows_from_results(f):
    rows = table(f, "flows", FLOW_FIELDS)
    fin = rows["finished"].astype(bool)
    i64 = lambda c: rows[c].astype(np.int64)  # noqa: E731
    have = f["flows"].dtype.names or ()
    min_fct = table(f, "flows", ("min_fct_ns",))["min_fct_ns"].astype(np.int64) if "min_fct_ns" in have else None
    return Flows(f.filename, "results", node_ip(rows["src"]), node_ip(rows["dst"]), i64("sport"), i64("dport"),
                 i64("size_bytes"), i64("start_ns"), i64("fct_ns"), i64("ideal_fct_ns"), fin, min_fct)


_HEX = np.full(256, 255, dtype=np.uint8)
for _i, _c in enumerate(b"0123456789abcdef"):
    _HEX[_c] = _i
for _i, _c in enumerate(b"ABCDEF"):
    _HEX[_c] = 10 + _i


def _hex8(col):
    """Integers of an array of 8-hex-digit byte strings; None if any entry is not exactly 8 hex digits."""
    if len(col) and not np.all(np.char.str_len(col) == 8):
        return None
    nib = _HEX[np.ascontiguousarray(col.astype("S8")).view(np.uint8).reshape(-1, 8)]
    if np.any(nib == 255):
        return None
    return (nib.astype(np.int64) << np.array([28, 24, 20, 16, 12, 8, 4, 0], dtype=np.int64)).sum(axis=1)


def _first_bad_line(path, first_lineno, lines, ncols, hex_cols, what):
    for i, line in enumerate(lines):
        t = line.split()
        if not t:
            continue
        ok = len(t) == ncols
        try:
            for j, x in enumerate(t if ok else ()):
                int(x, 16) if j in hex_cols and len(x) == 8 else int(x)
        except ValueError:
            ok = False
        if not ok:
            text = line.decode(errors="replace").rstrip()
            raise AnalysisError(f"{path}:{first_lineno + i}: expected '{what}', got {text[:80]!r}")
    raise AnalysisError(f"{path}: cannot parse as '{what}'")


def read_columns(path, ncols, hex_cols, what):
    """An (n, ncols) int64 array of a whitespace-separated text file of integers (columns in hex_cols are
    8 hex digits), blank lines skipped; AnalysisError naming the first bad line. Parsed in blocks of lines
    with numpy, so a few million lines take seconds."""
    p = _check_file(path)
    blocks, lineno = [], 1
    with open(p, "rb") as fh:
        while True:
            lines = fh.readlines(1 << 23)
            if not lines:
                break
            arr = None
            if all(len(ln.split()) in (0, ncols) for ln in lines):
                tok = np.array(b" ".join(lines).split()).reshape(-1, ncols)
                arr = np.empty(tok.shape, dtype=np.int64)
                for j in range(ncols):
                    if j in hex_cols:
                        v = _hex8(tok[:, j])
                    else:
                        try:
                            v = tok[:, j].astype(np.int64)
                        except (ValueError, OverflowError):
                            v = None
                    if v is None:
                        arr = None
                        break
                    arr[:, j] = v
            if arr is None:
                _first_bad_line(path, lineno, lines, ncols, hex_cols, what)
            blocks.append(arr)
            lineno += len(lines)
    return np.concatenate(blocks) if blocks else np.zeros((0, ncols), dtype=np.int64)


def flows_from_fct_txt(path):
    a = read_columns(path, 8, (0, 1), FCT_FORMAT)
    return Flows(path, "fct.txt", a[:, 0], a[:, 1], a[:, 2], a[:, 3], a[:, 4], a[:, 5], a[:, 6], a[:, 7],
                 np.ones(len(a), dtype=bool))


def load_flows(path):
    """Flows of a results .h5 or an HPCC fct.txt (told apart by the HDF5 signature, not the name)."""
    if is_hdf5(path):
        with open_results(path) as f:
            return flows_from_results(f)
    if str(path).endswith((".h5", ".hdf5")):
        raise AnalysisError(f"{path}: named like an HDF5 file but not one (empty or truncated?); expected a "
                            f"wormhole results.h5")
    try:
        return flows_from_fct_txt(path)  # may be empty: a run in which no flow finished
    except AnalysisError as e:
        raise AnalysisError(f"{e} (the file is not HDF5 either: expected a wormhole results.h5 or an HPCC "
                            f"fct.txt)")


def pfc_from_results(f):
    """PFC frames of /pfc as a dict of int64 arrays time_ns, node, node_type, if_index, type, cls."""
    rows = table(f, "pfc", PFC_FIELDS)
    return {c: rows[c].astype(np.int64) for c in PFC_FIELDS}


def pfc_from_txt(path):
    """PFC frames of an HPCC pfc.txt (class 3: the file does not carry it, and only class 3 is paused)."""
    a = read_columns(path, 5, (), PFC_FORMAT)
    out = {c: a[:, i] for i, c in enumerate(PFC_FIELDS[:5])}
    out["cls"] = np.full(len(a), 3, dtype=np.int64)
    return out


def workload_group(f, job=None):
    """The group holding a training run's report: "workload", or "jobs/<job>" for job `job` of a run of
    several jobs. AnalysisError naming the file and, for a run of several jobs without `job` (or with one it
    lacks), the jobs it holds."""
    if job is None and "workload" in f:
        return "workload"
    jobs = sorted(f["jobs"]) if "jobs" in f else []
    if job is not None and job in jobs:
        return f"jobs/{job}"
    if jobs:
        raise AnalysisError(f"{f.filename}: a run of several jobs ({', '.join(jobs)})"
                            + (f" without a job {job!r}" if job is not None else "") + ": give --job NAME")
    raise AnalysisError(f"{f.filename}: no /workload group (not a training-workload run)"
                        + (f" and no job {job!r}" if job is not None else ""))


def workload(f):
    """(attributes, /workload/iterations rows) of a results file, or None for a run without a training
    workload."""
    if "workload" not in f:
        return None
    a = attrs(f, "workload", ("total_time_ps", "complete"))
    its = table(f, "workload/iterations", ("index", "start_ps", "end_ps", "time_ps"))
    return a, its


def iteration_times_ps(path):
    """{iteration index: time_ps} of a results file's /workload/iterations; None without /workload."""
    with open_results(path) as f:
        w = workload(f)
        if w is None:
            return None
        return {int(r["index"]): int(r["time_ps"]) for r in w[1]}
