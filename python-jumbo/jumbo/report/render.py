"""Text, JSON and CSV renderings of the report dict (the HTML page is in html.py).

`to_text` is the printed page: one function per section, in reading order, each a few lines
of formatting; the telemetry section (telemetry_view.py) is put in when the report has one."""

import csv
import io
import itertools
import json

from ..core.mtu import STANDARD_MTU
from . import actions_view, confidence, firefly_view, path_record, telemetry_view
from .formatting import evidence, metric_rows, pct, share
from .safe_output import csv_cell, text_line


PATH_CHUNK, HEADER_BATCH = 2048, 8192


def to_json(report):
    return "".join(json_pieces(report))


def json_pieces(report):
    """The JSON text of the report, piece by piece (joined: to_json): a writer streams them,
    so that the text of the per-path list (most of the file: ~135 MB for 718,800 paths) is
    never held whole, nor a second time."""
    # allow_nan=False: NaN and Infinity are not JSON; a report carrying one fails loudly
    # instead of writing a file no JSON reader takes (the inputs are bounded: telemetry.py)
    paths = report.get("paths")
    if not isinstance(paths, list):
        yield json.dumps(report, indent=2, sort_keys=False, default=_default,
                         allow_nan=False) + "\n"
        return
    # The per-path list (there may be 720,000 records) is columnar: `path_fields` names the
    # values of each row of `paths` (path_record.FIELDS). Arrays of values, encoded by the C
    # encoder a chunk of rows per line, cost far less than objects would: they are most of
    # the file (43 MB as objects for 90,000 paths).
    # The rest of the report, indented: json's indenting encoder is its Python one, whose
    # pieces (millions for 50,000 black holes) are passed on a batch at a time, not joined
    # whole (that list alone was ~150 MB). The object's closing "\n}" is cut: the paths follow.
    encoder = json.JSONEncoder(indent=2, sort_keys=False, default=_default, allow_nan=False)
    pieces = encoder.iterencode(dict_without(report, "paths"))
    tail = ""
    while True:
        # islice and join take a batch in C: a Python step per piece cost 4 % of the report.
        text = "".join(itertools.islice(pieces, HEADER_BATCH))
        if not text:
            break
        if len(text) >= 2 and tail:     # a last batch of "}" alone joins the one before
            yield tail
        tail = tail + text if len(text) < 2 else text
    fields = path_record.FIELDS
    yield '%s,\n  "path_fields": %s,\n  "paths": [\n    ' % (tail[:-2], json.dumps(list(fields)))
    separator = ""
    for i in range(0, len(paths), PATH_CHUNK):     # a chunk at a time: bounded memory
        chunk = [_path_values(p, fields) for p in paths[i:i + PATH_CHUNK]]
        yield separator + json.dumps(chunk, default=_default, allow_nan=False,
                                     separators=(",", ":"))[1:-1]
        separator = ",\n    "
    yield "\n  ]\n}\n"


def _path_values(p, fields):
    """A path's row: a PathRecord's values, a record dict's in FIELDS order, or a row as read
    back from this JSON."""
    if p.__class__ is path_record.PathRecord:
        return p.values()
    if isinstance(p, dict):
        return [p.get(f) for f in fields]
    return p


def dict_without(report, key):
    return type(report)((k, v) for k, v in report.items() if k != key)


def _default(value):
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, path_record.PathRecord):
        return value.as_dict()
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
    for section in (_title, actions_view.text, _headline, confidence.text, _blackholes, _culprits,
                    _sites, _matrix, _trend, _gains):
        out += section(r) + [""]
    out += _changes(r)
    if r.get("telemetry"):
        out = telemetry_view.amend_text(r, out)
    if r.get("fireflies"):
        out = firefly_view.amend_text(r, out)
    return "\n".join(text_line(line) for line in out) + "\n"


def _title(r):
    w = r["window"]
    title = "Jumbo-frame adoption report" + (
        ": site %s (its paths as source and as dest)" % r["site"] if r.get("site") else "")
    return [title,
            "store %s, %d pmtu results from %s to %s, target IP MTU %d"
            % (r["store"], w["results"], w["first"], w["last"], r["target_mtu"])]


