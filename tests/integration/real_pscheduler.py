"""Fixtures (re-exported by conftest.py) of the suite under a real upstream pScheduler: two
nodes built from source in namespaces (lab/real_pscheduler/nodes.sh), brought up once per
session and torn down at its end, also when a test fails or the session is interrupted.

Upstream source: PSCHEDULER_SRC (default ../shared/real-pscheduler/ next to the project), the
directory holding pscheduler-5.2.5-*.tar.gz or an unpacked tree. Absent: every test here is
skipped with a loud notice, except in CI (env CI set, as .ci/run does), where that fails.
"""

import json
import os
import re
import subprocess
import threading

import pytest

from lab import runner_log
from lab_support import process_tree, running

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NODES = os.path.join(ROOT, "lab", "real_pscheduler", "nodes.sh")
OPENSEARCH = os.path.join(ROOT, "scripts", "opensearch.sh")
DEFAULT_SRC = os.path.normpath(os.path.join(ROOT, "..", "shared", "real-pscheduler"))
WHERE_TO_GET = (
    "upstream pScheduler source is missing: set PSCHEDULER_SRC to a directory holding "
    "pscheduler-5.2.5-1e8b192.tar.gz (github.com/perfsonar/pscheduler at commit 1e8b192: "
    "python-pscheduler, pscheduler-core, pscheduler-server, python-icmperror and the rtt, idle, "
    "throughput, trace tests, ping, snooze, iperf3, tracepath tools and the syslog archiver) "
    "or an unpacked tree; default %s" % DEFAULT_SRC)

NETNS = {"a": "rps-a", "b": "rps-b"}
ADDR = {"a": "198.18.200.1", "b": "198.18.201.2"}
ADDR6 = {"a": "fd00:200::1", "b": "fd00:201::2"}

_missing_notice = []


def pscheduler_source():
    src = os.environ.get("PSCHEDULER_SRC", DEFAULT_SRC)
    if os.path.isdir(os.path.join(src, "pscheduler-server")):
        return src
    if os.path.isdir(src) and any(re.match(r"pscheduler-.*\.tar\.gz$", name)
                                  for name in os.listdir(src)):
        return src
    return None


def in_ci():
    return bool(os.environ.get("CI"))


def pytest_terminal_summary(terminalreporter):
    if _missing_notice:
        terminalreporter.write_sep("!", "REAL PSCHEDULER INTEGRATION SUITE NOT RUN", red=True)
        terminalreporter.write_line(_missing_notice[0], red=True)


class Nodes(object):
    """The two running nodes: the operator's CLI and the REST API of each."""

    def __init__(self, env, script=NODES, netns=None):
        self.env = env
        self.rps = env["RPS"]
        # the lab's script and namespaces: nodes.sh's 5.2.5 lab, or node53.sh's 5.3 lab
        self.script = script
        self.netns = netns or NETNS

    def cli(self, node, args, timeout=300):
        return subprocess.run(["bash", self.script, "cli", node] + list(args), env=self.env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=timeout)

    def cli_background(self, node, args):
        """A CLI call left running (a task that is watched to its end), output to a file."""
        return BackgroundCli(self, node, args)

    def api(self, node, url_or_path, method="GET", body=None):
        url = url_or_path if url_or_path.startswith("https://") else \
            "https://%s/pscheduler%s" % (ADDR[node], url_or_path)
        argv = ["ip", "netns", "exec", self.netns[node], "curl", "-sk", "-m", "30", "-X", method,
                "-w", "\n%{http_code}", url]
        if body is not None:
            argv[-1:-1] = ["-H", "Content-Type: application/json", "--data-binary", "@-"]
        done = subprocess.run(argv, input=json.dumps(body) if body is not None else None,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=60)
        text, _, status = done.stdout.rpartition("\n")
        try:
            value = json.loads(text)
        except ValueError:
            value = text
        return int(status or 0), value

    def run(self, run_url):
        """The run's record as the API serves it (state, result-merged, ...)."""
        status, value = self.api("a", run_url)
        assert status == 200, (run_url, status, value)
        return value

    def daemon_log(self, node, daemon):
        """The lines a node's daemon wrote (nodes.sh: supervise.sh's file); [] if it has none."""
        return runner_log.daemon_log(self.rps, node, daemon)

    def restart(self, upstream_fixes=False):
        """Both nodes stopped and started again from the node tree, fresh databases; with
        `upstream_fixes`, with nodes.sh's RPS_UPSTREAM_FIXES experiment applied."""
        env = dict(self.env)
        env.pop("RPS_UPSTREAM_FIXES", None)
        if upstream_fixes:
            env["RPS_UPSTREAM_FIXES"] = "1"
        for node in ("a", "b"):
            for step in ("stop", "start"):
                # Every process the node's recorded PIDs started, taken before the stop (other
                # processes in the namespace, such as a test's OpenSearch, are not the node's)
                tree = process_tree(_recorded_pids(self.rps, node)) if step == "stop" else ()
                done = subprocess.run(["bash", self.script, step, node], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      universal_newlines=True, timeout=600)
                assert done.returncode == 0, done.stdout
                if step == "stop":
                    # a process left over would keep the old code running against the next
                    # database on the same socket, and keep writing into the node's directory
                    assert len(tree) >= 5, (node, tree)     # 4 daemons' supervisors, the API
                    left = [pid for pid in tree if running(pid)]
                    assert left == [], "node %s stopped, still running: %s" % (node, left)
                if step == "start" and upstream_fixes:
                    assert "upstream scheduling changed" in done.stdout, done.stdout

    def task_runs(self, task_url):
        status, value = self.api("a", task_url + "/runs")
        assert status == 200, (task_url, status, value)
        return [self.run(url) for url in value]


