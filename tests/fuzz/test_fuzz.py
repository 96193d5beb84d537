"""A property-based fuzzer (Hypothesis) over every method that reads input (issue 23).

In process (each plugin executable is one call into jumbo.protocol.*), plus a few runs of the
real executables. Properties: an answer of the contract's shape and the right exit status, no
exception but the clean ones (ValueError: exit 1 with the message), no private value echoed,
spec -> cli -> spec round trip, output that never carries what the input smuggled (a formula
in a CSV cell, markup in HTML, control characters in text).

Budget: JUMBO_FUZZ_EXAMPLES examples in all (default 1500, a few seconds per property in
`make test`); `make fuzz` runs 100,000 (FUZZ_EXAMPLES=N to change). The report's side:
test_fuzz_report.py.
"""

import copy
import io
import json
import re
import uuid

import pytest
from hypothesis import given, strategies as st

import fuzz_strategies as fz
import harness
from fixtures import samples
from jumbo.archive import archiver, record as records
from jumbo.archive.errors import StoreError
from jumbo.archive.opensearch.store import OpenSearchStore
from jumbo.core import validate
from jumbo.core.result import PairResult
from jumbo.protocol import archiver as archiver_methods, jumbo_throughput, jumbocheck, pmtu
from jumbo.testtype import pair, spec as specs

TESTS = {"pmtu": (pmtu, specs), "jumbo-throughput": (jumbo_throughput, pair)}
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _clean_answer(call, *args):
    """What run_method makes of a call: (answer, None) or (None, message of a clean exit 1).
    Any other exception is a defect (the executable would print only its last line, but
    the contract's answer would be missing)."""
    try:
        return call(*args), None
    except ValueError as err:
        assert str(err).strip(), "an empty error message"
        return None, str(err)


def _text(value):
    return json.dumps(value)


# -- test plugins: spec-is-valid, spec-to-cli/cli-to-spec, participants, formats ---------------

@pytest.mark.parametrize("name", sorted(TESTS))
def test_spec_is_valid_answers_and_valid_specs_round_trip(name):
    module, spec_module = TESTS[name]
    strategy = fz.pmtu_specs if name == "pmtu" else fz.pair_specs

    @fz.budget(2)
    @given(st.one_of(strategy, fz.json_values))
    def check(spec):
        answer = module.spec_is_valid(_text(spec))
        assert set(answer) <= {"valid", "error"} and isinstance(answer["valid"], bool)
        if not answer["valid"]:
            assert isinstance(answer["error"], str) and answer["error"]
            return
        argv = spec_module.spec_to_cli(spec)
        assert all(isinstance(a, str) for a in argv)
        back = spec_module.cli_to_spec(argv)
        assert back == dict({"schema": 1}, **spec)
        participants = module.participants(_text(spec))["participants"]
        assert len(participants) in (1, 2)
        assert all(p is None or isinstance(p, str) for p in participants)
        for mime in ("text/plain", "text/html"):
            shown = module.spec_format(_text(spec), [mime])
            assert not CONTROL.search(shown)

    check()


@pytest.mark.parametrize("name", sorted(TESTS))
def test_cli_to_spec_gives_a_valid_spec_or_a_clean_error(name):
    module, spec_module = TESTS[name]

    @fz.budget(1)
    @given(fz.argvs)
    def check(argv):
        spec, error = _clean_answer(module.cli_to_spec, argv, io.StringIO(""))
        if spec is not None:
            assert spec_module.validate(spec) == (True, None)
        # The same arguments as the JSON array the server may send on stdin.
        if argv:
            again, again_error = _clean_answer(module.cli_to_spec, [], io.StringIO(_text(argv)))
            assert again == spec and (again_error is None) == (error is None)

    check()


@pytest.mark.parametrize("name", sorted(TESTS))
def test_participants_and_result_format_never_break(name):
    module, _ = TESTS[name]
    base = samples.pmtu_result() if name == "pmtu" else PairResult.failed("x").as_json()

    @fz.budget(2)
    @given(st.one_of(fz.pmtu_specs, fz.json_values), st.dictionaries(
        st.sampled_from(sorted(base)), fz.scalars, max_size=4), st.sampled_from(
        ["text/plain", "text/html"]))
    def check(spec, changes, mime):
        answer, _ = _clean_answer(module.participants, _text(spec))
        if answer is not None:
            assert isinstance(answer["participants"], list)
        result = dict(copy.deepcopy(base), **changes)
        shown, error = _clean_answer(module.result_format,
                                     _text({"spec": spec, "result": result}), [mime])
        if shown is None:
            return
        assert isinstance(shown, str)
        assert not CONTROL.search(shown), shown
        if mime == "text/html":
            assert "<script" not in shown

    check()


