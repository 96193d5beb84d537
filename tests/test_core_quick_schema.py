"""core/quick_schema.py: a fast "conforms" that never says yes where jsonschema says no, that
says yes to the suite's valid documents, and the plugin calls with 5 s limits that no longer
import jsonschema for a valid input.

The ground truth is jsonschema itself (Draft 7 with the suite's strict integers,
core.validate.strict_validator): generated documents near the suite's own (valid samples with
members dropped, replaced by other JSON values, or added), and every suite schema."""

import copy
import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, strategies as st

import fuzz_strategies as fz
from fixtures import samples
from jumbo.archive import archive_data
from jumbo.core import quick_schema, schema as schemas, validate

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PMTU_SPEC = {"schema": 1, "source": "198.18.0.1", "dest": "198.18.0.2", "ip-version": 4,
             "flows": 40, "reflector": True, "timeout": "PT1S", "target-mtu": 9000}
PAIR_SPEC = {"schema": 1, "source": "198.18.0.1", "dest": "198.18.0.2", "ip-version": 4}
ARCHIVE_DATA = {"schema": 1, "_url": "http://198.18.0.9:9200",
                "retry-policy": [{"attempts": 2, "wait": "PT1M"}]}
CASES = [  # (name, schema, a valid document)
    ("pmtu spec", schemas.spec_schema(1), PMTU_SPEC),
    ("pmtu result", schemas.result_schema(1), samples.pmtu_result(
        path_mtu=8950, pmtud="blackhole", blackhole={"ttl": 1, "ip": "198.18.0.2"})),
    ("pmtu result, failed", schemas.result_schema(1), samples.pmtu_result(succeeded=False)),
    ("pair spec", schemas.pair_spec_schema(1), PAIR_SPEC),
    ("pair result", schemas.pair_result_schema(1), samples.pair_result()),
    ("archive data", archive_data.DATA_V1, ARCHIVE_DATA),
]
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2 ** 40, 2 ** 40) |
    st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(
        ["", "PT1S", "P1D", "198.18.0.2", "fd00::2", "ok", "blackhole", "x" * 300, "icmp-echo"])
    | st.sampled_from([0, 1, 4, 6, 68, 1500, 9000, 9001, 65535, 65536, -1, 1.0, 9000.0]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["ttl", "ip", "mtu", "flow", "x", "schema"]), inner, max_size=3),
    max_leaves=6)


def _jsonschema_valid(document, schema):
    return not list(validate.strict_validator()(schema).iter_errors(document))


def _paths(document, prefix=()):
    yield prefix
    if isinstance(document, dict):
        for key, value in document.items():
            for path in _paths(value, prefix + (key,)):
                yield path
    elif isinstance(document, list):
        for index, value in enumerate(document):
            for path in _paths(value, prefix + (index,)):
                yield path


def _mutate(document, path, action, value):
    document = copy.deepcopy(document)
    if not path:
        return value if action != "add" else document
    parent = document
    for part in path[:-1]:
        parent = parent[part]
    if action == "drop":
        del parent[path[-1]]
    elif action == "replace":
        parent[path[-1]] = value
    elif isinstance(parent[path[-1]], dict):
        parent[path[-1]]["extra-%d" % len(path)] = value
    return document


@pytest.mark.parametrize("name,schema,document", CASES, ids=[c[0] for c in CASES])
def test_every_valid_sample_takes_the_fast_path(name, schema, document):
    assert _jsonschema_valid(document, schema)            # the ground truth
    assert quick_schema.conforms(document, schema) is True


@fz.budget(2.0, "quick_schema")
@given(case=st.sampled_from(CASES), pick=st.integers(0, 10 ** 6),
       action=st.sampled_from(["drop", "replace", "add"]), value=VALUES)
def test_never_says_conforms_where_jsonschema_says_invalid(case, pick, action, value):
    _, schema, document = case
    paths = list(_paths(document))
    mutated = _mutate(document, paths[pick % len(paths)], action, value)
    if quick_schema.conforms(mutated, schema):
        assert _jsonschema_valid(mutated, schema), json.dumps(mutated)[:400]


@pytest.mark.parametrize("schema", [{"oneOf": [{"type": "string"}]}, {"const": 1},
                                    {"$ref": "http://example.org/s.json"},
                                    {"items": [{"type": "string"}]}])
def test_an_unknown_keyword_or_form_is_left_to_jsonschema(schema):
    assert quick_schema.conforms(["x"], schema) is None


@pytest.mark.parametrize("document", [True, 1.0, 2 ** 63])
def test_strict_integers_as_the_suite_counts_them(document):
    assert quick_schema.conforms(document, {"type": "integer", "maximum": 65535}) is None
    assert validate.check(document, {"type": "integer", "maximum": 65535})[0] is False


def test_an_invalid_document_still_gets_jsonschemas_message():
    assert validate.check_spec(dict(PMTU_SPEC, flows="forty")) == (
        False, "At /flows: 'forty' is not of type 'integer'")


_PROBE = r"""
import json, sys
from jumbo.protocol import jumbocheck, pmtu
spec = %(spec)s
answers = [pmtu.participants(json.dumps(spec)), pmtu.spec_is_valid(json.dumps(spec)),
           jumbocheck.merged_results(json.dumps({"test": {"type": "pmtu", "spec": spec},
                                                 "results": [json.loads(%(result)r), None]}))]
print(json.dumps({"answers": answers, "jsonschema": "jsonschema" in sys.modules}))
"""


def test_participants_spec_is_valid_and_merged_results_of_valid_input_skip_jsonschema():
    result = {"succeeded": True, "result": samples.pmtu_result(path_mtu=8950)}
    code = _PROBE % {"spec": repr(PMTU_SPEC), "result": json.dumps(result)}
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python-jumbo"))
    out = json.loads(subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                    stdout=subprocess.PIPE, universal_newlines=True,
                                    timeout=120).stdout)
    participants, valid, merged = out["answers"]
    assert participants == {"participants": ["198.18.0.1", "198.18.0.2"]}  # the reflector
    assert valid == {"valid": True}
    assert merged["succeeded"] is True and merged["path-mtu"] == 8950
    assert out["jsonschema"] is False
