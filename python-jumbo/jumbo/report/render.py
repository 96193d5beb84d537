"""Text, JSON and CSV renderings of the report dict (the HTML page is in html.py).

`to_text` is the printed page: one function per section, in reading order, each a few lines
of formatting; the telemetry section (telemetry_view.py) is put in when the report has one."""

import csv
import io
import json

from ..core.mtu import STANDARD_MTU
from . import firefly_view, telemetry_view
from .formatting import evidence, metric_rows, pct, share
from .safe_output import csv_cell, text_line


def to_json(report):
    # allow_nan=False: NaN and Infinity are not JSON; a report carrying one fails loudly
    # instead of writing a file no JSON reader takes (the inputs are bounded: telemetry.py)
    return json.dumps(report, indent=2, sort_keys=False, default=_default, allow_nan=False) + "\n"


def _default(value):
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    return str(value)


def _mtu(v):
    return "-" if v is None else str(v)


def _seen(b):
    """A black hole's evidence across runs (jumbo.archive.evidence), when it has some."""
    numbers = evidence(b)
    if numbers is None:
        return ""
    return ("; seen in %d of %d runs, %s of flows failed (%d of %d clean flows needed to clear "
            "it)" % numbers)


def to_text(r):
    out = []
    for section in (_title, _headline, _blackholes, _culprits, _sites, _matrix, _trend, _gains):
        out += section(r) + [""]
    out += _changes(r)
    if r.get("telemetry"):
        out = telemetry_view.amend_text(r, out)
    if r.get("fireflies"):
        out = firefly_view.amend_text(r, out)
    return "\n".join(text_line(line) for line in out) + "\n"


def _title(r):
    w = r["window"]
    return ["Jumbo-frame adoption report",
            "store %s, %d pmtu results from %s to %s, target IP MTU %d"
            % (r["store"], w["results"], w["first"], w["last"], r["target_mtu"])]


def _headline(r):
    out = ["Headline (three separate numbers)"]
    add = out.append
    add("  configured %7s  of %d measuring hosts have interface MTU >= %d"
        % (pct(r["configured"]), r["hosts"], r["target_mtu"]))
    add("  capable    %7s  of %d directed paths carry %d both ways, no black hole (%d paths)"
        % (pct(r["capable"]), r["paths"], r["target_mtu"], r["capable_paths"]))
    add("  undecided  %7s  of %d directed paths: flows left unmeasured, PMTUD unknown (%d paths;"
        " never counted capable)" % (pct(share(r.get("unknown_paths", 0), r["paths"])), r["paths"],
                                    r.get("unknown_paths", 0)))
    if r["used"] is not None and r["traffic"]:
        t = r["traffic"]
        add("  used       %7s  of measured traffic (volume matrix; %.3g of %.3g bytes measured)"
            % (pct(r["used"]), t["measured_bytes"], t["bytes"]))
    else:
        add("  used           n/a  (give --volumes CSV for the traffic-weighted share)")
    for s in r["status"]:
        line = "  %s target %s: paths %s" % (s["target"], pct(s["goal"]),
                                             "met" if s["paths_met"] else "NOT met")
        if s["traffic_met"] is not None:
            line += ", traffic %s" % ("met" if s["traffic_met"] else "NOT met")
        add(line)
    if r["reverse_unknown"]:
        add("  (%d paths have no reverse-direction measurement: judged on their forward direction)"
            % r["reverse_unknown"])
    return out


def _blackholes(r):
    out = ["Black holes: fix these first (%d)" % len(r["blackholes"])]
    shown = r["blackholes"][:r.get("limit") or len(r["blackholes"])]
    for b in shown:
        out.append("  %s -> %s  [%s -> %s]  %s%s vanishes at hop %s %s"
                   % (b["source"], b["dest"], b["source_site"], b["dest_site"],
                      "size %s" % b["size"] if b["size"] else "large packets",
                      "", b["hop_ttl"] if b["hop_ttl"] is not None else "?", b["hop_ip"] or "?")
                   + ("  (partial: some flows only)" if b["partial"] else "") + _seen(b))
    if not r["blackholes"]:
        out.append("  none")
    elif len(shown) < len(r["blackholes"]):
        out.append("  ... and %d more (all of them in the JSON and CSV output)"
                   % (len(r["blackholes"]) - len(shown)))
    return out


