"""The `pmtu` test plugin, every method run through the harness exactly as the server runs it.

Also runs under Python 3.6 + jsonschema 3.0.1 (scripts/check-compat.sh): the harness then
points `python3` in the shebangs at that interpreter (JUMBO_PYTHON).
"""

import json
import os
import pwd
import re
import stat

import jsonschema
import pytest

import harness

PLUGIN_DIR = os.path.join(harness.ROOT, "pscheduler-test-pmtu", "pmtu")
METHODS = ["enumerate", "spec-is-valid", "participants", "cli-to-spec", "spec-to-cli",
           "result-format", "spec-format"]


def call(method, stdin=None, argv=(), **kwargs):
    return harness.invoke("test", "pmtu", method, stdin=stdin, argv=argv, **kwargs)


def assert_clean_failure(done, *fragments):
    """Non-zero exit, a readable message on stderr naming the problem, never a traceback."""
    assert done.status != 0, done
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout, done
    assert done.stderr.strip(), done
    for fragment in fragments:
        assert fragment in done.stderr, done


# ------------------------------------------------------------------------------------------
# Layout and enumerate (contract 3.1)

# The warm boot's #/pScheduler/PluginEnumeration/Test, as the contract describes it.
ENUMERATION_TEST = {
    "type": "object",
    "properties": {
        "schema": {"type": "integer", "enum": [1]},
        "name": {"type": "string", "pattern": r"^[a-z0-9][a-z0-9-]*$"},
        "description": {"type": "string"},
        "version": {"type": "string", "pattern": r"^[0-9]+(\.[0-9]+)*[A-Za-z0-9-+]*$"},
        "maintainer": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "email": {"type": "string", "pattern": "@"},
                "href": {"type": "string"},
            },
            "required": ["name"],
            "additionalProperties": False,
        },
        "scheduling-class": {"type": "string",
                             "enum": ["background", "background-multi", "exclusive", "normal"]},
    },
    "required": ["name", "description", "version", "maintainer", "scheduling-class"],
    "additionalProperties": False,
}


def test_every_method_is_an_executable_without_extension():
    assert sorted(os.listdir(PLUGIN_DIR)) == sorted(METHODS)
    for method in METHODS:
        path = os.path.join(PLUGIN_DIR, method)
        mode = os.stat(path).st_mode
        assert mode & stat.S_IXUSR and mode & stat.S_IXGRP and mode & stat.S_IXOTH, method
        first = open(path).readline().rstrip("\n")
        assert first == "#!/usr/bin/env python3", method


def test_enumerate_passes_the_warm_boot_checks():
    done = call("enumerate")
    assert done.status == 0, done
    stored = done.sql_json()          # what SQL casts to JSONB: must be valid JSON
    loaded = done.json(max_schema=1)  # the schema <= 1 check
    jsonschema.Draft7Validator(ENUMERATION_TEST).validate(loaded)
    assert stored["name"] == "pmtu" == os.path.basename(PLUGIN_DIR)
    # Background: a few dozen probe packets never block the mesh's exclusive/normal tests
    # (the paired throughput is the exclusive jumbo-throughput test).
    assert stored["scheduling-class"] == "background"
    # `pscheduler plugins -v` dereferences both unconditionally.
    assert "@" in stored["maintainer"]["email"] and stored["maintainer"]["href"]


def test_enumeration_rules_reject_what_the_warm_boot_rejects():
    base = call("enumerate").sql_json()
    validator = jsonschema.Draft7Validator(ENUMERATION_TEST)
    for bad in ({"version": "v1.0"}, {"version": 1.0}, {"scheduling-class": "sometimes"},
                {"extra": 1}, {"schema": 0}):
        candidate = dict(base, **bad)
        assert not validator.is_valid(candidate), bad
    assert validator.is_valid(dict(base, version="1.0.0-rc1"))


# ------------------------------------------------------------------------------------------
# spec-is-valid (contract 3.2)

GOOD_SPECS = [
    {"dest": "perfsonar.example.org"},
    {"schema": 1, "dest": "198.18.0.2"},
    {"dest": "fd00::2", "ip-version": 6, "min-mtu": 1280, "max-mtu": 9000},
    {"dest": "fd00::1:2"},
    {"dest": "h2", "source": "h1", "source-node": "h1-node:443", "dest-node": "[fd00::2]:443"},
    {"dest": "h2", "target-mtu": 9000, "max-mtu": 9216, "min-mtu": 68, "flows": 8,
     "hops": True, "reverse": True, "timeout": "PT0.5S"},
    {"dest": "h2", "#comment": "dropped by json_load, as on the server"},
]


