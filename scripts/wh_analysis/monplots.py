"""Figures of the port monitor (monitor.h5, PORT_MON 1; docs/results.md "Monitors"): a heatmap of link utilisation
over time (plot-links) and the queues of chosen ports over time (plot-queues). Ports Wormhole froze are marked."""
from pathlib import Path

import h5py
import numpy as np

from .common import AnalysisError
from .plots import matplotlib_ticker, pyplot, save


def monitor_path(path):
    """monitor.h5 from a monitor file, a results.h5 beside it, or the run's output folder."""
    p = Path(path)
    if p.is_dir():
        p = p / "monitor.h5"
    elif p.name != "monitor.h5" and (p.parent / "monitor.h5").is_file() and p.suffix == ".h5":
        with h5py.File(p, "r") as f:
            if "utilisation" not in f:
                p = p.parent / "monitor.h5"
    if not p.is_file():
        raise AnalysisError(f"{path}: no monitor.h5 (run with --set PORT_MON=1; docs/network-model.md §5.6)")
    return p


def load_monitor(path):
    """The monitor's arrays: ports (structured), time_ns, interval_ns, utilisation, queue_bytes, queue_max_bytes,
    paused, frozen."""
    p = monitor_path(path)
    try:
        with h5py.File(p, "r") as f:
            need = ("ports", "time_ns", "utilisation", "queue_bytes", "queue_max_bytes", "paused", "frozen")
            missing = [k for k in need if k not in f]
            if missing:
                raise AnalysisError(f"{p}: not a monitor file (no {', '.join(missing)})")
            m = {k: f[k][:] for k in need}
            m["interval_ns"] = int(f.attrs["interval_ns"])
            m["file"] = str(p)
    except OSError as e:
        raise AnalysisError(f"{p}: cannot read: {e}")
    if len(m["time_ns"]) == 0:
        raise AnalysisError(f"{p}: no rows (the run ended before the first interval)")
    return m


def active_rows(m):
    """Rows up to the last one in which a monitored port sent, queued or was paused: a run's idle tail (an HPCC
    run's retransmission timers go on 10 ms past its last flow) is cut from the figures. At least one row."""
    busy = (m["utilisation"] > 0).any(axis=1) | (m["queue_bytes"] > 0).any(axis=1) | (m["paused"] > 0).any(axis=1)
    idx = np.nonzero(busy)[0]
    return int(idx[-1]) + 1 if len(idx) else 1


def port_name(r):
    return f"{int(r['node'])}:{int(r['if_index'])}>{int(r['peer_node'])}"


def plot_links(path, out, top=48, link=None):
    """Heatmap of utilisation (fraction of line rate) over time, one row per port: the `top` busiest ports (by mean
    utilisation) of the kind `link` (nic, fabric, nvlink; all if None), ordered by node and interface. Cells in which
    Wormhole froze the port are grey (not measured)."""
    plt = pyplot()
    m = load_monitor(path)
    ports, util, frozen = m["ports"], m["utilisation"], m["frozen"]
    cols = np.arange(len(ports))
    if link:
        cols = cols[ports["link"].astype(str) == link]
        if len(cols) == 0:
            raise AnalysisError(f"{m['file']}: no {link} port among the {len(ports)} monitored")
    n = active_rows(m)
    util, frozen = util[:n], frozen[:n]
    mean = util[:, cols].mean(axis=0)
    pick = cols[np.argsort(-mean, kind="stable")[:top]]
    pick = pick[np.lexsort((ports["if_index"][pick], ports["node"][pick]))]
    t0 = (m["time_ns"][0] - m["interval_ns"]) / 1e3
    t1 = m["time_ns"][n - 1] / 1e3
    fig, ax = plt.subplots(figsize=(9.0, max(3.5, 1.6 + 0.16 * len(pick))))
    data = util[:, pick].T
    vmax = max(1.0, float(data.max()))
    im = ax.imshow(data, aspect="auto", interpolation="nearest", cmap="viridis", vmin=0, vmax=vmax,
                   extent=(0, t1 - t0, len(pick) - 0.5, -0.5))
    fz = frozen[:, pick].T.astype(bool)
    if fz.any():
        rgba = np.zeros(fz.shape + (4,))
        rgba[fz] = (0.75, 0.75, 0.75, 1.0)
        ax.imshow(rgba, aspect="auto", interpolation="nearest", extent=(0, t1 - t0, len(pick) - 0.5, -0.5))
        from matplotlib.patches import Patch
        ax.legend(handles=[Patch(color=(0.75, 0.75, 0.75), label="frozen by Wormhole (not measured)")],
                  loc="upper right", fontsize=7, framealpha=0.9)
    ax.set_yticks(range(len(pick)))
    ax.set_yticklabels([port_name(ports[j]) for j in pick], fontsize=6 if len(pick) > 32 else 8)
    ax.set(xlabel=f"time since {t0 / 1e6:.6f} s (us)", ylabel="port (node:interface>peer)",
           title=f"{Path(m['file']).parent.name}: link utilisation, {len(pick)} busiest of {len(cols)} {link or 'monitored'} ports, "
                 f"{n:,} intervals of {m['interval_ns'] / 1e3:g} us"
                 + (f" ({len(m['time_ns']) - n:,} idle ones after not shown)" if n < len(m["time_ns"]) else ""))
    ax.title.set_fontsize(10)
    cb = fig.colorbar(im, ax=ax, pad=0.01)
    cb.set_label("utilisation (fraction of line rate)")
    fig.tight_layout()
    save(fig, out)
    return {"file": str(out), "monitor": m["file"], "rows": int(n), "ports_shown": int(len(pick)),
            "ports": [{"port": int(ports["port"][j]), "name": port_name(ports[j]), "link": str(ports["link"][j].decode()
                       if isinstance(ports["link"][j], bytes) else ports["link"][j]),
                       "mean_utilisation": float(util[:, j].mean()), "max_utilisation": float(util[:, j].max()),
                       "frozen_intervals": int(frozen[:, j].sum())} for j in pick]}


