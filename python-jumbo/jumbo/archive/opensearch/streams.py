"""The report over perfSONAR's own streams: runs that reached the archive only through the stock
`http` archiver and Logstash, in `pscheduler_pmtu` / `pscheduler_jumbo-throughput`.

Those streams are READ here, never written: no template, mapping, stream or document of
perfSONAR's is created or changed. Which documents came through Logstash: every document its
`http` input stores has a top-level `host` (the client's address: the Apache proxy), which
Logstash never removes (perfsonar/logstash pipeline/01-inputs.conf); the jumbo archiver's own
stream documents (jumbo/archive/opensearch/logstash.py) never have one.

The plan (plan()), decided with counts before the report starts:
  "jumbo"    no Logstash document in the streams, or every Logstash run is also in
             jumbo_history: the report reads jumbo_* as before (nothing more is read)
  "streams"  no run of these types in jumbo_history: the report reads the streams
  "union"    both hold runs the other lacks: the report reads both
A run's identity is the one both routes carry: its run href (pscheduler.run_href in a
stream document; the jumbo archiver's record id is sha1 of it, jumbo.archive.record.make_id),
so a run stored by both routes, or stored twice by Logstash (its retries get new ids), counts
once.

For "streams" and "union" the runs are turned back into the result objects the archiver
would have received (from_logstash: Logstash moved run/task/tool into `pscheduler.*` and kept
test, result, reference and id verbatim for these types, which have no 06-result_* filter)
and loaded, a page at a time, into a private SQLite store in a temporary directory (the
archiver's own SQLite writer: the record id dedupes), which the report then reads with the
SQLite reader. Memory stays bounded by a page; time and temporary disk grow with the history
read (a pass over it: nothing in OpenSearch can turn a Logstash document into a record
without scripts, which a bare OpenSearch does not run).
"""

import importlib
import os
import shutil
import sys
import tempfile

from .. import record as records
from ..stores import store_class
from .layout import OWNED_TEST_TYPES

BATCH = 5000


def stream_indices(prefix):
    """The owned test types' streams, as one comma-separated index expression."""
    return ",".join(prefix + "pscheduler_" + t for t in OWNED_TEST_TYPES)


LOGSTASH_ONLY = {"bool": {"filter": [{"exists": {"field": "host"}}]}}


def from_logstash(doc):
    """The archiver envelope (result object, run and task hrefs) a Logstash-shaped document
    of a type without a 06-result_* filter was made from: what the record needs of it."""
    if not isinstance(doc, dict) or not isinstance(doc.get("test"), dict):
        raise records.BadRecord("stream document has no test")
    ps = doc.get("pscheduler") if isinstance(doc.get("pscheduler"), dict) else {}
    inner = {key: doc[key] for key in ("id", "test", "result", "reference") if key in doc}
    inner["run"] = {"start-time": ps.get("start_time"), "end-time": ps.get("end_time"),
                    "added": ps.get("added"), "href": ps.get("run_href")}
    inner["task"] = {"href": ps.get("task_href")}
    if ps.get("tool") is not None:
        inner["tool"] = {"name": ps.get("tool")}
    if ps.get("participants") is not None:
        inner["participants"] = ps.get("participants")
    return {"result": inner, "run-href": ps.get("run_href"), "task-href": ps.get("task_href")}


def _run_id(doc):
    """The record id of the run a stream document holds (None when it cannot be told)."""
    try:
        return records.from_result(*records.unwrap(from_logstash(doc)))["id"]
    except (records.BadRecord, ValueError, TypeError):
        return None


def _count(reader, index, query):
    parsed = reader.search(index, {"size": 0, "track_total_hits": True, "query": query}, "count")
    return parsed["hits"]["total"]["value"] if parsed else 0


