"""jumbo-alarms: MTU events in the WLCG/OSG network alarm service's own format.

    jumbo-alarms --store URL --state FILE [the report's store and credential options]
                 [--sites FILE] [--since TIME] [--until TIME] [--target-mtu N] [--flap N]
                 [--prometheus URL [--prometheus-* options]]
                 [--out FILE.jsonl] [--index] [--lock-wait S] [--min-sites N] [--hop-min-sites N]
                 [--share-drop PERCENT] [--recent-days D] [--baseline-days D] [--recent-since TIME]

Only the options it acts on: the report's --format, --volumes, --interval, --link-speed and
--limit are refused (alarms_cli.REPORT_OPTIONS).

Each event is what the alarm service (sand-ci/AlarmsAndAlerts) posts: category, subcategory,
event, body, tags (the WLCG site names, upper case) and source (the event's fields, with
`from`/`to` the window and `alarm_id` a SHA-224 of the event's key and the time it was
raised). Four kinds:

  jumbo path regressed                      a path whose latest state change went from jumbo
                                            to a black hole or to standard (tags: its sites;
                                            one per path and family; the body names the path,
                                            its family, both directions' path MTU before and
                                            now, the size that failed and the culprit hop)
  jumbo regressed from/to multiple sites    a site with regressed paths to or from at least
                                            --min-sites other sites (5, the service's minCount);
                                            its paths raise no pair event
  MTU black hole shared by multiple sites   one hop where the black holes of two or more
                                            paths involving at least --hop-min-sites sites (2)
                                            vanish: one event (its paths raise no other)
  jumbo share decreased                     a site whose jumbo share (bytes, with --prometheus;
                                            else its capable paths) over the last --recent-days
                                            (3) fell by --share-drop percent (50) or more
                                            against the --baseline-days (21) before

Idempotent: the --state file keeps the events whose condition still holds; an event is raised
when its condition appears, not again while it holds, and again only after it cleared (a new
alarm_id: the key's and its raise time). Runs that overlap take turns (a lock beside the state)
and a failed --index or a crash does not raise the events again (alarm_state.py).
Output: JSON lines (--out, appended; standard output otherwise) and, with --index, documents
in the OpenSearch store's own `jumbo_alarms` index (id = alarm_id, an explicit mapping:
alarms_index.py). Exit status as jumbo-report.
"""

import collections
import json
import math

from ..core.result.pmtu import Hop

CATEGORY = "Networking"
PATH = ("Network", "jumbo path regressed")
SITE = ("Network", "jumbo regressed from/to multiple sites")
HOP = ("Network", "MTU black hole shared by multiple sites")
SHARE = ("Other", "jumbo share decreased")
REGRESSED = ("blackhole", "standard")


Seen = collections.namedtuple("Seen", "src dst version ssite dsite state hop ttl size mtu reverse_mtu "
                                       "hop_mtu")


class Collector(object):
    """The report hook that keeps what the alarms need of each path: its state, both
    directions' path MTU (the report's `path_mtu` and `reverse_path_mtu`), the size that
    failed and the culprit hop (the black hole's, else the first hop below the target:
    culprits.py's rule)."""

    def __init__(self):
        self.paths = []

    def __call__(self, report, paths, host_mtu, opts):
        for p in paths:
            hop, ttl, hop_mtu = p.blackhole_ip, p.blackhole_ttl, None
            if not hop and p.state == "standard":
                hop, ttl, hop_mtu = _mtu_hop(p, opts.target)
            self.paths.append(Seen(p.source, p.dest, p.ip_version, p.source_site.upper(),
                                   p.dest_site.upper(), p.state, hop, ttl, p.blackhole_size,
                                   p.path_mtu, p.reverse_path_mtu, hop_mtu))


def _mtu_hop(path, target):
    """(ip, ttl, mtu) of the first hop between the ends whose MTU is below `target` (the
    rule of culprits.shared_culprits); the path's hops are {ttl, ip, mtu} objects or
    (ttl, ip, mtu) triples, or their JSON text (the SQLite store's)."""
    hops = path.hops
    if isinstance(hops, str):
        try:
            hops = json.loads(hops)
        except ValueError:
            hops = None
    for hop in hops if isinstance(hops, (list, tuple)) else ():
        if isinstance(hop, dict):
            hop = Hop.from_json(hop)  # a stored result's hop, read once
            ttl, ip, mtu = hop.ttl, hop.ip, hop.mtu
        elif isinstance(hop, (list, tuple)) and len(hop) == 3:
            ttl, ip, mtu = hop
        else:
            continue
        if isinstance(mtu, int) and mtu < target and ip not in (None, path.source_ip, path.dest_ip):
            return ip, ttl, mtu
    return None, None, None


def _ipv(version):
    return "ipv6" if version == 6 else "ipv4"


