"""The `pmtu` test spec: defaults, validation beyond the JSON schema, participants, CLI <-> spec.

What the seven test-plugin methods need of the spec lives here; jumbo.protocol.pmtu reads
their stdin and argv and calls it. Validation is offline: host names are checked for syntax only, never resolved
(the contract forbids DNS in spec-is-valid; an unresolvable host fails at run time).

Public API:
    DEFAULTS, THROUGHPUT_DEFAULTS, with_defaults(spec): jumbo.core.spec's (their one home)
    validate(spec)               -> (True, None) or (False, "At /field: problem")
    is_valid(spec)               -> {"valid": True} or {"valid": False, "error": ...}
    participants(spec)           -> {"participants": [p0, (p1)], ("null-reason": ...)}
    cli_to_spec(argv)            -> spec (raises CliError, also for --help)
    spec_to_cli(spec)            -> argv list that cli_to_spec turns back into the same spec
(durations and SI numbers: jumbo.core.units)

Size: over 400 lines: the spec's defaults, validation and both CLI directions share the
option table, so that a new spec field is one entry read by all of them.
"""

import ipaddress
import optparse
import re

from ..core import mtu as mtus
from ..core.spec import DEFAULTS, THROUGHPUT_DEFAULTS, with_defaults  # noqa: F401 - part of this API
from ..core import schema as schemas
from ..core import validate as validation
from ..core.units import duration_seconds, duration_seconds_or_none, seconds_to_duration

# The throughput phase left pmtu (a background test) for its own exclusive test.
MOVED_TO_PAIR_TEST = (
    "the paired 1500/9000 throughput is no longer part of pmtu (pmtu runs in the background; "
    "bulk traffic needs an exclusive slot): use the %s test, e.g. "
    "`pscheduler task %s --dest HOST`" % (schemas.PAIR_TEST, schemas.PAIR_TEST))

# Bounds that the JSON schema cannot express (durations are strings there).
TIMEOUT_MAX = 60.0
THROUGHPUT_DURATION_MIN = 1.0
THROUGHPUT_DURATION_MAX = 3600.0
THROUGHPUT_OMIT_MAX = 600.0


# ------------------------------------------------------------------------------------------
# Durations (the syntax and the parser are jumbo.core.units')

def _duration_option(text):
    """A CLI time value: plain seconds ("10", "0.5") or ISO 8601 ("PT10S")."""
    text = text.strip()
    try:
        return seconds_to_duration(float(text))
    except ValueError:
        pass
    duration_seconds(text)  # raises with a readable message
    return text.upper()


# ------------------------------------------------------------------------------------------
# Addresses and host names (syntax only, never resolved)

_IPV4_RE = re.compile(r"^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\Z")
_LABEL_RE = re.compile(r"^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\Z")
_ZONE_RE = re.compile(r"^[A-Za-z0-9_.-]{1,15}\Z")


def _is_ipv4(text):
    match = _IPV4_RE.match(text)
    return bool(match) and all(int(part) <= 255 and (part == "0" or not part.startswith("0"))
                               for part in match.groups())


def _is_ipv6(text):
    if "%" in text:
        text, zone = text.split("%", 1)
        if not _ZONE_RE.match(zone):
            return False
    if ":" not in text or not re.match(r"^[0-9A-Fa-f:.]+\Z", text):
        return False
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def address_family(text):
    """4 or 6 for an IP literal, None for a host name (or anything else)."""
    if not isinstance(text, str):
        return None
    if _is_ipv4(text):
        return 4
    if _is_ipv6(text):
        return 6
    return None


def _host_problem(text):
    """None if `text` is an IP literal or a syntactically valid host name, else the problem."""
    if address_family(text) == 6 and "%" in text:
        # A zone only names a link: probes, the reverse path and iperf3 would each need it
        # carried to their sockets, and pScheduler reaches a node by its address alone.
        return "%r is a scoped (link-local) IPv6 address: a zone (%%%s) is not supported; " \
            "use the host's global or unique-local address" % (text, text.split("%", 1)[1])
    if address_family(text):
        return None
    if text.startswith("[") or ":" in text:
        return "%r is neither a host name nor an IP address (write IPv6 without brackets or port)" \
            % text
    if _IPV4_RE.match(text):
        return "%r is not a valid IPv4 address" % text
    name = text[:-1] if text.endswith(".") else text
    if len(name) > 253 or not name:
        return "%r is too long for a host name" % text
    for label in name.split("."):
        if not _LABEL_RE.match(label):
            return "%r is not a valid host name (label %r)" % (text, label)
    if re.match(r"^[0-9.]+\Z", name):
        return "%r is not a valid IPv4 address" % text
    return None