def _culprits(r):
    out = ["Likely culprits: hops shared by failing paths (%d)" % len(r["culprits"])]
    for c in r["culprits"]:
        what = "black hole on %d paths" % c["blackholes"] if c["blackholes"] else ""
        if c["mtu"] is not None:
            what = ("%s, " % what if what else "") + "MTU %d" % c["mtu"]
        sites = ", ".join(c["sites"][:6]) + (" and %d more" % (len(c["sites"]) - 6)
                                              if len(c["sites"]) > 6 else "")
        out.append("  %-18s %4d failing paths  %s  sites: %s" % (c["hop_ip"], c["paths"], what, sites))
    if r["host_limited"]:
        out.append("  %d failing paths are limited by an end host's own MTU (configuration, not a "
                   "hop)" % r["host_limited"])
    return out


def _sites(r):
    out = ["Sites, ranked by adoption unlocked if fixed",
           "  %-4s %-16s %5s %-11s %-9s %-9s %-8s %-18s %s"
           % ("rank", "site", "hosts", "host MTU", "out ok", "in ok", "fails", "PMTUD", "unlocked")]
    for s in r["sites"]:
        mtus = "/".join(str(m) for m in s["host_mtu"]) or "-"
        out.append("  %-4d %-16s %5d %-11s %-9s %-9s %-8s %-18s %d paths (%s)%s"
                   % (s["rank"], s["site"][:16], s["hosts"], mtus,
                      "%d/%d" % (s["out_capable"], s["out_paths"]),
                      "%d/%d" % (s["in_capable"], s["in_paths"]),
                      s["fails"], s["pmtud"], s["unlocked_paths"], pct(s["unlocked"]),
                      ", %s of traffic" % pct(s["unlocked_traffic"])
                      if s["unlocked_traffic"] is not None else ""))
    return out


def _matrix(r):
    m = r["matrix"]
    sites = m["sites"]
    if len(sites) > 30:
        return ["Site x site matrix: %d sites (see the HTML, JSON or CSV output)" % len(sites)]
    out = ["Site x site matrix: smallest path MTU (rows: source, columns: destination; * = black "
           "hole)"]
    cells = {(c["source_site"], c["dest_site"]): c for c in m["cells"]}
    out.append("  %-10s " % "" + " ".join("%7s" % s[:7] for s in sites))
    for a in sites:
        line = []
        for b in sites:
            c = cells.get((a, b))
            if not c:
                line.append("%7s" % ".")
            else:
                line.append("%7s" % (_mtu(c["min_mtu"]) + ("*" if c["blackholes"] else "")))
        out.append("  %-10s " % a[:10] + " ".join(line))
    return out


def _trend(r):
    t = r["trend"]
    out = ["Trend per %s: capable share of results (DC26 50%%, DC28 99%%)" % t["interval"]]
    for b in t["buckets"]:
        bar = "#" * int(round(40 * (b["capable_share"] or 0)))
        out.append("  %s %7s %-40s %d results, %d black-hole results%s"
                   % (b["bucket"], pct(b["capable_share"]), bar, b["results"], b["blackholes"],
                      ", %d undecided" % b["unknown"] if b.get("unknown") else ""))
    return out


def _gains(r):
    out = []
    g = r["gains"]
    if g["summary"]:
        s = g["summary"]
        out.append("Measured jumbo gain (throughput at %d vs %d), %d paths: median x%.2f (x%.2f .. "
                   "x%.2f)" % (r["target_mtu"], STANDARD_MTU, g["paths"], s["median"], s["min"],
                               s["max"]))
    else:
        out.append("Measured jumbo gain: no paired throughput results")
    e = r["expected_gains"]
    if e["summary"]:
        s = e["summary"]
        out.append("Expected gain elsewhere (Mathis ceiling from latency RTT and loss, link cap "
                   "%.3g bit/s), %d paths: median x%.2f (x%.2f .. x%.2f)"
                   % (e["link_speed"], e["paths"], s["median"], s["min"], s["max"]))
    else:
        out.append("Expected gain: no latency results to estimate from")
    return out


