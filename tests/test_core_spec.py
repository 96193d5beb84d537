"""jumbo.core.spec: the spec typed once, its defaults in one place, its JSON unchanged."""

import pytest

from jumbo.core import spec as specs
from jumbo.tool import runner


def test_a_run_spec_reads_its_fields_from_the_filled_json():
    raw = {"dest": "192.0.2.2", "reverse": True, "min-mtu": 1280}
    full = specs.RunSpec(raw)
    assert full.as_json() == specs.with_defaults(raw)
    assert raw == {"dest": "192.0.2.2", "reverse": True, "min-mtu": 1280}  # not changed
    assert (full.dest, full.flows, full.target_mtu, full.timeout) == ("192.0.2.2", 4, 9000, "PT1S")
    assert (full.min_mtu, full.max_mtu, full.ip_version, full.source) == (1280, None, None, None)
    assert full.reverse and not full.hops and not full.reflector
    assert full.needs_dest and not full.is_pair and full.throughput is None
    assert full.timeout_seconds == 1.0
    # Read by attribute only: the JSON's dict protocol is not the spec's.
    assert not hasattr(full, "get") and not hasattr(full, "__getitem__")
    assert specs.run_spec(full) is full and specs.run_spec(raw) == full
    copy = full.as_json()
    copy["flows"] = 9
    assert full.flows == 4 and full.as_json()["flows"] == 4


def test_the_flows_default_has_one_home():
    assert specs.DEFAULTS["flows"] == specs.DEFAULT_FLOWS == specs.RunSpec({"dest": "x"}).flows


def test_a_pair_run_spec_carries_its_legs_typed():
    internal = specs.internal_spec({"dest": "192.0.2.2", "rounds": 2, "order": "ab",
                                    "timeout": "PT2S", "fq-rate": 5000000000})
    assert internal == {"schema": 1, "flows": 1, "hops": False, "reverse": False,
                        "dest": "192.0.2.2", "timeout": "PT2S",
                        "throughput": {"rounds": 2, "order": "ab", "fq-rate": 5000000000}}
    full = specs.RunSpec(internal)
    legs = full.throughput
    assert full.is_pair and full.needs_dest and full.flows == 1
    assert (legs.rounds, legs.order, legs.direction, legs.parallel) == (2, "ab", "forward", 1)
    assert (legs.seconds, legs.omit_seconds, legs.fq_rate, legs.port) == (10.0, 2.0, 5e9, None)
    assert legs.pattern() == ["standard", "jumbo"] and legs.leg_count() == 4
    assert not hasattr(legs, "__getitem__")
    assert full.as_json()["throughput"] == dict(specs.THROUGHPUT_DEFAULTS, rounds=2, order="ab",
                                                **{"fq-rate": 5000000000})
    with pytest.raises(ValueError):
        specs.ThroughputSpec({"duration": "ten"})


def test_a_pair_spec_is_checked_with_the_tools_slot():
    assert specs.pair_with_defaults({"dest": "h"})["timeout"] == "PT1S"
    assert specs.validate_pair({"dest": "192.0.2.2"}) == (True, None)
    valid, error = specs.validate_pair({"dest": "192.0.2.2", "flows": 2})
    assert not valid and error.startswith("At /flows: a pmtu setting")
    valid, error = runner.validate_pair({"dest": "192.0.2.2", "duration": "PT3600S",
                                         "rounds": 20})
    assert not valid and "exclusive slot" in error
    assert specs.validate_pair({"dest": "192.0.2.2", "duration": "PT3600S", "rounds": 20}) \
        == (True, None)
