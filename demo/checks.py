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
    if spec.get("reverse"):
        got = result.get("reverse-path-mtu")
        checks.append(Check(label + " reverse-path-mtu", got == truth["reverse-path-mtu"],
                            "measured %s, truth %s" % (got, truth["reverse-path-mtu"])))
    return checks


def headline_truth(topology, measured_pairs, target_mtu=mesh.TARGET_MTU):
    """What the report must say about the pairs measured, from the truth alone."""
    paths = len(measured_pairs)
    capable = [p for p in measured_pairs
               if mesh.expected(topology, p[0], p[1], target_mtu)["jumbo"]
               and mesh.expected(topology, p[0], p[1], target_mtu)["pmtud"] != "blackhole"]
    holes = sorted(p for p in measured_pairs
                   if mesh.expected(topology, p[0], p[1], target_mtu)["pmtud"] == "blackhole")
    return {"paths": paths, "capable-paths": len(capable),
            "capable": (len(capable) / float(paths)) if paths else None,
            "blackholes": holes}