# -- the tool: duration, can-run, merged-results ----------------------------------------------

tests_objects = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(["pmtu", "jumbo-throughput", "rtt"]),
                           "spec": st.one_of(fz.pmtu_specs, fz.pair_specs)}),
    fz.json_values)


@fz.budget(2)
@given(tests_objects)
def test_duration_and_can_run(test):
    answer, _ = _clean_answer(jumbocheck.duration, _text(test))
    if answer is not None:
        assert re.match(r"PT\d+S\Z", answer["duration"])
    answer = jumbocheck.can_run(_text(test))
    assert isinstance(answer["can-run"], bool)
    if not answer["can-run"]:
        assert answer["reasons"] and all(isinstance(r, str) for r in answer["reasons"])


@fz.budget(2)
@given(tests_objects, st.lists(st.one_of(
    st.builds(lambda changes: {"succeeded": True, "result": dict(samples.pmtu_result(),
                                                                 **changes)},
              st.dictionaries(st.sampled_from(["path-mtu", "pmtud", "error", "diags",
                                               "reverse-path-mtu", "flows"]), fz.scalars,
                              max_size=3)),
    fz.json_values), max_size=3))
def test_merged_results_is_always_a_valid_result(test, results):
    merged = jumbocheck.merged_results(_text({"test": test, "results": results}))
    pair_test = isinstance(test, dict) and test.get("type") == "jumbo-throughput"
    check = validate.check_pair_result if pair_test else validate.check_result
    assert check(merged) == (True, None), merged


# -- the archiver: data-is-valid, the archive stream, the record mapping ---------------------

data_dicts = st.dictionaries(
    st.sampled_from(["schema", "_url", "_auth", "_api-key", "verify-ssl", "ca-file", "timeout",
                     "retry-policy", "pscheduler-streams", "colour"]),
    st.one_of(
        st.builds(lambda a, b, c: "%s://user:%s@%s" % (a, fz.SECRET + b, c),
                  st.sampled_from(["https", "http", "sqlite", "ftp", "htps", ""]),
                  fz.hostile, fz.hostile),
        st.just({"username": "u", "password": fz.SECRET}),
        st.just(fz.SECRET), st.just([{"attempts": 2, "wait": "PT0S"}]), fz.scalars),
    max_size=5)


@fz.budget(2)
@given(st.one_of(data_dicts, fz.json_values))
def test_data_is_valid_answers_and_never_echoes_a_secret(data):
    answer = archiver_methods.data_is_valid(_text(data))
    assert isinstance(answer["valid"], bool)
    if not answer["valid"]:
        assert isinstance(answer["error"], str) and fz.SECRET not in answer["error"]


def _envelope_variants():
    base = samples.pmtu_envelope(1)
    return st.one_of(
        st.builds(lambda changes, inner: _mutated(base, changes, inner),
                  st.dictionaries(st.sampled_from(["run-href", "task-href", "attempts", "data"]),
                                  fz.scalars, max_size=2),
                  st.dictionaries(st.sampled_from(["participants", "schedule", "reference",
                                                   "tool", "id", "test"]),
                                  fz.json_values, max_size=2)),
        fz.json_values)


def _mutated(base, changes, inner):
    envelope = copy.deepcopy(base)
    envelope.update(changes)
    envelope["result"].update(inner)
    return envelope


@fz.budget(1)
@given(st.lists(_envelope_variants(), min_size=1, max_size=4))
def test_record_mapping_and_archive_stream(tmp_path_factory, envelopes):
    for envelope in envelopes:
        try:
            rec, _ = records.normalize(envelope)
        except records.BadRecord:
            continue
        assert set(records.FIELDS) <= set(rec)
    url = "sqlite:///%s" % (tmp_path_factory.getbasetemp() / "fuzz-stream.db")
    lines = []
    for envelope in envelopes:
        if isinstance(envelope, dict) and not isinstance(envelope.get("data"), (dict, type(None))):
            pass
        elif isinstance(envelope, dict):
            envelope = dict(envelope, data={"_url": url})
        lines.append(("\x1e" + json.dumps(envelope)).encode())
    handler = archiver.Archiver()
    try:
        replies = handler.handle(lines)
    finally:
        handler.close()
    assert len(replies) == len(lines)
    for reply in replies:
        assert isinstance(reply["succeeded"], bool)
        if not reply["succeeded"]:
            assert isinstance(reply["error"], str)


# -- the OpenSearch answers the archiver parses (issue 32, row 5) -----------------------------
# Weight 0.5 each, taken from test_record_mapping_and_archive_stream (2 -> 1): the budget of
# `make test` is unchanged.

