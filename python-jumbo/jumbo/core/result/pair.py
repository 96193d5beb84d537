"""The jumbo-throughput test's result and its parts: each throughput leg (`Leg`), the legs'
summary (`Throughput`: what a pmtu result archived before the split carries under
`throughput`, and what the pair result carries at its top level), and `PairResult`."""

from .members import Members, slots

SCHEMA = 1
# What the path-MTU step contributes to a pair result, from the forward measurement.
PATH_FIELDS = ("path-mtu", "local-mtu", "pmtud", "dest-ip", "source-ip", "ip-version")
# Verdicts that are a measurement (a black hole or a skipped jumbo leg is one).
SUCCESS_VERDICTS = ("jumbo-faster", "jumbo-slower", "no-difference", "blackhole", "skipped")


class Leg(Members):
    """One iperf3 leg at one size (jumbo.core.schema.THROUGHPUT_RUN)."""

    KEYS = ("order", "mtu", "mss", "direction", "succeeded", "throughput", "retransmits",
            "observed-mss", "pmtu", "stalled", "error",
            # Beyond the schema's names: the leg's place in the plan and iperf3's figures.
            "round", "size", "cpu-sender", "cpu-receiver", "rtt", "max-rtt", "bytes")
    __slots__ = slots(KEYS)


class Throughput(Members):
    """The paired legs' outcome (jumbo.core.schema.THROUGHPUT_RESULT, and what the legs add:
    the Mathis ceilings, notes, per-direction summaries, the phase's error)."""

    KEYS = ("runs", "standard", "jumbo", "gain", "gain-noise", "verdict", "skipped", "jumbo-mtu",
            "mathis", "notes", "by-direction", "error", "server")
    # `open_notes`, not a JSON member: what a peer can do when the legs do not authenticate
    # (the source's diags say it; absent when they do).
    __slots__ = slots(KEYS, "open_notes")
    PARTS = {"runs": [Leg]}

    @classmethod
    def failed(cls, error):
        """The legs did not run (no peer, a phase that broke): why."""
        return cls(runs=[], verdict="failed", skipped=None, error=error)


class PairResult(Members):
    """The jumbo-throughput test's result (jumbo.core.schema.PAIR_RESULT_V1)."""

    KEYS = ("schema", "succeeded", "error", "diags", "dest-ip", "source-ip", "ip-version",
            "path-mtu", "local-mtu", "pmtud", "path-mtu-error", "mathis", "notes", "server",
            "runs", "standard", "jumbo", "gain", "gain-noise", "verdict", "skipped", "jumbo-mtu",
            # Beyond the schema's names: a both-ways run's figures per direction.
            "by-direction")
    __slots__ = slots(KEYS)
    PARTS = {"runs": [Leg]}
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
