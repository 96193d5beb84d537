"""jumbo-report and jumbo-alarms read perfSONAR's own streams: an archive fed only by the stock
`http` archiver (through Logstash, into pscheduler_pmtu / pscheduler_jumbo-throughput) gives the
same report as one fed by the jumbo archiver, and a run stored by both routes counts once.

On the real OpenSearch (OPENSEARCH_PORT), one synthetic mesh of known truth, four archives
(each its own index prefix):
  jumbo     the jumbo archiver's store only (jumbo_* and its own stream documents)
  streams   only what Logstash stores (tests/logstash_standin.py), under perfSONAR's own
            template, with one run posted twice (Logstash's retries are not idempotent)
  both      the jumbo archiver and Logstash for every run
  mixed     half the runs by each route, a quarter by both
"""

import json
import uuid

import pytest

from fixtures import samples
from jumbo.archive.opensearch import streams
from jumbo.archive.queries import open_queries
from jumbo.archive.stores import open_store
from jumbo.report import alarms_cli, cli
from logstash_standin import post as logstash_post
from opensearch_fixture import drop_prefix
from perfsonar_shapes import PERFSONAR_TEMPLATE_NAME, perfsonar_template

HOSTS = {"ps-a.example.org": ("SITE-A", "198.18.10.1", "fd00:10::1"),
         "ps-b.example.org": ("SITE-B", "198.18.11.1", "fd00:11::1"),
         "ps-c.example.org": ("SITE-C", "198.18.12.1", "fd00:12::1"),
         "ps-d.example.org": ("SITE-D", "198.18.13.1", "fd00:13::1")}
A, B, C, D = sorted(HOSTS)
DAYS = 3
HOLE = {"ttl": 2, "ip": "198.18.2.1", "size": 9000}
WINDOW = ["--since", "2026-05-19", "--until", "2026-05-23"]


def truth(src, dst, family, day):
    """What the pmtu run of this path, family and day found: (path MTU, pmtud, black hole,
    succeeded)."""
    if {src, dst} == {A, C}:
        return 1500, "ok", None, True          # a 1500 link both ways
    if (src, dst) in ((B, D), (C, D)):
        return 1500, "blackhole", HOLE, True    # PTBs dropped at hop 2 (one hop, two paths)
    if (src, dst, family) == (A, D, 6):
        return 1500, "ok", None, True           # only IPv6 is 1500 (the family is the path's)
    if (src, dst, day) == (D, B, 1):
        return None, "unknown", None, False     # a failed run: undecided, never success
    return 9000, "ok", None, True


def _pmtu(src, dst, family, day, minute):
    path_mtu, pmtud, hole, ok = truth(src, dst, family, day)
    dest_ip = HOSTS[dst][1 if family == 4 else 2]
    result = samples.pmtu_result(path_mtu=path_mtu, pmtud=pmtud, blackhole=hole, succeeded=ok,
                                 dest_ip=dest_ip, ip_version=family)
    spec = {"schema": 1, "source": src, "dest": dst, "ip-version": family, "target-mtu": 9000}
    return samples.envelope("pmtu", result, spec, lead=src, minutes=day * 1440 + minute,
                            reference={"display-task-name": "Path MTU IPv%d" % family,
                                       "source-site": HOSTS[src][0], "dest-site": HOSTS[dst][0]})


def mesh():
    """Every directed pair, both families, once a day; paired-throughput gains on two pairs."""
    out = []
    minute = 0
    for day in range(DAYS):
        for src in HOSTS:
            for dst in HOSTS:
                if src == dst:
                    continue
                for family in (4, 6):
                    minute += 1
                    out.append(_pmtu(src, dst, family, day, minute))
        for (src, dst), gain in (((A, B), 2.25), ((C, D), 1.1)):
            minute += 1
            out.append(samples.pair_envelope(src, dst, minutes=day * 1440 + minute, gain=gain,
                                             reference={"source-site": HOSTS[src][0],
                                                        "dest-site": HOSTS[dst][0]}))
    return out


RUNS = mesh()
PMTU_RUNS = [e for e in RUNS if e["result"]["test"]["type"] == "pmtu"]


def _jumbo(url, envelopes):
    store = open_store(url)
    try:
        assert not [o for o in store.put_many(envelopes) if o]
        store.refresh()
    finally:
        store.close()


def _perfsonar_archive(store, prefix):
    """perfSONAR's own template, as its archive installs it (under the test's prefix)."""
    status, _ = store.request("PUT", "/_index_template/" + prefix + PERFSONAR_TEMPLATE_NAME,
                              perfsonar_template(prefix))
    assert status == 200


@pytest.fixture(scope="module")
def archives(opensearch_url):
    urls = {}
    prefixes = []
    half = len(RUNS) // 2
    quarter = len(RUNS) // 4
    routes = {"jumbo": (RUNS, []),
              "streams": ([], RUNS + [PMTU_RUNS[5]]),          # one run posted twice
              "both": (RUNS, RUNS),
              "mixed": (RUNS[:half], RUNS[quarter:])}
    for name, (by_jumbo, by_logstash) in routes.items():
        prefix = "str%s%s_" % (name[:3], uuid.uuid4().hex[:6])
        prefixes.append(prefix)
        url = "%s/?prefix=%s" % (opensearch_url, prefix)
        store = open_store(url)
        try:
            _perfsonar_archive(store, prefix)
            if by_jumbo:
                _jumbo(url, by_jumbo)
            if by_logstash:
                logstash_post(store, prefix, by_logstash)
        finally:
            store.close()
        urls[name] = url
    yield urls
    for prefix in prefixes:
        store = open_store("%s/?prefix=%s" % (opensearch_url, prefix))
        store.request("DELETE", "/_index_template/" + prefix + PERFSONAR_TEMPLATE_NAME)
        drop_prefix(store, prefix)


