"""The run summary: flows and FCT / slowdown statistics, run counters, PFC pauses, the training workload's
iterations and exposed communication, and what Wormhole's fast-forwarding did.

Statistics are recomputed from /flows (finished flows only; nearest-rank percentiles), so they match the
writer's /run attributes and refruns' summary.json. Times: µs unless named otherwise.
"""
import math

import numpy as np

from .common import fmt, pct, stats
from .load import attrs, flows_from_results, is_hdf5, load_flows, open_results, pfc_from_results, workload


def pfc_pauses(pfc, end_ns):
    """Pause intervals of a PFC frame table (dict of arrays as load.pfc_from_results returns).

    A PAUSE received by (node, if_index, cls) pauses that port's class until a RESUME for it arrives (HPCC's
    pauses never expire: docs/network-model.md §PFC); a PAUSE while paused or a RESUME while not paused changes
    nothing. A pause still open at the end is closed at end_ns. Returns a list of
    (start_ns, end_ns, node, node_type, if_index, cls), in start order, and the number left open."""
    order = np.argsort(pfc["time_ns"], kind="stable")
    open_at, out = {}, []
    for i in order:
        port = (int(pfc["node"][i]), int(pfc["node_type"][i]), int(pfc["if_index"][i]), int(pfc["cls"][i]))
        t = int(pfc["time_ns"][i])
        if pfc["type"][i] == 1:
            open_at.setdefault(port, t)
        elif port in open_at:
            out.append((open_at.pop(port), t) + port)
    still_open = len(open_at)
    for port, t in open_at.items():
        out.append((t, max(t, int(end_ns))) + port)
    out.sort()
    return out, still_open


def pfc_stats(pfc, end_ns):
    """{frames, pause_frames, resume_frames, ports, pauses, paused_port_time_us, longest_pause_us,
    max_paused_at_once, still_paused_at_end} of a PFC frame table."""
    iv, still_open = pfc_pauses(pfc, end_ns)
    durations = [e - s for s, e, *_ in iv]
    # Most ports paused at once: a sweep over interval ends (-1) and starts (+1); an end at the same time
    # as a start comes first. A PAUSE and its RESUME in the same ns pause nothing for any time: they are
    # left out (they would step the count below zero).
    edges = sorted([(s, 1) for s, e, *_ in iv if e > s] + [(e, -1) for s, e, *_ in iv if e > s])
    cur = most = 0
    for _, d in edges:
        cur += d
        most = max(most, cur)
    ports = {tuple(int(pfc[c][i]) for c in ("node", "if_index", "cls")) for i in range(len(pfc["time_ns"]))}
    return {"frames": int(len(pfc["time_ns"])), "pause_frames": int(np.sum(pfc["type"] == 1)),
            "resume_frames": int(np.sum(pfc["type"] == 0)), "ports": len(ports), "pauses": len(iv),
            "paused_port_time_us": sum(durations) / 1000.0,
            "longest_pause_us": max(durations) / 1000.0 if durations else 0.0,
            "max_paused_at_once": most, "still_paused_at_end": still_open}


def flow_section(fl):
    """Flow counts, FCT (µs) and slowdown statistics over finished flows, and the makespan."""
    done = fl.done()
    fct_us = fl.fct[done] / 1000.0
    out = {"flows": len(fl), "finished": int(done.sum()), "fct_us": stats(fct_us), "slowdown": stats(fl.slowdown()),
           "slowdown_over": fl.slowdown_label(), "bytes": int(fl.size.sum())}
    if fl.has_true_ideal():
        out["slowdown_ref"] = stats(fl.slowdown(reference=True))
    if done.any():
        first, last = int(fl.start.min()), int((fl.start[done] + fl.fct[done]).max())
        out.update(first_start_ns=first, last_finish_ns=last, makespan_us=(last - first) / 1000.0)
    return out


