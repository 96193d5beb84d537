"""jumbo.tool.throughput.legs: participant 0's iperf3 clients. The command line each leg runs
is checked option by option against iperf3's manual (-c -p -J -4/-6 -t -i -M -P
--connect-timeout in ms, --extra-data, -O, -R --get-server-output, -C, --fq-rate); a client's
outcome is read from real child processes standing in for iperf3 (what it prints, its exit
status, a hang that is killed)."""

import sys
import time

import pytest

from jumbo.core.spec import ThroughputSpec
from jumbo.tool.throughput import legs

LEG = {"order": 2, "round": 0, "size": "jumbo", "direction": "forward", "mtu": 9000,
       "mss": 8960}


@pytest.fixture
def iperf3_at(tmp_path, monkeypatch):
    fake = tmp_path / "iperf3"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    return str(fake)


def test_a_forward_legs_command_line(iperf3_at):
    phase = ThroughputSpec({"duration": "PT10S", "omit": "PT2S"})
    assert legs.client_argv(phase, LEG, "198.18.0.2", 5601, 4, False, 4) == [
        iperf3_at, "-c", "198.18.0.2", "-p", "5601", "-J", "-4", "-t", "10", "-i", "0.5",
        "-M", "8960", "-P", "1", "--connect-timeout", "3000",
        "--extra-data", "jumbocheck leg 2 of 4", "-O", "2"]


def test_a_reverse_last_leg_with_every_option(iperf3_at):
    phase = ThroughputSpec({"duration": "PT2.5S", "omit": "PT0S", "parallel": 4,
                            "congestion": "bbr", "fq-rate": 5e9})
    argv = legs.client_argv(phase, dict(LEG, direction="reverse", order=3), "fd00::2", 5999, 6,
                            True, 4)
    assert argv == [
        iperf3_at, "-c", "fd00::2", "-p", "5999", "-J", "-6", "-t", "2.5", "-i", "0.1",
        "-M", "8960", "-P", "4", "--connect-timeout", "3000",
        "--extra-data", "jumbocheck leg 3 of 4 last", "-R", "--get-server-output",
        "-C", "bbr", "--fq-rate", "5000000000"]


@pytest.mark.parametrize("error,again", [
    ("iperf3: error - unable to connect to server: Connection refused", True),
    ("iperf3: error - the server is busy running a test. try again later", True),
    ("iperf3: error - control socket has closed unexpectedly", True),
    ("iperf3: error - No route to host", True),
    ("iperf3: Connection reset by peer", True),
    ("iperf3: error - test authorization failed", False),
    ("iperf3 did not finish within 20 s: killed", False),
])
def test_which_client_errors_are_worth_another_try(error, again):
    assert legs.retryable(error) is again


def _python(code):
    return [sys.executable, "-c", code]


def test_a_client_that_prints_its_document():
    doc, error, timed_out = legs.run_client(_python('print(\'{"end": {}}\')'), 30)
    assert (doc, error, timed_out) == ({"end": {}}, None, False)


def test_a_client_error_is_read_from_its_document_or_its_stderr():
    doc, error, _ = legs.run_client(
        _python('import sys; print(\'{"error": "unable to connect to server"}\'); sys.exit(1)'),
        30)
    assert doc == {"error": "unable to connect to server"}
    assert error == "iperf3: unable to connect to server"
    doc, error, _ = legs.run_client(_python('import sys; sys.stderr.write("bad -M\\n"); '
                                            'sys.exit(1)'), 30)
    assert (doc, error) == (None, "iperf3: bad -M")
    doc, error, _ = legs.run_client(_python("import sys; sys.exit(3)"), 30)
    assert (doc, error) == (None, "iperf3: status 3")
    doc, error, _ = legs.run_client(_python('import sys; print("{}"); sys.exit(2)'), 30)
    assert (doc, error) == ({}, "iperf3 exited with status 2")


def test_a_client_killed_by_a_signal_is_said_so():
    code = 'import os, signal; print("{}", flush=True); os.kill(os.getpid(), signal.SIGKILL)'
    doc, error, timed_out = legs.run_client(_python(code), 30)
    assert (doc, error, timed_out) == ({}, "iperf3 was killed (signal 9) before the leg ended",
                                       False)


def test_a_client_that_hangs_is_killed_at_its_bound():
    code = 'import time; print(\'{"start": {}}\', flush=True); time.sleep(120)'
    doc, error, timed_out = legs.run_client(_python(code), 2)
    assert (doc, error, timed_out) == ({"start": {}}, "iperf3 did not finish within 2 s: killed",
                                       True)


def test_no_leg_starts_that_cannot_end_before_the_deadline(iperf3_at):
    """2 s left for PT2S legs (each needs -t + -O + 1 s): every leg fails at once, none is
    started (the iperf3 in PATH would print nothing: a started leg would say so)."""
    spec = {"dest": "d", "throughput": {"duration": "PT2S", "omit": "PT0S", "order": "ab"}}
    result = legs.run_legs(spec, "198.18.0.2", 5600, 9000, 4, deadline=time.time() + 2)
    assert [r["error"] for r in result["runs"]] == ["no time left before the deadline"] * 2
    assert result["verdict"] == "failed"
    assert legs.run_legs({"dest": "d"}, "198.18.0.2", 5600, 9000) is None
