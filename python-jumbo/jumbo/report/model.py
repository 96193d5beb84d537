"""The adoption model: from the store's per-path answers to the report (a plain dict).

Three numbers are kept apart on purpose:
  configured  share of measuring hosts whose interface MTU (the record's local_mtu) >= target
  capable     share of directed paths whose latest result carries the target size in both
              directions (this path MTU, the reverse one from the reflector or from the reverse
              path's own latest result) with no black hole (full or per-flow) either way
  used        the capable share weighted by the traffic the user says flows between the sites
              (volume matrix CSV); the WLCG DC26/DC28 targets are about this one

_build (over 60 lines) assembles the report dict section by section from the store's answers,
which run in parallel and are collected in the order the report shows them; _sites (over 60)
is one pass over the paths per site (configured hosts, capable paths, the traffic they unlock)
whose counters feed the ranking at its end. The gains (gains.py) and the culprit hops
(culprits.py) are their own modules.
"""

import collections
import datetime
import gc
from concurrent.futures import ThreadPoolExecutor

from ..core.mtu import DEFAULT_TARGET_MTU
from ..core.units import parse_time
from . import held
from .culprits import shared_culprits
from .errors import NoData, ReportError
from .gains import gain_tables
from ..archive.path_state import blackhole_fields, state_of_fields
from ..archive.queries import Window

TARGETS = (("DC26", 0.50), ("DC28", 0.99))
NO_SITE = "(no site)"


class Options(object):
    def __init__(self, target=DEFAULT_TARGET_MTU, since=None, until=None, interval=None, volumes=None,
                 sites=None, link_speed=10e9, flap=3, limit=200, culprit_min=2, extra=()):
        self.target = int(target)
        self.window = Window(since, until)
        self.interval = interval
        self.volumes = volumes
        self.sites = sites or {}
        self.link_speed = float(link_speed)
        self.flap = int(flap)
        self.limit = int(limit)
        self.culprit_min = int(culprit_min)
        # Hooks called as hook(report, paths, host_mtu, opts) once the report is built
        # (telemetry.Telemetry: used and configured measured; alarms.Collector).
        self.extra = tuple(extra)


FAILING = {(False, False): (), (True, False): ("out",), (False, True): ("in",),
           (True, True): ("out", "in")}


class Path(object):
    """One directed path's latest state (compact: there may be 100,000 of them)."""
    __slots__ = ("source", "dest", "ip_version", "source_site", "dest_site", "start", "path_mtu",
                 "reverse_path_mtu", "reverse_known", "local_mtu", "pmtud", "partial", "blackhole",
                 "reverse_blackhole", "capable", "state", "failing", "succeeded", "row")

    def __init__(self, source, dest, ip_version, source_site, dest_site, start, path_mtu,
                 reverse_path_mtu, reverse_known, local_mtu, pmtud, partial, blackhole,
                 reverse_blackhole, capable, state, failing, succeeded, row):
        self.source = source
        self.dest = dest
        self.ip_version = ip_version
        self.source_site = source_site
        self.dest_site = dest_site
        self.start = start
        self.path_mtu = path_mtu
        self.reverse_path_mtu = reverse_path_mtu
        self.reverse_known = reverse_known
        self.local_mtu = local_mtu
        self.pmtud = pmtud
        self.partial = partial
        self.blackhole = blackhole
        self.reverse_blackhole = reverse_blackhole
        self.capable = capable
        self.state = state
        self.failing = failing
        self.succeeded = succeeded
        self.row = row

    def __getitem__(self, name):
        return getattr(self, name)


def _share(num, den):
    return (num / float(den)) if den else None


def _interval(window, first, last):
    try:
        a = parse_time(window.since or first).date()
        b = parse_time(window.until or last).date()
        return "day" if (b - a).days <= 62 else "week"
    except ValueError:
        return "day"


def build(queries, opts):
    """The whole report as a dict (JSON-ready). Raises ReportError subclasses on bad input."""
    # Many small objects, none cyclic: the cyclic collector would only rescan them.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _build_all(queries, opts)
    finally:
        if enabled:
            gc.enable()