def plan(reader):
    """"jumbo", "streams" or "union" (see the module docstring), from counts, and for an
    archive fed by both routes from one pass over the Logstash documents' run ids (ended at
    the first run jumbo_history lacks)."""
    streams = stream_indices(reader.prefix)
    if not _count(reader, streams, LOGSTASH_ONLY):
        return "jumbo"
    owned = {"bool": {"filter": [{"terms": {"jumbo.test_type": list(OWNED_TEST_TYPES)}}]}}
    if not _count(reader, reader.pmtu, owned):
        return "streams"
    for hits in reader.scroll_pages(streams, LOGSTASH_ONLY, source=[
            "id", "test", "result", "reference", "pscheduler"]):
        ids = {_run_id(hit.get("_source")) for hit in hits}
        ids.discard(None)
        if not ids:
            continue
        found = _count(reader, reader.pmtu, {"ids": {"values": sorted(ids)}})
        if found < len(ids):
            return "union"
    return "jumbo"


class _Loader(object):
    """The private SQLite store, filled a batch at a time; counts what it could not read."""

    def __init__(self, path):
        self.store = store_class("sqlite")(path)
        self.batch = []
        self.unreadable = 0

    def add(self, item):
        self.batch.append(item)
        if len(self.batch) >= BATCH:
            self.flush()

    def flush(self):
        if self.batch:
            outcomes = self.store.put_many(self.batch)
            self.unreadable += sum(1 for outcome in outcomes if outcome)
            self.batch = []

    def close(self):
        self.flush()
        self.store.close()


def load(reader, path, with_history):
    """Fill the SQLite store at `path` with the runs of the streams (and, `with_history`,
    every record of jumbo_history); the number of documents that could not be read."""
    loader = _Loader(path)
    try:
        if with_history:
            for hit in reader.scroll(reader.pmtu, {"match_all": {}}, source=["jumbo", "raw"]):
                src = hit.get("_source") or {}
                rec = dict(src.get("jumbo") or {})
                rec.pop("path", None)
                if isinstance(src.get("raw"), dict):
                    rec["raw"] = src["raw"]
                loader.add(rec)
        for hit in reader.scroll(stream_indices(reader.prefix), {"match_all": {}}, source=[
                "id", "test", "result", "reference", "pscheduler"]):
            try:
                loader.add(from_logstash(hit.get("_source")))
            except records.BadRecord:
                loader.unreadable += 1
    finally:
        loader.close()
    return loader.unreadable


class StreamQueries(object):
    """The report's queries over the runs load() gathered: the SQLite reader's answers, with
    the OpenSearch reader's latency (perfSONAR's own latency documents) when the gathered
    runs hold none. Everything else is the SQLite reader's (same questions, same answers:
    tests/test_report.py holds the two readers to identical reports)."""

    def __init__(self, reader, with_history):
        # loaded by name, only when the streams are read (jumbo.archive.queries.READERS)
        sqlite_reader = importlib.import_module("jumbo.archive.sqlite.reader").SqliteQueries
        self._os = reader
        self._dir = tempfile.mkdtemp(prefix="jumbo-report-streams-")
        try:
            path = os.path.join(self._dir, "runs.db")
            unreadable = load(reader, path, with_history)
            self._sqlite = sqlite_reader("sqlite:///" + path)
        except BaseException:
            shutil.rmtree(self._dir, ignore_errors=True)
            raise
        if unreadable:
            sys.stderr.write("jumbo-report: %d stream document(s) in %s could not be read as "
                             "runs and are left out\n" % (unreadable, stream_indices(reader.prefix)))
        # the archive read is OpenSearch, whichever route its runs came by
        self.name = reader.name
        self.display = reader.display

    def __getattr__(self, name):
        if name.startswith("_"):     # not set yet (a failed __init__): no recursion
            raise AttributeError(name)
        return getattr(self._sqlite, name)

    def latency(self, window):
        return self._sqlite.latency(window) or self._os.latency(window)

    def close(self):
        try:
            self._sqlite.close()
        finally:
            self._os.close()
            shutil.rmtree(self._dir, ignore_errors=True)


def report_queries(reader):
    """The queries the report should use over the OpenSearch archive `reader` reads."""
    try:
        how = plan(reader)
        if how == "jumbo":
            return reader
        return StreamQueries(reader, with_history=(how == "union"))
    except BaseException:
        reader.close()      # StoreDown while deciding or loading: no thread or scroll left open
        raise
