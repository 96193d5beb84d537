"""Validation against the suite's schemas with messages that name the field.

Works the same under jsonschema 3.0.1 (perfSONAR on EL8) and current 4.x:
only Draft7Validator, iter_errors and best_match are used.

jsonschema is imported only when core.quick_schema cannot say a document conforms (an
invalid one, or a keyword it does not know): that import is most of a plugin call's CPU, and
pScheduler gives several calls 5 s (see quick_schema).
"""

import importlib
import re

from . import quick_schema
from .errors import JumboError
from . import schema as schemas


def pointer(error):
    """The JSON pointer of the field an error is about (for an unknown key: that key)."""
    parts = [str(part) for part in error.absolute_path]
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        # jsonschema places this error at the object; the user wants the key to remove.
        known = error.schema.get("properties", {})
        patterns = error.schema.get("patternProperties", {})
        extra = sorted(key for key in error.instance if key not in known
                       and not any(re.search(pattern, key) for pattern in patterns))
        if extra:
            parts.append(extra[0])
    return "/" + "/".join(parts)


def _is_strict_integer(_checker, instance):
    # JSON has one number type and jsonschema counts 5201.0 as an integer; the suite's
    # integers (ports, counts, sizes) are written as integers, so a float never is one.
    return isinstance(instance, int) and not isinstance(instance, bool)


_STRICT = []


def strict_validator():
    """Draft 7 with that one change (TypeChecker.redefine: jsonschema 3.0 and 4.x alike),
    built on first use."""
    if not _STRICT:
        validators = importlib.import_module("jsonschema.validators")
        draft7 = validators.Draft7Validator
        _STRICT.append(validators.extend(draft7, type_checker=draft7.TYPE_CHECKER.redefine(
            "integer", _is_strict_integer)))
    return _STRICT[0]


def best_error(instance, schema):
    """jsonschema's best error for `instance` (None when valid): only when quick_schema cannot
    say it conforms, so a valid document never pays jsonschema's import."""
    if quick_schema.conforms(instance, schema):
        return None
    best_match = importlib.import_module("jsonschema.exceptions").best_match
    return best_match(strict_validator()(schema).iter_errors(instance))


def check(instance, schema):
    """Validate `instance`; return (True, None) or (False, "At /field: problem")."""
    error = best_error(instance, schema)
    if error is None:
        return True, None
    return False, "At %s: %s" % (pointer(error), error.message)


def schema_version(document, maximum, what):
    """The document's `schema` (absent means 1), or raise ValueError naming the problem."""
    if not isinstance(document, dict):
        raise ValueError("%s must be a JSON object" % what)
    version = document.get("schema", 1)
    if isinstance(version, bool) or not isinstance(version, int):
        raise ValueError("At /schema: %s schema version must be an integer" % what)
    if not 1 <= version <= maximum:
        raise ValueError("At /schema: %s schema version %s is not supported (highest is %d)"
                         % (what, version, maximum))
    return version


def _check_versioned(document, maximum, schema_of, what):
    """Validate a document against the schema of its own `schema` version: (valid, error)."""
    try:
        version = schema_version(document, maximum, what)
    except ValueError as err:
        return False, str(err)
    return check(document, schema_of(version))


def check_spec(spec):
    """Schema-level validation of a pmtu spec: (valid, error)."""
    return _check_versioned(spec, schemas.MAX_SPEC_SCHEMA, schemas.spec_schema, "spec")


def check_result(result):
    """Validation of a pmtu result: (valid, error)."""
    return _check_versioned(result, schemas.MAX_RESULT_SCHEMA, schemas.result_schema, "result")


def check_pair_spec(spec):
    """Schema-level validation of a jumbo-throughput spec: (valid, error)."""
    return _check_versioned(spec, schemas.MAX_PAIR_SPEC_SCHEMA, schemas.pair_spec_schema, "spec")


def check_pair_result(result):
    """Validation of a jumbo-throughput result: (valid, error)."""
    return _check_versioned(result, schemas.MAX_PAIR_RESULT_SCHEMA, schemas.pair_result_schema,
                            "result")


def validate_spec(spec, maximum, shape_problem, check_schema, semantic_problem):
    """A test's spec through its checks in the order that gives the clearest message: schema
    version, the test's own shape checks (friendlier than the schema's), the JSON schema, then
    the rules a schema cannot say. (True, None) or (False, "At /field: problem")."""
    try:
        schema_version(spec, maximum, "spec")
    except ValueError as err:
        return False, str(err)
    problem = shape_problem(spec)
    if problem:
        return False, problem
    valid, error = check_schema(spec)
    if not valid:
        return False, error
    problem = semantic_problem(spec)
    if problem:
        return False, problem
    return True, None


class InvalidSpec(JumboError, ValueError):
    """A spec the suite refuses: a JumboError the commands explain, and still a ValueError
    for the callers (pScheduler's methods) that catch a bad input as one."""


def require_valid(spec, validate):
    """`spec` itself, or InvalidSpec("Invalid spec: At /...")."""
    valid, error = validate(spec)
    if not valid:
        raise InvalidSpec("Invalid spec: %s" % error)
    return spec
