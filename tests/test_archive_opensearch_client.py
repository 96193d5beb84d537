"""Issue 32, rows 5 and 1 (jumbo.archive.opensearch.client and the archiver's deadline): what
an OpenSearch URL answers cannot take the node's memory, cannot hold a record past
pScheduler's patience, and a misshapen answer is a final, clearly worded failure.

Real servers throughout: a hostile HTTP server (tests/hostile_http.py) for answers no
OpenSearch gives, and the real test OpenSearch behind a slow relay for the deadline."""

import json
import subprocess
import sys
import time
import uuid

import pytest

import harness
from fixtures import samples
from hostile_http import HostileServer, endless_json, json_answer
from jumbo.archive import archiver
from jumbo.archive.errors import PermanentError, TransientError
from jumbo.archive.opensearch import setup as opensearch_setup
from jumbo.archive.opensearch.client import OpenSearchClient, WRITER_MAX_ANSWER
from jumbo.archive.stores import open_store
from opensearch_fixture import drop_prefix
from relay_proxy import SlowRelay

RS = "\x1e"
HUGE = 32 << 20          # four times the writer's cap
RSS_BOUND_KIB = 100 << 10

# Runs the archive method as its only child and reports the child's peak RSS (KiB).
PEAK_RSS = ("import resource, subprocess, sys\n"
            "subprocess.run(sys.argv[1:])\n"
            "sys.stderr.write('PEAK-RSS-KIB %d\\n' % "
            "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")


def _archive_process(records):
    """The replies of one `archive` process fed `records`, and its peak RSS in KiB."""
    stdin = "".join(RS + json.dumps(r) + "\n" for r in records)
    done = subprocess.run([sys.executable, "-c", PEAK_RSS,
                           harness.method_path("archiver", "jumbo", "archive")],
                          input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=harness.plugin_env(), timeout=120)
    replies = [json.loads(line[1:]) for line in done.stdout.split("\n") if line]
    peak = [int(line.split()[1]) for line in done.stderr.splitlines()
            if line.startswith("PEAK-RSS-KIB ")]
    assert peak, done.stderr
    return replies, peak[0]


def test_a_huge_answer_is_cut_at_the_cap_with_the_archiver_memory_bounded():
    # Every request answered with 32 MiB of `[{},{},...` and no length: read whole and
    # parsed, that is over 600 MB of objects in the node's archiver.
    server = HostileServer(lambda method, path: endless_json(HUGE))
    try:
        record = dict(samples.pmtu_envelope(1), data={"_url": server.url + "/?prefix=x_"})
        replies, peak = _archive_process([record])
    finally:
        server.close()
    assert len(replies) == 1 and replies[0]["succeeded"] is False, replies
    assert "retry" not in replies[0], replies       # the same URL gives the same answer
    assert "over %d MiB" % (WRITER_MAX_ANSWER >> 20) in replies[0]["error"], replies
    assert "is the _url an OpenSearch?" in replies[0]["error"], replies
    assert peak < RSS_BOUND_KIB, "archiver peak RSS %d KiB (bound %d KiB)" % (peak, RSS_BOUND_KIB)


@pytest.mark.parametrize("answer", [
    '{"data_streams": 5}',
    '{"data_streams": [{"name": 1, "indices": "x"}]}',
    '[1, 2, 3]',
])
def test_a_misshapen_set_up_answer_is_a_final_failure_that_says_so(answer):
    server = HostileServer(lambda method, path: json_answer(answer))
    try:
        record = dict(samples.pmtu_envelope(2), data={"_url": server.url})
        handler = archiver.Archiver()
        try:
            reply = handler.handle([json.dumps(record).encode()])[0]
        finally:
            handler.close()
    finally:
        server.close()
    assert reply["succeeded"] is False and "retry" not in reply, reply
    assert "is the _url an OpenSearch?" in reply["error"], reply


@pytest.mark.parametrize("answer", [
    '{"took": 1, "errors": false, "items": "x"}',
    '{"took": 1, "errors": false, "items": [1]}',
    '{"took": 1, "errors": false, "items": [{"create": {"status": "201"}}]}',
    '{"took": 1, "errors": false, "items": [{"create": {"status": 201}}, {}]}',
])
def test_a_misshapen_bulk_answer_is_permanent(answer):
    server = HostileServer(lambda method, path: json_answer(answer))
    store = open_store(server.url)
    try:
        with pytest.raises(PermanentError, match="is the _url an OpenSearch"):
            store.bulk(['{"create":{"_index":"jumbo_history","_id":"a"}}', "{}"], 1)
    finally:
        store.close()
        server.close()


