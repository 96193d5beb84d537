"""The archiver's RFC 7464 records: each parsed into an Envelope that keeps the JSON text of
its `result` member as it was read (the SQLite store stores that text instead of encoding the
result again)."""

import json
import re
from json.decoder import scanstring

from ..core.errors import JumboError

class Envelope(dict):
    """A parsed archiver record that remembers `result_text`: the JSON text of its
    `result` member (the pScheduler result object) as it was read, or None when that
    is not an object. The SQLite store keeps that text instead of encoding it again.
    """
    __slots__ = ("result_text",)


_scan_value = json.JSONDecoder().scan_once
_WS = re.compile(r"[ \t\n\r]*")
_SPACE = frozenset(" \t\n\r")  # note: "" (end of text) is not in it


class _Irregular(JumboError):
    pass


def _parse_envelope(text):
    """The top-level object member by member, each value by the json module's own
    (C) scanner, so that the text of `result` is known without encoding it again."""
    if not text.startswith("{"):
        raise _Irregular()
    ws = _WS.match
    envelope = Envelope()
    envelope.result_text = None
    index = 1
    if text[index:index + 1] in _SPACE:
        index = ws(text, index).end()
    if text[index:index + 1] == "}":
        index += 1
    else:
        while True:
            if text[index:index + 1] != '"':
                raise _Irregular()
            key, index = scanstring(text, index + 1)
            if text[index:index + 1] != ":":
                index = ws(text, index).end()
                if text[index:index + 1] != ":":
                    raise _Irregular()
            start = index + 1
            if text[start:start + 1] in _SPACE:
                start = ws(text, start).end()
            try:
                value, index = _scan_value(text, start)
            except StopIteration:
                raise _Irregular()
            envelope[key] = value
            if key == "result":
                envelope.result_text = text[start:index] if isinstance(value, dict) else None
            separator = text[index:index + 1]
            if separator in _SPACE:
                index = ws(text, index).end()
                separator = text[index:index + 1]
            index += 1
            if separator == "}":
                break
            if separator != ",":
                raise _Irregular()
            if text[index:index + 1] in _SPACE:
                index = ws(text, index).end()
    if index != len(text):
        raise _Irregular()
    return envelope


def parse_record(line):
    """The JSON value of one RFC 7464 record (bytes or text); ValueError if malformed.

    An object comes back as an Envelope carrying the text of its `result` member.
    """
    text = line.decode("utf-8") if isinstance(line, bytes) else line
    text = text.lstrip("\x1e").strip()
    try:
        return _parse_envelope(text)
    except (_Irregular, ValueError, RecursionError):
        # Anything unusual: the plain parser decides (and words the error).
        try:
            return json.loads(text)
        except RecursionError:
            raise ValueError("nested too deeply")
