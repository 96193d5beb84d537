"""Evidence across runs (jumbo.archive.evidence) and the `unknown` state, in the report over
both real stores.

A store holds 24 hourly runs of a few paths, each run probing 4 flows:
  HELD     a partial black hole (1 of 4 flows) seen in runs 3, 11 and 19, every other run
           all flows crossing: 20 clean flows after the last sighting, 25 needed
           ((3/4)^25 < 0.001 <= (3/4)^24): a black hole seen in 3 of 24 runs, not jumbo,
           not flapping, though its latest run is clean and it changed state 6 times
  BORDER   seen once, in run 18: 24 clean flows after it, one short
  CLEARS   seen once, in run 1, then 23 clean runs (92 flows): jumbo
  UNDECIDED  the latest run carried 9000 on the flows it measured, pmtud unknown
  CLEAN    every run clean
"""

import itertools
import random
import sqlite3


from jumbo.archive import path_state
from jumbo.archive.stores import open_store
from jumbo.report import build_report as build
from jumbo.report.render import to_csv, to_text
import store_fixtures

TARGET = 9000
HOP = {"blackhole_ttl": 3, "blackhole_ip": "198.18.0.9", "blackhole_size": 9000}


def _run(source, n, **fields):
    rec = {"id": "%s-%02d" % (source, n), "test_type": "pmtu", "source": source,
           "dest": "dst.example", "ip_version": 4, "start": "2026-11-01T%02d:00:00Z" % (n - 1),
           "succeeded": True, "path_mtu": 9000, "local_mtu": 9000, "target_mtu": 9000,
           "pmtud": "not-needed", "partial": False, "flows": 4, "blackhole_flows": 0,
           "source_site": "A", "dest_site": "B"}
    rec.update(fields)
    return rec


def _sighting(source, n):
    return _run(source, n, partial=True, blackhole_flows=1, path_mtu=9000, pmtud="ok", **HOP)


def records():
    out = []
    for n in range(1, 25):
        out.append(_sighting("held", n) if n in (3, 11, 19) else _run("held", n))
        out.append(_sighting("border", n) if n == 18 else _run("border", n))
        out.append(_sighting("clears", n) if n == 1 else _run("clears", n))
        out.append(_run("undecided", n, pmtud="unknown" if n == 24 else "not-needed"))
        out.append(_run("clean", n))
    return out


sqlite_url, os_url, store_url = store_fixtures.both_stores(records, "evid")


def _holes(report):
    return {b["source"]: b for b in report["blackholes"]}


def test_the_rule_counts_flows():
    from jumbo.archive import evidence
    assert evidence.needed_flows(0.25) == 25        # 0.75^24 = 0.0010, 0.75^25 = 0.00075
    assert 0.75 ** 24 >= evidence.CONFIDENCE > 0.75 ** 25
    assert evidence.needed_flows(1.0) == 1 and evidence.needed_flows(0.5) == 10
    assert evidence.run_share(4, 1) == 0.25 and evidence.run_share(8, None) == 0.125
    assert evidence.run_share(None, None) == 1.0 / evidence.MAX_FLOWS


def test_clean_is_the_forward_half_of_the_rule():
    from jumbo.archive import evidence
    grid = [dict(zip(("succeeded", "path_mtu", "pmtud", "partial"), values)) for values in
            itertools.product((True, False), (None, 1500, 9000),
                              (None, "ok", "not-needed", "blackhole", "unknown"), (False, True))]
    want = [path_state.state_of(r, TARGET) == "jumbo" for r in grid]
    assert [evidence.is_clean(r, TARGET) for r in grid] == want
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE r (succeeded, path_mtu, pmtud, partial)")
    db.executemany("INSERT INTO r VALUES (?, ?, ?, ?)",
                   [(r["succeeded"], r["path_mtu"], r["pmtud"], r["partial"]) for r in grid])
    got = [bool(row[0]) for row in db.execute(
        "SELECT %s FROM r ORDER BY rowid" % evidence.sql_clean(TARGET))]
    assert got == want


