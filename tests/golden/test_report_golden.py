"""The report's output is frozen (tests/data/report_golden.json): the same answers on both stores
whatever the queries do inside them, on the synthetic mesh of test_report.py
(fixtures.synth.Mesh.small)."""

import json
import os
import sys
import uuid

import pytest

from fixtures import synth
from jumbo.report import build_report as build
from jumbo.report.render import to_json
from opensearch_fixture import drop_prefix
import store_fixtures

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MESH = synth.Mesh.small()
sqlite_url, os_url, _ = store_fixtures.both_stores(MESH.records, "rgold")


@pytest.fixture(scope="module")
def records():
    return list(MESH.records())


# -- the report's output is frozen: the same answers whatever the queries do inside the store ----

GOLDEN = os.path.join(ROOT, "tests", "data", "report_golden.json")
GOLDEN_OPTIONS = (
    {}, {"since": "2026-11-03T00:00:00Z", "until": "2026-11-10T00:00:00Z"},
    {"until": "2026-11-06T00:00:00Z"}, {"since": "2026-11-08T00:00:00Z"}, {"interval": "week"},
    {"target": 1500}, {"limit": 3, "flap": 2},
)


def golden_reports(url):
    """The reports on the small mesh for each GOLDEN_OPTIONS, as JSON would carry them,
    without the two fields that legitimately differ (generation time, store kind)."""
    out = []
    for opts in GOLDEN_OPTIONS:
        r = json.loads(to_json(build(url, **opts)))
        r.pop("generated")
        r.pop("store")
        out.append({"options": opts, "report": r})
    return out


@pytest.mark.parametrize("kind", ["sqlite", "opensearch"])
def test_report_equals_the_golden_output(kind, request):
    """tests/data/report_golden.json was written by the report as it was before its queries
    moved into the stores' aggregations (commit 3b5290f, then in tests/test_report.py;
    `PYTHONPATH=.:python-jumbo:tests python tests/golden/test_report_golden.py --write-golden`
    rewrites it); the report must still say exactly that, for both stores."""
    url = request.getfixturevalue("sqlite_url" if kind == "sqlite" else "os_url")
    with open(GOLDEN) as handle:
        golden = json.load(handle)
    got = golden_reports(url)
    assert [g["options"] for g in got] == [g["options"] for g in golden]
    for new, old in zip(got, golden):
        for key in old["report"]:
            assert new["report"].get(key) == old["report"][key], (kind, new["options"], key)
        assert sorted(new["report"]) == sorted(old["report"])



def test_opensearch_golden_output_over_many_scroll_pages(os_url, monkeypatch):
    """The small mesh fits in one scroll page; with pages of 7 hits every scroll of the latest
    index (the two disjoint latest scans, gains, latency) runs over many pages, each read
    ahead while the last one is handled: the report must not change."""
    from jumbo.archive.opensearch import search as reader  # SCROLL_PAGE lives in search
    monkeypatch.setattr(reader, "SCROLL_PAGE", 7)
    with open(GOLDEN) as handle:
        golden = json.load(handle)
    assert golden_reports(os_url) == golden


