"""The JSON values of a file, one at a time, read in chunks (jumbo-replay's file source): a
history exported as one JSON array or as JSON lines can be gigabytes, and reading it whole
took its size in text and several times that in parsed objects before the first was stored.

Accepted: one JSON array (its elements are the items), or a sequence of JSON values (one
object, JSON lines, RFC 7464 record separators, pretty-printed objects one after the other).
Memory is bounded by one item (at most MAX_ITEM characters) plus one chunk.
"""

import json

CHUNK = 1 << 20
MAX_ITEM = 64 << 20
_SKIP = " \t\r\n\x1e"
_DECODER = json.JSONDecoder()


class _Buffer(object):
    def __init__(self, handle):
        self.handle = handle
        self.text = ""
        self.pos = 0
        self.eof = False
        self.line = 1           # line number of self.pos, for errors

    def more(self, at_least=CHUNK):
        if self.eof:
            return False
        if self.pos:
            self.line += self.text.count("\n", 0, self.pos)
            self.text = self.text[self.pos:]
            self.pos = 0
        data = self.handle.read(max(CHUNK, at_least))
        if not data:
            self.eof = True
            return False
        self.text += data
        return True

    def skip(self, chars):
        """Past any of `chars`; the next character, or "" at the end."""
        while True:
            while self.pos < len(self.text) and self.text[self.pos] in chars:
                self.pos += 1
            if self.pos < len(self.text):
                return self.text[self.pos]
            if not self.more():
                return ""

    def value(self):
        """The JSON value at pos (reading more until it is whole)."""
        while True:
            try:
                value, end = _DECODER.raw_decode(self.text, self.pos)
            except ValueError as err:
                line = self.line + self.text.count("\n", 0, self.pos)
                if len(self.text) - self.pos > MAX_ITEM:
                    raise ValueError("line %d: an item over %d MiB" % (line, MAX_ITEM >> 20))
                if self.eof:
                    raise ValueError("line %d: invalid JSON (%s)" % (line, getattr(err, "msg", err)))
                # Incomplete (or invalid: told once the file ends): read as much again, so
                # that a large item is decoded O(log n) times, not once per chunk.
                self.more(len(self.text) - self.pos)
                continue
            if end == len(self.text) and not self.eof and isinstance(value, (int, float)):
                self.more()     # a number cut by the chunk's end: read on, decode again
                continue
            self.pos = end
            return value


def items(handle):
    """Yield the items of the text file `handle` (see the module docstring)."""
    buf = _Buffer(handle)
    first = buf.skip(_SKIP)
    if first == "[":
        buf.pos += 1
        if buf.skip(_SKIP) == "]":
            return
        while True:
            if buf.skip(_SKIP) == "":
                raise ValueError("line %d: the JSON array is not closed" % buf.line)
            yield buf.value()
            after = buf.skip(_SKIP)
            buf.pos += 1
            if after == "":
                raise ValueError("line %d: the JSON array is not closed" % buf.line)
            if after == "]":
                return
            if after != ",":
                raise ValueError("line %d: expected ',' or ']' in the JSON array, found %r"
                                 % (buf.line + buf.text.count("\n", 0, buf.pos), after))
    while first:
        yield buf.value()
        first = buf.skip(_SKIP)