def plot_queues(path, out, names=None, top=5):
    """Egress queue (KB) over time of chosen ports ("node:if", as plot-links names them without the peer), or of the
    `top` ports with the largest queue: the queue at each interval's end (line) and its largest value in the
    interval (shaded up to it)."""
    plt = pyplot()
    m = load_monitor(path)
    ports, q, qmax = m["ports"], m["queue_bytes"], m["queue_max_bytes"]
    if names:
        pick = []
        for n in names:
            try:
                node, ifx = (int(x) for x in n.split(":"))
            except ValueError:
                raise AnalysisError(f"--port {n}: write NODE:IF, e.g. 17:1")
            j = np.nonzero((ports["node"] == node) & (ports["if_index"] == ifx))[0]
            if len(j) == 0:
                raise AnalysisError(f"{m['file']}: port {n} is not monitored (PORT_MON_NODES)")
            pick.append(int(j[0]))
    else:
        peaks = qmax.max(axis=0).astype(np.int64)  # unsigned in the file: negated it would wrap
        pick = [int(j) for j in np.argsort(-peaks, kind="stable")[:top] if peaks[j] > 0]
        if not pick:
            raise AnalysisError(f"{m['file']}: no monitored port ever queued a byte")
    n = active_rows(m)
    q, qmax = q[:n], qmax[:n]
    t0 = m["time_ns"][0] - m["interval_ns"]
    t = (m["time_ns"][:n] - t0) / 1e3
    fig, ax = plt.subplots(figsize=(8.0, 4.4))
    for i, j in enumerate(pick):
        label = f"{port_name(ports[j])} ({ports['link'][j].decode() if isinstance(ports['link'][j], bytes) else ports['link'][j]})"
        ax.fill_between(t, 0, qmax[:, j] / 1e3, step="pre", color=f"C{i}", alpha=0.15, lw=0)
        ax.step(t, q[:, j] / 1e3, where="pre", color=f"C{i}", lw=1, label=label)
        fz = m["frozen"][:n, j].astype(bool)
        if fz.any():
            ax.plot(t[fz], q[fz, j] / 1e3, "x", color=f"C{i}", ms=3)
    ax.yaxis.set_major_locator(matplotlib_ticker().MaxNLocator(nbins=6))
    ax.set(xlabel=f"time since {t0 / 1e9:.6f} s (us)", ylabel="egress queue (KB)",
           title=f"{Path(m['file']).parent.name}: egress queues of {len(pick)} ports, at each {m['interval_ns'] / 1e3:g}-us interval's end (line), "
                 f"peak within it (shaded)")
    ax.legend(fontsize=8, title="node:interface>peer", title_fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    save(fig, out)
    return {"file": str(out), "monitor": m["file"],
            "ports": [{"name": port_name(ports[j]), "peak_bytes": int(qmax[:, j].max()),
                       "mean_bytes": float(q[:, j].mean())} for j in pick]}
