"""Human-readable text and HTML for pmtu specs and results (result-format, spec-format).

The verdict comes first, in one line a network engineer reads at a glance, then the detail.
Every function copes with partial results (any field missing or null), and never renders a
member whose name starts with `_`: result-format output is served without the task key.
In HTML every value is escaped, whatever its origin.

    result_text(spec, result) / result_html(spec, result)
    spec_text(spec) / spec_html(spec)
    verdict(result) -> the one-line verdict (jumbocheck prints the same line)

What jumbo.testtype.pair (the jumbo-throughput test) renders with the same wording:
    number(value), integer(value), show(value)      a value read and shown leniently
    throughput_pairs(result), tables(result)        a throughput phase's lines and tables
    text_page / html_page(verdict line, pairs, tables, result), pairs_text / pairs_html(pairs)
"""

import html

from ..core import schema as schemas
from ..core.mtu import is_jumbo
from ..core.result.pmtu import Blackhole, Flow, Hop, PmtuResult, Ptb
from ..core.result.pair import Leg, PairResult, Throughput
from ..core.spec.typed import with_defaults
from .values import as_dict as _obj, bits as _bits, percent as _percent
from .values import integer, number, rtt_ms as _rtt, show


def strip_private(value):
    """A copy without `_`-prefixed members, at every depth."""
    if isinstance(value, dict):
        return {k: strip_private(v) for k, v in value.items()
                if not (isinstance(k, str) and k.startswith("_"))}
    if isinstance(value, list):
        return [strip_private(v) for v in value]
    return value


def pmtu_result(value):
    """A pmtu result as its typed object, read once at the door (result-format's JSON, a
    stored result), its `_`-prefixed members left out; a PmtuResult is taken as it is. A
    member of a shape the schema would refuse reads as missing below (values.py)."""
    if isinstance(value, PmtuResult):
        return value
    return PmtuResult.from_json(strip_private(_obj(value)))


def _parts(value, kind):
    """The items of a list member that are parts of `kind` (others read as missing)."""
    return [item for item in value if isinstance(item, kind)] if isinstance(value, list) else []


# ------------------------------------------------------------------------------------------
# The verdict: the headline (the path MTU against the target), what the PMTUD state and the
# black hole add to it, then the notes (flows, reverse path, throughput). Whether the path is
# jumbo is core.mtu.is_jumbo's answer, never worked out here.

def _flows_note(result):
    flows = _parts(result.flows, Flow)
    if len(flows) < 2:
        return None
    mtus = [integer(flow.path_mtu) for flow in flows]
    holes = [flow for flow in flows if flow.pmtud == "blackhole"]
    if len(set(mtus)) > 1 or 0 < len(holes) < len(flows):
        if holes:
            return "%d of %d flows black-holed (ECMP)" % (len(holes), len(flows))
        known = [m for m in mtus if m is not None]
        return "flows disagree (path MTU %s-%s, ECMP)" % (
            min(known) if known else "?", max(known) if known else "?")
    return None


def _undecided(result, target):
    """The verdict of a run that left flows unmeasured, its path MTU reaching the target."""
    flows = _parts(result.flows, Flow)
    if not flows:
        return "Path MTU not decided: %d carried, flows left unmeasured; PMTUD unknown" % target
    missing = sum(1 for flow in flows if flow.pmtud == "unknown"
                  or integer(flow.path_mtu) is None)
    carried = sum(1 for flow in flows if flow.pmtud != "blackhole"
                  and is_jumbo(integer(flow.path_mtu), target, flow.pmtud))
    return ("Path MTU not decided: %d of %d flows carried %d, %d not measured (run cut short); "
            "PMTUD unknown" % (carried, len(flows), target, missing))


def _jumbo(path, target, pmtud):
    """The `jumbo` verdict (core.mtu.is_jumbo); None without a target to judge against."""
    return None if target is None else is_jumbo(path, target, pmtud)


def _headline(path, target, jumbo, pmtud):
    if path is None:
        return "Path MTU unknown" + (": black hole" if pmtud == "blackhole" else "")
    if jumbo is False:
        return "Path MTU %d < %d" % (path, target)
    return "Path MTU %d" % path


def _hop_words(result, ttl, ip=None):
    """"hop N (address)", the address from the result's hop table when not given."""
    if ip is None:
        ip = next((h.ip for h in _parts(result.hops, Hop) if integer(h.ttl) == ttl), None)
    return "hop %d (%s)" % (ttl, ip) if isinstance(ip, str) and ip else "hop %d" % ttl


