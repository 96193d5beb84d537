"""The adoption model: from the store's per-path answers to the report (a plain dict).

Three numbers are kept apart on purpose:
  configured  share of measuring hosts whose interface MTU (the record's local_mtu) >= target
  capable     share of directed paths whose latest result carries the target size in both
              directions (this path MTU, the reverse one from the reflector or from the reverse
              path's own latest result) with no black hole (full or per-flow) either way; a
              path whose reverse was never measured is `jumbo-one-way`, never capable
  used        the capable share weighted by the traffic the user says flows between the sites
              (volume matrix CSV); the WLCG DC26/DC28 targets are about this one

_build_all asks the store its questions, in parallel, and _build assembles the report dict
section by section in the order the report shows them: the per-path model (_paths: one
path_record.PathRecord per path, its state over both directions; `paths` in the report), the
headline, the site pairs and sites (sites.py), the black holes, the culprit hops and limiting
hosts (culprits.py), the trend, the gains (gains.py) and the changes (change_list.py).
Counts are named for what they count: paths (directed, one IP family), results, hosts.
"""

import collections
import datetime
import gc
from concurrent.futures import ThreadPoolExecutor

from ..core.mtu import DEFAULT_TARGET_MTU, is_jumbo
from ..core.units import parse_time
from . import change_list, confidence, held, sites
from .culprits import limiting_hosts, shared_culprits
from .errors import NoData, ReportError
from .formatting import share
from .gains import gain_tables
from .path_record import PathRecord
from ..archive.path_state import blackhole_fields, state_of, state_of_fields
from ..archive import queries as store_queries

TARGETS = (("DC26", 0.50), ("DC28", 0.99))
NO_SITE = "(no site)"
# A path whose forward direction carries the target and whose reverse was never measured.
ONE_WAY = "jumbo-one-way"


class Options(object):
    def __init__(self, target=DEFAULT_TARGET_MTU, since=None, until=None, interval=None, volumes=None,
                 sites=None, link_speed=10e9, flap=3, limit=200, culprit_min=2, extra=(),
                 site=None):
        self.target = int(target)
        self.window = store_queries.Window(since, until)
        self.interval = interval
        self.volumes = volumes
        self.sites = sites or {}
        self.link_speed = float(link_speed)
        self.flap = int(flap)
        self.limit = int(limit)
        self.culprit_min = int(culprit_min)
        # One site's page: only the paths it is an end of (None: the whole mesh).
        self.site = site
        # Hooks called as hook(report, paths, host_mtu, opts) once the report is built
        # (telemetry.Telemetry: used and configured measured; alarms.Collector).
        self.extra = tuple(extra)


FAILING = {(False, False): (), (True, False): ("out",), (False, True): ("in",),
           (True, True): ("out", "in")}


# The per-path record's class, under the name the model has always used for it.
Path = PathRecord


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
    feed = None
    try:
        f_evidence = side.submit(queries.evidence, window, target)
        # How sure each jumbo verdict is: the jumbo runs per path and their flows, put on the
        # paths' records (confidence.take_counts) without a map of every jumbo path (~110 MB
        # for 460,000). An archive's aggregation over the history runs from the start, beside
        # the latest results (confidence.CountsFeed); SQLite's rows are read in the report's
        # own thread (_build): in a thread beside it they cost the report 0.5 s at 180,000
        # paths instead of 0.2 s.
        feed = confidence.CountsFeed() if queries.answers_elsewhere else None
        f_agreement = (side.submit(feed.read, queries.agreement_rows(window, target))
                       if feed is not None else None)
        f_count = pool.submit(queries.count, window)
        f_gain = pool.submit(lambda: (queries.gains(window), queries.latency(window)))

        def interval_of(first, last):
            return opts.interval or _interval(window, first, last)

        def counted():
            """(count, first, last, interval); NoData when there is nothing to report."""
            count, first, last = f_count.result()
            if not count:
                if window.since or window.until:
                    total = queries.count(store_queries.Window())[0]
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
        if opts.site is not None:
            # A site's page: its trend and changes over its own hosts' results, known once
            # the latest results name them (below).
            counted()
        elif queries.history_self_contained(window):
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
        # Each latest row becomes its path's record at once (PathRecord.unjudged), so that
        # the rows are never all held beside the records.
        rows = {}
        site_of = _site_lookup(opts.sites)
        unjudged = PathRecord.unjudged
        for row in queries.latest(window, target):
            rows[(row.source, row.dest, row.ip_version)] = unjudged(
                row, site_of(row.source, row.source_ip, row.source_site),
                site_of(row.dest, row.dest_ip, row.dest_site))
        history_window = window
        if opts.site is not None:
            rows, hosts = _site_rows(rows, opts.site)
            history_window = store_queries.Window(window.since, window.until, hosts=hosts)
        if feed is not None:
            feed.ready(rows)
        if f_hist is None:
            count, first, last, interval = counted()
            # The history compares each path's runs with its latest result's own state, as
            # the store holds it (before the held paths and the reverse direction change it).
            latest_paths = list(rows.values())
            for p in latest_paths:
                p.result_state = state_of(p, target)
            f_hist = pool.submit(lambda: queries.history(
                history_window, target, interval, opts.limit, opts.flap, latest_paths,
                trend=f_trend.result() if f_trend is not None else None))
        held_paths = held.hold(rows, f_evidence.result())
        return _build(queries, opts, rows, count, first, last, interval, f_hist, f_gain,
                      held_paths, f_agreement)
    finally:
        if feed is not None:
            feed.ready(None)    # (a report stopped early: the feed's thread ends)
        pool.shutdown(wait=True)
        side.shutdown(wait=True)