def summarize(path):
    """The summary of a results .h5 (every section present in the file) or of an HPCC fct.txt (flows only),
    as a dict; see text() for the printed form."""
    if not is_hdf5(path):
        return {"file": str(path), "kind": "fct.txt", "flows": flow_section(load_flows(path))}
    with open_results(path) as f:
        run = attrs(f, "run")
        out = {"file": str(path), "kind": "results", "layout_version": int(f.attrs.get("layout_version", 0)),
               "flows": flow_section(flows_from_results(f))}
        out["run"] = {k: run[k] for k in ("scenario", "version", "cc", "command_line", "complete", "incomplete",
                                          "events", "wall_s", "events_per_s", "sim_end_ns", "ecn_marks",
                                          "packets_dropped", "drops_buffer", "drops_loss", "drops_link_down",
                                          "retransmitted_packets", "retransmitted_bytes", "retransmit_timeouts",
                                          "max_queue_bytes") if k in run}
        out["pfc"] = pfc_stats(pfc_from_results(f), run.get("sim_end_ns", 0))
        w = workload(f)
        if w is not None:
            a, its = w
            keys = ("workload_file", "gpus", "tp", "dp", "ep", "dp_ep", "report_gpu", "total_time_ps",
                    "total_compute_ps", "total_exposed_ps", "exposed_tp_ps", "exposed_dp_ps", "exposed_ep_ps",
                    "exposed_dp_ep_ps", "exposed_pp_ps", "exposure_by_group", "complete", "incomplete")
            out["workload"] = {k: a[k] for k in keys if k in a}
            out["workload"]["iteration_time_us"] = [int(t) / 1e6 for t in its["time_ps"]]
            # The slowest GPU (exposed longest, the /workload attribute), as the run's printout names it beside the report GPU.
            if "gpus" in f["workload"] and "slowest_gpu" in f["workload"].attrs:
                gpus = f["workload"]["gpus"][:]
                slow = int(f["workload"].attrs["slowest_gpu"])
                row = gpus[list(gpus["gpu"]).index(slow)] if slow in gpus["gpu"] else None
                if row is not None:
                    out["workload"]["slowest_gpu"] = slow
                    out["workload"]["slowest"] = {k: int(row[k]) for k in gpus.dtype.names}
        if "jobs" in f:  # a run of several jobs: one group per job, listed in the scenario's order
            out["jobs"] = []
            for name in sorted(f["jobs"], key=lambda n: int(f["jobs"][n].attrs["index"])):
                g = f["jobs"][name]
                a = g.attrs
                out["jobs"].append({"name": name, "gpus": int(a["gpus"]), "start_us": int(a["start_ps"]) / 1e6,
                                    "complete": int(a["complete"]), "flows": len(g["flows"]),
                                    "total_exposed_us": int(a["total_exposed_ps"]) / 1e6,
                                    "iteration_time_us": [int(t) / 1e6 for t in g["iterations"]["time_ps"]]})
        if "wormhole" in f:
            out["wormhole"] = dict(attrs(f, "wormhole"))
            out["wormhole"].pop("units", None)
    return out


def _stat_line(s, spec):
    return (f"mean {fmt(s['mean'], spec)}, p50 {fmt(s['p50'], spec)}, p99 {fmt(s['p99'], spec)}, "
            f"max {fmt(s['max'], spec)}")