def hole_position(result):
    """Where big packets vanish, in an operator's words: the blackhole's `ttl` is the last
    hop they reach (0: none), so the hole is on the link between it and the next hop."""
    hole = result.blackhole if isinstance(result.blackhole, Blackhole) else Blackhole()
    ttl = integer(hole.ttl)
    if ttl is None or ttl < 0:
        return None
    before = "this host" if ttl == 0 else _hop_words(result, ttl, hole.ip)
    return "between %s and %s" % (before, _hop_words(result, ttl + 1))


def _where_it_vanishes(result, path, target):
    """A forward black hole: the hop, and the sizes that vanish."""
    hole = result.blackhole if isinstance(result.blackhole, Blackhole) else Blackhole()
    where = "black hole"
    position = hole_position(result)
    if position:
        where += " " + position
    top = integer(result.local_mtu) or target or integer(hole.size)
    if top is not None and top > path:
        return where + ", %d-%d byte packets vanish" % (path + 1, top)
    return where + ", larger packets vanish"


def _not_jumbo(result, pmtud):
    """A path below the target: what PMTUD does about it."""
    line = "not jumbo"
    if pmtud == "ok":
        senders = [p.sender for p in _parts(result.ptb, Ptb) if p.useful and p.sender]
        line += ", PMTUD works"
        if senders:
            line += " (too-big from %s)" % senders[0]
    elif pmtud == "not-needed":
        line += ", PMTUD not needed"
    elif pmtud == "unknown":
        line += ", PMTUD could not be checked"
    return line


def _detail(result, path, target, jumbo, pmtud):
    """What follows a measured path MTU: where big packets vanish, or jumbo or not."""
    if pmtud == "blackhole":
        return _where_it_vanishes(result, path, target)
    if not jumbo:
        return _not_jumbo(result, pmtud)
    if pmtud == "not-needed":
        return "jumbo end to end, PMTUD not needed"
    if pmtud == "ok":
        return "jumbo end to end, PMTUD works"
    return "jumbo end to end"


def _notes(result, path, undecided):
    notes = []
    flows = None if undecided else _flows_note(result)
    if flows:
        notes.append(flows)
    unmeasured = integer(result.flows_not_measured)
    if unmeasured:
        # Asked for, never probed (the dest's ICMP budget): they cleared nothing.
        notes.append("%d of %d flows not measured (the dest's ICMP rate limit)"
                     % (unmeasured, unmeasured + len(_parts(result.flows, Flow))))
    reverse = integer(result.reverse_path_mtu)
    if reverse is not None and reverse != path:
        notes.append("reverse path MTU %d" % reverse)
    elif result.reverse_pmtud == "blackhole":
        notes.append("reverse path has a black hole")
    phase = result.throughput
    gain = number(phase.gain) if isinstance(phase, Throughput) else None
    if gain is not None:
        notes.append("jumbo throughput x%.2f" % gain)
    return notes


def verdict(result):
    """One line: the path MTU against the target, the PMTUD state, where big packets vanish."""
    result = pmtu_result(result)
    if result.succeeded is False:
        error = result.error
        return "Run failed: %s" % (error if isinstance(error, str) and error else "no reason given")
    path = integer(result.path_mtu)
    target = integer(result.target_mtu)
    pmtud = result.pmtud
    jumbo = _jumbo(path, target, pmtud)
    # Undecided (jumbo.archive.path_state's `unknown`, never jumbo): the path MTU reaches the
    # target but flows were left unmeasured, and they may be the ones a partial black hole eats.
    undecided = path is not None and target is not None and jumbo is None
    if undecided:
        line = _undecided(result, target)
    else:
        line = _headline(path, target, jumbo, pmtud)
        if path is not None:
            line += ": " + _detail(result, path, target, jumbo, pmtud)
    notes = _notes(result, path, undecided)
    if notes:
        line += "; " + "; ".join(notes)
    return line


# ------------------------------------------------------------------------------------------
# Detail, as (title, header, rows) tables and (label, value) pairs, shared by text and HTML

def _elapsed(seconds):
    """Seconds above one second, else milliseconds: a path-MTU run often takes a few ms, and
    "0.00 s" said nothing."""
    if seconds >= 1:
        return "%.2f s" % seconds
    return "%s ms" % ("%.1f" % (seconds * 1000)).rstrip("0").rstrip(".")


