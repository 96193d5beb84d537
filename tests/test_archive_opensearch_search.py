"""jumbo.archive.opensearch.search: the terms aggregation asked in hash partitions. A partition
cut short is asked again as its two halves (p and p + P of 2P), a store that keeps cutting or
answers without its counts stops the question with StoreDown, and OpenSearch's refusal of
too many buckets is told apart from other failures. The partitions' arithmetic against a real
OpenSearch's hashing: tests/test_report_confidence.py."""

import pytest

from jumbo.archive.errors import StoreDown, TooManyBuckets
from jumbo.archive.opensearch import search
from jumbo.archive.opensearch.search import SearchClient


def _client(monkeypatch, answer):
    client = SearchClient.__new__(SearchClient)
    asked = []

    def request(method, path, body=None):
        terms = body["aggs"]["c"]["terms"]
        part = (terms["include"]["partition"], terms["include"]["num_partitions"])
        asked.append((part, path))
        return answer(part)
    monkeypatch.setattr(client, "request", request, raising=False)
    return client, asked


def _ask(client, terms=10):
    return list(client.terms_partitions("h", {"match_all": {}}, "jumbo.path", {}, "test", terms,
                                        keep=("f.sum",)))


def test_one_pass_per_partition_and_only_the_named_members_sent(monkeypatch):
    monkeypatch.setattr(search, "PARTITION", 4)
    client, asked = _client(monkeypatch, lambda part: (200, {"aggregations": {"c": {
        "sum_other_doc_count": 0, "buckets": [{"key": "k%d" % part[0], "doc_count": 1}]}}}))
    assert [b["key"] for b in _ask(client, terms=10)] == ["k0", "k1", "k2"]
    assert [part for part, _ in asked] == [(0, 3), (1, 3), (2, 3)]
    assert asked[0][1].endswith("&filter_path=aggregations.c.sum_other_doc_count,"
                                "aggregations.c.buckets.key,aggregations.c.buckets.doc_count,"
                                "aggregations.c.buckets.f.sum")


def test_a_partition_cut_short_is_asked_again_as_its_two_halves(monkeypatch):
    monkeypatch.setattr(search, "PARTITION", 10)

    def answer(part):
        cut = part == (0, 1)
        return 200, {"aggregations": {"c": {"sum_other_doc_count": 5 if cut else 0,
                                            "buckets": [{"key": "%d/%d" % part}]}}}
    client, asked = _client(monkeypatch, answer)
    assert [b["key"] for b in _ask(client, terms=3)] == ["0/2", "1/2"]
    assert [part for part, _ in asked] == [(0, 1), (0, 2), (1, 2)]


@pytest.mark.parametrize("agg", [
    {"buckets": []},                                       # no count of what was left out
    {"sum_other_doc_count": True, "buckets": []},
    {"sum_other_doc_count": -1, "buckets": []},
    {"sum_other_doc_count": 0, "buckets": {}},
    [],
])
def test_an_answer_without_its_counts_stops_the_question(monkeypatch, agg):
    client, _ = _client(monkeypatch, lambda part: (200, {"aggregations": {"c": agg}}))
    with pytest.raises(StoreDown, match="without its buckets"):
        _ask(client)


def test_a_store_that_keeps_cutting_is_not_asked_forever(monkeypatch):
    monkeypatch.setattr(search, "PARTITION", 10)
    client, asked = _client(monkeypatch, lambda part: (200, {"aggregations": {"c": {
        "sum_other_doc_count": 1, "buckets": []}}}))
    # TooManyBuckets: the reader then asks page by page (test_archive_opensearch_reader.py)
    with pytest.raises(TooManyBuckets, match="cut"):
        _ask(client, terms=10)
    assert len(asked) <= 31        # 1 + 2 + 4 + 8 + 16 partitions at most


def test_too_many_buckets_is_its_own_error(monkeypatch):
    """OpenSearch 2.18's answer (measured): the type only in caused_by, root_cause empty."""
    refusal = {"error": {"root_cause": [], "type": "search_phase_execution_exception",
                         "reason": "", "caused_by": {
                             "type": "too_many_buckets_exception",
                             "reason": "Trying to create too many buckets. Must be less than "
                                       "or equal to: [100] but was [101]."}}, "status": 503}
    client, _ = _client(monkeypatch, lambda part: (503, refusal))
    with pytest.raises(TooManyBuckets, match=r"Trying to create too many buckets"):
        _ask(client)
    other = {"error": {"root_cause": [{"type": "query_shard_exception", "reason": "bad"}]}}
    client, _ = _client(monkeypatch, lambda part: (400, other))
    with pytest.raises(StoreDown) as caught:
        _ask(client)
    assert not isinstance(caught.value, TooManyBuckets)