def _headline(r):
    out = ["Headline (three separate numbers; paths are directed, one IP family each)"]
    add = out.append
    n = r["paths_measured"]
    add("  configured %7s  of %d measuring hosts have interface MTU >= %d"
        % (pct(r["configured"]), r["hosts"], r["target_mtu"]))
    add("  capable    %7s  of %d directed paths carry %d both ways, no black hole (%d paths)"
        % (pct(r["capable"]), n, r["target_mtu"], r["capable_paths"]))
    add("  undecided  %7s  of %d directed paths: a started flow left unconfirmed, PMTUD unknown (%d paths;"
        " never counted capable)" % (pct(share(r["unknown_paths"], n)), n, r["unknown_paths"]))
    if r["used"] is not None and r["traffic"]:
        t = r["traffic"]
        add("  used       %7s  of measured traffic (volume matrix; %.3g of %.3g bytes measured)"
            % (pct(r["used"]), t["measured_bytes"], t["bytes"]))
    else:
        add("  used           n/a  (give --volumes CSV for the traffic-weighted share)")
    add("  paths measured both ways %d, one way only %d (reverse never measured; %d of them carry"
        " %d out: never counted capable)" % (r["paths_both_ways"], r["paths_one_way"],
                                             r["jumbo_one_way_paths"], r["target_mtu"]))
    for s in r["status"]:
        line = "  %s target %s: paths %s" % (s["target"], pct(s["goal"]),
                                             "met" if s["paths_met"] else "NOT met")
        if s["traffic_met"] is not None:
            line += ", traffic %s" % ("met" if s["traffic_met"] else "NOT met")
        add(line)
    return out


def _blackholes(r):
    out = ["Black holes: fix these first (%d)" % len(r["blackholes"])]
    shown = r["blackholes"][:r.get("limit") or len(r["blackholes"])]
    for b in shown:
        out.append("  %s -> %s %s  [%s -> %s]  %s vanishes at hop %s %s"
                   % (b["source"], b["dest"], b["family"], b["source_site"], b["dest_site"],
                      "size %s" % b["size"] if b["size"] else "large packets",
                      b["hop_ttl"] if b["hop_ttl"] is not None else "?", b["hop_ip"] or "?")
                   + ("  (partial: some flows only)" if b["partial"] else "") + _seen(b))
    if not r["blackholes"]:
        out.append("  none")
    elif len(shown) < len(r["blackholes"]):
        out.append("  ... and %d more (all of them in the JSON and CSV output)"
                   % (len(r["blackholes"]) - len(shown)))
    return out


def host_sentence(r):
    """'N failing paths are limited by an end host's own MTU: host (IPv4, MTU 1500, 11
    paths), ...': the hosts named, the longest first (shared by the text and HTML)."""
    hosts = r["limiting_hosts"]
    named = ", ".join("%s (%s, MTU %s, %d paths)" % (h["host"], h["family"], _mtu(h["interface_mtu"]),
                                                    h["paths"]) for h in hosts[:10])
    more = " and %d more hosts" % (len(hosts) - 10) if len(hosts) > 10 else ""
    return ("%d failing paths are limited by an end host's own MTU (configuration, not a hop): "
            "%s%s" % (r["host_limited"], named, more))


def culprit_owner(c):
    """A culprit hop's owner as shown: its site, the two candidates of a link, or transit."""
    if c["site"]:
        return "%s (%s)" % (c["site"], c["owner_basis"])
    if c["candidates"]:
        return "%s (%s)" % (" or ".join(c["candidates"]), c["owner_basis"])
    return c["owner_basis"]


def culprit_affected(c):
    """The other sites a culprit hop's failing paths touch: affected, not suspects."""
    if not c["affected_sites"]:
        return "no other site affected"
    return "%d other site%s affected (%s%s)" % (
        c["affected_site_count"], "" if c["affected_site_count"] == 1 else "s",
        ", ".join(c["affected_sites"][:6]),
        " and %d more" % (c["affected_site_count"] - 6) if c["affected_site_count"] > 6 else "")