def _build_all(queries, opts):
    target = opts.target
    window = opts.window
    # The store answers independent questions in parallel (two worker threads, each with its
    # own connection): the count and the gains/latency while the latest results are read,
    # then the history pass (trend, changes) while Python builds the per-path model.
    pool = ThreadPoolExecutor(max_workers=2)
    # Partial black holes across runs: a small answer (the sighted paths only) in a thread of
    # its own, so that it neither waits behind the two workers' long queries nor holds the
    # per-path model back until the gains are read.
    side = ThreadPoolExecutor(max_workers=1)
    try:
        f_evidence = side.submit(queries.evidence, window, target)
        f_count = pool.submit(queries.count, window)
        f_gain = pool.submit(lambda: (queries.gains(window), queries.latency(window)))

        def interval_of(first, last):
            return opts.interval or _interval(window, first, last)

        def counted():
            """(count, first, last, interval); NoData when there is nothing to report."""
            count, first, last = f_count.result()
            if not count:
                if window.since or window.until:
                    total = queries.count(Window())[0]
                    if total:
                        raise NoData("no pmtu results in the window %s (the store holds %d results)"
                                     % (window.describe(), total))
                raise NoData("the store holds no pmtu results yet: nothing to report")
            return count, first, last, interval_of(first, last)

        def trend_after_count():
            count, first, last = f_count.result()
            if not count:
                return []       # the main thread raises NoData
            return queries.trend(window, target, interval_of(first, last))

        f_hist = f_trend = None
        if queries.history_self_contained(window):
            # The store can find the latest states itself: start the long pass right away.
            count, first, last, interval = counted()
            f_hist = pool.submit(queries.history, window, target, interval, opts.limit, opts.flap,
                                 None)
        elif queries.trend_apart(window):
            # The trend (an aggregation over the window's history) runs in the store while the
            # latest results are read; only the changes wait for them. It needs the count's
            # span (day or week buckets), so it waits for the count in a worker (queued behind
            # it): the count, an aggregation over the whole history, then runs beside the latest
            # results instead of before them.
            f_trend = pool.submit(trend_after_count)
        else:
            counted()
        rows = {}
        for row in queries.latest(window, target):
            rows[(row.source, row.dest, row.ip_version)] = row
        if f_hist is None:
            count, first, last, interval = counted()
            latest_rows = list(rows.values())
            f_hist = pool.submit(lambda: queries.history(
                window, target, interval, opts.limit, opts.flap, latest_rows,
                trend=f_trend.result() if f_trend is not None else None))
        held_paths = held.hold(rows, f_evidence.result())
        return _build(queries, opts, rows, count, first, last, interval, f_hist, f_gain,
                      held_paths)
    finally:
        pool.shutdown(wait=True)
        side.shutdown(wait=True)


