"""Archive stores against the real SQLite and a real OpenSearch 2.18 (scripts/opensearch.sh)."""

import base64
import json
import multiprocessing
import os
import subprocess
import sys
import uuid

import pytest

from jumbo.archive import record as records
from fixtures import samples
from jumbo.archive import PermanentError
from jumbo.archive.stores import open_store
from jumbo.archive import replay as replay_mod
from jumbo.archive.sqlite import store as sqlite_store
from jumbo.archive.opensearch.store import LATEST_LOCATE_FIELDS, LATEST_ROW_FIELDS
from opensearch_fixture import drop_prefix

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# -- the adoption record -----------------------------------------------------------------------

def test_record_from_pmtu_blackhole():
    env = samples.pmtu_envelope(3, path_mtu=1500, pmtud="blackhole",
                                blackhole={"ttl": 2, "ip": "198.18.2.1", "size": 9000})
    env["result"]["result"]["flows"][1].update({"path-mtu": 9000, "pmtud": "not-needed"})
    rec, raw = records.normalize(env)
    assert set(rec) == set(records.FIELDS)
    assert rec["test_type"] == "pmtu" and rec["path_mtu"] == 1500 and rec["jumbo"] is False
    assert (rec["blackhole_ttl"], rec["blackhole_ip"], rec["blackhole_size"]) == (2, "198.18.2.1", 9000)
    assert rec["partial"] is True and rec["flows"] == 2
    assert rec["source_site"] == "SITE-A" and rec["dest_site"] == "SITE-B"
    assert rec["start"] == "2026-05-20T10:03:00Z"
    assert rec["hops"][0] == {"ttl": 1, "ip": "198.18.1.1", "mtu": 9000}
    assert raw is env["result"]
    # a flow that could not be measured is no evidence of a per-flow black hole
    env["result"]["result"]["flows"][1].update({"path-mtu": None, "pmtud": "unknown"})
    assert records.normalize(env)[0]["partial"] is False
    # same run, bare result object (http-archiver shape) -> same id
    assert records.normalize(env["result"])[0]["id"] == rec["id"]


def test_ipv6_run_without_source_never_takes_the_lead_ipv4_address():
    """Found on a real pScheduler: a v6 run with no `source` in the spec was archived with
    source_ip = the lead participant's IPv4 address."""
    spec = {"schema": 1, "dest": "fd00:201::2"}
    env = samples.envelope("pmtu", samples.pmtu_result(dest_ip="fd00:201::2", ip_version=6),
                           spec, lead="198.18.200.1")
    rec = records.normalize(env)[0]
    assert rec["ip_version"] == 6 and rec["dest_ip"] == "fd00:201::2"
    assert rec["source"] == "198.18.200.1" and rec["source_ip"] is None
    # the result's own source address, when a tool gives one, is taken
    env["result"]["result"]["source-ip"] = "fd00:200::1"
    assert records.normalize(env)[0]["source_ip"] == "fd00:200::1"
    # an IPv4 run from the same lead keeps the lead's address
    v4 = samples.envelope("pmtu", samples.pmtu_result(), {"schema": 1, "dest": "198.18.201.2"},
                          lead="198.18.200.1")
    assert records.normalize(v4)[0]["source_ip"] == "198.18.200.1"


def test_record_from_other_tests():
    trace = records.normalize(samples.trace_envelope(mtus=(9000, 9000, 1500)))[0]
    assert (trace["test_type"], trace["path_mtu"], trace["pmtud"], trace["jumbo"]) == (
        "trace", 1500, "unknown", False)
    tput = records.normalize(samples.throughput_envelope(bits=9.1e9, mss=8948))[0]
    assert tput["throughput_jumbo"] == 9.1e9 and tput["throughput_standard"] is None
    std = records.normalize(samples.throughput_envelope(bits=4e9, mss=1448))[0]
    assert std["throughput_standard"] == 4e9
    lat = records.normalize(samples.latency_envelope(sent=600, lost=6))[0]
    assert lat["test_type"] == "latency" and lat["loss"] == pytest.approx(0.01)
    assert lat["rtt"] == pytest.approx(0.010)  # 2 x median one-way (5.00 ms)


