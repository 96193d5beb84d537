"""The `pmtu` test spec as the plugin methods need it: spec-is-valid, participants, CLI <-> spec.

What the seven test-plugin methods need of the spec lives here; jumbo.protocol.pmtu reads
their stdin and argv and calls it. The defaults, the typed spec and the validation rules are
jumbo.core.spec's (the tool checks with the same rules); this module answers with them.

Public API:
    DEFAULTS, THROUGHPUT_DEFAULTS, with_defaults(spec), validate(spec), require_valid(spec),
    address_family(text), effective_ip_version(spec), semantic_problem(spec): jumbo.core.spec's
    is_valid(spec)               -> {"valid": True} or {"valid": False, "error": ...}
    participants(spec)           -> {"participants": [p0, (p1)], ("null-reason": ...)}
    cli_to_spec(argv)            -> spec (raises CliError, also for --help)
    spec_to_cli(spec)            -> argv list that cli_to_spec turns back into the same spec
(durations and SI numbers: jumbo.core.units)
"""

import optparse

from ..core import mtu as mtus
from ..core import schema as schemas
from ..core.errors import JumboError
from ..core.spec.checks import MOVED_TO_PAIR_TEST, require_valid, validate
from ..core.spec.typed import DEFAULTS
from ..core.units import duration_seconds, seconds_to_duration

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


def is_valid(spec):
    """The answer of spec-is-valid: {"valid": true} or {"valid": false, "error": "..."}."""
    valid, error = validate(spec)
    if valid:
        return {"valid": True}
    return {"valid": False, "error": error}


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

class CliError(JumboError, ValueError):
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
    ("hops", "--hops", "Report the MTU of every hop (a switch, not trace's --hops N TTL "
     "limit: the scan stops at the dest, at most 30 hops)"),
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


def option_parser():
    """The parser of `pscheduler task pmtu` (its options' help texts are the UI schema's)."""
    return _parser()


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

FailingParser = _FailingParser
time_option = _time_option
int_option = _int_option
