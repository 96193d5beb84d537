"""The `jumbo-throughput` test: paired 1500/9000 iperf3 legs on one path, in an exclusive slot.

Why its own test: pScheduler gives every run the scheduling class of its *test* for the whole
slot the tool asks for. A path-MTU probe is a few dozen packets and belongs in the
`background` (the `pmtu` test); the paired legs saturate the path and must be `exclusive`, but
only for as long as they run. So the legs are this test, run by the same jumbocheck tool.

What a run does (jumbo.tool.runner with jumbo.tool.throughput): the source (p0, the lead) measures the
path MTU first (one flow, bounded by PATH_MTU_BUDGET), which decides the jumbo leg's size (a
path that cannot carry 9000 is tested at its path MTU, one at 1500 gets no jumbo leg), then
runs the iperf3 clients against the dest's (p1) server in ABBA order with the MSS verified on
the wire; the result carries the gain with its noise estimate and the Mathis ceilings.

Spec (flat, schema.PAIR_SPEC_V1): source, source-node, dest, dest-node, ip-version, timeout
(one path-MTU probe's answer), and the legs: duration, omit, rounds, parallel, congestion,
direction, order, fq-rate, port (jumbo.testtype.spec.THROUGHPUT_DEFAULTS).

Public API (jumbo.protocol.jumbo_throughput's seven methods call these; the tool calls internal_spec/assemble/merge):
    validate(spec), require_valid(spec)
    participants(spec)            -> {"participants": [lead|null, dest-node|dest]}
    cli_to_spec(argv), spec_to_cli(spec)
    internal_spec(spec)           -> the pmtu-shaped spec the runner and jumbo.tool.throughput use
    assemble(...), merge(test, results), failed(error)
    result_text, result_html, spec_text, spec_html, verdict(result)
"""

import copy

from . import spec as specs
from .render import (html_page, integer, number, pairs_html, pairs_text, show, strip_private,
                     tables, text_page, throughput_pairs)
from ..core import limits
from ..core import schema as schemas
from ..core import units
from ..core import validate as validation
from ..tool import runner  # the tool's own arithmetic: the slot it will ask pScheduler for

TEST = schemas.PAIR_TEST
SCHEMA = 1

# Wait for one path-MTU probe's answer (as pmtu's `timeout`).
DEFAULTS = dict(specs.THROUGHPUT_DEFAULTS, timeout="PT1S")
LEG_KEYS = tuple(sorted(schemas.DEFINITIONS["throughput-spec"]["properties"]))
HOST_KEYS = ("source", "source-node", "dest", "dest-node", "ip-version", "timeout")


# ------------------------------------------------------------------------------------------
# Spec

def _shape_problem(spec):
    properties = schemas.PAIR_SPEC_VERSIONS[spec.get("schema", 1)]["properties"]
    for key in sorted(spec, key=str):
        if key == "throughput":
            return ("At /throughput: the legs' settings are top-level members of a %s spec "
                    "(duration, omit, rounds, ...), not a throughput object" % TEST)
        if key in ("hops", "reverse", "flows", "target-mtu", "max-mtu", "min-mtu"):
            return ("At /%s: a pmtu setting; %s measures the path MTU with one flow only "
                    "(run the pmtu test for %s)" % (key, TEST, key))
        if key not in properties:
            return "At /%s: unknown field (allowed: %s)" % (key, ", ".join(sorted(properties)))
    if "dest" not in spec:
        return "At /dest: required field is missing"
    return None


def _semantic_problem(spec):
    # Hosts, families and the probe timeout: the pmtu spec's own checks on those members.
    problem = specs.semantic_problem(dict((k, spec[k]) for k in HOST_KEYS if k in spec))
    if problem:
        return problem
    if "duration" in spec:
        seconds = units.duration_seconds_or_none(spec["duration"])
        if seconds is None or not \
                specs.THROUGHPUT_DURATION_MIN <= seconds <= specs.THROUGHPUT_DURATION_MAX:
            return "At /duration: %s must be between PT%dS and PT%dS" % (
                spec["duration"], specs.THROUGHPUT_DURATION_MIN, specs.THROUGHPUT_DURATION_MAX)
    if "omit" in spec:
        seconds = units.duration_seconds_or_none(spec["omit"])
        if seconds is None or seconds > specs.THROUGHPUT_OMIT_MAX:
            return "At /omit: %s must be between PT0S and PT%dS" % (
                spec["omit"], specs.THROUGHPUT_OMIT_MAX)
    return _slot_problem(spec)


SLOT_FIELDS = "duration, omit, rounds, direction, order"


