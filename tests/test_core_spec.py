"""jumbo.core.spec: the spec typed once, its defaults in one place, its JSON unchanged."""

import pytest

from jumbo.core import spec as specs


def test_a_pair_run_spec_carries_its_legs_typed():
    internal = specs.internal_spec({"dest": "192.0.2.2", "rounds": 2, "order": "ab",
                                    "timeout": "PT2S", "fq-rate": 5000000000})
    full = specs.RunSpec(internal)
    legs = full.throughput
    assert full.throughput is not None and full.needs_dest and full.flows == 1
    assert (legs.rounds, legs.order, legs.direction, legs.parallel) == (2, "ab", "forward", 1)
    assert (legs.seconds, legs.omit_seconds, legs.fq_rate, legs.port) == (10.0, 2.0, 5e9, None)
    assert legs.pattern() == ["standard", "jumbo"] and legs.leg_count() == 4
    assert not hasattr(legs, "__getitem__")
    assert full.as_json()["throughput"] == dict(specs.THROUGHPUT_DEFAULTS, rounds=2, order="ab",
                                                **{"fq-rate": 5000000000})
    with pytest.raises(ValueError):
        specs.ThroughputSpec({"duration": "ten"})
