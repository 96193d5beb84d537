"""The `jumbocheck` tool plugin, every method run through the harness as the server runs it.

No lab and no root needed here: this file also runs under Python 3.6 + jsonschema 3.0.1
(scripts/check-compat.sh). Measurements on real paths are in tests/lab/test_tool_lab.py.
"""

import datetime
import ipaddress
import json
import os
import re
import stat

import jsonschema
import pytest

import harness

PLUGIN_DIR = os.path.join(harness.ROOT, "pscheduler-tool-jumbocheck", "jumbocheck")
METHODS = ["enumerate", "can-run", "duration", "participant-data", "run", "merged-results"]

SPEC = {"schema": 1, "dest": "198.18.0.2"}
REVERSE = {"schema": 1, "dest": "198.18.0.2", "reverse": True}
# A jumbo-throughput spec (the paired legs are their own test since pmtu became background).
PAIR = {"schema": 1, "dest": "198.18.0.2", "duration": "PT2S"}

# Inputs that are not what a method expects: each must get a clean answer.
BAD_INPUTS = ["", "{", "[]", "42", "null", '"pmtu"', '{"type": 5}',
              '{"type": "pmtu", "spec": []}', '{"type": "pmtu", "spec": {"dest": 7}}',
              '{"type": "rtt", "spec": {"dest": "a.example"}}',
              '{"type": "pmtu", "spec": {"dest": "a.example", "bogus": 1}}',
              '{"type": "pmtu", "spec": {"dest": "a.example", "schema": 9}}']


def call(method, stdin=None, **kwargs):
    return harness.invoke("tool", "jumbocheck", method, stdin=stdin, **kwargs)


def as_test(spec):
    return {"type": "pmtu", "spec": spec}


def as_pair(spec):
    return {"type": "jumbo-throughput", "spec": spec}


def assert_no_traceback(done):
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout, done


def assert_clean_failure(done):
    assert done.status != 0, done
    assert_no_traceback(done)
    assert done.stderr.strip(), done
    assert done.stderr.endswith("\n"), done


# ------------------------------------------------------------------------------------------
# Layout and enumerate (contract 4.1)

ENUMERATION_TOOL = {
    "type": "object",
    "properties": {
        "schema": {"type": "integer", "enum": [1]},
        "name": {"type": "string"},
        "description": {"type": "string"},
        "version": {"type": "string", "pattern": r"^[0-9]+(\.[0-9]+)*[A-Za-z0-9-+]*$"},
        "tests": {"type": "array", "items": {"type": "string"}},
        "preference": {"type": "integer"},
        "scheduling-class": {"type": "string"},
        "maintainer": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "email": {"type": "string", "pattern": "@"},
                           "href": {"type": "string"}},
            "required": ["name"],
            "additionalProperties": False,
        },
    },
    "required": ["name", "description", "version", "tests", "preference", "maintainer"],
    "additionalProperties": False,
}


@pytest.mark.parametrize("method", METHODS)
def test_every_method_is_an_executable_with_a_shebang(method):
    path = os.path.join(PLUGIN_DIR, method)
    mode = os.stat(path).st_mode
    assert stat.S_IMODE(mode) == 0o755
    with open(path) as handle:
        first = handle.readline()
    assert first.startswith("#!/usr/bin/env python3") or first.startswith("#!/bin/sed -e 1d")


def test_enumerate_passes_the_warm_boot_checks():
    done = call("enumerate")
    assert done.status == 0, done
    enumeration = done.sql_json()
    jsonschema.Draft7Validator(ENUMERATION_TOOL).validate(enumeration)
    assert enumeration["name"] == "jumbocheck" == os.path.basename(PLUGIN_DIR)
    # One tool, two tests: the background pmtu and the exclusive paired throughput.
    assert enumeration["tests"] == ["pmtu", "jumbo-throughput"]
    assert isinstance(enumeration["preference"], int) and not isinstance(
        enumeration["preference"], bool)
    assert set(enumeration["maintainer"]) == {"name", "email", "href"}


# ------------------------------------------------------------------------------------------
# can-run (contract 4.2): always valid JSON, reasons when declining