def family(ipv):
    return "IPv6" if ipv == "ipv6" else "IPv4"


def _mtu(value):
    return "?" if value is None else str(value)


def path_text(p):
    """One line naming the path, its family, both directions' MTU before and now, the size
    that failed and the culprit hop: what a ticket needs."""
    text = "%s -> %s (%s): path MTU %s -> %s, reverse %s -> %s" % (
        p["src_host"], p["dest_host"], family(p["ipv"]), _mtu(p["from_path_mtu"]),
        _mtu(p["path_mtu"]), _mtu(p["from_reverse_path_mtu"]), _mtu(p["reverse_path_mtu"]))
    if p["size"]:
        text += "; %d-byte packets lost" % p["size"]
    elif p["hop_ip"]:
        text += "; limited"
    if p["hop_ip"]:
        text += " at hop %s%s%s" % (p["hop_ip"],
                                    "" if p["hop_ttl"] is None else " (TTL %s)" % p["hop_ttl"],
                                    "" if p.get("hop_mtu") is None else ", MTU %s" % p["hop_mtu"])
    return text


def regressions(report, collector):
    """[path dict] whose latest change (failed and undecided results skipped) is jumbo -> REGRESSED and whose
    state is still that one; flapping paths (of the same family) are left to the report."""
    flapping = set((f["source"], f["dest"], f.get("ip_version")) for f in report["flapping"])
    previous = {}
    for c in report["changes"]:                       # newest first
        key = (c["source"], c["dest"], c.get("ip_version"))
        if key not in previous and c["from"] not in ("failed", "unknown"):
            previous[key] = c
    out = []
    for s in collector.paths:
        before = previous.get((s.src, s.dst, s.version))
        if before is None or before["from"] != "jumbo" or s.state not in REGRESSED or \
                (s.src, s.dst, s.version) in flapping:
            continue
        out.append(collections.OrderedDict([
            ("ipv", _ipv(s.version)), ("ipv6", s.version == 6), ("src_host", s.src),
            ("dest_host", s.dst), ("src_site", s.ssite), ("dest_site", s.dsite),
            ("from_state", "jumbo"), ("to_state", s.state), ("changed_at", before["start"]),
            ("from_path_mtu", before.get("from_mtu")),
            ("from_reverse_path_mtu", before.get("from_reverse_mtu")), ("path_mtu", s.mtu),
            ("reverse_path_mtu", s.reverse_mtu), ("hop_ip", s.hop), ("hop_ttl", s.ttl),
            ("hop_mtu", s.hop_mtu), ("size", s.size)]))
    return out


def events(report, collector, window, min_sites=5, hop_min_sites=2, shares=None, share_drop=50.0):
    """Every event whose condition holds now: [(key, event dict)]."""
    w = {"from": window[0], "to": window[1]}
    out, taken = _hop_events(collector, w, hop_min_sites)
    # A path under a hop event raises no other event.
    rest = [p for p in regressions(report, collector)
            if (p["src_host"], p["dest_host"], p["ipv"]) not in taken]
    site_events, in_site_events = _site_events(rest, w, min_sites)
    out += site_events
    out += _path_events([p for p in rest if id(p) not in in_site_events], w)
    out += _share_events(shares, w, share_drop)
    return out


def _hop_events(collector, w, hop_min_sites):
    """One black hole at one hop, across sites: one event for all its paths (regressed or not).
    The events, and the (src, dest, ipv) of the paths they take."""
    out = []
    taken = set()
    for (hop, ipv), group in sorted(_holes_by_hop(collector).items()):
        sites = sorted(set(s for p in group for s in (p["src_site"], p["dest_site"])))
        if len(sites) < hop_min_sites or len(group) < 2:
            continue
        key = ("hop", hop, ipv)
        src = _hop_source(w, hop, ipv, group, sites)
        out.append((key, _event(HOP, _hop_body(src, len(group)), sites, src, key)))
        taken.update((p["src_host"], p["dest_host"], ipv) for p in group)
    return out, taken


def _holes_by_hop(collector):
    """{(hop, ipv): [the black-holed paths through it]}."""
    by_hop = collections.defaultdict(list)
    for s in collector.paths:
        if s.state == "blackhole" and s.hop:
            by_hop[(s.hop, _ipv(s.version))].append({
                "src_host": s.src, "dest_host": s.dst, "src_site": s.ssite, "dest_site": s.dsite,
                "hop_ttl": s.ttl, "size": s.size, "path_mtu": s.mtu})
    return by_hop