def _node_problem(text):
    """Like _host_problem, but a participant node may also carry a port: host:port, [v6]:port."""
    match = re.match(r"^\[([^\]]+)\](?::(\d+))?\Z", text)
    if match:
        host, port = match.group(1), match.group(2)
        if address_family(host) != 6:
            return "%r: only an IPv6 address may be written in brackets" % text
    elif text.count(":") == 1:
        host, port = text.split(":")
    else:
        host, port = text, None
    if port is not None and not (port.isdigit() and 1 <= int(port) <= 65535):
        return "%r has an invalid port" % text
    return _host_problem(host)


# ------------------------------------------------------------------------------------------
# Defaults and validation

def effective_ip_version(spec):
    """The spec's ip-version, else the family of a literal dest or source, else None."""
    if spec.get("ip-version") in (4, 6):
        return spec["ip-version"]
    for key in ("dest", "source"):
        family = address_family(spec.get(key))
        if family:
            return family
    return None


def _semantic_problem(spec):
    """First problem the JSON schema cannot see, as "At /field: ...", or None."""
    for key in ("source", "dest"):
        if key in spec:
            problem = _host_problem(spec[key])
            if problem:
                return "At /%s: %s" % (key, problem)
    for key in ("source-node", "dest-node"):
        if key in spec:
            problem = _node_problem(spec[key])
            if problem:
                return "At /%s: %s" % (key, problem)

    version = spec.get("ip-version")
    families = {}
    for key in ("dest", "source"):
        family = address_family(spec.get(key))
        if family:
            families[key] = family
            if version is not None and family != version:
                return "At /%s: %s is an IPv%d address but ip-version is %d" % (
                    key, spec[key], family, version)
    if len(set(families.values())) > 1:
        return "At /source: %s is an IPv%d address but dest %s is IPv%d" % (
            spec["source"], families["source"], spec["dest"], families["dest"])

    family = effective_ip_version(spec)
    floor = mtus.MIN_MTU[6 if family == 6 else 4]
    for key in ("target-mtu", "max-mtu", "min-mtu"):
        if key in spec and spec[key] < floor:
            return "At /%s: %d is below the IPv%d minimum MTU of %d" % (
                key, spec[key], family or 4, floor)
    if "min-mtu" in spec and "max-mtu" in spec and spec["min-mtu"] > spec["max-mtu"]:
        return "At /min-mtu: %d is larger than max-mtu %d" % (spec["min-mtu"], spec["max-mtu"])
    # Against the default target too: min-mtu 50000 alone passed and then failed at run time.
    target = spec.get("target-mtu", DEFAULTS["target-mtu"])
    if "min-mtu" in spec and spec["min-mtu"] > target:
        return "At /min-mtu: %d is larger than target-mtu %d" % (spec["min-mtu"], target)

    if "timeout" in spec:
        seconds = duration_seconds_or_none(spec["timeout"])
        if seconds is None:
            return "At /timeout: %r is not a usable duration" % (spec["timeout"],)
        if not 0 < seconds <= TIMEOUT_MAX:
            return "At /timeout: %s must be more than 0 and at most PT%dS" % (
                spec["timeout"], TIMEOUT_MAX)

    return None


def _shape_problem(spec):
    """Unknown or missing members, named by their own path (clearer than the schema's "At /")."""
    properties = schemas.SPEC_VERSIONS[spec.get("schema", 1)]["properties"]
    if "throughput" in spec:
        return "At /throughput: %s" % MOVED_TO_PAIR_TEST
    for key in sorted(spec, key=str):
        if key not in properties:
            return "At /%s: unknown field (allowed: %s)" % (key, ", ".join(sorted(properties)))
    if "dest" not in spec:
        return "At /dest: required field is missing"
    # Host syntax first: a friendlier message than the schema's pattern.
    for key, check in (("source", _host_problem), ("dest", _host_problem),
                       ("source-node", _node_problem), ("dest-node", _node_problem)):
        if isinstance(spec.get(key), str):
            problem = check(spec[key])
            if problem:
                return "At /%s: %s" % (key, problem)
    return None


