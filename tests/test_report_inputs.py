"""The report's window inputs (jumbo.report.inputs.parse_date): dates, ISO times and relative
windows (ISO 8601 durations before now), each checked, with a clear message for the bad ones;
and a relative window on a real store whose results are dated relative to the clock."""

import datetime

import pytest

import store_fixtures
from jumbo.report.cli import main as cli_main, run as cli_run
from jumbo.report.errors import ReportError
from jumbo.report.inputs import parse_date

NOW = datetime.datetime(2026, 11, 26, 12, 0, 0)


@pytest.mark.parametrize("text, want", [
    ("P7D", "2026-11-19T12:00:00Z"), ("PT12H", "2026-11-26T00:00:00Z"),
    ("P2W", "2026-11-12T12:00:00Z"), ("p1dt6h", "2026-11-25T06:00:00Z"),
    ("PT90M", "2026-11-26T10:30:00Z"),
    # the absolute forms stay as they were
    ("2026-11-03", "2026-11-03T00:00:00Z"), ("2026-11-03T05:06:07Z", "2026-11-03T05:06:07Z"),
])
def test_relative_and_absolute_windows(text, want):
    assert parse_date(text, now=NOW) == want


def test_a_bare_until_date_includes_its_day():
    assert parse_date("2026-11-03", end=True, now=NOW) == "2026-11-04T00:00:00Z"
    # a duration is a moment: `end` does not move it
    assert parse_date("P1D", end=True, now=NOW) == "2026-11-25T12:00:00Z"


@pytest.mark.parametrize("text, says", [
    ("P1Y", "years and months have no fixed length"), ("P2M", "years and months"),
    ("P", "not an ISO 8601 duration"), ("P-1D", "not an ISO 8601 duration"),
    ("P7", "not an ISO 8601 duration"), ("P0D", "must be more than 0"),
    ("P99999D", "at most 3650 days"), ("yesterday", "unreadable date"),
    ("2026-13-01", "unreadable date"),
])
def test_bad_windows_are_refused_clearly(text, says):
    with pytest.raises(ReportError) as err:
        parse_date(text, now=NOW)
    assert says in str(err.value)


def _recent_records():
    """One path measured 10, 5 and 1 days before now (an hour after the day boundary)."""
    now = datetime.datetime.utcnow()
    out = []
    for days in (10, 5, 1):
        start = (now - datetime.timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")
        for source, dest in (("a.example", "b.example"), ("b.example", "a.example")):
            out.append({"id": "%s-%d" % (source, days), "test_type": "pmtu", "source": source,
                        "dest": dest, "ip_version": 4, "start": start, "succeeded": True,
                        "path_mtu": 9000 if days > 3 else 1500, "local_mtu": 9000,
                        "target_mtu": 9000, "pmtud": "not-needed" if days > 3 else "ok",
                        "partial": False, "flows": 4, "source_site": "A", "dest_site": "B"})
    return out


def test_since_a_duration_on_a_store(tmp_path):
    url = "sqlite:///" + str(tmp_path / "recent.db")
    store_fixtures.load(url, _recent_records())
    report, _text, _out = cli_run(["--store", url, "--format", "json", "--since", "P7D"])
    assert report["window"]["results"] == 4          # days 5 and 1, both directions
    report, _text, _out = cli_run(["--store", url, "--format", "json", "--since", "P14D",
                                   "--until", "P3D"])
    assert report["window"]["results"] == 4          # days 10 and 5
    assert report["capable_paths"] == 2
    # an empty relative window is "nothing to report" (4), a bad one a usage error (2)
    assert cli_main(["--store", url, "--since", "PT1H"]) == 4
    assert cli_main(["--store", url, "--since", "P1M"]) == 2
    assert cli_main(["--store", url, "--since", "P3D", "--until", "P7D"]) == 2
