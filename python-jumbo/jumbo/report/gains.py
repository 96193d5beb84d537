"""The throughput side of the report: measured jumbo gains (the jumbo-throughput test) and the
gains expected from the Mathis ceilings where only latency and loss were measured."""

import bisect
import math
import statistics
from operator import itemgetter

from ..core.mtu import STANDARD_MTU, mss_for

MATHIS_C = math.sqrt(1.5)


def mathis(mss, rtt, loss):
    """Mathis et al. ceiling (bit/s) of one TCP stream; None when there is no loss to limit it."""
    if not rtt or rtt <= 0 or loss is None or loss <= 0:
        return None
    return mss * 8.0 / rtt * MATHIS_C / math.sqrt(loss)


def _quantiles(values):
    if not values:
        return None
    values = sorted(values)
    q = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
    return {"count": len(values), "min": values[0], "p25": q[0], "median": q[1], "p75": q[2],
            "max": values[-1], "mean": sum(values) / len(values)}


GAIN_EDGES = (1.0, 1.1, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0)


def histogram(values, edges=GAIN_EDGES):
    """Counts per bin [edge_i, edge_i+1) with an open last bin; values below the first edge
    count in the first bin."""
    counts = [0] * len(edges)
    for v in values:
        counts[max(0, bisect.bisect_right(edges, v) - 1)] += 1
    return [{"from": edges[i], "to": edges[i + 1] if i + 1 < len(edges) else None, "count": c}
            for i, c in enumerate(counts)]


def gain_tables(measured, latency_rows, paths, target, link_speed, limit):
    measured.sort(key=lambda g: (g["source"], g["dest"]))
    measured_keys = set((g["source"], g["dest"]) for g in measured)
    gains = {"paths": len(measured), "summary": _quantiles([g["gain"] for g in measured]),
             "histogram": histogram([g["gain"] for g in measured]), "items": measured[:limit]}
    latency = {}
    for lat in latency_rows:    # (source, dest, source_ip, dest_ip, rtt, loss, samples)
        if lat[4] is None:
            continue
        if lat[0] and lat[1]:
            latency[(lat[0], lat[1])] = lat
        if lat[2] and lat[3]:
            latency.setdefault(("ip", lat[2], lat[3]), lat)
    items = []
    values = []
    mss = {}    # ip version -> (standard MSS, jumbo MSS): asked once, not twice per path
    for p in paths:
        if (p.source, p.dest) in measured_keys:
            continue
        lat = latency.get((p.source, p.dest)) or latency.get(("ip", p.source_ip, p.dest_ip))
        if lat is None:
            continue
        ipv = p.ip_version or 4
        rtt, loss = lat[4], lat[5] or 0.0
        both = mss.get(ipv)
        if both is None:
            both = mss[ipv] = (mss_for(STANDARD_MTU, ipv), mss_for(target, ipv))
        std = mathis(both[0], rtt, loss)
        jum = mathis(both[1], rtt, loss)
        cap_std = min(std, link_speed) if std is not None else link_speed
        cap_jum = min(jum, link_speed) if jum is not None else link_speed
        gain = cap_jum / cap_std
        values.append(gain)
        items.append((-gain, p.source, p.dest, ipv, rtt, loss, std, jum, p.capable))
    items.sort(key=itemgetter(0, 1, 2))
    items = [{"source": t[1], "dest": t[2], "ip_version": t[3], "rtt": t[4], "loss": t[5],
              "mathis_standard": t[6], "mathis_jumbo": t[7], "expected_gain": -t[0],
              "capable": t[8]} for t in items[:limit]]
    expected = {"paths": len(values), "link_speed": link_speed,
                "summary": _quantiles(values),
                "histogram": histogram(values), "items": items}
    return gains, expected