def test_can_run_accepts_a_plain_spec():
    done = call("can-run", as_test(SPEC))
    assert done.status == 0, done
    assert done.sql_json() == {"can-run": True}


@pytest.mark.parametrize("text", BAD_INPUTS)
def test_can_run_declines_bad_input_with_valid_json(text):
    done = call("can-run", text)
    assert done.status == 0, done
    assert_no_traceback(done)
    answer = done.sql_json()
    assert answer["can-run"] is False
    assert answer["reasons"] and all(isinstance(r, str) and r for r in answer["reasons"])


def test_can_run_names_the_unsupported_spec_version():
    answer = call("can-run", as_test(dict(SPEC, schema=2))).sql_json()
    assert answer["can-run"] is False
    assert "schema" in " ".join(answer["reasons"])


def test_can_run_declines_the_throughput_phase_without_iperf3():
    # Only the interpreter's own directory on PATH: python3 is there, iperf3 is not.
    path = harness.interpreter_dir()
    assert not os.path.exists(os.path.join(path, "iperf3"))
    done = call("can-run", as_pair(PAIR), env={"PATH": path})
    assert done.status == 0, done
    answer = done.sql_json()
    assert answer["can-run"] is False
    assert any("iperf3" in reason for reason in answer["reasons"]), answer
    # pmtu does not need iperf3.
    plain = call("can-run", as_test(SPEC), env={"PATH": path}).sql_json()
    assert plain == {"can-run": True}


# ------------------------------------------------------------------------------------------
# duration (contract 4.3)

def _seconds(done):
    assert done.status == 0, done
    text = done.sql_json()["duration"]
    match = re.match(r"^PT(\d+)S$", text)
    assert match, text
    return int(match.group(1))


def test_duration_is_whole_seconds_and_grows_with_each_phase():
    plain = _seconds(call("duration", as_test(SPEC)))
    reverse = _seconds(call("duration", as_test(REVERSE)))
    assert 0 < plain < reverse


def test_pair_duration_is_its_legs_plus_a_small_fixed_overhead():
    """The exclusive slot of jumbo-throughput: -O + -t of every leg, plus a per-leg and a
    per-run overhead that do not grow with the legs' length."""
    from jumbo.core.spec import slot
    short = _seconds(call("duration", as_pair(dict(PAIR, duration="PT2S", omit="PT0S"))))
    long = _seconds(call("duration", as_pair(dict(PAIR, duration="PT20S", omit="PT0S"))))
    assert long - short == 4 * 18  # four ABBA legs, 18 s longer each
    fixed = short - 4 * 2
    assert fixed <= 4 * slot.LEG_OVERHEAD + slot.PATH_MTU_BUDGET + 12, fixed
    both = _seconds(call("duration", as_pair(dict(PAIR, direction="both"))))
    assert both > _seconds(call("duration", as_pair(PAIR)))
    # A pmtu spec that still carries the phase is refused, naming the new test.
    done = call("duration", as_test(dict(SPEC, throughput={})))
    assert done.status != 0 and "jumbo-throughput" in done.stderr


def test_duration_is_a_pure_function_of_the_spec():
    answers = {_seconds(call("duration", as_test(REVERSE))) for _ in range(3)}
    assert len(answers) == 1


@pytest.mark.parametrize("text", BAD_INPUTS)
def test_duration_rejects_bad_input_cleanly(text):
    assert_clean_failure(call("duration", text))


# ------------------------------------------------------------------------------------------
# participant-data (contract 4.4)

def test_participant_data_of_the_source():
    done = call("participant-data", {"participant": 0, "test": as_test(REVERSE)})
    assert done.status == 0, done
    data = done.sql_json()
    # The address this node routes from towards the spec's dest (the reflector answers it
    # only), when it has a route there.
    address = data.pop("source-address", None)
    assert address is None or ipaddress.ip_address(address)
    assert data == {"schema": 1, "protocol": 2}


