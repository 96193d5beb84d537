"""Module-scoped stores holding one synthetic mesh, on both stores: what several report tests
read (the SQLite file and an OpenSearch prefix, each loaded once per module)."""

import uuid

import pytest

from opensearch_fixture import drop_prefix


def load(url, records, batch=1000):
    """Store `records` at `url` (every one must be accepted) and make them searchable."""
    from jumbo.archive.stores import open_store
    store = open_store(url)
    try:
        records = list(records)
        for i in range(0, len(records), batch):
            assert not [o for o in store.put_many(records[i:i + batch]) if o]
        if hasattr(store, "refresh"):
            store.refresh()
    finally:
        store.close()


def both_stores(records, tag):
    """(sqlite_url, os_url, store_url) fixtures for a test module: `records()` loaded into a
    module's SQLite file and OpenSearch prefix (dropped after the module), and `store_url`
    parametrised over the two."""
    @pytest.fixture(scope="module")
    def sqlite_url(tmp_path_factory):
        url = "sqlite:///" + str(tmp_path_factory.mktemp(tag) / "jumbo.db")
        load(url, records())
        return url

    @pytest.fixture(scope="module")
    def os_url(request):
        base = request.getfixturevalue("opensearch_url")
        prefix = "%s%s_" % (tag, uuid.uuid4().hex[:8])
        url = "%s/?prefix=%s" % (base, prefix)
        load(url, records())
        yield url
        from jumbo.archive.stores import open_store
        drop_prefix(open_store(url), prefix)

    @pytest.fixture(params=["sqlite", "opensearch"])
    def store_url(request):
        return request.getfixturevalue("sqlite_url" if request.param == "sqlite" else "os_url")

    return sqlite_url, os_url, store_url
