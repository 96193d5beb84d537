"""The one way a result part becomes JSON and back: `Members`, a class whose attributes are
its JSON members (`-` read as `_`). Python 3.6 has no dataclasses, hence this small base.

A part remembers which members it carries, so a result read with `from_json` and written with
`as_json` is the same JSON: a member absent stays absent, one of a shape this suite does not
know (a peer's result, a hostile one) comes back as it was, and the schema check that follows
judges it. Nothing here raises on a hostile document: judging it is the schema's job.
"""

import copy


# JSON members whose name is a Python keyword.
RENAMED = {"from": "sender"}


def attribute(key):
    """The attribute name of JSON member `key`."""
    return RENAMED.get(key) or key.replace("-", "_")


# Member schemas several parts share.
INT_OR_NULL = {"type": ["integer", "null"]}
NUMBER_OR_NULL = {"type": ["number", "null"]}
STRING_OR_NULL = {"type": ["string", "null"]}


class Field(object):
    """One JSON member of a result part, declared once: its key (the attribute is
    attribute(key)), its JSON schema (None: a member the part carries beyond the result
    schema's names, allowed by it but not named), whether the schema requires it. A schema
    may name a part class (or [class] for an array of them): schema_of() writes that part's
    own schema there, and from_json reads the member as that part."""

    __slots__ = ("key", "schema", "required", "part")

    def __init__(self, key, schema=None, required=False, part=None):
        self.key, self.schema, self.required, self.part = key, schema, required, part

    def requiring(self, required):
        return Field(self.key, self.schema, required, self.part)


# The members every result of the suite starts with (both tests, every version so far).
HEAD = (Field("schema", {"type": "integer", "enum": [1]}, required=True),
        Field("succeeded", {"type": "boolean"}, required=True),
        Field("error", STRING_OR_NULL),
        Field("diags", STRING_OR_NULL))


def keys(fields):
    return tuple(field.key for field in fields)


def parts(fields):
    """{key: class or [class]}: the members that hold parts."""
    return dict((field.key, field.part) for field in fields if field.part is not None)


def schema_of(kind):
    """The JSON schema of a part class, written from its FIELDS (nested parts' too): "type"
    (kind.JSON_TYPE), the named members' schemas in declaration order, "required", then
    kind.SCHEMA_EXTRA."""
    schema = {"type": kind.JSON_TYPE,
              "properties": dict((field.key, _resolved(field.schema)) for field in kind.FIELDS
                                 if field.schema is not None)}
    required = [field.key for field in kind.FIELDS if field.required]
    if required:
        schema["required"] = required
    schema.update(copy.deepcopy(kind.SCHEMA_EXTRA))
    return schema


def _resolved(schema):
    if isinstance(schema, type) and issubclass(schema, Members):
        return schema_of(schema)
    if isinstance(schema, dict):
        return dict((key, _resolved(value)) for key, value in schema.items())
    if isinstance(schema, list):
        return [_resolved(value) for value in schema]
    return copy.deepcopy(schema)


def slots(keys, *more):
    """A part's __slots__: its members' attribute names (and `more`). Slots, not a __dict__:
    a run makes a part per hop, flow and PTB, and they must cost no more than the dicts."""
    return tuple(attribute(key) for key in keys) + more