def _build(queries, opts, rows, count, first, last, interval, f_hist, f_gain, held_paths,
           f_agreement):
    """The report dict, section by section in the order it shows them (the store's answers
    still running in `f_hist` and `f_gain` are waited for where their sections come)."""
    target = opts.target
    paths, host_mtu = _paths(rows, target)
    if f_agreement is None:
        confidence.take_counts(rows, queries.agreement_rows(opts.window, target))
        # The index by key (a tuple per path, ~80 MB for 718,800 paths) is not read again.
        rows.clear()
    report = _headline(queries, opts, paths, host_mtu, (count, first, last))
    pairs = sites.cells(paths)
    site_names = sites.names(pairs)
    traffic = sites.traffic(opts.volumes, pairs, site_names) if opts.volumes is not None else None
    _add_status(report, traffic)
    report["blackholes"] = _blackholes(paths, held_paths)
    report["sites"] = sites.ranked(paths, host_mtu, site_names, target, traffic, len(paths),
                                   opts.volumes, pairs)
    report["matrix"] = sites.matrix(pairs, site_names)
    report["culprits"], report["host_limited"] = shared_culprits(paths, target, opts.culprit_min,
                                                                 host_mtu)
    report["limiting_hosts"] = limiting_hosts(paths, _host_sites(paths))
    if f_agreement is not None:
        f_agreement.result()    # the archive's counts, put on the records through `rows`
        rows.clear()
    confidence.attach(paths)
    report["confidence"] = confidence.summary(paths)
    changes = _add_trend(report, f_hist, held_paths, interval)
    measured, latency = f_gain.result()
    if opts.site is not None:
        keys = set(p.key() for p in paths)
        measured = [g for g in measured if (g["source"], g["dest"], g.get("ip_version")) in keys]
    report["gains"], report["expected_gains"] = gain_tables(measured, latency, paths, target,
                                                            opts.link_speed, opts.limit)
    change_list.add_changes(report, changes, paths, opts.site)
    for hook in opts.extra:
        hook(report, paths, host_mtu, opts)
    return report


# -- per path ---------------------------------------------------------------------------------

def _site_lookup(site_map):
    """site_of(host, ip, recorded): the --sites file's site of a host (by name, then address),
    else the site the record carries, else NO_SITE."""
    def site_of(host, ip, recorded):
        if site_map:
            for key in (host, ip):
                if key and key in site_map:
                    return site_map[key]
        return recorded or NO_SITE
    return site_of


def _site_rows(rows, site):
    """The latest paths of one site (`--site`): those it is the source or the dest of, so
    both directions of each of its paths are there; and the site's own hosts (by the names
    the results give them), whose results the trend counts. ReportError for a site the store
    does not know."""
    mine = {}
    known = set()
    hosts = set()
    for key, p in rows.items():
        ends = (p.source_site, p.dest_site)
        known.update(ends)
        if site in ends:
            mine[key] = p
            hosts.update(host for host, end in zip((p.source, p.dest), ends)
                         if end == site and host)
    if not mine:
        raise ReportError("--site %s: no measured path has that site (known: %s)"
                          % (site, ", ".join(sorted(known)[:20]) or "none"))
    return mine, hosts


def _host_sites(paths):
    """{host: its site} as the paths name it (as source or as dest)."""
    out = {}
    for p in paths:
        out.setdefault(p.source, p.source_site)
        out.setdefault(p.dest, p.dest_site)
    return out


