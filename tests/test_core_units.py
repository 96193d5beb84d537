"""jumbo.core.units and jumbo.core.mtu: one parser each, and every module reads a duration, a
timestamp and an MTU constant through them (issue 15: `P1W` was 604800 in the spec and None
in the record, while the archiver's pattern accepted it)."""

import datetime
import re

import jsonschema
import pytest

from jumbo.core import mtu, schema, units
from jumbo.archive import record
from jumbo.tool import runner
from jumbo.tool import throughput as tp
from jumbo.archive import archive_data, archiver


@pytest.mark.parametrize("text,seconds", [
    ("PT10S", 10), ("PT0.5S", 0.5), ("PT1M", 60), ("PT1H", 3600), ("P1D", 86400),
    ("P1DT1S", 86401), ("P1W", 604800), ("P2W1D", 1296000), ("pt1m30s", 90),
    ("P1DT2H", 93600)])
def test_duration_seconds(text, seconds):
    assert units.duration_seconds(text) == seconds


@pytest.mark.parametrize("text", ["P1Y", "P1M", "10", "PTS", "P", "PT", "", "ten", None, 10])
def test_duration_seconds_rejects(text):
    with pytest.raises(ValueError):
        units.duration_seconds(text)
    assert units.duration_seconds_or_none(text) is None


@pytest.mark.parametrize("text", ["P1W", "PT30S", "P1DT1S", "P2W1D", "PT0.5S"])
def test_every_reader_agrees_on_a_duration(text):
    """What each module makes of the same duration: the same number of seconds."""
    expected = units.duration_seconds(text)
    assert record.duration_seconds(text) == expected
    assert archive_data.duration_seconds_or_none(text) == expected
    phase = tp.settings({"throughput": {"duration": text, "omit": text}})
    assert phase.seconds == phase.omit_seconds == expected
    # Whatever the archiver's data schema lets through, it also converts.
    assert re.match(archiver.DURATION_PATTERN, text)
    assert re.match(units.DURATION_PATTERN, text)


def test_the_archiver_converts_the_weeks_its_pattern_accepts():
    assert re.match(archiver.DURATION_PATTERN, "P1W")
    assert archiver.store_options({"timeout": "P1W"})["timeout"] == 604800.0
    ok, error = archiver.check_data({"_url": "sqlite:////tmp/x.db", "timeout": "P1W"})
    assert not ok and "at most PT60S" in error   # a week is too long, not unreadable


def test_patterns_and_parser_accept_the_same_language():
    fixed = re.compile(units.FIXED_DURATION_PATTERN)
    full = re.compile(units.DURATION_PATTERN)
    for text in ("P1W", "PT1S", "P1DT2H3M4.5S", "P0D", "P1Y", "P1M", "P1Y2M", "PT", "P", "1S",
                 "P1S", "PT1D", "P1.5W"):
        parsed = units.duration_seconds_or_none(text)
        assert (fixed.match(text) is not None) == (parsed is not None), text
        if parsed is not None:
            assert full.match(text), text
    assert full.match("P1Y") and not fixed.match("P1Y")
    validator = jsonschema.Draft7Validator({"definitions": schema.DEFINITIONS,
                                            "$ref": "#/definitions/duration"})
    assert validator.is_valid("P1W") and not validator.is_valid("1 week")


@pytest.mark.parametrize("text,expected", [
    ("2026-03-01T12:00:00Z", "2026-03-01T12:00:00Z"),
    ("2026-03-01T12:00:00+00:00", "2026-03-01T12:00:00Z"),
    ("2026-03-01T14:00:00+02:00", "2026-03-01T12:00:00Z"),
    ("2026-03-01T12:00:00.25-0100", "2026-03-01T13:00:00.25Z"),
    ("2026-03-01 12:00", "2026-03-01T12:00:00Z"),
    ("2026-03-01T12:00:00", "2026-03-01T12:00:00Z"),
])
def test_timestamps(text, expected):
    assert units.iso_utc(text) == expected
    assert record.iso_utc(text) == expected
    moment = units.parse_time(text)
    assert moment.tzinfo is not None
    assert runner.parse_time(text) == pytest.approx(units.unix_time(text))
    assert units.epoch_ms(text) == int(units.unix_time(text) * 1000)


@pytest.mark.parametrize("text", ["2026-02-30T12:00:00Z", "2026-03-01", "yesterday", "", None])
def test_timestamps_rejected_everywhere(text):
    with pytest.raises(ValueError):
        units.parse_time(text)
    with pytest.raises(record.BadRecord):
        record.parse_time(text)
    with pytest.raises(ValueError):
        runner.parse_time(text)


def test_naive_datetime_is_utc():
    naive = datetime.datetime(2026, 3, 1, 12, 0, 0)
    assert units.iso_utc(naive) == "2026-03-01T12:00:00Z"


def test_seconds_to_duration():
    assert units.seconds_to_duration(10) == "PT10S"
    assert units.seconds_to_duration(0.25) == "PT0.25S"
    assert units.seconds_to_duration("3") == "PT3S"
    with pytest.raises(ValueError):
        units.seconds_to_duration(-1)


@pytest.mark.parametrize("text,value", [("5G", 5000000000), ("100M", 100000000),
                                        ("1.5k", 1500), ("42", 42), (" 2 T ", 2 * 10 ** 12)])
def test_parse_si(text, value):
    assert units.parse_si(text) == value


@pytest.mark.parametrize("text", ["fast", "1.5", "5X", "-1G", ""])
def test_parse_si_rejects(text):
    with pytest.raises(ValueError):
        units.parse_si(text)


def test_mtu_table():
    assert mtu.MIN_MTU == {4: 68, 6: 1280}
    assert (mtu.STANDARD_MTU, mtu.JUMBO_MTU, mtu.DEFAULT_TARGET_MTU) == (1500, 9000, 9000)
    # The MSS arithmetic the throughput legs and the report's Mathis ceiling use.
    assert [mtu.mss_for(1500, 4), mtu.mss_for(9000, 4)] == [1460, 8960]
    assert [mtu.mss_for(1500, 6), mtu.mss_for(9000, 6)] == [1440, 8940]
    assert mtu.mss_for(1500, 4) - mtu.TCP_TIMESTAMPS == 1448
    assert mtu.mss_for(1500, 6) - mtu.TCP_TIMESTAMPS == 1428
    assert list(mtu.PLATEAUS) == sorted(mtu.PLATEAUS)
    assert schema.DEFINITIONS["mtu"]["minimum"] == mtu.MIN_MTU_V4
    assert schema.DEFINITIONS["mtu"]["maximum"] == mtu.MAX_IP_PACKET


def test_the_reports_window_reads_timestamps_as_the_archive_does():
    from jumbo.report.inputs import parse_date
    assert parse_date("2026-03-01", end=True) == "2026-03-02T00:00:00Z"
    for text in ("2026-03-01T10:00:00Z", "2026-03-01T10:00Z", "2026-03-01T12:00:00+02:00",
                 "2026-03-01 10:00"):
        assert parse_date(text) == record.iso_utc(text) == "2026-03-01T10:00:00Z"
