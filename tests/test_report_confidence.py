"""How sure a jumbo verdict is (jumbo.report.confidence), on both stores: per path its jumbo
runs in the window, the flows asked and measured, the odds of a missed ECMP member (m = 16)
and the word; a row stored before the record kept the asked count is `unknown`, never sure,
also in a SQLite store of version 4 that a writer upgrades (its rows kept) and that a report
reads before any writer did.

The mesh (every run with its reverse measured at 9000 by the reflector):
  a -> b  one single-ended run asked for 16 flows, 12 measured (the dest's ICMP budget):
          jumbo (on the 12), not sure: (15/16)^12 = 0.46
  b -> a  three runs of 40 flows: 120 flows, (15/16)^120 = 4.3e-4 <= 0.001: sure
  a -> d  a jumbo run, then a 1500 one: standard, no confidence at all
  c -> a  two jumbo runs, the first stored before the record kept the counts: unknown
"""

import csv
import threading
import io
import json
import sqlite3

import pytest

import store_fixtures
from jumbo.archive.queries import Window, open_queries
from jumbo.archive.stores import open_store
from jumbo.report import build_report as build
from jumbo.archive.query_base import LATEST_FIELDS, Latest
from jumbo.report.confidence import (ECMP_MEMBERS, CountsFeed, attach, missed_member_odds, of_counts,
                                     take_counts)
from jumbo.report.path_record import PathRecord
from jumbo.report.html import to_html
from jumbo.report.render import to_csv, to_json, to_text


def _rec(source, dest, hour, flows=4, asked=4, **fields):
    rec = {"id": "%s-%s-%d" % (source, dest, hour), "test_type": "pmtu", "source": source,
           "dest": dest, "ip_version": 4, "start": "2026-11-02T%02d:00:00Z" % hour,
           "succeeded": True, "path_mtu": 9000, "local_mtu": 9000, "target_mtu": 9000,
           "pmtud": "not-needed", "partial": False, "flows": flows, "flows_asked": asked,
           "blackhole_flows": 0, "reverse_path_mtu": 9000, "reverse_pmtud": "ok",
           "source_site": source.upper(), "dest_site": dest.upper()}
    rec.update(fields)
    if asked is None:
        del rec["flows_asked"]      # as the record was before it kept the count
    return rec


def records():
    return ([_rec("a", "b", 1, flows=12, asked=16)]
            + [_rec("b", "a", h, flows=40, asked=40) for h in (1, 2, 3)]
            + [_rec("a", "d", 1), _rec("a", "d", 2, path_mtu=1500, pmtud="ok")]
            + [_rec("c", "a", 1, flows=None, asked=None), _rec("c", "a", 2, flows=8, asked=8)])


sqlite_url, os_url, store_url = store_fixtures.both_stores(records, "conf")

TRUTH = {("a", "b"): (1, 16, 12, (15 / 16.0) ** 12, "low"),
         ("b", "a"): (3, 120, 120, (15 / 16.0) ** 120, "high"),
         ("a", "d"): (None, None, None, None, None),
         ("c", "a"): (2, None, 8, (15 / 16.0) ** 8, "unknown")}
KEYS = ("jumbo_runs", "flows_asked", "flows_measured", "missed_member_odds", "confidence")


def _listed(r):
    j = json.loads(to_json(r))
    rows = [dict(zip(j["path_fields"], row)) for row in j["paths"]]
    return {(p["source"], p["dest"]): p for p in rows}


def _check(r, truth=TRUTH):
    listed = _listed(r)
    for key, want in truth.items():
        got = tuple(listed[key][k] for k in KEYS)
        assert got[:3] + got[4:] == want[:3] + want[4:], (key, got)
        assert got[3] == pytest.approx(want[3]) if want[3] is not None else got[3] is None
    return listed


def test_the_odds_of_a_missed_member():
    assert ECMP_MEMBERS == 16
    assert missed_member_odds(12) == pytest.approx(0.4610, abs=1e-4)
    assert missed_member_odds(12, members=4) == pytest.approx(0.75 ** 12)
    assert missed_member_odds(None) is None
    # no run gave a flow count: unknown, never sure; an asked count missing on one run too
    assert of_counts((2, 0, 0, 0, 0))[2:] == (None, None, "unknown")
    assert of_counts((2, 80, 2, 40, 1))[1] is None and of_counts((2, 80, 2, 40, 1))[4] == "unknown"
    assert of_counts((3, 120, 3, 120, 3))[4] == "high"


def _record(source, dest, version, state):
    values = dict.fromkeys(LATEST_FIELDS)
    values.update(source=source, dest=dest, ip_version=version)
    p = PathRecord.unjudged(Latest(**values), "A", "B")
    p.state = state
    return p