def _paths(rows, target):
    """[Path] in (source, dest, ip_version) order, each judged over both directions, and
    {host: (start, local_mtu, site)} of each measuring host's latest interface MTU. `rows`
    holds the unjudged records (PathRecord.unjudged) by key."""
    paths = []
    host_mtu = {}
    # The reverse direction by the hosts' names, else by their addresses: pScheduler names a
    # single-participant run's source by the node's own name while the task names its dest
    # by address (a -> 198.18.1.1 and b -> 198.18.0.1 are one path's two directions).
    # The address index is made only when a reverse is not found by name (a mesh whose
    # paths all have their reverse by name never pays for a second index of every row).
    by_address = None
    for key in _key_order(rows):
        p = rows[key]
        rev = rows.get((p.dest, p.source, p.ip_version))
        if rev is None and p.source_ip and p.dest_ip:
            if by_address is None:
                by_address = dict(((r.source_ip, r.dest_ip, r.ip_version), r)
                                  for r in rows.values() if r.source_ip and r.dest_ip)
            rev = by_address.get((p.dest_ip, p.source_ip, p.ip_version))
        _judge(p, rev, target)
        prev = host_mtu.get(p.source)
        if p.local_mtu is not None and (prev is None or p.start > prev[0]):
            host_mtu[p.source] = (p.start, p.local_mtu, p.source_site)
        paths.append(p)
    return paths, host_mtu


def _key_order(rows):
    """The keys of `rows` in (source, dest, ip_version) order, a missing value first. The keys
    themselves are compared (no second tuple per path: ~46 MB for 718,800 paths); only when a
    missing value meets a present one (which tuples cannot compare) with None read as ""/0."""
    try:
        return sorted(rows)
    except TypeError:
        return sorted(rows, key=lambda k: (k[0] or "", k[1] or "", k[2] or 0))


def _reverse(p, rev):
    """The reverse direction of a path: its MTUs (from the reflector, and from the reverse
    path's own latest result `rev`) and whether either saw a black hole. Reads only what
    judging leaves as the row said: the reflector's MTU and PMTUD of `p` (before _judge
    replaces the first), and the reverse result's own outcome, MTU, PMTUD and partial flag."""
    reverse = []
    if p.reverse_path_mtu is not None:
        reverse.append(p.reverse_path_mtu)
    rev_bh = blackhole_fields(pmtud=p.reverse_pmtud)
    if rev is not None and rev.succeeded and rev.path_mtu is not None:
        reverse.append(rev.path_mtu)
    if rev is not None and blackhole_fields(pmtud=rev.pmtud, partial=rev.partial):
        rev_bh = True
    return reverse, rev_bh


def _judge(p, rev, target):
    """The path's verdict over both directions, set on its record in place."""
    fwd_bh = blackhole_fields(pmtud=p.pmtud, partial=p.partial)
    reverse, rev_bh = _reverse(p, rev)
    reverse_mtu = min(reverse) if reverse else None
    # The path's state is the result rule (path_state.RULE) over both directions: this
    # result, with the reverse direction's MTU and black hole from the reverse result too.
    state = state_of_fields(target, succeeded=p.succeeded, path_mtu=p.path_mtu,
                            pmtud="blackhole" if fwd_bh else p.pmtud,
                            reverse_path_mtu=reverse_mtu,
                            reverse_pmtud="blackhole" if rev_bh else None)
    # Which direction fails: each direction's MTU against the target (the `jumbo` verdict,
    # core.mtu.is_jumbo) and its black holes.
    fwd_ok = bool(p.succeeded) and is_jumbo(p.path_mtu, target) is True
    rev_ok = not rev_bh and (reverse_mtu is None or is_jumbo(reverse_mtu, target))
    # Measured the other way: an MTU of the reverse direction, or a black hole on it. A
    # reverse path whose latest run failed measured nothing.
    reverse_known = bool(reverse) or rev_bh
    if state == "jumbo" and not reverse_known:
        state = ONE_WAY
    p.failing = FAILING[(not (fwd_ok and not fwd_bh), not rev_ok)]
    p.reverse_path_mtu = reverse_mtu
    p.reverse_known = reverse_known
    p.partial = bool(p.partial)
    p.blackhole = fwd_bh
    p.reverse_blackhole = rev_bh
    p.capable = state == "jumbo" and reverse_known
    p.state = state
    p.succeeded = bool(p.succeeded)


