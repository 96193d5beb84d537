"""jumbo.report.telemetry_view: the measured used/configured (the report's `telemetry`
section) in text, CSV rows and HTML, on a report written out by hand: 12 TB sent, 3 TB of it
on jumbo segments (used 25 %), capable 60 % of paths, gap 4.2 TB."""

import collections

from jumbo.report import telemetry_view

HEADLINE = ["Jumbo-frame adoption report", "", "Headline", "  capable ...",
            "  configured   50.0%  of 4 perfSONAR hosts have interface MTU >= 9000",
            "  used          n/a  of bytes sent", "", "Sites"]


def _report(**extra):
    cells = [
        collections.OrderedDict([("source_site", "CERN"), ("dest_site", "<b>BNL</b>"),
                                 ("ip_version", 6), ("source", "flowd-go"), ("bytes", 8e12),
                                 ("jumbo_bytes", 3e12), ("used", 0.375), ("capable", 1.0),
                                 ("gap_bytes", 4.2e12)]),
        collections.OrderedDict([("source_site", "BNL"), ("dest_site", "CERN"),
                                 ("ip_version", None), ("source", "sflow"), ("bytes", 4e12),
                                 ("jumbo_bytes", 0.0), ("used", 0.0), ("capable", 0.0),
                                 ("gap_bytes", 0.0)]),
    ]
    telemetry = {
        "prometheus": "https://prom.example:9090", "from": "2026-11-21T00:00:00Z",
        "to": "2026-11-28T00:00:00Z", "used": 0.25, "bytes": 12e12, "jumbo_bytes": 3e12,
        "capable": 0.6, "gap": 0.35, "gap_bytes": 4.2e12, "unmapped_bytes": 5e9,
        "implausible_series": 2, "cells": cells,
        "by_ip_version": collections.OrderedDict([
            ("ipv4", {"bytes": 4e12, "jumbo_bytes": 0.0, "used": 0.0, "gap": 0.0}),
            ("ipv6", {"bytes": 8e12, "jumbo_bytes": 3e12, "used": 0.375, "gap": 0.525})]),
        "configured": {"configured": 0.75, "hosts": 4, "from_exporter": 3,
                       "unmapped_instances": ["10.9.9.9:9100"],
                       "host_list": [{"host": "ps1.cern.ch", "mtu": 9000, "source": "node exporter"},
                                     {"host": "ps1.bnl.gov", "mtu": 1500, "source": "local-mtu"}]},
    }
    report = {"telemetry": telemetry, "configured": 0.75, "hosts": 4, "target_mtu": 9000,
              "used": 0.25, "configured_source": "node exporter", "used_source": "flowd-go"}
    report.update(extra)
    return report


def test_the_headline_says_where_configured_and_used_come_from():
    out = telemetry_view.amend_text(_report(), list(HEADLINE))
    assert out[4] == ("  configured   75.0%  of 4 perfSONAR hosts have interface MTU >= 9000 "
                      "(node exporter: 3 hosts, local-mtu: 1)")
    assert out[5] == ("  used         25.0%  of bytes sent (flowd-go; IPv4 0.0%, IPv6 37.5%) on "
                      "jumbo-sized segments")
    # The section follows the headline (at its blank line), before the next section.
    at = out.index("Traffic from flow telemetry (https://prom.example:9090, "
                   "2026-11-21T00:00:00Z to 2026-11-28T00:00:00Z)")
    assert out[at - 1] == "" and out[at - 2] == out[5] and out[-1] == "Sites"
    assert out[at + 1] == ("  used 25.0% of 12.0 TB sent, capable 60.0% of paths; gap 35.0% of "
                           "bytes (4.2 TB): capable paths still sent at 1500, host or "
                           "application tuning")
    assert out[at + 3].split() == ["CERN", "->", "<b>BNL</b>", "v6", "flowd-go", "8.0", "TB",
                                   "37.5%", "100.0%", "4.2", "TB"]
    assert out[at + 4].split()[3] == "-"  # no family: all
    assert "  5.0 GB between addresses of no known site (not counted)" in out
    assert ("  2 series with implausible values (NaN, infinite, above 10^18 bytes or an MTU "
            "above 2^20) skipped: check the exporters") in out
    assert "  node exporter instances of no known site (not counted): 10.9.9.9:9100" in out


def test_without_sources_the_headline_is_left_and_the_table_bounded_by_the_limit():
    report = _report(configured_source=None, used_source=None, limit=1)
    report["telemetry"].update(unmapped_bytes=0, implausible_series=0)
    report["telemetry"]["configured"]["unmapped_instances"] = []
    out = telemetry_view.amend_text(report, list(HEADLINE))
    assert out[4:6] == HEADLINE[4:6]
    assert not [line for line in out if "BNL -> CERN" in line]
    assert not [line for line in out if "not counted" in line or "implausible" in line]


def test_csv_rows_carry_every_figure_once():
    rows = list(telemetry_view.rows(_report()))
    assert rows[:9] == [("telemetry", "mesh", "used", 0.25),
                        ("telemetry", "mesh", "used_source", "flowd-go"),
                        ("telemetry", "mesh", "bytes", 12e12),
                        ("telemetry", "mesh", "jumbo_bytes", 3e12),
                        ("telemetry", "mesh", "capable", 0.6),
                        ("telemetry", "mesh", "gap", 0.35),
                        ("telemetry", "mesh", "gap_bytes", 4.2e12),
                        ("telemetry", "mesh", "unmapped_bytes", 5e9),
                        ("telemetry", "mesh", "implausible_series", 2)]
    assert ("telemetry", "ipv6", "used", 0.375) in rows
    assert ("telemetry", "CERN-><b>BNL</b>/ipv6", "gap_bytes", 4.2e12) in rows
    assert ("telemetry", "BNL->CERN/all", "source", "sflow") in rows
    assert rows[-6:] == [("configured", "mesh", "configured", 0.75),
                         ("configured", "mesh", "source", "node exporter"),
                         ("configured", "ps1.cern.ch", "mtu", 9000),
                         ("configured", "ps1.cern.ch", "source", "node exporter"),
                         ("configured", "ps1.bnl.gov", "mtu", 1500),
                         ("configured", "ps1.bnl.gov", "source", "local-mtu")]
    assert len(rows) == len(set(rows))


def test_html_escapes_what_it_writes_itself_and_hands_cells_to_the_table():
    tables = []

    def table(head, rows):
        tables.append((head, rows))
        return "<table/>"
    report = _report(used_source="<script>x</script>")
    report["telemetry"]["prometheus"] = "http://p/<img>"
    page = telemetry_view.html_section(report, table)
    assert "<img>" not in page and "&lt;img&gt;" in page
    assert "<script>" not in page and "&lt;script&gt;x&lt;/script&gt;" in page
    assert "configured 75.0% of 4 hosts (3 from the node exporter)" in page
    head, rows = tables[0]
    assert head == ["site pair", "IP", "source", "bytes", "used", "capable", "gap"]
    assert rows[0] == ("CERN -> <b>BNL</b>", "v6", "flowd-go", "8.0 TB", "37.5%", "100.0%",
                       "4.2 TB")  # raw: the table escapes each cell
    assert telemetry_view.used_card_note(report) == (
        "25.0% of bytes sent on jumbo segments (&lt;script&gt;x&lt;/script&gt;), gap 35.0%")
    assert telemetry_view.used_card_note(_report(used_source=None)).endswith(
        "(no traffic), gap 35.0%")
