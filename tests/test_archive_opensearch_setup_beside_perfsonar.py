"""The jumbo archive beside perfSONAR's own data, on a real OpenSearch 2.18.

The node is first seeded with perfSONAR's index template and Logstash-shaped documents of
every test type perfSONAR archives (tests/perfsonar_shapes.py says which upstream files
these reproduce), under perfSONAR's real names (no prefix). The same history is then played
twice: once by perfSONAR alone (the control), once with this suite's set-up and the real
`archive` process writing runs of every type (pmtu, trace, throughput, latency, rtt) between
perfSONAR's writes and across a rollover of every perfSONAR stream. Every perfSONAR stream's
template, backing-index mappings, settings and the answers of perfSONAR's dashboard queries
must be identical in both plays.
"""

import copy
import hashlib
import re

import pytest

import harness
from fixtures import samples
from jumbo.archive.stores import open_store
from jumbo.archive.opensearch import setup
from jumbo.archive.opensearch.layout import JUMBO_INDICES, OWNED_TEST_TYPES
from jumbo.archive.opensearch.logstash import (canonical_json, logstash_document as our_logstash_document,
                                               test_checksum)
from perfsonar_shapes import (PERFSONAR_TEMPLATE_NAME, PERFSONAR_TYPES, dashboard_queries,
                              logstash_document, logstash_pmtu_document, perfsonar_template)


def _wipe(store):
    """Everything this test creates under perfSONAR's real names (the session's test node
    holds nothing else under them: other tests use their own prefixes)."""
    for ptype in PERFSONAR_TYPES + OWNED_TEST_TYPES:
        store.request("DELETE", "/_data_stream/pscheduler_%s" % ptype)
    for index in JUMBO_INDICES:
        store.request("DELETE", "/" + index)
    store.request("DELETE", "/_index_template/" + PERFSONAR_TEMPLATE_NAME)
    for name, _ in store.templates():
        store.request("DELETE", "/_index_template/" + name)
    for name in ("jumbo_pscheduler_other",):
        store.request("DELETE", "/_index_template/" + name)


def _logstash_writes(store, first):
    """Logstash's output: `create` with ids chosen by OpenSearch, one doc per type."""
    for n, ptype in enumerate(PERFSONAR_TYPES):
        status, answer = store.request("POST", "/pscheduler_%s/_doc" % ptype,
                                       logstash_document(ptype, first + n))
        assert status == 201, answer


def _suite_envelopes(first, data):
    envs = [samples.pmtu_envelope(first, source="ps-a.example.org", dest="ps-b.example.org",
                                  minutes=first),
            samples.trace_envelope(minutes=first),
            samples.throughput_envelope(minutes=first),
            samples.latency_envelope(minutes=first),
            samples.envelope("rtt", {"schema": 1, "succeeded": True, "sent": 10, "lost": 0,
                                     "loss": 0.0, "min": "PT0.010S", "mean": "PT0.011S",
                                     "roundtrips": []},
                             {"schema": 1, "source": "ps-a.example.org",
                              "dest": "ps-c.example.org", "interval": "PT1S"},
                             minutes=first, tool="ping"),
            # throughput whose test.spec.duration is an ISO string (as pScheduler sends it):
            # the old store put it into perfSONAR's stream, where `float` refused it
            samples.envelope("throughput", {"schema": 1, "succeeded": True,
                                            "summary": {"summary": {"throughput-bits": 5e9}}},
                             {"schema": 1, "source": "ps-a.example.org",
                              "dest": "ps-b.example.org", "duration": "PT10S"},
                             minutes=first + 1, tool="iperf3")]
    for env in envs:
        env["data"] = data
    return envs


