"""jumbo.core.spec.slot: a run's phases and the jumbo-throughput slot rule, read by the test
type (spec-is-valid) and the tool (duration) alike."""

import pytest

from jumbo import probe
from jumbo.core import limits
from jumbo.core import spec as specs
from jumbo.core.spec import slot as slots
from jumbo.testtype import pair
from jumbo.tool import runner

PAIR = {"dest": "192.0.2.2", "duration": "PT2S", "omit": "PT0S"}


def test_legs_get_their_run_time_and_a_fixed_overhead_per_leg():
    legs = specs.RunSpec(specs.internal_spec(PAIR)).throughput
    assert slots.legs_seconds(None) == 0
    assert slots.legs_seconds(legs) == 4 * (2 + slots.LEG_OVERHEAD) + slots.FIRST_CONNECT \
        + slots.LEGS_TEARDOWN
    both = specs.RunSpec(specs.internal_spec(dict(PAIR, direction="both"))).throughput
    assert slots.legs_seconds(both) == 8 * (2 + slots.LEG_OVERHEAD) + slots.FIRST_CONNECT \
        + slots.LEGS_TEARDOWN


def test_phases_count_reverse_only_when_asked_and_cap_the_forward_step():
    plain = specs.RunSpec({"dest": "192.0.2.2"})
    budget = slots.phases(plain, 5.0, reverse=9.0)
    assert budget == {"start": 0.0, "forward": 5.0, "reverse": 0.0, "throughput": 0.0,
                      "end": slots.TEARDOWN}
    reverse = specs.RunSpec({"dest": "192.0.2.2", "reverse": True})
    budget = slots.phases(reverse, 5.0, reverse=9.0)
    assert (budget["start"], budget["reverse"], budget["end"]) == (
        slots.START_WAIT, 9.0, slots.TEARDOWN)
    internal = specs.RunSpec(specs.internal_spec(PAIR))
    capped = slots.phases(internal, 100.0, forward_cap=slots.PATH_MTU_BUDGET)
    assert capped["forward"] == slots.PATH_MTU_BUDGET
    assert capped["end"] == slots.STATUS_BUDGET + slots.TEARDOWN
    assert slots.seconds({"a": 1.2, "b": 2.0}) == 4


@pytest.mark.parametrize("spec", [PAIR, dict(PAIR, rounds=3, direction="both"),
                                  dict(PAIR, order="ab", duration="PT30S", omit="PT5S")])
def test_the_test_type_and_the_tool_reserve_the_same_slot(spec):
    tool = runner.duration({"type": "jumbo-throughput", "spec": spec})["duration"]
    assert tool == "PT%dS" % specs.pair_slot_seconds(spec, probe.max_duration)


def test_the_slot_rule_refuses_a_slot_over_the_nodes_limit(tmp_path, monkeypatch):
    path = tmp_path / "limits.json"
    path.write_text('{"throughput-max-slot": "PT60S"}')
    monkeypatch.setenv(limits.LIMITS_ENV, str(path))
    assert slots.slot_problem(60) is None
    problem = slots.slot_problem(61)
    assert problem.startswith("At /duration: the run would reserve an exclusive slot of PT61S")
    assert "PT60S" in problem and slots.SLOT_FIELDS in problem
    long = dict(PAIR, duration="PT20S")
    valid, error = pair.validate(long)
    assert not valid and error == slots.slot_problem(specs.pair_slot_seconds(long,
                                                                             probe.max_duration))
    assert pair.validate(PAIR) == (True, None)