class Members(object):
    """A result part. Subclasses declare their JSON members once in FIELDS (Field: key,
    schema, required, part); KEYS (keys(FIELDS)) and PARTS (parts(FIELDS): {key: class} for
    an object, {key: [class]} for an array of objects) follow from them, and the result
    schema is written from them (schema_of; jumbo.core.schema). DEFAULTS ({key: value}) are
    the members every new part starts with."""

    __slots__ = ("_present", "_extra")
    FIELDS = ()
    KEYS = ()
    PARTS = {}
    DEFAULTS = {}
    JSON_TYPE = "object"
    SCHEMA_EXTRA = {}

    def __init__(self, **fields):
        object.__setattr__(self, "_present", [])
        object.__setattr__(self, "_extra", None)  # members of no known name, when read
        for key in self.KEYS:
            object.__setattr__(self, attribute(key), None)
        for key, value in self.DEFAULTS.items():
            setattr(self, attribute(key), copy.deepcopy(value))
        names = {attribute(key) for key in self.KEYS}
        unknown = sorted(set(fields) - names)
        if unknown:
            raise TypeError("%s has no member %s" % (type(self).__name__, ", ".join(unknown)))
        for name, value in fields.items():
            setattr(self, name, value)

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if name not in self._present:
            self._present.append(name)

    def __deepcopy__(self, memo):
        """A copy is the part its JSON holds (parts nest only through their members)."""
        return type(self).from_json(self.as_json())

    def drop(self, name):
        """Leave member `name` out of the JSON (it reads None)."""
        object.__setattr__(self, name, None)
        if name in self._present:
            self._present.remove(name)

    def has(self, name):
        return name in self._present

    def __eq__(self, other):
        return type(other) is type(self) and other.as_json() == self.as_json()

    def __ne__(self, other):
        return not self == other

    __hash__ = None

    def __repr__(self):
        return "%s(%r)" % (type(self).__name__, self.as_json())

    def as_json(self):
        """The part as its JSON object (a new dict; nested parts converted too)."""
        out = copy.deepcopy(self._extra) if self._extra else {}
        for key in self.KEYS:
            name = attribute(key)
            if name in self._present:
                out[key] = to_json(getattr(self, name))
        return out

    @classmethod
    def from_json(cls, document):
        """The part a JSON object holds (a copy: the document is left alone)."""
        names = _attributes(cls)
        part = cls.__new__(cls)
        present = []
        put = object.__setattr__
        put(part, "_present", present)
        put(part, "_extra", None)
        for name in names.values():
            put(part, name, None)
        parts = cls.PARTS
        for key, value in document.items():
            name = names.get(key)
            if name is not None:
                # What __setattr__ does, without its per-member dispatch (the report reads
                # millions of stored hops).
                put(part, name, _read(parts.get(key), value))
                if name not in present:
                    present.append(name)
            else:
                if part._extra is None:
                    put(part, "_extra", {})
                part._extra[key] = copy.deepcopy(value)
        return part

    @classmethod
    def reader(cls, *keys):
        """A function giving the values of these members in one part's JSON object, as a
        tuple (None for one absent), without building the part: the report reads three
        members of hundreds of thousands of stored hops (285,000 at 179,400 paths), where a
        part built per hop was its largest new cost. The keys are checked against the class
        here, once."""
        unknown = [key for key in keys if key not in cls.KEYS]
        if unknown:
            raise ValueError("%s has no member %s" % (cls.__name__, ", ".join(unknown)))
        if any(key in cls.PARTS for key in keys):
            raise ValueError("%s.reader reads plain members only" % cls.__name__)

        def read(document):
            return tuple(map(document.get, keys))
        return read


_ATTRIBUTES = {}


def _attributes(cls):
    """{JSON key: attribute name} of a part's class, worked out once per class."""
    names = _ATTRIBUTES.get(cls)
    if names is None:
        names = _ATTRIBUTES[cls] = dict((key, attribute(key)) for key in cls.KEYS)
    return names


_IMMUTABLE = (str, int, float, bool)


def _read(kind, value):
    """A member's value as its part (class) or list of parts ([class]); left as JSON when
    it is not of that shape (the schema check says what is wrong with it)."""
    if value is None or type(value) in _IMMUTABLE:
        return value    # nothing to copy: most members are these (the report reads millions)
    if isinstance(kind, list) and isinstance(value, list):
        return [kind[0].from_json(item) if isinstance(item, dict) else copy.deepcopy(item)
                for item in value]
    if isinstance(kind, type) and isinstance(value, dict):
        return kind.from_json(value)
    return copy.deepcopy(value)


def to_json(value):
    """A member's value as JSON: parts converted, containers copied."""
    if isinstance(value, Members):
        return value.as_json()
    if isinstance(value, list):
        return [to_json(item) for item in value]
    if isinstance(value, dict):
        return {key: to_json(item) for key, item in value.items()}
    return copy.deepcopy(value)
