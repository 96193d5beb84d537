"""The pmtu test's result and its parts: a hop of the path, a packet-too-big message, the
located black hole, one measured flow, the reverse phase's outcome, and `PmtuResult` (jumbo.
core.schema.RESULT_V1; tests/test_core_result.py checks the members against it)."""

from ..mtu import DEFAULT_TARGET_MTU
from .members import HEAD, INT_OR_NULL, STRING_OR_NULL, Field, Members, keys, parts, slots
from .pair import Throughput

SCHEMA = 1
PMTUD = {"$ref": "#/definitions/pmtud"}
DURATION_OR_NULL = {"anyOf": [{"$ref": "#/definitions/duration"}, {"type": "null"}]}

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

    FIELDS = (Field("ttl", {"type": "integer", "minimum": 1, "maximum": 255}, required=True),
              Field("ip", STRING_OR_NULL, required=True),
              Field("mtu", INT_OR_NULL, required=True),
              Field("rtt", DURATION_OR_NULL))
    KEYS = keys(FIELDS)
    __slots__ = slots(KEYS)


class Ptb(Members):
    """A packet-too-big message heard (its sender is the JSON member `from`)."""

    FIELDS = (Field("from", STRING_OR_NULL), Field("mtu", INT_OR_NULL), Field("size", INT_OR_NULL),
              Field("useful", {"type": "boolean"}),
              Field("count", {"type": "integer", "minimum": 0}))
    KEYS = keys(FIELDS)
    __slots__ = slots(KEYS)

    @classmethod
    def received(cls, entry):
        """A PTB the dest's reflector reported (JSON from the peer): every member filled."""
        entry = entry if isinstance(entry, dict) else {}
        return cls(sender=entry.get("from"), mtu=entry.get("mtu"), size=entry.get("size"),
                   useful=bool(entry.get("useful")), count=entry.get("count") or 1)


class Blackhole(Members):
    """Where big packets vanish without a PTB: the last hop that answered, and the size."""

    FIELDS = (Field("ttl", INT_OR_NULL), Field("ip", STRING_OR_NULL), Field("size", INT_OR_NULL))
    KEYS = keys(FIELDS)
    __slots__ = slots(KEYS)
    JSON_TYPE = ["object", "null"]


class Flow(Members):
    """One flow's search: its path MTU (None when unconfirmed), its verdict, its 5-tuple."""

    FIELDS = (Field("flow", {"type": "integer", "minimum": 0}),
              Field("source-port", INT_OR_NULL), Field("flow-label", INT_OR_NULL),
              Field("path-mtu", INT_OR_NULL, required=True), Field("pmtud", PMTUD, required=True))
    KEYS = keys(FIELDS)
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

    FIELDS = HEAD + (
        Field("path-mtu", INT_OR_NULL),
        Field("local-mtu", INT_OR_NULL),
        Field("target-mtu", INT_OR_NULL),
        Field("jumbo", {"type": ["boolean", "null"]}),
        Field("pmtud", PMTUD),
        Field("blackhole", Blackhole, part=Blackhole),
        # Which forward probes answered: ICMP echo, UDP to a closed port (the dest's ICMP
        # port unreachable), or the dest participant's reflector.
        Field("method", {"enum": ["icmp-echo", "udp", "reflector", None]}),
        Field("ip-version", {"$ref": "#/definitions/ip-version"}),
        Field("dest-ip", STRING_OR_NULL),
        # The address the run measured from (the spec's source, else the kernel's choice).
        Field("source-ip", STRING_OR_NULL),
        Field("elapsed", {"type": "number", "minimum": 0}),
        # The fastest round trip of a forward probe that reached the dest.
        Field("rtt", DURATION_OR_NULL),
        Field("hops", {"type": "array", "items": Hop}, part=[Hop]),
        Field("flows", {"type": "array", "items": Flow}, part=[Flow]),
        # Flows of the spec the run had no time to measure (single-ended: the dest's ICMP
        # rate limit); they are not in `flows` and count neither way.
        Field("flows-not-measured", {"type": "integer", "minimum": 0}),
        Field("ptb", {"type": "array", "items": Ptb}, part=[Ptb]),
        Field("reverse-path-mtu", INT_OR_NULL),
        # The reverse path (dest -> source), measured with the dest participant's reflector.
        Field("reverse-pmtud", {"anyOf": [PMTUD, {"type": "null"}]}),
        Field("reverse-local-mtu", INT_OR_NULL),
        Field("reverse-ptb", {"type": "array", "items": Ptb}, part=[Ptb]),
        Field("reverse-error", STRING_OR_NULL),
        Field("reverse-flows", {"type": "array", "items": Flow}, part=[Flow]),
        Field("probes", {"type": "integer", "minimum": 0}),
        # The reverse phase's details (rtt, elapsed, probes, rounds, reflector, notes, ...).
        Field("reverse", {"type": "object"}),
        # Results archived before jumbo-throughput split off carry the paired legs here.
        Field("throughput", {"anyOf": [Throughput, {"type": "null"}]}, part=Throughput))
    KEYS = keys(FIELDS)
    __slots__ = slots(KEYS)
    PARTS = parts(FIELDS)
    # Complete: a member this schema does not name is a defect, not something to drop.
    # pScheduler's private members ("_token", ...) are the exception; they are never shown.
    SCHEMA_EXTRA = {"patternProperties": {"^_": {}}, "additionalProperties": False}
    DEFAULTS = {"schema": SCHEMA, "succeeded": False, "error": None, "diags": "",
                "path-mtu": None, "local-mtu": None, "target-mtu": DEFAULT_TARGET_MTU,
                "jumbo": None, "pmtud": "unknown", "blackhole": None, "hops": [], "flows": [],
                "flows-not-measured": 0, "ptb": [], "probes": 0, "reverse-path-mtu": None,
                "throughput": None}

    @classmethod
    def failed(cls, error, target_mtu=DEFAULT_TARGET_MTU, diags=""):
        """A result that says why there is no measurement."""
        return cls(error=error, target_mtu=target_mtu, diags=diags or "")
