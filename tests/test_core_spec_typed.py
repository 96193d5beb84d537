"""jumbo.core.spec.typed: the spec typed once, its defaults in one place, its JSON unchanged."""

import copy

import pytest

from jumbo.core.spec import typed


def test_with_defaults_fills_and_does_not_mutate():
    spec = {"dest": "h2", "throughput": {"rounds": 3}}
    before = copy.deepcopy(spec)
    full = typed.with_defaults(spec)
    assert spec == before
    assert full["target-mtu"] == 9000 and full["flows"] == 4 and full["timeout"] == "PT1S"
    assert full["hops"] is False and full["reverse"] is False and full["schema"] == 1
    assert full["reflector"] is False
    assert full["throughput"] == {"duration": "PT10S", "omit": "PT2S", "rounds": 3,
                                  "parallel": 1, "direction": "forward", "order": "abba"}
    assert "max-mtu" not in full and "min-mtu" not in full
    assert "throughput" not in typed.with_defaults({"dest": "h2"})
    # Nested values are copies: changing the filled spec leaves the caller's alone.
    full["throughput"]["rounds"] = 9
    assert spec["throughput"] == {"rounds": 3}
    # What is given wins over a default, schema included.
    assert typed.with_defaults({"dest": "h", "schema": 2, "flows": 1})["flows"] == 1
    assert typed.with_defaults({"dest": "h", "schema": 2})["schema"] == 2


@pytest.mark.parametrize("not_a_dict", [None, [], "dest", 3])
def test_a_spec_that_is_not_an_object_fills_from_nothing(not_a_dict):
    assert typed.with_defaults(not_a_dict) == dict(typed.DEFAULTS, schema=1)
    assert typed.RunSpec(not_a_dict).dest is None


def test_a_run_spec_reads_its_fields_from_the_filled_json():
    raw = {"dest": "192.0.2.2", "reverse": True, "min-mtu": 1280}
    full = typed.RunSpec(raw)
    assert full.as_json() == typed.with_defaults(raw)
    assert raw == {"dest": "192.0.2.2", "reverse": True, "min-mtu": 1280}  # not changed
    assert (full.dest, full.flows, full.target_mtu, full.timeout) == ("192.0.2.2", 4, 9000, "PT1S")
    assert (full.min_mtu, full.max_mtu, full.ip_version, full.source) == (1280, None, None, None)
    assert full.reverse and not full.hops and not full.reflector
    assert full.needs_dest and full.throughput is None
    assert full.timeout_seconds == 1.0
    # Read by attribute only: the JSON's dict protocol is not the spec's.
    assert not hasattr(full, "get") and not hasattr(full, "__getitem__")
    assert typed.run_spec(full) is full and typed.run_spec(raw) == full
    copy_ = full.as_json()
    copy_["flows"] = 9
    assert full.flows == 4 and full.as_json()["flows"] == 4


def test_every_field_is_read_under_its_json_name():
    full = typed.RunSpec({"dest": "fd00::2", "source": "fd00::1", "dest-node": "[fd00::2]:443",
                          "source-node": "ps1", "ip-version": 6, "target-mtu": 8000,
                          "max-mtu": 8500, "min-mtu": 1300, "flows": 16, "hops": True,
                          "reflector": True, "timeout": "PT0.25S", "schema": 2})
    assert (full.dest_node, full.source_node, full.ip_version, full.schema) == (
        "[fd00::2]:443", "ps1", 6, 2)
    assert (full.target_mtu, full.max_mtu, full.min_mtu, full.flows) == (8000, 8500, 1300, 16)
    assert full.hops and full.reflector and not full.reverse
    assert full.timeout_seconds == 0.25
    # The reflector makes the dest a participant (jumbo.core.schema's one rule).
    assert full.needs_dest
    assert not typed.RunSpec({"dest": "h"}).needs_dest


def test_an_unreadable_timeout_is_a_value_error_when_read():
    full = typed.RunSpec({"dest": "h", "timeout": "one second"})
    with pytest.raises(ValueError):
        getattr(full, "timeout_seconds")


def test_the_flows_default_has_one_home():
    assert typed.DEFAULTS["flows"] == typed.DEFAULT_FLOWS == typed.RunSpec({"dest": "x"}).flows


def test_equal_specs_are_equal_and_none_is_hashable():
    one, same = typed.RunSpec({"dest": "h"}), typed.RunSpec({"dest": "h", "flows": 4})
    assert one == same and not one != same
    assert one != typed.RunSpec({"dest": "h", "flows": 5})
    assert one != one.as_json()  # a dict is not a spec, even with the same members
    with pytest.raises(TypeError):
        hash(one)
    assert repr(typed.RunSpec({"dest": "h"})).startswith("RunSpec({")


@pytest.mark.parametrize("phase,directions,pattern,legs", [
    ({}, ["forward"], ["standard", "jumbo", "jumbo", "standard"], 4),
    ({"order": "ab", "rounds": 3}, ["forward"], ["standard", "jumbo"], 6),
    ({"direction": "both", "rounds": 2}, ["forward", "reverse"],
     ["standard", "jumbo", "jumbo", "standard"], 16),
    ({"direction": "reverse", "order": "ab"}, ["reverse"], ["standard", "jumbo"], 2),
])
def test_the_throughput_legs_are_rounds_times_pattern_times_directions(
        phase, directions, pattern, legs):
    legs_spec = typed.ThroughputSpec(phase)
    assert legs_spec.directions() == directions
    assert legs_spec.pattern() == pattern
    assert legs_spec.leg_count() == legs


def test_throughput_durations_are_read_in_seconds():
    legs = typed.ThroughputSpec({"duration": "PT1M", "omit": None, "fq-rate": 10 ** 9,
                                 "congestion": "bbr", "port": 5201, "parallel": 4})
    assert (legs.seconds, legs.omit_seconds) == (60.0, 0.0)
    assert (legs.fq_rate, legs.congestion, legs.port, legs.parallel) == (10 ** 9, "bbr", 5201, 4)
    assert typed.ThroughputSpec(None).seconds == 10.0
    with pytest.raises(ValueError):
        typed.ThroughputSpec({"duration": "ten"})
    with pytest.raises(ValueError):
        typed.ThroughputSpec({"omit": "P1Y"})


def test_a_run_spec_with_a_throughput_object_is_a_pair_run():
    full = typed.RunSpec({"dest": "h", "throughput": {"rounds": 2}})
    assert full.throughput is not None and full.needs_dest
    assert full.throughput == typed.ThroughputSpec({"rounds": 2})
    assert typed.RunSpec({"dest": "h", "throughput": "yes"}).throughput is None