def text(s):
    """The summary dict as text lines."""
    fl = s["flows"]
    head = f"file      {s['file']}"
    if s["kind"] == "results":
        r = s["run"]
        head += f" (layout {s['layout_version']}, wormhole {r.get('version', '?')}, scenario {r.get('scenario', '?')})"
    else:
        head += " (HPCC fct.txt: finished flows only)"
    lines = [head, f"flows     {fl['finished']:,} finished of {fl['flows']:,} ({fl['bytes']:,} bytes)",
             f"FCT us    {_stat_line(fl['fct_us'], '.3f')}",
             f"slowdown  {_stat_line(fl['slowdown'], '.4f')} (FCT / {fl.get('slowdown_over', 'standalone FCT')})"]
    if "slowdown_ref" in fl:
        lines.append(f"          {_stat_line(fl['slowdown_ref'], '.4f')} (FCT / the reference's standalone FCT)")
    if "makespan_us" in fl:
        lines.append(f"makespan  {fl['makespan_us']:.3f} us (first start {fl['first_start_ns'] / 1e9:.9f} s, last "
                     f"finish {fl['last_finish_ns'] / 1e9:.9f} s)")
    if s["kind"] != "results":
        return lines
    r = s["run"]
    if not int(r.get("complete", 1)):
        lines.append(f"INCOMPLETE {r.get('incomplete', '')}")
    if r.get("cc"):
        lines.append(f"CC        {r['cc']}")
    lines.append(f"run       {int(r.get('events', 0)):,} events in {fmt(r.get('wall_s'), '.3f')} s wall "
                 f"({fmt(r.get('events_per_s', math.nan) / 1e6, '.2f')} M events/s), simulated until "
                 f"{r.get('sim_end_ns', 0) / 1e9:.9f} s")
    n = lambda k: int(r.get(k, 0))  # noqa: E731
    drops = f"drops {n('packets_dropped'):,}"
    if n("packets_dropped") and "drops_buffer" in r:
        drops += f" (buffer {n('drops_buffer'):,}, loss {n('drops_loss'):,}, link down {n('drops_link_down'):,})"
    retx = (f", retransmitted {n('retransmitted_packets'):,} packets ({n('retransmitted_bytes'):,} B of payload)"
            if "retransmitted_packets" in r else "")
    lines.append(f"network   ECN marks {n('ecn_marks'):,}, {drops}{retx}, retransmission timeouts "
                 f"{n('retransmit_timeouts'):,}, peak switch queue {n('max_queue_bytes'):,} B")
    p = s["pfc"]
    if p["frames"] == 0:
        lines.append("PFC       no PFC frames")
    else:
        lines.append(f"PFC       {p['frames']:,} frames ({p['pause_frames']:,} PAUSE, {p['resume_frames']:,} RESUME) "
                     f"on {p['ports']} ports; {p['pauses']:,} pauses, paused port-time "
                     f"{p['paused_port_time_us']:.3f} us, "
                     f"longest {p['longest_pause_us']:.3f} us, at most {p['max_paused_at_once']} ports paused at once"
                     + (f", {p['still_paused_at_end']} still paused at the end" if p["still_paused_at_end"] else ""))
    w = s.get("workload")
    if w:
        us = lambda k: w.get(k, 0) / 1e6  # noqa: E731  (ps -> µs)
        # A Chakra trace (exposure_by_group 0) names no parallel dimensions and has one exposure per GPU.
        by_group = w.get("exposure_by_group", 1)
        dims = (f"TP {w.get('tp')}, DP {w.get('dp')}, EP {w.get('ep')}, DP_EP {w.get('dp_ep')}" if by_group
                else "a Chakra trace")
        lines.append(f"workload  {w.get('workload_file', '?')}: {w.get('gpus')} GPUs, {dims}; "
                     + ("complete" if w.get("complete") else f"INCOMPLETE ({w.get('incomplete', '')})"))
        for i, t in enumerate(w["iteration_time_us"]):
            # A run stopped early lists the iterations some GPU began; the last is the one it stopped in.
            stopped = not w.get("complete", 1) and i == len(w["iteration_time_us"]) - 1
            lines.append(f"iteration {i}: {t:.3f} us" + (" (INCOMPLETE: the run stopped in it)" if stopped else ""))
        split = (f"TP {us('exposed_tp_ps'):.3f}, DP {us('exposed_dp_ps'):.3f}, EP {us('exposed_ep_ps'):.3f}, "
                 f"DP_EP {us('exposed_dp_ep_ps'):.3f}, PP {us('exposed_pp_ps'):.3f}" if by_group
                 else "finish - GPU compute, as ASTRA-sim; not split by group")
        lines.append(f"GPU {w.get('report_gpu')}     compute {us('total_compute_ps'):.3f} us, exposed communication "
                     f"{us('total_exposed_ps'):.3f} us ({split}); total {us('total_time_ps'):.3f} us")
        g = w.get("slowest")
        if g and g["gpu"] != w.get("report_gpu"):
            end = f"finished at {g['finish_ps'] / 1e6:.3f} us" if g["finish_ps"] >= 0 else "did not finish"
            lines.append(f"slowest GPU {g['gpu']}: compute {g['compute_ps'] / 1e6:.3f} us, exposed communication "
                         f"{g['exposed_ps'] / 1e6:.3f} us; {end}")
    for j in s.get("jobs", []):
        its = ", ".join(f"{t:.3f}" for t in j["iteration_time_us"])
        lines.append(f"job {j['name']}: {j['gpus']} GPUs from {j['start_us']:.3f} us, "
                     + ("complete" if j["complete"] else "INCOMPLETE")
                     + f"; {j['flows']:,} flows; iterations {its} us; exposed communication {j['total_exposed_us']:.3f} us")
    h = s.get("wormhole")
    if h:
        lines.append(f"wormhole  theta {h.get('theta')}, window {h.get('window')}, sample interval "
                     f"{h.get('sample_interval_ps', 0) / 1e6:g} us; {int(h.get('skips', 0)):,} skips "
                     f"({int(h.get('skip_backs', 0)):,} pulled back), {int(h.get('steady_checks', 0)):,} steady checks "
                     f"({int(h.get('steady_found', 0)):,} steady, smallest spread {fmt(h.get('min_spread'), '.4g')})")
        lines.append(f"          ~{int(h.get('events_skipped', 0)):,} events skipped "
                     f"({pct(h.get('events_skipped_fraction', math.nan), 2)}), {int(h.get('packets_skipped', 0)):,} "
                     f"packets credited, {h.get('skipped_flow_time_ns', 0) / 1e3:.3f} us of flow time fast-forwarded, "
                     f"at most {h.get('max_partitions')} partitions")
        if int(h.get("memo", 0)):
            n = lambda k: int(h.get(k, 0))  # noqa: E731
            warm = h.get("memo_input", "")
            warm = warm.decode() if isinstance(warm, bytes) else warm
            # followers: held beside a period simulated with them, then replayed from it (or released early)
            followed = (f"{n('memo_followed'):,} followed ({n('memo_follows_cut'):,} released early), "
                        if n("memo_followed") + n("memo_follows_cut") else "")
            ended = n("memo_periods") - n("memo_replayed") - n("memo_followed") - n("memo_converged")
            lines.append(f"memo      {n('memo_periods'):,} unsteady periods: {n('replays'):,} replayed "
                         f"({n('replay_backs'):,} pulled back, {n('replays_cut'):,} cut short, {n('replays_refused'):,} refused), {followed}"
                         f"{n('memo_converged'):,} simulated to convergence ({n('memo_new_patterns'):,} new patterns), "
                         f"{ended:,} ended before converging; "
                         f"{h.get('replayed_flow_time_ns', 0) / 1e3:.3f} us of flow time replayed; "
                         f"{n('memo_patterns'):,} patterns" + (f", warm start from {warm}" if warm else ""))
        if "collective_memo_considered" in h:
            c = lambda k: int(h.get("collective_memo_" + k, 0))  # noqa: E731
            lines.append(f"coll memo {c('considered'):,} collectives: {c('replayed'):,} replayed "
                         f"({c('replayed_flows'):,} flows), {c('recorded'):,} simulated and kept as patterns, "
                         f"{c('repeats'):,} simulated beside their pattern's recording, {c('not_kept'):,} simulated "
                         f"not kept; {c('not_island'):,} not on an island, {c('late_issue'):,} issued late, "
                         f"{c('busy'):,} met a busy island, {c('overlaps'):,} could meet later traffic; "
                         f"{c('verified'):,} verified, "
                         f"{c('verify_failures'):,} differing from their pattern, {c('conflicts'):,} conflicts, "
                         f"{c('follow_failures'):,} follow failures, {c('margin_violations'):,} margin violations")
            if c("approximate") + c("approximate_replays") > 0:
                worst = float(h.get("collective_memo_verify_max_error", 0))
                lines.append(f"coll memo {c('approximate'):,} patterns recorded with skips in this run, "
                             f"{c('approximate_replays'):,} replays of patterns recorded with skips (estimated error "
                             f"{float(h.get('collective_memo_estimated_error_bytes', 0)):.0f} bytes carried over)"
                             + (f"; verified: largest completion error {100 * worst:.4f} %" if worst > 0 else ""))
    return lines

