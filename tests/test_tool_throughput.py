"""The throughput phase's failure paths that need no lab, through the package's face (its
arithmetic is tested by module: test_tool_throughput_plan, _proof, _summary).

Real parts: the port-busy and iperf3-missing cases start (or fail to start) the real
iperf3.
"""

import json
import os
import socket
import subprocess
import sys
import time

from jumbo.tool import throughput as tp

SPEC = {"dest": "dst", "throughput": {"duration": "PT2S", "omit": "PT0S", "rounds": 1}}


def test_no_legs_run_without_throughput():
    assert tp.run_legs({"dest": "x"}, "x", 5600, 9000) is None


def test_serve_refuses_a_busy_port():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    port = sock.getsockname()[1]
    try:
        started = time.time()
        result = tp.serve(SPEC, port, time.time() + 20, bind="127.0.0.1")
        assert not result["succeeded"]
        assert "port %d is busy" % port in result["error"]
        assert time.time() - started < 5
    finally:
        sock.close()


def test_iperf3_missing_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert tp.available() == (False, "iperf3 is not installed (not found in PATH)")
    served = tp.serve(SPEC, tp.choose_port(), time.time() + 5)
    assert not served["succeeded"] and "iperf3 is not installed" in served["error"]
    result = tp.run_legs(SPEC, "127.0.0.1", 5999, 9000, 4, time.time() + 5)
    assert result["error"] and "iperf3 is not installed" in result["error"]
    assert len(result["runs"]) == 4
    assert all(not r["succeeded"] and "iperf3" in r["error"] for r in result["runs"])
    assert result["verdict"] == "failed"


def test_command_line_duration_and_port():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.check_output([sys.executable, "-m", "jumbo.tool.throughput", "duration",
                                   "--spec", json.dumps(SPEC)], env=env,
                                  universal_newlines=True)
    assert json.loads(out) == {"duration": tp.duration(SPEC)}
    out = subprocess.check_output([sys.executable, "-m", "jumbo.tool.throughput", "port"], env=env,
                                  universal_newlines=True)
    assert tp.PORT_RANGE[0] <= json.loads(out)["port"] <= tp.PORT_RANGE[1]
    bad = subprocess.run([sys.executable, "-m", "jumbo.tool.throughput", "duration", "--spec",
                          json.dumps({"throughput": {"duration": "ten"}})], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True)
    assert bad.returncode == 1 and "Traceback" not in bad.stderr


def _iperf3_document(doc):
    """A document as `iperf3 -s -J` prints it (cJSON: tab-indented, braces of the top level
    at column 0), as lines."""
    return [line + "\n" for line in json.dumps(doc, indent="\t").split("\n")]


def test_the_server_log_reads_each_document_once_and_keeps_the_legs_only():
    """Issue 32 row 2: 20,000 clients refused (as a flooding peer makes them) around the
    run's 4 legs: each document is parsed when its last line arrives (nothing held between
    documents), the report keeps the 4 legs and counts the 20,000 under one reason."""
    from jumbo.tool.throughput import server
    log = server.ServerLog()
    refused = _iperf3_document({"start": {"connected": []}, "intervals": [], "end": {},
                                "error": "unable to receive parameters from client: "
                                         "Connection reset by peer"})
    for leg in range(4):
        for _ in range(5000):
            for line in refused:
                log.feed(line)
            assert log.lines == []  # nothing kept between documents
        mark = "jumbocheck leg %d of 4%s" % (leg, " last" if leg == 3 else "")
        for line in _iperf3_document({"start": {}, "intervals": [], "extra_data": mark,
                                      "end": {"sum_received": {"bytes": 1000 + leg}}}):
            log.feed(line)
    assert log.last.is_set()
    result = {}
    log.report(result)
    assert result["refused"] == 20000 and result["served"] == 4 and result["others"] == 0
    assert [t["leg"] for t in result["tests"]] == [0, 1, 2, 3]
    assert list(result["refusals"].values()) == [20000]
    assert len(json.dumps(result)) < 1024


def test_the_servers_own_stop_is_never_a_served_leg():
    """iperf3 stopped at the slot's end prints a last document with "interrupt - the server
    has terminated", which may repeat the last test's start (seen in CI without
    authentication: 5 legs served of 4): it is our own signal, not a leg."""
    from jumbo.tool.throughput import server
    log = server.ServerLog()
    for leg in range(4):
        mark = "jumbocheck leg %d of 4%s" % (leg, " last" if leg == 3 else "")
        for line in _iperf3_document({"start": {}, "intervals": [], "extra_data": mark,
                                      "end": {"sum_received": {"bytes": 1000 + leg}}}):
            log.feed(line)
    for line in _iperf3_document({"start": {}, "intervals": [], "extra_data": mark, "end": {},
                                  "error": "interrupt - the server has terminated"}):
        log.feed(line)
    result = {}
    log.report(result)
    assert result["served"] == 4 and result["refused"] == 0 and result["others"] == 0
    assert [t["leg"] for t in result["tests"]] == [0, 1, 2, 3]
    assert not [t for t in result["tests"] if t["error"]]