@pytest.mark.parametrize("spec", GOOD_SPECS)
def test_spec_is_valid_accepts(spec):
    done = call("spec-is-valid", spec)
    assert done.status == 0, done
    assert done.json(max_schema=1) == {"valid": True}


BAD_SPECS = [
    # (stdin, field the message must name)
    ("{not json", "Invalid JSON"),
    ("", "Invalid JSON"),
    ("[1, 2]", "object"),
    ('"dest"', "object"),
    ({}, "/dest"),
    ({"dest": 42}, "/dest"),
    ({"dest": "h2", "flows": "4"}, "/flows"),
    ({"dest": "h2", "hops": "yes"}, "/hops"),
    ({"dest": "h2", "target-mtu": 9000.5}, "/target-mtu"),
    ({"dest": "h2", "bogus": 1}, "/bogus"),
    # A spec from before the split: the message names the test that took the phase over.
    ({"dest": "h2", "throughput": {}}, "/throughput: the paired 1500/9000 throughput"),
    ({"dest": "h2", "throughput": {"rounds": 2}}, "use the jumbo-throughput test"),
    ({"dest": "h2", "throughput": True}, "pscheduler task jumbo-throughput"),
    ({"dest": "h2", "min-mtu": 67}, "/min-mtu"),
    ({"dest": "h2", "max-mtu": 65536}, "/max-mtu"),
    ({"dest": "fe80::1%eth0"}, "/dest"),
    ({"dest": "h2", "min-mtu": 50000}, "/min-mtu"),
    ({"dest": "h2", "target-mtu": 0}, "/target-mtu"),
    ({"dest": "fd00::2", "min-mtu": 1279}, "/min-mtu"),
    ({"dest": "h2", "ip-version": 6, "max-mtu": 1000}, "/max-mtu"),
    ({"dest": "h2", "min-mtu": 9000, "max-mtu": 1500}, "/min-mtu"),
    ({"dest": "h2", "min-mtu": 9000, "target-mtu": 1500}, "/min-mtu"),
    ({"dest": "198.18.0.2", "ip-version": 6}, "/dest"),
    ({"dest": "fd00::2", "ip-version": 4}, "/dest"),
    ({"dest": "h2", "source": "198.18.0.1", "ip-version": 6}, "/source"),
    ({"dest": "fd00::2", "source": "198.18.0.1"}, "/source"),
    ({"dest": "h2", "ip-version": 5}, "/ip-version"),
    ({"dest": "bad..name"}, "/dest"),
    ({"dest": "-leading.example.org"}, "/dest"),
    ({"dest": "1.2.3.999"}, "/dest"),
    ({"dest": "[fd00::2]"}, "/dest"),
    ({"dest": "h2:443"}, "/dest"),
    ({"dest": "h2", "dest-node": "h2:99999"}, "/dest-node"),
    ({"dest": "h2", "timeout": "1 second"}, "/timeout"),
    ({"dest": "h2", "timeout": "PT0S"}, "/timeout"),
    ({"dest": "h2", "timeout": "P1Y"}, "/timeout"),
    ({"dest": "h2", "schema": 2}, "/schema"),
    ({"dest": "h2", "schema": 0}, "/schema"),
    ({"dest": "h2", "schema": -1}, "/schema"),
    ({"dest": "h2", "schema": "1"}, "/schema"),
    ({"dest": "h2", "schema": True}, "/schema"),
    ({"dest": "h2", "schema": 1.0}, "/schema"),
]


@pytest.mark.parametrize("stdin,field", BAD_SPECS,
                         ids=[str(i) for i in range(len(BAD_SPECS))])
def test_spec_is_valid_rejects_with_the_field_named(stdin, field):
    done = call("spec-is-valid", stdin)
    # Invalid input is an answer, not an error: exit 0, even for unparseable JSON.
    assert done.status == 0, done
    assert done.stderr == ""
    answer = done.json(max_schema=1)
    assert answer["valid"] is False
    assert field in answer["error"], answer
    assert "Traceback" not in answer["error"]