def _build(queries, opts, rows, count, first, last, interval, f_hist, f_gain, held_paths):
    target = opts.target
    window = opts.window
    site_map = opts.sites

    def site_of(host, ip, recorded):
        if site_map:
            for key in (host, ip):
                if key and key in site_map:
                    return site_map[key]
        return recorded or NO_SITE

    # -- per path -------------------------------------------------------------------------
    paths = []
    host_mtu = {}
    for key in sorted(rows, key=lambda k: (k[0] or "", k[1] or "", k[2] or 0)):
        row = rows[key]
        rev = rows.get((row.dest, row.source, row.ip_version))
        ssite = site_of(row.source, row.source_ip, row.source_site)
        dsite = site_of(row.dest, row.dest_ip, row.dest_site)
        fwd_bh = blackhole_fields(pmtud=row.pmtud, partial=row.partial)
        fwd_ok = bool(row.succeeded) and row.path_mtu is not None and row.path_mtu >= target
        reverse = []
        if row.reverse_path_mtu is not None:
            reverse.append(row.reverse_path_mtu)
        rev_bh = blackhole_fields(pmtud=row.reverse_pmtud)
        if rev is not None and rev.succeeded and rev.path_mtu is not None:
            reverse.append(rev.path_mtu)
        if rev is not None and blackhole_fields(pmtud=rev.pmtud, partial=rev.partial):
            rev_bh = True
        rev_ok = all(m >= target for m in reverse) and not rev_bh
        # The path's state is the result rule (path_state.RULE) over both directions: this
        # result, with the reverse direction's MTU and black hole from the reverse result too.
        state = state_of_fields(target, succeeded=row.succeeded, path_mtu=row.path_mtu,
                                pmtud="blackhole" if fwd_bh else row.pmtud,
                                reverse_path_mtu=min(reverse) if reverse else None,
                                reverse_pmtud="blackhole" if rev_bh else None)
        capable = state == "jumbo"
        failing = FAILING[(not (fwd_ok and not fwd_bh), not rev_ok)]
        prev = host_mtu.get(row.source)
        if row.local_mtu is not None and (prev is None or row.start > prev[0]):
            host_mtu[row.source] = (row.start, row.local_mtu, ssite)
        paths.append(Path(
            row.source, row.dest, row.ip_version, ssite, dsite, row.start, row.path_mtu,
            min(reverse) if reverse else None, bool(reverse) or rev is not None, row.local_mtu,
            row.pmtud, bool(row.partial), fwd_bh, rev_bh, capable, state, failing,
            bool(row.succeeded), row))
    del rows
    n_paths = len(paths)
    n_capable = sum(1 for p in paths if p.capable)
    hosts_cfg = sum(1 for v in host_mtu.values() if v[1] >= target)

    report = collections.OrderedDict()
    report["schema"] = 1
    report["generated"] = datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ")
    report["store"] = queries.name
    report["window"] = {"since": window.since, "until": window.until, "first": first,
                        "last": last, "results": count}
    report["target_mtu"] = target
    report["limit"] = opts.limit
    report["targets"] = collections.OrderedDict(TARGETS)
    report["paths"] = n_paths
    report["capable_paths"] = n_capable
    report["capable"] = _share(n_capable, n_paths)
    report["hosts"] = len(host_mtu)
    report["configured_hosts"] = hosts_cfg
    report["configured"] = _share(hosts_cfg, len(host_mtu))
    report["reverse_unknown"] = sum(1 for p in paths if not p.reverse_known)
    # Undecided: would be jumbo, but flows were left unmeasured (path_state's `unknown`).
    report["unknown_paths"] = sum(1 for p in paths if p.state == "unknown")

    # -- site pairs (matrix, traffic) -----------------------------------------------------
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
    site_names = sorted(set(s for pair in pairs for s in pair))

    traffic = None
    if opts.volumes is not None:
        traffic = _traffic(opts.volumes, pairs, site_names)
    report["used"] = traffic["used"] if traffic else None
    report["traffic"] = traffic
    report["status"] = [
        {"target": name, "goal": goal, "paths": report["capable"],
         "paths_met": report["capable"] is not None and report["capable"] >= goal,
         "traffic": report["used"],
         "traffic_met": None if report["used"] is None else report["used"] >= goal}
        for name, goal in TARGETS]

    # -- black holes (the action list) ----------------------------------------------------
    blackholes = []
    for p in paths:
        if not p.blackhole:
            continue
        row = p.row
        blackholes.append(collections.OrderedDict([
            ("source", p.source), ("dest", p.dest), ("ip_version", p.ip_version),
            ("source_site", p.source_site), ("dest_site", p.dest_site),
            ("partial", p.partial), ("size", row.blackhole_size), ("hop_ttl", row.blackhole_ttl),
            ("hop_ip", row.blackhole_ip), ("path_mtu", p.path_mtu), ("measured", p.start),
        ] + held.fields(held_paths.get((p.source, p.dest, p.ip_version)))))
    by_hop = collections.Counter(b["hop_ip"] for b in blackholes if b["hop_ip"])
    blackholes.sort(key=lambda b: (-by_hop.get(b["hop_ip"], 0), b["partial"], b["hop_ip"] or "",
                                   b["source"], b["dest"]))
    report["blackholes"] = blackholes

    # -- sites ----------------------------------------------------------------------------
    report["sites"] = _sites(paths, host_mtu, site_names, target, traffic, n_paths,
                             opts.volumes, pairs)

    # -- matrix ---------------------------------------------------------------------------
    report["matrix"] = {
        "sites": site_names,
        "cells": [collections.OrderedDict([("source_site", a), ("dest_site", b)] + sorted(c.items()))
                  for (a, b), c in sorted(pairs.items())],
    }

    # -- localisation ---------------------------------------------------------------------
    report["culprits"], report["host_limited"] = shared_culprits(paths, target, opts.culprit_min)

    # -- trend ----------------------------------------------------------------------------
    trend, ch = f_hist.result()
    ch = held.changes(ch, held_paths)
    for b in trend:
        b["capable_share"] = _share(b["capable"], b["results"])
        b["configured_share"] = _share(b["configured"], b["results"])
        b["unknown"] = b.get("unknown", 0)
    report["trend"] = {"interval": interval, "buckets": trend}

    # -- gains ----------------------------------------------------------------------------
    measured, latency = f_gain.result()
    report["gains"], report["expected_gains"] = gain_tables(measured, latency, paths, target,
                                                            opts.link_speed, opts.limit)

    # -- changes --------------------------------------------------------------------------
    report["changes"] = ch["changes"]
    report["changed_paths"] = ch["changed_paths"]
    report["total_changes"] = ch.get("total_changes")
    report["flapping"] = ch["flapping"]
    report["failed_paths"] = sum(1 for p in paths if p.state == "failed")
    for hook in opts.extra:
        hook(report, paths, host_mtu, opts)
    return report