def _snapshot(store):
    """What perfSONAR's side looks like: per stream its template, each backing index's
    mappings/settings/aliases (by generation), and the answers of its dashboard queries."""
    store.request("POST", "/pscheduler_*/_refresh")
    shot = {}
    status, answer = store.request("GET", "/_index_template/" + PERFSONAR_TEMPLATE_NAME)
    assert status == 200
    shot["template"] = answer["index_templates"][0]["index_template"]
    for ptype in PERFSONAR_TYPES:
        stream = "pscheduler_" + ptype
        status, answer = store.request("GET", "/_data_stream/" + stream)
        assert status == 200, answer
        ds = answer["data_streams"][0]
        entry = {"template": ds["template"], "generation": ds["generation"]}
        for backing in ds["indices"]:
            index = backing["index_name"]
            status, answer = store.request("GET", "/" + index)
            assert status == 200, answer
            index_settings = answer[index]["settings"]["index"]
            entry[re.sub(r"^.*-(\d+)$", r"\1", index)] = {
                "mappings": answer[index]["mappings"],
                "settings": {k: index_settings.get(k) for k in (
                    "number_of_shards", "number_of_replicas", "refresh_interval", "mapping")},
                "aliases": answer[index]["aliases"],
            }
        answers = []
        for query in dashboard_queries(ptype):
            status, answer = store.request("POST", "/pscheduler*/_search", query)
            assert status == 200, answer
            answers.append({"total": answer["hits"]["total"],
                            "hits": [h["_source"] for h in answer["hits"]["hits"]],
                            "aggs": answer.get("aggregations")})
        entry["queries"] = answers
        shot[stream] = entry
    return shot


def _play(store, url, with_suite):
    _wipe(store)
    status, answer = store.request("PUT", "/_index_template/" + PERFSONAR_TEMPLATE_NAME,
                                   perfsonar_template())
    assert status == 200, answer
    _logstash_writes(store, 0)
    shots = []
    if with_suite:
        # the one-time set-up an admin runs (no security plugin on the test node: this
        # user may do everything; the refused case is in test_archive_archiver.py)
        assert setup.main(["install", "--url", url]) == 0
        outcomes = harness.archive_stream("jumbo", _suite_envelopes(10, {"_url": url}))
        assert [o.error for o in outcomes if not o.succeeded] == []
    shots.append(_snapshot(store))
    for ptype in PERFSONAR_TYPES:          # the weekly rollover of perfSONAR's ISM policy
        status, answer = store.request("POST", "/pscheduler_%s/_rollover" % ptype)
        assert status == 200 and answer["rolled_over"], answer
    _logstash_writes(store, 20)
    if with_suite:
        outcomes = harness.archive_stream("jumbo", _suite_envelopes(30, {"_url": url}))
        assert [o.error for o in outcomes if not o.succeeded] == []
    shots.append(_snapshot(store))
    return shots


@pytest.fixture
def archive_node(opensearch_url):
    store = open_store(opensearch_url)
    yield store
    _wipe(store)
    store.close()


def test_perfsonar_streams_untouched_also_after_rollover(archive_node, opensearch_url):
    store = archive_node
    control = _play(store, opensearch_url, with_suite=False)
    played = _play(store, opensearch_url, with_suite=True)
    for before, after in zip(control, played):
        assert sorted(before) == sorted(after)
        for key in before:
            assert after[key] == before[key], key
    # perfSONAR's streams stay on perfSONAR's template, rolled over to generation 2
    status, answer = store.request("GET", "/_data_stream")
    streams = {d["name"]: d["template"] for d in answer["data_streams"]}
    for ptype in ("throughput", "trace", "latency", "rtt", "latencybg"):
        assert streams["pscheduler_" + ptype] == PERFSONAR_TEMPLATE_NAME
    assert streams["pscheduler_pmtu"] == "jumbo_pscheduler_pmtu"
    # the dashboards saw both Logstash rounds (nothing of this suite's among them)
    assert played[1]["pscheduler_throughput"]["queries"][3]["total"]["value"] == 2
    # what the suite wrote is in its own indices: every run, every type, nothing refused
    store.refresh()
    assert store.count("pmtu") == 2
    for kind, n in (("trace", 2), ("throughput", 4), ("latency", 4)):   # latencybg + rtt
        assert store.count(kind) == n, kind
    assert store.rejected()[0] == 0
    # the set-up check with the same user: ready
    assert setup.main(["check", "--url", opensearch_url]) == 0


