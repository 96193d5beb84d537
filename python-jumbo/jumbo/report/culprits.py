"""Where failing paths fail: the hops several failing paths share (a size drop or a black
hole), and how many failures are the source host's own MTU rather than the network's.

A culprit hop names one owner (owners.hop_owner: the owners file, else the site at an end of
every path through it, else the two sites of a link as candidates, else transit) and counts
the other sites its paths touch as affected, not as suspects: a hole in RAL's firewall on
paths from RAL to five sites is RAL's, with five sites affected.
"""

import json

from ..core.result.pmtu import Hop
from .owners import hop_owner


# (ttl, ip, mtu) of a stored hop, as Hop names them.
_TTL_IP_MTU = Hop.reader("ttl", "ip", "mtu")


def hop_tuples(hops):
    """((ttl, ip, mtu), ...) from JSON text, a list of hop objects, or already tuples."""
    if isinstance(hops, str):
        if hops is _LAST[0]:
            return _LAST[1]
        text = hops
        try:
            hops = json.loads(hops)
        except ValueError:
            hops = ()
        out = _tuples(hops)
        _LAST[:] = [text, out]
        return out
    return _tuples(hops)


# The last stored hops read, and what they gave: the action list reads a path's hops for its
# blockers and again, right after, for its ticket's evidence (the same text object: one JSON
# parse, not two). Read and written by the report's one thread.
_LAST = [None, ()]


def _tuples(hops):
    if not isinstance(hops, (list, tuple)):    # a damaged or hostile store's hops
        return ()
    out = []
    for h in hops:
        if isinstance(h, dict):
            out.append(_TTL_IP_MTU(h))
        elif isinstance(h, (tuple, list)) and len(h) == 3:
            out.append(tuple(h))
    return tuple(out)


def _locate(p, target, host_mtu):
    """What limits one failing path: ("host", (host, interface MTU)) for an end host's own MTU,
    ("hop", (kind, ip, ttl, mtu)) for a hop, or None when nothing says."""
    if p.local_mtu is not None and p.local_mtu < target and not p.blackhole:
        return "host", (p.source, p.local_mtu)     # the source host is not configured
    if p.blackhole and p.blackhole_ip:
        return "hop", ("blackhole", p.blackhole_ip, p.blackhole_ttl, None)
    if "out" not in p.failing:
        return None
    hops_list = hop_tuples(p.hops)
    for ttl, ip, hmtu in hops_list:
        if hmtu is not None and hmtu < target and ip not in (None, p.source_ip, p.dest_ip):
            return "hop", ("mtu", ip, ttl, hmtu)
    for _ttl, ip, hmtu in hops_list:
        if ip == p.dest_ip and hmtu is not None and hmtu < target:
            return "host", (p.dest, hmtu)          # the dest's own link
    dest = host_mtu.get(p.dest)
    if not p.blackhole and dest is not None and dest[1] is not None and dest[1] < target:
        return "host", (p.dest, dest[1])           # the dest's interface, as it measures
    return None


def shared_culprits(paths, target, minimum, host_mtu=None):
    """Hops shared by several failing paths (where the size drops or big packets vanish), and
    the number of failing paths an end host's own MTU limits. Each failing path's record gets
    its `culprit` hop or its `limiting_host` (path_record.PathRecord)."""
    hops = {}
    host_limited = 0
    host_mtu = host_mtu or {}
    for p in paths:
        if p.capable or not p.succeeded and not p.blackhole:
            continue
        found = _locate(p, target, host_mtu)
        if found is None:
            continue
        if found[0] == "host":
            p.limiting_host = found[1]
            host_limited += 1
            continue
        kind, culprit, ttl, mtu = found[1]
        p.culprit = found[1]
        entry = hops.setdefault(culprit, {"hop_ip": culprit, "paths": 0, "blackholes": 0,
                                          "mtu": None, "sites": set(), "ends": None,
                                          "examples": []})
        entry["paths"] += 1
        if kind == "blackhole":
            entry["blackholes"] += 1
        elif mtu is not None:
            entry["mtu"] = mtu if entry["mtu"] is None else min(entry["mtu"], mtu)
        ends = {p.source_site, p.dest_site}
        entry["sites"].update(ends)
        entry["ends"] = ends if entry["ends"] is None else (entry["ends"] & ends)
        if len(entry["examples"]) < 3:
            entry["examples"].append(p.label())
    out = []
    for e in hops.values():
        if e["paths"] >= minimum:
            out.append(e)
    out.sort(key=lambda e: (-e["paths"], e["hop_ip"]))
    return _name_owners(out), host_limited


def _name_owner(e, site, basis, candidates, touched):
    e["site"], e["owner_basis"], e["candidates"] = site, basis, candidates
    e["affected_sites"] = sorted(s for s in touched if s != site and s not in candidates)
    e["affected_site_count"] = len(e["affected_sites"])


def _name_owners(culprits):
    """Each culprit's owner from its paths' ends (`site`, `owner_basis`, `candidates`) and
    the other sites its paths touch (`affected_sites`, `affected_site_count`)."""
    for e in culprits:
        touched, ends = e.pop("sites"), e.pop("ends")
        site, basis, candidates, _entry = hop_owner(e["hop_ip"], ends)
        _name_owner(e, site, basis, candidates, touched)
    return culprits


def name_culprit_owners(culprits, owners):
    """The owners file's site, where a prefix of it holds a culprit hop, as its owner (the
    report hook actions.Actions, which has the file); the sites its paths touch stay."""
    if owners is None:
        return
    for e in culprits:
        site, basis, candidates, _entry = hop_owner(e["hop_ip"], (), owners)
        if basis == "owners file":
            touched = set(e["affected_sites"]) | set(e["candidates"])
            touched.update([e["site"]] if e["site"] else [])
            _name_owner(e, site, basis, candidates, touched)


def limiting_hosts(paths, site_of_host):
    """The end hosts whose own MTU limits failing paths: one entry per host and family, the
    most paths first (their interface MTU, site and the number of paths)."""
    found = {}
    for p in paths:
        if p.limiting_host is None:
            continue
        host, mtu = p.limiting_host
        entry = found.setdefault((host, p.ip_version), {
            "host": host, "ip_version": p.ip_version, "family": p.family,
            "site": site_of_host.get(host), "interface_mtu": mtu, "paths": 0})
        entry["paths"] += 1
        if mtu is not None and (entry["interface_mtu"] is None or mtu < entry["interface_mtu"]):
            entry["interface_mtu"] = mtu
    return sorted(found.values(), key=lambda e: (-e["paths"], e["host"], e["ip_version"] or 0))