def test_counts_reach_their_own_path_and_family_as_the_store_sends_them():
    rows = dict(((p.source, p.dest, p.ip_version), p) for p in (
        _record("a", "b", 4, "jumbo"), _record("a", "b", 6, "jumbo-one-way"),
        _record("b", "a", 4, "standard"), _record(None, "c", None, "jumbo"),
        _record("c", "a", 4, "jumbo")))
    sure, unsure = (3, 120, 3, 120, 3), (1, 12, 1, 16, 1)
    take_counts(rows, iter([
        ("a|b|4|pmtu", sure), ("a|b|6|pmtu", unsure), ("b|a|4|pmtu", sure), ("|c||pmtu", sure),
        # a damaged or hostile archive's keys name no path: passed over, never an error
        ("a|b|x|pmtu", sure), ("a|b|4|trace", sure), ("a|b|4", sure), ("c|a|4|pmtu|x", sure),
        ("zz|a|4|pmtu", sure)]))
    paths = [rows[k] for k in sorted(rows, key=str)]
    attach(paths)
    got = dict((p.key(), p.confidence and p.confidence[4]) for p in paths)
    assert got == {("a", "b", 4): "high", ("a", "b", 6): "low", ("b", "a", 4): None,
                   (None, "c", None): "high", ("c", "a", 4): "unknown"}
    # the raw counts do not outlive the verdict
    assert all(p.jumbo_counts is None for p in paths)


def test_an_archives_counts_read_before_and_after_the_records_are_made_all_reach_them():
    rows = dict(((p.source, p.dest, p.ip_version), p) for p in (
        _record("a", "b", 4, "jumbo"), _record("b", "a", 4, "jumbo"), _record("c", "a", 6, "jumbo")))
    early, late = threading.Event(), threading.Event()

    def answers():      # an archive's partitions: the first two before the records exist
        yield "a|b|4|pmtu", (1, 4, 1, 4, 1)
        yield "b|a|4|pmtu", (2, 8, 2, 8, 2)
        early.set()
        late.wait(10)
        yield "c|a|6|pmtu", (3, 12, 3, 12, 3)

    feed = CountsFeed()
    reader = threading.Thread(target=feed.read, args=(answers(),))
    reader.start()
    assert early.wait(10)
    assert all(p.jumbo_counts is None for p in rows.values())   # held, not yet put
    feed.ready(rows)
    late.set()
    reader.join(10)
    assert not reader.is_alive()
    assert [rows[k].jumbo_counts[0] for k in sorted(rows)] == [1, 2, 3]


def test_a_report_stopped_before_its_records_ends_the_feeds_thread():
    feed = CountsFeed()
    reader = threading.Thread(target=feed.read, args=(iter([("a|b|4|pmtu", (1, 4, 1, 4, 1))]),))
    reader.start()
    feed.ready(None)
    feed.ready({})              # only the first call counts
    reader.join(10)
    assert not reader.is_alive() and feed.rows is None


def test_each_jumbo_path_says_how_sure_it_is(store_url):
    r = build(store_url)
    listed = _check(r)
    assert listed[("a", "b")]["state"] == "jumbo"      # 12 of 16 measured: jumbo, on the 12
    c = r["confidence"]
    assert (c["jumbo_paths"], c["high"], c["low"], c["unknown"]) == (3, 1, 1, 1)
    assert [(x["source"], x["dest"]) for x in c["least_sure"]] == [("c", "a"), ("a", "b")]
    text = to_text(r)
    assert ("How sure the jumbo verdicts are: 3 jumbo paths: 1 sure (odds of missing an ECMP "
            "member of up to 16 <= 0.001), 1 not sure, 1 unknown (flow counts not stored)") in text
    assert ("a -> b IPv4  low: 12 of 16 flows measured in 1 jumbo run; odds of a missed ECMP "
            "member 0.46") in text
    assert "c -> a IPv4  unknown: 8 of unknown flows measured in 2 jumbo runs" in text
    rows = {(x["section"], x["item"], x["metric"]): x["value"]
            for x in csv.DictReader(io.StringIO(to_csv(r)))}
    assert rows[("path", "a->b IPv4", "flows_asked")] == "16"
    assert rows[("path", "a->b IPv4", "flows_measured")] == "12"
    assert rows[("path", "c->a IPv4", "flows_asked")] == ""
    assert rows[("path", "c->a IPv4", "confidence")] == "unknown"
    assert rows[("confidence", "mesh", "unknown")] == "1"
    page = to_html(r)
    assert 'id="confidence"' in page and "<td>unknown</td>" in page and "<td>0.46</td>" in page


def test_the_readme_says_what_the_report_does():
    """12 of 16 flows measured at 9000 is jumbo in the report (above), and the README says so."""
    import os
    readme = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")
    with open(readme) as handle:
        text = " ".join(handle.read().split())
    assert ("12 of 16 flows measured, all at 9000, is `jumbo`, and the report counts it as "
            "jumbo") in text
    assert "`high`, `low` or `unknown` (a flow count not stored) confidence" in text


