"""The path-state rule is defined once (jumbo.report.path_state.RULE) and rendered to Python,
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
    (True, False), (None, 1500, 8999, 9000), (None, 1500, 9000), (None, "ok", "blackhole"),
    (None, "blackhole"), (False, True))]


def test_the_grid_covers_every_state_and_the_known_cases():
    states = [path_state.state_of(r, TARGET) for r in GRID]
    assert set(states) == set(path_state.STATES)
    ok = {"succeeded": True, "pmtud": "ok", "partial": False, "reverse_pmtud": None}
    assert path_state.state_of(dict(ok, path_mtu=9000, reverse_path_mtu=None), TARGET) == "jumbo"
    assert path_state.state_of(dict(ok, path_mtu=9000, reverse_path_mtu=1500), TARGET) == "standard"
    assert path_state.state_of(dict(ok, path_mtu=9000, partial=True), TARGET) == "blackhole"
    assert path_state.state_of(dict(ok, path_mtu=None, reverse_path_mtu=None), TARGET) == "failed"
    assert [path_state.is_blackhole(r) for r in GRID] == [s == "blackhole" for s in states]
    # the compiled Python rendering, over dicts and over the queries' Latest rows, reads the
    # table as the step-by-step interpretation does
    assert states == [path_state.state_of_interpreted(r, TARGET) for r in GRID]
    rows = [Latest(**dict(dict.fromkeys(LATEST_FIELDS), **r)) for r in GRID]
    assert states == [path_state.state_of(r, TARGET) for r in rows]


def test_sql_gives_the_same_state_as_python():
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE r (%s)" % ", ".join(FIELDS))
    db.executemany("INSERT INTO r VALUES (%s)" % ", ".join("?" * len(FIELDS)),
                   [tuple(r[f] for f in FIELDS) for r in GRID])
    got = [row[0] for row in db.execute("SELECT %s FROM r ORDER BY rowid" % path_state.sql(TARGET))]
    assert got == [path_state.state_of(r, TARGET) for r in GRID]
    summary = ("SELECT %s FROM (SELECT succeeded, IFNULL(path_mtu, -1) AS path_mtu, "
               "IFNULL(reverse_path_mtu, -1) AS reverse_path_mtu, (IFNULL(pmtud, '') = 'blackhole' "
               "OR IFNULL(reverse_pmtud, '') = 'blackhole' OR partial = 1) AS blackhole FROM r "
               "ORDER BY rowid)" % path_state.sql(TARGET, null=-1, blackhole_flag="blackhole"))
    assert [row[0] for row in db.execute(summary)] == got


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