class _AnsweredStore(OpenSearchStore):
    """The archive's OpenSearch store with its HTTP exchange replaced by the fuzzed answers,
    in order, then (404, no body): what is under test is everything after the exchange (the
    set-up check, the _bulk items, the error texts). The exchange itself (chunks, byte cap,
    timeouts) is tested against real servers in tests/test_archive_opensearch_client.py."""

    def __init__(self, answers, manage_templates=False):
        OpenSearchStore.__init__(self, "http", "127.0.0.1", 9, prefix="fz%s_" % uuid.uuid4().hex,
                                 manage_templates=manage_templates)
        self.answers = list(answers)

    def request(self, method, path, body=None, ndjson=False):
        return self.answers.pop(0) if self.answers else (404, None)


_STATUS = st.one_of(st.sampled_from([200, 201, 400, 401, 403, 404, 409, 413, 429, 500, 503]),
                    st.integers(0, 999))
_ERROR = st.one_of(fz.json_values, st.fixed_dictionaries(
    {"type": fz.hostile, "reason": st.one_of(fz.hostile, st.text(max_size=400))}))
_ITEM = st.one_of(fz.json_values, st.dictionaries(
    st.sampled_from(["create", "index"]), st.fixed_dictionaries(
        {"status": st.one_of(_STATUS, fz.scalars)},
        optional={"error": _ERROR, "_index": fz.scalars}), min_size=1, max_size=2))
_BULK = st.one_of(fz.json_values, st.builds(
    lambda items, errors: {"took": 1, "errors": errors, "items": items},
    st.lists(_ITEM, min_size=0, max_size=5), st.booleans()))
_STREAMS = st.builds(lambda entries: {"data_streams": entries}, st.lists(st.one_of(
    fz.json_values, st.fixed_dictionaries({
        "name": st.one_of(st.sampled_from(["pscheduler_pmtu", "pscheduler_jumbo-throughput"]),
                          fz.scalars),
        "template": st.one_of(fz.hostile, fz.scalars),
        "indices": st.one_of(fz.json_values, st.lists(st.fixed_dictionaries(
            {"index_name": st.one_of(fz.hostile, fz.scalars)}), max_size=2))})), max_size=3))
_SETUP = st.one_of(fz.json_values, _STREAMS, st.dictionaries(fz.hostile, st.fixed_dictionaries(
    {"mappings": st.one_of(fz.json_values, st.fixed_dictionaries(
        {"_meta": st.one_of(fz.json_values, st.fixed_dictionaries(
            {"managed-by": fz.hostile, "version": fz.scalars}))}))}), max_size=3))


def _clean_store_error(err):
    text = str(err)
    assert isinstance(err, StoreError) and text and not CONTROL.search(text), repr(text)


@fz.budget(0.5)
@given(st.lists(st.tuples(_STATUS, _BULK), min_size=1, max_size=4))
def test_opensearch_bulk_answers_give_an_outcome_per_record(answers):
    store = _AnsweredStore(answers)
    store._ready = True  # the set-up check has its own property below
    try:
        outcomes = store.write(store.prepare([samples.pmtu_envelope(1),
                                              samples.pmtu_envelope(2, dest="ps-fz")]))
    except StoreError as err:
        _clean_store_error(err)
        return
    assert len(outcomes) == 2
    for outcome in outcomes:
        if outcome is not None:
            _clean_store_error(outcome)


@fz.budget(0.5)
@given(st.lists(st.tuples(_STATUS, _SETUP), max_size=8), st.booleans())
def test_opensearch_set_up_answers_give_ready_or_a_clean_error(answers, manage):
    store = _AnsweredStore(answers, manage_templates=manage)
    try:
        store.ensure_ready()
    except StoreError as err:
        _clean_store_error(err)


# -- a few runs of the real executables --------------------------------------------------------

@pytest.mark.parametrize("cls,name,method_name", [
    ("test", "pmtu", "spec-is-valid"), ("test", "jumbo-throughput", "spec-is-valid"),
    ("archiver", "jumbo", "data-is-valid"), ("tool", "jumbocheck", "can-run"),
])
def test_real_executables(cls, name, method_name):
    @fz.budget(0.05)
    @given(st.one_of(fz.pmtu_specs, data_dicts, fz.json_values))
    def check(value):
        text = _text(value) if method_name != "can-run" else _text(
            {"type": "pmtu", "spec": value})
        done = harness.invoke(cls, name, method_name, stdin=text)
        assert done.status == 0, done
        assert "Traceback" not in done.stderr
        answer = json.loads(done.stdout)
        assert isinstance(answer, dict) and done.stdout.endswith("\n")
        assert fz.SECRET not in done.stdout

    check()
