"""The `jumbo-throughput` spec: its defaults, its validation beyond the JSON schema, and the
pmtu-shaped internal spec the tool runs it as (one flow, no hops, no reverse, the legs in a
`throughput` object)."""

from .. import schema as schemas
from .. import validate as validation
from ..units import duration_seconds_or_none
from .checks import (THROUGHPUT_DURATION_MAX, THROUGHPUT_DURATION_MIN, THROUGHPUT_OMIT_MAX,
                     semantic_problem)
from .slot import PATH_MTU_BUDGET, phases, seconds, slot_problem
from .typed import DEFAULTS, THROUGHPUT_DEFAULTS, RunSpec, filled

# The legs' defaults and the wait for one path-MTU probe's answer.
PAIR_DEFAULTS = dict(THROUGHPUT_DEFAULTS, timeout=DEFAULTS["timeout"])

# The members that become the internal spec's `throughput` object, and those that stay
# top-level (the hosts and the probe timeout).
LEG_KEYS = tuple(sorted(schemas.DEFINITIONS["throughput-spec"]["properties"]))
HOST_KEYS = ("source", "source-node", "dest", "dest-node", "ip-version", "timeout")


def pair_with_defaults(spec):
    """A deep copy of a jumbo-throughput spec with every default filled in."""
    return filled(spec, PAIR_DEFAULTS)


def internal_spec(spec):
    """The spec the tool runs for a jumbo-throughput spec: pmtu-shaped (one flow, no hops, no
    reverse) with the legs in a `throughput` object."""
    internal = {"schema": 1, "flows": 1, "hops": False, "reverse": False,
                "throughput": dict((k, spec[k]) for k in LEG_KEYS if k in spec)}
    for key in HOST_KEYS:
        if key in spec:
            internal[key] = spec[key]
    return internal


def pair_shape_problem(spec):
    """Unknown or misplaced members of a jumbo-throughput spec, or a missing dest."""
    properties = schemas.PAIR_SPEC_VERSIONS[spec.get("schema", 1)]["properties"]
    for key in sorted(spec, key=str):
        if key == "throughput":
            return ("At /throughput: the legs' settings are top-level members of a %s spec "
                    "(duration, omit, rounds, ...), not a throughput object" % schemas.PAIR_TEST)
        if key in ("hops", "reverse", "flows", "target-mtu", "max-mtu", "min-mtu"):
            return ("At /%s: a pmtu setting; %s measures the path MTU with one flow only "
                    "(run the pmtu test for %s)" % (key, schemas.PAIR_TEST, key))
        if key not in properties:
            return "At /%s: unknown field (allowed: %s)" % (key, ", ".join(sorted(properties)))
    if "dest" not in spec:
        return "At /dest: required field is missing"
    return None


def pair_semantic_problem(spec):
    """Hosts, families and the probe timeout (the pmtu spec's own checks on those members),
    then the legs' durations."""
    problem = semantic_problem(dict((k, spec[k]) for k in HOST_KEYS if k in spec))
    if problem:
        return problem
    if "duration" in spec:
        seconds = duration_seconds_or_none(spec["duration"])
        if seconds is None or not THROUGHPUT_DURATION_MIN <= seconds <= THROUGHPUT_DURATION_MAX:
            return "At /duration: %s must be between PT%dS and PT%dS" % (
                spec["duration"], THROUGHPUT_DURATION_MIN, THROUGHPUT_DURATION_MAX)
    if "omit" in spec:
        seconds = duration_seconds_or_none(spec["omit"])
        if seconds is None or seconds > THROUGHPUT_OMIT_MAX:
            return "At /omit: %s must be between PT0S and PT%dS" % (
                spec["omit"], THROUGHPUT_OMIT_MAX)
    return None


def pair_slot_seconds(spec, path_mtu_bound):
    """The exclusive slot a valid jumbo-throughput spec reserves: its internal spec's phases
    (jumbo.core.spec.slot), `path_mtu_bound(run_spec)` the probe's bound for the path-MTU step
    (jumbo.probe.max_duration), capped at PATH_MTU_BUDGET."""
    internal = RunSpec(internal_spec(spec))
    return seconds(phases(internal, path_mtu_bound(internal), forward_cap=PATH_MTU_BUDGET))


def validate_pair(spec, path_mtu_bound=None):
    """Full validation of a jumbo-throughput spec: (True, None) or (False, "At /field: ...").
    With `path_mtu_bound` (jumbo.probe.max_duration) the last check is the slot rule: the
    exclusive slot the run reserves against the node's limit (jumbo.core.spec.slot)."""
    def semantic(spec):
        problem = pair_semantic_problem(spec)
        if problem is None and path_mtu_bound is not None:
            problem = slot_problem(pair_slot_seconds(spec, path_mtu_bound))
        return problem

    return validation.validate_spec(spec, schemas.MAX_PAIR_SPEC_SCHEMA, pair_shape_problem,
                                    validation.check_pair_spec, semantic)
