"""jumbo.testtype.values: values of any result read and shown leniently for the text and
HTML renderings (result-format): a field of the wrong type reads as missing, never raises."""

import json

import pytest

from jumbo.testtype import values


def test_as_dict_and_dicts_keep_only_objects():
    assert values.as_dict({"a": 1}) == {"a": 1}
    assert values.as_dict([1]) == {} and values.as_dict(None) == {}
    assert values.dicts([{"ttl": 1}, 3, None, "x", {"ttl": 2}, [{}]]) == [{"ttl": 1}, {"ttl": 2}]
    assert values.dicts({"ttl": 1}) == [] and values.dicts(None) == []


@pytest.mark.parametrize("value,expected", [
    (9000, 9000), (0, 0), (-3, -3), (9000.0, 9000), (1500.5, None),
    (True, None), (False, None), (None, None), ("9000", None), ([1], None),
    (float("nan"), None), (float("inf"), None), (float("-inf"), None),
])
def test_integer(value, expected):
    got = values.integer(value)
    assert got == expected and type(got) is type(expected)


def test_a_number_json_cannot_hold_reads_as_missing():
    """Python's json reads NaN, Infinity and 1e999; result-format must still answer."""
    result = json.loads('{"path-mtu": NaN, "mss": Infinity, "ttl": 1e999}')
    assert [values.integer(v) for v in result.values()] == [None, None, None]


@pytest.mark.parametrize("value,expected", [
    (1, 1), (2.5, 2.5), (0, 0), (True, None), (None, None), ("1", None), ({}, None),
])
def test_number(value, expected):
    assert values.number(value) == expected


@pytest.mark.parametrize("value,shown", [
    (None, "-"), (True, "yes"), (False, "no"), (0, "0"), ("rfc4821", "rfc4821"),
    (9000, "9000"), ([1, 2], "[1, 2]"), (1.5, "1.5"),
    # A result's JSON may carry NaN or Infinity (Python's json reads them); never shown as "nan".
    (float("nan"), "-"), (float("inf"), "-"), (float("-inf"), "-"),
])
def test_show(value, shown):
    assert values.show(value) == shown


def test_a_nan_path_mtu_reads_as_missing_in_the_result_text():
    from jumbo.testtype import render
    text = render.result_text({"dest": "x"}, {"succeeded": True, "schema": 1,
                                              "path-mtu": float("nan"), "target-mtu": 9000})
    assert "nan" not in text.lower() and "Path MTU:     -" in text, text


@pytest.mark.parametrize("value,shown", [
    (9.41e9, "9.41 Gbit/s"), (1e12, "1.00 Tbit/s"), (999.4e6, "999.40 Mbit/s"),
    (1000, "1.00 kbit/s"), (999, "999 bit/s"), (0, "0 bit/s"), (-2e9, "-2.00 Gbit/s"),
    (None, "-"), ("9.41e9", "-"), (True, "-"),
])
def test_bits(value, shown):
    assert values.bits(value) == shown


@pytest.mark.parametrize("value,shown", [
    ("PT0.0123S", "12.300 ms"), (0.0005, "0.500 ms"), ("PT1S", "1000.000 ms"),
    (2, "2000.000 ms"), (None, "-"), ("soon", "soon"), ("P1M", "P1M"),
])
def test_rtt_ms(value, shown):
    assert values.rtt_ms(value) == shown


@pytest.mark.parametrize("value,shown", [
    (12.34, "12.3%"), (0, "0.0%"), (100, "100.0%"), (None, "-"), ("5", "-"), (False, "-"),
])
def test_percent(value, shown):
    assert values.percent(value) == shown