def _culprits(r):
    out = ["Likely culprits: hops shared by failing paths (%d)" % len(r["culprits"])]
    for c in r["culprits"]:
        what = "black hole on %d paths" % c["blackholes"] if c["blackholes"] else ""
        if c["mtu"] is not None:
            what = ("%s, " % what if what else "") + "MTU %d" % c["mtu"]
        out.append("  %-18s %4d failing paths  %s  owner: %s; %s" % (
            c["hop_ip"], c["paths"], what, culprit_owner(c), culprit_affected(c)))
    if r["host_limited"]:
        out.append("  " + host_sentence(r))
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


def _used_in_bucket(b):
    """'; used 64.3% of bytes (fireflies)': a bucket's used share where a source gave one."""
    if b.get("used_share") is None:
        return ""
    return "; used %s of bytes (%s)" % (pct(b["used_share"]), b.get("used_source") or "telemetry")


def _trend(r):
    t = r["trend"]
    out = ["Trend per %s: share of results (runs, not paths) that carried the target (DC26 50%%, "
           "DC28 99%%)%s" % (t["interval"], ", site %s's hosts' results" % r["site"] if r.get("site") else "")]
    for b in t["buckets"]:
        bar = "#" * int(round(40 * (b["jumbo_results_share"] or 0)))
        out.append("  %s %7s %-40s %d results, %d black-hole results%s%s"
                   % (b["bucket"], pct(b["jumbo_results_share"]), bar, b["results"],
                      b["blackhole_results"], ", %d undecided" % b["unknown_results"]
                      if b["unknown_results"] else "", _used_in_bucket(b)))
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
    out = ["Changes: %d paths changed state (%d changes)" % (r["changed_paths"], r["total_changes"] or 0)]
    regressed = [d for d in r["change_days"] if d["regressions"]]
    if regressed:
        out.append("Regressions by day, most first")
        for d in regressed[:10]:
            out.append("  %s  %d paths lost the target: %s%s"
                       % (d["day"], d["regressions"], ", ".join(d["regressed"][:5]),
                          " and %d more" % (d["regressions"] - 5) if d["regressions"] > 5 else ""))
    out.append("Changes, newest first (flapping paths apart, below)")
    for c in r["changes"][:20]:
        out.append("  %s  %s -> %s %s  %s -> %s  %s"
                   % (c["start"], c["source"], c["dest"], c["family"], c["from"], c["to"],
                      change_mtus(c)))
    out.append("Flapping paths (%d)" % len(r["flapping"]))
    for f in r["flapping"][:20]:
        out.append("  %s -> %s %s  %d changes, last %s" % (f["source"], f["dest"], f["family"],
                                                           f["changes"], f["last_change"]))
    return out


def change_mtus(c):
    """'path MTU 9000 -> 1500, reverse 9000 -> 9000': what a change did to each direction
    (the reverse only where either result measured it)."""
    text = "path MTU %s -> %s" % (_mtu(c["from_mtu"]), _mtu(c["to_mtu"]))
    if c.get("from_reverse_mtu") is not None or c.get("to_reverse_mtu") is not None:
        text += ", reverse %s -> %s" % (_mtu(c["from_reverse_mtu"]), _mtu(c["to_reverse_mtu"]))
    return text


def _item(x):
    """A CSV item naming a path: 'source->dest IPv4' (the family keeps IPv4 and IPv6 apart)."""
    return "%s->%s %s" % (x["source"], x["dest"], path_record.family(x["ip_version"]))


SUMMARY_KEYS = ("paths_measured", "paths_both_ways", "paths_one_way", "capable_paths", "capable",
                "jumbo_one_way_paths", "unknown_paths", "hosts", "configured_hosts", "configured",
                "used", "blackholes", "host_limited", "target_mtu")
TREND_KEYS = ("results", "jumbo_results", "jumbo_results_share", "configured_results",
              "configured_results_share", "blackhole_results", "unknown_results")
