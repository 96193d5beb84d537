"""The property-based fuzzer (issue 23), the coordinator's side: the report's inputs (--sites,
--volumes, stored labels), the Prometheus answer parser and the jumbo-alarms state file. Properties
as in test_fuzz.py (the plugins' side): a clean error or a valid answer, never an exception, never
what the input smuggled in the output. Budget: fuzz_strategies.budget, as there."""

import csv
import io
import json
import re

import pytest
from hypothesis import assume, given, strategies as st

import fuzz_strategies as fz
from fixtures import samples
from jumbo.report import inputs, render
from jumbo.report.errors import ReportError
from test_fuzz import CONTROL, FORMULA


# -- the report's inputs: --sites, --volumes, stored labels ------------------------------------

@fz.budget(1)
@given(st.one_of(fz.hostile, st.lists(st.tuples(fz.hostile, fz.hostile, st.one_of(
    st.floats(allow_nan=True), fz.hostile))).map(
        lambda rows: "\n".join(",".join(str(c) for c in row) for row in rows)),
    fz.json_values.map(json.dumps)))
def test_sites_and_volumes_files(tmp_path_factory, text):
    path = tmp_path_factory.getbasetemp() / "fuzz-input.txt"
    path.write_text(text, encoding="utf-8")
    for reader in (inputs.read_sites, inputs.read_volumes):
        try:
            value = reader(str(path))
        except ReportError as err:
            assert str(err)
            continue
        assert value


@pytest.fixture(scope="module")
def small_report(tmp_path_factory):
    from jumbo.archive.stores import open_store
    from jumbo.report import model
    url = "sqlite:///%s" % (tmp_path_factory.mktemp("fuzzrep") / "r.db")
    store = open_store(url)
    store.put_many([samples.envelope(
        "pmtu", samples.pmtu_result(path_mtu=1500 if i % 2 else 9000,
                                    blackhole={"ttl": 2, "ip": "10.0.0.1", "size": 9000}
                                    if i == 1 else None, pmtud="blackhole" if i == 1 else "ok"),
        {"schema": 1, "source": "ps-%d.example.org" % i, "dest": "ps-b.example.org",
         "ip-version": 4}, lead="ps-%d.example.org" % i, minutes=i,
        reference={"source-site": "LABEL%d" % i, "dest-site": "DEST"}) for i in range(3)])
    store.close()
    from jumbo.archive.queries import open_queries
    queries = open_queries(url)
    try:
        return model.build(queries, model.Options(target=9000))
    finally:
        queries.close()


def _relabel(value, labels):
    if isinstance(value, str):
        for key, label in labels.items():
            value = value.replace(key, label)
        return value
    if isinstance(value, list):
        return [_relabel(v, labels) for v in value]
    if isinstance(value, dict):
        return dict((_relabel(k, labels), _relabel(v, labels)) for k, v in value.items())
    return value


# The report (not the plugins' spec-format) also escapes the bidirectional controls (issue 32).
BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_LABELS = st.one_of(fz.hostile, st.builds(lambda a, b: a + b, st.sampled_from(
    ["\u202e", "\u2066", "\u200f", "\u202a=1+1"]), fz.hostile))


def test_stored_labels_never_reach_the_output_raw(small_report):
    @fz.budget(2)
    @given(_LABELS, _LABELS, _LABELS)
    def check(a, b, c):
        assume(a and b and c)
        report = _relabel(small_report, {"LABEL0": a, "LABEL1": b, "DEST": c})
        for row in csv.reader(io.StringIO(render.to_csv(report))):
            for cell in row:
                assert not cell.startswith(FORMULA) or re.match(r"-\d", cell), cell
                assert not CONTROL.search(cell) and "\n" not in cell and not BIDI.search(cell)
        text = render.to_text(report)
        assert not CONTROL.search(text) and not BIDI.search(text)
        assert text.count("\n") == render.to_text(small_report).count("\n")
        from jumbo.report.html import to_html
        assert "<script" not in to_html(report)

    check()


# -- the Prometheus answer parser (issue 32) ----------------------------------------------------

_SAMPLE_VALUES = st.one_of(st.sampled_from(["1", "0", "1.7e308", "1e18", "1.0000001e18", "NaN",
                                            "+Inf", "-Inf", "-1", "", "0x10", " 5 ", "1e999"]),
                           st.floats().map(repr), fz.hostile, st.integers(), st.none())
