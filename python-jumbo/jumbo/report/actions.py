"""What to do first: the ranked action list, one ticket per thing someone can fix.

A ticket is a hop (where packets of the target size vanish, or where the size drops below it)
or an end host (its interface MTU below the target). Every directed path that is not capable
gets its blockers: the tickets of its forward direction and of its reverse direction (read
from the reverse path's own result, or the reflector's). A ticket

  unlocks    the paths whose only blocker it is: fixing it alone makes them capable
  needed by  every path it blocks (with other blockers too)

each counted per IP version, as far as the results show: a blocker hidden behind another
(a host at 1500 sees no hop's size above 1500, so a black hole further along shows only once
the host is fixed) is not counted, and `unlocks` may then count a path that needs more. And
in bytes (and share of the traffic) when the report knows the traffic (telemetry cells per
site pair and family, or the volume matrix per site pair, spread evenly over the pair's
paths). Tickets are ranked by what fixing them unlocks: bytes
when known, then paths unlocked, then paths they are needed by.

Who owns a hop: the operator's owners file (owners.py) when a prefix holds it; else the site
every one of its paths has at one end (its paths may start or end there: a site's firewall
blocks inbound and outbound alike); when two sites are at the ends of every path (a link
between them) both are named as candidates; else it is transit, owned by no site of the mesh.
A host's site is its own (the record's site). Reverse names come from Resolver, only for the
tickets shown. A path's blockers that the results cannot place (a failed run, a black hole
with no hop located, a reverse direction with no reverse result) are counted as unexplained.
"""

import collections
import ipaddress

from .culprits import hop_tuples, name_culprit_owners
from .formatting import share
from .owners import hop_owner
from .targets import add_targets

UNKNOWN = ("unknown", None)
EXAMPLES = 3


def interface_mtus(paths):
    """{(host, ip_version): interface MTU} from each host's latest result as a source."""
    latest = {}
    for p in paths:
        if p.local_mtu is None:
            continue
        key = (p.source, p.ip_version)
        prev = latest.get(key)
        if prev is None or p.start > prev[0]:
            latest[key] = (p.start, p.local_mtu)
    return {k: v[1] for k, v in latest.items()}


def _forward(p, iface, target):
    """The blockers of a path's own (forward) direction, which failed."""
    out = set()
    if p.local_mtu is not None and p.local_mtu < target:
        out.add(("host", p.source))
    dest_mtu = iface.get((p.dest, p.ip_version))
    if dest_mtu is not None and dest_mtu < target:
        out.add(("host", p.dest))
    if p.blackhole:
        out.add(("hop", p.blackhole_ip) if p.blackhole_ip else UNKNOWN)
    elif not p.succeeded:
        out.add(UNKNOWN)
    elif not out:
        # The first hop where the size drops below the target (past the source host: its own
        # interface bounds every hop's size, so a source below the target hides the hops).
        for _ttl, ip, mtu in hop_tuples(p.hops):
            if mtu is None or mtu >= target or ip in (None, p.source_ip):
                continue
            out.add(("host", p.dest) if ip == p.dest_ip else ("hop", ip))
            break
    return out or {UNKNOWN}


def _reverse(p, rev, iface, target, forward):
    """The blockers of a path's reverse direction, which failed."""
    if rev is not None and "out" in rev.failing:
        return forward(rev)
    out = set()
    for host in (p.dest, p.source):     # the reverse direction's source, then its dest
        mtu = iface.get((host, p.ip_version))
        if mtu is not None and mtu < target:
            out.add(("host", host))
    return out or {UNKNOWN}


def blockers(paths, target, iface):
    """(path, frozenset of tickets) of every path that is not capable and fails somewhere, one
    at a time. Only the paths whose own direction fails are indexed (the reverse of another
    path is read from them), and each one's blockers are kept as a small tuple: at 720,000
    paths a dict of them all, and a set per path, cost hundreds of MB."""
    failing_out = {(p.source, p.dest, p.ip_version): p for p in paths
                   if not p.capable and "out" in p.failing}
    memo = {}

    def forward(p):
        # Asked at most twice (for the path, and for its reverse path's "in"): kept after
        # the first time only.
        key = (p.source, p.dest, p.ip_version)
        found = memo.pop(key, None)
        if found is None:
            found = memo[key] = tuple(_forward(p, iface, target))
        return found

    for p in paths:
        if p.capable or not p.failing:
            continue
        b = set()
        if "out" in p.failing:
            b.update(forward(p))
        if "in" in p.failing:
            b.update(_reverse(p, failing_out.get((p.dest, p.source, p.ip_version)), iface, target,
                              forward))
        yield p, frozenset(b)


