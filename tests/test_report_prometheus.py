"""Issue 32, the Prometheus client's rows, against real HTTP servers on loopback (ports
19480-19499, this file's own) and a real Prometheus:

  row 3   a redirect to another host or to plain http is refused, the token never arrives at
          the second server; a redirect within the origin is followed (with the token);
  row 9   an answer trickled a byte every 2 s ends with the deadline's error, headers or body;
  row 4   huge finite values (1.7e308) are skipped and counted, never summed into inf/NaN:
          the JSON report is strict JSON, text and HTML are written;
  row 12  a server's error text reaches the terminal escaped (ESC, bidi overrides).
"""

import json
import os
import ssl
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import prometheus_fixture as pf
import store_fixtures
from fixtures import synth
from jumbo.report.cli import main as cli_main
from jumbo.report.errors import ReportError
from jumbo.report.prometheus import Prometheus, PrometheusDown

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "python-jumbo")]))
PORTS = iter(range(19480, 19500))
TOKEN = "tok-Zq9SECRET"
EMPTY = json.dumps({"status": "success", "data": {"resultType": "vector", "result": []}}).encode()


class Server(object):
    """A real HTTP(S) server on 127.0.0.x:port whose handler is `answer(handler)`; it records
    the path and Authorization header of every request."""

    def __init__(self, answer, host="127.0.0.1", tls=None):
        self.seen = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def do_GET(self):
                server.seen.append((self.path, self.headers.get("Authorization")))
                answer(self)

            def log_message(self, *args):
                pass

        for _attempt in range(20):
            try:
                self.httpd = ThreadingHTTPServer((host, next(PORTS)), Handler)
                break
            except OSError:
                continue
        self.httpd.daemon_threads = True
        if tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.url = "%s://%s:%d" % ("https" if tls else "http", host, self.httpd.server_address[1])
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def send(handler, body, status=200):
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def redirect(to):
    def answer(handler):
        handler.send_response(302)
        handler.send_header("Location", to + handler.path)
        handler.send_header("Content-Length", "0")
        handler.end_headers()
    return answer


@pytest.fixture
def token(tmp_path):
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    return str(path)


