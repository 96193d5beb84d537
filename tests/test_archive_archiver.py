"""The `jumbo` archiver plugin, run as pScheduler runs it (tests/harness.py), with real faults.

Real parts: the archive process, SQLite, OpenSearch 2.18 (a second node is stopped and
restarted mid-stream), TLS with a self-signed certificate made by `openssl`.
`FrontProxy` is a small HTTP(S) front end written here that stands in for the perfSONAR
Apache proxy: it checks basic auth and forwards to the real OpenSearch. Its `fail_with`
switch (answer 429 without forwarding) is a named mock: OpenSearch's own queue-full 429
cannot be provoked reliably on a 512 MB single node in a test's time budget.
"""

import base64
import json
import os
import subprocess
import sys
import time
import uuid

import pytest

import harness
from jumbo.archive import record as records
from fixtures import samples
from jumbo.archive.stores import open_store
from opensearch_fixture import OpenSearchNode, drop_prefix, java_available
from relay_proxy import RelayProxy, json_answer

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
    assert data_is_valid({"_url": "https://archive:9200", "pscheduler-streams": False})["valid"]
    cases = [
        ({"_url": "ftp://x/y"}, "/_url"),
        ({"_url": "https://h:port"}, "/_url"),
        ({"_url": "sqlite://"}, "/_url"),
        ({"_url": "https://h", "_auth": {"username": "u"}}, "password"),
        ({"_url": "https://h", "_auth": {"username": "u", "password": 7}}, "/_auth/password"),
        ({"_url": "https://h", "_auth": {"username": "u", "password": "p"}, "_api-key": "k"},
         "/_api-key"),
        ({"verify-ssl": "yes"}, "/verify-ssl"),
        ({"_url": "https://h", "pscheduler-streams": "no"}, "/pscheduler-streams"),
        ({"pscheduler-streams": False}, "/pscheduler-streams"),            # SQLite: meaningless
        ({"timeout": 30}, "/timeout"),
        ({"timeout": "PT5M"}, "/timeout"),
        ({"retry-policy": [{"attempts": 0, "wait": "PT1M"}]}, "/retry-policy/0/attempts"),
        ({"retry-policy": [{"attempts": 1, "wait": "P1M"}]}, "/retry-policy/0/wait"),
        ({"schema": 2}, "/schema"),
        ({"colour": "red"}, "At /colour:"),                   # the key to remove, named
        ({"retry-policy": [{"attempts": 1, "wait": "PT1M", "x": 2}]}, "At /retry-policy/0/x:"),
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
    ids = store.search("jumbo_history", {"size": 0, "aggs": {"ids": {"cardinality": {
        "field": "jumbo.id"}}}})["aggregations"]["ids"]["value"]
    assert ids == 10
    drop_prefix(store, prefix)
    node.stop()


# -- auth, TLS and 429 through a front proxy ---------------------------------------------------

class FrontProxy(RelayProxy):
    """Basic-auth (and optionally TLS) front end forwarding to a real OpenSearch."""

    def __init__(self, upstream, user, password, certfile=None, keyfile=None):
        RelayProxy.__init__(self, upstream, certfile, keyfile)
        self.expected = "Basic " + base64.b64encode(("%s:%s" % (user, password)).encode()).decode()
        self.fail_with = None       # e.g. 429: answer that status without forwarding (mock)
        # refuse(method, path) -> True: answer 403 as OpenSearch's security plugin does for a
        # user without the privilege (mock: the test node has no security plugin)
        self.refuse = None
        self.refused = []

    def intercept(self, method, path, headers, length):
        if headers.get("Authorization") != self.expected:
            return json_answer(401, {"error": "Unauthorized"})
        if self.refuse and self.refuse(method, path):
            self.refused.append("%s %s" % (method, path))
            reason = ("no permissions for [%s] and User [name=pscheduler_writer, "
                      "backend_roles=[], requestedTenant=null]" % path)
            return json_answer(403, {"error": {
                "root_cause": [{"type": "security_exception", "reason": reason}],
                "type": "security_exception", "reason": reason}, "status": 403})
        if self.fail_with:
            return json_answer(self.fail_with, {"error": {
                "type": "es_rejected_execution_exception", "reason": "queue full"}})
        return None


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


# -- set-up and privileges ---------------------------------------------------------------------

def _setup_cli(*args):
    proc = subprocess.run([sys.executable, "-m", "jumbo.archive.opensearch.setup"] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=harness.plugin_env(), timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


def test_setup_check_and_install_cli(opensearch_url):
    """Real: an archive without the set-up fails the check (exit 1, the command to run);
    install sets it up; check then passes and reports the rejections recorded."""
    prefix = "c%s_" % uuid.uuid4().hex[:8]
    url = "%s/?prefix=%s" % (opensearch_url, prefix)
    status, out, err = _setup_cli("check", "--url", url)
    assert status == 1, (out, err)
    assert "%spscheduler_pmtu: data stream does not exist" % prefix in err
    assert "python3 -m jumbo.archive.opensearch.setup install" in err
    status, out, err = _setup_cli("install", "--url", url)
    assert status == 0, err
    assert "created data stream %spscheduler_pmtu" % prefix in out
    status, out, err = _setup_cli("check", "--url", url)
    assert status == 0 and "ready" in out and "jumbo_rejected: 0" in out, (out, err)
    status, out, err = _setup_cli("role")
    role = json.loads(out)
    assert "indices:data/write/bulk" in role["cluster_permissions"]
    patterns = [p for entry in role["index_permissions"] for p in entry["index_patterns"]]
    assert set(patterns) == {"pscheduler_pmtu", "pscheduler_jumbo-throughput", "jumbo_history",
                             "jumbo_latest", "jumbo_rejected"}  # nothing of perfSONAR's
    assert _setup_cli("check", "--url", "http://127.0.0.1:1")[0] == 2   # unreachable
    assert _setup_cli("check", "--url", "sqlite:///x.db")[0] == 2
    drop_prefix(open_store(url), prefix)


def test_stream_created_by_logstash_first_is_rolled_over(opensearch_url):
    """Real: Logstash wrote the first pmtu document before the set-up, so pscheduler_pmtu runs on
    perfSONAR's template with dynamic mappings (result.pmtud a text field the dashboards cannot
    aggregate). The check says so; the archiver, allowed to, installs and rolls the stream over."""
    from perfsonar_shapes import logstash_pmtu_document, perfsonar_template
    prefix = "l%s_" % uuid.uuid4().hex[:8]
    url = "%s/?prefix=%s" % (opensearch_url, prefix)
    store = open_store(url)
    assert store.request("PUT", "/_index_template/%spscheduler_default_policy" % prefix,
                         perfsonar_template(prefix))[0] == 200
    early = samples.pmtu_envelope(1, dest="ps-early")
    doc = dict(logstash_pmtu_document(early), **{"@timestamp": "2026-05-20T10:01:30Z"})
    assert store.request("POST", "/%spscheduler_pmtu/_doc" % prefix, doc)[0] == 201
    status, out, err = _setup_cli("check", "--url", url)
    assert status == 1 and "data stream uses template '%spscheduler_default_policy'" % prefix in err
    outcome = harness.archive_stream("jumbo", _with_data([samples.pmtu_envelope(2)],
                                                         {"_url": url}))[0]
    assert outcome.succeeded, outcome.error
    status, answer = store.request("GET", "/_data_stream/%spscheduler_pmtu" % prefix)
    stream = answer["data_streams"][0]
    assert stream["template"] == prefix + "jumbo_pscheduler_pmtu" and stream["generation"] == 2
    status, mapping = store.request("GET", "/" + stream["indices"][-1]["index_name"] + "/_mapping")
    result = list(mapping.values())[0]["mappings"]["properties"]["result"]["properties"]
    assert result["pmtud"]["type"] == "keyword" and result["path-mtu"]["type"] == "integer"
    assert store.count("pmtu") == 2                       # the early run is still there
    assert _setup_cli("check", "--url", url)[0] == 0
    drop_prefix(store, prefix)
    store.request("DELETE", "/_index_template/%spscheduler_default_policy" % prefix)


def test_archive_without_privileges_fails_loudly_then_recovers(opensearch_url):
    """The archive user has perfSONAR's pscheduler_writer rights only (MOCK: the front proxy
    answers 403 as the security plugin would for template, data-stream, rollover and index
    creation requests; the test node has no security plugin). The archiver checks at start,
    cannot install, and asks to retry with the set-up command in the error; once an admin
    has run it, the same process stores the run."""
    prefix = "w%s_" % uuid.uuid4().hex[:8]
    proxy = FrontProxy(opensearch_url, "pscheduler_writer", "s3cret")

    def admin_only(method, path):
        path = path.split("?")[0]
        return (path.startswith(("/_index_template", "/_data_stream")) and method != "GET") or \
            path.endswith("/_rollover") or (method == "PUT" and path.count("/") == 1)
    proxy.refuse = admin_only
    try:
        data = {"_url": "%s/?prefix=%s" % (proxy.url, prefix),
                "_auth": {"username": "pscheduler_writer", "password": "s3cret"}}
        env = dict(samples.pmtu_envelope(0, dest="ps-priv"), data=data)
        archive = ArchiveProcess()
        try:
            reply = archive.send(env)
            assert reply["succeeded"] is False and reply["retry"] == "PT1M", reply
            assert "not set up for the jumbo archiver" in reply["error"]
            assert "%spscheduler_pmtu: data stream does not exist" % prefix in reply["error"]
            assert "python3 -m jumbo.archive.opensearch.setup install" in reply["error"]
            assert any("_index_template" in r for r in proxy.refused)   # it did try
            # the admin runs the set-up (directly, with full rights)
            status, out, err = _setup_cli("install", "--url",
                                          "%s/?prefix=%s" % (opensearch_url, prefix))
            assert status == 0, err
            assert archive.send(dict(env, attempts=1)) == {"succeeded": True}
            # perfSONAR's pscheduler_writer alone has no cluster permission for _bulk
            proxy.refuse = lambda method, path: path.startswith("/_bulk")
            second = dict(samples.pmtu_envelope(1, dest="ps-priv2"), data=data)
            reply = archive.send(second)
            assert reply["succeeded"] is False and reply["retry"] == "PT1M", reply
            assert "refused _bulk" in reply["error"] and "jumbo_writer" in reply["error"]
            assert "python3 -m jumbo.archive.opensearch.setup check" in reply["error"]
            proxy.refuse = None
            assert archive.send(dict(second, attempts=1)) == {"succeeded": True}
        finally:
            archive.close()
        store = open_store("%s/?prefix=%s" % (opensearch_url, prefix))
        assert store.count("pmtu") == 2
        drop_prefix(store, prefix)
    finally:
        proxy.close()
