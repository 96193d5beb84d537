"""Where failing paths fail: the hops several failing paths share (a size drop or a black
hole), and how many failures are the source host's own MTU rather than the network's."""

import json


def hop_tuples(hops):
    """[(ttl, ip, mtu)] from JSON text, a list of hop objects, or already tuples."""
    if isinstance(hops, str):
        try:
            hops = json.loads(hops)
        except ValueError:
            return []
    out = []
    for h in hops or []:
        if isinstance(h, dict):
            out.append((h.get("ttl"), h.get("ip"), h.get("mtu")))
        elif isinstance(h, (tuple, list)) and len(h) == 3:
            out.append(tuple(h))
    return out


def _locate(p, target, host_mtu):
    """What limits one failing path: ("host", (host, interface MTU)) for an end host's own MTU,
    ("hop", (kind, ip, ttl, mtu)) for a hop, or None when nothing says."""
    row = p.row
    if p.local_mtu is not None and p.local_mtu < target and not p.blackhole:
        return "host", (p.source, p.local_mtu)     # the source host is not configured
    if p.blackhole and row.blackhole_ip:
        return "hop", ("blackhole", row.blackhole_ip, row.blackhole_ttl, None)
    if "out" not in p.failing:
        return None
    hops_list = hop_tuples(row.hops)
    for ttl, ip, hmtu in hops_list:
        if hmtu is not None and hmtu < target and ip not in (None, row.source_ip, row.dest_ip):
            return "hop", ("mtu", ip, ttl, hmtu)
    for _ttl, ip, hmtu in hops_list:
        if ip == row.dest_ip and hmtu is not None and hmtu < target:
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
                                          "mtu": None, "sites": set(), "examples": []})
        entry["paths"] += 1
        if kind == "blackhole":
            entry["blackholes"] += 1
        elif mtu is not None:
            entry["mtu"] = mtu if entry["mtu"] is None else min(entry["mtu"], mtu)
        entry["sites"].update((p.source_site, p.dest_site))
        if len(entry["examples"]) < 3:
            entry["examples"].append(p.label())
    out = []
    for e in hops.values():
        if e["paths"] >= minimum:
            e["sites"] = sorted(e["sites"])
            out.append(e)
    out.sort(key=lambda e: (-e["paths"], e["hop_ip"]))
    return out, host_limited


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
