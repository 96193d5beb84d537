"""jumbo.archive.values: a value read from a pScheduler result is kept only when it is of the
type the record holds (else None, or {} for an object); hosts are reduced from what a spec
may hold (URL, host:port, [v6]:port) and an IP literal's family is read from it."""

import json

import pytest

from jumbo.archive import values


@pytest.mark.parametrize("value,expected", [
    (9000, 9000), (0, 0), (-1, -1), (9000.0, 9000), (1500.9, 1500),
    (True, None), (False, None), (None, None), ("9000", None), ([9000], None),
    (float("nan"), None), (float("inf"), None), (float("-inf"), None),
])
def test_as_int(value, expected):
    got = values.as_int(value)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize("value,expected", [
    (2 ** 63 - 1, 2 ** 63 - 1), (-2 ** 63, -2 ** 63), (2 ** 63, None), (-2 ** 63 - 1, None),
    (10 ** 30, None), (1e30, None),
])
def test_as_int_keeps_only_what_a_store_can_hold(value, expected):
    """SQLite's INTEGER and OpenSearch's long are signed 64-bit: a bigger number would make
    the archiver retry a record it can never store (OverflowError, every PT1M)."""
    assert values.as_int(value) == expected


def test_as_int_keeps_an_int_subclass_but_not_a_bool():
    class Size(int):
        pass
    assert values.as_int(Size(1500)) == 1500
    assert values.as_int(True) is None


@pytest.mark.parametrize("value,expected", [
    (9.5e9, 9.5e9), (3, 3.0), (0, 0.0), (-0.5, -0.5),
    (True, None), (None, None), ("1e9", None), ({}, None),
    (float("nan"), None), (float("inf"), None), (float("-inf"), None), (10 ** 400, None),
])
def test_as_num(value, expected):
    got = values.as_num(value)
    assert got == expected and type(got) is type(expected)


def test_a_number_json_cannot_hold_is_no_number():
    """Python's json reads 1e999 as infinity; a record must not crash on it nor keep it (the
    OpenSearch archive would refuse the document and SQLite would show `inf`)."""
    answer = json.loads('{"path-mtu": 1e999, "mean": -1e999, "gain": 1%s}' % ("0" * 400))
    assert values.as_int(answer["path-mtu"]) is None
    assert values.as_num(answer["mean"]) is None
    assert values.as_num(answer["gain"]) is None


def test_as_str_as_bool_as_obj():
    assert values.as_str("rfc4821") == "rfc4821" and values.as_str("") == ""
    assert values.as_str(b"x") is None and values.as_str(1) is None
    assert values.as_bool(True) is True and values.as_bool(False) is False
    assert values.as_bool(1) is None and values.as_bool("true") is None
    assert values.as_obj({"a": 1}) == {"a": 1}
    assert values.as_obj([("a", 1)]) == {} and values.as_obj(None) == {}


@pytest.mark.parametrize("value,host", [
    ("ps1.example", "ps1.example"), ("ps1.example:443", "ps1.example"),
    ("198.18.0.2", "198.18.0.2"), ("198.18.0.2:861", "198.18.0.2"),
    ("[fd00::2]:443", "fd00::2"), ("[fd00::2]", "fd00::2"), ("fd00::2", "fd00::2"),
    ("https://ps1.example:443/pscheduler/tasks/x", "ps1.example"),
    ("https://[fd00::2]:443/pscheduler", "fd00::2"),
    ("  ps1.example \n", "ps1.example"),
    ("", None), (None, None), (7, None),
])
def test_host_of(value, host):
    assert values.host_of(value) == host


@pytest.mark.parametrize("host,literal,version", [
    ("198.18.0.2", "198.18.0.2", 4), ("fd00::2", "fd00::2", 6),
    ("fe80::1%2", "fe80::1%2", 6), ("fe80::1%eth0", None, None),
    ("::ffff:198.18.0.1", "::ffff:198.18.0.1", 6),
    ("ps1.example", None, None), ("198.18.0", None, None), ("198.18.0.2\n", None, None),
    ("cafe", None, None), ("", None, None), (None, None, None),
])
def test_ip_literal_and_its_family(host, literal, version):
    assert values.ip_literal(host) == literal
    assert values.ip_version_of(literal) == version


def test_same_family_drops_an_address_of_the_other_family():
    assert values.same_family("198.18.0.2", 4) == "198.18.0.2"
    assert values.same_family("198.18.0.2", 6) is None
    assert values.same_family("fd00::2", 6) == "fd00::2"
    assert values.same_family("fd00::2", 4) is None
    # No version to compare with (or no address): kept as it is.
    assert values.same_family("fd00::2", None) == "fd00::2"
    assert values.same_family("fd00::2", 5) == "fd00::2"
    assert values.same_family(None, 4) is None
