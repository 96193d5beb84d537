"""jumbo.core.spec.pair: the jumbo-throughput spec's defaults, the pmtu-shaped internal spec
the tool runs it as, and its validation (schema version, shape, JSON schema, hosts and the
legs' durations, then the slot rule). Expected values are the documented defaults (10 s legs,
2 s omit, one ABBA round, probe timeout PT1S) and the bounds the messages name."""

import pytest

from jumbo import probe
from jumbo.core.spec.pair import (HOST_KEYS, LEG_KEYS, PAIR_DEFAULTS, internal_spec,
                                  pair_shape_problem, pair_slot_seconds, pair_with_defaults,
                                  validate_pair)
from jumbo.core.spec.slot import PATH_MTU_BUDGET


def test_every_default_is_filled_and_what_was_given_is_kept():
    given = {"dest": "h", "rounds": 3}
    assert pair_with_defaults(given) == {
        "schema": 1, "dest": "h", "duration": "PT10S", "omit": "PT2S", "rounds": 3,
        "parallel": 1, "direction": "forward", "order": "abba", "timeout": "PT1S"}
    assert given == {"dest": "h", "rounds": 3}  # a copy, the caller's spec untouched
    assert PAIR_DEFAULTS["timeout"] == "PT1S"


def test_the_internal_spec_is_pmtu_shaped_with_the_legs_apart():
    internal = internal_spec({"schema": 1, "dest": "192.0.2.2", "source": "192.0.2.1",
                              "source-node": "ps-a:443", "ip-version": 4, "rounds": 2,
                              "order": "ab", "timeout": "PT2S", "fq-rate": 5000000000,
                              "port": 5201, "congestion": "bbr"})
    assert internal == {"schema": 1, "flows": 1, "hops": False, "reverse": False,
                        "dest": "192.0.2.2", "source": "192.0.2.1", "source-node": "ps-a:443",
                        "ip-version": 4, "timeout": "PT2S",
                        "throughput": {"rounds": 2, "order": "ab", "fq-rate": 5000000000,
                                       "port": 5201, "congestion": "bbr"}}
    assert internal_spec({"dest": "h"})["throughput"] == {}
    assert set(LEG_KEYS).isdisjoint(HOST_KEYS)


def test_the_defaults_and_the_bounds_are_valid():
    assert validate_pair({"dest": "192.0.2.2"}) == (True, None)
    for spec in ({"dest": "h", "duration": "PT1S"}, {"dest": "h", "duration": "PT3600S"},
                 {"dest": "h", "omit": "PT600S"}, {"dest": "h", "omit": "PT0S"},
                 pair_with_defaults({"dest": "h"})):
        assert validate_pair(spec) == (True, None), spec


@pytest.mark.parametrize("spec,error", [
    (None, "spec must be a JSON object"),
    (["dest"], "spec must be a JSON object"),
    ({"schema": 2, "dest": "h"}, "At /schema: spec schema version 2 is not supported (highest is 1)"),
    ({"schema": True, "dest": "h"}, "At /schema: spec schema version must be an integer"),
    ({}, "At /dest: required field is missing"),
    ({"source": "h"}, "At /dest: required field is missing"),
    ({"dest": "h", "throughput": {"rounds": 2}},
     "At /throughput: the legs' settings are top-level members of a jumbo-throughput spec "
     "(duration, omit, rounds, ...), not a throughput object"),
    ({"dest": "h", "flows": 2}, "At /flows: a pmtu setting; jumbo-throughput measures the path "
                                "MTU with one flow only (run the pmtu test for flows)"),
    ({"dest": "h", "duration": "PT0.5S"}, "At /duration: PT0.5S must be between PT1S and PT3600S"),
    ({"dest": "h", "duration": "PT3601S"}, "At /duration: PT3601S must be between PT1S and "
                                           "PT3600S"),
    ({"dest": "h", "omit": "PT601S"}, "At /omit: PT601S must be between PT0S and PT600S"),
    ({"dest": "h", "rounds": 21}, "At /rounds: 21 is greater than the maximum of 20"),
    ({"dest": "h", "parallel": 0}, "At /parallel: 0 is less than the minimum of 1"),
    ({"dest": "h", "port": 80}, "At /port: 80 is less than the minimum of 1024"),
    ({"dest": "h", "fq-rate": 0}, "At /fq-rate: 0 is less than the minimum of 1"),
    ({"dest": "h", "ip-version": 5}, "At /ip-version: 5 is not one of [4, 6]"),
    ({"dest": "h", "timeout": "PT1H"}, "At /timeout: PT1H must be more than 0 and at most PT60S"),
    ({"dest": "198.18.0.2", "ip-version": 6},
     "At /dest: 198.18.0.2 is an IPv4 address but ip-version is 6"),
    ({"dest": "fd00::2", "source": "198.18.0.1"},
     "At /source: 198.18.0.1 is an IPv4 address but dest fd00::2 is IPv6"),
])
def test_a_bad_spec_is_refused_with_where_and_why(spec, error):
    assert validate_pair(spec) == (False, error)


@pytest.mark.parametrize("spec,where", [
    ({"dest": ""}, "At /dest:"), ({"dest": "a b"}, "At /dest:"),
    ({"dest": "h", "omit": "ten"}, "At /omit:"), ({"dest": "h", "congestion": "BBR"},
                                                  "At /congestion:"),
    ({"dest": "h", "congestion": "cubic\n"}, "At /congestion:"),
    ({"dest": "h", "direction": "sideways"}, "At /direction:"),
])
def test_the_schemas_refusals_name_the_member(spec, where):
    valid, error = validate_pair(spec)
    assert valid is False and error.startswith(where), error


def test_an_unknown_member_is_named_with_what_is_allowed():
    allowed = ("congestion, dest, dest-node, direction, duration, fq-rate, ip-version, omit, "
               "order, parallel, port, rounds, schema, source, source-node, timeout")
    assert pair_shape_problem({"dest": "h", "colour": 1}) == \
        "At /colour: unknown field (allowed: %s)" % allowed
    # A key that is not a string (not JSON, but a caller may pass one) is named, not a crash.
    assert pair_shape_problem({"dest": "h", 1: 2}) == "At /1: unknown field (allowed: %s)" % allowed
    for key in ("hops", "reverse", "target-mtu", "max-mtu", "min-mtu"):
        assert pair_shape_problem({"dest": "h", key: 1}).startswith("At /%s: a pmtu setting" % key)


def test_the_slot_grows_with_the_probes_bound_up_to_the_path_mtu_budget():
    spec = {"dest": "h"}
    at_budget = pair_slot_seconds(spec, lambda run_spec: PATH_MTU_BUDGET)
    assert pair_slot_seconds(spec, lambda run_spec: 100.0) == at_budget  # capped
    assert at_budget - pair_slot_seconds(spec, lambda run_spec: 1.0) == PATH_MTU_BUDGET - 1
    # The probe's own bound, read from the internal spec (one flow, no hops, no reverse).
    assert pair_slot_seconds(spec, probe.max_duration) <= at_budget


def test_a_pair_spec_is_checked_with_its_slot_rule_given_the_probes_bound():
    # 20 ABBA rounds of one-hour legs: 80 hours, far beyond the node's PT10M slot limit.
    long = {"dest": "192.0.2.2", "duration": "PT3600S", "rounds": 20}
    valid, error = validate_pair(long, probe.max_duration)
    assert not valid and error.startswith("At /duration:") and "exclusive slot" in error
    assert validate_pair(long) == (True, None)  # without the bound, no slot rule