def test_record_rejects_bad_input():
    env = samples.pmtu_envelope(0)
    env["result"]["test"]["type"] = "dns"
    with pytest.raises(records.UnknownTestType):
        records.normalize(env)
    with pytest.raises(records.BadRecord):
        records.normalize({"hello": 1})
    env = samples.pmtu_envelope(0)
    env["result"]["schedule"]["start"] = "yesterday"
    env["result"]["run"]["start-time"] = None
    with pytest.raises(records.BadRecord):
        records.normalize(env)


# -- SQLite ------------------------------------------------------------------------------------

def test_sqlite_idempotent_and_latest(tmp_path):
    store = open_store("sqlite:///%s" % (tmp_path / "j.db"))
    newer = samples.pmtu_envelope(0, dest="ps-x", minutes=60, path_mtu=9000)
    older = samples.pmtu_envelope(0, dest="ps-x", minutes=10, path_mtu=1500)
    assert store.put_many([newer, newer]) == [None, None]
    assert store.put_many([newer]) == [None]
    assert store.count() == 1
    # a late retry of an older run is stored in history but never becomes "latest"
    assert store.put_many([older]) == [None]
    assert store.count() == 2
    latest = store.latest("pmtu")
    assert len(latest) == 1 and latest[0]["path_mtu"] == 9000
    assert latest[0]["start"] == "2026-05-20T11:00:00Z"
    assert latest[0]["jumbo"] is True and isinstance(latest[0]["hops"], list)
    outcomes = store.put_many([{"nope": 1}, samples.trace_envelope()])
    assert isinstance(outcomes[0], PermanentError) and outcomes[1] is None
    rows = subprocess.run(["sqlite3", str(tmp_path / "j.db"),
                           "PRAGMA journal_mode; SELECT name FROM sqlite_master WHERE type='index'"],
                          stdout=subprocess.PIPE, universal_newlines=True).stdout
    assert rows.startswith("wal") and "results_path_start" in rows and "results_day" in rows
    # latest_rows, the copy the report reads, follows `latest` (a newer run replaces the row,
    # the late retry above did not); same-start runs: the larger id wins, as in `latest`
    newest = samples.pmtu_envelope(0, dest="ps-x", minutes=90, path_mtu=8950)
    assert store.put_many([newest, samples.pmtu_envelope(5, dest="ps-x", minutes=90)]) == [None] * 2
    columns = ", ".join(sqlite_store.LATEST_ROW_COLUMNS)
    view = sorted(store.conn.execute("SELECT %s FROM latest_results" % columns))
    copy = sorted(store.conn.execute("SELECT %s FROM latest_rows" % columns))
    assert copy == view and len(copy) == 2            # the pmtu path and the trace path
    start = sqlite_store.LATEST_ROW_COLUMNS.index("start")
    assert sorted(r[start] for r in copy)[-1] == "2026-05-20T11:30:00Z"
    assert store.latest("pmtu")[0]["start"] == "2026-05-20T11:30:00Z"
    store.close()


def _writer(path, offset, count):
    store = open_store("sqlite:///" + path)
    for start in range(0, count, 50):
        batch = [samples.pmtu_envelope(offset + i, dest="ps-%d" % (offset + i))
                 for i in range(start, min(count, start + 50))]
        assert store.put_many(batch) == [None] * len(batch)
    store.close()


