"""The `jumbo` archiver plugin, run as pScheduler runs it (tests/harness.py), with real faults.

Real parts: the archive process, SQLite, OpenSearch 2.18 (a second node is stopped and
restarted mid-stream), TLS with a self-signed certificate made by `openssl`.
`FrontProxy` is a small HTTP(S) front end written here that stands in for the perfSONAR
Apache proxy: it checks basic auth and forwards to the real OpenSearch. Its `fail_with`
switch (answer 429 without forwarding) is a named mock: OpenSearch's own queue-full 429
cannot be provoked reliably on a 512 MB single node in a test's time budget.
"""

import base64
import http.client
import http.server
import json
import os
import ssl
import subprocess
import threading
import time
import uuid

import pytest

import harness
from jumbo import record as records
from jumbo.stores import open_store, samples
from opensearch_fixture import OpenSearchNode, drop_prefix, java_available

RS = "\x1e"


def data_is_valid(data):
    completed = harness.invoke("archiver", "jumbo", "data-is-valid", stdin=json.dumps(data))
    assert completed.status == 0, completed.stderr
    return completed.json()


def test_enumerate_and_data_is_valid():
    enum = harness.invoke("archiver", "jumbo", "enumerate").sql_json()
    assert enum["name"] == "jumbo" and "scheduling-class" not in enum
    assert data_is_valid({})["valid"]
    assert data_is_valid({"schema": 1, "_url": "sqlite:////var/lib/jumbo/jumbo.db",
                          "retry-policy": [{"attempts": 2, "wait": "PT1M"}]})["valid"]
    assert data_is_valid({"_url": "https://archive:9200", "_auth": {"username": "w", "password": "p"},
                          "verify-ssl": True, "timeout": "PT20S"})["valid"]
    cases = [
        ({"_url": "ftp://x/y"}, "/_url"),
        ({"_url": "https://h:port"}, "/_url"),
        ({"_url": "sqlite://"}, "/_url"),
        ({"_url": "https://h", "_auth": {"username": "u"}}, "password"),
        ({"_url": "https://h", "_auth": {"username": "u", "password": 7}}, "/_auth/password"),
        ({"_url": "https://h", "_auth": {"username": "u", "password": "p"}, "_api-key": "k"},
         "/_api-key"),
        ({"verify-ssl": "yes"}, "/verify-ssl"),
        ({"timeout": 30}, "/timeout"),
        ({"timeout": "PT5M"}, "/timeout"),
        ({"retry-policy": [{"attempts": 0, "wait": "PT1M"}]}, "/retry-policy/0/attempts"),
        ({"retry-policy": [{"attempts": 1, "wait": "P1M"}]}, "/retry-policy/0/wait"),
        ({"schema": 2}, "/schema"),
        ({"colour": "red"}, "colour"),
    ]
    for data, field in cases:
        verdict = data_is_valid(data)
        assert verdict["valid"] is False and field in verdict["error"], (data, verdict)
    assert "7" not in data_is_valid({"_url": "https://h", "_auth": {"username": "u", "password": 7}}
                                    )["error"].split(":", 1)[1]  # private values never echoed
    for text in ("[1]", "null", "{bad"):
        completed = harness.invoke("archiver", "jumbo", "data-is-valid", stdin=text)
        assert completed.status == 0 and completed.json()["valid"] is (text == "null")


def _with_data(envs, data):
    out = []
    for env in envs:
        env = dict(env)
        env["data"] = data
        out.append(env)
    return out


