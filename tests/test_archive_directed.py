"""A `direction: both` jumbo-throughput run archived as two directed observations
(jumbo.archive.directed), in both stores, read back by the report's gains per directed path.

The results are real: captured from namespace-lab runs by tests/capture_pair_both.py (the
plugin harness's pair run, `--direction both`, iperf3 as the unprivileged user), with the
lab's truth for each direction beside them (tests/data/pair_both_*.json)."""

import json
import os
import uuid

import pytest

from fixtures import samples
from jumbo.archive import directed
from jumbo.archive import record as records
from jumbo.archive.stores import open_store
from jumbo.report import build_report

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
SOURCE = "ps-src.lab"


def _captured(scenario):
    with open(os.path.join(DATA, "pair_both_%s.json" % scenario)) as handle:
        return json.load(handle)


def _envelope(captured, minutes=0):
    return samples.envelope("jumbo-throughput", captured["result"], captured["spec"],
                            lead=SOURCE, minutes=minutes)


def _pmtu(dest):
    """The pair's background pmtu run: the report is about pmtu results."""
    return samples.pmtu_envelope(source=SOURCE, dest=dest, minutes=0)


def test_a_both_ways_run_is_two_directed_records_with_each_directions_figures():
    captured = _captured("clean_jumbo")
    result, truth = captured["result"], captured["truth"]
    envelope = _envelope(captured)
    (forward, raw), (reverse, reverse_raw) = directed.normalize(envelope)
    dest = captured["spec"]["dest"]
    assert (forward["source"], forward["dest"]) == (SOURCE, dest)
    assert (reverse["source"], reverse["dest"]) == (dest, SOURCE)
    assert (reverse["source_site"], reverse["dest_site"]) == ("SITE-B", "SITE-A")
    assert reverse["dest_ip"] == forward["source_ip"] and reverse["source_ip"] == forward["dest_ip"]
    # Each row its own direction's gain, not the pooled one.
    for rec, name in ((forward, "forward"), (reverse, "reverse")):
        figures = result["by-direction"][name]
        assert rec["gain"] == figures["gain"] != result["gain"]
        assert rec["throughput_standard"] == figures["standard"]["mean"]
        assert rec["throughput_jumbo"] == figures["jumbo"]["mean"]
        assert rec["ip_version"] == 4 and rec["succeeded"] is True and rec["error"] is None
        # IPv4 at 9000: MSS 8960 less 12 bytes of timestamps, as the kernel sent them.
        assert rec["mss"] == 8948
        assert rec["run_href"] == envelope["run-href"] and rec["start"] == forward["start"]
    # The forward path is the probe's; the reverse one what its jumbo legs proved.
    assert forward["path_mtu"] == truth["forward"]["path-mtu"] == 9000
    assert reverse["path_mtu"] == truth["reverse"]["path-mtu"] == 9000
    assert reverse["pmtud"] == truth["reverse"]["pmtud"] == "not-needed"
    assert forward["jumbo"] is True and reverse["jumbo"] is True
    # One run, two rows keyed by direction; the forward keeps the run's id and the result.
    assert forward["id"] == records.normalize(envelope)[0]["id"]
    assert reverse["id"] == directed.reverse_id(forward["id"]) != forward["id"]
    assert raw is envelope["result"] and reverse_raw is None
    assert directed.normalize(json.loads(json.dumps(envelope)))[1][0]["id"] == reverse["id"]


def test_a_forward_only_run_is_one_record_as_before():
    envelope = samples.pair_envelope(gain=1.7)
    assert directed.normalize(envelope) == [records.normalize(envelope)]
    pmtu = samples.pmtu_envelope()
    assert directed.normalize(pmtu) == [records.normalize(pmtu)]


