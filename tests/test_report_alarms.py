"""jumbo-alarms on the synthetic mesh (fixtures.synth.Mesh.small, its last day today): the events
its truth implies, in the alarm service's format, raised once and not again on the same data,
on both stores; the state file and the thresholds."""

import datetime
import hashlib
import json
import time

import pytest

from fixtures import synth
from jumbo.report import alarm_state, alarms
from jumbo.report.alarms_cli import main as alarms_main, run as alarms_run
from jumbo.report.errors import ReportError
import store_fixtures

DAYS = 14
START = (datetime.datetime.utcnow() - datetime.timedelta(days=DAYS - 1)).strftime("%Y-%m-%d")
MESH = synth.Mesh.small(days=DAYS, start=START)
FIREWALL = MESH.site_ip("SITE-E", 2)
EVENTS = 3          # the firewall's hop, two regressed paths (test_events_match_the_truth_once)


sqlite_url, os_url, store_url = store_fixtures.both_stores(MESH.records, "alm")


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _run(store_url, state, out, *extra):
    assert alarms_main(["--store", store_url, "--state", str(state), "--out", str(out)] + list(extra)) == 0
    return [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []


def test_events_match_the_truth_once(store_url, tmp_path):
    state, out = tmp_path / "state.json", tmp_path / "alarms.jsonl"
    events = _run(store_url, state, out)
    kinds = sorted((e["event"], tuple(e["tags"])) for e in events)
    inbound_e = sorted(set(h.site for h in MESH.hosts if h.site not in ("SITE-B", "SITE-E")))
    # The regressed paths: capable before the regression day, not now (the report's state reads
    # both directions, so the reverse of the regressed direction regressed too); not flapping.
    regressed = sorted((a.name, b.name) for a, b in MESH.pairs()
                       if MESH.capable(a, b, MESH.regress_day - 2) and not MESH.capable(a, b)
                       and (a.name, b.name) != MESH.special["flap"]
                       and (b.name, a.name) != MESH.special["flap"])
    assert len(regressed) == 2
    assert kinds == [("MTU black hole shared by multiple sites", tuple(sorted(inbound_e + ["SITE-E"])))] + \
        [("jumbo path regressed", ("SITE-A", "SITE-F"))] * 2, kinds
    for e in events:
        assert e["category"] == "Networking" and set(e) == {"category", "subcategory", "event", "body",
                                                             "tags", "source"}
        assert len(e["source"]["alarm_id"]) == 56 and e["source"]["from"] and e["source"]["to"]
    hop = next(e for e in events if e["event"].startswith("MTU black hole"))
    truth = [(a.name, b.name) for a, b in MESH.pairs() if MESH.truth(a, b)["pmtud"] == "blackhole"
             and not MESH.truth(a, b)["partial"]]
    assert hop["subcategory"] == "Network" and hop["source"]["hop_ip"] == FIREWALL
    assert hop["source"]["num_pairs"] == len(truth) == 16 and hop["source"]["dest_sites"] == ["SITE-E"]
    # The alarm's id: its key's and its raise time's (the state keeps it by its key's id).
    key_id = hashlib.sha224(("hop,%s,ipv4" % FIREWALL).encode()).hexdigest()
    raised = json.loads(state.read_text())["active"][key_id]["raised"]
    assert hop["source"]["alarm_id"] == hashlib.sha224(("hop,%s,ipv4,%s" % (FIREWALL, raised))
                                                       .encode()).hexdigest()
    paths = [e["source"] for e in events if e["event"] == "jumbo path regressed"]
    assert sorted((p["src_host"], p["dest_host"]) for p in paths) == regressed
    for p in paths:
        assert p["from_state"] == "jumbo" and p["to_state"] == "standard"
        assert p["ipv"] == "ipv4" and p["ipv6"] is False
    # The same data again: nothing new, the state file unchanged.
    before = json.loads(state.read_text())
    assert _run(store_url, state, out) == events
    assert json.loads(state.read_text()) == before and len(before["active"]) == 3


def test_thresholds(sqlite_url, tmp_path):
    # Five sites share the firewall's black hole: at 6 no shared event, the paths stay unalarmed
    # (none of them regressed); a site with regressed paths to >= 1 other site is a site event.
    events = _run(sqlite_url, tmp_path / "s1", tmp_path / "o1", "--hop-min-sites", "6", "--min-sites", "1")
    assert sorted(e["event"] for e in events) == ["jumbo regressed from/to multiple sites"] * 2
    assert sorted(e["tags"][0] for e in events) == ["SITE-A", "SITE-F"]
    assert all(e["source"]["num_paths"] == 2 for e in events)


def test_share_events_and_their_threshold():
    collector = alarms.Collector()
    report = {"changes": [], "flapping": []}
    shares = {"SITE-A": (0.8, 0.3, "bytes"), "SITE-B": (0.8, 0.5, "bytes"), "SITE-C": (0.0, 0.0, "paths")}
    got = alarms.events(report, collector, ("a", "b"), shares=shares)
    assert [(e["event"], e["tags"], e["source"]["change"]) for _k, e in got] == [
        ("jumbo share decreased", ["SITE-A"], -62.5)]
    got = alarms.events(report, collector, ("a", "b"), shares=shares, share_drop=30)
    assert [e["tags"][0] for _k, e in got] == ["SITE-A", "SITE-B"]


def test_shares_that_are_no_number_raise_nothing():
    """Telemetry that overflowed (issue 32 row 4) made a NaN or infinite share: NaN compares
    false with everything, and every site got a "jumbo share decreased"."""
    report = {"changes": [], "flapping": []}
    nan, inf = float("nan"), float("inf")
    shares = {"SITE-A": (nan, 0.1, "bytes"), "SITE-B": (0.8, nan, "bytes"),
              "SITE-C": (inf, 0.1, "bytes"), "SITE-D": (0.8, 0.1, "bytes")}
    got = alarms.events(report, alarms.Collector(), ("a", "b"), shares=shares)
    assert [e["tags"] for _k, e in got] == [["SITE-D"]]


def test_state_file_is_checked(sqlite_url, tmp_path):
    bad = tmp_path / "state.json"
    bad.write_text("[1, 2]")
    assert alarms_main(["--store", sqlite_url, "--state", str(bad)]) == 2
    with pytest.raises(ReportError, match="not a jumbo-alarms state file"):
        alarm_state.load(str(bad))
    bad.write_text(json.dumps({"version": 2, "active": {"k": {"alarm_id": "x", "emitted": True,
                                                               "indexed": False}}}))
    with pytest.raises(ReportError, match="entry k is not a jumbo-alarms state entry"):
        alarm_state.load(str(bad))      # owed to the index, but without the event to index


def test_index_into_opensearch_once_and_again_when_it_returns(os_url, tmp_path):
    """Indexed once, under an explicit mapping the suite owns; a hop event that clears (the
    threshold raised) and comes back is a new alarm, indexed again."""
    from jumbo.archive.stores import open_store
    state, out = tmp_path / "state.json", str(tmp_path / "o")
    new = alarms_run(["--store", os_url, "--state", str(state), "--out", out, "--index"])
    assert len(new) == 3
    store = open_store(os_url)
    index = store.name("jumbo_alarms")
    try:
        status, doc = store.request("GET", "/%s/_count" % index)
        assert status == 200 and doc["count"] == 3
        status, doc = store.request("GET", "/%s/_mapping" % index)
        mapping = doc[index]["mappings"]
        assert mapping["dynamic"] == "false" and mapping["_meta"]["managed-by"] == "jumbo-alarms"
        assert mapping["properties"]["source"]["properties"]["alarm_id"] == {"type": "keyword"}
        status, doc = store.request("GET", "/_index_template/%s" % index)
        assert doc["index_templates"][0]["index_template"]["index_patterns"] == [index + "*"]
        hop = next(e for e in new if e["event"].startswith("MTU black hole"))
        # the hop event clears: the others hold
        cleared = alarms_run(["--store", os_url, "--state", str(state), "--out", out, "--index",
                              "--hop-min-sites", "99"])
        assert cleared == []
        time.sleep(1.1)                          # a raise time of its own
        back = alarms_run(["--store", os_url, "--state", str(state), "--out", out, "--index"])
        assert [e["event"] for e in back] == [hop["event"]]
        assert back[0]["source"]["alarm_id"] != hop["source"]["alarm_id"]
        status, doc = store.request("GET", "/%s/_count" % index)
        assert doc["count"] == 4
    finally:
        store.request("DELETE", "/" + index)
        store.request("DELETE", "/_index_template/%s" % index)
        store.close()


def test_a_failed_index_then_a_good_run_each_event_once(os_url, tmp_path, capfd):
    """Issue 32 row 7: the index refuses (a real OpenSearch's write block, HTTP 403), then
    accepts: each line written once, each document stored once."""
    from jumbo.archive.stores import open_store
    state, out = tmp_path / "state.json", tmp_path / "alarms.jsonl"
    store = open_store(os_url)
    index = store.name("jumbo_alarms")
    argv = ["--store", os_url, "--state", str(state), "--out", str(out), "--index"]
    try:
        # The index exists and refuses writes (a real OpenSearch's write block): HTTP 403.
        store.request("DELETE", "/" + index)
        status, _ = store.request("PUT", "/" + index, {"settings": {"index.blocks.write": True}})
        assert status == 200
        assert alarms_main(argv) == 3
        err = capfd.readouterr().err
        assert "0 of %d event(s) indexed" % EVENTS in err and "next run" in err, err
        assert len(lines(out)) == EVENTS
        owed = alarm_state.load(str(state))
        assert sorted(e["emitted"] for e in owed.values()) == [True] * EVENTS
        assert sorted(e["indexed"] for e in owed.values()) == [False] * EVENTS

        status, _ = store.request("PUT", "/%s/_settings" % index, {"index.blocks.write": False})
        assert status == 200
        assert alarms_main(argv) == 0
        assert len(lines(out)) == EVENTS                       # no line written again
        status, doc = store.request("GET", "/%s/_count" % index)
        assert doc["count"] == EVENTS
        ids = sorted(e["source"]["alarm_id"] for e in lines(out))
        status, doc = store.request("GET", "/%s/_search?size=10" % index)
        assert sorted(h["_id"] for h in doc["hits"]["hits"]) == ids
        done = alarm_state.load(str(state))
        assert all(e["indexed"] is True and "event" not in e for e in done.values())
        assert alarms_main(argv) == 0                          # and nothing more after
        status, doc = store.request("GET", "/%s/_count" % index)
        assert doc["count"] == EVENTS and len(lines(out)) == EVENTS
    finally:
        store.request("DELETE", "/" + index)
        store.request("DELETE", "/_index_template/%s" % index)
        store.close()