def path_bytes(report, opts, paths):
    """(bytes per path function, total measured bytes) from the telemetry cells or the volume
    matrix; (None, None) when the report knows no traffic."""
    tel = report.get("telemetry") or {}
    counts = collections.Counter()
    for p in paths:
        counts[(p.source_site, p.dest_site, p.ip_version)] += 1
        counts[(p.source_site, p.dest_site, None)] += 1
    per = {}
    if tel.get("cells") and tel.get("bytes"):
        for c in tel["cells"]:
            key = (c["source_site"], c["dest_site"], c.get("ip_version"))
            if counts.get(key):
                per[key] = per.get(key, 0.0) + c["bytes"] / counts[key]
        total = tel["bytes"]
    elif opts.volumes and (report.get("traffic") or {}).get("measured_bytes"):
        for a, b, v in opts.volumes:
            if counts.get((a, b, None)):
                per[(a, b, None)] = per.get((a, b, None), 0.0) + v / counts[(a, b, None)]
        total = report["traffic"]["measured_bytes"]
    else:
        return None, None

    def of(p):
        return per.get((p.source_site, p.dest_site, p.ip_version),
                       per.get((p.source_site, p.dest_site, None), 0.0))
    return of, total


def _new(kind, key):
    return {"kind": kind, "key": key, "needed": collections.Counter(), "unlocks": collections.Counter(),
            "bytes": 0.0, "blackholes": 0, "mtu": None, "sites": None, "examples": [],
            "last_seen": None, "runs": 0, "seen": 0, "site": None}


def _tally(t, p, alone, nbytes, target, iface, evidence):
    """Path `p` counted into ticket `t`: what it needs and unlocks, then what its kind
    (an end host, a hop) records of it."""
    fam = "ipv%d" % (p.ip_version or 4)
    _count_path(t, p, fam, alone, nbytes)
    if t["kind"] == "host":
        _tally_host(t, p, fam, iface)
    else:
        _tally_hop(t, p, target, evidence)


def _count_path(t, p, fam, alone, nbytes):
    t["needed"][fam] += 1
    if alone:
        t["unlocks"][fam] += 1
        t["bytes"] += nbytes
    ends = {p.source_site, p.dest_site}
    t["sites"] = ends if t["sites"] is None else (t["sites"] & ends)
    if t["last_seen"] is None or p.start > t["last_seen"]:
        t["last_seen"] = p.start
    if len(t["examples"]) < EXAMPLES:
        t["examples"].append("%s -> %s (IPv%d)" % (p.source, p.dest, p.ip_version or 4))


def _tally_host(t, p, fam, iface):
    host = t["key"]
    t["site"] = p.source_site if p.source == host else p.dest_site
    mtu = iface.get((host, p.ip_version))
    if mtu is not None:
        t.setdefault("mtus", {})[fam] = mtu


def _tally_hop(t, p, target, evidence):
    """A black hole at the hop adds its evidence (runs, seen); a hop that only limits the
    path's MTU records the smallest MTU below the target it showed."""
    if p.blackhole and p.blackhole_ip == t["key"]:
        t["blackholes"] += 1
        ev = evidence.get((p.source, p.dest, p.ip_version))
        if ev and ev.get("runs"):
            t["runs"] += ev["runs"]
            t["seen"] += ev["seen"] or 0
        return
    for _ttl, ip, mtu in hop_tuples(p.hops):
        if ip == t["key"] and mtu is not None and mtu < target:
            t["mtu"] = mtu if t["mtu"] is None else min(t["mtu"], mtu)


