"""Issue 23 (hardening), the spec rows: M3 (the exclusive slot a jumbo-throughput task may
reserve), L6 (a trailing newline is not the end of a value), L7 (integers are integers, the
bounds that were missing, a retry wait of zero).

Runs under jsonschema 3.0.1 too (scripts/check-compat.sh)."""

import re
import json

import pytest

from jumbo.archive import archiver
from jumbo.core import limits, units
from jumbo.core import spec as core_specs
from jumbo.protocol import jumbo_throughput, pmtu
from jumbo.testtype import pair


def _answer(module, spec):
    return module.spec_is_valid(json.dumps(spec))


# -- M3 -------------------------------------------------------------------------------------

ISSUE_SPEC = {"dest": "192.0.2.2", "duration": "PT3600S", "omit": "PT600S", "rounds": 20,
              "direction": "both"}


def test_a_week_long_exclusive_slot_is_refused_naming_the_fields(monkeypatch, tmp_path):
    monkeypatch.setenv(limits.LIMITS_ENV, str(tmp_path / "absent.conf"))
    answer = _answer(jumbo_throughput, ISSUE_SPEC)
    assert answer["valid"] is False
    # The slot the tool would reserve for it (7.8 days: PT672336S when the issue was filed;
    # the TTL scan's confirmation round since added a second), named with the node's limit.
    slot = re.search(r"exclusive slot of PT(\d+)S on both nodes", answer["error"])
    assert slot and 672000 < int(slot.group(1)) < 673000, answer["error"]
    assert "PT600S" in answer["error"]
    for field in ("duration", "omit", "rounds", "direction"):
        assert field in answer["error"]
    assert _answer(jumbo_throughput, {"dest": "192.0.2.2"}) == {"valid": True}
    # Just over the default: 2 rounds both ways of 60 s legs (16 legs) need PT1041S.
    answer = _answer(jumbo_throughput, {"dest": "192.0.2.2", "duration": "PT60S", "rounds": 2,
                                        "direction": "both"})
    assert answer["valid"] is False and "PT1041S" in answer["error"]


def test_the_slot_limit_comes_from_the_limits_file(monkeypatch, tmp_path):
    conf = tmp_path / "jumbo-limits.conf"
    conf.write_text(json.dumps({"throughput-max-slot": "PT20M"}))
    monkeypatch.setenv(limits.LIMITS_ENV, str(conf))
    spec = {"dest": "192.0.2.2", "duration": "PT60S", "rounds": 2, "direction": "both"}
    assert pair.validate(spec) == (True, None)
    conf.write_text(json.dumps({"throughput-max-slot": "PT1M"}))
    valid, error = pair.validate({"dest": "192.0.2.2"})
    assert not valid and "PT60S" in error and str(conf) in error
    conf.write_text("{not json")
    valid, error = pair.validate({"dest": "192.0.2.2"})
    assert not valid and "invalid JSON" in error and str(conf) in error


# -- L6 -------------------------------------------------------------------------------------

@pytest.mark.parametrize("module,spec,field", [
    (pmtu, {"dest": "192.0.2.2\n"}, "/dest"),
    (pmtu, {"dest": "host.example.org\n"}, "/dest"),
    (pmtu, {"dest": "192.0.2.2", "source": "2001:db8::1\n"}, "/source"),
    (pmtu, {"dest": "192.0.2.2", "timeout": "PT1S\n"}, "/timeout"),
    (jumbo_throughput, {"dest": "192.0.2.2", "congestion": "cubic\n"}, "/congestion"),
    (jumbo_throughput, {"dest": "192.0.2.2", "duration": "PT5S\n"}, "/duration"),
])
def test_a_trailing_newline_is_refused(module, spec, field):
    answer = _answer(module, spec)
    assert answer["valid"] is False
    assert field in answer["error"]


def test_python_side_checks_end_at_the_end_too():
    assert core_specs.address_family("192.0.2.2\n") is None
    assert core_specs.address_family("2001:db8::1\n") is None
    assert core_specs.address_family("192.0.2.2") == 4
    assert units.duration_seconds_or_none("PT5S") == 5.0
    with pytest.raises(ValueError):
        units.parse_time("2024-01-01T00:00:00Z\nX")
    ok, error = archiver.check_data({"_url": "sqlite:///x.db", "timeout": "PT5S\n"})
    assert not ok and "/timeout" in error


# -- L7 -------------------------------------------------------------------------------------

@pytest.mark.parametrize("module,spec,field", [
    (jumbo_throughput, {"dest": "192.0.2.2", "port": 5201.0}, "/port"),
    (jumbo_throughput, {"dest": "192.0.2.2", "rounds": 1.0}, "/rounds"),
    (jumbo_throughput, {"dest": "192.0.2.2", "fq-rate": 10 ** 13}, "/fq-rate"),
    (pmtu, {"dest": "192.0.2.2", "flows": 4.0}, "/flows"),
    (pmtu, {"dest": "192.0.2.2", "target-mtu": 9000.0}, "/target-mtu"),
])
def test_floats_are_not_integers_and_rates_are_bounded(module, spec, field):
    answer = _answer(module, spec)
    assert answer["valid"] is False
    assert field in answer["error"]


def test_integers_and_a_real_rate_still_pass():
    assert _answer(jumbo_throughput, {"dest": "192.0.2.2", "port": 5201,
                                      "fq-rate": 5 * 10 ** 9}) == {"valid": True}


@pytest.mark.parametrize("policy,field", [
    ([{"attempts": 10 ** 9, "wait": "PT1M"}], "/retry-policy/0/attempts"),
    ([{"attempts": 2.0, "wait": "PT1M"}], "/retry-policy/0/attempts"),
    ([{"attempts": 2, "wait": "PT0S"}], "/retry-policy/0/wait"),
    ([{"attempts": 1, "wait": "PT1M"}, {"attempts": 2, "wait": "P0D"}], "/retry-policy/1/wait"),
])
def test_retry_policy_bounds(policy, field):
    answer = archiver.data_is_valid({"_url": "sqlite:///x.db", "retry-policy": policy})
    assert answer["valid"] is False
    assert field in answer["error"]
    assert archiver.data_is_valid({"retry-policy": [{"attempts": 3, "wait": "PT1M"}]}) == {
        "valid": True}
