"""The jumbo-throughput test's result and its parts: each throughput leg (`Leg`), the legs'
summary (`Throughput`: what a pmtu result archived before the split carries under
`throughput`, and what the pair result carries at its top level), and `PairResult`."""

from .members import HEAD, INT_OR_NULL, NUMBER_OR_NULL, STRING_OR_NULL, Field, Members, keys
from .members import parts, slots

SCHEMA = 1
# What the path-MTU step contributes to a pair result, from the forward measurement.
PATH_FIELDS = ("path-mtu", "local-mtu", "pmtud", "dest-ip", "source-ip", "ip-version")
# Verdicts that are a measurement (a black hole, a skipped jumbo leg, or jumbo legs the
# receiver's MSS kept small are one).
SUCCESS_VERDICTS = ("jumbo-faster", "jumbo-slower", "no-difference", "blackhole", "skipped",
                    "mss-capped")


class Leg(Members):
    """One iperf3 leg at one size (jumbo.core.schema.THROUGHPUT_RUN)."""

    FIELDS = (Field("order", {"type": "integer", "minimum": 0}, required=True),
              Field("mtu", {"type": "integer"}, required=True),
              Field("mss", {"type": "integer"}, required=True),
              Field("direction", {"type": "string", "enum": ["forward", "reverse"]}),
              Field("succeeded", {"type": "boolean"}),
              Field("throughput", NUMBER_OR_NULL, required=True),
              Field("retransmits", INT_OR_NULL),
              # The kernel's sending MSS and path MTU for the flow: the proof the leg ran at
              # its size.
              Field("observed-mss", INT_OR_NULL), Field("pmtu", INT_OR_NULL),
              Field("stalled", {"type": "boolean"}), Field("error", STRING_OR_NULL)) + tuple(
        # Beyond the schema's names: the leg's place in the plan and iperf3's figures.
        Field(key) for key in ("round", "size", "cpu-sender", "cpu-receiver", "rtt", "max-rtt",
                               "bytes"))
    KEYS = keys(FIELDS)
    __slots__ = slots(KEYS)


class Throughput(Members):
    """The paired legs' outcome (jumbo.core.schema.THROUGHPUT_RESULT, and what the legs add:
    the Mathis ceilings, notes, per-direction summaries, the phase's error)."""

    LEG_FIELDS = (
        Field("runs", {"type": "array", "items": Leg}, required=True, part=[Leg]),
        Field("standard", {"type": ["object", "null"]}),
        Field("jumbo", {"type": ["object", "null"]}),
        Field("gain", NUMBER_OR_NULL), Field("gain-noise", NUMBER_OR_NULL),
        Field("verdict", {"type": "string", "enum": ["jumbo-faster", "jumbo-slower",
                                                     "no-difference", "blackhole", "skipped",
                                                     "mss-capped", "failed"]}),
        Field("skipped", STRING_OR_NULL), Field("jumbo-mtu", INT_OR_NULL))
    FIELDS = LEG_FIELDS + tuple(Field(key) for key in ("mathis", "notes", "by-direction",
                                                       "error", "server"))
    KEYS = keys(FIELDS)
    # `open_notes`, not a JSON member: what a peer can do when the legs do not authenticate
    # (the source's diags say it; absent when they do).
    __slots__ = slots(KEYS, "open_notes")
    PARTS = parts(FIELDS)

    @classmethod
    def failed(cls, error):
        """The legs did not run (no peer, a phase that broke): why."""
        return cls(runs=[], verdict="failed", skipped=None, error=error)


class PairResult(Members):
    """The jumbo-throughput test's result (jumbo.core.schema.PAIR_RESULT_V1)."""

    FIELDS = HEAD + (
        Field("dest-ip", STRING_OR_NULL), Field("source-ip", STRING_OR_NULL),
        Field("ip-version", {"anyOf": [{"$ref": "#/definitions/ip-version"}, {"type": "null"}]}),
        Field("path-mtu", INT_OR_NULL), Field("local-mtu", INT_OR_NULL),
        Field("pmtud", {"$ref": "#/definitions/pmtud"}),
        # Why the path MTU is unknown (the jumbo leg then relies on the stall check).
        Field("path-mtu-error", STRING_OR_NULL),
        Field("mathis", {"type": ["object", "null"]}),
        Field("notes", {"type": "array", "items": {"type": "string"}}),
        Field("server", {"type": ["object", "null"]}),
    ) + tuple(field.requiring(field.key in ("runs", "verdict")) for field in Throughput.LEG_FIELDS
              ) + (
        # Beyond the schema's names: a both-ways run's figures per direction.
        Field("by-direction"),)
    KEYS = keys(FIELDS)
    __slots__ = slots(KEYS)
    PARTS = parts(FIELDS)
    DEFAULTS = {"schema": SCHEMA, "succeeded": False, "error": None, "diags": "",
                "path-mtu": None, "pmtud": "unknown", "path-mtu-error": None, "runs": [],
                "standard": None, "jumbo": None, "gain": None, "gain-noise": None,
                "mathis": None, "verdict": "failed", "skipped": None, "jumbo-mtu": None,
                "notes": []}
    # The legs' members a pair result carries at its top level.
    LEG_MEMBERS = ("runs", "standard", "jumbo", "gain", "gain-noise", "mathis", "verdict",
                   "skipped", "jumbo-mtu", "notes", "by-direction")

    @classmethod
    def failed(cls, error, diags=""):
        """A result that says why there is no measurement."""
        return cls(error=error, diags=diags)

    def first_leg_error(self):
        for leg in self.runs or []:
            if isinstance(leg, Leg) and leg.error:
                return "leg %s: %s" % (leg.order, leg.error)
        return None
