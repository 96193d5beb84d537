"""The measured used/configured (report["telemetry"], telemetry.py) in text, CSV and HTML.

render.py and html.py call these only when the report has a telemetry section, so a report
without Prometheus renders exactly as before."""

from .formatting import decimal_bytes as _gb, metric_rows, pct
from .safe_output import html_text as escape  # bidi controls neutralised too


def amend_text(r, lines):
    """The headline's configured and used lines say where they come from; a telemetry section
    follows the headline."""
    t = r["telemetry"]
    conf = t["configured"]
    out = []
    for line in lines:
        if line.startswith("  configured ") and r.get("configured_source"):
            line = ("  configured %7s  of %d perfSONAR hosts have interface MTU >= %d (%s: %d hosts, "
                    "local-mtu: %d)" % (pct(r["configured"]), r["hosts"], r["target_mtu"],
                                        "node exporter", conf["from_exporter"],
                                        r["hosts"] - conf["from_exporter"]))
        elif line.startswith("  used ") and r.get("used_source"):
            v = t["by_ip_version"]
            line = ("  used       %7s  of bytes sent (%s; IPv4 %s, IPv6 %s) on jumbo-sized segments"
                    % (pct(r["used"]), r["used_source"], pct(v["ipv4"]["used"]),
                       pct(v["ipv6"]["used"])))
        out.append(line)
    at = next((i for i, line in enumerate(out) if line == "" and i > 3), len(out))
    section = ["", "Traffic from flow telemetry (%s, %s to %s)" % (t["prometheus"], t["from"], t["to"]),
               "  used %s of %s sent, capable %s of paths; gap %s of bytes (%s): capable paths still "
               "sent at 1500, host or application tuning" % (
                   pct(t["used"]), _gb(t["bytes"]), pct(t["capable"]), pct(t["gap"]), _gb(t["gap_bytes"])),
               "  %-28s %-5s %-13s %12s %8s %8s %s" % ("site pair", "IP", "source", "bytes", "used",
                                                       "capable", "gap")]
    for c in t["cells"][:r.get("limit") or 200]:
        section.append("  %-28s %-5s %-13s %12s %8s %8s %s" % (
            ("%s -> %s" % (c["source_site"], c["dest_site"]))[:28],
            "v%d" % c["ip_version"] if c["ip_version"] else "-", c["source"], _gb(c["bytes"]),
            pct(c["used"]), pct(c["capable"]), _gb(c["gap_bytes"])))
    if t["unmapped_bytes"]:
        section.append("  %s between addresses of no known site (not counted)" % _gb(t["unmapped_bytes"]))
    if t.get("implausible_series"):
        section.append("  %d series with implausible values (NaN, infinite, above 10^18 bytes or an "
                       "MTU above 2^20) skipped: check the exporters" % t["implausible_series"])
    if conf["unmapped_instances"]:
        section.append("  node exporter instances of no known site (not counted): %s"
                       % ", ".join(conf["unmapped_instances"][:10]))
    return out[:at] + section + out[at:]


def rows(r):
    t = r["telemetry"]
    mesh = dict(t, used_source=r.get("used_source"))
    for row in metric_rows("telemetry", "mesh", mesh, (
            "used", "used_source", "bytes", "jumbo_bytes", "capable", "gap", "gap_bytes",
            "unmapped_bytes", "implausible_series")):
        yield row
    for version, v in t["by_ip_version"].items():
        for k in ("bytes", "jumbo_bytes", "used", "gap"):
            yield ("telemetry", version, k, v[k])
    for c in t["cells"]:
        item = "%s->%s/%s" % (c["source_site"], c["dest_site"],
                              "ipv%d" % c["ip_version"] if c["ip_version"] else "all")
        for k in ("source", "bytes", "jumbo_bytes", "used", "capable", "gap_bytes"):
            yield ("telemetry", item, k, c[k])
    conf = t["configured"]
    yield ("configured", "mesh", "configured", conf["configured"])
    yield ("configured", "mesh", "source", r.get("configured_source") or "local-mtu")
    for h in conf["host_list"]:
        yield ("configured", h["host"], "mtu", h["mtu"])
        yield ("configured", h["host"], "source", h["source"])


def used_card_note(r):
    t = r["telemetry"]
    return "%s of bytes sent on jumbo segments (%s), gap %s" % (
        pct(t["used"]), escape(r.get("used_source") or "no traffic"), pct(t["gap"]))


def html_section(r, table):
    t = r["telemetry"]
    rows_ = [("%s -> %s" % (c["source_site"], c["dest_site"]),
              "v%d" % c["ip_version"] if c["ip_version"] else "-", c["source"], _gb(c["bytes"]),
              pct(c["used"]), pct(c["capable"]), _gb(c["gap_bytes"]))
             for c in t["cells"][:r.get("limit") or 200]]
    conf = t["configured"]
    return "\n".join([
        '<h2 id="telemetry">Traffic and interfaces measured (Prometheus %s)</h2>' % escape(t["prometheus"]),
        "<p>used %s of %s sent (%s), capable %s of paths, gap %s: bytes on capable paths still sent "
        "at 1500 (host or application tuning). configured %s of %d hosts (%d from the node "
        "exporter).</p>" % (pct(t["used"]), _gb(t["bytes"]), escape(r.get("used_source") or "-"),
                            pct(t["capable"]), pct(t["gap"]), pct(conf["configured"]),
                            conf["hosts"], conf["from_exporter"]),
        table(["site pair", "IP", "source", "bytes", "used", "capable", "gap"],
              rows_),
    ])
