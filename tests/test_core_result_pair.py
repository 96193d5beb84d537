"""jumbo.core.result.pair: the jumbo-throughput test's result (PairResult), its legs (Leg) and
their summary (Throughput). Figures are the schema's own (jumbo.core.schema.PAIR_RESULT_V1,
written from these declarations) and a result read and written back is the same JSON,
whatever it holds (a peer's, a hostile one)."""

import json

import pytest

from fixtures import samples
from jumbo.core import validate
from jumbo.core.result.pair import (PATH_FIELDS, SCHEMA, SUCCESS_VERDICTS, Leg, PairResult,
                                    Throughput)

HOSTILE = [{}, {"runs": [7, {"x": 1}], "standard": [], "verdict": 3},
           {"_token": "secret", "surprise": {"deep": [1, 2]}, "runs": "x"},
           {"runs": [{"order": 0}]}]


@pytest.mark.parametrize("document", [samples.pair_result(), samples.pair_result(gain=0.9)]
                         + HOSTILE)
def test_a_pair_result_read_and_written_is_the_same_json(document):
    again = PairResult.from_json(document).as_json()
    assert json.dumps(again, sort_keys=True) == json.dumps(document, sort_keys=True)


def test_a_new_result_says_it_failed_and_is_schema_valid_as_it_is():
    result = PairResult.failed("no route", diags="tried 198.18.0.2")
    document = result.as_json()
    assert validate.check_pair_result(document) == (True, None)
    assert (document["schema"], document["succeeded"], document["error"], document["diags"]) == (
        SCHEMA, False, "no route", "tried 198.18.0.2")
    # Nothing measured is written as nothing: no path MTU, PMTUD unknown, no leg, failed.
    assert (document["path-mtu"], document["pmtud"], document["runs"], document["verdict"],
            document["gain"], document["jumbo-mtu"]) == (None, "unknown", [], "failed", None, None)
    assert PairResult().as_json() == dict(document, error=None, diags="")


def test_legs_are_read_by_attribute_and_the_first_leg_error_names_its_leg():
    result = PairResult.from_json({"runs": [
        7, {"order": 0, "mtu": 1500, "mss": 1448, "throughput": 9.4e8, "observed-mss": 1448},
        {"order": 1, "mtu": 9000, "mss": 8948, "throughput": None, "error": "stalled at 8948"},
        {"order": 2, "mtu": 9000, "mss": 8948, "throughput": None, "error": "second"}]})
    assert result.runs[0] == 7  # a hostile item is kept as it was, not read as a leg
    assert isinstance(result.runs[1], Leg)
    assert (result.runs[1].mss, result.runs[1].observed_mss, result.runs[1].throughput) == (
        1448, 1448, 9.4e8)
    assert result.first_leg_error() == "leg 1: stalled at 8948"
    assert PairResult.from_json(samples.pair_result()).first_leg_error() is None
    assert PairResult.from_json({"runs": "x"}).first_leg_error() is None


@pytest.mark.parametrize("change,where", [
    ({"verdict": "great"}, "/verdict"),
    ({"runs": [{"order": 0, "mtu": 1500, "mss": 1448, "throughput": 1e9,
                "direction": "sideways"}]}, "/runs/0/direction"),
    ({"runs": [{"order": -1, "mtu": 1500, "mss": 1448, "throughput": 1e9}]}, "/runs/0/order"),
    ({"runs": [{"order": 0, "mtu": 1500, "throughput": 1e9}]}, "/runs/0"),
    ({"gain": "1.8"}, "/gain"),
])
def test_the_schema_refuses_a_bad_member_and_says_where(change, where):
    document = dict(samples.pair_result(), **change)
    valid, message = validate.check_pair_result(document)
    assert valid is False
    assert message.startswith("At %s:" % where), message


def test_runs_and_verdict_are_required():
    for member in ("runs", "verdict"):
        document = samples.pair_result()
        del document[member]
        assert validate.check_pair_result(document) == (
            False, "At /: '%s' is a required property" % member)


def test_a_failed_throughput_phase_says_why():
    legs = Throughput.failed("no leg ran")
    assert legs.as_json() == {"runs": [], "verdict": "failed", "skipped": None,
                              "error": "no leg ran"}


def test_a_skipped_jumbo_leg_keeps_the_leg_that_ran():
    legs = Throughput(runs=[Leg(order=0, mtu=1500, mss=1448, throughput=1e9)],
                      verdict="skipped", skipped="path MTU 1500")
    assert legs.as_json() == {"runs": [{"order": 0, "mtu": 1500, "mss": 1448,
                                        "throughput": 1e9}],
                              "verdict": "skipped", "skipped": "path MTU 1500"}


def test_what_counts_as_a_measurement_and_what_the_path_step_adds():
    verdict = [f for f in PairResult.FIELDS if f.key == "verdict"][0]
    assert set(SUCCESS_VERDICTS) == set(verdict.schema["enum"]) - {"failed"}
    assert set(PATH_FIELDS) <= set(PairResult.KEYS)
    assert set(PairResult.LEG_MEMBERS) <= set(PairResult.KEYS)
    assert set(PairResult.LEG_MEMBERS) >= {f.key for f in Throughput.LEG_FIELDS}