def test_a_trickled_answer_ends_at_the_request_timeout():
    # 40 bytes, one every 0.25 s: each read is quick, the whole answer takes 10 s.
    server = HostileServer(lambda method, path: (200, [("Content-Length", "40")],
                                                 [b" "] * 39 + [b"1"]), delay=0.25)
    client = OpenSearchClient.from_url(server.url, timeout=2.0)
    try:
        started = time.monotonic()
        with pytest.raises(TransientError, match="timeout after 2s"):
            client.request("GET", "/")
        assert time.monotonic() - started < 4.0
    finally:
        client.close()
        server.close()


def test_a_slow_archive_answers_retry_at_the_deadline_then_stores_once(opensearch_url,
                                                                        monkeypatch):
    # Scaled down from the 12 s per request against pScheduler's 120 s: 3 s per
    # request, an 8 s deadline. Set up out of band (as an admin does, SETUP_COMMAND), the
    # check takes 2 requests, so the bulk write is cut by the deadline: `retry`.
    monkeypatch.setattr(archiver, "RECORD_DEADLINE", 8.0, raising=False)
    prefix = "d%s_" % uuid.uuid4().hex[:8]
    direct = open_store("%s/?prefix=%s" % (opensearch_url, prefix))
    opensearch_setup.install(direct)
    relay = SlowRelay(opensearch_url, delay=3.0)
    record = json.dumps(dict(samples.pmtu_envelope(3, dest="ps-slow"),
                             data={"_url": "%s/?prefix=%s" % (relay.url, prefix)})).encode()
    try:
        replies = []
        for attempt in range(3):       # each attempt a new archive process, as after idling
            handler = archiver.Archiver()
            try:
                started = time.monotonic()
                reply = dict(handler.handle([record])[0])  # a copy: success is one shared dict
                reply["seconds"] = time.monotonic() - started
                replies.append(reply)
            finally:
                handler.close()
        first, second, third = replies
        assert first["succeeded"] is False and first["retry"] == "PT1M", first
        assert "deadline" in first["error"], first
        assert first["seconds"] < 8.0 + 1.0, first            # answered, not killed
        # The next process trusts the note of the first check: bulk and latest only.
        assert second == dict(second, succeeded=True), second
        assert third == dict(third, succeeded=True), third    # a repeat is stored once
        assert direct.count("pmtu") == 1
        assert direct.count("trace", index=direct.name("jumbo_history")) == 1
    finally:
        relay.close()
        drop_prefix(direct, prefix)


def test_an_archive_set_up_by_the_archiver_goes_on_past_the_deadline(opensearch_url,
                                                                      monkeypatch):
    # The case: nothing set up yet, the archiver installs (up to 27 requests), each
    # request held 1 s against a 4 s deadline. The install goes on on its own thread; the
    # record is answered `retry` until it is done, then stored, once.
    monkeypatch.setattr(archiver, "RECORD_DEADLINE", 4.0, raising=False)
    prefix = "i%s_" % uuid.uuid4().hex[:8]
    relay = SlowRelay(opensearch_url, delay=1.0)
    record = json.dumps(dict(samples.pmtu_envelope(4, dest="ps-install"),
                             data={"_url": "%s/?prefix=%s" % (relay.url, prefix)})).encode()
    handler = archiver.Archiver()      # one archive process, as pScheduler's pool keeps it
    try:
        replies = []
        while len(replies) < 15 and not (replies and replies[-1]["succeeded"]):
            started = time.monotonic()
            reply = dict(handler.handle([record])[0])
            reply["seconds"] = time.monotonic() - started
            replies.append(reply)
        assert replies[0]["succeeded"] is False and replies[0]["retry"] == "PT1M", replies
        assert "being set up by the archiver" in replies[0]["error"], replies
        assert all(r["seconds"] < 4.0 + 1.5 for r in replies), replies   # answered, not killed
        assert replies[-1]["succeeded"] is True, replies
    finally:
        handler.close()
        relay.close()
    direct = open_store("%s/?prefix=%s" % (opensearch_url, prefix))
    try:
        assert direct.count("pmtu") == 1
    finally:
        drop_prefix(direct, prefix)