def tickets(report, paths, opts, owners=None):
    """(ranked tickets (not yet resolved), unexplained path count)."""
    target = opts.target
    iface = interface_mtus(paths)
    of_bytes, total = path_bytes(report, opts, paths)
    evidence = {(b["source"], b["dest"], b["ip_version"]): b for b in report.get("blackholes", ())}
    found = {}
    unexplained = 0
    for p, blocked in blockers(paths, target, iface):
        if UNKNOWN in blocked:
            unexplained += 1
        alone = len(blocked) == 1
        nbytes = of_bytes(p) if of_bytes else 0.0
        for b in blocked:
            if b is UNKNOWN or b == UNKNOWN:
                continue
            t = found.get(b)
            if t is None:
                t = found[b] = _new(*b)
            _tally(t, p, alone, nbytes, target, iface, evidence)
    out = [_ticket(t, total, owners) for t in found.values()]
    out.sort(key=lambda t: (-(t["unlocks"]["bytes"] or 0), -t["unlocks"]["paths"],
                            -t["needed_by"]["paths"], t["kind"], t["ip"] or t["host"] or ""))
    for rank, t in enumerate(out, 1):
        t["rank"] = rank
    return out, unexplained


def _families(counter):
    return collections.OrderedDict([("paths", sum(counter.values())),
                                    ("ipv4", counter.get("ipv4", 0)), ("ipv6", counter.get("ipv6", 0))])


def _ticket(t, total, owners):
    unlocks = _families(t["unlocks"])
    unlocks["bytes"] = t["bytes"] if total else None
    unlocks["traffic"] = share(t["bytes"], total) if total else None
    ticket = collections.OrderedDict([("rank", None), ("kind", t["kind"])])
    if t["kind"] == "hop":
        site, basis, candidates, entry = hop_owner(t["key"], t["sites"], owners)
        try:
            version = ipaddress.ip_address(t["key"]).version
        except ValueError:
            version = None
        ticket.update([
            ("ip", t["key"]), ("host", None), ("ip_version", version), ("name", None),
            ("as", entry.get("as")), ("site", site), ("owner_basis", basis),
            ("candidates", candidates), ("owner", entry.get("owner")),
            ("contact", entry.get("contact")),
            ("problem", ("black hole" + (", MTU %s" % t["mtu"] if t["mtu"] else "")) if t["blackholes"]
             else "MTU %s" % t["mtu"]),
            ("mtu", t["mtu"])])
    else:
        mtus = t.get("mtus", {})
        ticket.update([
            ("ip", None), ("host", t["key"]), ("ip_version", None), ("name", None), ("as", None),
            ("site", t["site"]), ("owner_basis", "the host's own site"), ("candidates", []),
            ("owner", None), ("contact", None),
            ("problem", "interface MTU %s" % "/".join(str(m) for m in sorted(set(mtus.values())))
             if mtus else "interface MTU below the target (its dest's hop)"),
            ("mtu", min(mtus.values()) if mtus else None)])
        ticket["interface_mtu"] = collections.OrderedDict(sorted(mtus.items()))
    ticket["unlocks"] = unlocks
    ticket["needed_by"] = _families(t["needed"])
    ticket["evidence"] = collections.OrderedDict([
        ("paths", ticket["needed_by"]["paths"]), ("blackhole_paths", t["blackholes"]),
        ("runs", t["runs"] or None), ("runs_seen", t["seen"] or None),
        ("last_seen", t["last_seen"]), ("examples", t["examples"])])
    return ticket


class Actions(object):
    """The report hook (model.Options.extra) that puts the action list and the targets
    (targets.py) first in the report. Runs after the telemetry hook, whose traffic it uses."""

    def __init__(self, owners=None, resolver=None, dates=None):
        self.owners = owners
        self.resolver = resolver
        self.dates = dates

    def __call__(self, report, paths, host_mtu, opts):
        ranked, unexplained = tickets(report, paths, opts, self.owners)
        shown = ranked[:max(opts.limit, 1)]
        resolve = None
        if self.resolver is not None:
            names = self.resolver.names([t["ip"] for t in shown if t["ip"]])
            for t in shown:
                if t["ip"]:
                    t["name"] = names.get(t["ip"])
            resolve = self.resolver.stats
        report["actions"] = collections.OrderedDict([
            ("tickets", shown), ("total", len(ranked)),
            ("failing_paths", sum(1 for p in paths if not p.capable and p.failing)),
            ("unexplained_paths", unexplained),
            ("owners_file", self.owners.source if self.owners is not None else None),
            ("resolve", resolve)])
        name_culprit_owners(report.get("culprits") or (), self.owners)
        add_targets(report, self.dates)
        # First in the JSON: what to do, then where the mesh stands against its targets.
        for key in ("targets_due", "actions"):
            report.move_to_end(key, last=False)