def test_a_hole_seen_in_3_of_24_runs_is_a_black_hole(store_url):
    r = build(store_url, flap=3)
    holes = _holes(r)
    held = holes["held"]
    assert (held["seen"], held["runs"], held["failed_share"]) == (3, 24, 0.25)
    assert (held["clean_flows"], held["needed_flows"]) == (20, 25)
    assert held["partial"] is True and held["measured"] == "2026-11-01T23:00:00Z"
    assert (held["hop_ttl"], held["hop_ip"], held["size"]) == (3, "198.18.0.9", 9000)
    assert (held["first_seen"], held["last_seen"]) == ("2026-11-01T02:00:00Z", "2026-11-01T18:00:00Z")
    border = holes["border"]
    assert (border["seen"], border["runs"], border["clean_flows"]) == (1, 24, 24)
    assert set(holes) == {"held", "border"}
    # neither counts as capable; the cleared path does; the undecided one is its own count
    assert r["capable_paths"] == 2 and r["paths"] == 5 and r["unknown_paths"] == 1
    # the lucky runs between sightings are no changes and do not make the path flap (the
    # store saw 6 changes; the onset, at the first sighting, is kept)
    assert [f["source"] for f in r["flapping"]] == []
    assert [(c["start"], c["from"], c["to"]) for c in r["changes"] if c["source"] == "held"] \
        == [("2026-11-01T02:00:00Z", "jumbo", "blackhole")]
    text = to_text(r)
    assert "seen in 3 of 24 runs, 25.0% of flows failed (20 of 25 clean flows" in text
    assert "  undecided    20.0%  of 5 directed paths" in text
    rows = list(to_csv(r).splitlines())
    assert "blackhole,held->dst.example,seen,3" in rows
    assert "summary,mesh,unknown_paths,1" in rows


def test_a_window_counts_its_own_runs(store_url):
    r = build(store_url, since="2026-11-01T11:00:00Z")
    holes = _holes(r)
    assert (holes["held"]["seen"], holes["held"]["runs"]) == (1, 13)
    assert (holes["border"]["seen"], holes["border"]["runs"]) == (1, 13)
    assert r["capable_paths"] == 2


def test_the_trend_counts_unknown_results(store_url):
    r = build(store_url)
    buckets = r["trend"]["buckets"]
    assert [(b["results"], b["unknown"], b["capable"], b["blackholes"]) for b in buckets] \
        == [(120, 1, 114, 5)]


def test_sqlite_evidence_is_the_same_whatever_the_order_of_arrival(tmp_path):
    """The triggers keep the evidence tables as a fill from the history gives them, also when
    results arrive out of order (a late sighting, clean runs before it)."""
    recs = records()
    random.Random(5).shuffle(recs)
    tables = []
    for name, batches in (("ordered", [records()]), ("shuffled", [recs[i:i + 7] for i in range(0, len(recs), 7)])):
        url = "sqlite:///%s" % (tmp_path / ("%s.db" % name))
        for batch in batches:
            store_fixtures.load(url, batch)
        db = sqlite3.connect(str(tmp_path / ("%s.db" % name)))
        tables.append([sorted(db.execute("SELECT * FROM %s" % t)) for t in
                       ("pmtu_evidence", "pmtu_evidence_clean")])
        if name == "shuffled":
            db.executescript("DELETE FROM pmtu_evidence; DELETE FROM pmtu_evidence_clean; "
                             "PRAGMA user_version = 3;")
            db.close()
            open_store(url).close()     # the upgrade fills them from the history
            db = sqlite3.connect(str(tmp_path / ("%s.db" % name)))
            tables.append([sorted(db.execute("SELECT * FROM %s" % t)) for t in
                           ("pmtu_evidence", "pmtu_evidence_clean")])
        db.close()
    assert tables[0] == tables[1] == tables[2]
    seen = {row[0].split("|")[0]: row[1:] for row in tables[0][0]}
    assert seen["held"] == (3, "2026-11-01T02:00:00Z", "2026-11-01T18:00:00Z", 0.25, 3,
                            "198.18.0.9", 9000)
    assert dict(((p.split("|")[0], mtu), n) for p, mtu, n in tables[0][1]) == {
        ("held", 9000): 20, ("border", 9000): 24, ("clears", 9000): 92}