_SAMPLE_TIMES = st.one_of(st.floats(), st.integers(), st.booleans(), fz.hostile)
_SERIES = st.fixed_dictionaries({"metric": st.one_of(
    st.dictionaries(fz.hostile, fz.hostile, max_size=3), fz.json_values)}, optional={
    "value": st.one_of(st.lists(st.one_of(_SAMPLE_TIMES, _SAMPLE_VALUES), max_size=3),
                       fz.json_values),
    "values": st.lists(st.lists(st.one_of(_SAMPLE_TIMES, _SAMPLE_VALUES), max_size=3),
                       max_size=3)})
_ANSWERS = st.one_of(
    st.builds(lambda status, kind, result: {"status": status, "data": {
        "resultType": kind, "result": result}},
        st.sampled_from(["success", "error", None]), st.sampled_from(["vector", "matrix", "x"]),
        st.one_of(st.lists(_SERIES, max_size=4), fz.json_values)),
    fz.json_values).map(lambda doc: json.dumps(doc).encode("utf-8"))


def test_prometheus_answers_parse_or_fail_cleanly():
    """Any answer: a clean ReportError, or series of short string labels and values that are
    plausible measurements (finite, >= 0, <= the bound); the others counted, never summed."""
    from jumbo.report.prometheus import MAX_VALUE, Prometheus

    @fz.budget(0.5)
    @given(st.one_of(_ANSWERS, st.binary(max_size=64)), st.sampled_from([MAX_VALUE, 65536.0]))
    def check(body, bound):
        prom = Prometheus("http://127.0.0.1:9")
        for parse in (prom.vector, prom.matrix):
            try:
                series = parse(body, bound)
            except ReportError as err:
                assert str(err).startswith(str(prom)) or "Prometheus at" in str(err)
                continue
            for labels, values in series:
                assert all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items())
                points = values if parse == prom.matrix else [(0.0, values)]
                for at, value in points:
                    assert 0 <= value <= bound and 0 <= at <= 1e11, (at, value)
            assert all(isinstance(s, frozenset) for s in prom.implausible)

    check()


# -- the jumbo-alarms state file (issue 32) ----------------------------------------------------

_ENTRIES = st.fixed_dictionaries({}, optional={
    "alarm_id": st.one_of(st.text(max_size=8), fz.json_values),
    "raised": fz.json_values, "emitted": st.one_of(st.booleans(), fz.json_values),
    "indexed": st.one_of(st.sampled_from([True, False, None]), fz.json_values),
    "event": st.one_of(st.just({"source": {"alarm_id": "x", "to": "t"}}), fz.json_values)})
_STATES = st.one_of(
    st.builds(lambda version, active: {"version": version, "active": active},
              st.one_of(st.sampled_from([1, 2, 3]), fz.json_values),
              st.one_of(st.dictionaries(fz.hostile, _ENTRIES, max_size=3), fz.json_values)),
    fz.json_values).map(json.dumps)


def test_alarm_state_file_loads_or_fails_cleanly(tmp_path_factory):
    """Any state file: a clean ReportError naming it, or entries the run can use: reconciled
    with events that hold and that do not, saved, loaded again to the same."""
    from jumbo.report import alarm_state
    path = tmp_path_factory.getbasetemp() / "fuzz-state.json"

    @fz.budget(0.5)
    @given(st.one_of(_STATES, st.text(max_size=40)))
    def check(text):
        path.write_text(text, encoding="utf-8")
        try:
            active = alarm_state.load(str(path))
        except ReportError as err:
            assert str(path) in str(err)
            return
        event = {"source": {"alarm_id": None, "to": "2026-01-01T00:00:00Z"}}
        after, lines, owed = alarm_state.reconcile(active, [(("hop", "x"), event)], "now", True)
        assert lines == [alarm_state.key_id(("hop", "x"))] or alarm_state.key_id(("hop", "x")) in active
        assert event["source"]["alarm_id"] == after[alarm_state.key_id(("hop", "x"))]["alarm_id"]
        for k in owed:
            assert isinstance(dict(active, **after)[k]["event"], dict)
        alarm_state.save(str(path), after)
        again = alarm_state.load(str(path))
        assert set(again) == set(after)

    check()