def _slot_problem(spec):
    """The exclusive slot the run would reserve on both nodes, against the node's limit
    (jumbo.core.limits: throughput-max-slot, PT10M by default)."""
    try:
        limit = limits.throughput_max_slot()
    except limits.LimitsError as err:
        return "At /duration: cannot check the slot: %s" % err
    seconds = runner.duration_seconds(internal_spec(spec))
    if seconds > limit:
        return ("At /duration: the run would reserve an exclusive slot of PT%dS on both nodes, "
                "more than this node allows (PT%dS, throughput-max-slot in %s); reduce %s"
                % (seconds, limit, limits.path(), SLOT_FIELDS))
    return None


def validate(spec):
    """Full validation of a jumbo-throughput spec: (True, None) or (False, "At /field: ...")."""
    return validation.validate_spec(spec, schemas.MAX_PAIR_SPEC_SCHEMA, _shape_problem,
                                    validation.check_pair_spec, _semantic_problem)


def require_valid(spec):
    return validation.require_valid(spec, validate)


def with_defaults(spec):
    full = copy.deepcopy(spec) if isinstance(spec, dict) else {}
    full.setdefault("schema", 1)
    for key, value in DEFAULTS.items():
        full.setdefault(key, value)
    return full


def participants(spec):
    """Always two: the source (lead, sends; null = this host) and the dest (runs iperf3 -s)."""
    require_valid(spec)
    lead = spec.get("source-node") or spec.get("source")
    answer = {"participants": [lead, spec.get("dest-node") or spec["dest"]]}
    if lead is None:
        answer["null-reason"] = "No source or source-node given: the test runs from this host"
    return answer


def internal_spec(spec):
    """The spec the tool runs: pmtu-shaped (one flow, no hops, no reverse) with the legs in a
    `throughput` object, as jumbo.tool.runner and jumbo.tool.throughput read it."""
    internal = {"schema": 1, "flows": 1, "hops": False, "reverse": False,
                "throughput": dict((k, spec[k]) for k in LEG_KEYS if k in spec)}
    for key in HOST_KEYS:
        if key in spec:
            internal[key] = spec[key]
    return internal


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
    ("duration", "--duration", "duration", "Length of each leg (%s)" % DEFAULTS["duration"]),
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
# Result (built on the source, merged on the lead)

# What the path-MTU step contributes, from the probe engine's answer.
PATH_FIELDS = ("path-mtu", "local-mtu", "pmtud", "dest-ip", "source-ip", "ip-version")
SUCCESS_VERDICTS = ("jumbo-faster", "jumbo-slower", "no-difference", "blackhole", "skipped")


def _base():
    return {"schema": SCHEMA, "succeeded": False, "error": None, "diags": "",
            "path-mtu": None, "pmtud": "unknown", "path-mtu-error": None,
            "runs": [], "standard": None, "jumbo": None, "gain": None, "gain-noise": None,
            "mathis": None, "verdict": "failed", "skipped": None, "jumbo-mtu": None,
            "notes": []}


def assemble(forward, forward_error, throughput, peer_error=None):
    """The test result from the path-MTU step's answer and the legs' `throughput` object.

    succeeded: the legs gave a verdict (a black hole or a skipped jumbo leg is a measurement);
    failed when no comparison could be made."""
    result = _base()
    if isinstance(forward, dict):
        for key in PATH_FIELDS:
            if forward.get(key) is not None:
                result[key] = forward[key]
    if result["path-mtu"] is None:
        result["path-mtu-error"] = forward_error or "the path MTU was not measured"
    if isinstance(throughput, dict):
        for key in ("runs", "standard", "jumbo", "gain", "gain-noise", "mathis", "verdict",
                    "skipped", "jumbo-mtu", "notes", "by-direction"):
            if key in throughput and throughput[key] is not None:
                result[key] = copy.deepcopy(throughput[key])
        error = throughput.get("error")
    else:
        error = peer_error or "the throughput legs did not run"
    result["succeeded"] = result["verdict"] in SUCCESS_VERDICTS
    if not result["succeeded"]:
        result["error"] = error or _first_leg_error(result) or "no leg gave a comparison"
    elif error:
        result["notes"] = list(result["notes"]) + [error]
    return _checked(result)


def _first_leg_error(result):
    for run in result.get("runs") or []:
        if isinstance(run, dict) and run.get("error"):
            return "leg %s: %s" % (run.get("order"), run["error"])
    return None