def test_archive_sqlite_bad_records_keep_serving(tmp_path):
    url = "sqlite:///%s" % (tmp_path / "a.db")
    good = _with_data([samples.pmtu_envelope(i, dest="ps-%d" % i) for i in range(3)], {"_url": url})
    unknown = dict(good[0], result=dict(good[0]["result"], test={"type": "dns", "spec": {}}))
    no_result = {"data": {"_url": url}, "attempts": 0}
    bad_data = dict(good[1], data={"_url": "gopher://x"})
    records_in = [good[0], unknown, no_result, bad_data, good[1], good[0], good[2]]
    outcomes = harness.archive_stream("jumbo", records_in, max_attempts=3)
    assert [o.succeeded for o in outcomes] == [True, False, False, False, True, True, True]
    for bad in outcomes[1:4]:
        assert bad.attempts == 1 and "retry" not in bad.replies[0]    # permanent: no retry
    assert "unknown test type" in outcomes[1].error and "gopher" in outcomes[3].error
    assert open_store(url).count() == 3                                 # good[0] twice = once

    # malformed JSON lines too (the harness only sends valid JSON): drive the process directly
    proc = subprocess.Popen([harness.method_path("archiver", "jumbo", "archive")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=harness.plugin_env(),
                            universal_newlines=True)
    lines = [RS + "{not json\n", RS + "[1, 2]\n", RS + json.dumps(good[2]) + "\n"]
    out, _ = proc.communicate("".join(lines), timeout=30)
    replies = [json.loads(line.lstrip(RS)) for line in out.split("\n") if line]
    assert proc.returncode == 0 and len(replies) == 3
    assert [r["succeeded"] for r in replies] == [False, False, True]
    assert "retry" not in replies[0] and "malformed" in replies[0]["error"]


def test_archive_burst_replies_in_order_across_batches(tmp_path):
    """Records that arrive together are prepared in pieces and written in merged batches:
    still one reply per record, in order, each record's own outcome, a repeat stored once,
    and the newest result of a path wins even when an older one arrives later."""
    urls = ["sqlite:///%s" % (tmp_path / "one.db"), "sqlite:///%s" % (tmp_path / "two.db")]
    lines, expected = [], []
    stored = [set(), set()]    # run hrefs per store
    newest = [{}, {}]          # dest -> run href of the newest result per store
    for i in range(450):
        which = i % 2
        env = samples.pmtu_envelope(i, dest="ps-%d" % (i % 7), minutes=i)
        env["data"] = {"_url": urls[which]}
        if i % 37 == 5:
            lines.append(RS + '{"data": {"_url": "%s"}, "result": {broken\n' % urls[which])
            expected.append(False)
            continue
        if i % 53 == 7:
            env["result"]["test"] = {"type": "dns", "spec": {}}
            expected.append(False)
        else:
            expected.append(True)
            stored[which].add(env["run-href"])
            newest[which]["ps-%d" % (i % 7)] = env["run-href"]
        lines.append(RS + json.dumps(env) + "\n")
        if i % 50 == 9 and expected[-1]:
            lines.append(lines[-1])           # a repeat: succeeds, stored once
            expected.append(True)
    # An older result of path ps-0 after the newer ones: stored, but not the latest.
    late = samples.pmtu_envelope(0, dest="ps-0", minutes=-5, path_mtu=1500)
    late["data"] = {"_url": urls[0]}
    lines.append(RS + json.dumps(late) + "\n")
    expected.append(True)
    stored[0].add(late["run-href"])
    proc = subprocess.Popen([harness.method_path("archiver", "jumbo", "archive")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=harness.plugin_env(),
                            universal_newlines=True)
    out, _ = proc.communicate("".join(lines), timeout=60)
    replies = [json.loads(line.lstrip(RS)) for line in out.split("\n") if line]
    assert proc.returncode == 0 and len(replies) == len(lines)
    assert [r["succeeded"] for r in replies] == expected
    for reply, ok in zip(replies, expected):
        assert ok or ("retry" not in reply and reply["error"])
    for url, runs, latest_runs in zip(urls, stored, newest):
        store = open_store(url)
        assert store.count() == len(runs)
        assert {r["dest"]: r["run_href"] for r in store.latest()} == latest_runs
        store.close()


def test_archive_latest_and_retry_policy(opensearch_url):
    prefix = "a%s_" % uuid.uuid4().hex[:8]
    url = "%s/?prefix=%s" % (opensearch_url, prefix)
    newer = samples.pmtu_envelope(0, dest="ps-late", minutes=90, path_mtu=9000)
    older = samples.pmtu_envelope(0, dest="ps-late", minutes=30, path_mtu=1500)
    outcomes = harness.archive_stream("jumbo", _with_data([newer, older, newer], {"_url": url}))
    assert all(o.succeeded for o in outcomes)
    store = open_store(url)
    store.refresh()
    assert store.count("pmtu") == 2 and [r["path_mtu"] for r in store.latest()] == [9000]
    # the retry policy: transient failures (nothing listens on port 1) follow it, then give up
    data = {"_url": "http://127.0.0.1:1", "retry-policy": [{"attempts": 2, "wait": "PT1S"},
                                                            {"attempts": 1, "wait": "PT2S"}]}
    outcome = harness.archive_stream("jumbo", _with_data([newer], data), retry_scale=0.01,
                                     max_attempts=10)[0]
    assert not outcome.succeeded and outcome.attempts == 4
    assert [r.get("retry") for r in outcome.replies] == ["PT1S", "PT1S", "PT2S", None]
    assert "exhausted" in outcome.replies[-1]["error"]
    drop_prefix(store, prefix)


class ArchiveProcess(object):
    """The archive process driven record by record, as the daemon does (attempts counted)."""

    def __init__(self):
        self.proc = subprocess.Popen([harness.method_path("archiver", "jumbo", "archive")],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=harness.plugin_env(), universal_newlines=True)

    def send(self, env):
        self.proc.stdin.write(RS + json.dumps(env) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line.startswith(RS), line
        return json.loads(line[1:])

    def close(self):
        self.proc.stdin.close()
        assert self.proc.wait(timeout=30) == 0


@pytest.mark.skipif(not java_available(), reason="Java 17 is not installed: no OpenSearch")
def test_archive_server_stopped_mid_stream_then_restarted():
    node = OpenSearchNode(int(os.environ.get("OPENSEARCH_FAULT_PORT", "9262")))
    node.start()
    prefix = "s%s_" % uuid.uuid4().hex[:8]
    url = "%s/?prefix=%s" % (node.url, prefix)
    envs = _with_data([samples.pmtu_envelope(i, dest="ps-%d" % i) for i in range(10)],
                      {"_url": url, "timeout": "PT5S"})
    archive = ArchiveProcess()
    try:
        for env in envs[:5]:
            assert archive.send(env) == {"succeeded": True}
        node.stop()                                        # the server goes away mid-stream
        waiting = []
        for env in envs[5:]:
            reply = archive.send(env)
            assert reply["succeeded"] is False and reply["retry"] == "PT1M", reply
            waiting.append(dict(env, attempts=1))
        node.start()                                       # and comes back (same data dir)
        for env in waiting:                                # the daemon's retries, same process
            for attempt in range(1, 8):
                reply = archive.send(dict(env, attempts=attempt))
                if reply["succeeded"]:
                    break
                assert reply.get("retry"), reply           # still recovering: retry again
                time.sleep(2)
            assert reply == {"succeeded": True}
        for env in envs:                                   # a second delivery of everything
            assert archive.send(dict(env, attempts=2)) == {"succeeded": True}
    finally:
        archive.close()
    store = open_store(url)
    assert store.count("pmtu") == 10                       # each record exactly once
    ids = store.search("pscheduler_pmtu", {"size": 0, "aggs": {"ids": {"cardinality": {
        "field": "jumbo.id"}}}})["aggregations"]["ids"]["value"]
    assert ids == 10
    drop_prefix(store, prefix)
    node.stop()


# -- auth, TLS and 429 through a front proxy ---------------------------------------------------

class FrontProxy(object):
    """Basic-auth (and optionally TLS) front end forwarding to a real OpenSearch."""

    def __init__(self, upstream, user, password, certfile=None, keyfile=None):
        self.upstream = upstream.split("://", 1)[1].rstrip("/")
        self.expected = "Basic " + base64.b64encode(("%s:%s" % (user, password)).encode()).decode()
        self.fail_with = None       # e.g. 429: answer that status without forwarding (mock)
        self.requests = 0
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _relay(self):
                proxy.requests += 1
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                if self.headers.get("Authorization") != proxy.expected:
                    return self._answer(401, {"error": "Unauthorized"})
                if proxy.fail_with:
                    return self._answer(proxy.fail_with, {"error": {
                        "type": "es_rejected_execution_exception", "reason": "queue full"}})
                conn = http.client.HTTPConnection(proxy.upstream, timeout=30)
                headers = {"Content-Type": self.headers.get("Content-Type", "application/json")}
                conn.request(self.command, self.path, body=body, headers=headers)
                response = conn.getresponse()
                data = response.read()
                conn.close()
                self.send_response(response.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            def _answer(self, status, payload):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _relay

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.scheme = "http"
        if certfile:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(certfile, keyfile)
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
            self.scheme = "https"
        self.url = "%s://127.0.0.1:%d" % (self.scheme, self.server.server_address[1])
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def certificate(tmp_path):
    key, cert = str(tmp_path / "key.pem"), str(tmp_path / "cert.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", cert, "-days", "1", "-subj", "/CN=archive.test",
                    "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return cert, key


def test_archive_auth_tls_and_429(opensearch_url, certificate):
    cert, key = certificate
    prefix = "p%s_" % uuid.uuid4().hex[:8]
    proxy = FrontProxy(opensearch_url, "pscheduler_writer", "s3cret", certfile=cert, keyfile=key)
    try:
        url = "%s/?prefix=%s" % (proxy.url, prefix)
        auth = {"username": "pscheduler_writer", "password": "s3cret"}
        envs = [samples.pmtu_envelope(i, dest="ps-tls-%d" % i) for i in range(4)]
        runs = [
            (envs[0], {"_url": url, "_auth": auth}),                          # self-signed: refused
            (envs[0], {"_url": url, "_auth": dict(auth, password="wrong"), "ca-file": cert}),
            (envs[0], {"_url": url, "_auth": auth, "ca-file": cert}),         # trusted CA: stored
            (envs[1], {"_url": url, "_auth": auth, "verify-ssl": False}),     # asked for no check
        ]
        outcomes = harness.archive_stream("jumbo", [dict(e, data=d) for e, d in runs])
        assert not outcomes[0].succeeded and "certificate verif" in outcomes[0].error
        assert "retry" not in outcomes[0].replies[0]
        assert not outcomes[1].succeeded and "401" in outcomes[1].error
        assert "retry" not in outcomes[1].replies[0] and "s3cret" not in outcomes[1].error
        assert outcomes[2].succeeded and outcomes[3].succeeded

        # 429 (mock: the proxy answers it), then the queue drains: stored once after the retry
        data = {"_url": url, "_auth": auth, "ca-file": cert}
        archive = ArchiveProcess()
        try:
            proxy.fail_with = 429
            reply = archive.send(dict(envs[2], data=data))
            assert reply["succeeded"] is False and reply["retry"] == "PT1M"
            assert "429" in reply["error"]
            proxy.fail_with = None
            assert archive.send(dict(envs[2], data=data, attempts=1)) == {"succeeded": True}
        finally:
            archive.close()
        store = open_store("%s/?prefix=%s" % (opensearch_url, prefix))
        assert store.count("pmtu") == 3
        ids = {r["id"] for r in store.latest()}
        assert records.normalize(envs[2])[0]["id"] in ids
        drop_prefix(store, prefix)
    finally:
        proxy.close()
