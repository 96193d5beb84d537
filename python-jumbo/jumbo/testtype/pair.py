"""The `jumbo-throughput` test: paired 1500/9000 iperf3 legs on one path, in an exclusive slot.

Why its own test: pScheduler gives every run the scheduling class of its *test* for the whole
slot the tool asks for. A path-MTU probe is a few dozen packets and belongs in the
`background` (the `pmtu` test); the paired legs saturate the path and must be `exclusive`, but
only for as long as they run. So the legs are this test, run by the same jumbocheck tool.

What a run does (jumbo.tool.runner with jumbo.tool.throughput): the source (p0, the lead)
measures the path MTU first (one flow, bounded by jumbo.core.spec.slot.PATH_MTU_BUDGET), which
decides the jumbo leg's size (a path that cannot carry 9000 is tested at its path MTU, one at
1500 gets no jumbo leg), then
runs the iperf3 clients against the dest's (p1) server in ABBA order with the MSS verified on
the wire; the result carries the gain with its noise estimate and the Mathis ceilings.

Spec (flat, schema.PAIR_SPEC_V1): source, source-node, dest, dest-node, ip-version, timeout
(one path-MTU probe's answer), and the legs: duration, omit, rounds, parallel, congestion,
direction, order, fq-rate, port (jumbo.testtype.spec.THROUGHPUT_DEFAULTS).

Public API (jumbo.protocol.jumbo_throughput's seven methods call these; the result is
jumbo.core.result.PairResult, assembled and merged by the tool, jumbo.tool.pair_result):
    validate(spec), require_valid(spec)
    participants(spec)            -> {"participants": [lead|null, dest-node|dest]}
    cli_to_spec(argv), spec_to_cli(spec)
    result_text, result_html, spec_text, spec_html, verdict(result)
"""

from . import spec as specs
from .render import (html_page, integer, number, pairs_html, pairs_text, runs_tables, show,
                     strip_private, text_page, throughput_pairs)
from .. import probe
from ..core import schema as schemas
from ..core import units
from ..core import validate as validation
from ..core.result.pair import PairResult
from .values import as_dict
from ..core.spec.pair import PAIR_DEFAULTS as DEFAULTS, pair_with_defaults as with_defaults
from ..core.spec.pair import validate_pair

TEST = schemas.PAIR_TEST


# ------------------------------------------------------------------------------------------
# Spec (defaults, validation, the internal spec and the slot rule: jumbo.core.spec)

def validate(spec):
    """Full validation of a jumbo-throughput spec: (True, None) or (False, "At /field: ...").
    The last check is the slot rule (jumbo.core.spec.slot): the exclusive slot the run
    reserves, with the probe's bound for its path-MTU step, against the node's limit."""
    return validate_pair(spec, probe.max_duration)


def require_valid(spec):
    return validation.require_valid(spec, validate)


def participants(spec):
    """Always two: the source (lead, sends; null = this host) and the dest (runs iperf3 -s)."""
    require_valid(spec)
    lead = spec.get("source-node") or spec.get("source")
    answer = {"participants": [lead, spec.get("dest-node") or spec["dest"]]}
    if lead is None:
        answer["null-reason"] = "No source or source-node given: the test runs from this host"
    return answer


# ------------------------------------------------------------------------------------------
# CLI <-> spec

EPILOG = """\
Runs paired iperf3 legs from the source to dest at the TCP MSS of a 1500-byte path and of a
9000-byte (jumbo) path, in ABBA order (1500, 9000, 9000, 1500), checks on the wire that each
leg ran at its size, and reports the jumbo gain with its noise and the Mathis ceilings. The
path MTU is measured first: a path that cannot carry 9000 is tested at its path MTU (or not
at all at 1500), so a black hole is reported, not waited for. Both nodes need this test, the
jumbocheck tool and iperf3. The run is exclusive, like the throughput test: its slot is the
legs plus a small fixed overhead. Time values take seconds (10) or ISO 8601 (PT10S);
--fq-rate takes SI numbers (5G)."""

# (key, option, kind, help) in spec_to_cli order.
_VALUES = [
    ("ip-version", "--ip-version", "int", "IP version to use: 4 or 6"),
    ("duration", "--duration", "duration",
     "Length of each leg (%s); not throughput's --duration, the whole run: a run lasts "
     "rounds x 4 legs x this" % DEFAULTS["duration"]),
    ("omit", "--omit", "duration", "Slow-start seconds left out of each leg (%s)"
     % DEFAULTS["omit"]),
    ("rounds", "--rounds", "int", "ABBA rounds of four legs each (%d)" % DEFAULTS["rounds"]),
    ("parallel", "--parallel", "int", "Parallel TCP streams per leg (%d)" % DEFAULTS["parallel"]),
    ("congestion", "--congestion", "str", "TCP congestion control algorithm (system default)"),
    ("direction", "--direction", "str", "forward, reverse or both (%s)" % DEFAULTS["direction"]),
    ("order", "--order", "str", "abba or ab (%s)" % DEFAULTS["order"]),
    ("fq-rate", "--fq-rate", "si", "Pacing rate per stream in bit/s, SI suffix allowed (5G)"),
    ("port", "--port", "int", "iperf3 server port on the dest (default: the tool's choice)"),
    ("timeout", "--timeout", "duration", "Longest wait for one path-MTU probe's answer (%s)"
     % DEFAULTS["timeout"]),
]



def _dest(option):
    return option.lstrip("-").replace("-", "_")