def test_pmtu_document_is_the_same_whichever_route(archive_node, opensearch_url):
    """A pmtu run through this archiver and the same run as perfSONAR's pipeline stores it
    (http archiver -> Logstash) carry the same fields, values and checksum; both are
    accepted by the pscheduler_pmtu stream and typed alike."""
    store = archive_node
    _wipe(store)
    assert store.request("PUT", "/_index_template/" + PERFSONAR_TEMPLATE_NAME,
                         perfsonar_template())[0] == 200
    assert setup.main(["install", "--url", opensearch_url]) == 0
    env = samples.pmtu_envelope(5, source="ps-a.example.org", dest="ps-b.example.org")
    env["result"]["task"]["detail"] = {"duration": "PT25S"}
    expected = logstash_pmtu_document(env)
    ours = our_logstash_document(env["result"], (env["run-href"], env["task-href"]))
    assert {k: v for k, v in ours.items() if k not in ("@timestamp", "meta")} == expected
    # via Logstash (no jumbo archiver on that host): accepted by the stream set up here
    via_logstash = dict(copy.deepcopy(expected), **{"@timestamp": "2026-05-20T10:06:00Z",
                                                    "host": "127.0.0.1"})
    via_logstash["id"] = via_logstash["pscheduler"]["run_id"] = "other-run"
    status, answer = store.request("POST", "/pscheduler_pmtu/_doc", via_logstash)
    assert status == 201, answer
    assert store.put_many([env]) == [None]
    store.refresh()
    hits = store.search("pscheduler_pmtu", {"size": 10, "query": {"match_all": {}},
                                            "sort": [{"id.keyword": "asc"}]})["hits"]["hits"]
    assert len(hits) == 2
    # the fields the dashboards read, the same in both and typed by the pmtu template
    for field in ("result.path-mtu", "result.pmtud", "result.local-mtu",
                  "test.spec.source.keyword", "reference.source-site.keyword"):
        query = {"size": 0, "aggs": {"v": {"terms": {"field": field}}}}
        buckets = store.search("pscheduler_pmtu", query)["aggregations"]["v"]["buckets"]
        assert len(buckets) == 1 and buckets[0]["doc_count"] == 2, (field, buckets)


def test_checksum_is_the_pipelines():
    """pscheduler.test_checksum as perfSONAR's pipeline computes it (perfsonar/logstash
    ruby/pscheduler_test_checksum.rb): canonical JSON with ES6-style numbers (the values
    below are JavaScript's String(number)), keys in UTF-16 order, observer_ip null."""
    numbers = {10.0: "10", 0.5: "0.5", 1e21: "1e+21", 1e20: "100000000000000000000",
               1e-7: "1e-7", 0.000001: "0.000001", 123.456: "123.456", -2.5: "-2.5",
               4: "4", 0: "0", 1.5e300: "1.5e+300"}
    for number, text in numbers.items():
        assert canonical_json(number) == text, number
    assert canonical_json({"b": [1, True, None], "a": "é\n", "\U0001F600": 1, "\uff61": 2}) == \
        '{"a":"é\\n","b":[1,true,null],"\U0001F600":1,"\uff61":2}'
    test = {"type": "rtt", "spec": {"schema": 1, "dest": "ps-b", "interval": 1.0}}
    # the float 1.0 is "1" in the pipeline's form (Python's json would write 1.0)
    assert test_checksum(test, "ping") == hashlib.sha256(
        b'{"observer_ip":null,"test":{"spec":{"dest":"ps-b","interval":1,"schema":1},'
        b'"type":"rtt"},"tool":"ping"}').hexdigest()
