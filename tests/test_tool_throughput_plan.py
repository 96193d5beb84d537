"""jumbo.tool.throughput.plan: the legs in order, the size the jumbo leg can honestly test,
and the time the phase is given in the slot (what a mesh pays for every run)."""

import importlib

import pytest

from jumbo.core.spec import RunSpec
from jumbo.core.spec import slot as slots

# By its module name: the package re-exports the function plan() under the module's name.
plans = importlib.import_module("jumbo.tool.throughput.plan")

SPEC = {"dest": "dst", "throughput": {"duration": "PT2S", "omit": "PT0S", "rounds": 1}}


def test_duration_zero_without_throughput():
    assert plans.duration({"dest": "x"}) == 0
    assert plans.settings({"dest": "x"}) is None and plans.leg_count({"dest": "x"}) == 0
    assert plans.settings(None) is None
    assert plans.plan({"dest": "x"}, 9000) == ([], {"skipped": "no throughput phase in the spec"})


def test_duration_counts_every_leg_and_set_up():
    # The slot pays for working legs (-O + -t + a fixed overhead each); a hanging leg is still
    # killed at its own, longer, leg_timeout and the deadline leaves the rest out.
    per_leg = 2 + slots.LEG_OVERHEAD
    assert plans.leg_timeout(plans.settings(SPEC)) > per_leg
    one = plans.duration(SPEC)
    assert one == 4 * per_leg + slots.FIRST_CONNECT + slots.LEGS_TEARDOWN == 20
    both = dict(SPEC, throughput=dict(SPEC["throughput"], direction="both"))
    ab = dict(SPEC, throughput=dict(SPEC["throughput"], order="ab"))
    three = dict(SPEC, throughput=dict(SPEC["throughput"], rounds=3, omit="PT1S"))
    assert plans.leg_count(both) == 8 and plans.duration(both) > one
    assert plans.leg_count(ab) == 2 and plans.duration(ab) < one
    assert plans.leg_count(three) == 12
    assert plans.duration(three) == 12 * (2 + 1 + slots.LEG_OVERHEAD) + slots.FIRST_CONNECT \
        + slots.LEGS_TEARDOWN
    # The defaults (PT10S, PT2S omit, ABBA): 2 + 4 x (2 + 10 + 2) + 2 = 60 s.
    assert plans.duration({"dest": "d", "throughput": {}}) == 60
    # A fraction of a second rounds up: the slot is never short.
    assert plans.duration({"throughput": {"duration": "PT0.3S", "omit": "PT0S",
                                          "order": "ab"}}) == 9


def test_a_leg_is_bound_by_connect_retry_omit_duration_and_margin():
    phase = plans.settings({"throughput": {"duration": "PT10S", "omit": "PT2S"}})
    assert plans.leg_timeout(phase) == 6.0 + 2.0 + 10.0 + 6.0


@pytest.mark.parametrize("duration,step", [
    ("PT1S", 0.1), ("PT2S", 0.1), ("PT5S", 0.2), ("PT10S", 0.5), ("PT20S", 1.0), ("PT1H", 1.0),
])
def test_the_reporting_interval_gives_about_twenty_samples(duration, step):
    assert plans.interval(plans.settings({"throughput": {"duration": duration}})) == step


def test_a_run_spec_gives_its_typed_legs():
    full = RunSpec(SPEC)
    assert plans.settings(full) is full.throughput
    assert plans.duration(full) == plans.duration(SPEC)
    assert plans.settings(RunSpec({"dest": "x"})) is None


def test_abba_plan_and_mss_per_family():
    legs, info = plans.plan(SPEC, 9000, 4)
    assert [leg["mtu"] for leg in legs] == [1500, 9000, 9000, 1500]
    assert [leg["mss"] for leg in legs] == [1460, 8960, 8960, 1460]
    assert [leg["order"] for leg in legs] == [0, 1, 2, 3]
    assert info == {"jumbo-mtu": 9000, "note": None, "skipped": None}
    legs, _ = plans.plan(SPEC, 9000, 6)
    assert [leg["mss"] for leg in legs] == [1440, 8940, 8940, 1440]
    both = dict(SPEC, throughput=dict(SPEC["throughput"], direction="both", order="ab",
                                      rounds=2))
    legs, _ = plans.plan(both, 9000, 4)
    assert [(leg["round"], leg["mtu"], leg["direction"]) for leg in legs] == [
        (0, 1500, "forward"), (0, 1500, "reverse"), (0, 9000, "forward"), (0, 9000, "reverse"),
        (1, 1500, "forward"), (1, 1500, "reverse"), (1, 9000, "forward"), (1, 9000, "reverse")]


def test_path_mtu_decides_the_jumbo_leg():
    legs, info = plans.plan(SPEC, 8950, 4)
    assert info["jumbo-mtu"] == 8950
    assert info["note"] == "path MTU is 8950: the jumbo leg runs at MTU 8950, not 9000"
    assert [leg["mss"] for leg in legs if leg["size"] == "jumbo"] == [8910, 8910]
    _, info = plans.plan(SPEC, 9216, 4)
    assert info["jumbo-mtu"] == 9000 and info["note"] is None
    legs, info = plans.plan(SPEC, 1500, 4)
    assert info["jumbo-mtu"] is None
    assert info["skipped"] == info["note"] == ("path MTU 1500 is not above 1500: no jumbo leg "
                                               "to run (the standard legs still run)")
    assert [leg["mtu"] for leg in legs] == [1500, 1500]  # the standard legs still run
    _, info = plans.plan(SPEC, 9000, 4, local_mtu=1500)
    assert info["jumbo-mtu"] is None


@pytest.mark.parametrize("path_mtu,local_mtu,mtu,note", [
    (None, None, 9000, "path MTU unknown: the jumbo leg tries 9000 and relies on the stall check"),
    (None, 4000, 4000, "path MTU unknown: the jumbo leg tries 4000 and relies on the stall check"),
    (9000, 4000, 4000, "local MTU is 4000: the jumbo leg runs at MTU 4000, not 9000"),
    (4000, 9000, 4000, "path MTU is 4000: the jumbo leg runs at MTU 4000, not 9000"),
    (1501, None, 1501, "path MTU is 1501: the jumbo leg runs at MTU 1501, not 9000"),
    (1280, None, None, "path MTU 1280 is not above 1500: no jumbo leg to run (the standard "
                       "legs still run)"),
    (None, 1500, None, "path MTU 1500 is not above 1500: no jumbo leg to run (the standard "
                       "legs still run)"),
])
def test_the_jumbo_leg_mtu_and_its_note(path_mtu, local_mtu, mtu, note):
    assert plans.jumbo_leg_mtu(path_mtu, local_mtu) == (mtu, note)


def test_phase_durations_parse_as_the_spec_does():
    """The phase reads the spec's ISO durations, and refuses what the spec refuses."""
    for text, value in (("PT10S", 10.0), ("PT0.5S", 0.5), ("PT1M30S", 90.0), ("P1DT2H", 93600.0)):
        assert plans.settings({"throughput": {"duration": text}}).seconds == value
    for bad in ("ten", "P", "PT", ""):
        with pytest.raises(ValueError):
            plans.settings({"throughput": {"duration": bad}})
