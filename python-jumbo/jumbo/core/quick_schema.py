"""A fast yes for documents that conform to the suite's own schemas, without importing
jsonschema.

Why: pScheduler runs each plugin method in a fresh interpreter and gives several of them 5 s,
hard-coded (a test's participants and cli-to-spec, a tool's can-run and merged-results).
Importing jsonschema is about 0.15 s of CPU, most of such a call's cost: on a busy node (the
real mesh on two cores) that import alone ran the calls out of time. Almost every document
these methods see is valid, so validate.check asks here first and imports jsonschema only
when this says anything but "conforms" (then jsonschema decides and words the error).

Sound by construction, never complete: conforms() is True only when every keyword met is one
this module knows, and it is at least as strict as jsonschema's Draft 7 with the suite's strict
integers (validate.StrictValidator) on each of them. Any other keyword, or a `$ref` that is
not "#/definitions/NAME", returns None ("cannot tell"). Being stricter than jsonschema is
allowed (it costs only the slow path); being laxer never is (tests/test_core_quick_schema.py
compares both on the suite's schemas with generated documents).
"""

import re

from .errors import JumboError

# Keywords that constrain nothing (annotations): skipped.
_ANNOTATIONS = frozenset(("$schema", "$id", "$comment", "title", "description", "default",
                          "examples", "definitions"))
_KNOWN = frozenset(("type", "enum", "properties", "patternProperties", "additionalProperties",
                    "required", "items", "minItems", "maxItems", "anyOf", "minimum", "maximum", "minLength",
                    "maxLength", "pattern", "$ref")) | _ANNOTATIONS


class _Unknown(JumboError):
    """A keyword or form this module does not decide: the caller must ask jsonschema (never
    leaves this module: conforms() turns it into None)."""


def _is_type(instance, name):
    if name == "object":
        return isinstance(instance, dict)
    if name == "array":
        return isinstance(instance, list)
    if name == "string":
        return isinstance(instance, str)
    if name == "boolean":
        return isinstance(instance, bool)
    if name == "null":
        return instance is None
    if name == "integer":  # the suite's strict integers: never a float, never a bool
        return isinstance(instance, int) and not isinstance(instance, bool)
    if name == "number":
        return isinstance(instance, (int, float)) and not isinstance(instance, bool)
    raise _Unknown(name)


def _same(a, b):
    # enum by type and value: stricter than jsonschema 3.0 (where True == 1), as allowed.
    return type(a) is type(b) and a == b


def _resolve(ref, root):
    if not isinstance(ref, str) or not ref.startswith("#/definitions/"):
        raise _Unknown(ref)
    name = ref[len("#/definitions/"):]
    definitions = root.get("definitions")
    if "/" in name or "~" in name or not isinstance(definitions, dict) or name not in definitions:
        raise _Unknown(ref)
    return definitions[name]


def _ok(instance, schema, root, depth):
    decided = _decided(schema, depth)
    if decided is not None:
        return decided
    return _keywords_ok(instance, schema, root, depth) and \
        _by_type_ok(instance, schema, root, depth)


def _decided(schema, depth):
    """True or False for the schemas that decide alone (true, {}, false); None for a schema
    of known keywords to check; _Unknown for anything else."""
    if depth > 64:
        raise _Unknown("depth")  # deeper than any suite document: let jsonschema judge
    if schema is True or schema == {}:
        return True
    if schema is False:
        return False
    if not isinstance(schema, dict) or not _KNOWN.issuperset(schema):
        raise _Unknown(schema)
    return None


def _keywords_ok(instance, schema, root, depth):
    """The keywords that apply to every instance: $ref, type, enum, anyOf."""
    # With "$ref", Draft 7 ignores the other keywords; checking them too is only stricter.
    if "$ref" in schema and not _ok(instance, _resolve(schema["$ref"], root), root, depth + 1):
        return False
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is_type(instance, name) for name in names):
            return False
    if "enum" in schema and not any(_same(instance, e) for e in schema["enum"]):
        return False
    return not ("anyOf" in schema and
                not any(_ok(instance, s, root, depth + 1) for s in schema["anyOf"]))


def _by_type_ok(instance, schema, root, depth):
    """The keywords that apply to the instance's own type (numbers, strings, objects,
    arrays and their items)."""
    if _is_type(instance, "number") and not _number_ok(instance, schema):
        return False
    if isinstance(instance, str) and not _string_ok(instance, schema):
        return False
    if isinstance(instance, dict) and not _object_ok(instance, schema, root, depth):
        return False
    if isinstance(instance, list) and not _array_ok(instance, schema):
        return False
    if isinstance(instance, list) and "items" in schema:
        items = schema["items"]
        if not isinstance(items, (dict, bool)):
            raise _Unknown("items")  # the tuple form
        return all(_ok(item, items, root, depth + 1) for item in instance)
    return True


def _number_ok(instance, schema):
    return not (("minimum" in schema and instance < schema["minimum"]) or
                ("maximum" in schema and instance > schema["maximum"]))


def _array_ok(instance, schema):
    return not (("minItems" in schema and len(instance) < schema["minItems"]) or
                ("maxItems" in schema and len(instance) > schema["maxItems"]))


def _string_ok(instance, schema):
    if "minLength" in schema and len(instance) < schema["minLength"]:
        return False
    if "maxLength" in schema and len(instance) > schema["maxLength"]:
        return False
    return "pattern" not in schema or re.search(schema["pattern"], instance) is not None


def _object_ok(instance, schema, root, depth):
    if any(key not in instance for key in schema.get("required", ())):
        return False
    properties = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    extra = schema.get("additionalProperties", True)
    for key, value in instance.items():
        matched = False
        if key in properties:
            matched = True
            if not _ok(value, properties[key], root, depth + 1):
                return False
        for pattern, subschema in patterns.items():
            if re.search(pattern, key):
                matched = True
                if not _ok(value, subschema, root, depth + 1):
                    return False
        if not matched and not _ok(value, extra, root, depth + 1):
            return False
    return True


def conforms(instance, schema):
    """True: `instance` is valid against `schema` (jsonschema would agree). None: cannot
    tell (invalid, or a keyword this module does not know): ask jsonschema."""
    try:
        return True if _ok(instance, schema, schema, 0) else None
    except (_Unknown, RecursionError, TypeError, re.error):
        return None
