"""The pmtu test's result and its parts: a hop of the path, a packet-too-big message, the
located black hole, one measured flow, the reverse phase's outcome, and `PmtuResult` (jumbo.
core.schema.RESULT_V1; tests/test_core_result.py checks the members against it)."""

from ..mtu import DEFAULT_TARGET_MTU
from .members import Members, slots
from .pair import Throughput

SCHEMA = 1
# The PMTUD verdicts, worst first: a run's (and a direction's) verdict is its worst flow's.
PMTUD_ORDER = ("blackhole", "unknown", "ok", "not-needed")


def fold_pmtud(verdicts):
    """The verdict over flows' verdicts ("not-needed" when none was needed or none given)."""
    for verdict in PMTUD_ORDER:
        if verdict in verdicts:
            return verdict
    return "not-needed"


class Hop(Members):
    """One hop of the path as the TTL scan saw it."""

    KEYS = ("ttl", "ip", "mtu", "rtt")
    __slots__ = slots(KEYS)


class Ptb(Members):
    """A packet-too-big message heard (its sender is the JSON member `from`)."""

    KEYS = ("from", "mtu", "size", "useful", "count")
    __slots__ = slots(KEYS)

    @classmethod
    def received(cls, entry):
        """A PTB the dest's reflector reported (JSON from the peer): every member filled."""
        entry = entry if isinstance(entry, dict) else {}
        return cls(sender=entry.get("from"), mtu=entry.get("mtu"), size=entry.get("size"),
                   useful=bool(entry.get("useful")), count=entry.get("count") or 1)


class Blackhole(Members):
    """Where big packets vanish without a PTB: the last hop that answered, and the size."""

    KEYS = ("ttl", "ip", "size")
    __slots__ = slots(KEYS)


class Flow(Members):
    """One flow's search: its path MTU (None when unconfirmed), its verdict, its 5-tuple."""

    KEYS = ("flow", "source-port", "flow-label", "path-mtu", "pmtud")
    __slots__ = slots(KEYS)


class Reverse(object):
    """The reverse path (dest -> source) as the source measured it against the dest's
    reflector (jumbo.tool.reverse), or why it was not measured. `dest_report` is the dest's
    STATUS answer (JSON from the peer) when it came back."""

    __slots__ = ("path_mtu", "pmtud", "local_mtu", "ptb", "flows", "probes", "elapsed", "rtt",
                 "rounds", "error", "notes", "pending", "reflector", "dest_report")
    # The phase's details the result keeps under `reverse`, when known.
    DETAIL = ("rtt", "elapsed", "probes", "rounds", "reflector", "notes", "pending")

    def __init__(self, error=None, reflector=None):
        self.path_mtu, self.pmtud, self.local_mtu = None, "unknown", None
        self.ptb, self.flows = [], []
        self.probes = self.elapsed = self.rtt = self.rounds = self.notes = self.pending = None
        self.error, self.reflector, self.dest_report = error, reflector, None

    @classmethod
    def not_measured(cls, error):
        return cls(error=error)

    @classmethod
    def started(cls, reflector):
        """A search about to run against the reflector at `reflector` ("address:port")."""
        reverse = cls(reflector=reflector)
        reverse.probes, reverse.elapsed, reverse.notes = 0, 0.0, []
        return reverse

    def note(self, text):
        if text not in self.notes:
            self.notes.append(text)

    def fold_into(self, result):
        """Write this outcome into a PmtuResult's reverse members."""
        result.reverse_path_mtu = self.path_mtu
        result.reverse_pmtud = self.pmtud or "unknown"
        result.reverse_local_mtu = self.local_mtu
        result.reverse_ptb = [Ptb.received(p.as_json() if isinstance(p, Ptb) else p)
                              for p in self.ptb or []]
        result.reverse_error = self.error
        result.reverse_flows = [Flow(flow=f.flow, source_port=f.source_port, flow_label=None,
                                     path_mtu=f.path_mtu, pmtud=f.pmtud or "unknown")
                                for f in self.flows or []]
        if self.probes:
            result.probes = int(result.probes or 0) + int(self.probes)
        result.reverse = {key: getattr(self, key) for key in self.DETAIL
                          if getattr(self, key) is not None}


class PmtuResult(Members):
    """The pmtu test's result (jumbo.core.schema.RESULT_V1)."""

    KEYS = ("schema", "succeeded", "error", "diags", "path-mtu", "local-mtu", "target-mtu",
            "jumbo", "pmtud", "blackhole", "method", "ip-version", "dest-ip", "source-ip",
            "elapsed", "rtt", "hops", "flows", "flows-not-measured", "ptb", "reverse-path-mtu",
            "reverse-pmtud", "reverse-local-mtu", "reverse-ptb", "reverse-error",
            "reverse-flows", "probes", "reverse", "throughput")
    __slots__ = slots(KEYS)
    PARTS = {"blackhole": Blackhole, "hops": [Hop], "flows": [Flow], "ptb": [Ptb],
             "reverse-ptb": [Ptb], "reverse-flows": [Flow], "throughput": Throughput}
    DEFAULTS = {"schema": SCHEMA, "succeeded": False, "error": None, "diags": "",
                "path-mtu": None, "local-mtu": None, "target-mtu": DEFAULT_TARGET_MTU,
                "jumbo": None, "pmtud": "unknown", "blackhole": None, "hops": [], "flows": [],
                "flows-not-measured": 0, "ptb": [], "probes": 0, "reverse-path-mtu": None,
                "throughput": None}

    @classmethod
    def failed(cls, error, target_mtu=DEFAULT_TARGET_MTU, diags=""):
        """A result that says why there is no measurement."""
        return cls(error=error, target_mtu=target_mtu, diags=diags or "")
