"""Issue 23 (hardening), the archiver rows: M1 (where SQLite stores live, and what an existing
file must be), L2 (no login echoed), L3 (ca-file checked at data-is-valid), L4 (a proxy's
404/408/413 on _bulk loses nothing), L5 (open stores bounded)."""

import json
import os
import sqlite3
import uuid

import pytest

from fixtures import samples
from jumbo.archive import archiver, store_cache
from jumbo.archive.stores import open_store
from jumbo.archive.sqlite.store import SQLiteStore
from jumbo.core import limits
from opensearch_fixture import drop_prefix
from relay_proxy import RelayProxy


def _archive(data, envelope):
    handler = archiver.Archiver()
    try:
        return handler.handle([json.dumps(dict(envelope, data=data)).encode()])[0]
    finally:
        handler.close()


# -- M1 -------------------------------------------------------------------------------------

def test_sqlite_url_outside_the_allowed_directories_is_refused(sqlite_policy, tmp_path):
    outside = tmp_path / "elsewhere.db"
    answer = archiver.data_is_valid({"_url": "sqlite:///%s" % outside})
    assert answer["valid"] is False
    assert answer["error"].startswith("At /_url: SQLite stores may only live under %s" % sqlite_policy)
    reply = _archive({"_url": "sqlite:///%s" % outside}, samples.pmtu_envelope(1))
    assert reply["succeeded"] is False and "retry" not in reply
    assert not outside.exists()
    # A symbolic link inside the allowed directory pointing out of it: the target decides.
    os.symlink(str(tmp_path), str(sqlite_policy / "escape"))
    answer = archiver.data_is_valid({"_url": "sqlite:///%s/escape/x.db" % sqlite_policy})
    assert answer["valid"] is False and "may only live under" in answer["error"]
    assert archiver.data_is_valid({"_url": "sqlite:///%s/sub/../ok.db" % sqlite_policy}) == {
        "valid": True}
    assert archiver.data_is_valid({}) == {"valid": True}  # the default store's directory


def test_the_environment_adds_directories(sqlite_policy, tmp_path, monkeypatch):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    url = "sqlite:///%s/s.db" % scratch
    assert archiver.data_is_valid({"_url": url})["valid"] is False
    monkeypatch.setenv(limits.SQLITE_DIRS_ENV, "/nonexistent:%s" % scratch)
    assert archiver.data_is_valid({"_url": url}) == {"valid": True}


def test_an_empty_or_foreign_file_never_becomes_a_store(sqlite_policy):
    empty = sqlite_policy / "empty.db"
    empty.write_bytes(b"")
    text = sqlite_policy / "notes.db"
    text.write_text("not a database\n")
    other = sqlite_policy / "other.db"
    conn = sqlite3.connect(str(other))
    conn.execute("CREATE TABLE accounts (name TEXT)")
    conn.commit()
    conn.close()
    before = other.read_bytes()
    for path, words in ((empty, "an empty file"), (text, "not an SQLite database"),
                        (other, "another program")):
        reply = _archive({"_url": "sqlite:///%s" % path}, samples.pmtu_envelope(2))
        assert reply["succeeded"] is False and "retry" not in reply, reply
        assert words in reply["error"]
    assert empty.read_bytes() == b""
    assert text.read_text() == "not a database\n"
    assert other.read_bytes() == before
    conn = sqlite3.connect(str(other))
    assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master")] == ["accounts"]
    conn.close()


def test_a_new_store_is_marked_and_an_old_unmarked_one_is_adopted(sqlite_policy):
    url = "sqlite:///%s/new.db" % sqlite_policy
    assert _archive({"_url": url}, samples.pmtu_envelope(3)) == {"succeeded": True}
    conn = sqlite3.connect(str(sqlite_policy / "new.db"))
    assert conn.execute("SELECT value FROM jumbo_store WHERE name = 'format'").fetchone() == (
        "jumbo",)
    # A store written before the marker existed (version 3, no jumbo_store table).
    conn.execute("DROP TABLE jumbo_store")
    conn.commit()
    conn.close()
    assert [name for name in os.listdir(str(sqlite_policy)) if name.startswith(".jumbo-new")] == []
    store = SQLiteStore(str(sqlite_policy / "new.db"))
    assert len(store.latest()) == 1
    store.close()


# -- L2 -------------------------------------------------------------------------------------