def _traffic(volumes, pairs, site_names):
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
            "used": _share(capable, measured), "unmeasured": unmeasured_pairs}


def _sites(paths, host_mtu, site_names, target, traffic, n_paths, volumes=None, pairs=None):
    # Hosts proven jumbo-ready elsewhere: a capable path with a third site.
    proven = collections.defaultdict(set)  # host -> sites it has capable paths with
    for p in paths:
        if p.capable:
            proven[p.source].add(p.dest_site)
            proven[p.dest].add(p.source_site)
    # With a volume matrix, each path carries its site pair's bytes shared among its paths.
    per_path_bytes = {}
    if traffic is not None and volumes and traffic.get("measured_bytes"):
        for a, b, v in volumes:
            cell = pairs.get((a, b))
            if cell and cell["paths"]:
                per_path_bytes[(a, b)] = per_path_bytes.get((a, b), 0.0) + v / float(cell["paths"])
    stats = {s: {"site": s, "hosts": set(), "host_mtu": set(), "out_paths": 0, "out_capable": 0,
                 "in_paths": 0, "in_capable": 0, "out_fail": 0, "in_fail": 0,
                 "blackholes": 0, "pmtud": collections.Counter(), "unlocked": 0,
                 "unlocked_bytes": 0.0}
             for s in site_names}
    for host, (_start, mtu, site) in host_mtu.items():
        stats[site]["hosts"].add(host)
        stats[site]["host_mtu"].add(mtu)
    for p in paths:
        s, d = stats[p.source_site], stats[p.dest_site]
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
        if not p.capable:
            for me, other, other_site in ((p.source_site, p.dest, p.dest_site),
                                          (p.dest_site, p.source, p.source_site)):
                if other_site == me:
                    continue
                if proven[other] - {me, other_site}:
                    stats[me]["unlocked"] += 1
                    stats[me]["unlocked_bytes"] += per_path_bytes.get((p.source_site, p.dest_site), 0.0)
    out = []
    for s in stats.values():
        fail_out, fail_in = s["out_fail"], s["in_fail"]
        if fail_out and fail_in:
            direction = "both"
        elif fail_out:
            direction = "outbound"
        elif fail_in:
            direction = "inbound"
        else:
            direction = "-"
        pm = s["pmtud"]
        if s["blackholes"]:
            health = "black holes (%d)" % s["blackholes"]
        elif pm.get("ok") or pm.get("not-needed"):
            health = "ok"
        else:
            health = "unknown"
        mtus = sorted(m for m in s["host_mtu"] if m is not None)
        total = s["out_paths"] + s["in_paths"]
        capable = s["out_capable"] + s["in_capable"]
        out.append(collections.OrderedDict([
            ("site", s["site"]), ("hosts", len(s["hosts"])),
            ("host_mtu", mtus), ("configured", bool(mtus) and mtus[0] >= target),
            ("out_paths", s["out_paths"]), ("out_capable", s["out_capable"]),
            ("in_paths", s["in_paths"]), ("in_capable", s["in_capable"]),
            ("capable", _share(capable, total)), ("fails", direction),
            ("out_fail", fail_out), ("in_fail", fail_in),
            ("blackholes", s["blackholes"]), ("pmtud", health),
            ("pmtud_counts", dict(sorted(pm.items()))),
            ("unlocked_paths", s["unlocked"]), ("unlocked", _share(s["unlocked"], n_paths)),
            ("unlocked_traffic", _share(s["unlocked_bytes"], traffic["measured_bytes"])
             if per_path_bytes else None),
        ]))
    # Ranked by the traffic they would unlock when the volumes are known (the targets are about
    # traffic), else by paths.
    out.sort(key=lambda s: (-(s["unlocked_traffic"] or 0), -s["unlocked_paths"],
                            -(s["out_fail"] + s["in_fail"]), s["site"]))
    for rank, s in enumerate(out, 1):
        s["rank"] = rank
    return out
