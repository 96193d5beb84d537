"""Where failing paths fail: the hops several failing paths share (a size drop or a black
hole), and how many failures are the source host's own MTU rather than the network's."""

import json


def _hops(hops):
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


def shared_culprits(paths, target, minimum):
    """Hops shared by several failing paths: where the size drops or big packets vanish."""
    hops = {}
    host_limited = 0
    for p in paths:
        if p.capable or not p.succeeded and not p.blackhole:
            continue
        row = p.row
        if p.local_mtu is not None and p.local_mtu < target and not p.blackhole:
            host_limited += 1   # the source host itself is not configured: not a network hop
            continue
        culprit = None
        kind = None
        if p.blackhole and row.blackhole_ip:
            culprit, kind, mtu = row.blackhole_ip, "blackhole", None
        elif "out" in p.failing:
            hops_list = _hops(row.hops)
            for _ttl, ip, hmtu in hops_list:
                if hmtu is not None and hmtu < target and ip not in (None, row.source_ip, row.dest_ip):
                    culprit, kind, mtu = ip, "mtu", hmtu
                    break
            if culprit is None:
                dest_limited = any(ip == row.dest_ip and hmtu is not None and hmtu < target
                                   for _ttl, ip, hmtu in hops_list)
                if dest_limited:
                    host_limited += 1
        if culprit is None:
            continue
        entry = hops.setdefault(culprit, {"hop_ip": culprit, "paths": 0, "blackholes": 0,
                                          "mtu": None, "sites": set(), "examples": []})
        entry["paths"] += 1
        if kind == "blackhole":
            entry["blackholes"] += 1
        elif mtu is not None:
            entry["mtu"] = mtu if entry["mtu"] is None else min(entry["mtu"], mtu)
        entry["sites"].update((p.source_site, p.dest_site))
        if len(entry["examples"]) < 3:
            entry["examples"].append("%s -> %s" % (p.source, p.dest))
    out = []
    for e in hops.values():
        if e["paths"] >= minimum:
            e["sites"] = sorted(e["sites"])
            out.append(e)
    out.sort(key=lambda e: (-e["paths"], e["hop_ip"]))
    return out, host_limited
