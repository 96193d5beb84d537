"""A Prometheus answer's series, decoded one at a time.

`json.loads` of a whole answer holds every series as Python objects at once, beside the
series the report keeps: a 60 MB range answer took the report to 848 MB of RSS. Here the
envelope ({"status": ..., "data": {"resultType": ..., "result": [...]}}) is walked by hand
and each series decoded on its own (the standard decoder's raw_decode from its offset), so
what is held is the answer's text and the series already converted: a series the caller has
turned into its own compact form is garbage once the next one is read.

The envelope is checked as strictly as before, in whatever order its members come: status
"success", `data` an object, `resultType` the kind asked for, `result` a list, every series an
object with string labels; anything else is a ReportError naming the server. Prometheus
writes `resultType` before `result`, so a wrong kind is refused before any series is read; in
another order it is refused once the answer ends. A `data` or `result` given twice (which
Prometheus never writes, and which JSON parsers would read as its last copy) is refused: its
first copy's series have been handed on already.
"""

import json
import re

from ..core.errors import JumboError
from .errors import ReportError

MAX_ANSWER = 64 * 1024 * 1024       # bytes read from one answer at most
MAX_SERIES = 200000                 # series in one answer at most
MAX_LABEL = 1024                    # characters in one label name or value

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class _Malformed(JumboError, ValueError):
    pass


class _Cursor(object):
    """A position in the answer's text, stepping over JSON one member or element at a time."""

    def __init__(self, text):
        self.text = text
        self.pos = 0

    def peek(self):
        self.pos = _SPACE.match(self.text, self.pos).end()
        return self.text[self.pos:self.pos + 1]

    def take(self, char):
        if self.peek() != char:
            raise _Malformed("expected %r at offset %d" % (char, self.pos))
        self.pos += 1

    def value(self):
        self.peek()
        value, self.pos = _DECODER.raw_decode(self.text, self.pos)
        return value

    def keys(self):
        """An object's member names; the caller reads (or skips) each value before the next."""
        for _ in self._items("{", "}"):
            key = self.value()
            if not isinstance(key, str):
                raise _Malformed("a member name is not a string at offset %d" % self.pos)
            self.take(":")
            yield key

    def elements(self):
        """An array's elements, each decoded alone."""
        for _ in self._items("[", "]"):
            yield self.value()

    def _items(self, opening, close):
        """One turn per item of a container; the caller reads the item in its turn, and the
        separator or the closing bracket after it is checked here."""
        self.take(opening)
        if self.peek() == close:
            self.pos += 1
            return
        while True:
            yield
            char = self.peek()
            if char not in (",", close):
                raise _Malformed("expected ',' or %r at offset %d" % (close, self.pos))
            self.pos += 1
            if char == close:
                return


def answer_series(body, kind, key, server):
    """The series of a Prometheus answer `body` (bytes) of `kind` ("vector" or "matrix"):
    yields (labels dict, the series' `key` member) as each is decoded; raises ReportError,
    at the latest once the whole answer is read, when the answer is not such an answer."""
    if len(body) > MAX_ANSWER:
        raise ReportError("%s: answer larger than %d MiB (narrow the window)"
                          % (server, MAX_ANSWER // 1048576))
    try:
        cursor = _Cursor(body.decode("utf-8"))
        envelope = {}
        for name in cursor.keys():
            if name == "data" and "data" in envelope:
                raise ReportError("%s: an answer with two data members" % server)
            if name == "data" and cursor.peek() == "{":
                envelope["data"] = True
                for item in _data(cursor, kind, key, server, envelope):
                    yield item
            else:
                envelope[name] = cursor.value()
        if cursor.peek():
            raise _Malformed("extra data at offset %d" % cursor.pos)
    except (ValueError, UnicodeDecodeError, RecursionError) as err:
        raise ReportError("%s: the answer is not JSON: %s" % (server, str(err)[:200]))
    if envelope.get("status") != "success" or envelope.get("data") is not True:
        raise ReportError("%s: unexpected answer (status %r)"
                          % (server, envelope.get("status") if isinstance(envelope.get("status"), str)
                             else None))
    if envelope.get("resultType") != kind or not envelope.get("result"):
        raise ReportError("%s: expected a %s answer, got %r"
                          % (server, kind, envelope.get("resultType")))


def _data(cursor, kind, key, server, envelope):
    for name in cursor.keys():
        if name == "result" and "result" in envelope:
            raise ReportError("%s: an answer with two result members" % server)
        if name == "result" and cursor.peek() == "[":
            if envelope.get("resultType", kind) != kind:
                raise ReportError("%s: expected a %s answer, got %r"
                                  % (server, kind, envelope.get("resultType")))
            envelope["result"] = True
            count = 0
            for item in cursor.elements():
                count += 1
                if count > MAX_SERIES:
                    raise ReportError("%s: more than %d series in one answer" % (server, MAX_SERIES))
                yield _labels(item, server), item.get(key)
        elif name == "resultType":
            envelope["resultType"] = cursor.value()
        else:
            value = cursor.value()
            if name == "result":
                envelope["result"] = False     # a result that is no list
            del value


def _labels(item, server):
    if not isinstance(item, dict) or not isinstance(item.get("metric"), dict):
        raise ReportError("%s: a series without labels" % server)
    labels = item["metric"]
    for k, v in labels.items():
        if not isinstance(k, str) or not isinstance(v, str) or len(k) > MAX_LABEL or len(v) > MAX_LABEL:
            raise ReportError("%s: a label is not a short string" % server)
    return labels