def test_a_direction_with_no_verified_jumbo_leg_is_not_a_success():
    captured = _captured("clean_jumbo")
    result = captured["result"]
    for run in result["runs"]:
        if run["direction"] == "reverse" and run["size"] == "jumbo":
            run.update(succeeded=False, error="leg failed", throughput=None)
    result["by-direction"]["reverse"]["gain"] = None
    forward, reverse = [rec for rec, _ in directed.normalize(_envelope(captured))]
    assert forward["succeeded"] is True
    assert reverse["succeeded"] is False and "reverse direction" in reverse["error"]
    assert reverse["gain"] is None and reverse["pmtud"] == "unknown" and reverse["jumbo"] is None


def test_a_direction_whose_receiver_held_the_jumbo_legs_small_decided_something():
    captured = _captured("clean_jumbo")
    for run in captured["result"]["runs"]:
        if run["direction"] == "reverse" and run["size"] == "jumbo":
            # The source's way back is 1500: it advertised 1460, the dest sent at 1448.
            run.update(succeeded=False, error="observed MSS 1448 ...", **{"observed-mss": 1448})
            assert run["pmtu"] == run["mtu"] == 9000
    captured["result"]["by-direction"]["reverse"]["gain"] = None
    forward, reverse = [rec for rec, _ in directed.normalize(_envelope(captured))]
    assert forward["succeeded"] is True and forward["mss"] == 8948
    assert reverse["succeeded"] is True and reverse["error"] is None
    # No leg crossed at its size: the reverse path's MTU stays unproven, never jumbo.
    assert reverse["gain"] is None and reverse["mss"] is None and reverse["jumbo"] is None
    # Without the socket's path MTU the cause is open: no success.
    for run in captured["result"]["runs"]:
        if run["direction"] == "reverse" and run["size"] == "jumbo":
            run["pmtu"] = None
    reverse = directed.normalize(_envelope(captured))[1][0]
    assert reverse["succeeded"] is False


def test_a_reverse_jumbo_leg_that_stalled_is_a_black_hole_not_a_path_mtu():
    captured = _captured("clean_jumbo")
    for run in captured["result"]["runs"]:
        if run["direction"] == "reverse" and run["size"] == "jumbo":
            run.update(stalled=True, succeeded=False, error="stalled", throughput=0.0)
    captured["result"]["by-direction"]["reverse"]["gain"] = None
    forward, reverse = [rec for rec, _ in directed.normalize(_envelope(captured))]
    assert forward["jumbo"] is True and forward["succeeded"] is True
    # The kernel's pmtu stayed 9000 on the stalled legs: it is not the path's.
    assert reverse["pmtud"] == "blackhole" and reverse["path_mtu"] is None
    assert reverse["jumbo"] is False and reverse["succeeded"] is True


@pytest.mark.parametrize("broken", [
    {"by-direction": {"forward": {}, "reverse": "x"}}, {"by-direction": []},
    {"runs": 7}, {"runs": ["x", None]}, {"by-direction": {"forward": {"gain": "x"}, "reverse": {}}}])
def test_hostile_by_direction_or_runs_never_raise(broken):
    captured = _captured("clean_jumbo")
    captured["result"].update(broken)
    envelope = _envelope(captured)
    found = directed.normalize(envelope)
    assert found[0][0]["id"] == records.normalize(envelope)[0]["id"]
    assert len(found) == (2 if isinstance(captured["result"]["by-direction"], dict) and all(
        isinstance(v, dict) for v in captured["result"]["by-direction"].values()) else 1)


def _gains(url):
    report = build_report(url)
    return {(item["source"], item["dest"]): item["gain"] for item in report["gains"]["items"]}


def _archive_twice(store, envelopes):
    for _ in range(2):
        outcomes = store.put_many([json.loads(json.dumps(e)) for e in envelopes])
        assert outcomes == [None] * len(envelopes), outcomes


def _expected(captured):
    dest, split = captured["spec"]["dest"], captured["result"]["by-direction"]
    return {(SOURCE, dest): split["forward"]["gain"], (dest, SOURCE): split["reverse"]["gain"]}