def _checked(result):
    valid, error = validation.check_pair_result(result)
    if valid:
        return result
    broken = _base()
    broken["error"] = "internal error: the result does not match its schema (%s)" % error
    broken["diags"] = result.get("diags") or ""
    return broken


def merge(test, participant_results):
    """merged-results: p0's result, with p1's iperf3 server report as `server`."""
    if not isinstance(participant_results, list) or not participant_results:
        return failed("no participant results to merge")
    lead = participant_results[0]
    inner = lead.get("result") if isinstance(lead, dict) else None
    if not isinstance(inner, dict) or "schema" not in inner:
        error = (lead or {}).get("error") if isinstance(lead, dict) else None
        return failed(str(error or "the source participant produced no result"),
                       str((lead or {}).get("diags") or "") if isinstance(lead, dict) else "")
    result = copy.deepcopy(inner)
    dest = participant_results[1] if len(participant_results) > 1 else None
    notes = [result.get("diags") or ""]
    if not isinstance(dest, dict):
        notes.append("the dest participant's result is missing")
    else:
        if not dest.get("succeeded"):
            notes.append("dest participant: %s" % (dest.get("error") or "failed"))
        server = (dest.get("result") or {}).get("throughput-server") \
            if isinstance(dest.get("result"), dict) else None
        if isinstance(server, dict):
            result["server"] = server
            if not server.get("succeeded") and result.get("succeeded") is False \
                    and not result.get("error"):
                result["error"] = "iperf3 server: %s" % server.get("error")
    result["diags"] = "; ".join(n for n in notes if n)
    return _checked(result)


def failed(error, diags=""):
    """A jumbo-throughput result that says why there is no measurement."""
    result = _base()
    result["error"] = error
    result["diags"] = diags
    return result


# ------------------------------------------------------------------------------------------
# result-format and spec-format

def verdict(result):
    """One line: the gain (with noise) or why there is none, and the path MTU it ran at."""
    result = result if isinstance(result, dict) else {}
    if result.get("succeeded") is False:
        return "Run failed: %s" % (result.get("error") or "no reason given")
    what = result.get("verdict")
    gain = number(result.get("gain"))
    noise = number(result.get("gain-noise"))
    size = integer(result.get("jumbo-mtu"))
    if what == "blackhole":
        line = "Jumbo legs stalled while 1500 flowed: black hole at MTU %s" % (size or "?")
    elif what == "skipped":
        line = "No jumbo leg: %s" % (result.get("skipped") or "path MTU not above 1500")
    elif gain is not None:
        line = "Jumbo (MTU %s) throughput x%.2f%s: %s" % (
            size or "?", gain, " +/- %.2f" % noise if noise is not None else "",
            {"jumbo-faster": "jumbo faster", "jumbo-slower": "jumbo slower",
             "no-difference": "no difference beyond the noise"}.get(what, what))
    else:
        line = "Throughput verdict: %s" % (what or "unknown")
    path = integer(result.get("path-mtu"))
    line += "; path MTU %s" % (path if path is not None else "unknown")
    return line


def _pairs(spec, result):
    pairs = [("Destination", result.get("dest-ip") or spec.get("dest")),
             ("IP version", result.get("ip-version") or spec.get("ip-version")),
             ("Path MTU", result.get("path-mtu")),
             ("Local MTU", result.get("local-mtu")),
             ("PMTUD", result.get("pmtud"))]
    if result.get("path-mtu-error"):
        pairs.append(("Path MTU not measured", result["path-mtu-error"]))
    pairs = [(label, show(value)) for label, value in pairs if value is not None]
    # The same lines as a pmtu result's throughput phase (render owns their wording).
    pairs += throughput_pairs({"throughput": result})
    for note in result.get("notes") or []:
        pairs.append(("Note", show(note)))
    return pairs


def result_text(spec, result):
    spec, result = strip_private(spec or {}), strip_private(result or {})
    return text_page(verdict(result), _pairs(spec, result), tables({"throughput": result}), result)


def result_html(spec, result):
    spec, result = strip_private(spec or {}), strip_private(result or {})
    return html_page(verdict(result), _pairs(spec, result), tables({"throughput": result}), result)


def _spec_pairs(spec):
    full = with_defaults(spec)
    keys = [k for k, _, _ in specs.ENDPOINT_OPTIONS] + [k for k, _, _, _ in _VALUES]
    return [(key, show(full[key]) + ("" if key in spec else " (default)"))
            for key in keys if key in full]


def spec_text(spec):
    return pairs_text(_spec_pairs(strip_private(spec)))


def spec_html(spec):
    return pairs_html(_spec_pairs(strip_private(spec))) + "\n"
