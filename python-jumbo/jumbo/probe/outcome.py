"""The forward measurement's answer as one object: the path MTU from the confirmed flows
only, the PMTUD verdict folded from the flows' verdicts, the located black hole, and the
`jumbo` verdict (core.mtu.is_jumbo, the suite's one rule). `as_json()` is the shape the test
result carries (the pmtu test's forward fields)."""

from ..core.mtu import is_jumbo

SCHEMA = 1
# A run's verdict is its worst flow's: a black hole on any flow, then undecided, then PTBs
# that worked, else none were needed.
PMTUD_ORDER = ("blackhole", "unknown", "ok")


def fold_pmtud(verdicts):
    """The run's PMTUD verdict from its flows' verdicts."""
    for verdict in PMTUD_ORDER:
        if verdict in verdicts:
            return verdict
    return "not-needed"


def flow_entries(flows):
    """One entry per measured flow (its index, the path MTU it confirmed or None, its
    verdict, its 5-tuple's fields); and the run's path MTU: the smallest confirmed one.
    An unconfirmed search has a proven lower bound, not a path MTU."""
    entries, confirmed = [], []
    for index, flow in enumerate(flows):
        done = flow.search.done()
        entry = {"flow": index, "path-mtu": flow.search.result() if done else None,
                 "pmtud": flow.search.verdict()}
        entry.update(flow.transport.flow_info(flow.tflow))
        entries.append(entry)
        if done:
            confirmed.append(flow.search.result())
    return entries, (min(confirmed) if confirmed else None)


def distinct_ptbs(ptbs):
    """The PTBs the run heard, each (sender, MTU, useful) once, in the order heard."""
    out = []
    for entry in ptbs:
        item = {"from": entry["from"], "mtu": entry["mtu"], "useful": entry["useful"]}
        if item not in out:
            out.append(item)
    return out


class PathResult(object):
    """A forward measurement that ran (an error is a ProbeError instead)."""

    __slots__ = ("path_mtu", "local_mtu", "target_mtu", "pmtud", "blackhole", "method",
                 "ip_version", "dest_ip", "source_ip", "hops", "flows", "flows_not_measured",
                 "probes", "elapsed", "ptb", "diags")

    def __init__(self, **fields):
        unknown = sorted(set(fields) - set(self.__slots__))
        if unknown:
            raise TypeError("PathResult has no field %s" % ", ".join(unknown))
        for name in self.__slots__:
            setattr(self, name, fields.get(name))

    @property
    def jumbo(self):
        return is_jumbo(self.path_mtu, self.target_mtu, self.pmtud)

    def as_json(self):
        return {
            "schema": SCHEMA,
            "succeeded": True,
            "error": None,
            "diags": "; ".join(self.diags or []) or None,
            "path-mtu": self.path_mtu,
            "local-mtu": self.local_mtu,
            "target-mtu": self.target_mtu,
            "jumbo": self.jumbo,
            "pmtud": self.pmtud,
            "blackhole": self.blackhole,
            "method": self.method,
            "ip-version": self.ip_version,
            "dest-ip": self.dest_ip,
            "source-ip": self.source_ip,
            "hops": self.hops,
            "flows": self.flows,
            "flows-not-measured": self.flows_not_measured,
            "probes": self.probes,
            "elapsed": self.elapsed,
            "ptb": self.ptb,
        }