def validate(spec):
    """Full validation of a pmtu spec: (True, None) or (False, "At /field: problem")."""
    return validation.validate_spec(spec, schemas.MAX_SPEC_SCHEMA, _shape_problem,
                                    validation.check_spec, _semantic_problem)


def is_valid(spec):
    """The answer of spec-is-valid: {"valid": true} or {"valid": false, "error": "..."}."""
    valid, error = validate(spec)
    if valid:
        return {"valid": True}
    return {"valid": False, "error": error}


def require_valid(spec):
    """Raise ValueError("Invalid spec: At /...") unless the spec is valid."""
    return validation.require_valid(spec, validate)


# When the dest node must run the tool too (the rule lives in jumbo.core.schema).
needs_dest_participant = schemas.needs_dest_participant


def participants(spec):
    """Participants of a run: the source (lead; null = this host), plus the dest when the
    reverse measurement, the forward probes through its reflector or the throughput phase
    need the far end."""
    require_valid(spec)
    lead = spec.get("source-node") or spec.get("source")
    answer = {"participants": [lead]}
    if needs_dest_participant(spec):
        answer["participants"].append(spec.get("dest-node") or spec["dest"])
    if lead is None:
        answer["null-reason"] = "No source or source-node given: the test runs from this host"
    return answer


# ------------------------------------------------------------------------------------------
# CLI <-> spec

class CliError(ValueError):
    """A CLI parse problem or a --help request: `str(err)` is the text for stderr (exit 1)."""

    def __init__(self, text, is_help=False):
        ValueError.__init__(self, text)
        self.is_help = is_help


class _FailingParser(optparse.OptionParser):
    """optparse that raises instead of printing and exiting (help included), as the server
    expects: --help text on stderr and exit status 1 (upstream FailingOptionParser)."""

    def exit(self, status=0, msg=None):
        raise CliError(msg or "", is_help=False)

    def error(self, msg):
        raise CliError(msg)

    def print_help(self, file=None):
        raise CliError(self.format_help(), is_help=True)

    def print_usage(self, file=None):
        raise CliError(self.get_usage())

    def print_version(self, file=None):
        raise CliError(self.get_version())


EPILOG = """\
Measures the path MTU from the source to dest, says whether IP packets of target-mtu bytes
(default 9000) cross the path unfragmented, and finds PMTUD black holes (hop, size).
With --reverse or --reflector the dest node takes part too (it needs this test and the
jumbocheck tool installed); --reflector probes every flow through it, with no ICMP rate
limit. Time values take seconds (10) or ISO 8601 (PT10S). pmtu runs in the background
(a few dozen probe packets); the paired 1500/9000 throughput is the jumbo-throughput test."""

# (spec key, option, help) of the endpoints, in spec_to_cli order; jumbo-throughput shares them.
ENDPOINT_OPTIONS = [
    ("source", "--source", "Source address or host name (default: this host)"),
    ("source-node", "--source-node", "Address of the source's pScheduler node, if different"),
    ("dest", "--dest", "Destination address or host name (required)"),
    ("dest-node", "--dest-node", "Address of the dest's pScheduler node, if different"),
]
_INTS = [
    ("ip-version", "--ip-version", "IP version to use: 4 or 6"),
    ("target-mtu", "--target-mtu", "MTU the path should carry (default %d)"
     % DEFAULTS["target-mtu"]),
    ("max-mtu", "--max-mtu", "Largest packet size to probe (default: egress interface MTU)"),
    ("min-mtu", "--min-mtu", "Smallest packet size to probe (default: %d / %d)"
     % (mtus.MIN_MTU_V4, mtus.MIN_MTU_V6)),
    ("flows", "--flows", "Distinct flows to probe, for ECMP paths (default %d)" % DEFAULTS["flows"]),
]
_BOOLS = [
    ("hops", "--hops", "Report the MTU of every hop"),
    ("reverse", "--reverse", "Also measure dest -> source (the dest node takes part)"),
    ("reflector", "--reflector", "Probe the forward path through the dest node's reflector "
     "(the dest node takes part; its answers are not rate-limited, so many flows are cheap)"),
]
# Options of the old throughput phase: still recognised, to point at the jumbo-throughput test.
_MOVED_OPTIONS = ["--throughput", "--throughput-duration", "--throughput-omit", "--rounds",
                  "--parallel", "--congestion", "--direction", "--order", "--fq-rate",
                  "--throughput-port"]


