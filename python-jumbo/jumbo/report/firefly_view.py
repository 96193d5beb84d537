"""`used` from fireflies (report["fireflies"], firefly_used.py) in text, CSV and HTML.

render.py and html.py call these only when the report has a fireflies section, so a report
without --fireflies renders exactly as before."""

from .formatting import decimal_bytes as size, pct
from .safe_output import html_text as escape  # bidi controls neutralised too

_COLUMNS = ("site pair", "IP", "source", "bytes", "used", "no MSS", "capable", "flows")


def _headline_used(r):
    f = r["fireflies"]
    v = f["by_ip_version"]
    return ("  used       %7s  of bytes sent with a known MSS on jumbo-sized segments (fireflies; "
            "IPv4 %s, IPv6 %s); %s of %s had no MSS (%s): %s to %s"
            % (pct(f["used"]), pct(v["ipv4"]["used"]), pct(v["ipv6"]["used"]),
               size(f["unknown_mss_bytes"]), size(f["bytes"]), pct(f["unknown_mss_share"]),
               pct(f["used_low"]), pct(f["used_high"])))


def _cell_row(c):
    return (("%s -> %s" % (c["source_site"], c["dest_site"]))[:28], "v%d" % c["ip_version"],
            c["source"], size(c["bytes"]), pct(c["used"]), size(c["unknown_mss_bytes"]),
            pct(c["capable"]), str(c["flows"]))


def amend_text(r, lines):
    """The headline's used line from the fireflies when they gave it; a section after the
    headline either way."""
    f = r["fireflies"]
    out = [(_headline_used(r) if line.startswith("  used ") and r.get("used_source") == "fireflies"
            else line) for line in lines]
    section = ["", "Traffic from fireflies (%s, %s to %s)" % (f["store"], f["from"], f["to"]),
               "  used %s of %s with a known MSS; %s sent with no MSS (flows shorter than the "
               "enrichment period): were they all jumbo %s, all standard %s" % (
                   pct(f["used"]), size(f["jumbo_bytes"] + f["standard_bytes"]),
                   size(f["unknown_mss_bytes"]), pct(f["used_high"]), pct(f["used_low"])),
               "  %-28s %-3s %-9s %10s %7s %10s %8s %s" % _COLUMNS]
    for c in f["cells"][:r.get("limit") or 200]:
        section.append("  %-28s %-3s %-9s %10s %7s %10s %8s %s" % _cell_row(c))
    if f["unmapped_bytes"]:
        section.append("  %s between addresses of no known site (not counted; see --sites of "
                       "jumbo-fireflies)" % size(f["unmapped_bytes"]))
    at = next((i for i, line in enumerate(out) if line == "" and i > 3), len(out))
    return out[:at] + section + out[at:]


def rows(r):
    f = r["fireflies"]
    for k in ("used", "bytes", "jumbo_bytes", "standard_bytes", "unknown_mss_bytes",
              "unknown_mss_share", "used_low", "used_high", "flows", "unmapped_bytes"):
        yield ("fireflies", "mesh", k, f[k])
    for version, v in f["by_ip_version"].items():
        for k in ("bytes", "jumbo_bytes", "standard_bytes", "unknown_mss_bytes", "used"):
            yield ("fireflies", version, k, v[k])
    for c in f["cells"]:
        item = "%s->%s/ipv%d" % (c["source_site"], c["dest_site"], c["ip_version"])
        for k in ("source", "bytes", "jumbo_bytes", "standard_bytes", "unknown_mss_bytes", "used",
                  "capable", "flows"):
            yield ("fireflies", item, k, c[k])


def used_card_note(r):
    f = r["fireflies"]
    return "%s of bytes with a known MSS on jumbo segments (fireflies); %s had no MSS" % (
        pct(f["used"]), pct(f["unknown_mss_share"]))


def html_section(r, table):
    f = r["fireflies"]
    return "\n".join([
        '<h2 id="fireflies">Traffic from fireflies (%s)</h2>' % escape(f["store"]),
        "<p>used %s of %s sent with a known MSS, from %s to %s; %s sent with no MSS (flows shorter "
        "than the enrichment period): %s if all were jumbo, %s if none.</p>" % (
            pct(f["used"]), size(f["jumbo_bytes"] + f["standard_bytes"]), escape(f["from"]),
            escape(f["to"]), size(f["unknown_mss_bytes"]), pct(f["used_high"]), pct(f["used_low"])),
        table(list(_COLUMNS), [_cell_row(c) for c in f["cells"][:r.get("limit") or 200]]),
    ])