@pytest.fixture
def certificate(tmp_path):
    key, cert = str(tmp_path / "key.pem"), str(tmp_path / "cert.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", cert, "-days", "1", "-subj", "/CN=prom.test",
                    "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return cert, key


# -- row 3: redirects ---------------------------------------------------------------------------

def test_redirect_to_another_host_never_carries_the_token(token):
    second = Server(lambda h: send(h, EMPTY), host="127.0.0.2")
    first = Server(redirect(second.url))
    try:
        prom = Prometheus(first.url, token_file=token, timeout=10)
        with pytest.raises(ReportError) as err:
            prom.query("up", 0)
        assert "redirects (HTTP 302) to %s" % second.url in str(err.value)
        assert "another host" in str(err.value)
        assert first.seen == [(first.seen[0][0], "Bearer " + TOKEN)]
        assert second.seen == []            # not asked at all: neither token nor trust
    finally:
        first.close()
        second.close()


def test_redirect_from_https_to_http_is_refused(token, certificate):
    plain = Server(lambda h: send(h, EMPTY))
    tls = Server(redirect(plain.url), tls=certificate)
    try:
        prom = Prometheus(tls.url, token_file=token, ca_file=certificate[0], timeout=10)
        with pytest.raises(ReportError, match="another scheme"):
            prom.query("up", 0)
        assert len(tls.seen) == 1 and tls.seen[0][1] == "Bearer " + TOKEN   # TLS verified, sent
        assert plain.seen == []
    finally:
        tls.close()
        plain.close()


def test_redirect_within_the_origin_is_followed_with_the_token(token):
    def answer(handler):
        if handler.path.startswith("/prom/"):
            send(handler, EMPTY)
        else:
            handler.send_response(301)
            handler.send_header("Location", "/prom" + handler.path)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
    server = Server(answer)
    try:
        assert Prometheus(server.url, token_file=token, timeout=10).query("up", 0) == []
        assert [auth for _path, auth in server.seen] == ["Bearer " + TOKEN] * 2
        assert server.seen[1][0].startswith("/prom/api/v1/query?")
    finally:
        server.close()


# -- row 9: the overall deadline ----------------------------------------------------------------

def trickle(where):
    """An answer whose status line and headers (`headers`) or body (`body`) come a byte
    every 2 s, for up to 10 minutes."""
    whole = b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + EMPTY

    def answer(handler):
        at = 0 if where == "headers" else whole.index(b"\r\n\r\n") + 4
        try:
            handler.wfile.write(whole[:at])
            handler.wfile.flush()
            for byte in whole[at:][:300]:
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
                time.sleep(2)
        except OSError:
            pass                            # the client went away: what the test wants
    return answer


@pytest.mark.parametrize("where", ["headers", "body"])
def test_a_trickled_answer_ends_at_the_deadline(where):
    server = Server(trickle(where))
    try:
        prom = Prometheus(server.url, timeout=30, deadline=4)
        began = time.monotonic()
        with pytest.raises(PrometheusDown) as err:
            prom.query("up", 0)
        took = time.monotonic() - began
        assert "no complete answer within the 4 s deadline" in str(err.value)
        assert took < 25, took              # generous: the per-read timeout (30 s) never fired
        with pytest.raises(PrometheusDown, match="deadline"):
            prom.query("up", 0)             # the deadline is the client's, for all its reads
    finally:
        server.close()


@pytest.fixture(scope="module")
def mesh():
    return synth.Mesh.small(days=3, start=time.strftime("%Y-%m-%d", time.gmtime(time.time() - 2 * 86400)))


@pytest.fixture(scope="module")
def sqlite_url(mesh, tmp_path_factory):
    url = "sqlite:///%s" % (tmp_path_factory.mktemp("promstore") / "jumbo.db")
    store_fixtures.load(url, mesh.records())
    return url


def test_the_report_ends_with_the_deadline_error(sqlite_url):
    server = Server(trickle("body"))
    try:
        proc = subprocess.run([sys.executable, "-m", "jumbo.report.cli", "--store", sqlite_url,
                               "--prometheus", server.url, "--prometheus-deadline", "3"], env=ENV,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=120)
        assert proc.returncode == 3, proc.stderr
        assert "no complete answer within the 3 s deadline" in proc.stderr, proc.stderr
    finally:
        server.close()


# -- row 12: a server's error text on the terminal ----------------------------------------------

HOSTILE_ERROR = "bad query\x1b]8;;http://evil.example\x07click\x1b[2J\u202egnp.exe\u2066x\r\nforged"


def test_a_server_error_reaches_the_terminal_escaped(sqlite_url):
    server = Server(lambda h: send(h, json.dumps({"status": "error", "error": HOSTILE_ERROR})
                                   .encode(), status=500))
    try:
        proc = subprocess.run([sys.executable, "-m", "jumbo.report.cli", "--store", sqlite_url,
                               "--prometheus", server.url], env=ENV, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
        assert proc.returncode == 3, proc.stderr
        assert "answered HTTP 500: bad query" in proc.stderr
        for raw in ("\x1b", "\x07", "\u202e", "\u2066", "\r"):
            assert raw not in proc.stderr, repr(proc.stderr)
        assert "\\x1b]8;;http://evil.example\\x07click\\x1b[2J\\u202egnp.exe\\u2066x" in proc.stderr
        assert proc.stderr.count("\n") == 1           # one line: nothing forged below it
    finally:
        server.close()


# -- row 4: implausible values ------------------------------------------------------------------

def test_implausible_answers_are_skipped_and_counted():
    def vector(*values):
        return json.dumps({"status": "success", "data": {"resultType": "vector", "result": [
            {"metric": {"src": "a%d" % i, "dst": "b"}, "value": [1, v]}
            for i, v in enumerate(values)]}}).encode()
    server = Server(lambda h: send(h, vector("5", "1.7e308", "NaN", "+Inf", "1e18", "1.000001e18")))
    try:
        prom = Prometheus(server.url, timeout=10)
        assert [v for _l, v in prom.query("up", 0)] == [5.0, 1e18]
        assert sorted(dict(s)["src"] for s in prom.implausible) == ["a1", "a2", "a3", "a5"]
        assert [v for _l, v in prom.query("up", 0, bound=10)] == [5.0]
        assert len(prom.implausible) == 5               # a4 (1e18) added, the others once
    finally:
        server.close()


def strict_json(text):
    def refuse(name):
        raise ValueError("not JSON: %s" % name)
    return json.loads(text, parse_constant=refuse)


@pytest.mark.skipif(not pf.available(), reason="prometheus is not installed (scripts/setup.sh)")
def test_huge_values_never_overflow_the_report(mesh, sqlite_url, tmp_path):
    """Two site pairs whose flows carry 1.7e308 bytes (finite; their sum is not), one sane
    pair, and an interface MTU of 1.7e308: the sane pair is the whole telemetry, the others
    are counted as implausible, and every format is written."""
    a, b = mesh.host("SITE-A", 0), mesh.host("SITE-B", 1)
    c, d = mesh.host("SITE-C", 0), mesh.host("SITE-D", 1)
    exporter = pf.Exporter()
    pf.serve_flow(exporter, pf.flow_labels(a.ip, b.ip, 1), 4e9, 8948)
    pf.serve_flow(exporter, pf.flow_labels(c.ip, d.ip, 2), 1.7e308, 1448)
    pf.serve_flow(exporter, pf.flow_labels(d.ip, a.ip, 3), 1.7e308, 8948)
    pf.serve_mtu(exporter, "%s:9100" % a.name, "eth0", 9000)
    pf.serve_mtu(exporter, "%s:9100" % c.name, "eth0", 1.7e308)
    server = pf.PrometheusServer([exporter.target])
    try:
        server.wait_for("count(flow_tcp_bytes_sent_total)", 3)
        server.wait_for("count(node_network_mtu_bytes)", 2)
        out = {}
        for fmt in ("json", "text", "html", "csv"):
            path = tmp_path / ("r." + fmt)
            assert cli_main(["--store", sqlite_url, "--prometheus", server.url, "--format", fmt,
                             "--out", str(path)]) == 0, fmt
            out[fmt] = path.read_text()
        t = strict_json(out["json"])["telemetry"]
        assert t["bytes"] == t["jumbo_bytes"] == 4e9 and t["used"] == 1.0
        # skipped, each series counted once over every query (bytes, jumbo bytes, the trend):
        # c->d, d->a and c's MTU
        assert t["implausible_series"] == 3
        hosts = {h["host"]: h for h in t["configured"]["host_list"]}
        assert hosts[a.name]["source"] == "node exporter" and hosts[c.name]["source"] == "local-mtu"
        assert "3 series with implausible values" in out["text"]
        assert "telemetry,mesh,implausible_series,3" in out["csv"]
        assert 'id="telemetry"' in out["html"]
        for fmt in ("text", "html", "csv"):
            assert not any(bad in out[fmt] for bad in ("nan", "inf%", ",inf", "Infinity")), fmt
    finally:
        server.stop()
        exporter.close()