def test_spec_is_valid_never_resolves_names():
    # A name that cannot resolve is still a valid spec (it fails at run time); a quick answer
    # shows no DNS was tried.
    done = call("spec-is-valid", {"dest": "no-such-host.invalid"})
    assert done.json() == {"valid": True}
    assert done.elapsed < 5


# ------------------------------------------------------------------------------------------
# participants (contract 3.3)

@pytest.mark.parametrize("spec,expected", [
    ({"dest": "h2"}, [None]),
    ({"dest": "h2", "source": "h1"}, ["h1"]),
    ({"dest": "h2", "source": "h1", "source-node": "n1"}, ["n1"]),
    ({"dest": "h2", "source": "h1", "reverse": True}, ["h1", "h2"]),
    ({"dest": "h2", "dest-node": "n2", "reverse": True}, [None, "n2"]),
    ({"dest": "h2", "reverse": False, "hops": True}, [None]),
])
def test_participants(spec, expected):
    done = call("participants", spec)
    assert done.status == 0, done
    answer = done.json(max_schema=1)
    assert answer["participants"] == expected
    assert None not in answer["participants"][1:]
    assert ("null-reason" in answer) == (expected[0] is None)


@pytest.mark.parametrize("stdin,fragment", [
    ("{oops", "Invalid JSON"),
    ({"dest": "h2", "reverse": "yes"}, "/reverse"),
    ({"dest": "h2", "min-mtu": 9000, "max-mtu": 1500}, "/min-mtu"),
    ({"source": "h1"}, "/dest"),
])
def test_participants_rejects_bad_specs(stdin, fragment):
    assert_clean_failure(call("participants", stdin), fragment)


# ------------------------------------------------------------------------------------------
# cli-to-spec and spec-to-cli (contract 3.4, 3.5)

def test_cli_to_spec_from_argv():
    done = call("cli-to-spec", argv=["--dest", "h2", "--source", "h1", "-6", "--max-mtu",
                                     "9216", "--hops", "--no-reverse", "--timeout", "0.5"])
    assert done.status == 0, done
    assert done.json() == {"schema": 1, "dest": "h2", "source": "h1", "ip-version": 6,
                           "max-mtu": 9216, "hops": True, "reverse": False,
                           "timeout": "PT0.5S"}


def test_cli_to_spec_from_stdin_array_with_numbers():
    # The server's way: no argv, a JSON array of strings (numbers accepted) on stdin.
    done = call("cli-to-spec", ["--dest", "h2", "--flows", 8, "--target-mtu", 9000,
                                "--timeout", 0.5])
    assert done.status == 0, done
    assert done.json() == {"schema": 1, "dest": "h2", "flows": 8, "target-mtu": 9000,
                           "timeout": "PT0.5S"}


def test_cli_to_spec_help_goes_to_stderr_with_exit_1():
    done = call("cli-to-spec", argv=["--help"])
    assert done.status == 1
    assert done.stdout == ""
    for option in ("--dest", "--source-node", "--target-mtu", "--max-mtu", "--min-mtu",
                   "--flows", "--hops", "--no-hops", "--reverse", "--timeout", "-4", "-6"):
        assert re.search(r"(^|\s)%s\b" % re.escape(option), done.stderr), option
    # The old throughput options are gone from the help; the epilog names the new test.
    for option in ("--throughput", "--rounds", "--fq-rate"):
        assert not re.search(r"(^|\s)%s\b" % re.escape(option), done.stderr), option
    assert "jumbo-throughput" in done.stderr
    assert "black hole" in done.stderr  # the epilog comes too
    assert "Traceback" not in done.stderr
    # The server's way of asking for help.
    assert call("cli-to-spec", ["--help"]).stderr == done.stderr


@pytest.mark.parametrize("stdin,fragment", [
    (["--dest", "h2", "stray"], "stray"),
    (["--dest", "h2", "--bogus"], "--bogus"),
    (["--dest", "h2", "--flows", "many"], "--flows"),
    (["--dest", "h2", "--timeout", "soon"], "--timeout"),
    (["--dest", "h2", "--throughput"], "--throughput: the paired 1500/9000 throughput is no"),
    (["--dest", "h2", "--rounds", "2"], "use the jumbo-throughput test"),
    (["--dest", "h2", "--fq-rate", "5G"], "pscheduler task jumbo-throughput --dest"),
    (["--dest", "h2", "--min-mtu", "9000", "--max-mtu", "1500"], "/min-mtu"),
    (["--dest", "198.18.0.2", "-6"], "/dest"),
    (["--dest", "fd00::2", "--max-mtu", "1000"], "/max-mtu"),
    (["--source", "h1"], "/dest"),
    (["--dest", "h2", "--max-mtu", "70000"], "/max-mtu"),
    (["--dest", True], "strings or numbers"),
    ({"dest": "h2"}, "JSON array"),
    ("[--dest", "Invalid JSON"),
])
def test_cli_to_spec_rejects(stdin, fragment):
    assert_clean_failure(call("cli-to-spec", stdin), fragment)