@pytest.mark.parametrize("url", [
    "https://admin:s3cretpw@archive.example.org:92x0",
    "htps://admin:s3cretpw@archive.example.org",
    "sqlite://admin:s3cretpw@archive/x.db",
    "admin:s3cretpw@archive.example.org",
    "https://admin:s3cretpw@",
])
def test_a_malformed_url_is_never_echoed_with_its_login(url):
    answer = archiver.data_is_valid({"_url": url})
    assert answer["valid"] is False and answer["error"].startswith("At /_url:")
    assert "s3cretpw" not in answer["error"] and "admin" not in answer["error"]


# -- L3 -------------------------------------------------------------------------------------

def test_a_missing_or_unusable_ca_file_is_refused_at_validation(tmp_path):
    missing = tmp_path / "ca.pem"
    answer = archiver.data_is_valid({"_url": "https://archive.example.org:9200",
                                     "ca-file": str(missing)})
    assert answer == {"valid": False,
                      "error": "At /ca-file: %s does not exist on this node" % missing}
    missing.write_text("garbage\n")
    answer = archiver.data_is_valid({"_url": "https://archive.example.org:9200",
                                     "ca-file": str(missing)})
    assert answer["valid"] is False and answer["error"].startswith(
        "At /ca-file: %s is not a usable CA bundle" % missing)


# -- L4 -------------------------------------------------------------------------------------

class LimitingProxy(RelayProxy):
    """A proxy in front of the real OpenSearch with a body size limit on _bulk (413), or a
    fixed answer (`status`) for the next `times` _bulk requests."""

    def __init__(self, upstream, max_body):
        RelayProxy.__init__(self, upstream)
        self.max_body = max_body
        self.status, self.times = None, 0
        self.bulk_sizes = []

    def intercept(self, method, path, headers, length):
        if not path.startswith("/_bulk"):
            return None
        self.bulk_sizes.append(length)
        if self.times > 0:
            self.times -= 1
            return self.status, b"<html>proxy says no</html>"
        if length > self.max_body:
            return 413, b"<html>413 Request Entity Too Large</html>"
        return None


def test_proxy_413_splits_the_batch_and_404_408_ask_to_retry(opensearch_url):
    prefix = "h%s_" % uuid.uuid4().hex[:8]
    proxy = LimitingProxy(opensearch_url, max_body=6000)
    store = open_store("%s/?prefix=%s" % (proxy.url, prefix))
    try:
        envelopes = [samples.pmtu_envelope(i, dest="ps-413-%d" % i) for i in range(8)]
        assert store.put_many(envelopes) == [None] * 8
        assert max(proxy.bulk_sizes) > 6000 and len(proxy.bulk_sizes) > 3
        store.refresh()
        assert store.count() == 8
        data = {"_url": "%s/?prefix=%s" % (proxy.url, prefix)}
        for status in (404, 408):
            proxy.status, proxy.times = status, 1
            envelope = samples.pmtu_envelope(20 + status, dest="ps-%d" % status)
            reply = _archive(data, envelope)
            assert reply["succeeded"] is False and reply["retry"] == "PT1M", reply
            assert ("HTTP %d" % status) in reply["error"]
            assert _archive(data, envelope) == {"succeeded": True}
        proxy.max_body = 10
        reply = _archive(data, samples.pmtu_envelope(40, dest="ps-big"))
        assert reply["retry"] == "PT1M" and "body size limit" in reply["error"], reply
    finally:
        proxy.max_body = 10 ** 9
        drop_prefix(store, prefix)
        proxy.close()


# -- L5 -------------------------------------------------------------------------------------

def test_open_stores_are_bounded_and_evicted_ones_closed(sqlite_policy):
    handler = archiver.Archiver(max_open=3)
    try:
        for index in range(10):
            data = {"_url": "sqlite:///%s/s%d.db" % (sqlite_policy, index)}
            reply = handler.handle([json.dumps(dict(samples.pmtu_envelope(index), data=data))
                                    .encode()])
            assert reply == [{"succeeded": True}]
            assert len(handler.stores) <= 3
        assert len(handler.stores) == 3
        fds = len(os.listdir("/proc/self/fd"))
        for index in range(10, 20):
            data = {"_url": "sqlite:///%s/s%d.db" % (sqlite_policy, index)}
            handler.handle([json.dumps(dict(samples.pmtu_envelope(index), data=data)).encode()])
        assert len(os.listdir("/proc/self/fd")) <= fds + 1
    finally:
        handler.close()


