"""jumbo-fireflies, the command (jumbo.report.fireflies_cli), as a process on the loopback:
bad arguments exit 2 with a message; hostile datagrams are counted by kind and change nothing;
SIGTERM stores what it holds and exits 0 at once (not at the next flush); senders outside
--allow-from are refused; a store that is down at the stop exits 3 naming what was lost."""

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from jumbo.archive.firefly_store import open_fireflies

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "python-jumbo")]))


def ongoing(sport, sent, mss=8948, src="198.18.0.1"):
    return ("<134>1 2026-11-26T04:00:01+00:00 h flowd-go - firefly-json - " + json.dumps({
        "version": 1, "flow-lifecycle": {"state": "ongoing", "start-time": "2026-11-26T04:00:00+00:00"},
        "flow-id": {"afi": "ipv4", "src-ip": src, "dst-ip": "198.18.1.2", "protocol": "tcp",
                    "src-port": sport, "dst-port": 1094},
        "context": {"experiment-id": 1, "activity-id": 1, "application": "x"},
        "netlink": {"tcpInfo": {"sndMss": mss, "pMtu": 9000, "bytesSent": sent}}})).encode()


@pytest.fixture
def sites(tmp_path):
    path = tmp_path / "sites.txt"
    path.write_text("198.18.0.0/24 SITE-A\n198.18.1.0/24 SITE-B\n")
    return str(path)


def start(args, tmp_path):
    err = open(str(tmp_path / "collector.err"), "w+")
    proc = subprocess.Popen([sys.executable, "-m", "jumbo.report.fireflies_cli", "--listen", "127.0.0.1",
                             "--port", "0"] + args, env=ENV, stdout=err, stderr=err)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        err.seek(0)
        text = err.read()
        if "listening on" in text:
            return proc, err, int(text.split("port ")[1].split()[0])
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("the collector did not start: %s" % text)


def stop(proc, err):
    proc.send_signal(signal.SIGTERM)
    status = proc.wait(10)          # the flush is 60 s away: only the wake-up ends it this soon
    err.seek(0)
    return status, err.read()


@pytest.mark.parametrize("args, why", [
    (["--port", "70000"], "not a UDP port"),
    (["--flush", "0"], "--flush"),
    (["--expiry", "1"], "--expiry"),
    (["--max-flows", "0"], "--max-flows"),
    (["--allow-from", "198.18.0.0/33"], "--allow-from"),
    (["--listen", "localhost"], "--listen"),
    (["--bogus"], "unrecognized"),
])
def test_bad_arguments_exit_2(args, why, sites, tmp_path):
    done = subprocess.run([sys.executable, "-m", "jumbo.report.fireflies_cli", "--store",
                           "sqlite:///%s/j.db" % tmp_path, "--sites", sites] + args,
                          env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert done.returncode == 2 and why in done.stderr and "Traceback" not in done.stderr
    assert not os.path.exists(str(tmp_path / "j.db"))


def test_sigterm_stores_what_it_holds_and_hostile_datagrams_change_nothing(sites, tmp_path):
    url = "sqlite:///%s/j.db" % tmp_path
    proc, err, port = start(["--store", url, "--sites", sites], tmp_path)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for data in (ongoing(1, 5000), ongoing(1, 9000), ongoing(2, 700, mss=1448),
                 b"{" * 5000, b"x" * 20000, b"<1>1 -", ongoing(3, 10 ** 19),
                 ongoing(4, 10, src="198.18.1.256")):
        sock.sendto(data, ("127.0.0.1", port))
    sock.close()
    time.sleep(1.0)
    status, text = stop(proc, err)
    assert status == 0, text
    assert "stopped;" in text and "fireflies=3" in text and "rejected=5" in text
    store = open_fireflies(url)
    assert store.sums(0, time.time() + 60) == {("SITE-A", "SITE-B", 4): [9000, 700, 0, 2]}
    store.close()


def test_senders_outside_allow_from_are_refused(sites, tmp_path):
    url = "sqlite:///%s/j.db" % tmp_path
    proc, err, port = start(["--store", url, "--sites", sites, "--allow-from", "198.18.0.0/15"], tmp_path)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.sendto(ongoing(1, 5000), ("127.0.0.1", port))
    sock.close()
    time.sleep(1.0)
    status, text = stop(proc, err)
    assert status == 0 and "sender not allowed=1" in text and "fireflies=0" in text
    store = open_fireflies(url)
    assert store.sums(0, time.time() + 60) == {}
    store.close()


def test_a_store_down_at_the_stop_exits_3_naming_what_is_lost(sites, tmp_path):
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))
    url = "http://127.0.0.1:%d" % dead.getsockname()[1]        # bound, never listening: refused
    proc, err, port = start(["--store", url, "--sites", sites], tmp_path)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.sendto(ongoing(1, 5000), ("127.0.0.1", port))
    sock.close()
    time.sleep(1.0)
    status, text = stop(proc, err)
    dead.close()
    assert status == 3, text
    assert "1 site pairs not stored" in text and "Traceback" not in text