# A path's own columns in the CSV: its key is the item (source->dest family).
PATH_KEYS = tuple(f for f in path_record.FIELDS if f not in ("source", "dest", "family"))


def _path_rows(r):
    for p in r["paths"]:
        d = dict(zip(path_record.FIELDS, _path_values(p, path_record.FIELDS)))
        item = _item(d)
        for k in PATH_KEYS:
            yield ("path", item, k, d[k])


def rows(r):
    """The report as long-format rows: (section, item, metric, value), section by section."""
    for section in (_summary_rows, actions_view.rows, confidence.csv_rows, _target_rows,
                    _blackhole_rows, _culprit_rows, _limiting_host_rows, _site_rows, _matrix_rows,
                    _trend_rows, _gain_rows, _change_rows, _path_rows, _telemetry_rows,
                    _firefly_rows):
        for row in section(r):
            yield row


def _summary_rows(r):
    return metric_rows("summary", "mesh", dict(r, blackholes=len(r["blackholes"])), SUMMARY_KEYS)


def _target_rows(r):
    for s in r["status"]:
        yield ("target", s["target"], "goal", s["goal"])
        yield ("target", s["target"], "paths_met", s["paths_met"])
        yield ("target", s["target"], "traffic_met", s["traffic_met"])


def _blackhole_rows(r):
    for b in r["blackholes"]:
        item = _item(b)
        for k in ("ip_version", "source_site", "dest_site", "partial", "size", "hop_ttl", "hop_ip",
                  "path_mtu", "measured", "seen", "runs", "failed_share", "clean_flows",
                  "needed_flows"):
            yield ("blackhole", item, k, b[k])


def _culprit_rows(r):
    for c in r["culprits"]:
        for k in ("paths", "blackholes", "mtu", "site", "affected_site_count"):
            yield ("culprit", c["hop_ip"], k, c[k])


def _limiting_host_rows(r):
    for h in r["limiting_hosts"]:
        item = "%s %s" % (h["host"], h["family"])
        for k in ("site", "interface_mtu", "paths"):
            yield ("limiting_host", item, k, h[k])


def _site_rows(r):
    for s in r["sites"]:
        for k in ("rank", "hosts", "configured", "out_paths", "out_capable", "in_paths", "in_capable",
                  "capable", "fails", "blackholes", "pmtud", "unlocked_paths", "unlocked",
                  "unlocked_traffic"):
            yield ("site", s["site"], k, s[k])
        yield ("site", s["site"], "host_mtu", "/".join(str(m) for m in s["host_mtu"]))


def _matrix_rows(r):
    for c in r["matrix"]["cells"]:
        item = "%s->%s" % (c["source_site"], c["dest_site"])
        for k in ("paths", "capable", "min_mtu", "max_mtu", "blackholes"):
            yield ("matrix", item, k, c[k])


def _trend_rows(r):
    for b in r["trend"]["buckets"]:
        for k in TREND_KEYS:
            yield ("trend", b["bucket"], k, b[k])
        if b.get("used_share") is not None:
            yield ("trend", b["bucket"], "used_share", b["used_share"])
            yield ("trend", b["bucket"], "used_source", b.get("used_source") or "telemetry")


def _gain_rows(r):
    for name in ("gains", "expected_gains"):
        summary = r[name]["summary"] or {}
        yield (name, "mesh", "paths", r[name]["paths"])
        for k in ("min", "p25", "median", "p75", "max", "mean"):
            if k in summary:
                yield (name, "mesh", k, summary[k])


def _change_rows(r):
    for c in r["changes"]:
        yield ("change", _item(c), c["start"], "%s->%s (%s)" % (c["from"], c["to"],
                                                                  change_mtus(c)))
    yield ("summary", "mesh", "changed_paths", r["changed_paths"])
    for f in r["flapping"]:
        yield ("flapping", _item(f), "changes", f["changes"])


def _telemetry_rows(r):
    return telemetry_view.rows(r) if r.get("telemetry") else ()


def _firefly_rows(r):
    return firefly_view.rows(r) if r.get("fireflies") else ()


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
