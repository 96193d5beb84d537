"""A real Prometheus (Debian's `prometheus` package) scraping a tiny exporter, for the tests and
the demo (tests/prometheus_fixture.py re-exports it).

`Exporter` is an HTTP server on 127.0.0.1 serving the text exposition format from series the
caller sets: flowd-go-shaped flow metrics and node-exporter-shaped interface MTUs, with a known
truth. `PrometheusServer` runs /usr/bin/prometheus as an unprivileged user (when started as
root) on a free loopback port, a temporary storage directory and a 1 s scrape interval, and
stops only the process it started, by its PID.
"""

import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
USER = "jumbotest"


def available():
    return os.access(PROMETHEUS, os.X_OK)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _labels(labels):
    return ",".join('%s="%s"' % (k, str(v).replace("\\", "\\\\").replace('"', '\\"'))
                    for k, v in sorted(labels.items()))


class Exporter(object):
    """Serves /metrics from self.series: {(name, frozenset(labels.items())): value}."""

    def __init__(self):
        self.lock = threading.Lock()
        self.series = {}
        self.help = {}
        exporter = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path.split("?")[0] != "/metrics":
                    self.send_error(404)
                    return
                body = exporter.text().encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def target(self):
        return "127.0.0.1:%d" % self.port

    def set(self, name, labels, value):
        with self.lock:
            self.series[(name, frozenset(labels.items()))] = float(value)

    def remove(self, name, labels):
        with self.lock:
            self.series.pop((name, frozenset(labels.items())), None)

    def clear(self):
        with self.lock:
            self.series.clear()

    def text(self):
        with self.lock:
            items = sorted(self.series.items(), key=lambda kv: (kv[0][0], sorted(kv[0][1])))
        out, seen = [], set()
        for (name, labels), value in items:
            if name not in seen:
                seen.add(name)
                out.append("# TYPE %s gauge" % name)
            out.append("%s{%s} %r" % (name, _labels(dict(labels)), value))
        return "\n".join(out) + "\n"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class PrometheusServer(object):
    def __init__(self, targets, scrape_interval="1s"):
        self.port = free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.dir = tempfile.mkdtemp(prefix="jumbo-prom-")
        config = os.path.join(self.dir, "prometheus.yml")
        with open(config, "w") as handle:
            handle.write("global:\n  scrape_interval: %s\n  evaluation_interval: %s\n"
                         "scrape_configs:\n  - job_name: jumbo\n    honor_labels: true\n"
                         "    static_configs:\n      - targets: %s\n"
                         % (scrape_interval, scrape_interval, json.dumps(list(targets))))
        data = os.path.join(self.dir, "data")
        os.makedirs(data)
        argv = [PROMETHEUS, "--config.file=" + config, "--storage.tsdb.path=" + data,
                "--web.listen-address=127.0.0.1:%d" % self.port,
                "--storage.tsdb.retention.time=1d", "--log.level=warn"]
        if os.geteuid() == 0:
            pw = pwd.getpwnam(USER)
            os.chmod(self.dir, 0o755)
            for path in (self.dir, config, data):
                os.chown(path, pw.pw_uid, pw.pw_gid)
            argv = ["setpriv", "--reuid=%d" % pw.pw_uid, "--regid=%d" % pw.pw_gid,
                    "--clear-groups", "--"] + argv
        self.log = open(os.path.join(self.dir, "prometheus.log"), "w")
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT,
                                     cwd=self.dir, start_new_session=True)
        self.wait_ready()

    def wait_ready(self, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("prometheus exited: %s" % self.read_log())
            try:
                urllib.request.urlopen(self.url + "/-/ready", timeout=1).read()
                return
            except Exception:  # noqa: BLE001 - not up yet
                time.sleep(0.2)
        raise RuntimeError("prometheus not ready in %ds: %s" % (timeout, self.read_log()))

    def read_log(self):
        try:
            with open(os.path.join(self.dir, "prometheus.log")) as handle:
                return handle.read()[-2000:]
        except OSError:
            return ""

    def query(self, expr):
        url = "%s/api/v1/query?%s" % (self.url, urllib.parse.urlencode({"query": expr}))
        return json.loads(urllib.request.urlopen(url, timeout=10).read())["data"]["result"]

    def wait_for(self, expr, expected, timeout=30):
        """Until the instant value of `expr` (a single-number expression) equals `expected`."""
        deadline = time.monotonic() + timeout
        value = None
        while time.monotonic() < deadline:
            result = self.query(expr)
            value = float(result[0]["value"][1]) if result else None
            if value is not None and abs(value - expected) < 1e-6 * max(1.0, abs(expected)):
                return
            time.sleep(0.3)
        raise RuntimeError("%s stayed %r (expected %r)" % (expr, value, expected))

    def stop(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


# -- flowd-go and node-exporter shapes --------------------------------------------------------------

def flow_labels(src, dst, port, exp=2, act=1, flavour="netlink"):
    """The labels flowd-go's Prometheus backend puts on each flow's series."""
    return {"act": str(act), "exp": str(exp), "src": src, "dst": dst,
            "flow": "<%d:%d>" % (port, 2811), "flavour": flavour}


def serve_flow(exporter, labels, bytes_sent, mss, pmtu=None):
    exporter.set("flow_tcp_bytes_sent_total", labels, bytes_sent)
    exporter.set("flow_tcp_mss", labels, mss)
    exporter.set("flow_tcp_pmtu", labels, pmtu if pmtu is not None else mss + 52)


def serve_mtu(exporter, instance, device, mtu):
    exporter.set("node_network_mtu_bytes", {"instance": instance, "device": device,
                                            "job": "node"}, mtu)