def test_participant_data_of_the_dest_has_ports_and_a_one_time_token():
    from jumbo.tool import runner
    answers = [call("participant-data", {"participant": 1, "test": as_test(REVERSE)}).sql_json()
               for _ in range(2)]
    for data in answers:
        low, high = runner.REFLECTOR_PORTS
        ports = data["reflector-ports"]
        assert len(ports) == len(set(ports)) == runner.REFLECTOR_CANDIDATES
        assert all(low <= port <= high for port in ports)
        assert "reflector-port" not in data
        assert re.match(r"^[0-9a-f]{32}$", data["_token"])
        assert "iperf3-port" not in data
    assert answers[0]["_token"] != answers[1]["_token"]


def test_participant_data_takes_the_iperf3_port_from_the_spec():
    data = call("participant-data", {"participant": 1,
                                     "test": as_pair(dict(PAIR, port=6201))}).sql_json()
    assert data["iperf3-port"] == 6201


@pytest.mark.parametrize("request_", [
    {"participant": 2, "test": as_test(SPEC)}, {"participant": "1", "test": as_test(SPEC)},
    {"participant": True, "test": as_test(SPEC)}, {"participant": 1}, {"test": as_test(SPEC)},
    {"participant": 1, "test": {"type": "pmtu", "spec": {"dest": 1}}}, [], "x"])
def test_participant_data_rejects_bad_input_cleanly(request_):
    assert_clean_failure(call("participant-data", request_))


def test_participant_data_rejects_malformed_json_cleanly():
    assert_clean_failure(call("participant-data", "{"))


# ------------------------------------------------------------------------------------------
# run (contract 4.5-4.7): one newline-terminated JSON line, exit 0, also for bad input

def _run_input(spec, participant=0, start=None, data=None, slot="PT30S"):
    start = start or datetime.datetime.now(datetime.timezone.utc)
    return {"schema": 1, "task-uuid": "00000000-0000-0000-0000-000000000000",
            "schedule": {"start": start.replace(microsecond=0).isoformat(), "duration": slot},
            "test": as_test(spec), "participant": participant,
            "participant-data": data if data is not None else [{"schema": 1, "protocol": 1}]}


@pytest.mark.parametrize("stdin", ["", "{", "[1]", "null",
                                   {"participant": 0}, {"participant": 0, "test": as_test(SPEC)},
                                   {"participant": 0, "test": as_test(SPEC),
                                    "schedule": {"start": "yesterday", "duration": "PT5S"}},
                                   {"participant": 5, "test": as_test(SPEC),
                                    "schedule": {"start": "2026-01-01T00:00:00+00:00"}}])
def test_run_answers_bad_input_with_one_json_line(stdin):
    done = call("run", stdin, timeout=20)
    assert done.status == 0, done
    assert_no_traceback(done)
    assert done.stdout.endswith("\n") and done.stdout.count("\n") == 1, done
    output = done.runner_json()
    assert output["succeeded"] is False
    assert output["error"]
    assert done.stderr == ""


