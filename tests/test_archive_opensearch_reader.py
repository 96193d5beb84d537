"""jumbo.archive.opensearch.reader, the answers it reads as hostile: the jumbo runs per path
(`agreement`, the confidence's counts) from the archive's terms aggregation in partitions,
each bucket's counts taken only when they are whole, non-negative, finite numbers under a
path key; anything else left out, never a crash nor a count. An archive that refuses the
partitions' buckets is asked page by page instead, with the same answer. The same question
against a real OpenSearch and SQLite gives the same answer: tests/test_report_confidence.py."""

import pytest

from jumbo.archive.errors import TooManyBuckets
from jumbo.archive.opensearch.reader import OpenSearchQueries
from jumbo.archive.query_base import Window


def _bucket(path="a|b|4|pmtu", n=3, flows=(12.0, 3), asked=(16.0, 3)):
    return {"key": path, "doc_count": n, "f": {"count": flows[1], "sum": flows[0]},
            "a": {"count": asked[1], "sum": asked[0]}}


def _queries(monkeypatch, partitions, composite=()):
    queries = OpenSearchQueries.__new__(OpenSearchQueries)
    queries.pmtu = "jumbo_history"
    asked = []

    def terms_partitions(index, query, field, aggs, what, terms, keep):
        asked.append(("terms", index, field, aggs, terms, keep))
        if isinstance(partitions, Exception):
            raise partitions
        return iter(partitions)

    def pages(index, query, sources, aggs, what, page):
        asked.append(("composite", index, sources, aggs))
        return iter(composite)
    monkeypatch.setattr(queries, "terms_partitions", terms_partitions, raising=False)
    monkeypatch.setattr(queries, "composite", pages, raising=False)
    monkeypatch.setattr(queries, "_paths_about", lambda query: 10, raising=False)
    monkeypatch.setattr(queries, "window_range", lambda window, *a: [], raising=False)
    return queries.agreement(Window(), 9000), asked


def test_each_paths_runs_and_flows_come_from_one_stats_per_field(monkeypatch):
    found, asked = _queries(monkeypatch, [_bucket(), _bucket("c|d|6|pmtu", 1, (0.0, 0), (0.0, 0))])
    assert found == {"a|b|4|pmtu": (3, 12, 3, 16, 3), "c|d|6|pmtu": (1, 0, 0, 0, 0)}
    (how, index, field, aggs, terms, keep), = asked
    assert (how, index, field, terms) == ("terms", "jumbo_history", "jumbo.path", 10)
    assert aggs == {"f": {"stats": {"field": "jumbo.flows"}},
                    "a": {"stats": {"field": "jumbo.flows_asked"}}}
    # Only what is read comes back (filter_path): not min, max nor avg.
    assert sorted(keep) == ["a.count", "a.sum", "f.count", "f.sum"]


def test_paths_with_the_same_counts_share_one_tuple(monkeypatch):
    found, _ = _queries(monkeypatch, [_bucket("p%d|q|4|pmtu" % i) for i in range(50)])
    assert len(found) == 50 and len({id(v) for v in found.values()}) == 1


@pytest.mark.parametrize("bucket", [
    {"key": "x|y|4|pmtu", "doc_count": 2, "f": [], "a": {}},                   # not objects
    dict(_bucket(), key={"path": "a|b|4|pmtu"}),                               # key not a string
    dict(_bucket(), key=7), dict(_bucket(), key=None),
    _bucket(n=-1), _bucket(n=True), _bucket(flows=(float("inf"), 3)),
    _bucket(flows=(float("nan"), 3)), _bucket(asked=("16", 3)), _bucket(asked=(2.0 ** 60, 3)),
    _bucket(asked=(16.0, None)), {"doc_count": 1}, [], "a|b",
])
def test_a_hostile_bucket_is_left_out(monkeypatch, bucket):
    found, _ = _queries(monkeypatch, [bucket, _bucket("ok|ok|4|pmtu")])
    assert found == {"ok|ok|4|pmtu": (3, 12, 3, 16, 3)}


def test_a_boolean_never_takes_the_counts_of_one(monkeypatch):
    """True == 1 in Python: a hostile True must not find the entry a real 1 made."""
    found, _ = _queries(monkeypatch, [_bucket("one|x|4|pmtu", n=1), _bucket("bool|x|4|pmtu", n=True)])
    assert found == {"one|x|4|pmtu": (1, 12, 3, 16, 3)}


def test_an_archive_refusing_the_partitions_buckets_is_asked_page_by_page(monkeypatch):
    page = dict(_bucket(), key={"path": "a|b|4|pmtu"})
    found, asked = _queries(monkeypatch, TooManyBuckets("search.max_buckets is 10000"),
                            composite=[page, dict(_bucket(), key="not-an-object")])
    assert found == {"a|b|4|pmtu": (3, 12, 3, 16, 3)}
    assert [a[0] for a in asked] == ["terms", "composite"]
    assert asked[1][2] == [{"path": {"terms": {"field": "jumbo.path"}}}]
