"""The firefly collector on a lab (root): real TCP transfers between namespaces at both MSS,
fireflies about them from a stand-in for flowd-go (lab/flowd_standin.py: the kernel's own
TCP_INFO of those sockets, in flowd-go's format), jumbo-fireflies running as an unprivileged
user on its own host, and what it stored checked against the truth.

Topology: s (MTU 9000) - r - j (MTU 9000): a 9000 path, MSS 8948 (IPv4) / 8928 (IPv6);
          r - n (MTU 1500): n advertises a 1500-byte MSS, so s sends at 1448 / 1428;
          r - c (MTU 1500): the collector.
Flows from s, both families: long ones to j and n (paced over several enrichment periods),
and a short one to j that ends before its first periodic firefly (its end carries usage.sent,
as an application's end firefly does): those bytes have no MSS.
Truth: the bytes the sender wrote (equal to what the sinks read), per destination: j's are
jumbo-sized, n's standard, the short flow's unknown. Within 1 %.
"""

import json
import os
import pwd
import shutil
import signal
import sys
import tempfile
import time

import pytest

from lab_support import ROOT, needs_lab
from lab.netns import Lab
from lab.topology import Link, Node, Topology
from jumbo.archive.firefly_store import open_fireflies
from jumbo.core.mtu import STANDARD_MTU, mss_for

pytestmark = needs_lab

USER = "jumbotest"
PERIOD = 1.0
SINK_PORT = 5001
COLLECTOR_PORT = 10514
LONG = {"j": 24000000, "n": 6000000}       # bytes per long flow
SHORT = 300000
SECONDS = 3.5                              # a long flow spans three periods and more
SITES = {"s": "SITE-S", "j": "SITE-J", "n": "SITE-N", "c": "SITE-C"}

TOPOLOGY = Topology("fireflies", [Node("s"), Node("r", router=True), Node("j"), Node("n"), Node("c")],
                    [Link("s", "r", 9000), Link("r", "j", 9000), Link("r", "n", 1500),
                     Link("r", "c", 1500)])
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "python-jumbo")]))


def _sites_file(directory):
    path = os.path.join(directory, "sites.txt")
    with open(path, "w") as handle:
        for host, site in SITES.items():
            for version in (4, 6):
                handle.write("%s %s\n" % (TOPOLOGY.address(host, version), site))
    return path


@pytest.fixture
def workdir():
    path = tempfile.mkdtemp(prefix="jumbo-fireflies-lab-")
    entry = pwd.getpwnam(USER)
    os.chown(path, entry.pw_uid, entry.pw_gid)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _wait_line(lab, path, text, timeout=20.0):
    def seen():
        return os.path.exists(path) and text in open(path).read()
    assert lab.wait_for(seen, timeout=timeout), "%s never said %r: %s" % (
        path, text, open(path).read() if os.path.exists(path) else "(nothing)")


def _stop(proc, timeout=30):
    """SIGTERM to the collector itself, by its PID: the child of the runuser we started (ip
    netns exec is runuser itself); runuser then exits with the collector's status."""
    with open("/proc/%d/task/%d/children" % (proc.pid, proc.pid)) as handle:
        children = [int(pid) for pid in handle.read().split()]
    assert len(children) == 1, children
    os.kill(children[0], signal.SIGTERM)
    return proc.wait(timeout)


def test_used_from_fireflies_of_real_transfers_within_one_percent(workdir):
    url = "sqlite:///" + os.path.join(workdir, "jumbo.db")
    log = os.path.join(workdir, "collector.log")
    with Lab(TOPOLOGY) as lab:
        sinks = {}
        for host in ("j", "n"):
            out = open(os.path.join(workdir, "sink-%s.out" % host), "w")
            sinks[host] = (lab.popen(host, [sys.executable, "-m", "lab.tcp_sink", "::", str(SINK_PORT)],
                                     env=ENV, cwd=ROOT, stdout=out, stderr=out), out.name)
        with open(log, "w") as err:
            collector = lab.popen("c", [sys.executable, "-m", "jumbo.report.fireflies_cli",
                                        "--store", url, "--sites", _sites_file(workdir), "--listen", "::",
                                        "--port", str(COLLECTOR_PORT), "--flush", "1"],
                                  user=USER, env=ENV, cwd=ROOT, stdout=err, stderr=err)
        _wait_line(lab, log, "listening on")
        for host, path in sinks.values():
            _wait_line(lab, path, "listening")
        flows = []
        for version in (4, 6):
            for host, nbytes in LONG.items():
                flows.append("%s,%d,%d,%g" % (TOPOLOGY.address(host, version), SINK_PORT, nbytes, SECONDS))
        flows.append("%s,%d,%d,0,usage" % (TOPOLOGY.address("j", 4), SINK_PORT, SHORT))
        sent = lab.run("s", [sys.executable, "-m", "lab.flowd_standin", "--period", str(PERIOD),
                             "--collector", "[%s]:%d" % (TOPOLOGY.address("c", 6), COLLECTOR_PORT)]
                       + ["--flow=" + f for f in flows], env=ENV, timeout=120)
        results = [json.loads(line) for line in sent.stdout.splitlines()]
        time.sleep(PERIOD)
        assert _stop(collector) == 0, open(log).read()
        for proc, _path in sinks.values():
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(10)
    read = sum(json.loads(line)["bytes"] for _p, path in sinks.values()
               for line in open(path) if line.startswith("{"))
    assert read == sum(r["written"] for r in results) == sum(LONG.values()) * 2 + SHORT
    # The kernel sent at the MSS the topology gives: j's path is 9000, n's 1500.
    truth = {}
    for r in results:
        dest = "j" if r["dest"] in (TOPOLOGY.address("j", 4), TOPOLOGY.address("j", 6)) else "n"
        assert (r["snd_mss"] > mss_for(STANDARD_MTU, r["family"])) == (dest == "j"), r
        kind = "unknown" if r["usage"] else ("jumbo" if dest == "j" else "standard")
        cell = truth.setdefault(("SITE-S", SITES[dest], r["family"]), dict.fromkeys(
            ("jumbo", "standard", "unknown"), 0))
        cell[kind] += r["written"]
    store = open_fireflies(url)
    try:
        stored = store.sums(0, time.time() + 3600)
    finally:
        store.close()
    assert set(stored) == set(truth), (stored, truth)
    for cell, want in truth.items():
        jumbo, standard, unknown, nflows = stored[cell]
        for got, expected in ((jumbo, want["jumbo"]), (standard, want["standard"]),
                              (unknown, want["unknown"])):
            assert abs(got - expected) <= 0.01 * expected, (cell, stored[cell], want)
        assert nflows == (2 if cell == ("SITE-S", "SITE-J", 4) else 1)
    # The used share (bytes with a known MSS) and the unknown-MSS bytes against the truth.
    tj = sum(t["jumbo"] for t in truth.values())
    ts = sum(t["standard"] for t in truth.values())
    sj = sum(s[0] for s in stored.values())
    ss = sum(s[1] for s in stored.values())
    assert abs(sj / float(sj + ss) - tj / float(tj + ts)) <= 0.01 * tj / float(tj + ts)
    assert abs(sum(s[2] for s in stored.values()) - SHORT) <= 0.01 * SHORT
    assert "stopped;" in open(log).read()