ROUND_TRIP = GOOD_SPECS[:-1] + [
    {"schema": 1, "dest": "h2", "hops": False, "reverse": True, "ip-version": 4},
]


@pytest.mark.parametrize("spec", ROUND_TRIP)
def test_spec_to_cli_round_trips(spec):
    done = call("spec-to-cli", spec)
    assert done.status == 0, done
    argv = done.sql_json()  # stored by a DB trigger: plain JSON
    assert isinstance(argv, list) and all(isinstance(a, str) for a in argv)
    back = call("cli-to-spec", argv=argv)
    assert back.status == 0, back
    expected = dict(spec, schema=1)
    assert back.json() == expected


@pytest.mark.parametrize("stdin,fragment", [
    ("nope", "Invalid JSON"),
    ({"dest": "h2", "flows": 0}, "/flows"),
    ({"dest": "h2", "unknown": 1}, "/unknown"),
    ({"dest": "h2", "schema": 2}, "/schema"),
])
def test_spec_to_cli_rejects(stdin, fragment):
    assert_clean_failure(call("spec-to-cli", stdin), fragment)


# ------------------------------------------------------------------------------------------
# As an unprivileged user (the server never runs plugins as root)

def _have_user(name):
    try:
        pwd.getpwnam(name)
        return os.geteuid() == 0
    except KeyError:
        return False


@pytest.mark.skipif(not _have_user("jumbotest"), reason="needs root and the jumbotest user")
def test_methods_work_as_an_unprivileged_user():
    python = os.path.join(harness.interpreter_dir(), "python3")
    probe = harness.run_program(["runuser", "-u", "jumbotest", "--", python, "-c",
                                 "import jsonschema"], timeout=30)
    if probe.status != 0:
        # e.g. the pyenv 3.6 interpreter lives under /root, which that user cannot enter.
        pytest.skip("interpreter under test not usable by jumbotest: %s" % probe.stderr.strip())
    done = call("spec-is-valid", {"dest": "h2"}, user="jumbotest")
    assert done.status == 0, done
    assert done.json() == {"valid": True}
    done = call("cli-to-spec", argv=["--dest", "h2"], user="jumbotest")
    assert done.status == 0 and done.json()["dest"] == "h2", done


# ------------------------------------------------------------------------------------------
# The harness itself behaves like the server

def test_harness_timeout_is_status_2(tmp_path):
    script = tmp_path / "slow"
    script.write_text("#!/bin/sh\ntrap '' TERM\nsleep 5\n")
    script.chmod(0o755)
    done = harness.run_program([str(script)], timeout=0.3)
    assert done.status == 2 and done.timed_out
    assert done.stderr == "Process took too long to run."
    assert done.elapsed < 3  # SIGKILL followed the ignored SIGTERM


def test_harness_missing_program_is_status_2():
    done = harness.run_program(["/nonexistent/method"], timeout=1)
    assert done.status == 2 and "FileNotFoundError" in done.stderr


def test_harness_parses_like_the_server():
    assert harness.json_load('{"a": {"#c": 1, "b": [{"#d": 2, "e": "#f"}]}}') == \
        {"a": {"b": [{"e": "#f"}]}}
    with pytest.raises(ValueError):
        harness.json_load('{"schema": 2}', max_schema=1)
    with pytest.raises(ValueError):
        harness.json_load('[1]', max_schema=1)
    # The runner drops the last character of every line: no final newline, no closing brace.
    with pytest.raises(ValueError):
        json.loads(harness.runner_text('{"succeeded": true}'))
    assert json.loads(harness.runner_text('{\n  "succeeded": true\n}\n')) == {"succeeded": True}
    assert harness.null_private({"a": [{"_t": 1, "b": 2}]}) == {"a": [{"_t": None, "b": 2}]}
