"""jumbo.core.result.members: each result class declares its members once (Field: key,
schema, required, part) and the result schemas are written from those declarations. The
written schemas are the hand-written ones they replaced, member for member and in the same
order (tests/data/result_schemas_hand_written.json: jumbo.core.schema at 2ae6762)."""

import pytest
import json
import os

from jumbo.core import schema
from jumbo.core.result import PairResult, PmtuResult
from jumbo.core.result.members import Field, Members, keys, parts, schema_of, slots

HAND_WRITTEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                            "result_schemas_hand_written.json")


def test_the_written_schemas_are_the_hand_written_ones():
    with open(HAND_WRITTEN) as handle:
        before = json.load(handle)
    for name, now in (("result-v1", schema.result_schema(1)),
                      ("pair-result-v1", schema.pair_result_schema(1))):
        assert now == before[name], name
        # Same order too: 5.3's enumeration shows the schema as it is written.
        assert json.dumps(now) == json.dumps(before[name]), name


class _Part(Members):
    FIELDS = (Field("a", {"type": "integer"}, required=True), Field("b-c"))
    KEYS = keys(FIELDS)
    __slots__ = slots(KEYS)


class _Whole(Members):
    FIELDS = (Field("one", _Part, part=_Part),
              Field("many", {"type": "array", "items": _Part}, part=[_Part]))
    KEYS = keys(FIELDS)
    __slots__ = slots(KEYS)
    PARTS = parts(FIELDS)
    SCHEMA_EXTRA = {"additionalProperties": False}


def test_a_class_declares_its_members_once():
    assert _Part.KEYS == ("a", "b-c") and _Whole.PARTS == {"one": _Part, "many": [_Part]}
    part = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    assert schema_of(_Whole) == {"type": "object",
                                 "properties": {"one": part,
                                                "many": {"type": "array", "items": part}},
                                 "additionalProperties": False}
    whole = _Whole.from_json({"one": {"a": 1, "b-c": 2}, "many": [{"a": 3}]})
    assert whole.one.b_c == 2 and whole.many[0].a == 3


def test_a_field_added_to_a_class_reaches_its_schema():
    assert "rtt" in schema.RESULT_V1["properties"] and "rtt" in PmtuResult.KEYS
    required = [f.key for f in PairResult.FIELDS if f.required]
    assert required == schema.PAIR_RESULT_V1["required"] == ["schema", "succeeded", "runs",
                                                              "verdict"]


def test_a_reader_gives_the_members_from_json_would_read():
    """Hop.reader: the values of the named members of a stored hop, as Hop.from_json reads
    them (absent ones None, unknown members ignored), checked against the class once."""
    from jumbo.core.result.pmtu import Hop, PmtuResult
    read = Hop.reader("ttl", "ip", "mtu")
    stored = [{"ttl": 3, "ip": "198.18.1.1", "mtu": 8950, "rtt": "PT0.001S"},
              {"ttl": 4, "ip": None},
              {"ttl": 5, "mtu": 1500, "colour": "red"}]
    for doc in stored:
        hop = Hop.from_json(doc)
        assert read(doc) == (hop.ttl, hop.ip, hop.mtu)
    assert read(stored[1]) == (4, None, None)
    with pytest.raises(ValueError, match="Hop has no member colour"):
        Hop.reader("ttl", "colour")
    with pytest.raises(ValueError, match="plain members only"):
        PmtuResult.reader("hops")
