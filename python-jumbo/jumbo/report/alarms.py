"""jumbo-alarms: MTU events in the WLCG/OSG network alarm service's own format.

    jumbo-alarms --store URL --state FILE [the report's store, --sites, --prometheus options]
                 [--out FILE.jsonl] [--index] [--min-sites N] [--hop-min-sites N]
                 [--share-drop PERCENT] [--recent-days D] [--baseline-days D] [--recent-since TIME]

Each event is what the alarm service (sand-ci/AlarmsAndAlerts) posts: category, subcategory,
event, body, tags (the WLCG site names, upper case) and source (the event's fields, with
`from`/`to` the window and `alarm_id` a SHA-224 of the event's key and the time it was
raised). Four kinds:

  jumbo path regressed                      a path whose latest state change went from jumbo
                                            to a black hole or to standard (tags: its sites)
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
import math

CATEGORY = "Networking"
PATH = ("Network", "jumbo path regressed")
SITE = ("Network", "jumbo regressed from/to multiple sites")
HOP = ("Network", "MTU black hole shared by multiple sites")
SHARE = ("Other", "jumbo share decreased")
REGRESSED = ("blackhole", "standard")


class Collector(object):
    """The report hook that keeps what the alarms need of each path."""

    def __init__(self):
        self.paths = []

    def __call__(self, report, paths, host_mtu, opts):
        for p in paths:
            self.paths.append((p.source, p.dest, p.ip_version, p.source_site.upper(),
                               p.dest_site.upper(), p.state, p.row.blackhole_ip, p.row.blackhole_ttl,
                               p.row.blackhole_size, p.path_mtu))


def _ipv(version):
    return "ipv6" if version == 6 else "ipv4"


def regressions(report, collector):
    """[path dict] whose latest change (failed and undecided results skipped) is jumbo -> REGRESSED and whose
    state is still that one; flapping paths are left to the report."""
    flapping = set((f["source"], f["dest"]) for f in report["flapping"])
    previous = {}
    for c in report["changes"]:                       # newest first
        key = (c["source"], c["dest"], c.get("ip_version"))
        if key not in previous and c["from"] not in ("failed", "unknown"):
            previous[key] = (c["from"], c["to"], c["start"])
    out = []
    for src, dst, version, ssite, dsite, state, hop, ttl, size, mtu in collector.paths:
        before = previous.get((src, dst, version))
        if before is None or before[0] != "jumbo" or state not in REGRESSED or (src, dst) in flapping:
            continue
        out.append(collections.OrderedDict([
            ("ipv", _ipv(version)), ("ipv6", version == 6), ("src_host", src), ("dest_host", dst),
            ("src_site", ssite), ("dest_site", dsite), ("from_state", "jumbo"), ("to_state", state),
            ("changed_at", before[2]), ("path_mtu", mtu), ("hop_ip", hop), ("hop_ttl", ttl),
            ("size", size)]))
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
    by_hop = collections.defaultdict(list)
    for src, dst, version, ssite, dsite, state, hop, ttl, size, _mtu in collector.paths:
        if state == "blackhole" and hop:
            by_hop[(hop, _ipv(version))].append({"src_host": src, "dest_host": dst, "src_site": ssite,
                                                 "dest_site": dsite, "hop_ttl": ttl, "size": size})
    out = []
    taken = set()
    for (hop, ipv), group in sorted(by_hop.items()):
        sites = sorted(set(s for p in group for s in (p["src_site"], p["dest_site"])))
        if len(sites) < hop_min_sites or len(group) < 2:
            continue
        key = ("hop", hop, ipv)
        src = dict(w, ipv=ipv, ipv6=ipv == "ipv6", hop_ip=hop,
                   hop_ttl=sorted(set(p["hop_ttl"] for p in group if p["hop_ttl"] is not None)),
                   size=max([p["size"] or 0 for p in group]) or None, sites=sites,
                   src_sites=sorted(set(p["src_site"] for p in group)),
                   dest_sites=sorted(set(p["dest_site"] for p in group)), num_pairs=len(group),
                   pairs=["%s -> %s" % (p["src_host"], p["dest_host"]) for p in group][:100])
        out.append((key, _event(HOP, "MTU black hole at hop %s on %d paths of %d sites"
                                % (hop, len(group), len(sites)), sites, src, key)))
        taken.update((p["src_host"], p["dest_host"], ipv) for p in group)
    return out, taken


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
                   to_states=dict(collections.Counter(p["to_state"] for p in group)))
        out.append((key, _event(SITE, "jumbo regressed from/to multiple sites", [site], src, key)))
        taken.update(id(p) for p in group)
    return out, taken


def _path_events(paths, w):
    out = []
    for p in paths:
        key = ("path", p["src_host"], p["dest_host"], p["ipv"], p["to_state"])
        out.append((key, _event(PATH, "jumbo path regressed to %s" % p["to_state"],
                                sorted(set([p["src_site"], p["dest_site"]])), dict(w, **p), key)))
    return out


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
        out.append((key, _event(SHARE, "jumbo share decreased", [site], src, key)))
    return out


def _event(kind, body, tags, source, key):
    """The event (its source.alarm_id set by alarm_state.reconcile, which knows when it was
    raised)."""
    source = collections.OrderedDict(source)
    return collections.OrderedDict([("category", CATEGORY), ("subcategory", kind[0]),
                                    ("event", kind[1]), ("body", body), ("tags", list(tags)),
                                    ("source", source)])
