"""jumbo.core.result: the typed results every consumer reads, and their one JSON door.

The members each class names are the result schema's (jumbo.core.schema), so the classes and
the schema cannot drift apart; a result read and written back is the same JSON, whatever it
holds (a peer's, a hostile one), so merged-results and the archive record never change what
they were given."""

import json

import pytest

from fixtures import samples
from jumbo.core import schema
from jumbo.core.result import (Blackhole, Flow, Hop, Leg, PairResult, PmtuResult, Ptb, Reverse,
                               Throughput)
from jumbo.core.result.members import attribute

# (class, the schema object it stands for, members it carries beyond the schema's names)
SHAPES = [
    (PmtuResult, schema.RESULT_V1, ()),
    (PairResult, schema.PAIR_RESULT_V1, ("by-direction",)),
    (Hop, schema.HOP, ()),
    (Ptb, schema.PTB, ()),
    (Blackhole, schema.BLACKHOLE, ()),
    (Flow, schema.FLOW, ()),
    (Leg, schema.THROUGHPUT_RUN, ("round", "size", "cpu-sender", "cpu-receiver", "rtt",
                                  "max-rtt", "bytes")),
    (Throughput, schema.THROUGHPUT_RESULT, ("mathis", "notes", "by-direction", "error",
                                            "server")),
]


@pytest.mark.parametrize("kind, shape, beyond", SHAPES, ids=[s[0].__name__ for s in SHAPES])
def test_each_class_names_exactly_its_schemas_members(kind, shape, beyond):
    assert set(kind.KEYS) == set(shape["properties"]) | set(beyond)
    assert len(kind.KEYS) == len(set(kind.KEYS))


def test_a_new_pmtu_result_is_schema_valid_as_it_is():
    from jumbo.core import validate
    assert validate.check_result(PmtuResult.failed("no route").as_json()) == (True, None)


HOSTILE = [{}, {"flows": "x", "hops": [1, None, {"ttl": "a"}], "blackhole": []},
           {"reverse-ptb": [{"from": 3}], "throughput": {"runs": [7, {"x": 1}]}},
           {"_token": "secret", "surprise": {"deep": [1, 2]}}]


@pytest.mark.parametrize("document", [samples.pmtu_result(), samples.pmtu_result(
    pmtud="blackhole", blackhole={"ttl": 2, "ip": "198.18.2.1", "size": 8951})] + HOSTILE)
def test_a_pmtu_result_read_and_written_is_the_same_json(document):
    again = PmtuResult.from_json(document).as_json()
    assert json.dumps(again, sort_keys=True) == json.dumps(document, sort_keys=True)


def test_parts_are_read_by_attribute():
    result = PmtuResult.from_json(samples.pmtu_result(
        pmtud="blackhole", path_mtu=8950, blackhole={"ttl": 2, "ip": "198.18.2.1", "size": 8951}))
    assert result.blackhole.size == 8951 and result.blackhole.ip == "198.18.2.1"
    assert [h.ttl for h in result.hops] == [1, 2, 3]
    assert [f.path_mtu for f in result.flows] == [8950, 8950]
    assert Ptb.from_json({"from": "198.18.1.1", "mtu": 1500}).sender == "198.18.1.1"
    assert attribute("from") == "sender" and attribute("reverse-pmtud") == "reverse_pmtud"


def test_an_unknown_member_is_refused_when_built():
    with pytest.raises(TypeError) as err:
        PmtuResult(path_mtu=9000, pathmtu=1)
    assert "pathmtu" in str(err.value)


def test_a_reverse_not_measured_writes_why_and_nothing_measured():
    result = PmtuResult()
    Reverse.not_measured("no participant data").fold_into(result)
    got = result.as_json()
    assert (got["reverse-path-mtu"], got["reverse-pmtud"], got["reverse-error"]) == (
        None, "unknown", "no participant data")
    assert got["reverse"] == {} and got["reverse-flows"] == [] and got["probes"] == 0


def test_a_measured_reverse_adds_its_probes_and_keeps_its_details():
    result = PmtuResult(probes=5)
    reverse = Reverse.started("198.18.0.2:5501")
    reverse.path_mtu, reverse.pmtud, reverse.probes, reverse.rtt = 1500, "ok", 7, 0.01
    reverse.flows.append(Flow(flow=0, source_port=40000, path_mtu=1500, pmtud="ok"))
    reverse.ptb.append({"from": "198.18.1.1", "mtu": 1500, "useful": True})
    reverse.fold_into(result)
    got = result.as_json()
    assert got["probes"] == 12 and got["reverse-path-mtu"] == 1500
    assert got["reverse-flows"] == [{"flow": 0, "source-port": 40000, "flow-label": None,
                                     "path-mtu": 1500, "pmtud": "ok"}]
    assert got["reverse-ptb"] == [{"from": "198.18.1.1", "mtu": 1500, "size": None,
                                   "useful": True, "count": 1}]
    assert got["reverse"] == {"rtt": 0.01, "elapsed": 0.0, "probes": 7,
                              "reflector": "198.18.0.2:5501", "notes": []}
