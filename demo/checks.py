"""The demo's self-check: every measurement and the report's headline against the lab's truth."""

from . import mesh


class Check(object):
    def __init__(self, what, ok, detail=""):
        self.what = what
        self.ok = ok
        self.detail = detail


def measurement(topology, source, dest, result, spec):
    """Checks of one merged result against the truth of source -> dest: a list of Check."""
    truth = mesh.expected(topology, source, dest, spec.get("target-mtu", mesh.TARGET_MTU))
    checks = []
    label = "%s -> %s" % (source, dest)
    if not isinstance(result, dict) or not result.get("succeeded"):
        error = result.get("error") if isinstance(result, dict) else "no result"
        return [Check(label, False, "measurement failed: %s" % error)]
    got = result.get("path-mtu")
    checks.append(Check(label + " path-mtu", got == truth["path-mtu"],
                        "measured %s, truth %s" % (got, truth["path-mtu"])))
    got = result.get("pmtud")
    checks.append(Check(label + " pmtud", got == truth["pmtud"],
                        "measured %s, truth %s" % (got, truth["pmtud"])))
    flows = result.get("flows") or []
    if flows:
        # Every flow follows one ECMP member: it must report one of the members' MTUs.
        bad = [f.get("path-mtu") for f in flows
               if f.get("path-mtu") is not None and f.get("path-mtu") not in truth["member-mtus"]]
        checks.append(Check(label + " flows", not bad,
                            "per-flow MTUs %s, members %s" % (
                                sorted(set(f.get("path-mtu") for f in flows
                                           if f.get("path-mtu") is not None)),
                                truth["member-mtus"])))
    hole = result.get("blackhole")
    if truth["pmtud"] == "blackhole" and result.get("pmtud") == "blackhole":
        # Where big packets vanish: the hop (TTL) of the router that drops them silently,
        # named by one of its addresses. Every black hole found must be located, partial
        # ones included (the lab's routers answer TTL-limited probes).
        hole = hole if isinstance(hole, dict) else {}
        router = mesh.node_of(topology, hole.get("ip")) if hole.get("ip") else None
        good = hole.get("ttl") == truth["blackhole-ttl"] and \
            router == truth["blackhole-router"]
        checks.append(Check(label + " blackhole hop", good,
                            "measured hop %s (%s, lab node %s), truth hop %s (%s)" % (
                                hole.get("ttl"), hole.get("ip"), router,
                                truth["blackhole-ttl"], truth["blackhole-router"])))
    if spec.get("reverse"):
        back = mesh.expected(topology, dest, source, spec.get("target-mtu", mesh.TARGET_MTU))
        got = result.get("reverse-path-mtu")
        checks.append(Check(label + " reverse-path-mtu", got == back["path-mtu"],
                            "measured %s, truth %s" % (got, back["path-mtu"])))
        if "reverse-pmtud" in result:
            got = result.get("reverse-pmtud")
            checks.append(Check(label + " reverse-pmtud", got == back["pmtud"],
                                "measured %s, truth %s" % (got, back["pmtud"])))
        flows = [f for f in result.get("reverse-flows") or [] if isinstance(f, dict)]
        mtus = sorted(set(f.get("path-mtu") for f in flows if f.get("path-mtu") is not None))
        if mtus:
            checks.append(Check(label + " reverse flows", set(mtus) <= set(back["member-mtus"]),
                                "per-flow MTUs %s, members %s" % (mtus, back["member-mtus"])))
    return checks


def headline_truth(topology, measured, target_mtu=mesh.TARGET_MTU):
    """What the report must say about the measured pairs, from the truth alone.

    `measured`: [(source, dest, reverse_measured)]. A path is jumbo-capable when it carries
    the target size with no black hole in its own direction and in the reverse one, as far
    as the measurements show the reverse (the far end's reflector, or the reverse pair's own
    result); a path whose reverse direction nobody measured is never capable (the report's
    `jumbo-one-way`)."""
    def truth(s, d):
        return mesh.expected(topology, s, d, target_mtu)

    done = set((s, d) for s, d, _ in measured)
    capable = 0
    capable_pairs = set()
    for source, dest, reverse in measured:
        forward = truth(source, dest)
        ok = forward["jumbo"] and forward["pmtud"] != "blackhole"
        if reverse or (dest, source) in done:
            back = truth(dest, source)
            ok = ok and back["jumbo"] and back["pmtud"] != "blackhole"
        else:
            ok = False
        capable += bool(ok)
        if ok:
            capable_pairs.add((source, dest))
    holes = sorted((s, d) for s, d, _ in measured if truth(s, d)["pmtud"] == "blackhole")
    paths = len(measured)
    sources = sorted(set(s for s, _, _ in measured))
    jumbo_hosts = [s for s in sources if topology.local_mtu(s) >= target_mtu]
    volume = sum(mesh.volume_tb(s, d) for s, d in done)
    used = sum(mesh.volume_tb(s, d) for s, d in capable_pairs)
    return {"paths": paths, "capable-paths": capable,
            "used": (used / float(volume)) if volume else None,
            "used-tb": used, "volume-tb": volume,
            "hosts": len(sources), "configured-hosts": len(jumbo_hosts),
            "configured": (len(jumbo_hosts) / float(len(sources))) if sources else None,
            "capable": (capable / float(paths)) if paths else None,
            "blackholes": holes, "capable_pairs": sorted(capable_pairs)}


def pair_measurement(topology, source, dest, rec, standard_mtu=1500):
    """Checks of one jumbo-throughput record of source -> dest (the archive's fields:
    jumbo.archive.record) against the lab's truth: it succeeded; the path MTU it measured
    first is the MTU of one of the path's ECMP members; and it measured a gain unless the lab
    makes one impossible: a path at the standard MTU (its jumbo legs are skipped), or a dest
    whose own way back to the source is smaller than the path (its SYN-ACK may then advertise
    the MSS of that way back: the verdict mss-capped, where Linux has learnt it)."""
    label = "jumbo-throughput IPv%s %s -> %s" % (rec.get("ip_version"), source, dest)
    if not rec.get("succeeded"):
        return [Check(label, False, "failed: %s" % rec.get("error"))]
    truth = mesh.expected(topology, source, dest)
    got = rec.get("path_mtu")
    checks = [Check(label + " path-mtu", got in truth["member-mtus"],
                    "measured %s, ECMP members' MTUs %s" % (got, truth["member-mtus"]))]
    gain = rec.get("gain")
    if got is not None and got <= standard_mtu:
        checks.append(Check(label + " skipped", gain is None,
                            "a gain (%s) on a path at %s" % (gain, got)))
    elif truth["reverse-path-mtu"] >= (got or 0):
        checks.append(Check(label + " gain", gain is not None,
                            "no gain on a path at %s whose way back is %s" % (
                                got, truth["reverse-path-mtu"])))
    return checks