def _recorded_pids(rps, node):
    """The PIDs nodes.sh recorded for a node's daemons and API."""
    with open(os.path.join(rps, "node-" + node, "pids")) as f:
        return [int(line) for line in f if line.strip()]


class BackgroundCli(object):
    def __init__(self, nodes, node, args):
        self.args = args
        self.out = []
        self.proc = subprocess.Popen(["bash", nodes.script, "cli", node] + list(args), env=nodes.env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     universal_newlines=True)
        self.reader = threading.Thread(target=self._read)
        self.reader.daemon = True
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.out.append(line)

    def wait(self, timeout):
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("pscheduler %s did not finish in %d s:\n%s"
                                 % (" ".join(self.args), timeout, "".join(self.out)))
        self.reader.join(5)
        return self.proc.returncode, "".join(self.out)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def run_urls(text):
    return re.findall(r"https://\S+/pscheduler/tasks/[0-9a-f-]+/runs/[0-9a-f-]+", text)


def task_url(text):
    urls = run_urls(text)
    return urls[0].rsplit("/runs/", 1)[0] if urls else None


@pytest.fixture(scope="session")
def nodes():
    src = pscheduler_source()
    if src is None:
        if in_ci():
            pytest.fail("CI: " + WHERE_TO_GET, pytrace=False)
        _missing_notice.append(WHERE_TO_GET)
        pytest.skip(WHERE_TO_GET)
    if os.geteuid() != 0:
        pytest.skip("the real pScheduler lab needs root (namespaces, PostgreSQL clusters)")
    env = dict(os.environ, PSCHEDULER_SRC=src, RPS=os.environ.get("RPS", "/srv/jumbo-rps"))
    # Upstream as released, whatever the caller's environment says (the experiment is asked
    # for by the test that measures it: Nodes.restart).
    env.pop("RPS_UPSTREAM_FIXES", None)
    down = ["bash", NODES, "down"]
    up = subprocess.run(["bash", NODES, "up"], env=env, stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT, universal_newlines=True, timeout=600)
    if up.returncode != 0:
        subprocess.run(down, env=env, timeout=300)
        pytest.fail("real pScheduler lab did not come up:\n" + up.stdout, pytrace=False)
    try:
        yield Nodes(env)
    finally:
        subprocess.run(down, env=env, timeout=300)


@pytest.fixture(scope="session")
def lab_opensearch(nodes):
    """A real OpenSearch inside node a's namespace (127.0.0.1 there), where its archiver
    writes; stopped by PID before the namespace goes. Port: RPS_OPENSEARCH_PORT (9261)."""
    port = os.environ.get("RPS_OPENSEARCH_PORT", "9261")
    env = dict(os.environ, OPENSEARCH_PORT=port)
    argv = ["ip", "netns", "exec", NETNS["a"], "bash", OPENSEARCH]
    started = subprocess.run(argv + ["start"], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, universal_newlines=True, timeout=300)
    try:
        assert started.returncode == 0, started.stdout
        yield "http://127.0.0.1:%s" % port
    finally:
        subprocess.run(argv + ["stop"], env=env, timeout=120)
