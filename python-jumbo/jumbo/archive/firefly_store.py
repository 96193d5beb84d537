"""Where the firefly collector keeps its sums, and where the report reads them: either store.

One row (SQLite) or document (OpenSearch) per flush, site pair and IP version:
  at, from           the flush's time and the previous flush's (UTC ISO 8601)
  collector          the collector's id (host:port and start time): with `at` and the cell,
                     the row's identity, so a flush stored twice is stored once
  source_site, dest_site, ip_version
  jumbo_bytes, standard_bytes, unknown_mss_bytes, flows

SQLite: the table `firefly_bytes` in the suite's own store file (opened as the archiver opens
it, so a new file is a proper store). OpenSearch: the suite's own index `jumbo_fireflies`
(with the URL's prefix), created with its own explicit mapping (`dynamic: false`, marked
managed-by jumbo-fireflies); no index template, and an index of that name the suite does not
own is left alone and refused.
"""

import datetime
import hashlib
import importlib
import json
import os
import sqlite3
import urllib.parse

from .errors import PermanentError, StoreError, TransientError
from .stores import store_class
from .urls import check_url

TABLE = "firefly_bytes"
INDEX = "jumbo_fireflies"
MANAGED_BY = "jumbo-fireflies"
SUMS = ("jumbo_bytes", "standard_bytes", "unknown_mss_bytes", "flows")
COMPOSITE_PAGE = 1000

_K = {"type": "keyword"}
_LONG = {"type": "long"}
MAPPING = {
    "dynamic": False,
    "_meta": {"managed-by": MANAGED_BY, "version": 1},
    "properties": dict({"at": {"type": "date"}, "from": {"type": "date"}, "collector": _K,
                        "source_site": _K, "dest_site": _K, "ip_version": {"type": "integer"}},
                       **{name: _LONG for name in SUMS}),
}


def iso(epoch):
    return datetime.datetime.utcfromtimestamp(epoch).strftime("%Y-%m-%dT%H:%M:%SZ")


def open_fireflies(url, **options):
    """The firefly store of a store URL (sqlite:///PATH or http(s)://...)."""
    parts = check_url(url)
    if parts.scheme == "sqlite":
        return SqliteFireflies(url)
    return OpenSearchFireflies(url, **options)


def _rows(cells):
    for (src, dst, version), sums in sorted(cells.items()):
        yield src, dst, version, sums