def test_opensearch_latest_documents_without_packed_fields(opensearch_url, records, monkeypatch):
    """A store set up before template version 4: latest documents without `row_v1` or
    `locate_v1` (here some of each, as after an upgrade while the mesh archives) are read from
    their _source, over many scroll pages; the report is the golden one."""
    from jumbo.archive.stores import open_store
    from jumbo.archive.opensearch import search as reader  # SCROLL_PAGE lives in search
    from jumbo.archive.record import epoch_ms
    prefix = "nopack%s_" % uuid.uuid4().hex[:6]
    url = "%s/?prefix=%s" % (opensearch_url, prefix)
    store_fixtures.load(url, records)
    store = open_store(url)
    try:
        index = prefix + "jumbo_latest"
        status, parsed = store.request("POST", "/%s/_search" % index,
                                       {"size": 10000, "sort": [{"path": "asc"}]})
        assert status == 200
        hits = parsed["hits"]["hits"]
        lines = []
        for i, hit in enumerate(hits):
            drop = [field for field, gone in (("row_v1", i % 2 == 0), ("locate_v1", i % 3 == 1))
                    if gone]
            if not drop:
                continue
            body = dict(hit["_source"])
            for field in drop:
                del body[field]
            lines.append(json.dumps({"index": {"_index": index, "_id": hit["_id"],
                                               "version": epoch_ms(body["start"]),
                                               "version_type": "external_gte"}}))
            lines.append(json.dumps(body))
        status, parsed = store.request("POST", "/_bulk?refresh=true", "\n".join(lines) + "\n",
                                       ndjson=True)
        assert status == 200 and not parsed["errors"]
        for field, kept in (("row_v1", len(hits) // 2), ("locate_v1", len(hits) - len(hits[1::3]))):
            status, parsed = store.request("POST", "/%s/_count" % index, {
                "query": {"exists": {"field": field}}})
            assert parsed["count"] == kept, field
        monkeypatch.setattr(reader, "SCROLL_PAGE", 7)
        with open(GOLDEN) as handle:
            golden = json.load(handle)
        assert golden_reports(url) == golden
    finally:
        drop_prefix(store, prefix)


def test_sqlite_summaries_old_store_and_upgrade(tmp_path, records):
    """A version-1 store (no summary tables, no latest_rows) is reported from its history and
    the latest/results join; opened once by a version-5 writer it gets the summaries, filled
    from that history, counted exactly like the ones the trigger keeps, latest_rows, the
    same rows the triggers keep, and the evidence of partial black holes, the same as the
    triggers keep; both give the golden report."""
    import sqlite3
    from jumbo.archive.queries import open_queries
    from jumbo.archive.stores import open_store
    path = str(tmp_path / "old.db")
    url = "sqlite:///" + path
    store_fixtures.load(url, records)
    conn = sqlite3.connect(path)
    kept = {t: sorted(conn.execute("SELECT * FROM %s" % t), key=repr)
            for t in ("pmtu_days", "pmtu_path_states", "latest_rows", "pmtu_evidence",
                      "pmtu_evidence_clean")}
    # the mesh's partial black hole, seen every day
    assert [r[:2] for r in kept["pmtu_evidence"]] == [("%s|%s|4|pmtu" % MESH.special["partial"],
                                                         MESH.days)]
    assert sum(r[-3] for r in kept["pmtu_days"]) == sum(1 for r in records if r["test_type"] == "pmtu")
    assert len(kept["latest_rows"]) == conn.execute("SELECT COUNT(*) FROM latest").fetchone()[0]
    assert len(kept["latest_rows"]) >= MESH.expected()["paths"]
    conn.executescript("DROP TRIGGER results_pmtu_summary; DROP TABLE pmtu_days; "
                       "DROP TABLE pmtu_path_states; DROP TRIGGER latest_rows_insert; "
                       "DROP TRIGGER latest_rows_update; DROP TABLE latest_rows; "
                       "DROP TRIGGER results_pmtu_evidence; DROP TRIGGER results_pmtu_clean; "
                       "DROP TABLE pmtu_evidence; DROP TABLE pmtu_evidence_clean; "
                       "PRAGMA user_version = 1;")
    conn.close()
    with open(GOLDEN) as handle:
        golden = [g["report"] for g in json.load(handle)]
    queries = open_queries(url)
    assert not queries.has_summary and not queries.has_latest_rows
    queries.close()
    assert [g["report"] for g in golden_reports(url)] == golden
    open_store(url).close()          # the upgrade
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 5
    assert {t: sorted(conn.execute("SELECT * FROM %s" % t), key=repr) for t in kept} == kept
    conn.close()
    queries = open_queries(url)
    assert queries.has_summary and queries.has_latest_rows
    queries.close()
    assert [g["report"] for g in golden_reports(url)] == golden


if __name__ == "__main__" and sys.argv[1:] == ["--write-golden"]:
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        url = "sqlite:///" + os.path.join(tmp, "golden.db")
        store_fixtures.load(url, list(MESH.records()))
        os.makedirs(os.path.dirname(GOLDEN), exist_ok=True)
        with open(GOLDEN, "w") as handle:
            json.dump(golden_reports(url), handle, indent=1, sort_keys=True)
            handle.write("\n")
    print("wrote", GOLDEN)
