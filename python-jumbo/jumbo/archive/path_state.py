"""The state of one result (jumbo / standard / black hole / unknown / failed), defined once.

RULE is a table: the first state whose conditions hold is the result's state. It is
rendered, from this one definition, to
  state_of(result, target)      Python, over a dict or a Latest-like object
  sql(target, ...)              an SQL CASE expression (sqlite/reader.py; also over the
                                store's summary tables, where NULL is stored as -1 and the
                                black-hole conditions as one flag)
  sql_blackhole(qualifier)      that flag: the black-hole conditions as one SQL 0/1 (the
                                summary tables of sqlite/store.py are filled with it)
  sql_unknown(qualifier)        the summary tables' other flag: pmtud "unknown" as 0/1
  filters(target, prefix)       OpenSearch query clauses, one per state (opensearch/reader.py)
so the trend, the changes and the latest results can never disagree on what a state means.

A condition is (field, test): "blackhole" (the field says black hole), "unknown" (the field
says unknown), "true", "ge" (>= target), "missing_or_ge" (absent, or >= target), "present"
(not absent).

`unknown`: the result would be jumbo, but its forward PMTUD verdict is "unknown": the probe
engine says so when a flow was left unconfirmed (the run ran out of time) and no black hole
was found. The unmeasured flows may be the ones a partial black hole eats, so such a result is
never counted as jumbo-capable. A result whose measured path MTU is already below the target
stays `standard` (no unmeasured flow can make it jumbo).
"""

STATES = ("jumbo", "standard", "blackhole", "unknown", "failed")

# Any of these makes the result a black hole (either direction, or a per-flow one).
BLACKHOLE_ANY = (("pmtud", "blackhole"), ("reverse_pmtud", "blackhole"), ("partial", "true"))

# (state, "any" | "all", conditions), in order; the last state has no conditions.
RULE = (
    ("blackhole", "any", BLACKHOLE_ANY),
    ("unknown", "all", (("succeeded", "true"), ("path_mtu", "ge"),
                        ("reverse_path_mtu", "missing_or_ge"), ("pmtud", "unknown"))),
    ("jumbo", "all", (("succeeded", "true"), ("path_mtu", "ge"), ("reverse_path_mtu", "missing_or_ge"))),
    ("standard", "all", (("succeeded", "true"), ("path_mtu", "present"))),
    ("failed", "all", ()),
)


# -- Python -------------------------------------------------------------------------------

def _holds(value, test, target):
    if test in ("blackhole", "unknown"):
        return value == test
    if test == "true":
        return bool(value)
    if test == "ge":
        return value is not None and value >= target
    if test == "missing_or_ge":
        return value is None or value >= target
    return value is not None            # present


# Every field the rule reads (the keyword arguments of state_of_fields).
FIELDS = tuple(sorted(set(field for _state, _combine, conditions in RULE
                          for field, _test in conditions)))


def _python_source(name, access, signature="src, target"):
    """The rule as the source of one Python function (compiled once below: the report calls
    it for every path, where interpreting the table would cost ~20x more)."""
    def value(field):
        return access % field
    tests = {"blackhole": "{v} == 'blackhole'", "unknown": "{v} == 'unknown'", "true": "{v}",
             "ge": "({v} is not None and {v} >= target)",
             "missing_or_ge": "({v} is None or {v} >= target)", "present": "{v} is not None"}
    lines = ["def %s(%s):" % (name, signature)]
    for state, combine, conditions in RULE:
        if not conditions:
            lines.append("    return %r" % state)
            continue
        joint = " or " if combine == "any" else " and "
        test = joint.join("(%s)" % tests[t].format(v=value(f)) for f, t in conditions)
        lines.append("    if %s:\n        return %r" % (test, state))
    return "\n".join(lines) + "\n"


_COMPILED = {}
exec(_python_source("_state_of_dict", "src.get(%r)"), _COMPILED)
exec(_python_source("_state_of_object", "getattr(src, %r, None)"), _COMPILED)
exec(_python_source("state_of_fields", "%s",
                    "target, " + ", ".join("%s=None" % field for field in FIELDS)), _COMPILED)
_state_of_dict = _COMPILED["_state_of_dict"]
_state_of_object = _COMPILED["_state_of_object"]
# state_of_fields(target, succeeded=..., path_mtu=..., ...): the same rule over keyword
# arguments, for callers that combine fields of several results (the report's model).
state_of_fields = _COMPILED["state_of_fields"]


def state_of(src, target):
    """A result's state; `src` is a dict or an object with the fields as attributes."""
    if isinstance(src, dict):
        return _state_of_dict(src, target)
    return _state_of_object(src, target)


def state_of_interpreted(src, target):
    """The same, read from the table step by step (the tests check both agree)."""
    get = src.get if isinstance(src, dict) else (lambda k: getattr(src, k, None))
    for state, combine, conditions in RULE:
        found = [_holds(get(field), test, target) for field, test in conditions]
        if not conditions or (any(found) if combine == "any" else all(found)):
            return state
    raise AssertionError("the last state of RULE has no conditions")


