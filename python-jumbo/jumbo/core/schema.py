"""The suite's JSON schemas: the single source of truth for specs and results.

Every plugin (test, tool, archiver) and the report validate against these
objects. They use only draft-7-and-older keywords so that jsonschema 3.0.1
(perfSONAR on EL8) and current 4.x give the same verdicts.

Spec and result are versioned with `schema` (absent means 1), as pScheduler
does; a new version is a new entry in SPEC_VERSIONS / RESULT_VERSIONS.
"""

from .mtu import MAX_IP_PACKET, MIN_MTU_V4
from .result.members import schema_of
from .result.pair import Leg, PairResult, Throughput
from .result.pmtu import Blackhole, Flow, Hop, PmtuResult, Ptb
from .units import DURATION_PATTERN

# Pacing above 1 Tbit/s per stream is no pacing (iperf3 --fq-rate, bit/s).
MAX_FQ_RATE = 10 ** 12

# Shared building blocks, referenced as #/definitions/<name>.
DEFINITIONS = {
    # A host name or an IP literal, without a port (pScheduler's Host).
    "host": {
        "type": "string",
        "minLength": 1,
        "maxLength": 255,
        "pattern": r"^[A-Za-z0-9_.:%\-\[\]]+$(?!\n)",
    },
    "ip-version": {"type": "integer", "enum": [4, 6]},
    "mtu": {"type": "integer", "minimum": MIN_MTU_V4, "maximum": MAX_IP_PACKET},
    # ISO 8601 duration, as pScheduler writes them ("PT10S", "PT0.5S", "P1D").
    "duration": {
        "type": "string",
        "pattern": DURATION_PATTERN,
    },
    "cardinal": {"type": "integer", "minimum": 1},
    "uint": {"type": "integer", "minimum": 0},
    "pmtud": {"type": "string", "enum": ["ok", "blackhole", "not-needed", "unknown"]},
    "throughput-spec": {
        "type": "object",
        "properties": {
            "duration": {"$ref": "#/definitions/duration"},
            "omit": {"$ref": "#/definitions/duration"},
            "rounds": {"type": "integer", "minimum": 1, "maximum": 20},
            "parallel": {"type": "integer", "minimum": 1, "maximum": 64},
            "congestion": {"type": "string", "pattern": r"^[a-z0-9_]{1,16}$(?!\n)"},
            "direction": {"type": "string", "enum": ["forward", "reverse", "both"]},
            "order": {"type": "string", "enum": ["abba", "ab"]},
            # Pacing rate in bit/s (iperf3 --fq-rate).
            "fq-rate": {"type": "integer", "minimum": 1, "maximum": MAX_FQ_RATE},
            "port": {"type": "integer", "minimum": 1024, "maximum": 65535},
        },
        "additionalProperties": False,
    },
}

# The endpoints every test of the suite names the same way (both specs use them).
ENDPOINT_PROPERTIES = {
    "source": {"$ref": "#/definitions/host"},
    "source-node": {"$ref": "#/definitions/host"},
    "dest": {"$ref": "#/definitions/host"},
    "dest-node": {"$ref": "#/definitions/host"},
    "ip-version": {"$ref": "#/definitions/ip-version"},
}

SPEC_V1 = {
    "type": "object",
    "properties": dict({
        "schema": {"type": "integer", "enum": [1]},
        "target-mtu": {"$ref": "#/definitions/mtu"},
        "max-mtu": {"$ref": "#/definitions/mtu"},
        "min-mtu": {"$ref": "#/definitions/mtu"},
        "flows": {"type": "integer", "minimum": 1, "maximum": 64},
        "hops": {"type": "boolean"},
        "reverse": {"type": "boolean"},
        # The dest node takes part and answers the forward probes (its reflector).
        "reflector": {"type": "boolean"},
        # Upper bound on the wait for any one probe's answer.
        "timeout": {"$ref": "#/definitions/duration"},
    }, **ENDPOINT_PROPERTIES),
    "required": ["dest"],
    "additionalProperties": False,
}

SPEC_VERSIONS = {1: SPEC_V1}


def needs_dest_participant(spec):
    """True when the dest node must run the tool too: the reverse path, forward probes
    through its reflector, or the throughput legs of a jumbo-throughput run's internal spec.
    One rule for the participants, the slot and the probe engine's time bound."""
    return bool(spec.get("reverse")) or bool(spec.get("reflector")) \
        or spec.get("throughput") is not None
MAX_SPEC_SCHEMA = max(SPEC_VERSIONS)

# The paired 1500/9000 throughput left the pmtu spec (pmtu is a `background` test; bulk
# traffic must be `exclusive`): it is the jumbo-throughput test now. A pmtu spec that still
# carries `throughput` is refused with a message naming that test.
PAIR_TEST = "jumbo-throughput"

# jumbo-throughput spec, version 1: the hosts, the wait for one path-MTU probe's answer
# (the path MTU is measured first), and the legs' settings (throughput-spec), all flat.
PAIR_SPEC_V1 = {
    "type": "object",
    "properties": dict({
        "schema": {"type": "integer", "enum": [1]},
        "timeout": {"$ref": "#/definitions/duration"},
    }, **dict(ENDPOINT_PROPERTIES, **DEFINITIONS["throughput-spec"]["properties"])),
    "required": ["dest"],
    "additionalProperties": False,
}

PAIR_SPEC_VERSIONS = {1: PAIR_SPEC_V1}
MAX_PAIR_SPEC_SCHEMA = max(PAIR_SPEC_VERSIONS)


# The results' schemas, written from the result classes' field declarations (jumbo.core.
# result: each member's key, schema and whether it is required, declared once there).
HOP = schema_of(Hop)
# A packet-too-big message the probes (or the dest's reflector) received.
PTB = schema_of(Ptb)
# Where big packets vanish without a packet-too-big: the last hop that answered, the size.
BLACKHOLE = schema_of(Blackhole)
FLOW = schema_of(Flow)
THROUGHPUT_RUN = schema_of(Leg)
THROUGHPUT_RESULT = schema_of(Throughput)
RESULT_V1 = schema_of(PmtuResult)

RESULT_VERSIONS = {1: RESULT_V1}
MAX_RESULT_SCHEMA = max(RESULT_VERSIONS)

# jumbo-throughput result, version 1: the path MTU measured first (which decides the jumbo
# leg's size), then the throughput object's members at the top level.
PAIR_RESULT_V1 = schema_of(PairResult)

PAIR_RESULT_VERSIONS = {1: PAIR_RESULT_V1}
MAX_PAIR_RESULT_SCHEMA = max(PAIR_RESULT_VERSIONS)


def _with_definitions(schema):
    bundled = dict(schema)
    bundled["definitions"] = DEFINITIONS
    return bundled


def spec_schema(version=1):
    """The complete JSON schema of spec version `version`."""
    return _with_definitions(SPEC_VERSIONS[version])


def result_schema(version=1):
    """The complete JSON schema of result version `version`."""
    return _with_definitions(RESULT_VERSIONS[version])


def pair_spec_schema(version=1):
    """The complete JSON schema of jumbo-throughput spec version `version`."""
    return _with_definitions(PAIR_SPEC_VERSIONS[version])


def pair_result_schema(version=1):
    """The complete JSON schema of jumbo-throughput result version `version`."""
    return _with_definitions(PAIR_RESULT_VERSIONS[version])