def test_sqlite_concurrent_writers(tmp_path):
    path = str(tmp_path / "c.db")
    procs = [multiprocessing.Process(target=_writer, args=(path, k * 1000, 400)) for k in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    store = open_store("sqlite:///" + path)
    assert store.count() == 1200 and len(store.latest()) == 1200


# -- OpenSearch --------------------------------------------------------------------------------

@pytest.fixture
def os_store(opensearch_url):
    prefix = "t%s_" % uuid.uuid4().hex[:8]
    store = open_store("%s/?prefix=%s" % (opensearch_url, prefix))
    yield store
    drop_prefix(store, prefix)


def test_opensearch_idempotent_layout_and_mapping(os_store):
    env = samples.pmtu_envelope(1, dest="ps-y")
    assert os_store.put_many([env, env]) == [None, None]
    assert os_store.put_many([env]) == [None]          # a retry: 409 counts as stored
    assert os_store.count("pmtu") == 1
    hits = os_store.search("pscheduler_pmtu", {"query": {"match_all": {}}})["hits"]["hits"]
    doc = hits[0]["_source"]
    assert hits[0]["_index"].startswith(".ds-%spscheduler_pmtu-" % os_store.prefix)
    rec = records.normalize(env)[0]
    assert hits[0]["_id"] == rec["id"]
    # perfSONAR's Logstash layout, nothing of ours in it: the result verbatim, times as
    # pScheduler gave them, durations in seconds
    assert set(doc) == {"@timestamp", "@version", "id", "test", "schedule", "result",
                        "reference", "pscheduler", "meta"}
    assert doc["result"] == env["result"]["result"] and "mtu" not in doc["result"]
    assert doc["@timestamp"] == rec["start"]
    assert doc["pscheduler"]["start_time"] == env["result"]["run"]["start-time"]
    assert doc["pscheduler"]["run_id"] == env["result"]["id"]
    assert doc["schedule"] == {"repeat": 21600.0, "slip": 10800.0}
    # the stream's mapping: the pmtu result typed by our template, the rest dynamic as in
    # perfSONAR's streams (text + .keyword, which perfSONAR's dashboards group on)
    status, mapping = os_store.request("GET", "/%spscheduler_pmtu/_mapping" % os_store.prefix)
    props = list(mapping.values())[0]["mappings"]["properties"]
    result = props["result"]["properties"]
    assert result["path-mtu"]["type"] == "integer" and result["pmtud"]["type"] == "keyword"
    assert props["pscheduler"]["properties"]["tool"]["fields"]["keyword"]["type"] == "keyword"
    assert "jumbo" not in props
    # the adoption record: jumbo_history, every field typed by our own template
    status, mapping = os_store.request("GET", "/%sjumbo_history/_mapping" % os_store.prefix)
    props = list(mapping.values())[0]["mappings"]["properties"]
    jumbo = props["jumbo"]["properties"]
    assert props["jumbo"]["dynamic"] in (False, "false")
    assert jumbo["path_mtu"]["type"] == "integer" and jumbo["source"]["type"] == "keyword"
    assert jumbo["start"]["type"] == "date" and jumbo["jumbo"]["type"] == "boolean"
    assert set(records.FIELDS) <= set(jumbo)
    history = os_store.search("jumbo_history", {"query": {"match_all": {}}})["hits"]["hits"]
    assert [h["_id"] for h in history] == [rec["id"]]
    assert history[0]["_source"]["jumbo"]["path_mtu"] == 9000
    # the latest index: the record, and its row (the report's fields, one doc value)
    os_store.refresh()
    latest = os_store.search("jumbo_latest", {"query": {"match_all": {}}, "_source": False,
                                              "docvalue_fields": ["row_v1", "locate_v1"]})
    latest = latest["hits"]["hits"]
    assert len(latest) == 1 and latest[0]["_id"] == records.path_key(rec)
    for field, names in (("row_v1", LATEST_ROW_FIELDS), ("locate_v1", LATEST_LOCATE_FIELDS)):
        packed = latest[0]["fields"][field][0]      # base64 without its padding
        values = json.loads(base64.b64decode(packed + "=" * (-len(packed) % 4)))
        assert dict(zip(names, values)) == {name: rec.get(name) for name in names}
    assert rec["source"] == "ps-a.example.org" and rec["path_mtu"] == 9000 and rec["hops"]


def test_opensearch_latest_never_overwritten_by_late_retry(os_store):
    newer = samples.pmtu_envelope(0, dest="ps-z", minutes=120, path_mtu=9000)
    older = samples.pmtu_envelope(0, dest="ps-z", minutes=5, path_mtu=1400)
    assert os_store.put_many([newer]) == [None]
    assert os_store.put_many([older]) == [None]       # 409 from the latest index = fine
    os_store.refresh()
    latest = os_store.latest("pmtu")
    assert len(latest) == 1 and latest[0]["path_mtu"] == 9000
    assert os_store.count("pmtu") == 2                 # history keeps both runs


def test_opensearch_other_types_only_as_adoption_records(os_store):
    items = [samples.trace_envelope(), samples.throughput_envelope(), samples.latency_envelope()]
    assert os_store.put_many(items) == [None, None, None]
    assert os_store.count("trace") == 1 and os_store.count("latencybg") == 1
    # nothing of theirs in perfSONAR's streams, and no template of ours matches them
    for ptype in ("trace", "throughput", "latencybg", "latency", "rtt"):
        stream = "%spscheduler_%s" % (os_store.prefix, ptype)
        assert os_store.request("GET", "/_data_stream/" + stream)[0] == 404
        status, answer = os_store.request("POST", "/_index_template/_simulate_index/" + stream)
        assert status == 200 and not answer.get("template", {}).get("mappings"), answer


def test_opensearch_pair_test_has_its_own_typed_stream(os_store):
    assert os_store.put_many([samples.pair_envelope(gain=1.7)]) == [None]
    assert os_store.count("jumbo-throughput") == 1
    status, mapping = os_store.request("GET", "/%spscheduler_jumbo-throughput/_mapping"
                                       % os_store.prefix)
    assert status == 200 and '"gain": {"type": "double"}' in json.dumps(mapping), mapping


def test_opensearch_mapping_rejection_named_and_counted(os_store):
    bad = samples.pmtu_envelope(2, dest="ps-w")
    bad["result"]["result"]["path-mtu"] = "nine thousand"     # the template says integer
    good = samples.pmtu_envelope(3, dest="ps-v")
    outcomes = os_store.put_many([bad, good])
    assert outcomes[1] is None
    error = outcomes[0]
    assert isinstance(error, PermanentError) and not error.transient
    assert error.field == "result.path-mtu"
    assert bad["result"]["id"] in str(error) and "result.path-mtu" in str(error)
    assert "mapper_parsing_exception" in str(error)
    count, recent = os_store.rejected()
    assert count == 1 and recent[0]["run_id"] == bad["result"]["id"]
    assert recent[0]["field"] == "result.path-mtu"
    assert os_store.rejections == 1
    # the adoption record itself was stored (the history), so the path's latest moved on
    os_store.refresh()
    assert {r["dest"] for r in os_store.latest("pmtu")} == {"ps-w", "ps-v"}
    # a second delivery is refused the same way and counted once per run
    assert isinstance(os_store.put_many([bad])[0], PermanentError)
    assert os_store.rejected()[0] == 1


def test_opensearch_latest_failure_never_fails_a_stored_run(os_store):
    assert os_store.put_many([samples.pmtu_envelope(0, dest="ps-l", minutes=1)]) == [None]
    # A real refusal: the latest index blocked for writes (OpenSearch answers each bulk
    # item 403 cluster_block_exception).
    latest = os_store.name("jumbo_latest")
    assert os_store.request("PUT", "/%s/_settings" % latest,
                            {"index.blocks.write": True})[0] == 200
    try:
        env = samples.pmtu_envelope(0, dest="ps-l", minutes=60, path_mtu=1500)
        assert os_store.put_many([env]) == [None]
        assert os_store.latest_failures == 1
        assert os_store.count("pmtu") == 2
        assert [r["path_mtu"] for r in os_store.latest("pmtu")] == [9000]   # not updated
    finally:
        os_store.request("PUT", "/%s/_settings" % latest, {"index.blocks.write": False})


def test_replay_file_and_migration(os_store, tmp_path):
    envs = [samples.pmtu_envelope(i, dest="ps-%d" % i) for i in range(20)]
    envs.append(samples.trace_envelope())
    src = tmp_path / "results.jsonl"
    src.write_text("".join("\x1e" + json.dumps(e) + "\n" for e in envs) + "{\"junk\": 1}\n")
    db = "sqlite:///%s" % (tmp_path / "r.db")
    # file -> SQLite, twice: stored once
    assert replay_mod.main([str(src), "--to", db]) == 1        # the junk line is rejected
    assert replay_mod.main([str(src), "--to", db, "--batch", "7"]) == 1
    assert open_store(db).count() == 21
    # SQLite -> OpenSearch (migration), twice
    target = "%s/?prefix=%s" % (os_store.url, os_store.prefix)
    assert replay_mod.main([db, "--to", target]) == 0
    assert replay_mod.main([db, "--to", target]) == 0
    assert os_store.count("pmtu") == 20 and os_store.count("trace") == 1
    # OpenSearch -> another SQLite: the same records come back
    db2 = "sqlite:///%s" % (tmp_path / "r2.db")
    assert replay_mod.main([target, "--to", db2]) == 0
    a = {r["id"]: r for r in open_store(db).latest()}
    b = {r["id"]: r for r in open_store(db2).latest()}
    assert a == b
    # the installed command
    exe = os.path.join(os.path.dirname(sys.executable), "jumbo-replay")
    if os.path.exists(exe):
        out = subprocess.run([exe, str(src), "--to", db], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, universal_newlines=True)
        assert out.returncode == 1 and "20" not in out.stderr and "21 stored" in out.stdout


def test_opensearch_adoption_records_only_when_logstash_stores_the_runs(opensearch_url):
    """`pscheduler-streams: false`: perfSONAR's http archiver already sends the pmtu runs
    through Logstash, so this store writes only its own jumbo_* indices (no second copy)."""
    prefix = "n%s_" % uuid.uuid4().hex[:8]
    store = open_store("%s/?prefix=%s" % (opensearch_url, prefix), pscheduler_streams=False)
    try:
        assert store.put_many([samples.pmtu_envelope(0, dest="ps-once")]) == [None]
        store.refresh()
        # the set-up made the stream (typed for Logstash's pmtu documents); nothing of ours in it
        assert store.count("pmtu") == 0
        assert store.count("pmtu", index=store.name("jumbo_history")) == 1
        assert [r["dest"] for r in store.latest("pmtu")] == ["ps-once"]
    finally:
        drop_prefix(store, prefix)


def test_opensearch_install_copies_records_of_the_earlier_layout(opensearch_url):
    """Earlier versions kept the adoption record as `jumbo.*` inside pscheduler_<type>
    documents (perfSONAR's streams too) and installed `jumbo_pscheduler_other` over them.
    `setup install` removes that template and copies the records into jumbo_history, once,
    reading but not changing the old documents."""
    from jumbo.archive.opensearch import setup
    from perfsonar_shapes import logstash_document, perfsonar_template
    prefix = "m%s_" % uuid.uuid4().hex[:8]
    store = open_store("%s/?prefix=%s" % (opensearch_url, prefix))
    try:
        assert store.request("PUT", "/_index_template/%spscheduler_default_policy" % prefix,
                             perfsonar_template(prefix))[0] == 200
        old = dict(perfsonar_template(prefix), priority=10,
                   index_patterns=[prefix + "pscheduler_trace"], _meta={
                       "managed-by": "jumbo archiver"})
        assert store.request("PUT", "/_index_template/%sjumbo_pscheduler_other" % prefix,
                             old)[0] == 200
        trace = records.normalize(samples.trace_envelope())[0]
        doc = dict(logstash_document("trace", 1), jumbo=dict(trace, path=records.path_key(trace)))
        status, answer = store.request("PUT", "/%spscheduler_trace/_create/%s?refresh=true"
                                       % (prefix, trace["id"]), doc)
        assert status == 201, answer
        before = store.search("pscheduler_trace", {"query": {"match_all": {}}})["hits"]["hits"]
        done = setup.install(store)
        assert "removed legacy template %sjumbo_pscheduler_other" % prefix in " ".join(done)
        assert any("copied 1 adoption record" in line for line in done), done
        assert not any("copied" in line for line in setup.install(store))   # once
        store.refresh()
        assert store.count("trace") == 1
        hit = store.search("jumbo_history", {"query": {"match_all": {}}})["hits"]["hits"][0]
        assert hit["_id"] == trace["id"] and hit["_source"]["jumbo"]["path_mtu"] == 1500
        assert store.search("pscheduler_trace", {"query": {"match_all": {}}})["hits"]["hits"] \
            == before
        assert store.request("GET", "/_index_template/%sjumbo_pscheduler_other" % prefix)[0] \
            == 404
    finally:
        for name in ("pscheduler_default_policy", "jumbo_pscheduler_other"):
            store.request("DELETE", "/_data_stream/%s*" % prefix)
            store.request("DELETE", "/_index_template/%s%s" % (prefix, name))
        drop_prefix(store, prefix)
