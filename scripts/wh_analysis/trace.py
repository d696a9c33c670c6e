"""The packet trace (ENABLE_TRACE, TRACE_FILE, TRACE_OUTPUT_FILE; docs/network-model.md §5.4): reading it into numpy,
per-flow packet counts, and the records as text.

The file is a 64-byte header (magic "WHTRACE1", u32 version 1, u32 record size 48, u64 nodes, u64 ports, u64 records
— 0 if the run did not end cleanly —, 24 bytes 0) and then 48-byte little-endian records, one per event at a traced
node: Recv (the last bit reached an ingress port), Enqu (queued at an egress port), Dequ (its transmission starts;
a host's data packets appear here when they leave the QP), Drop.
"""
import numpy as np

from .common import AnalysisError

HEADER = np.dtype([("magic", "S8"), ("version", "<u4"), ("record_size", "<u4"), ("nodes", "<u8"), ("ports", "<u8"),
                   ("records", "<u8"), ("reserved", "V24")])
RECORD = np.dtype([("time_ps", "<i8"), ("seq", "<u8"), ("flow", "<u4"), ("node", "<u4"), ("port", "<u4"),
                   ("qlen", "<u4"), ("size", "<u4"), ("payload", "<u4"), ("if_index", "<u2"), ("event", "u1"),
                   ("type", "u1"), ("cls", "u1"), ("flags", "u1"), ("node_type", "u1"), ("reserved", "u1")])
EVENTS = ("Recv", "Enqu", "Dequ", "Drop")
TYPES = ("data", "ACK", "NACK", "PFC")
DROP_CAUSES = ("buffer", "loss", "link down")
NO_FLOW = 0xFFFFFFFF


def read_trace(path):
    """(header as a dict, records as a read-only numpy array of RECORD) of a trace file. AnalysisError naming the file
    if it is not a wormhole packet trace or is cut in the middle of a record."""
    try:
        raw = np.memmap(path, dtype=np.uint8, mode="r")
    except (OSError, ValueError) as e:
        raise AnalysisError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}")
    if len(raw) < HEADER.itemsize or bytes(raw[:8]) != b"WHTRACE1":
        raise AnalysisError(f"{path}: not a wormhole packet trace (no WHTRACE1 header); the HPCC reference's mix.tr "
                            f"has another layout")
    h = raw[:HEADER.itemsize].view(HEADER)[0]
    header = {k: (h[k].item() if k != "magic" else h[k].decode()) for k in HEADER.names if k != "reserved"}
    if header["record_size"] != RECORD.itemsize:
        raise AnalysisError(f"{path}: records of {header['record_size']} bytes, this reader knows {RECORD.itemsize}")
    body = len(raw) - HEADER.itemsize
    if body % RECORD.itemsize:
        raise AnalysisError(f"{path}: ends in part of a record ({body % RECORD.itemsize} bytes left over)")
    rec = raw[HEADER.itemsize:].view(RECORD)
    header["complete"] = header["records"] == len(rec)
    return header, rec


def per_flow(rec):
    """Per flow, from the records of the flows' own hosts (trace their hosts to count them all): data packets sent
    (Dequ at the sending host) and of those retransmitted after a timeout, their wire and payload bytes, the sizes
    seen, and ACKs/NACKs received back (Recv at the sender). Returns {flow: dict}."""
    out = {}
    sent = rec[(rec["event"] == 2) & (rec["type"] == 0) & (rec["node_type"] == 0)]
    for f in np.unique(sent["flow"]):
        s = sent[sent["flow"] == f]
        out[int(f)] = {"data_packets": int(len(s)), "wire_bytes": int(s["size"].astype(np.int64).sum()),
                       "payload_bytes": int(s["payload"].astype(np.int64).sum()),
                       "sizes": sorted({int(x) for x in s["size"]}), "sender": int(s["node"][0]),
                       "retransmitted_after_timeout": int(((s["flags"] & 4) != 0).sum())}
    acks = rec[(rec["event"] == 0) & ((rec["type"] == 1) | (rec["type"] == 2)) & (rec["node_type"] == 0)]
    for f, d in out.items():
        a = acks[(acks["flow"] == f) & (acks["node"] == d["sender"])]
        d["acks_received"] = int((a["type"] == 1).sum())
        d["nacks_received"] = int((a["type"] == 2).sum())
        d["ack_sizes"] = sorted({int(x) for x in a["size"]})
    return out


def counts(rec):
    """{event name: {type name: records}}."""
    out = {}
    for e, en in enumerate(EVENTS):
        for t, tn in enumerate(TYPES):
            n = int(((rec["event"] == e) & (rec["type"] == t)).sum())
            if n:
                out.setdefault(en, {})[tn] = n
    return out


def line(r):
    """One record as text, in the spirit of HPCC's trace reader: time (ns, 3 decimals), node, if:class, queue bytes,
    event, flags, flow, type, seq, size (payload)."""
    t = TYPES[r["type"]] if r["type"] < len(TYPES) else "?"
    flags = "".join(c for bit, c in ((1, "E"), (2, "C"), (4, "R")) if r["flags"] & bit)
    if r["type"] == 3:
        what = f"PFC {'PAUSE' if r['flags'] & 8 else 'RESUME'} class {r['cls']}"
    else:
        what = f"flow {r['flow']} {t} seq {r['seq']}"
    drop = f" ({DROP_CAUSES[(r['flags'] >> 4) & 3]})" if r["event"] == 3 else ""
    return (f"{r['time_ps'] / 1000:.3f} n:{r['node']} {r['if_index']}:{r['cls']} q {r['qlen']} "
            f"{EVENTS[r['event']]}{drop} {flags or '-'} {what} {r['size']}({r['payload']})")