def test_a_store_in_use_is_closed_only_when_its_records_are_written():
    closed = []

    class Fake(object):
        def __init__(self, key):
            self.key = key

        def close(self):
            closed.append(self.key)

    cache = store_cache.StoreCache(lambda key, data: Fake(key), limit=1)
    _, first = cache.get("a", {})
    cache.acquire(first, 2)
    cache.get("b", {})
    assert closed == []
    cache.release(first, 1)
    assert closed == []
    cache.release(first, 1)
    assert closed == ["a"]
    cache.get("c", {})
    assert closed == ["a", "b"]


# -- issue 32, row 10: an SQLite URI in place of a path --------------------------------------

def test_an_sqlite_uri_name_never_opens_a_file_outside(sqlite_policy, tmp_path, monkeypatch):
    # Relative to a working directory inside the allowed one, the name passed the directory
    # check; Debian's SQLite (SQLITE_USE_URI) then read it as a URI and made ../outside/pwn.db.
    (tmp_path / "outside").mkdir()
    monkeypatch.chdir(str(sqlite_policy))
    url = "sqlite:///file:..%2Foutside%2Fpwn.db?mode=rwc"
    answer = archiver.data_is_valid({"_url": url})
    assert answer["valid"] is False and "an SQLite URI, not a path" in answer["error"], answer
    # The store itself (replay, a node whose limits file allows the directory) opens by path.
    store = SQLiteStore("file:..%2Foutside%2Fpwn.db?mode=rwc")
    try:
        assert store.put_many([samples.pmtu_envelope(1)]) == [None]
    finally:
        store.close()
    assert not (tmp_path / "outside" / "pwn.db").exists()
    assert (sqlite_policy / "file:..%2Foutside%2Fpwn.db?mode=rwc").is_file()


# -- issue 32, row 12: no secret echoed, no login in clear, bounded waits ---------------------

@pytest.mark.parametrize("url", [
    "https://admin:s3cretpw",
    "https://admin:s3cretpw/more",
    "https://admin:s3c/retpw",
    "http://admin:s3cretpw?prefix=x",
])
def test_a_login_without_its_at_sign_is_never_echoed(url):
    answer = archiver.data_is_valid({"_url": url})
    assert answer["valid"] is False and answer["error"].startswith("At /_url:"), answer
    assert "s3cretpw" not in answer["error"] and "retpw" not in answer["error"], answer


@pytest.mark.parametrize("data,member", [
    ({"_url": "http://archive.example.org:9200", "_auth": {"username": "w", "password": "p"}},
     "_auth"),
    ({"_url": "http://w:p@archive.example.org:9200"}, "_url"),
    ({"_url": "http://198.18.0.5:9200", "_api-key": "k"}, "_api-key"),
])
def test_a_login_over_plain_http_is_refused(data, member):
    answer = archiver.data_is_valid(data)
    assert answer["valid"] is False, answer
    assert answer["error"].startswith("At /%s: a login over plain http would travel in clear"
                                      % member), answer
    with pytest.raises(Exception) as refused:
        open_store(data["_url"], **archiver.store_options(data))
    assert "would travel in clear" in str(refused.value)


def test_a_login_over_https_or_to_loopback_is_accepted():
    login = {"username": "w", "password": "p"}
    for url in ("https://archive.example.org", "http://127.0.0.1:9200", "http://[::1]:9200"):
        assert archiver.data_is_valid({"_url": url, "_auth": login}) == {"valid": True}, url


@pytest.mark.parametrize("wait", ["P99999999999W", "P8D", "PT168H1S"])
def test_a_retry_wait_beyond_a_week_is_refused(wait):
    data = {"_url": "https://archive.example.org", "retry-policy": [{"attempts": 2, "wait": wait}]}
    answer = archiver.data_is_valid(data)
    assert answer == {"valid": False, "error": "At /retry-policy/0/wait: must be at most P7D"}
    data["retry-policy"][0]["wait"] = "P7D"
    assert archiver.data_is_valid(data) == {"valid": True}


def test_the_report_refuses_a_login_over_plain_http_with_a_clean_error():
    from jumbo.archive.queries import open_queries
    from jumbo.archive.errors import ReportError
    with pytest.raises(ReportError, match="would travel in clear to archive.example.org"):
        open_queries("http://archive.example.org:9200", auth=("w", "s3cretpw"))
