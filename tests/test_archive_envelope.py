"""jumbo.archive.envelope: one RFC 7464 record (RS, JSON text, LF) parsed to the same value
the json module gives, an object as an Envelope that also keeps the exact text of its
`result` member; anything malformed a ValueError (what the archiver answers per record)."""

import json

import pytest

from jumbo.archive import envelope

RESULT = '{"succeeded":true,  "path-mtu" : 9000, "hops": [{"ttl": 1, "mtu": 9000}], "n": "\\u00e9"}'


@pytest.mark.parametrize("record", [
    '\x1e{"result": %s, "task": {"href": "https://ps1/t/1"}}\n' % RESULT,
    '{"task":1,"result":%s}' % RESULT,
    '\x1e  {  "result"  :  %s  ,  "x" : [ ]  }  \r\n' % RESULT,
    ('\x1e{"result": %s}\n' % RESULT).encode("utf-8"),
])
def test_an_object_parses_as_json_does_and_keeps_the_results_text(record):
    parsed = envelope.parse_record(record)
    text = record.decode("utf-8") if isinstance(record, bytes) else record
    assert isinstance(parsed, envelope.Envelope)
    assert parsed == json.loads(text.lstrip("\x1e"))
    assert parsed.result_text == RESULT  # byte for byte, \u00e9 as written
    assert json.loads(parsed.result_text) == parsed["result"]


@pytest.mark.parametrize("record,value", [
    ("{}", {}), ("{ }", {}), ('{"result": 3}', {"result": 3}),
    ('{"result": [1]}', {"result": [1]}),
    # A repeated member: the last one counts, as for json.loads; so does its text.
    ('{"result": {"a": 1}, "result": []}', {"result": []}),
])
def test_a_result_that_is_no_object_has_no_text(record, value):
    parsed = envelope.parse_record(record)
    assert parsed == value and parsed.result_text is None


def test_the_last_of_repeated_results_gives_the_text():
    parsed = envelope.parse_record('{"result": [], "result": {"b": 2}}')
    assert parsed == {"result": {"b": 2}} and parsed.result_text == '{"b": 2}'


@pytest.mark.parametrize("record,value", [
    ("[1, 2]", [1, 2]), ('"text"', "text"), ("3", 3), ("null", None),
])
def test_a_record_that_is_not_an_object_is_its_json_value(record, value):
    parsed = envelope.parse_record(record)
    assert parsed == value and not isinstance(parsed, envelope.Envelope)


@pytest.mark.parametrize("record", [
    "", "\x1e", "{", '{"a": 1,}', '{"a" 1}', '{"a": 1} x', '{"a": 1}{"b": 2}', "{'a': 1}",
    '{"a": tru}', '{"a": 1 "b": 2}', b'{"a": "\xff"}', '{"a": "\x00"}',
    "[" * 100000, '{"a": ' + "[" * 100000,
])
def test_a_malformed_record_is_a_value_error(record):
    with pytest.raises(ValueError):
        envelope.parse_record(record)


def test_nesting_beyond_the_parsers_depth_is_said_so():
    with pytest.raises(ValueError) as caught:
        envelope.parse_record("[" * 100000 + "]" * 100000)
    assert str(caught.value) == "nested too deeply"