def test_sqlite_stores_both_directions_once_and_the_report_shows_both_gains(tmp_path):
    captured = _captured("clean_jumbo")
    envelopes = [_pmtu(captured["spec"]["dest"]), _envelope(captured)]
    url = "sqlite:///%s" % (tmp_path / "both.db")
    store = open_store(url)
    try:
        _archive_twice(store, envelopes)
        assert store.count("jumbo-throughput") == 2
        assert store.count() == 3
    finally:
        store.close()
    assert _gains(url) == _expected(captured)


def test_opensearch_stores_both_directions_once_and_the_report_shows_both_gains(opensearch_url):
    from opensearch_fixture import drop_prefix
    captured = _captured("clean_jumbo")
    envelopes = [_pmtu(captured["spec"]["dest"]), _envelope(captured)]
    prefix = "both%s_" % uuid.uuid4().hex[:8]
    url = "%s/?prefix=%s" % (opensearch_url, prefix)
    store = open_store(url)
    try:
        _archive_twice(store, envelopes)
        store.request("POST", "/%s*/_refresh" % prefix)
        # Two adoption records (one per direction) in jumbo_history...
        status, parsed = store.request("POST", "/%sjumbo_history/_count" % prefix, {
            "query": {"term": {"jumbo.test_type": "jumbo-throughput"}}})
        assert status == 200 and parsed["count"] == 2, parsed
        # ...and one document per run in perfSONAR's stream (the result as the test wrote it).
        assert store.count("jumbo-throughput") == 1
        assert _gains(url) == _expected(captured)
    finally:
        drop_prefix(store, prefix)


def test_the_reverse_path_is_what_its_own_legs_proved():
    """The lab's asymmetric path: src->dst all 9000, dst->src through r2 whose link from dst
    is 1500. dst advertises MSS 1460 (its route to src), so no jumbo leg runs at full size in
    either direction and the pooled run fails; the reverse legs' sockets had path MTU 1500.
    The forward legs' sockets had 9000: dst's MSS held them small, which decides that
    direction (TCP does not use jumbo frames there), though nothing gives it a gain."""
    captured = _captured("asymmetric")
    truth, result = captured["truth"], captured["result"]
    assert result["succeeded"] is False and result["verdict"] == "failed"
    forward, reverse = [rec for rec, _ in directed.normalize(_envelope(captured))]
    assert forward["path_mtu"] == truth["forward"]["path-mtu"] == 9000
    assert forward["gain"] is None and forward["mss"] is None
    assert forward["succeeded"] is True and forward["error"] is None
    assert reverse["path_mtu"] == truth["reverse"]["path-mtu"] == 1500
    assert reverse["jumbo"] is False and reverse["gain"] is None
    assert reverse["succeeded"] is True and reverse["error"] is None
    assert reverse["mss"] is None   # no jumbo leg was verified


def test_an_archive_fed_only_through_logstash_shows_both_directed_gains(opensearch_url):
    """perfSONAR's route (the stock http archiver, Logstash, pscheduler_jumbo-throughput): the
    report's stream reader loads the runs through the same SQLite writer, so the same split."""
    from logstash_standin import post as logstash_post
    from opensearch_fixture import drop_prefix
    from perfsonar_shapes import PERFSONAR_TEMPLATE_NAME, perfsonar_template
    captured = _captured("clean_jumbo")
    prefix = "bothls%s_" % uuid.uuid4().hex[:8]
    url = "%s/?prefix=%s" % (opensearch_url, prefix)
    store = open_store(url)
    template = "/_index_template/" + prefix + PERFSONAR_TEMPLATE_NAME
    try:
        assert store.request("PUT", template, perfsonar_template(prefix))[0] == 200
        envelope = _envelope(captured)
        # Logstash's retries are not idempotent: the run posted twice still counts once.
        logstash_post(store, prefix, [_pmtu(captured["spec"]["dest"]), envelope, envelope])
        store.request("POST", "/%s*/_refresh" % prefix)
        assert _gains(url) == _expected(captured)
    finally:
        store.request("DELETE", template)
        drop_prefix(store, prefix)
