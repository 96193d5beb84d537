"""The fireflies section in text, CSV rows and HTML (jumbo.report.firefly_view): the headline's
used line only when the fireflies gave it, the bytes with no MSS and the range they allow,
and the store and window escaped in the HTML (the page's table escapes the cells)."""

from jumbo.report import firefly_view


def _figures(jumbo, standard, unknown):
    total = jumbo + standard + unknown
    return {"used": jumbo / float(jumbo + standard), "bytes": total, "jumbo_bytes": jumbo,
            "standard_bytes": standard, "unknown_mss_bytes": unknown,
            "unknown_mss_share": unknown / float(total), "used_low": jumbo / float(total),
            "used_high": (jumbo + unknown) / float(total), "flows": 3}


def report(used_source="fireflies"):
    f = dict(_figures(6e9, 2e9, 2e9), store="sqlite:////var/lib/jumbo/jumbo.db",
             **{"from": "2026-11-20T00:00:00Z", "to": "2026-11-26T00:00:00Z"})
    f["by_ip_version"] = {"ipv4": _figures(6e9, 1e9, 2e9), "ipv6": _figures(0, 1e9, 0)}
    f["unmapped_bytes"] = 5e8
    cell = dict(_figures(6e9, 1e9, 2e9), source_site="<script>alert(1)</script>", dest_site="B",
                ip_version=4, source="fireflies", capable=0.5)
    f["cells"] = [cell]
    return {"fireflies": f, "used_source": used_source, "limit": 200}


def test_text_headline_and_section():
    lines = ["Title", "", "Headline", "  used           n/a  (give --volumes CSV)", "  DC26", "",
             "Black holes"]
    out = firefly_view.amend_text(report(), lines)
    assert out[3] == ("  used         75.0%  of bytes sent with a known MSS on jumbo-sized segments "
                      "(fireflies; IPv4 85.7%, IPv6 0.0%); 2.0 GB of 10.0 GB had no MSS (20.0%): "
                      "60.0% to 80.0%")
    assert out.index("Traffic from fireflies (sqlite:////var/lib/jumbo/jumbo.db, 2026-11-20T00:00:00Z "
                     "to 2026-11-26T00:00:00Z)") == 6
    assert any("500.0 MB between addresses of no known site" in line for line in out)
    # With Prometheus' used in the headline, the line stays; the section still follows.
    kept = firefly_view.amend_text(report("telemetry"), lines)
    assert kept[3] == lines[3] and any(line.startswith("Traffic from fireflies") for line in kept)


def test_csv_rows_and_html():
    rows = list(firefly_view.rows(report()))
    assert ("fireflies", "mesh", "unknown_mss_bytes", 2e9) in rows
    assert ("fireflies", "ipv6", "used", 0.0) in rows
    assert ("fireflies", "<script>alert(1)</script>->B/ipv4", "source", "fireflies") in rows

    def table(headers, body):
        return "|".join(headers) + "\n" + "\n".join("|".join(str(c) for c in row) for row in body)
    html = firefly_view.html_section(report(), table)
    assert 'id="fireflies"' in html and "80.0% if all were jumbo, 60.0% if none" in html
    assert "site pair|IP|source|bytes|used|no MSS|capable|flows" in html
    hostile = report()
    hostile["fireflies"]["store"] = "<b>x</b>"
    assert "&lt;b&gt;x&lt;/b&gt;" in firefly_view.html_section(hostile, table)
    assert "no MSS" in firefly_view.used_card_note(report())