class SqliteFireflies(object):
    DDL = ("CREATE TABLE IF NOT EXISTS %s (at TEXT NOT NULL, \"from\" TEXT NOT NULL, "
           "collector TEXT NOT NULL, source_site TEXT NOT NULL, dest_site TEXT NOT NULL, "
           "ip_version INTEGER NOT NULL, jumbo_bytes INTEGER NOT NULL, "
           "standard_bytes INTEGER NOT NULL, unknown_mss_bytes INTEGER NOT NULL, "
           "flows INTEGER NOT NULL, PRIMARY KEY (at, collector, source_site, dest_site, ip_version))"
           % TABLE)

    def __init__(self, url):
        self.url = url
        self.path = url[len("sqlite:///"):]
        self.conn = None

    def _writer(self):
        if self.conn is None:
            # The archiver's own opening: a new file becomes a store, a foreign file is refused.
            store = store_class("sqlite").from_url(self.url)
            self.conn = store.conn
            self.conn.execute(self.DDL)
        return self.conn

    def prepare(self):
        """Open (or make) the store now: a file that is no store is refused at the start."""
        try:
            self._writer()
        except sqlite3.Error as err:
            raise StoreError("SQLite store %s: %s" % (self.path, err))

    def write(self, start, end, collector, cells):
        try:
            conn = self._writer()
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(
                "INSERT OR IGNORE INTO %s VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" % TABLE,
                [(iso(end), iso(start), collector, src, dst, version) + tuple(sums)
                 for src, dst, version, sums in _rows(cells)])
            conn.execute("COMMIT")
        except sqlite3.Error as err:
            if self.conn is not None and self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise StoreError("SQLite store %s: %s" % (self.path, err))

    def sums(self, start, end):
        """{(src_site, dst_site, ip_version): [jumbo, standard, unknown, flows]} of the flushes
        at times in [start, end) (epochs)."""
        if not os.path.exists(self.path):
            raise StoreError("SQLite store %s: no such file" % self.path)
        try:
            db = sqlite3.connect("file:%s?mode=ro" % urllib.parse.quote(os.path.abspath(self.path)),
                                 uri=True)
            try:
                if db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (TABLE,)).fetchone() is None:
                    return {}
                found = db.execute(
                    "SELECT source_site, dest_site, ip_version, SUM(jumbo_bytes), SUM(standard_bytes), "
                    "SUM(unknown_mss_bytes), SUM(flows) FROM %s WHERE at >= ? AND at < ? "
                    "GROUP BY source_site, dest_site, ip_version" % TABLE, (iso(start), iso(end)))
                return {(a, b, v): [j, s, u, f] for a, b, v, j, s, u, f in found}
            finally:
                db.close()
        except sqlite3.Error as err:
            raise StoreError("SQLite store %s: %s" % (self.path, err))

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class OpenSearchFireflies(object):
    def __init__(self, url, **options):
        # Loaded by name (as jumbo.archive.stores): an SQLite collector never loads HTTP and TLS.
        client = importlib.import_module("jumbo.archive.opensearch.client").OpenSearchClient
        self.client = client.from_url(url, **options)
        self.index = self.client.name(INDEX)
        self.ready = False

    def _ensure_index(self):
        if self.ready:
            return
        status, parsed = self.client.request("GET", "/%s/_mapping" % self.index)
        if status == 404:
            status, parsed = self.client.request("PUT", "/" + self.index, {
                "settings": {"number_of_shards": 1, "number_of_replicas": 0},
                "mappings": MAPPING})
            if status == 400 and "exists" in str(parsed):
                return self._ensure_index()     # another collector made it meanwhile
            self.client.check(status, parsed, "creating the index %s" % self.index)
        else:
            self.client.check(status, parsed, "reading the mapping of %s" % self.index)
            meta = [((v or {}).get("mappings") or {}).get("_meta") or {} for v in (parsed or {}).values()]
            if not meta or any(m.get("managed-by") != MANAGED_BY for m in meta):
                raise PermanentError("an index %s exists that jumbo-fireflies does not own; left "
                                     "alone, nothing stored" % self.index)
        self.ready = True

    def prepare(self):
        """The index made or checked now: one not the suite's is refused at the start. An
        OpenSearch that is down is not: the first flush tries again."""
        try:
            self._ensure_index()
        except TransientError:
            pass

    @staticmethod
    def doc_id(end, collector, src, dst, version):
        key = "\0".join((iso(end), collector, src, dst, str(version)))
        return hashlib.sha256(key.encode("utf-8")).hexdigest()[:40]

    def write(self, start, end, collector, cells):
        self._ensure_index()
        lines = []
        for src, dst, version, sums in _rows(cells):
            doc = dict(zip(SUMS, sums), at=iso(end), collector=collector, source_site=src,
                       dest_site=dst, ip_version=version, **{"from": iso(start)})
            lines.append(json.dumps({"index": {"_index": self.index,
                                               "_id": self.doc_id(end, collector, src, dst, version)}}))
            lines.append(json.dumps(doc, sort_keys=True))
        if not lines:
            return
        answers = self.client.bulk(lines, len(lines) // 2)
        failed = [a for a in answers if not 200 <= int((a or {}).get("status", 0)) < 300]
        if failed:
            raise StoreError("OpenSearch %s: %d of %d firefly documents not stored: %s"
                             % (self.client.url, len(failed), len(answers), str(failed[0])[:200]))
        self.client.request("POST", "/%s/_refresh" % self.index)

    def sums(self, start, end):
        status, parsed = self.client.request("GET", "/%s/_mapping" % self.index)
        if status == 404:
            return {}
        self.client.check(status, parsed, "reading the mapping of %s" % self.index)
        out = {}
        after = None
        while True:
            composite = {"size": COMPOSITE_PAGE, "sources": [
                {"a": {"terms": {"field": "source_site"}}}, {"b": {"terms": {"field": "dest_site"}}},
                {"v": {"terms": {"field": "ip_version"}}}]}
            if after:
                composite["after"] = after
            body = {"size": 0, "query": {"range": {"at": {"gte": iso(start), "lt": iso(end)}}},
                    "aggs": {"cells": {"composite": composite, "aggs": {
                        name: {"sum": {"field": name}} for name in SUMS}}}}
            status, parsed = self.client.request("POST", "/%s/_search" % self.index, body)
            self.client.check(status, parsed, "summing the fireflies of %s" % self.index)
            try:
                agg = parsed["aggregations"]["cells"]
                for bucket in agg["buckets"]:
                    key = bucket["key"]
                    out[(str(key["a"]), str(key["b"]), int(key["v"]))] = [
                        int(bucket[name]["value"]) for name in SUMS]
                after = agg.get("after_key")
                if not agg["buckets"] or not after:
                    return out
            except (KeyError, TypeError, ValueError) as err:
                raise StoreError("OpenSearch %s: an aggregation answer of no known shape (%s)"
                                 % (self.client.url, err))

    def close(self):
        self.client.close()
