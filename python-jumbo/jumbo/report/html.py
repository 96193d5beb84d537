"""The self-contained HTML page: inline CSS and SVG only (no script, no external resource),
so it opens offline and can be mailed around. `to_html` (~80 lines) lays the sections out in
page order; the pieces with logic (matrix, trend chart, tables) are their own functions."""


from ..core.mtu import STANDARD_MTU, is_jumbo
from . import actions_view, confidence, firefly_view, telemetry_view
from .formatting import evidence, pct
from .render import change_mtus, culprit_affected, culprit_owner, host_sentence
from .safe_output import html_text as escape  # bidi controls neutralised too

RED, AMBER, GREEN, GREY, BLACK = "#d73027", "#f0a202", "#1a9850", "#d9d9d9", "#111111"
MAX_MATRIX = 80

CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#222;background:#fff}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ccc}
.meta{color:#555;font-size:13px}
.cards{display:flex;gap:16px;flex-wrap:wrap;margin-top:12px}
.card{border:1px solid #ccc;border-radius:6px;padding:10px 14px;min-width:220px}
.card .v{font-size:28px;font-weight:600} .card .l{font-size:12px;color:#555}
.met{color:#1a7f37} .notmet{color:#b42318}
table{border-collapse:collapse;font-size:13px} td,th{border:1px solid #ddd;padding:3px 7px;text-align:left}
th{background:#f3f3f3} tr.bh td{background:#fde8e8}
.legend span{display:inline-block;width:14px;height:14px;vertical-align:middle;margin:0 4px 0 12px}
svg text{font-family:system-ui,sans-serif}
"""


def colour(mtu, target):
    if mtu is None:
        return GREY
    if mtu <= STANDARD_MTU:
        return RED
    return GREEN if is_jumbo(mtu, target) else AMBER


def _card(label, value, note):
    return ('<div class="card"><div class="l">%s</div><div class="v">%s</div><div class="l">%s</div></div>'
            % (escape(label), escape(value), note))


def trend_svg(r):
    buckets = r["trend"]["buckets"]
    width, height, left, top, bottom, right = 900, 300, 50, 20, 50, 120
    pw, ph = width - left - right, height - top - bottom
    n = len(buckets)

    def x(i):
        return left + (pw * (i / float(n - 1)) if n > 1 else pw / 2.0)

    def y(v):
        return top + ph * (1 - v)

    parts = ['<svg id="trend-plot" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
             'viewBox="0 0 %d %d" role="img" aria-label="adoption trend">' % (width, height, width, height)]
    parts.append('<rect x="%d" y="%d" width="%d" height="%d" fill="#fafafa" stroke="#bbb"/>'
                 % (left, top, pw, ph))
    for v in (0, 0.25, 0.5, 0.75, 1.0):
        parts.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#e5e5e5"/>'
                     % (left, left + pw, y(v), y(v)))
        parts.append('<text x="%d" y="%.1f" font-size="11" text-anchor="end">%d%%</text>'
                     % (left - 6, y(v) + 4, int(v * 100)))
    for name, goal in r["targets"].items():
        parts.append('<line class="target-line" data-target="%s" x1="%d" x2="%d" y1="%.1f" y2="%.1f" '
                     'stroke="#7b3294" stroke-width="2" stroke-dasharray="6 4"/>'
                     % (name, left, left + pw, y(goal), y(goal)))
        parts.append('<text x="%d" y="%.1f" font-size="12" fill="#7b3294">%s %d%%</text>'
                     % (left + pw + 6, y(goal) + 4, name, int(goal * 100)))
    series = (("jumbo-results", "jumbo_results_share", "#2166ac"),
              ("configured-results", "configured_results_share", "#999999"),
              ("used", "used_share", "#1a9850"))
    for label, key, stroke in series:
        pts = [(x(i), y(b[key])) for i, b in enumerate(buckets) if b.get(key) is not None]
        if not pts:
            continue
        parts.append('<polyline class="trend-line" data-series="%s" fill="none" stroke="%s" '
                     'stroke-width="2.5" points="%s"/>'
                     % (label, stroke, " ".join("%.1f,%.1f" % p for p in pts)))
        for px, py in pts:
            parts.append('<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>' % (px, py, stroke))
    step = max(1, n // 10)
    for i, b in enumerate(buckets):
        if i % step == 0 or i == n - 1:
            parts.append('<text x="%.1f" y="%d" font-size="10" text-anchor="middle">%s</text>'
                         % (x(i), top + ph + 16, escape(str(b["bucket"])[5:])))
    parts.append('<text x="%d" y="%d" font-size="12" fill="#2166ac">jumbo results (share of '
                 'runs)</text>' % (left, height - 10))
    parts.append('<text x="%d" y="%d" font-size="12" fill="#777">configured results</text>'
                 % (left + 170, height - 10))
    sources = sorted(set(b.get("used_source") or "telemetry" for b in buckets
                         if b.get("used_share") is not None))
    if sources:
        parts.append('<text x="%d" y="%d" font-size="12" fill="#1a9850">used (bytes, %s)</text>'
                     % (left + 320, height - 10, escape(", ".join(sources))))
    parts.append("</svg>")
    return "\n".join(parts)


def matrix_svg(r):
    m = r["matrix"]
    target = r["target_mtu"]
    counts = {}
    for c in m["cells"]:
        counts[c["source_site"]] = counts.get(c["source_site"], 0) + c["paths"]
    sites = sorted(m["sites"], key=lambda s: (-counts.get(s, 0), s))[:MAX_MATRIX]
    sites.sort()
    n = len(sites)
    cell = max(8, min(32, int(760 / max(n, 1))))
    label = 110
    width = label + n * cell + 20
    height = label + n * cell + 20
    index = {s: i for i, s in enumerate(sites)}
    parts = ['<svg id="matrix-plot" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
             'viewBox="0 0 %d %d" role="img" aria-label="site by site path MTU">'
             % (width, height, width, height)]
    for s, i in index.items():
        parts.append('<text x="%d" y="%d" font-size="%d" text-anchor="end">%s</text>'
                     % (label - 4, label + i * cell + cell * 0.7, min(12, cell - 1), escape(s[:16])))
        cx = label + i * cell + cell * 0.6
        parts.append('<text x="%.1f" y="%d" font-size="%d" transform="rotate(-60 %.1f %d)">%s</text>'
                     % (cx, label - 4, min(12, cell - 1), cx, label - 4, escape(s[:16])))
    for c in m["cells"]:
        a, b = c["source_site"], c["dest_site"]
        if a not in index or b not in index:
            continue
        px, py = label + index[b] * cell, label + index[a] * cell
        fill = colour(c["min_mtu"], target)
        title = "%s -> %s: smallest path MTU %s, %d/%d paths capable, %d black holes" % (
            a, b, c["min_mtu"], c["capable"], c["paths"], c["blackholes"])
        parts.append('<rect class="cell" data-mtu="%s" x="%d" y="%d" width="%d" height="%d" fill="%s" '
                     'stroke="#fff"><title>%s</title></rect>'
                     % (c["min_mtu"] if c["min_mtu"] is not None else "", px, py, cell, cell, fill,
                        escape(title)))
        if c["blackholes"]:
            parts.append('<circle class="bh-marker" cx="%.1f" cy="%.1f" r="%.1f" fill="%s" '
                         'stroke="#fff" stroke-width="1"/>'
                         % (px + cell / 2.0, py + cell / 2.0, max(2.0, cell / 4.0), BLACK))
    parts.append("</svg>")
    legend = ('<div class="legend">'
              '<span style="background:%s"></span>&le; %d'
              '<span style="background:%s"></span>%d &ndash; %d'
              '<span style="background:%s"></span>&ge; %d (target)'
              '<span style="background:%s"></span>no measurement'
              '<span style="background:%s;border-radius:7px"></span>black hole on a path'
              '</div>' % (RED, STANDARD_MTU, AMBER, STANDARD_MTU + 1, target - 1, GREEN, target,
                          GREY, BLACK))
    note = ""
    if len(m["sites"]) > MAX_MATRIX:
        note = "<p>Showing the %d most measured of %d sites.</p>" % (MAX_MATRIX, len(m["sites"]))
    return legend + note + "\n".join(parts)


def gains_svg(r):
    measured = r["gains"].get("histogram") or []
    expected = r["expected_gains"].get("histogram") or []
    bins = measured or expected
    width, height, left, top, bottom = 900, 260, 50, 20, 50
    pw, ph = width - left - 20, height - top - bottom
    parts = ['<svg id="gains-plot" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
             'viewBox="0 0 %d %d" role="img" aria-label="gain distribution">' % (width, height, width, height)]
    parts.append('<rect x="%d" y="%d" width="%d" height="%d" fill="#fafafa" stroke="#bbb"/>'
                 % (left, top, pw, ph))
    if bins:
        nb = len(bins)
        slot = pw / float(nb)
        for series, data, fill, off in (("measured", measured, "#2166ac", 0.1),
                                        ("expected", expected, "#92c5de", 0.5)):
            total = float(sum(b["count"] for b in data)) or 1.0
            for i, b in enumerate(data):
                share = b["count"] / total
                h = ph * share
                parts.append('<rect class="bar bar-%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f" '
                             'fill="%s"><title>%s gain %s: %d paths</title></rect>'
                             % (series, left + slot * (i + off), top + ph - h, slot * 0.38, h, fill,
                                series, _bin(b), b["count"]))
        for i, b in enumerate(bins):
            parts.append('<text x="%.1f" y="%d" font-size="10" text-anchor="middle">%s</text>'
                         % (left + slot * (i + 0.5), top + ph + 14, _bin(b)))
    parts.append('<text x="%d" y="%d" font-size="12" fill="#2166ac">measured (paired throughput), '
                 'share of paths</text>' % (left, height - 10))
    parts.append('<text x="%d" y="%d" font-size="12" fill="#4393c3">expected (Mathis ceiling '
                 'ratio)</text>' % (left + 330, height - 10))
    parts.append("</svg>")
    return "\n".join(parts)


def _bin(b):
    return "x%g+" % b["from"] if b["to"] is None else "x%g-%g" % (b["from"], b["to"])


def _confidence(r):
    """How sure the jumbo verdicts are: the counts, and the least sure paths."""
    c = r.get("confidence")
    if not c:
        return ""
    rows = confidence.html_rows(r)
    return ('<h2 id="confidence">How sure the jumbo verdicts are</h2><p>%s</p>%s'
            % (escape(confidence.headline(c)),
               _table(confidence.HTML_HEADERS, rows) if rows else ""))


def _table(headers, rows, row_class=None):
    out = ["<table><tr>%s</tr>" % "".join("<th>%s</th>" % escape(h) for h in headers)]
    for i, row in enumerate(rows):
        cls = ' class="%s"' % row_class(i) if row_class and row_class(i) else ""
        out.append("<tr%s>%s</tr>" % (cls, "".join("<td>%s</td>" % escape("" if v is None else str(v))
                                                 for v in row)))
    out.append("</table>")
    return "\n".join(out)


def _telemetry(r):
    if not r.get("telemetry"):
        return ""
    return telemetry_view.html_section(r, _table)


def _fireflies(r):
    return firefly_view.html_section(r, _table) if r.get("fireflies") else ""


def _seen(b):
    """A black hole's evidence across runs (jumbo.archive.evidence), in a few words."""
    numbers = evidence(b)
    if numbers is None:
        return ""
    return "in %d of %d runs, %s of flows failed; %d of %d clean flows to clear" % numbers


def to_html(r):
    """The whole page: what to do first, the headline cards, then each section."""
    w = r["window"]
    target = r["target_mtu"]
    body = [
        "<h1>Jumbo-frame adoption%s</h1>" % (": site " + escape(r["site"]) if r.get("site") else ""),
        '<div class="meta">store %s &middot; %d pmtu results %s &ndash; %s &middot; target IP MTU %d '
        '&middot; generated %s</div>' % (escape(r["store"]), w["results"], escape(str(w["first"])),
                                         escape(str(w["last"])), target, escape(r["generated"])),
        actions_view.html(r, _table),
        '<div class="cards">%s</div>' % "".join(_cards(r)),
        "<ul>%s</ul>" % "".join(_status(r)),
        _telemetry(r),
        _fireflies(r),
        _confidence(r),
    ] + _blackholes_section(r) + _culprits_section(r) + _sites_section(r) + [
        '<h2 id="trend">Trend per %s: share of results (runs, not paths) that carried the target, '
        'with the DC26 and DC28 targets%s</h2>'
        % (escape(r["trend"]["interval"]), " (site %s's hosts' results)" % escape(r["site"]) if r.get("site") else ""),
        trend_svg(r),
        '<h2 id="gains">Jumbo gain</h2>',
        "<p>%s</p>" % escape(" ".join(_gain_text(r))),
        gains_svg(r),
    ] + _changes_section(r)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>Jumbo-frame adoption report</title><style>%s</style></head><body>\n%s\n</body></html>\n"
            % (CSS, "\n".join(body)))


def _cards(r):
    target = r["target_mtu"]
    return [
        _card("configured: hosts with MTU >= %d" % target, pct(r["configured"]),
              "%d of %d measuring hosts" % (r["configured_hosts"], r["hosts"])),
        _card("capable: paths carrying %d both ways" % target, pct(r["capable"]),
              "%d of %d directed paths, no black hole" % (r["capable_paths"], r["paths_measured"])),
        _card("paths measured one way only", str(r["paths_one_way"]),
              "reverse never measured: never counted capable; %d measured both ways"
              % r["paths_both_ways"]),
        _card("used: traffic-weighted", pct(r["used"]), _used_note(r)),
        _card("black holes", str(len(r["blackholes"])), "paths where big packets vanish"),
        _card("undecided", str(r.get("unknown_paths", 0)),
              "paths with a started flow left unconfirmed (PMTUD unknown): never counted "
              "capable"),
    ]


def _used_note(r):
    if r.get("telemetry"):
        return telemetry_view.used_card_note(r)
    if r.get("used_source") == "fireflies":
        return firefly_view.used_card_note(r)
    return "from the volume matrix" if r["used"] is not None else "no volume matrix given"


def _met(flag):
    return '<b class="%s">%s</b>' % ("met" if flag else "notmet", "met" if flag else "not met")


def _status(r):
    status = []
    for s in r["status"]:
        line = '%s (%s): paths %s' % (s["target"], pct(s["goal"]), _met(s["paths_met"]))
        if s["traffic_met"] is not None:
            line += ', traffic %s' % _met(s["traffic_met"])
        status.append("<li>%s</li>" % line)
    return status


def _blackholes_section(r):
    limit = min(r.get("limit") or len(r["blackholes"]), 50)   # the culprits table groups the rest
    rows = [(b["source"], b["dest"], b["family"], b["source_site"], b["dest_site"], b["size"],
             b["hop_ttl"], b["hop_ip"], "partial (per-flow)" if b["partial"] else "full",
             b["measured"], _seen(b))
            for b in r["blackholes"][:limit]]
    more = ("<p>... and %d more (all of them in the JSON and CSV output).</p>"
            % (len(r["blackholes"]) - limit)) if len(r["blackholes"]) > limit else ""
    return ['<h2 id="blackholes">Black holes: fix these first (%d)</h2>' % len(r["blackholes"]),
            _table(["source", "dest", "family", "source site", "dest site", "size vanishing", "hop",
                    "hop IP", "kind", "measured", "seen"], rows, lambda i: "bh") + more
            if rows else "<p>None.</p>"]


def _culprits_section(r):
    rows = [(c["hop_ip"], c["paths"], c["blackholes"], c["mtu"], culprit_owner(c),
             culprit_affected(c), "; ".join(c["examples"])) for c in r["culprits"]]
    return ['<h2 id="culprits">Likely culprits: hops shared by failing paths</h2>',
            _table(["hop", "failing paths", "black holes", "MTU", "owner", "affected sites",
                    "examples"], rows)
            if rows else "<p>No hop is shared by several failing paths.</p>",
            "<p>%s</p>" % escape(host_sentence(r))]


def _sites_section(r):
    rows = [(s["rank"], s["site"], s["hosts"], "/".join(str(m) for m in s["host_mtu"]),
             "%d/%d" % (s["out_capable"], s["out_paths"]), "%d/%d" % (s["in_capable"], s["in_paths"]),
             s["fails"], s["pmtud"], "%d (%s)%s" % (
                 s["unlocked_paths"], pct(s["unlocked"]),
                 "; %s of traffic" % pct(s["unlocked_traffic"]) if s["unlocked_traffic"] is not None else ""))
            for s in r["sites"]]
    return ['<h2 id="sites">Sites ranked by adoption unlocked if fixed</h2>',
            _table(["rank", "site", "hosts", "host MTU", "outbound capable", "inbound capable", "fails",
                    "PMTUD", "paths unlocked if fixed"], rows),
            '<h2 id="matrix">Site &times; site: smallest path MTU (rows source, columns destination)</h2>',
            matrix_svg(r)]


def _gain_text(r):
    target = r["target_mtu"]
    g, e = r["gains"]["summary"], r["expected_gains"]["summary"]
    if g:
        text = ["Measured gain (throughput at %d vs %d) on %d paths: median x%.2f, range x%.2f-x%.2f."
                % (target, STANDARD_MTU, r["gains"]["paths"], g["median"], g["min"], g["max"])]
    else:
        text = ["No paired throughput results in the window."]
    if e:
        text.append("Expected gain elsewhere (Mathis ceiling at each MSS from latency RTT and loss, "
                    "capped at %.3g bit/s) on %d paths: median x%.2f."
                    % (r["expected_gains"]["link_speed"], r["expected_gains"]["paths"], e["median"]))
    return text


def _changes_section(r):
    change_rows = [(c["start"], c["source"], c["dest"], c["family"], c["kind"], c["from"], c["to"],
                    change_mtus(c)) for c in r["changes"][:100]]
    day_rows = [(d["day"], d["regressions"], ", ".join(d["regressed"][:10]) + (
        " and %d more" % (d["regressions"] - 10) if d["regressions"] > 10 else ""))
        for d in r["change_days"] if d["regressions"]][:20]
    flap_rows = [(f["source"], f["dest"], f["family"], f["changes"], f["last_change"])
                 for f in r["flapping"][:100]]
    return [
        '<h2 id="changes">Changes (%d paths changed state)</h2>' % r["changed_paths"],
        "<h3>Regressions by day, most first</h3>",
        _table(["day", "paths that lost the target", "paths"], day_rows) if day_rows else "<p>None.</p>",
        "<h3>Changes, newest first (flapping paths apart)</h3>",
        _table(["when", "source", "dest", "family", "kind", "from", "to", "MTU"], change_rows)
        if change_rows else "<p>None.</p>",
        "<h3>Flapping paths (%d)</h3>" % len(r["flapping"]),
        _table(["source", "dest", "family", "changes", "last change"], flap_rows)
        if flap_rows else "<p>None.</p>",
    ]