def _blocked_reading_stdin(pid, limit=60.0):
    """True once process `pid` sits in read(0, ...) (/proc/PID/syscall: number 0, fd 0x0),
    i.e. its imports are done and it waits for its input; polled, bounded by `limit` s."""
    import time
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            with open("/proc/%d/syscall" % pid) as handle:
                fields = handle.read().split()
        except OSError:
            return False
        if fields[:2] == ["0", "0x0"]:
            return True
        time.sleep(0.02)
    return False


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the run gets a network namespace of its own")
def test_run_killed_while_it_still_loads_answers_terminated():
    """pScheduler's runner may send SIGTERM before `run` has read its input (a busy node, a
    slot that ends early): the run still prints its one JSON line, not nothing. The run input
    is written only after the SIGTERM, which is sent once the run blocks reading its input
    (seen in /proc, not guessed with a sleep). The run has a network namespace of its own
    with no interface up, so whatever it does, no probe leaves this machine's namespace."""
    import signal
    import subprocess
    proc = subprocess.Popen(["unshare", "--net", "--", harness.method_path("tool", "jumbocheck", "run")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, universal_newlines=True,
                            env=harness.plugin_env())
    try:
        assert _blocked_reading_stdin(proc.pid), "the run never blocked reading its input"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(json.dumps(_run_input(SPEC)), timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, (proc.returncode, out, err)
    assert out.count("\n") == 1, (out, err)
    output = json.loads(out)
    assert output["succeeded"] is False
    assert "terminated" in output["error"]


def test_run_of_the_dest_without_participant_data_fails_cleanly():
    done = call("run", _run_input(REVERSE, participant=1, data=[{}, None]), timeout=20)
    assert done.status == 0, done
    output = done.runner_json()
    assert output["succeeded"] is False
    assert "participant data" in output["error"]


def _dest_run_on_a_held_port(spec, free=(), **run):
    """The dest's `run` (participant 1) told to reflect on a UDP port that an IPv4 socket of
    ours holds meanwhile, then on the `free` ones: (its output, the held port)."""
    import socket
    from jumbo.probe import wire
    holder = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    holder.bind(("0.0.0.0", 0))
    port = holder.getsockname()[1]
    try:
        data = [{"schema": 1, "protocol": 2},
                {"schema": 1, "protocol": 2, "reflector-ports": [port] + list(free),
                 "_token": wire.new_token()}]
        done = call("run", _run_input(spec, participant=1, data=data, **run), timeout=20)
    finally:
        holder.close()
    return done.runner_json(), port


def test_run_of_the_dest_fails_clearly_when_the_reflector_port_is_busy():
    output, port = _dest_run_on_a_held_port(dict(REVERSE, **{"ip-version": 4}))
    assert output["succeeded"] is False
    assert "busy" in output["error"] and str(port) in output["error"]


def test_the_dest_listens_only_in_the_family_the_source_probes():
    """A mesh runs the v4 and the v6 task side by side (pmtu is background): a v4 run that
    holds its reflector port must not make the v6 run's reflector fail on the same port (it
    did, 1 time in 100 port draws: reverse `unknown` through the real pScheduler)."""
    from jumbo.core.spec import RunSpec
    from jumbo.tool import dest
    assert dest.reflector_versions(RunSpec({"dest": "198.18.0.2"})) == (4,)
    assert dest.reflector_versions(RunSpec({"dest": "fd00::2"})) == (6,)
    assert dest.reflector_versions(RunSpec({"dest": "localhost", "ip-version": 6})) == (6,)
    assert dest.reflector_versions(RunSpec({"dest": "no-such-host.invalid"})) == (4, 6)
    output, port = _dest_run_on_a_held_port(dict(REVERSE, dest="fd00::2"), slot="PT3S")
    assert output["succeeded"] is True, output
    assert output["result"]["reflector"]["busy-ports"] == [], output
    assert "reflector on port %d" % port in output["diags"] or \
        "no valid request" in output["diags"], output


def test_the_probes_take_the_family_the_dest_listens_in(monkeypatch):
    """A dest name with both kinds of address, the resolver listing IPv6 first (RFC 6724's
    usual order): the forward engine and the dest's reflector resolve it the same way,
    through the suite's one resolver, or the probes would go where nothing listens. The
    resolver's answer is a stand-in (named mock): a dual-stack name cannot be made here
    without editing the machine's /etc/hosts."""
    import socket
    from jumbo.core.spec import RunSpec
    from jumbo.probe.engine import Engine
    from jumbo.tool import dest
    real = socket.getaddrinfo

    def dual_stack(host, *args, **kwargs):
        if host != "dual.example":
            return real(host, *args, **kwargs)
        answers = [(socket.AF_INET6, socket.SOCK_DGRAM, 17, "", ("fd00::2", 0, 0, 0)),
                   (socket.AF_INET, socket.SOCK_DGRAM, 17, "", ("198.18.0.2", 0))]
        family = args[1] if len(args) > 1 else kwargs.get("family", socket.AF_UNSPEC)
        return [a for a in answers if family in (socket.AF_UNSPEC, a[0])]
    monkeypatch.setattr(socket, "getaddrinfo", dual_stack)
    from jumbo.core.spec import run_spec
    engine = Engine(run_spec({"dest": "dual.example"}))
    engine.resolve_hosts()
    assert (engine.version,) == dest.reflector_versions(RunSpec({"dest": "dual.example"})) == (4,)
    assert engine.dest_ip == "198.18.0.2"
