"""The model per site: the site-pair cells (the matrix, the traffic-weighted share) and the
sites ranked by the adoption fixing them would unlock.

    cells(paths)                    {(source site, dest site): counters}
    traffic(volumes, cells, names)  the `traffic` section (the volume matrix against the cells)
    matrix(cells, names)            the `matrix` section
    ranked(paths, host_mtu, ...)    the `sites` section: counters per site, one entry each, ranked
"""

import collections

from .errors import ReportError
from .formatting import share


def cells(paths):
    """Per site pair: its paths, capable ones, smallest and largest path MTU, black holes."""
    pairs = {}
    for p in paths:
        cell = pairs.setdefault((p.source_site, p.dest_site), {
            "paths": 0, "capable": 0, "min_mtu": None, "max_mtu": None, "blackholes": 0})
        cell["paths"] += 1
        cell["capable"] += p.capable
        if p.path_mtu is not None and p.succeeded:
            cell["min_mtu"] = p.path_mtu if cell["min_mtu"] is None else min(cell["min_mtu"], p.path_mtu)
            cell["max_mtu"] = p.path_mtu if cell["max_mtu"] is None else max(cell["max_mtu"], p.path_mtu)
        cell["blackholes"] += p.blackhole
    return pairs


def names(pairs):
    return sorted(set(s for pair in pairs for s in pair))


def traffic(volumes, pairs, site_names):
    known = set(site_names)
    unknown = sorted(set(s for (a, b, _v) in volumes for s in (a, b) if s not in known))
    if unknown:
        raise ReportError("volume matrix names sites the store does not know: %s (known: %s)"
                          % (", ".join(unknown[:10]), ", ".join(site_names[:20]) or "none"))
    total = measured = capable = 0.0
    unmeasured_pairs = []
    for a, b, v in volumes:
        total += v
        cell = pairs.get((a, b))
        if not cell or not cell["paths"]:
            unmeasured_pairs.append([a, b, v])
            continue
        measured += v
        capable += v * cell["capable"] / float(cell["paths"])
    return {"bytes": total, "measured_bytes": measured, "capable_bytes": capable,
            "used": share(capable, measured), "unmeasured": unmeasured_pairs}


def matrix(pairs, site_names):
    return {
        "sites": site_names,
        "cells": [collections.OrderedDict([("source_site", a), ("dest_site", b)] + sorted(c.items()))
                  for (a, b), c in sorted(pairs.items())],
    }


# -- the ranking ------------------------------------------------------------------------------

def ranked(paths, host_mtu, site_names, target, traffic, n_paths, volumes=None, pairs=None):
    """One entry per site, ranked by the traffic fixing it would unlock when the volumes are
    known (the targets are about traffic), else by paths."""
    per_path_bytes = _bytes_per_path(traffic, volumes, pairs)
    stats = _counters(paths, host_mtu, site_names, _proven(paths), per_path_bytes)
    measured = traffic["measured_bytes"] if per_path_bytes else None
    out = [_entry(s, target, n_paths, measured) for s in stats.values()]
    out.sort(key=lambda s: (-(s["unlocked_traffic"] or 0), -s["unlocked_paths"],
                            -(s["out_fail"] + s["in_fail"]), s["site"]))
    for rank, s in enumerate(out, 1):
        s["rank"] = rank
    return out


def _proven(paths):
    """Hosts proven jumbo-ready elsewhere: host -> the sites it has capable paths with."""
    proven = collections.defaultdict(set)
    for p in paths:
        if p.capable:
            proven[p.source].add(p.dest_site)
            proven[p.dest].add(p.source_site)
    return proven


def _bytes_per_path(traffic, volumes, pairs):
    """With a volume matrix, each path carries its site pair's bytes shared among its paths."""
    per_path_bytes = {}
    if traffic is not None and volumes and traffic.get("measured_bytes"):
        for a, b, v in volumes:
            cell = pairs.get((a, b))
            if cell and cell["paths"]:
                per_path_bytes[(a, b)] = per_path_bytes.get((a, b), 0.0) + v / float(cell["paths"])
    return per_path_bytes


