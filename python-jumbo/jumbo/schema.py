"""The suite's JSON schemas: the single source of truth for specs and results.

Every plugin (test, tool, archiver) and the report validate against these
objects. They use only draft-7-and-older keywords so that jsonschema 3.0.1
(perfSONAR on EL8) and current 4.x give the same verdicts.

Spec and result are versioned with `schema` (absent means 1), as pScheduler
does; a new version is a new entry in SPEC_VERSIONS / RESULT_VERSIONS.
"""

# Largest IP packet allowed by IPv4/IPv6 length fields (jumbograms excluded).
MAX_IP_PACKET = 65535
# Minimum link MTUs: RFC 791 (68) and RFC 8200 (1280).
MIN_MTU_V4 = 68
MIN_MTU_V6 = 1280

STANDARD_MTU = 1500
DEFAULT_TARGET_MTU = 9000

# Shared building blocks, referenced as #/definitions/<name>.
DEFINITIONS = {
    # A host name or an IP literal, without a port (pScheduler's Host).
    "host": {
        "type": "string",
        "minLength": 1,
        "maxLength": 255,
        "pattern": r"^[A-Za-z0-9_.:%\-\[\]]+$",
    },
    "ip-version": {"type": "integer", "enum": [4, 6]},
    "mtu": {"type": "integer", "minimum": MIN_MTU_V4, "maximum": MAX_IP_PACKET},
    # ISO 8601 duration, as pScheduler writes them ("PT10S", "PT0.5S", "P1D").
    "duration": {
        "type": "string",
        "pattern": r"^P(?!$)(\d+(\.\d+)?Y)?(\d+(\.\d+)?M)?(\d+(\.\d+)?W)?(\d+(\.\d+)?D)?"
                   r"(T(?=\d)(\d+(\.\d+)?H)?(\d+(\.\d+)?M)?(\d+(\.\d+)?S)?)?$",
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
            "congestion": {"type": "string", "pattern": r"^[a-z0-9_]{1,16}$"},
            "direction": {"type": "string", "enum": ["forward", "reverse", "both"]},
            "order": {"type": "string", "enum": ["abba", "ab"]},
            # Pacing rate in bit/s (iperf3 --fq-rate).
            "fq-rate": {"type": "integer", "minimum": 1},
            "port": {"type": "integer", "minimum": 1024, "maximum": 65535},
        },
        "additionalProperties": False,
    },
}

SPEC_V1 = {
    "type": "object",
    "properties": {
        "schema": {"type": "integer", "enum": [1]},
        "source": {"$ref": "#/definitions/host"},
        "source-node": {"$ref": "#/definitions/host"},
        "dest": {"$ref": "#/definitions/host"},
        "dest-node": {"$ref": "#/definitions/host"},
        "ip-version": {"$ref": "#/definitions/ip-version"},
        "target-mtu": {"$ref": "#/definitions/mtu"},
        "max-mtu": {"$ref": "#/definitions/mtu"},
        "min-mtu": {"$ref": "#/definitions/mtu"},
        "flows": {"type": "integer", "minimum": 1, "maximum": 64},
        "hops": {"type": "boolean"},
        "reverse": {"type": "boolean"},
        "throughput": {"$ref": "#/definitions/throughput-spec"},
        # Upper bound on the wait for any one probe's answer.
        "timeout": {"$ref": "#/definitions/duration"},
    },
    "required": ["dest"],
    "additionalProperties": False,
}

SPEC_VERSIONS = {1: SPEC_V1}
MAX_SPEC_SCHEMA = max(SPEC_VERSIONS)


HOP = {
    "type": "object",
    "properties": {
        "ttl": {"type": "integer", "minimum": 1, "maximum": 255},
        "ip": {"type": ["string", "null"]},
        "mtu": {"type": ["integer", "null"]},
        "rtt": {"anyOf": [{"$ref": "#/definitions/duration"}, {"type": "null"}]},
    },
    "required": ["ttl", "ip", "mtu"],
}

FLOW = {
    "type": "object",
    "properties": {
        "flow": {"type": "integer", "minimum": 0},
        "source-port": {"type": ["integer", "null"]},
        "flow-label": {"type": ["integer", "null"]},
        "path-mtu": {"type": ["integer", "null"]},
        "pmtud": {"$ref": "#/definitions/pmtud"},
    },
    "required": ["path-mtu", "pmtud"],
}

THROUGHPUT_RUN = {
    "type": "object",
    "properties": {
        "order": {"type": "integer", "minimum": 0},
        "mtu": {"type": "integer"},
        "mss": {"type": "integer"},
        "direction": {"type": "string", "enum": ["forward", "reverse"]},
        "succeeded": {"type": "boolean"},
        "throughput": {"type": ["number", "null"]},
        "retransmits": {"type": ["integer", "null"]},
        # The kernel's sending MSS and path MTU for the flow: the proof the leg ran at its size.
        "observed-mss": {"type": ["integer", "null"]},
        "pmtu": {"type": ["integer", "null"]},
        "stalled": {"type": "boolean"},
        "error": {"type": ["string", "null"]},
    },
    "required": ["order", "mtu", "mss", "throughput"],
}

THROUGHPUT_RESULT = {
    "type": "object",
    "properties": {
        "runs": {"type": "array", "items": THROUGHPUT_RUN},
        "standard": {"type": ["object", "null"]},
        "jumbo": {"type": ["object", "null"]},
        "gain": {"type": ["number", "null"]},
        "gain-noise": {"type": ["number", "null"]},
        "verdict": {"type": "string", "enum": ["jumbo-faster", "jumbo-slower", "no-difference",
                                               "blackhole", "skipped", "failed"]},
        "skipped": {"type": ["string", "null"]},
        "jumbo-mtu": {"type": ["integer", "null"]},
    },
    "required": ["runs"],
}

RESULT_V1 = {
    "type": "object",
    "properties": {
        "schema": {"type": "integer", "enum": [1]},
        "succeeded": {"type": "boolean"},
        "error": {"type": ["string", "null"]},
        "diags": {"type": ["string", "null"]},
        "path-mtu": {"type": ["integer", "null"]},
        "local-mtu": {"type": ["integer", "null"]},
        "target-mtu": {"type": ["integer", "null"]},
        "jumbo": {"type": ["boolean", "null"]},
        "pmtud": {"$ref": "#/definitions/pmtud"},
        # Which forward probes answered: ICMP echo, UDP to a closed port (the dest's ICMP
        # port unreachable), or the dest participant's reflector.
        "method": {"enum": ["icmp-echo", "udp", "reflector", None]},
        "hops": {"type": "array", "items": HOP},
        "flows": {"type": "array", "items": FLOW},
        "reverse-path-mtu": {"type": ["integer", "null"]},
        # The reverse path (dest -> source), measured with the dest participant's reflector.
        "reverse-pmtud": {"anyOf": [{"$ref": "#/definitions/pmtud"}, {"type": "null"}]},
        "reverse-local-mtu": {"type": ["integer", "null"]},
        "reverse-ptb": {"type": "array", "items": {"type": "object"}},
        "reverse-error": {"type": ["string", "null"]},
        "reverse-flows": {"type": "array", "items": FLOW},
        "probes": {"type": "integer", "minimum": 0},
        "throughput": {"anyOf": [THROUGHPUT_RESULT, {"type": "null"}]},
    },
    "required": ["schema", "succeeded"],
}

RESULT_VERSIONS = {1: RESULT_V1}
MAX_RESULT_SCHEMA = max(RESULT_VERSIONS)


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