def _report(url):
    report, text, _out = cli.run(["--store", url, "--format", "json"] + WINDOW)
    doc = json.loads(text)
    doc.pop("generated")
    return doc


def test_plan_per_archive(archives):
    plans = {}
    for name, url in archives.items():
        queries = open_queries(url)
        try:
            reader = queries._os if hasattr(queries, "_os") else queries
            plans[name] = streams.plan(reader)
        finally:
            queries.close()
    assert plans == {"jumbo": "jumbo", "streams": "streams", "both": "jumbo", "mixed": "union"}


def test_the_reports_are_equal(archives):
    reports = {name: _report(url) for name, url in archives.items()}
    assert reports["streams"] == reports["jumbo"]
    assert reports["both"] == reports["jumbo"]
    assert reports["mixed"] == reports["jumbo"]


def test_the_streams_report_against_the_truth(archives):
    report = _report(archives["streams"])
    # each run once: the Logstash retry of one run is not a second result
    assert report["window"]["results"] == len(PMTU_RUNS) == DAYS * 12 * 2
    last = DAYS - 1
    paths = [(s, d, f) for s in HOSTS for d in HOSTS if s != d for f in (4, 6)]
    assert report["paths_measured"] == len(paths) == 24
    # capable: jumbo both ways on the latest runs (the report's rule)
    assert report["capable_paths"] == sum(
        1 for s, d, f in paths if truth(s, d, f, last)[0] == truth(d, s, f, last)[0] == 9000) == 10
    assert report["failed_paths"] == 0      # the failed run (day 1) is not the latest
    holes = {(h["source"], h["dest"], h["ip_version"]): (h["size"], h["hop_ip"], h["path_mtu"])
             for h in report["blackholes"]}
    assert holes == {(s, D, f): (9000, HOLE["ip"], 1500) for s in (B, C) for f in (4, 6)}
    gains = {(g["source"], g["dest"]): g["gain"] for g in report["gains"]["items"]}
    assert gains == {(A, B): 2.25, (C, D): 1.1}
    # how sure each jumbo verdict is, from perfSONAR's own documents too: A -> B ran 3 times,
    # 2 flows asked and measured each (samples.pmtu_result)
    rows = [dict(zip(report["path_fields"], row)) for row in report["paths"]]
    ab = [r for r in rows if (r["source"], r["dest"], r["ip_version"]) == (A, B, 4)][0]
    assert (ab["state"], ab["jumbo_runs"], ab["flows_asked"], ab["flows_measured"],
            ab["confidence"]) == ("jumbo", DAYS, 2 * DAYS, 2 * DAYS, "low")


def test_alarms_read_the_streams_alike(archives, tmp_path):
    events = {}
    for name in ("jumbo", "streams"):
        state = tmp_path / ("%s.state" % name)
        new = alarms_cli.run(["--store", archives[name], "--state", str(state),
                              "--min-sites", "1", "--hop-min-sites", "1",
                              "--out", str(tmp_path / ("%s.jsonl" % name))] + WINDOW)
        # alarm_id names the key and the moment this run raised it (report/alarm_state.py):
        # two runs raise at two moments; the events are otherwise the same
        assert all(len(ev["source"].pop("alarm_id")) == 56 for ev in new)
        events[name] = sorted(json.dumps(ev["source"], sort_keys=True) for ev in new)
    assert events["streams"] == events["jumbo"]
    # the hop both black holes share raises one event per family
    hops = [json.loads(e) for e in events["jumbo"]]
    assert sorted((e["ipv"], e["hop_ip"], e["num_pairs"]) for e in hops) == \
        [("ipv4", HOLE["ip"], 2), ("ipv6", HOLE["ip"], 2)]


def test_a_logstash_document_is_the_same_run_as_the_archivers_record():
    from jumbo.archive import record as records
    from logstash_standin import logstash_event
    for envelope in (PMTU_RUNS[0], PMTU_RUNS[-1], RUNS[-1]):
        rec, _raw = records.normalize(envelope)
        back, _ = records.normalize(streams.from_logstash(logstash_event(envelope, "2030-01-01T00:00:00Z")))
        # the record the archiver would have made, field for field (its id is the run's identity)
        assert back == rec


@pytest.mark.parametrize("doc", [None, [], {}, {"test": "pmtu"}, {"test": {"type": "pmtu"}},
                                 {"test": {"type": "pmtu"}, "result": {}, "pscheduler": []}])
def test_a_hostile_stream_document_is_refused_not_guessed(doc):
    from jumbo.archive import record as records
    with pytest.raises(records.BadRecord):
        records.normalize(streams.from_logstash(doc))