def _parser():
    parser = specs.FailingParser(usage="%prog [options]", prog=TEST, epilog=EPILOG,
                                  add_help_option=True)
    parser.format_epilog = lambda formatter: "\n" + EPILOG + "\n"
    for key, option, text in specs.ENDPOINT_OPTIONS:
        parser.add_option(option, dest=_dest(option), type="string", metavar=key.upper(),
                          help=text)
    for key, option, kind, text in _VALUES:
        metavar = {"duration": "TIME", "int": "N", "si": "RATE"}.get(kind, key.upper())
        parser.add_option(option, dest=_dest(option), type="string", metavar=metavar, help=text)
    parser.add_option("-4", dest="ip_version", action="store_const", const="4",
                      help="Same as --ip-version 4")
    parser.add_option("-6", dest="ip_version", action="store_const", const="6",
                      help="Same as --ip-version 6")
    return parser


def option_parser():
    """The parser of `pscheduler task jumbo-throughput` (its options' help texts are the UI schema's)."""
    return _parser()


def cli_to_spec(argv):
    """Command-line options -> a validated spec. Raises specs.CliError (text for stderr)."""
    options, rest = _parser().parse_args(list(argv))
    if rest:
        raise specs.CliError("Unexpected argument(s): %s" % " ".join(rest))
    spec = {"schema": 1}
    for key, option, _ in specs.ENDPOINT_OPTIONS:
        value = getattr(options, _dest(option))
        if value is not None:
            spec[key] = value
    for key, option, kind, _ in _VALUES:
        value = getattr(options, _dest(option))
        if value is None:
            continue
        if kind == "duration":
            spec[key] = specs.time_option(option, value)
        elif kind == "int":
            spec[key] = specs.int_option(option, value)
        elif kind == "si":
            try:
                spec[key] = units.parse_si(value)
            except ValueError as err:
                raise specs.CliError("%s: %s" % (option, err))
        else:
            spec[key] = value
    valid, error = validate(spec)
    if not valid:
        raise specs.CliError("Invalid spec: %s" % error)
    return spec


def spec_to_cli(spec):
    require_valid(spec)
    argv = []
    for key, option, _ in specs.ENDPOINT_OPTIONS:
        if key in spec:
            argv += [option, spec[key]]
    for key, option, kind, _ in _VALUES:
        if key in spec:
            argv += [option, str(spec[key])]
    return argv


# ------------------------------------------------------------------------------------------
# Result (assembled and merged by jumbo.tool.pair_result): text, HTML, the verdict line

def pair_result(value):
    """A jumbo-throughput result as its typed object, read once at the door (result-format's
    JSON), its `_`-prefixed members left out; a PairResult is taken as it is."""
    if isinstance(value, PairResult):
        return value
    return PairResult.from_json(strip_private(as_dict(value)))


def verdict(result):
    """One line: the gain (with noise) or why there is none, and the path MTU it ran at."""
    result = pair_result(result)
    if result.succeeded is False:
        return "Run failed: %s" % (result.error or "no reason given")
    what = result.verdict
    gain = number(result.gain)
    noise = number(result.gain_noise)
    size = integer(result.jumbo_mtu)
    if what == "blackhole":
        line = "Jumbo legs stalled while 1500 flowed: black hole at MTU %s" % (size or "?")
    elif what == "skipped":
        line = "No jumbo leg: %s" % (result.skipped or "path MTU not above 1500")
    elif what == "mss-capped":
        sizes = sorted(set(integer(leg.observed_mss) for leg in result.runs or []
                           if leg.size == "jumbo" and integer(leg.observed_mss)))
        line = "Jumbo (MTU %s) not used by TCP: the receiver's MSS held the jumbo legs at %s" % (
            size or "?", "/".join(str(s) for s in sizes) or "?")
    elif gain is not None:
        line = "Jumbo (MTU %s) throughput x%.2f%s: %s" % (
            size or "?", gain, " +/- %.2f" % noise if noise is not None else "",
            {"jumbo-faster": "jumbo faster", "jumbo-slower": "jumbo slower",
             "no-difference": "no difference beyond the noise"}.get(what, what))
    else:
        line = "Throughput verdict: %s" % (what or "unknown")
    path = integer(result.path_mtu)
    line += "; path MTU %s" % (path if path is not None else "unknown")
    return line


def _pairs(spec, result):
    pairs = [("Destination", result.dest_ip or spec.get("dest")),
             ("IP version", result.ip_version or spec.get("ip-version")),
             ("Path MTU", result.path_mtu),
             ("Local MTU", result.local_mtu),
             ("PMTUD", result.pmtud)]
    if result.path_mtu_error:
        pairs.append(("Path MTU not measured", result.path_mtu_error))
    pairs = [(label, show(value)) for label, value in pairs if value is not None]
    # The same lines as a pmtu result's throughput phase (render owns their wording).
    pairs += throughput_pairs(result)
    for note in result.notes if isinstance(result.notes, list) else []:
        pairs.append(("Note", show(note)))
    return pairs


def result_text(spec, result):
    spec, result = strip_private(as_dict(spec)), pair_result(result)
    return text_page(verdict(result), _pairs(spec, result), runs_tables(result), result)


def result_html(spec, result):
    spec, result = strip_private(as_dict(spec)), pair_result(result)
    return html_page(verdict(result), _pairs(spec, result), runs_tables(result), result)


def _spec_pairs(spec):
    full = with_defaults(spec)
    keys = [k for k, _, _ in specs.ENDPOINT_OPTIONS] + [k for k, _, _, _ in _VALUES]
    return [(key, show(full[key]) + ("" if key in spec else " (default)"))
            for key in keys if key in full]


def spec_text(spec):
    return pairs_text(_spec_pairs(strip_private(spec)))


def spec_html(spec):
    return pairs_html(_spec_pairs(strip_private(spec))) + "\n"