def _changes(r):
    out = ["Changes: %d paths changed state (%d changes); newest first"
           % (r["changed_paths"], r["total_changes"] or 0)]
    for c in r["changes"][:20]:
        out.append("  %s  %s -> %s  %s -> %s" % (c["start"], c["source"], c["dest"], c["from"],
                                                 c["to"]))
    out.append("Flapping paths (%d)" % len(r["flapping"]))
    for f in r["flapping"][:20]:
        out.append("  %s -> %s  %d changes, last %s" % (f["source"], f["dest"], f["changes"],
                                                         f["last_change"]))
    return out


def rows(r):
    """The report as long-format rows: (section, item, metric, value)."""
    summary = dict(r, blackholes=len(r["blackholes"]), unknown_paths=r.get("unknown_paths", 0))
    for row in metric_rows("summary", "mesh", summary, (
            "paths", "capable_paths", "capable", "hosts", "configured_hosts", "configured", "used",
            "blackholes", "unknown_paths", "target_mtu")):
        yield row
    for s in r["status"]:
        yield ("target", s["target"], "goal", s["goal"])
        yield ("target", s["target"], "paths_met", s["paths_met"])
        yield ("target", s["target"], "traffic_met", s["traffic_met"])
    for b in r["blackholes"]:
        item = "%s->%s" % (b["source"], b["dest"])
        for k in ("ip_version", "source_site", "dest_site", "partial", "size", "hop_ttl", "hop_ip",
                  "path_mtu", "measured", "seen", "runs", "failed_share", "clean_flows",
                  "needed_flows"):
            yield ("blackhole", item, k, b[k])
    for c in r["culprits"]:
        yield ("culprit", c["hop_ip"], "paths", c["paths"])
        yield ("culprit", c["hop_ip"], "blackholes", c["blackholes"])
        yield ("culprit", c["hop_ip"], "mtu", c["mtu"])
    for s in r["sites"]:
        for k in ("rank", "hosts", "configured", "out_paths", "out_capable", "in_paths", "in_capable",
                  "capable", "fails", "blackholes", "pmtud", "unlocked_paths", "unlocked",
                  "unlocked_traffic"):
            yield ("site", s["site"], k, s[k])
        yield ("site", s["site"], "host_mtu", "/".join(str(m) for m in s["host_mtu"]))
    for c in r["matrix"]["cells"]:
        item = "%s->%s" % (c["source_site"], c["dest_site"])
        for k in ("paths", "capable", "min_mtu", "max_mtu", "blackholes"):
            yield ("matrix", item, k, c[k])
    for b in r["trend"]["buckets"]:
        for k in ("results", "capable", "configured", "blackholes", "unknown", "capable_share",
                  "configured_share"):
            yield ("trend", b["bucket"], k, b[k])
    for name in ("gains", "expected_gains"):
        summary = r[name]["summary"] or {}
        yield (name, "mesh", "paths", r[name]["paths"])
        for k in ("min", "p25", "median", "p75", "max", "mean"):
            if k in summary:
                yield (name, "mesh", k, summary[k])
    for c in r["changes"]:
        yield ("change", "%s->%s" % (c["source"], c["dest"]), c["start"], "%s->%s" % (c["from"], c["to"]))
    yield ("summary", "mesh", "changed_paths", r["changed_paths"])
    for f in r["flapping"]:
        yield ("flapping", "%s->%s" % (f["source"], f["dest"]), "changes", f["changes"])
    if r.get("telemetry"):
        for row in telemetry_view.rows(r):
            yield row
    if r.get("fireflies"):
        for row in firefly_view.rows(r):
            yield row


def to_csv(r):
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(("section", "item", "metric", "value"))
    for row in rows(r):
        section, item, metric, value = row
        if value is None:
            value = ""
        elif isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, float):
            value = repr(value)
        elif isinstance(value, str):
            value = csv_cell(value)  # numbers stay numbers (a negative one is no formula)
        writer.writerow((csv_cell(str(section)), csv_cell(str(item)), csv_cell(str(metric)),
                         value))
    return buf.getvalue()