# -- the report's sections ----------------------------------------------------------------------

def _headline(queries, opts, paths, host_mtu, counted):
    """The report up to its headline numbers: configured hosts, capable paths, undecided."""
    count, first, last = counted
    target = opts.target
    window = opts.window
    n_paths = len(paths)
    n_capable = sum(1 for p in paths if p.capable)
    n_one_way = sum(1 for p in paths if not p.reverse_known)
    hosts_cfg = sum(1 for v in host_mtu.values() if v[1] >= target)
    report = collections.OrderedDict()
    report["schema"] = 1
    report["generated"] = datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ")
    report["store"] = queries.name
    report["window"] = {"since": window.since, "until": window.until, "first": first,
                        "last": last, "results": count}
    report["target_mtu"] = target
    # A site's page (--site) counts its own paths, and its trend its own hosts' results;
    # the window's result count stays the whole mesh's.
    report["site"] = opts.site
    report["limit"] = opts.limit
    report["targets"] = collections.OrderedDict(TARGETS)
    # Every count is named for what it counts: directed path-families (paths), results,
    # hosts. `paths` itself is the per-path list (path_record.PathRecord), in key order.
    report["paths"] = paths
    report["paths_measured"] = n_paths
    report["paths_both_ways"] = n_paths - n_one_way
    report["paths_one_way"] = n_one_way
    report["capable_paths"] = n_capable
    report["capable"] = share(n_capable, n_paths)
    report["hosts"] = len(host_mtu)
    report["configured_hosts"] = hosts_cfg
    report["configured"] = share(hosts_cfg, len(host_mtu))
    # Forward jumbo, reverse never measured: not capable, and no target is met while any.
    report["jumbo_one_way_paths"] = sum(1 for p in paths if p.state == ONE_WAY)
    # Undecided: would be jumbo, but a started flow was left unconfirmed (path_state's `unknown`).
    report["unknown_paths"] = sum(1 for p in paths if p.state == "unknown")
    return report


def _add_status(report, traffic):
    """`used` and `traffic` (from the volume matrix) and the DC26/DC28 status against them."""
    report["used"] = traffic["used"] if traffic else None
    report["traffic"] = traffic
    report["status"] = [
        {"target": name, "goal": goal, "paths": report["capable"],
         # Met only with every path measured both ways: a path never measured on its way
         # back could be the one that fails.
         "paths_met": (report["capable"] is not None and report["capable"] >= goal
                       and not report["paths_one_way"]),
         "traffic": report["used"],
         "traffic_met": None if report["used"] is None else report["used"] >= goal}
        for name, goal in TARGETS]


def _blackholes(paths, held_paths):
    """The action list: every black-holed path, those behind the most shared hop first."""
    blackholes = []
    for p in paths:
        if not p.blackhole:
            continue
        # A plain dict (ordered as well): half an OrderedDict's size, and there may be 50,000.
        blackholes.append(dict([
            ("source", p.source), ("dest", p.dest), ("ip_version", p.ip_version),
            ("family", p.family), ("source_site", p.source_site), ("dest_site", p.dest_site),
            ("partial", p.partial), ("size", p.blackhole_size), ("hop_ttl", p.blackhole_ttl),
            ("hop_ip", p.blackhole_ip), ("path_mtu", p.path_mtu), ("measured", p.start),
        ] + held.fields(held_paths.get((p.source, p.dest, p.ip_version)))))
    by_hop = collections.Counter(b["hop_ip"] for b in blackholes if b["hop_ip"])
    blackholes.sort(key=lambda b: (-by_hop.get(b["hop_ip"], 0), b["partial"], b["hop_ip"] or "",
                                   b["source"], b["dest"]))
    return blackholes


def _add_trend(report, f_hist, held_paths, interval):
    """The trend section from the store's history pass; its changes (held paths applied)."""
    trend, ch = f_hist.result()
    # The trend counts results (every run of the bucket), not paths: its numbers say so.
    buckets = []
    for b in trend:
        buckets.append(collections.OrderedDict([
            ("bucket", b["bucket"]), ("results", b["results"]),
            ("jumbo_results", b["capable"]), ("jumbo_results_share", share(b["capable"], b["results"])),
            ("configured_results", b["configured"]),
            ("configured_results_share", share(b["configured"], b["results"])),
            ("blackhole_results", b["blackholes"]), ("unknown_results", b.get("unknown", 0))]))
    report["trend"] = {"interval": interval, "buckets": buckets}
    return held.changes(ch, held_paths)
