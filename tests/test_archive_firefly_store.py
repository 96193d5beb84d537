"""The firefly sums in either store (jumbo.archive.firefly_store): written per flush, read
summed over a window, a flush stored twice stored once; on OpenSearch only the suite's own
index, with its own explicit mapping, and an index of that name it does not own refused."""

import uuid

import pytest

from jumbo.archive.errors import PermanentError
from jumbo.archive.firefly_store import INDEX, MAPPING, open_fireflies

T0 = 1764100000.0           # 2025-11-25T19:46:40Z
CELLS = {("A", "B", 4): [1000, 200, 30, 2], ("A", "B", 6): [0, 50, 0, 1], ("B", "A", 4): [7, 0, 0, 1]}


@pytest.fixture(params=["sqlite", "opensearch"])
def url(request, tmp_path):
    if request.param == "sqlite":
        yield "sqlite:///%s" % (tmp_path / "jumbo.db")
        return
    prefix = "ff%s_" % uuid.uuid4().hex[:8]
    base = request.getfixturevalue("opensearch_url")
    yield "%s/?prefix=%s" % (base, prefix)
    store = open_fireflies("%s/?prefix=%s" % (base, prefix))
    store.client.request("DELETE", "/%s*" % prefix)
    store.close()


def test_written_then_summed_over_a_window_once(url):
    store = open_fireflies(url)
    try:
        store.write(T0, T0 + 60, "c1:10514", CELLS)
        assert store.sums(T0 - 1000, T0) == {}                  # nothing before
        store.write(T0, T0 + 60, "c1:10514", CELLS)             # a retried flush: stored once
        store.write(T0 + 60, T0 + 120, "c1:10514", {("A", "B", 4): [1, 2, 3, 1]})
        store.write(T0 + 60, T0 + 120, "c2:10514", {("A", "B", 4): [10, 0, 0, 1]})
        everything = store.sums(T0, T0 + 1000)
        assert everything == {("A", "B", 4): [1011, 202, 33, 4], ("A", "B", 6): [0, 50, 0, 1],
                              ("B", "A", 4): [7, 0, 0, 1]}
        assert store.sums(T0 + 61, T0 + 1000) == {("A", "B", 4): [11, 2, 3, 2]}
        assert store.sums(T0, T0 + 60) == {}                    # the end is exclusive
    finally:
        store.close()


def test_opensearch_index_is_the_suites_own_with_its_mapping(opensearch_url):
    prefix = "ff%s_" % uuid.uuid4().hex[:8]
    store = open_fireflies("%s/?prefix=%s" % (opensearch_url, prefix))
    client = store.client
    try:
        store.write(T0, T0 + 60, "c1", CELLS)
        status, mapping = client.request("GET", "/%s%s/_mapping" % (prefix, INDEX))
        assert status == 200
        assert mapping[prefix + INDEX]["mappings"] == dict(MAPPING, dynamic="false")
        status, templates = client.request("GET", "/_index_template/%s*" % prefix)
        assert status == 404 or not templates.get("index_templates")    # no template made
        status, indices = client.request("GET", "/_cat/indices/%s*?format=json" % prefix)
        assert [i["index"] for i in indices] == [prefix + INDEX]
        # An index of that name the suite does not own: left alone, nothing stored.
        foreign = "fo%s_" % uuid.uuid4().hex[:8]
        client.request("PUT", "/%s%s" % (foreign, INDEX), {"mappings": {"properties": {"x": {"type": "text"}}}})
        other = open_fireflies("%s/?prefix=%s" % (opensearch_url, foreign))
        with pytest.raises(PermanentError, match="does not own"):
            other.write(T0, T0 + 60, "c1", CELLS)
        status, mapping = client.request("GET", "/%s%s/_mapping" % (foreign, INDEX))
        assert mapping[foreign + INDEX]["mappings"] == {"properties": {"x": {"type": "text"}}}
        other.close()
        client.request("DELETE", "/%s*" % foreign)
    finally:
        client.request("DELETE", "/%s*" % prefix)
        store.close()


def test_sqlite_refuses_a_file_that_is_not_a_store(tmp_path):
    path = tmp_path / "notes.db"
    path.write_bytes(b"not a database at all" * 100)
    store = open_fireflies("sqlite:///%s" % path)
    with pytest.raises(Exception) as err:
        store.write(T0, T0 + 60, "c1", CELLS)
    assert "store" in str(err.value).lower() or "database" in str(err.value).lower()
    assert path.read_bytes() == b"not a database at all" * 100
