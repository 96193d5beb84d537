"""The forward measurement's answer as one object: the path MTU from the confirmed flows
only, the PMTUD verdict folded from the flows' verdicts (core.result.fold_pmtud), the located
black hole, and the `jumbo` verdict (core.mtu.is_jumbo, the suite's one rule). Its parts are
jumbo.core.result's (Flow, Hop, Ptb, Blackhole). `as_json()` is the shape the test result
carries (the pmtu test's forward fields); the tool reads it by attribute."""

from ..core.mtu import is_jumbo
from ..core.result import Blackhole, Flow, Hop, Ptb
from ..core.result.members import to_json

SCHEMA = 1


def flow_entries(flows):
    """One Flow per measured flow (its index, the path MTU it confirmed or None, its
    verdict, its 5-tuple's fields); and the run's path MTU: the smallest confirmed one.
    An unconfirmed search has a proven lower bound, not a path MTU."""
    entries, confirmed = [], []
    for index, flow in enumerate(flows):
        done = flow.search.done()
        five = flow.transport.flow_info(flow.tflow)
        entries.append(Flow(flow=index, path_mtu=flow.search.result() if done else None,
                            pmtud=flow.search.verdict(), source_port=five["source-port"],
                            flow_label=five["flow-label"]))
        if done:
            confirmed.append(flow.search.result())
    return entries, (min(confirmed) if confirmed else None)


def distinct_ptbs(ptbs):
    """The PTBs the run heard, each (sender, MTU, useful) once, in the order heard."""
    out = []
    for entry in ptbs:
        item = Ptb(sender=entry["from"], mtu=entry["mtu"], useful=entry["useful"])
        if item not in out:
            out.append(item)
    return out


class PathResult(object):
    """A forward measurement that ran (an error is a ProbeError instead)."""

    __slots__ = ("path_mtu", "local_mtu", "target_mtu", "pmtud", "blackhole", "method",
                 "ip_version", "dest_ip", "source_ip", "hops", "flows", "flows_not_measured",
                 "probes", "elapsed", "rtt", "ptb", "diags")

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
            "blackhole": to_json(self.blackhole),
            "method": self.method,
            "ip-version": self.ip_version,
            "dest-ip": self.dest_ip,
            "source-ip": self.source_ip,
            "hops": to_json(self.hops),
            "flows": to_json(self.flows),
            "flows-not-measured": self.flows_not_measured,
            "probes": self.probes,
            "elapsed": self.elapsed,
            "rtt": self.rtt,
            "ptb": to_json(self.ptb),
        }

    @classmethod
    def from_json(cls, document):
        """A forward answer read back from its JSON (as_json's shape; `jumbo` is derived)."""
        fields = {name: document.get(name.replace("_", "-")) for name in cls.__slots__}
        diags = document.get("diags")
        fields["diags"] = [diags] if diags else []
        blackhole = document.get("blackhole")
        fields["blackhole"] = Blackhole.from_json(blackhole) if isinstance(blackhole, dict) \
            else blackhole
        for name, part in (("hops", Hop), ("flows", Flow), ("ptb", Ptb)):
            items = document.get(name)
            fields[name] = [part.from_json(i) if isinstance(i, dict) else i
                            for i in items] if isinstance(items, list) else items
        return cls(**fields)
