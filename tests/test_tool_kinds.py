"""jumbo.tool.kinds: the run's kind, chosen once from the test's type, carries what differs
between a pmtu run and a jumbo-throughput run (no phase asks which test it serves)."""

import pytest

from jumbo.core.result import PairResult, PmtuResult
from jumbo.core.spec import slot as slots
from jumbo.tool import kinds, runner


def test_the_kind_is_chosen_once_from_the_tests_type():
    kind, full = runner.test_kind({"type": "pmtu", "spec": {"dest": "192.0.2.2"}})
    assert isinstance(kind, kinds.PmtuRun) and full.throughput is None
    kind, full = runner.test_kind({"type": "jumbo-throughput", "spec": {"dest": "192.0.2.2"}})
    assert isinstance(kind, kinds.PairRun) and full.flows == 1 and full.throughput is not None
    for test in ({"type": "rtt", "spec": {}}, {"type": ["pmtu"], "spec": {}}, []):
        with pytest.raises(ValueError):
            runner.test_kind(test)


def test_each_kind_validates_its_own_spec():
    with pytest.raises(ValueError, match="At /throughput"):
        kinds.PmtuRun().spec({"dest": "192.0.2.2", "throughput": {}})
    with pytest.raises(ValueError, match="At /hops: a pmtu setting"):
        kinds.PairRun().spec({"dest": "192.0.2.2", "hops": True})


def test_only_the_pair_kind_caps_its_forward_step_and_pays_for_legs():
    pmtu = kinds.PmtuRun()
    pair = kinds.PairRun()
    full = pmtu.spec({"dest": "192.0.2.2", "flows": 16, "hops": True})
    budget = pmtu.phases(full)
    assert budget["forward"] > slots.PATH_MTU_BUDGET and budget["throughput"] == 0.0
    internal = pair.spec({"dest": "192.0.2.2", "duration": "PT2S"})
    budget = pair.phases(internal)
    assert budget["forward"] <= slots.PATH_MTU_BUDGET
    assert budget["throughput"] == slots.legs_seconds(internal.throughput) > 0


def test_participant_data_and_legs_belong_to_the_pair_kind():
    pmtu, pair = kinds.PmtuRun(), kinds.PairRun()
    full = pmtu.spec({"dest": "192.0.2.2"})
    assert pmtu.participant_data(1, full) == {} and pmtu.available() == (True, None)
    assert pmtu.legs(None, {}, "192.0.2.2", 4, None) is None
    assert pmtu.serve_legs(None, {}, b"", 0.0, {}) == (None, [])
    internal = pair.spec({"dest": "192.0.2.2", "port": 6201})
    assert pair.participant_data(1, internal)["iperf3-port"] == 6201
    assert "iperf3-port" not in pair.participant_data(0, internal)


class _Run(object):
    def __init__(self, kind, full):
        self.kind, self.full = kind, full


def test_each_kind_assembles_its_own_result_class():
    pmtu, pair = kinds.PmtuRun(), kinds.PairRun()
    full = pmtu.spec({"dest": "192.0.2.2"})
    result = pmtu.assemble(_Run(pmtu, full), None, "no route", None, None, None)
    assert isinstance(result, PmtuResult) and result.error == "no route"
    internal = pair.spec({"dest": "192.0.2.2"})
    result = pair.assemble(_Run(pair, internal), None, "no route", None, None, "no peer")
    assert isinstance(result, PairResult) and not result.succeeded
    assert result.path_mtu_error == "no route" and result.error == "no peer"
