"""jumbo.archive.opensearch.reader, the answers it reads as hostile: the jumbo runs per path
(`agreement`, the confidence's counts) from the archive's composite aggregation, each
bucket's counts taken only when they are whole, non-negative, finite numbers under a path
key; anything else left out, never a crash nor a count. The same question against a real
OpenSearch and SQLite gives the same answer: tests/test_report_confidence.py."""

import pytest

from jumbo.archive.opensearch.reader import OpenSearchQueries
from jumbo.archive.query_base import Window


def _bucket(path="a|b|4|pmtu", n=3, flows=(12.0, 3), asked=(16.0, 3)):
    return {"key": {"path": path}, "doc_count": n,
            "f": {"count": flows[1], "sum": flows[0], "min": 4.0, "max": 4.0, "avg": 4.0},
            "a": {"count": asked[1], "sum": asked[0], "min": 5.0, "max": 6.0, "avg": 5.3}}


def _agreement(monkeypatch, buckets):
    queries = OpenSearchQueries.__new__(OpenSearchQueries)
    queries.pmtu = "jumbo_history"
    asked = []

    def composite(index, query, sources, aggs, what, page):
        asked.append((index, query, sources, aggs))
        return iter(buckets)
    monkeypatch.setattr(queries, "composite", composite, raising=False)
    monkeypatch.setattr(queries, "window_range", lambda window, *a: [], raising=False)
    return queries.agreement(Window(), 9000), asked


def test_each_paths_runs_and_flows_come_from_one_stats_per_field(monkeypatch):
    found, asked = _agreement(monkeypatch, [_bucket(), _bucket("c|d|6|pmtu", 1, (0.0, 0),
                                                               (0.0, 0))])
    assert found == {"a|b|4|pmtu": (3, 12, 3, 16, 3), "c|d|6|pmtu": (1, 0, 0, 0, 0)}
    (index, query, sources, aggs), = asked
    assert index == "jumbo_history" and sources == [{"path": {"terms": {"field": "jumbo.path"}}}]
    assert aggs == {"f": {"stats": {"field": "jumbo.flows"}},
                    "a": {"stats": {"field": "jumbo.flows_asked"}}}


@pytest.mark.parametrize("bucket", [
    {"key": {"path": "x|y|4|pmtu"}, "doc_count": 2, "f": [], "a": {}},        # not objects
    dict(_bucket(), key="a|b|4|pmtu"),                                         # key not an object
    dict(_bucket(), key={"path": 7}),
    _bucket(n=-1), _bucket(n=True), _bucket(flows=(float("inf"), 3)),
    _bucket(flows=(float("nan"), 3)), _bucket(asked=("16", 3)), _bucket(asked=(2.0 ** 60, 3)),
    {"doc_count": 1},
])
def test_a_hostile_bucket_is_left_out(monkeypatch, bucket):
    found, _ = _agreement(monkeypatch, [bucket, _bucket("ok|ok|4|pmtu")])
    assert found == {"ok|ok|4|pmtu": (3, 12, 3, 16, 3)}
