"""jumbo.tool.throughput.iperf: iperf3 as a process. Real sockets decide whether a port is
free, real child processes are started in their own session and ended by their PID, and
the document reader is fed what `iperf3 -s -J` prints (one pretty-printed document after
another)."""

import importlib
import json
import os
import socket
import sys
import time

from jumbo.tool.throughput import iperf

plans = importlib.import_module("jumbo.tool.throughput.plan")


def test_iperf3_is_found_in_path_or_said_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert iperf.iperf3_path() is None
    assert iperf.available() == (False, "iperf3 is not installed (not found in PATH)")
    fake = tmp_path / "iperf3"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    assert iperf.iperf3_path() == str(fake)
    assert iperf.available() == (True, None)


def test_a_port_with_a_listener_is_busy_and_free_once_it_closes():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.listen(1)
    try:
        assert iperf.port_free(port, bind="127.0.0.1") is False
        assert iperf.port_free(port) is False
    finally:
        sock.close()
    assert iperf.port_free(port, bind="127.0.0.1") is True


def test_an_address_not_of_this_host_is_no_free_port():
    # 198.18.0.0/15 is on no interface of the root namespace: bind fails (not EADDRINUSE).
    assert iperf.port_free(5600, bind="198.18.255.254") is False


def test_choose_port_is_free_and_in_range():
    port = iperf.choose_port()
    assert plans.PORT_RANGE == (5600, 5999)
    assert plans.PORT_RANGE[0] <= port <= plans.PORT_RANGE[1]
    assert iperf.port_free(port)


def test_choose_port_skips_a_busy_port():
    sock = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    sock.bind(("::", 0))
    sock.listen(1)
    busy = sock.getsockname()[1]
    try:
        # A range of one busy port: every try fails, the last pick is returned (checked only).
        assert iperf.choose_port(busy, busy, tries=3) == busy
        chosen = iperf.choose_port(busy, busy + 1, tries=64)
        assert chosen == busy + 1 or not iperf.port_free(busy + 1)
    finally:
        sock.close()


PRETTY = '{\n\t"start":\t{\n\t\t"version":\t"iperf 3.12"\n\t}\n}\n'


def test_json_documents_reads_each_document_of_a_concatenation():
    text = "-----------\nServer listening on 5201\n" + PRETTY + PRETTY.replace("3.12", "3.16") \
        + '{"error": "interrupt - the server has terminated"}\n'
    docs = iperf.json_documents(text)
    assert [d.get("start", {}).get("version") for d in docs] == ["iperf 3.12", "iperf 3.16", None]
    assert docs[2] == {"error": "interrupt - the server has terminated"}
    assert iperf.json_documents('{"a": 1}{"b": {"c": 2}}') == [{"a": 1}, {"b": {"c": 2}}]
    assert iperf.first_document(text) == json.loads(PRETTY)


def test_a_truncated_document_ends_the_reading():
    assert iperf.json_documents(PRETTY + PRETTY[:20]) == [json.loads(PRETTY)]
    assert iperf.json_documents("no json here") == []
    assert iperf.first_document("") is None and iperf.first_document(None) is None
    assert iperf.first_document("{broken") is None


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purpose; waitpid was done by kill().
    return True


def test_spawn_starts_its_own_session_and_kill_ends_it_by_pid():
    proc = iperf.spawn([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        assert os.getsid(proc.pid) == proc.pid != os.getsid(0)
        iperf.kill(proc)
        assert proc.returncode == -15
        assert not _alive(proc.pid)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_kill_escalates_to_sigkill_for_a_process_that_ignores_sigterm():
    code = ("import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "print('ready', flush=True); time.sleep(120)")
    proc = iperf.spawn([sys.executable, "-c", code])
    try:
        assert proc.stdout.readline().strip() == "ready"
        started = time.time()
        iperf.kill(proc)
        assert proc.returncode == -9
        assert time.time() - started < 60  # bounded (2 s per signal), not a timing claim
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    iperf.kill(proc)  # an ended process: nothing to do


def test_a_spawned_process_dies_with_its_parent():
    """PR_SET_PDEATHSIG: an intermediate process spawns a sleeper and is killed; the sleeper
    gets SIGKILL with it (no client left sending behind a killed participant)."""
    code = ("import sys; sys.path[:0] = %r; from jumbo.tool.throughput import iperf; "
            "p = iperf.spawn([sys.executable, '-c', 'import time; time.sleep(120)']); "
            "print(p.pid, flush=True); import time; time.sleep(120)" % (sys.path,))
    parent = iperf.spawn([sys.executable, "-c", code])
    child = None
    try:
        child = int(parent.stdout.readline())
        assert _alive(child)
        iperf.kill(parent)
        for _ in range(200):
            try:
                with open("/proc/%d/stat" % child) as stat:
                    state = stat.read().rsplit(")", 1)[1].split()[0]
            except FileNotFoundError:
                break
            if state == "Z":
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the child outlived its parent")
    finally:
        iperf.kill(parent)
        if child is not None and _alive(child):
            os.kill(child, 9)  # ours: started by the parent this test started