def test_a_window_counts_its_own_runs(store_url):
    """--since after b -> a's first run: two runs, 80 flows, (15/16)^80 = 0.0058: not sure."""
    r = build(store_url, since="2026-11-02T02:00:00Z")
    listed = _listed(r)
    assert (listed[("b", "a")]["jumbo_runs"], listed[("b", "a")]["flows_measured"],
            listed[("b", "a")]["confidence"]) == (2, 80, "low")


def _as_version_4(path):
    """The store as version 4 laid it out: no flows_asked column, pmtu_path_states without
    the flow sums (its copy triggers and summary trigger as version 4 made them)."""
    db = sqlite3.connect(path)
    for trigger in ("latest_rows_insert", "latest_rows_update", "results_pmtu_summary"):
        db.execute("DROP TRIGGER %s" % trigger)
    for table in ("results", "latest_rows"):
        db.execute("ALTER TABLE %s DROP COLUMN flows_asked" % table)
    db.executescript(
        "DROP TABLE pmtu_path_states; "
        "CREATE TABLE pmtu_path_states (path TEXT NOT NULL, succeeded INTEGER NOT NULL, "
        "path_mtu INTEGER NOT NULL, reverse_path_mtu INTEGER NOT NULL, blackhole INTEGER NOT NULL, "
        "unknown INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (path, succeeded, path_mtu, "
        "reverse_path_mtu, blackhole, unknown)) WITHOUT ROWID; "
        "INSERT INTO pmtu_path_states SELECT path, succeeded, path_mtu, IFNULL(reverse_path_mtu, -1), "
        "0, 0, COUNT(*) FROM results GROUP BY 1, 2, 3, 4; PRAGMA user_version = 4;")
    db.commit()
    db.close()


def test_a_version_4_store_keeps_its_rows_and_says_unknown(tmp_path):
    path = str(tmp_path / "v4.db")
    url = "sqlite:///" + path
    old = [dict(r, flows_asked=None) for r in records()]
    store_fixtures.load(url, old)
    _as_version_4(path)
    unknown = {("a", "b"): (1, None, 12, (15 / 16.0) ** 12, "unknown"),
               ("b", "a"): (3, None, 120, (15 / 16.0) ** 120, "unknown"),
               ("c", "a"): (2, None, 8, (15 / 16.0) ** 8, "unknown")}
    # read before any writer upgraded it (the report opens it read-only)
    _check(build(url), unknown)
    # a writer upgrades it to version 5: every row kept, the old ones unknown
    store = open_store(url)
    store.close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 5
    assert db.execute("SELECT COUNT(*), COUNT(flows_asked) FROM results").fetchone() == (8, 0)
    db.close()
    _check(build(url), unknown)
    # a new run of a -> b with its counts: asked known on one run of two, still unknown;
    # b -> a gets a fourth run: 160 flows measured, asked unknown on three of them
    store_fixtures.load(url, [_rec("a", "b", 5, flows=16, asked=16)])
    listed = _listed(build(url))
    assert tuple(listed[("a", "b")][k] for k in KEYS[:3]) == (2, None, 28)
    assert listed[("a", "b")]["confidence"] == "unknown"


def _agreement(url):
    queries = open_queries(url)
    try:
        return queries.agreement(Window(), 9000)
    finally:
        queries.close()


def test_partitions_cut_short_and_an_archive_refusing_buckets_give_the_same_counts(
        sqlite_url, os_url, monkeypatch):
    """The jumbo runs per path on a real OpenSearch, asked in partitions of one term that
    OpenSearch's own hashing cuts and the reader halves (p, p + P of 2P) until each holds one
    path; then with search.max_buckets at 2 (a transient setting of the test's own node),
    page by page: each time the same counts as SQLite's."""
    from jumbo.archive.opensearch import reader, search
    want = _agreement(sqlite_url)
    assert len(want) == 4           # a -> d too: one jumbo run before its 1500 one
    asked = []
    ask = search.SearchClient.search

    def counted(self, index, body, what, keep=None):
        terms = body.get("aggs", {}).get("c", {}).get("terms")
        if terms:
            asked.append((terms["include"]["partition"], terms["include"]["num_partitions"]))
        return ask(self, index, body, what, keep)
    monkeypatch.setattr(search.SearchClient, "search", counted)
    monkeypatch.setattr(search, "PARTITION", 2)
    monkeypatch.setattr(search, "PARTITION_SIZE", 1)
    assert _agreement(os_url) == want
    assert asked[:2] == [(0, 2), (1, 2)] and len(asked) > 2     # at least one cut and halved
    monkeypatch.setattr(reader, "AGREEMENT_PAGE", 2)
    monkeypatch.setattr(search, "PARTITION_SIZE", 60000)
    client = open_queries(os_url)
    try:
        status, _ = client.request("PUT", "/_cluster/settings",
                                   {"transient": {"search.max_buckets": 2}})
        assert status == 200
        try:
            assert client.agreement(Window(), 9000) == want
        finally:
            client.request("PUT", "/_cluster/settings", {"transient": {"search.max_buckets": None}})
    finally:
        client.close()