def _blackhole_source():
    """BLACKHOLE_ANY as the source of two Python functions, over a dict and over keyword
    arguments (compiled below: the report asks it three times per path)."""
    tests = {"blackhole": "%s == 'blackhole'", "true": "bool(%s)"}
    on_dict = " or ".join(tests[test] % ("src.get(%r)" % field) for field, test in BLACKHOLE_ANY)
    on_fields = " or ".join(tests[test] % field for field, test in BLACKHOLE_ANY)
    return ("def _is_blackhole_dict(src):\n    return %s\n\n"
            "def blackhole_fields(%s):\n    return %s\n" % (
                on_dict, ", ".join("%s=None" % field for field, _test in BLACKHOLE_ANY),
                on_fields))


exec(_blackhole_source(), _COMPILED)
_is_blackhole_dict = _COMPILED["_is_blackhole_dict"]
# blackhole_fields(pmtud=..., reverse_pmtud=..., partial=...): the black-hole conditions over
# keyword arguments (absent ones do not count), for the model's per-direction checks.
blackhole_fields = _COMPILED["blackhole_fields"]


def is_blackhole(src):
    """The black-hole conditions of RULE alone (fields absent from `src` do not count): the
    model keeps each direction's black hole apart, for localisation."""
    if isinstance(src, dict):
        return _is_blackhole_dict(src)
    return any(_holds(getattr(src, field, None), test, None) for field, test in BLACKHOLE_ANY)


# -- SQL ----------------------------------------------------------------------------------

def _sql_condition(field, test, target, null):
    col = field if null is None else "NULLIF(%s, %s)" % (field, null)
    if test in ("blackhole", "unknown"):
        return "%s = '%s'" % (field, test)
    if test == "true":
        return "%s = 1" % field
    if test == "ge":
        return "%s >= %d" % (col, target)
    if test == "missing_or_ge":
        return "(%s IS NULL OR %s >= %d)" % (col, field, target)
    return "%s IS NOT NULL" % col       # present


def sql(target, null=None, blackhole_flag=None, unknown_flag=None):
    """SQL CASE expression giving the state. `null`: the value that stands for NULL (the
    summary tables store -1); `blackhole_flag`: a column that already holds the black-hole
    conditions as 0/1 (the summary tables' `blackhole`); `unknown_flag`: one that holds
    pmtud = 'unknown' as 0/1 (their `unknown`: they keep no pmtud)."""
    target = int(target)
    parts = []
    for state, combine, conditions in RULE:
        if not conditions:
            parts.append("ELSE '%s' END" % state)
            continue
        if conditions is BLACKHOLE_ANY and blackhole_flag:
            test = "%s = 1" % blackhole_flag
        else:
            joint = " OR " if combine == "any" else " AND "
            test = joint.join("%s = 1" % unknown_flag if t == "unknown" and unknown_flag
                              else _sql_condition(f, t, target, null) for f, t in conditions)
        parts.append("WHEN %s THEN '%s'" % (test, state))
    return "CASE " + " ".join(parts)


def sql_blackhole(qualifier=""):
    """The black-hole conditions of RULE as one SQL boolean, 0 or 1 and never NULL (a
    summary table's key column); `qualifier` names the row, e.g. "NEW." in a trigger."""
    tests = {"blackhole": "IFNULL(%s, '') = 'blackhole'", "true": "IFNULL(%s, 0) = 1"}
    return "(" + " OR ".join(tests[test] % (qualifier + field)
                             for field, test in BLACKHOLE_ANY) + ")"


def sql_unknown(qualifier=""):
    """pmtud = 'unknown' as one SQL 0/1, never NULL (the summary tables' `unknown` column)."""
    fields = [f for _state, _combine, conditions in RULE for f, t in conditions if t == "unknown"]
    return "(" + " OR ".join("IFNULL(%s, '') = 'unknown'" % (qualifier + f) for f in fields) + ")"


# -- OpenSearch query DSL -----------------------------------------------------------------

def _dsl_condition(field, test, target):
    if test in ("blackhole", "unknown"):
        return {"term": {field: test}}
    if test == "true":
        return {"term": {field: True}}
    if test == "ge":
        return {"range": {field: {"gte": target}}}
    if test == "missing_or_ge":
        return {"bool": {"must_not": [{"range": {field: {"lt": target}}}]}}
    return {"exists": {"field": field}}  # present


def filters(target, prefix="jumbo."):
    """{state: query clause} for every state: the state's own conditions, and none of the
    states before it in RULE (first match wins, as in state_of and sql)."""
    out = {}
    earlier = []
    for state, combine, conditions in RULE:
        clauses = [_dsl_condition(prefix + f, t, target) for f, t in conditions]
        if combine == "any":
            clause = {"bool": {"should": clauses, "minimum_should_match": 1}}
        else:
            clause = {"bool": {"filter": clauses}}
        if earlier:
            clause["bool"]["must_not"] = list(earlier)
        out[state] = clause
        earlier.append(clause)
    return out