def _dest(option):
    return option.lstrip("-").replace("-", "_")


def _parser():
    parser = _FailingParser(usage="%prog [options]", prog="pmtu", epilog=EPILOG,
                            add_help_option=True)
    parser.format_epilog = lambda formatter: "\n" + EPILOG + "\n"
    for key, option, text in ENDPOINT_OPTIONS:
        parser.add_option(option, dest=_dest(option), type="string", metavar=key.upper(),
                          help=text)
    for key, option, text in _INTS:
        parser.add_option(option, dest=_dest(option), type="string", metavar="N", help=text)
    parser.add_option("-4", dest="ip_version", action="store_const", const="4",
                      help="Same as --ip-version 4")
    parser.add_option("-6", dest="ip_version", action="store_const", const="6",
                      help="Same as --ip-version 6")
    for key, option, text in _BOOLS:
        parser.add_option(option, dest=_dest(option), action="store_true", default=None,
                          help=text)
        parser.add_option("--no-" + option[2:], dest=_dest(option), action="store_false",
                          help="Opposite of %s (default)" % option)
    parser.add_option("--timeout", dest="timeout", type="string", metavar="TIME",
                      help="Longest wait for one probe's answer (default %s)"
                      % DEFAULTS["timeout"])
    for option in _MOVED_OPTIONS:
        parser.add_option(option, dest="moved_" + _dest(option), action="callback",
                          callback=_moved_option, help=optparse.SUPPRESS_HELP)
    return parser


def option_help(skip=()):
    """The options' help as `pscheduler task pmtu --help` shows it, less the options in
    `skip` (jumbocheck, which runs without pScheduler, has no nodes and no reverse path)."""
    parser = _parser()
    for option in skip:
        parser.remove_option(option)
    parser.remove_option("--help")
    return parser.format_option_help()


def _moved_option(option, opt_text, value, parser):
    raise CliError("%s: %s" % (opt_text, MOVED_TO_PAIR_TEST))


def _int_option(option, text):
    try:
        return int(str(text).strip())
    except ValueError:
        raise CliError("%s: %r is not an integer" % (option, text))


def cli_to_spec(argv):
    """Turn command-line options into a validated spec. Raises CliError (text for stderr,
    exit status 1) on bad options, leftover arguments, an invalid spec or --help."""
    argv = list(argv)
    parser = _parser()
    options, rest = parser.parse_args(argv)
    if rest:
        raise CliError("Unexpected argument(s): %s" % " ".join(rest))

    spec = {"schema": 1}
    for key, option, _ in ENDPOINT_OPTIONS:
        value = getattr(options, _dest(option))
        if value is not None:
            spec[key] = value
    for key, option, _ in _INTS:
        value = getattr(options, _dest(option))
        if value is not None:
            spec[key] = _int_option(option, value)
    for key, option, _ in _BOOLS:
        value = getattr(options, _dest(option))
        if value is not None:
            spec[key] = value
    if options.timeout is not None:
        spec["timeout"] = _time_option("--timeout", options.timeout)

    valid, error = validate(spec)
    if not valid:
        raise CliError("Invalid spec: %s" % error)
    return spec


def _time_option(option, text):
    try:
        return _duration_option(text)
    except ValueError as err:
        raise CliError("%s: %s" % (option, err))


def spec_to_cli(spec):
    """The argv that cli_to_spec turns back into an equivalent spec (validated first)."""
    require_valid(spec)
    argv = []
    for key, option, _ in ENDPOINT_OPTIONS:
        if key in spec:
            argv += [option, spec[key]]
    for key, option, _ in _INTS:
        if key in spec:
            argv += [option, str(spec[key])]
    for key, option, _ in _BOOLS:
        if key in spec:
            argv.append(option if spec[key] else "--no-" + option[2:])
    if "timeout" in spec:
        argv += ["--timeout", spec["timeout"]]
    return argv


# ------------------------------------------------------------------------------------------
# Shared with the jumbo-throughput test (jumbo.testtype.pair): the same hosts, families and probe
# timeout rules, the same option parsing, so both tests answer alike.

semantic_problem = _semantic_problem
FailingParser = _FailingParser
time_option = _time_option
int_option = _int_option