def _summary(spec, result):
    pairs = [
        ("Destination", result.dest_ip or spec.get("dest")),
        ("IP version", result.ip_version or spec.get("ip-version")),
        ("Path MTU", result.path_mtu),
        ("Local MTU", result.local_mtu),
        ("Target MTU", result.target_mtu or spec.get("target-mtu")),
        ("Jumbo", result.jumbo),
        ("PMTUD", result.pmtud),
        ("Method", result.method),
    ]
    if isinstance(result.blackhole, Blackhole):
        pairs.append(("Black hole", "%s, packets of %s bytes vanish" % (
            hole_position(result) or "position unknown", show(result.blackhole.size))))
    if result.has("reverse_path_mtu") or result.has("reverse_pmtud"):
        pairs.append(("Reverse path MTU", result.reverse_path_mtu))
        pairs.append(("Reverse PMTUD", result.reverse_pmtud))
    ptb = _parts(result.ptb, Ptb)
    if ptb:
        pairs.append(("Too-big messages", ", ".join(
            "%s (MTU %s%s)" % (show(p.sender), show(p.mtu),
                               "" if p.useful or not p.has("useful") else ", ignored")
            for p in ptb)))
    if result.has("probes"):
        pairs.append(("Probes sent", result.probes))
    if number(result.elapsed) is not None:
        pairs.append(("Elapsed", _elapsed(result.elapsed)))
    if result.rtt is not None:
        pairs.append(("Round trip", _rtt(result.rtt)))
    return [(label, show(value)) for label, value in pairs if value is not None]


def tables(result):
    """The detail tables of a pmtu result: [(title, header, rows)] for its flows, hops and
    throughput runs (each only when present)."""
    out = []
    flows = _parts(result.flows, Flow)
    if flows:
        out.append(("Flows", ["Flow", "Source port", "Flow label", "Path MTU", "PMTUD"], [
            [show(i if f.flow is None and not f.has("flow") else f.flow), show(f.source_port),
             show(f.flow_label), show(f.path_mtu), show(f.pmtud)] for i, f in enumerate(flows)]))
    hops = _parts(result.hops, Hop)
    if hops:
        out.append(("Hops", ["TTL", "Address", "MTU", "RTT"], [
            [show(h.ttl), show(h.ip), show(h.mtu), _rtt(h.rtt)] for h in hops]))
    return out + runs_tables(result.throughput)


def runs_tables(phase):
    """The throughput runs' table of a phase (a Throughput, or a PairResult: its legs at its
    top level), or none."""
    runs = _parts(getattr(phase, "runs", None), Leg) if isinstance(phase, (Throughput, PairResult)) \
        else []
    if not runs:
        return []
    return [("Throughput runs", [
        "#", "Direction", "MTU", "MSS", "Seen MSS", "Throughput", "Retransmits",
        "CPU send", "CPU recv", "RTT", "OK"], [
        [show(r.order), show(r.direction), show(r.mtu), show(r.mss), show(r.observed_mss),
         _bits(r.throughput), show(r.retransmits), _percent(r.cpu_sender),
         _percent(r.cpu_receiver), _rtt(r.rtt),
         show(r.succeeded) if r.error is None else "no: %s" % r.error]
        for r in runs])]


def _ceiling(size):
    """The bit rate of one size's Mathis entry: jumbo.tool.throughput.mathis() gives an object
    ({"ceiling": bit/s, "mss", "rtt", "loss", ...}) or null; a bare number is taken as is."""
    if isinstance(size, dict):
        return size.get("ceiling")
    return size


def throughput_pairs(phase):
    """[(label, text)] of a throughput phase (a Throughput, or a PairResult: its legs' members
    at its top level); none without one."""
    if not isinstance(phase, (Throughput, PairResult)):
        return []
    pairs = []
    if phase.skipped:
        pairs.append(("Throughput phase", "skipped: %s" % show(phase.skipped)))
    for agg, label in ((phase.standard, "Standard MTU"), (phase.jumbo, "Jumbo MTU")):
        agg = _obj(agg)
        if agg:
            text = "mean %s" % _bits(agg.get("mean"))
            if number(agg.get("stdev")) is not None:
                text += ", stdev %s" % _bits(agg.get("stdev"))
            if agg.get("runs") is not None:
                text += ", %s runs" % show(agg.get("runs"))
            pairs.append((label, text))
    gain = number(phase.gain)
    if gain is not None:
        text = "x%.2f" % gain
        noise = number(phase.gain_noise)
        if noise is not None:
            text += " (+/- %.2f)" % noise
        pairs.append(("Gain (jumbo / standard)", text))
    mathis = _obj(phase.mathis)
    if mathis:
        pairs.append(("Mathis ceiling", "standard %s, jumbo %s" % (
            _bits(_ceiling(mathis.get("standard"))), _bits(_ceiling(mathis.get("jumbo"))))))
    if phase.verdict is not None:
        pairs.append(("Throughput verdict", show(phase.verdict)))
    return pairs


