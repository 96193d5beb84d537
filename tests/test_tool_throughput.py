"""The throughput phase's arithmetic and its failure paths that need no lab.

Real parts: the port-busy and iperf3-missing cases start (or fail to start) the real
iperf3; the MSS inference is fed congestion windows recorded from real iperf3 runs.
"""

import json
import os
import socket
import subprocess
import sys
import time

import pytest

from jumbo.core.mtu import MSS_TOLERANCE
from jumbo.core.spec import slot as slots
from jumbo.tool import throughput as tp

SPEC = {"dest": "dst", "throughput": {"duration": "PT2S", "omit": "PT0S", "rounds": 1}}


def test_duration_zero_without_throughput():
    assert tp.duration({"dest": "x"}) == 0
    assert tp.run_legs({"dest": "x"}, "x", 5600, 9000) is None


def test_duration_counts_every_leg_and_set_up():
    # The slot pays for working legs (-O + -t + a fixed overhead each); a hanging leg is still
    # killed at its own, longer, leg_timeout and the deadline leaves the rest out.
    per_leg = 2 + slots.LEG_OVERHEAD
    assert tp.leg_timeout(tp.settings(SPEC)) > per_leg
    one = tp.duration(SPEC)
    assert one == 4 * per_leg + slots.FIRST_CONNECT + slots.LEGS_TEARDOWN
    both = dict(SPEC, throughput=dict(SPEC["throughput"], direction="both"))
    ab = dict(SPEC, throughput=dict(SPEC["throughput"], order="ab"))
    three = dict(SPEC, throughput=dict(SPEC["throughput"], rounds=3, omit="PT1S"))
    assert tp.leg_count(both) == 8 and tp.duration(both) > one
    assert tp.leg_count(ab) == 2 and tp.duration(ab) < one
    assert tp.leg_count(three) == 12
    assert tp.duration(three) == 12 * (2 + 1 + slots.LEG_OVERHEAD) + slots.FIRST_CONNECT + slots.LEGS_TEARDOWN


def test_abba_plan_and_mss_per_family():
    legs, info = tp.plan(SPEC, 9000, 4)
    assert [leg["mtu"] for leg in legs] == [1500, 9000, 9000, 1500]
    assert [leg["mss"] for leg in legs] == [1460, 8960, 8960, 1460]
    assert info["jumbo-mtu"] == 9000 and info["skipped"] is None
    legs, _ = tp.plan(SPEC, 9000, 6)
    assert [leg["mss"] for leg in legs] == [1440, 8940, 8940, 1440]
    both = dict(SPEC, throughput=dict(SPEC["throughput"], direction="both", order="ab"))
    legs, _ = tp.plan(both, 9000, 4)
    assert [(leg["mtu"], leg["direction"]) for leg in legs] == [
        (1500, "forward"), (1500, "reverse"), (9000, "forward"), (9000, "reverse")]


def test_path_mtu_decides_the_jumbo_leg():
    legs, info = tp.plan(SPEC, 8950, 4)
    assert info["jumbo-mtu"] == 8950 and "8950" in info["note"]
    assert [leg["mss"] for leg in legs if leg["size"] == "jumbo"] == [8910, 8910]
    _, info = tp.plan(SPEC, 9216, 4)
    assert info["jumbo-mtu"] == 9000
    legs, info = tp.plan(SPEC, 1500, 4)
    assert info["jumbo-mtu"] is None and "1500" in info["skipped"]
    assert [leg["mtu"] for leg in legs] == [1500, 1500]  # the standard legs still run
    _, info = tp.plan(SPEC, 9000, 4, local_mtu=1500)
    assert info["jumbo-mtu"] is None


def test_observed_mss_from_window_samples():
    # Congestion windows printed by iperf3 3.12 on this machine (cwnd x tcpi_snd_mss).
    assert tp.observed_mss([457568, 553136], 1460) == (1448, None)
    assert tp.observed_mss([17896, 8948, 8948], 8960) == (8948, None)
    assert tp.observed_mss([411608, 1020072], 8960) == (8948, None)
    # A 1448-byte MSS on a leg that asked for 8960 is caught, whatever the divisor.
    seen, _ = tp.observed_mss([14480, 28960, 43440], 8960)
    assert not 8960 - MSS_TOLERANCE <= seen <= 8960
    assert tp.observed_mss([], 1460)[0] is None


def test_gain_noise_from_the_spread_of_repeated_runs():
    std = tp.stats([4e9, 5e9])
    jum = tp.stats([11e9, 13e9])
    gain, noise = tp.gain_and_noise(std, jum)
    assert gain == pytest.approx(12 / 4.5)
    cv_s, cv_j = std["stdev"] / 4.5e9, jum["stdev"] / 12e9
    assert noise == pytest.approx(gain * ((cv_s ** 2 + cv_j ** 2) / 2) ** 0.5)
    assert tp.gain_and_noise(tp.stats([4e9]), tp.stats([8e9])) == (2.0, None)


def test_mathis_ceiling_and_loss_floor():
    run = {"succeeded": True, "rtt": 0.01, "bytes": 1448 * 10000, "observed-mss": 1448,
           "mss": 1460, "retransmits": 1, "throughput": 1e8}
    m = tp.mathis([run])
    assert m["loss"] == pytest.approx(1e-4)
    assert m["ceiling"] == pytest.approx(1448 * 8 / 0.01 * 1.5 ** 0.5 / 1e-2)
    run["retransmits"] = 0
    m = tp.mathis([run])
    assert m["loss-floored"] and m["loss"] == pytest.approx(0.5e-4)


def test_choose_port_is_free_and_in_range():
    port = tp.choose_port()
    assert tp.PORT_RANGE[0] <= port <= tp.PORT_RANGE[1]
    assert tp.port_free(port)


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


def test_phase_durations_parse_as_the_spec_does():
    """The phase reads the spec's ISO durations, and refuses what the spec refuses."""
    for text, value in (("PT10S", 10.0), ("PT0.5S", 0.5), ("PT1M30S", 90.0), ("P1DT2H", 93600.0)):
        assert tp.settings({"throughput": {"duration": text}}).seconds == value
    for bad in ("ten", "P", "PT", ""):
        with pytest.raises(ValueError):
            tp.settings({"throughput": {"duration": bad}})


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