def _counters(paths, host_mtu, site_names, proven, per_path_bytes):
    stats = {s: {"site": s, "hosts": set(), "host_mtu": set(), "out_paths": 0, "out_capable": 0,
                 "in_paths": 0, "in_capable": 0, "out_fail": 0, "in_fail": 0,
                 "blackholes": 0, "pmtud": collections.Counter(), "unlocked": 0,
                 "unlocked_bytes": 0.0}
             for s in site_names}
    for host, (_start, mtu, site) in host_mtu.items():
        stats[site]["hosts"].add(host)
        stats[site]["host_mtu"].add(mtu)
    for p in paths:
        _count_path(stats[p.source_site], stats[p.dest_site], p)
        if not p.capable:
            _count_unlocked(stats, p, proven, per_path_bytes)
    return stats


def _count_path(s, d, p):
    """One path in its source site's (s) and dest site's (d) counters."""
    s["hosts"].add(p.source)
    d["hosts"].add(p.dest)
    s["out_paths"] += 1
    d["in_paths"] += 1
    s["out_capable"] += p.capable
    d["in_capable"] += p.capable
    # The direction a site fails in: its outbound measurement or its inbound one.
    if "out" in p.failing:
        s["out_fail"] += 1
        d["in_fail"] += 1
    s["pmtud"][p.pmtud or "unknown"] += 1
    if p.blackhole:
        s["blackholes"] += 1
        if p.dest_site != p.source_site:
            d["blackholes"] += 1


def _count_unlocked(stats, p, proven, per_path_bytes):
    """A path that is not capable, unlocked by fixing one end's site when the other end is
    proven jumbo-ready with a third site."""
    for me, other, other_site in ((p.source_site, p.dest, p.dest_site),
                                  (p.dest_site, p.source, p.source_site)):
        if other_site == me:
            continue
        if proven[other] - {me, other_site}:
            stats[me]["unlocked"] += 1
            stats[me]["unlocked_bytes"] += per_path_bytes.get((p.source_site, p.dest_site), 0.0)


def _fail_direction(fail_out, fail_in):
    if fail_out and fail_in:
        return "both"
    if fail_out:
        return "outbound"
    if fail_in:
        return "inbound"
    return "-"


def _pmtud_health(s):
    pm = s["pmtud"]
    if s["blackholes"]:
        return "black holes (%d)" % s["blackholes"]
    if pm.get("ok") or pm.get("not-needed"):
        return "ok"
    return "unknown"


def _entry(s, target, n_paths, measured_bytes):
    """A site's entry of the report; `measured_bytes` None without a volume matrix."""
    mtus = sorted(m for m in s["host_mtu"] if m is not None)
    total = s["out_paths"] + s["in_paths"]
    capable = s["out_capable"] + s["in_capable"]
    return collections.OrderedDict([
        ("site", s["site"]), ("hosts", len(s["hosts"])),
        ("host_mtu", mtus), ("configured", bool(mtus) and mtus[0] >= target),
        ("out_paths", s["out_paths"]), ("out_capable", s["out_capable"]),
        ("in_paths", s["in_paths"]), ("in_capable", s["in_capable"]),
        ("capable", share(capable, total)), ("fails", _fail_direction(s["out_fail"], s["in_fail"])),
        ("out_fail", s["out_fail"]), ("in_fail", s["in_fail"]),
        ("blackholes", s["blackholes"]), ("pmtud", _pmtud_health(s)),
        ("pmtud_counts", dict(sorted(s["pmtud"].items()))),
        ("unlocked_paths", s["unlocked"]), ("unlocked", share(s["unlocked"], n_paths)),
        ("unlocked_traffic", share(s["unlocked_bytes"], measured_bytes)
         if measured_bytes is not None else None),
    ])
