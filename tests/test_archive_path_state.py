"""The path-state rule is defined once (jumbo.archive.path_state.RULE) and rendered to Python,
SQL and OpenSearch query DSL: every rendering gives every combination of fields the same state,
the SQL run by SQLite (also over the summary tables' encoding: NULL as -1, black hole as a flag)
and the query DSL by a real OpenSearch."""

import itertools
import json
import sqlite3
import uuid

from jumbo.archive import path_state
from jumbo.archive.queries import LATEST_FIELDS, Latest
from jumbo.archive.opensearch.store import OpenSearchStore

TARGET = 9000
FIELDS = ("succeeded", "path_mtu", "reverse_path_mtu", "pmtud", "reverse_pmtud", "partial")
GRID = [dict(zip(FIELDS, values)) for values in itertools.product(
    (True, False), (None, 1500, 8999, 9000), (None, 1500, 9000), (None, "ok", "blackhole", "unknown"),
    (None, "blackhole"), (False, True))]


def test_the_grid_covers_every_state_and_the_known_cases():
    states = [path_state.state_of(r, TARGET) for r in GRID]
    assert set(states) == set(path_state.STATES)
    ok = {"succeeded": True, "pmtud": "ok", "partial": False, "reverse_pmtud": None}
    assert path_state.state_of(dict(ok, path_mtu=9000, reverse_path_mtu=None), TARGET) == "jumbo"
    assert path_state.state_of(dict(ok, path_mtu=9000, reverse_path_mtu=1500), TARGET) == "standard"
    assert path_state.state_of(dict(ok, path_mtu=9000, partial=True), TARGET) == "blackhole"
    assert path_state.state_of(dict(ok, path_mtu=None, reverse_path_mtu=None), TARGET) == "failed"
    # unknown is never jumbo: flows left unmeasured on a path that would carry the target;
    # a measured path MTU below it, a black hole or a failed run keep their own state
    unknown = dict(ok, pmtud="unknown", reverse_path_mtu=None)
    assert path_state.state_of(dict(unknown, path_mtu=9000), TARGET) == "unknown"
    assert path_state.state_of(dict(unknown, path_mtu=1500), TARGET) == "standard"
    assert path_state.state_of(dict(unknown, path_mtu=9000, partial=True), TARGET) == "blackhole"
    assert path_state.state_of(dict(unknown, path_mtu=9000, succeeded=False), TARGET) == "failed"
    assert [path_state.is_blackhole(r) for r in GRID] == [s == "blackhole" for s in states]
    # the compiled Python rendering, over dicts and over the queries' Latest rows, reads the
    # table as the step-by-step interpretation does
    assert states == [path_state.state_of_interpreted(r, TARGET) for r in GRID]
    rows = [Latest(**dict(dict.fromkeys(LATEST_FIELDS), **r)) for r in GRID]
    assert states == [path_state.state_of(r, TARGET) for r in rows]
    # the keyword renderings the report's model uses
    assert states == [path_state.state_of_fields(TARGET, **r) for r in GRID]
    assert [path_state.blackhole_fields(**dict((k, r[k]) for k in ("pmtud", "reverse_pmtud",
                                                                   "partial"))) for r in GRID] \
        == [path_state.is_blackhole(r) for r in GRID]


def test_sql_gives_the_same_state_as_python():
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE r (%s)" % ", ".join(FIELDS))
    db.executemany("INSERT INTO r VALUES (%s)" % ", ".join("?" * len(FIELDS)),
                   [tuple(r[f] for f in FIELDS) for r in GRID])
    got = [row[0] for row in db.execute("SELECT %s FROM r ORDER BY rowid" % path_state.sql(TARGET))]
    assert got == [path_state.state_of(r, TARGET) for r in GRID]
    # the summary tables' encoding, with the flag the store fills them with
    summary = ("SELECT %s FROM (SELECT succeeded, IFNULL(path_mtu, -1) AS path_mtu, "
               "IFNULL(reverse_path_mtu, -1) AS reverse_path_mtu, %s AS blackhole, %s AS unknown "
               "FROM r ORDER BY rowid)" % (
                   path_state.sql(TARGET, null=-1, blackhole_flag="blackhole", unknown_flag="unknown"),
                   path_state.sql_blackhole("r."), path_state.sql_unknown("r.")))
    assert [row[0] for row in db.execute(summary)] == got
    flags = [row[0] for row in db.execute("SELECT %s FROM r ORDER BY rowid"
                                          % path_state.sql_blackhole())]
    assert flags == [int(path_state.is_blackhole(r)) for r in GRID]


def test_the_sqlite_store_summarises_with_the_rule(tmp_path):
    """The store's summary tables (filled by its trigger, with path_state.sql_blackhole) give
    every grid row the state the Python rendering gives it."""
    from jumbo.archive.stores import open_store
    store = open_store("sqlite:///%s" % (tmp_path / "s.db"))
    records = [dict(row, id="grid-%d" % n, test_type="pmtu", source="s%d" % n, dest="d",
                    ip_version=4, start="2026-01-01T00:00:00Z") for n, row in enumerate(GRID)]
    assert store.put_many(records) == [None] * len(records)
    store.close()
    db = sqlite3.connect(str(tmp_path / "s.db"))
    got = dict(db.execute("SELECT path, %s FROM pmtu_path_states" % path_state.sql(
        TARGET, null=-1, blackhole_flag="blackhole", unknown_flag="unknown")))
    assert got == {"s%d|d|4|pmtu" % n: path_state.state_of(row, TARGET)
                   for n, row in enumerate(GRID)}


def test_query_dsl_gives_the_same_state_as_python(opensearch_url):
    index = "pstate%s" % uuid.uuid4().hex[:8]
    store = OpenSearchStore.from_url(opensearch_url)
    mapping = {"properties": {"jumbo": {"properties": {
        "succeeded": {"type": "boolean"}, "path_mtu": {"type": "integer"},
        "reverse_path_mtu": {"type": "integer"}, "pmtud": {"type": "keyword"},
        "reverse_pmtud": {"type": "keyword"}, "partial": {"type": "boolean"},
        "n": {"type": "integer"}}}}}
    assert store.request("PUT", "/" + index, {"mappings": mapping})[0] == 200
    try:
        lines = []
        for n, r in enumerate(GRID):
            doc = {k: v for k, v in r.items() if v is not None}
            lines += [json.dumps({"index": {"_index": index, "_id": str(n)}}),
                      json.dumps({"jumbo": dict(doc, n=n)})]
        status, body = store.request("POST", "/_bulk?refresh=true", "\n".join(lines) + "\n", ndjson=True)
        assert status == 200 and not body["errors"]
        for state, clause in path_state.filters(TARGET).items():
            status, body = store.request("POST", "/%s/_search" % index, {
                "size": len(GRID), "query": clause, "_source": False, "track_total_hits": True})
            assert status == 200
            got = sorted(int(h["_id"]) for h in body["hits"]["hits"])
            assert got == [n for n, r in enumerate(GRID) if path_state.state_of(r, TARGET) == state], state
    finally:
        store.request("DELETE", "/" + index)
        store.close()
