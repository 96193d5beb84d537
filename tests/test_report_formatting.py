"""jumbo.report.formatting: the small pieces every rendering of the report shares, so that one
number reads the same in text, CSV and HTML."""

import pytest

from jumbo.report import formatting


@pytest.mark.parametrize("value,shown", [
    (None, "n/a"), (0, "0.0%"), (0.5, "50.0%"), (0.99, "99.0%"), (1, "100.0%"),
    (0.0004, "0.0%"), (0.0005, "0.1%"), (2.0 / 3, "66.7%"), (0.12345, "12.3%"),
])
def test_pct(value, shown):
    assert formatting.pct(value) == shown


def test_share_is_none_with_nothing_to_divide_by():
    assert formatting.share(1, 4) == 0.25 and formatting.share(3, 3) == 1.0
    assert formatting.share(0, 7) == 0.0
    assert formatting.share(5, 0) is None and formatting.share(5, None) is None
    assert isinstance(formatting.share(1, 2), float)


def test_evidence_is_the_numbers_its_sentence_shows():
    entry = {"seen": 3, "runs": 7, "failed_share": 3 / 7.0, "clean_flows": 2,
             "needed_flows": 5}
    assert formatting.evidence(entry) == (3, 7, "42.9%", 2, 5)
    assert formatting.evidence({"seen": None, "runs": 7}) is None
    assert formatting.evidence({}) is None
    # A hole seen in no run is still evidence (0 seen), not "none".
    assert formatting.evidence(dict(entry, seen=0, failed_share=0.0)) == (0, 7, "0.0%", 2, 5)


def test_metric_rows_are_long_format_in_the_keys_order():
    source = {"runs": 4, "capable": 3, "ignored": "x"}
    assert list(formatting.metric_rows("site", "CERN", source, ["capable", "runs"])) == [
        ("site", "CERN", "capable", 3), ("site", "CERN", "runs", 4)]
    with pytest.raises(KeyError):
        list(formatting.metric_rows("site", "CERN", source, ["absent"]))


@pytest.mark.parametrize("value,shown", [
    (0, "0 B"), (999, "999 B"), (1000, "1.0 kB"), (12345678901, "12.3 GB"),
    (84e12, "84.0 TB"), (999999, "1000.0 kB"), (1e6, "1.0 MB"), (2.5e15, "2.5 PB"),
    (3e18, "3000.0 PB"), (None, "n/a"), (float("nan"), "n/a"), (float("inf"), "n/a"),
])
def test_decimal_bytes(value, shown):
    assert formatting.decimal_bytes(value) == shown
