"""The run's spec as typed objects, made once from the JSON with every default filled here.

A `pmtu` spec, or the internal spec of a `jumbo-throughput` run (jumbo.core.spec.pair), becomes
a RunSpec; its `throughput` is a ThroughputSpec or None. Each object keeps the filled JSON
(`as_json()`: what with_defaults returns) and reads its fields from it once. `max-mtu` and
`min-mtu` have no default: the engine takes the egress interface MTU and the family's minimum.
"""

import copy

from .. import mtu as mtus
from .. import schema as schemas
from ..units import duration_seconds

# Distinct flows probed by default (ECMP paths): one home for the number.
DEFAULT_FLOWS = 4

DEFAULTS = {
    "target-mtu": mtus.DEFAULT_TARGET_MTU,
    "flows": DEFAULT_FLOWS,
    "hops": False,
    "reverse": False,
    # Forward probes through the dest node's reflector (the dest takes part): answers cost
    # the dest no ICMP budget, so many flows are affordable (the mesh template asks for it).
    "reflector": False,
    # Upper bound on the wait for any one probe's answer.
    "timeout": "PT1S",
}

THROUGHPUT_DEFAULTS = {
    "duration": "PT10S",
    "omit": "PT2S",
    # One ABBA round is four runs: 1500, 9000, 9000, 1500.
    "rounds": 1,
    "parallel": 1,
    "direction": "forward",
    "order": "abba",
}

def filled(spec, defaults):
    """A deep copy of `spec` (a dict, else {}) with `schema` and `defaults` filled in."""
    full = copy.deepcopy(spec) if isinstance(spec, dict) else {}
    full.setdefault("schema", 1)
    for key, value in defaults.items():
        full.setdefault(key, value)
    return full


def with_defaults(spec):
    """A deep copy of `spec` with every default filled in.

    A present `throughput` object (only in the tool's internal spec of a jumbo-throughput
    run) gets its own defaults; an absent one stays absent (no throughput phase)."""
    full = filled(spec, DEFAULTS)
    if isinstance(full.get("throughput"), dict):
        for key, value in THROUGHPUT_DEFAULTS.items():
            full["throughput"].setdefault(key, value)
    return full


class _Filled(object):
    """Common to the typed specs: the filled JSON they were made from (as_json), read by
    attribute only."""

    __slots__ = ("_json",)

    def as_json(self):
        """The filled spec as a dict (a copy: the caller may change it)."""
        return copy.deepcopy(self._json)

    def __eq__(self, other):
        return type(other) is type(self) and other._json == self._json

    def __ne__(self, other):
        return not self == other

    __hash__ = None

    def __repr__(self):
        return "%s(%r)" % (type(self).__name__, self._json)


class ThroughputSpec(_Filled):
    """The throughput legs' settings, defaults filled, durations in seconds. Raises
    ValueError when a duration cannot be read."""

    __slots__ = ("duration", "omit", "rounds", "parallel", "direction", "order", "congestion",
                 "fq_rate", "port", "seconds", "omit_seconds")

    def __init__(self, phase):
        full = dict(THROUGHPUT_DEFAULTS)
        full.update(phase or {})
        self._json = full
        self.duration = full["duration"]
        self.omit = full.get("omit")
        self.rounds = int(full["rounds"])
        self.parallel = int(full["parallel"])
        self.direction = full["direction"]
        self.order = full["order"]
        self.congestion = full.get("congestion")
        self.fq_rate = full.get("fq-rate")
        self.port = full.get("port")
        self.seconds = duration_seconds(full["duration"])
        self.omit_seconds = duration_seconds(full.get("omit") or "PT0S")

    def directions(self):
        """The legs' directions: both, or the one asked for."""
        if self.direction == "both":
            return ["forward", "reverse"]
        return [self.direction]

    def pattern(self):
        """Sizes per round: ABBA (standard, jumbo, jumbo, standard) or AB."""
        if self.order == "ab":
            return ["standard", "jumbo"]
        return ["standard", "jumbo", "jumbo", "standard"]

    def leg_count(self):
        return self.rounds * len(self.pattern()) * len(self.directions())


class RunSpec(_Filled):
    """A pmtu spec (or the internal spec of a jumbo-throughput run) with its defaults filled.

    Fields by JSON name with `_` for `-`: dest, source, dest_node, source_node, ip_version
    (None when not given), target_mtu, max_mtu, min_mtu (None when not given), flows, hops,
    reverse, reflector, timeout (the duration text); throughput: a ThroughputSpec or None."""

    __slots__ = ("schema", "dest", "source", "dest_node", "source_node", "ip_version",
                 "target_mtu", "max_mtu", "min_mtu", "flows", "hops", "reverse", "reflector",
                 "timeout", "throughput")

    def __init__(self, spec):
        full = with_defaults(spec)
        self._json = full
        self.schema = full["schema"]
        self.dest = full.get("dest")
        self.source = full.get("source")
        self.dest_node = full.get("dest-node")
        self.source_node = full.get("source-node")
        self.ip_version = full.get("ip-version")
        self.target_mtu = full["target-mtu"]
        self.max_mtu = full.get("max-mtu")
        self.min_mtu = full.get("min-mtu")
        self.flows = full["flows"]
        self.hops = full["hops"]
        self.reverse = full["reverse"]
        self.reflector = full["reflector"]
        self.timeout = full["timeout"]
        phase = full.get("throughput")
        self.throughput = ThroughputSpec(phase) if isinstance(phase, dict) else None

    @property
    def timeout_seconds(self):
        """The wait for one probe's answer, in seconds (ValueError when unreadable)."""
        return duration_seconds(self.timeout or DEFAULTS["timeout"])

    @property
    def needs_dest(self):
        """Whether the dest node runs the tool too (jumbo.core.schema's one rule)."""
        return schemas.needs_dest_participant(self._json)


def run_spec(spec):
    """`spec` as a RunSpec (a RunSpec is returned as it is)."""
    return spec if isinstance(spec, RunSpec) else RunSpec(spec)