def _hop_source(w, hop, ipv, group, sites):
    """The event's searchable facts: the hop, its TTLs, the largest size lost, the smallest
    path MTU, the sites and (up to 100) paths."""
    mtus = [p["path_mtu"] for p in group if p["path_mtu"] is not None]
    return dict(w, ipv=ipv, ipv6=ipv == "ipv6", hop_ip=hop,
                hop_ttl=sorted(set(p["hop_ttl"] for p in group if p["hop_ttl"] is not None)),
                size=max([p["size"] or 0 for p in group]) or None,
                path_mtu=min(mtus) if mtus else None, sites=sites,
                src_sites=sorted(set(p["src_site"] for p in group)),
                dest_sites=sorted(set(p["dest_site"] for p in group)), num_pairs=len(group),
                pairs=["%s -> %s" % (p["src_host"], p["dest_host"]) for p in group][:100])


def _hop_body(src, paths):
    ttls, size = src["hop_ttl"], src["size"]
    return "MTU black hole at hop %s (%s%s) on %d paths of %d sites%s%s, e.g. %s" % (
        src["hop_ip"], family(src["ipv"]), ", TTL %s" % "/".join(str(t) for t in ttls) if ttls else "",
        paths, len(src["sites"]), "; %d-byte packets lost" % size if size else "",
        "; path MTU %s" % src["path_mtu"] if src["path_mtu"] is not None else "", src["pairs"][0])


def _site_events(paths, w, min_sites):
    """A site with regressed paths from/to many sites: one event. The events, and the id()s of
    the paths they take (those raise no pair event)."""
    per_site = collections.defaultdict(list)
    for p in paths:
        per_site[(p["src_site"], p["ipv"])].append(p)
        if p["dest_site"] != p["src_site"]:
            per_site[(p["dest_site"], p["ipv"])].append(p)
    out = []
    taken = set()
    for (site, ipv), group in sorted(per_site.items()):
        dest_sites = sorted(set(p["dest_site"] for p in group if p["dest_site"] != site))
        src_sites = sorted(set(p["src_site"] for p in group if p["src_site"] != site))
        if len(set(dest_sites) | set(src_sites)) < min_sites:
            continue
        key = ("site", site, ipv)
        src = dict(w, ipv=ipv, ipv6=ipv == "ipv6", site=site, dest_sites=dest_sites,
                   src_sites=src_sites, num_paths=len(group),
                   to_states=dict(collections.Counter(p["to_state"] for p in group)),
                   pairs=["%s -> %s" % (p["src_host"], p["dest_host"]) for p in group][:100])
        others = len(set(dest_sites) | set(src_sites))
        body = "jumbo regressed on %d %s paths from/to %s and %d other site%s (%s), e.g. %s" % (
            len(group), family(ipv), site, others, "" if others == 1 else "s",
            ", ".join("%d to %s" % (n, st) for st, n in sorted(src["to_states"].items())),
            path_text(group[0]))
        out.append((key, _event(SITE, body, [site], src, key)))
        taken.update(id(p) for p in group)
    return out, taken


def _path_events(paths, w):
    out = []
    for p in paths:
        key = ("path", p["src_host"], p["dest_host"], p["ipv"], p["to_state"])
        out.append((key, _event(PATH, "jumbo path regressed to %s: %s" % (
                                    "a black hole" if p["to_state"] == "blackhole" else "standard",
                                    path_text(p)),
                                sorted(set([p["src_site"], p["dest_site"]])), dict(w, **p), key)))
    return out


# What a site's share counts, by the basis jumbo-alarms gave it (alarms_cli._shares).
BASES = {"bytes": "its bytes sent at jumbo MSS",
         "fireflies bytes": "its bytes sent at jumbo MSS (fireflies; the bytes with a known MSS)",
         "paths": "its paths jumbo both ways"}


def _share_events(shares, w, share_drop):
    """A site whose jumbo share over the recent days fell by `share_drop` percent or more."""
    out = []
    for site, (base, recent, basis) in sorted((shares or {}).items()):
        # a share that is no number (NaN, inf: telemetry that overflowed) decides nothing
        if not base or recent is None or not (math.isfinite(base) and math.isfinite(recent)):
            continue
        change = round(100.0 * (recent - base) / base, 1)
        if -change < share_drop:
            continue
        key = ("share", site, basis)
        src = dict(w, site=site, basis=basis, baseline=base, recent=recent, change=change)
        body = "jumbo share of %s decreased by %g %%: %.1f %% -> %.1f %% of %s" % (
            site, -change, 100.0 * base, 100.0 * recent,
            BASES.get(basis, "its paths jumbo both ways"))
        out.append((key, _event(SHARE, body, [site], src, key)))
    return out


def _event(kind, body, tags, source, key):
    """The event (its source.alarm_id set by alarm_state.reconcile, which knows when it was
    raised)."""
    source = collections.OrderedDict(source)
    return collections.OrderedDict([("category", CATEGORY), ("subcategory", kind[0]),
                                    ("event", kind[1]), ("body", body), ("tags", list(tags)),
                                    ("source", source)])