def _inputs(spec, result):
    """The spec's JSON and the result, typed once (pmtu_result)."""
    spec = strip_private(_obj(spec))
    result = pmtu_result(result)
    if result.target_mtu is None and integer(spec.get("target-mtu", 0)) is not None:
        result.target_mtu = with_defaults(spec)["target-mtu"]
    return spec, result


# ------------------------------------------------------------------------------------------
# Text

def _text_table(header, rows):
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    lines = []
    for row in [header] + rows:
        lines.append("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)).rstrip())
    return lines


def _aligned(pairs):
    """(label, value) pairs as "label:  value" lines, the values in one column."""
    width = max([len(label) for label, _ in pairs] or [0])
    return ["%s  %s" % ((label + ":").ljust(width + 1), value) for label, value in pairs]


def text_page(line, pairs, tables_, result):
    """A result as plain text: its verdict `line`, the (label, value) `pairs`, the (title,
    header, rows) `tables_`, and the diagnostics of a failed run."""
    lines = [line, ""] + _aligned(pairs)
    for title, header, rows in tables_:
        lines += ["", title + ":"] + ["  " + row for row in _text_table(header, rows)]
    if result.succeeded is False and result.diags:
        lines += ["", "Diagnostics:", str(result.diags)]
    return "\n".join(lines).rstrip() + "\n"


def pairs_text(pairs):
    """A spec's (key, value) pairs as text."""
    return "\n".join(_aligned(pairs)) + "\n"


def result_text(spec, result):
    """Plain text: the verdict line, then the summary, tables and throughput."""
    spec, result = _inputs(spec, result)
    return text_page(verdict(result), _summary(spec, result)
                     + throughput_pairs(result.throughput), tables(result), result)


# spec-format's order: the hosts, the sizes, what the run measures. Any other field of the
# spec's schema follows, so a field added there is never left unshown (`reflector` was).
SPEC_ORDER = ("source", "source-node", "dest", "dest-node", "ip-version", "target-mtu",
              "max-mtu", "min-mtu", "flows", "hops", "reverse", "reflector", "timeout")


def _spec_pairs(spec):
    full = with_defaults(spec)
    pairs = []
    properties = schemas.SPEC_VERSIONS[schemas.MAX_SPEC_SCHEMA]["properties"]
    for key in SPEC_ORDER + tuple(sorted(set(properties) - set(SPEC_ORDER) - {"schema"})):
        if key in full:
            pairs.append((key, show(full[key]) + ("" if key in spec else " (default)")))
    return pairs


def spec_text(spec):
    return pairs_text(_spec_pairs(strip_private(_obj(spec))))


# ------------------------------------------------------------------------------------------
# HTML (a fragment; every value escaped)

def _escape(value):
    return html.escape(str(value), quote=True)


def pairs_html(pairs):
    rows = "".join("<tr><th>%s</th><td>%s</td></tr>" % (_escape(label), _escape(value))
                   for label, value in pairs)
    return "<table>%s</table>" % rows


def _html_table(title, header, rows):
    head = "".join("<th>%s</th>" % _escape(cell) for cell in header)
    body = "".join("<tr>%s</tr>" % "".join("<td>%s</td>" % _escape(cell) for cell in row)
                   for row in rows)
    return "<h4>%s</h4><table><tr>%s</tr>%s</table>" % (_escape(title), head, body)


def html_page(line, pairs, tables_, result):
    """text_page's content as an HTML fragment."""
    parts = ["<p><b>%s</b></p>" % _escape(line), pairs_html(pairs)]
    parts += [_html_table(*table) for table in tables_]
    if result.succeeded is False and result.diags:
        parts.append("<pre>%s</pre>" % _escape(result.diags))
    return "\n".join(parts) + "\n"


def result_html(spec, result):
    spec, result = _inputs(spec, result)
    return html_page(verdict(result), _summary(spec, result)
                     + throughput_pairs(result.throughput), tables(result), result)


def spec_html(spec):
    return pairs_html(_spec_pairs(strip_private(_obj(spec)))) + "\n"
