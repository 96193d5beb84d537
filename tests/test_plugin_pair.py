"""The `jumbo-throughput` test plugin, every method run through the harness exactly as the
server runs it (also under Python 3.6 + jsonschema 3.0.1 via scripts/check-compat.sh)."""

import os
import re
import stat

import jsonschema
import pytest

import harness
from test_plugin_pmtu import ENUMERATION_TEST, assert_clean_failure

TEST = "jumbo-throughput"
PLUGIN_DIR = os.path.join(harness.ROOT, "pscheduler-test-jumbo-throughput", TEST)
METHODS = ["enumerate", "spec-is-valid", "participants", "cli-to-spec", "spec-to-cli",
           "result-format", "spec-format"]


def call(method, stdin=None, argv=(), **kwargs):
    return harness.invoke("test", TEST, method, stdin=stdin, argv=argv, **kwargs)


def test_plugin_directory_holds_the_seven_methods_and_nothing_obsolete():
    names = sorted(n for n in os.listdir(PLUGIN_DIR) if not n.startswith("."))
    assert names == sorted(METHODS)
    for method in METHODS:
        mode = os.stat(os.path.join(PLUGIN_DIR, method)).st_mode
        assert mode & stat.S_IXUSR and mode & stat.S_IXOTH, method


def test_enumerate_is_exclusive_like_upstream_throughput():
    done = call("enumerate")
    assert done.status == 0, done
    loaded = done.json(max_schema=1)
    jsonschema.Draft7Validator(ENUMERATION_TEST).validate(loaded)
    assert loaded["name"] == TEST == os.path.basename(PLUGIN_DIR)
    assert loaded["scheduling-class"] == "exclusive"
    assert done.sql_json() == loaded  # no `#` members: SQL sees the same


GOOD = [
    {"dest": "ps.example.org"},
    {"schema": 1, "dest": "fd00::2", "ip-version": 6, "source": "fd00::1",
     "source-node": "n1:443", "dest-node": "[fd00::2]:443", "timeout": "PT0.5S"},
    {"dest": "h2", "duration": "PT5S", "omit": "PT0S", "rounds": 2, "parallel": 4,
     "congestion": "bbr", "direction": "both", "order": "ab", "fq-rate": 5000000000,
     "port": 5201},
]


@pytest.mark.parametrize("spec", GOOD)
def test_spec_is_valid_accepts(spec):
    done = call("spec-is-valid", spec)
    assert done.status == 0 and done.json(max_schema=1) == {"valid": True}, done


@pytest.mark.parametrize("stdin,fragment", [
    ("{no", "Invalid JSON"),
    ({}, "/dest"),
    ({"dest": "h2", "rounds": 0}, "/rounds"),
    ({"dest": "h2", "direction": "sideways"}, "/direction"),
    ({"dest": "h2", "duration": "PT0S"}, "/duration"),
    ({"dest": "h2", "omit": "PT601S"}, "/omit"),
    ({"dest": "h2", "throughput": {}}, "top-level members"),
    ({"dest": "h2", "hops": True}, "run the pmtu test for hops"),
    ({"dest": "h2", "reverse": True}, "/reverse"),
    ({"dest": "198.18.0.2", "ip-version": 6}, "/dest"),
    ({"dest": "h2", "timeout": "PT61S"}, "/timeout"),
    ({"dest": "h2", "schema": 2}, "/schema"),
    ({"dest": "h2", "bogus": 1}, "/bogus"),
])
def test_spec_is_valid_rejects_naming_the_field(stdin, fragment):
    done = call("spec-is-valid", stdin)
    assert done.status == 0, done
    answer = done.json(max_schema=1)
    assert answer["valid"] is False and fragment in answer["error"], answer


def test_participants_are_always_source_and_dest():
    assert call("participants", {"dest": "h2"}).json()["participants"] == [None, "h2"]
    answer = call("participants", {"dest": "h2", "source": "h1", "dest-node": "n2"}).json()
    assert answer == {"participants": ["h1", "n2"]}
    assert_clean_failure(call("participants", {"dest": "h2", "rounds": 0}), "/rounds")


def test_cli_to_spec_and_back():
    done = call("cli-to-spec", ["--dest", "h2", "--duration", 5, "--omit", "1", "--rounds", 2,
                                "--fq-rate", "5G", "-6", "--order", "ab"])
    assert done.status == 0, done
    spec = done.json()
    assert spec == {"schema": 1, "dest": "h2", "duration": "PT5S", "omit": "PT1S", "rounds": 2,
                    "fq-rate": 5000000000, "ip-version": 6, "order": "ab"}
    for good in GOOD:
        argv = call("spec-to-cli", good).sql_json()
        assert call("cli-to-spec", argv=argv).json() == dict(good, schema=1)


def test_cli_help_and_errors():
    done = call("cli-to-spec", argv=["--help"])
    assert done.status == 1 and done.stdout == ""
    for option in ("--dest", "--duration", "--omit", "--rounds", "--parallel", "--direction",
                   "--order", "--fq-rate", "--port", "--timeout", "-4", "-6"):
        assert re.search(r"(^|\s)%s\b" % re.escape(option), done.stderr), option
    assert "ABBA" in done.stderr and "exclusive" in done.stderr
    assert_clean_failure(call("cli-to-spec", ["--dest", "h2", "--hops"]), "--hops")
    assert_clean_failure(call("cli-to-spec", ["--dest", "h2", "--rounds", "x"]), "--rounds")
    assert_clean_failure(call("cli-to-spec", ["--dest", "h2", "--duration", "0"]), "/duration")


LEGS = [{"order": i, "round": 0, "size": size, "direction": "forward", "mtu": mtu,
         "mss": mtu - 40, "observed-mss": mtu - 52, "pmtu": None, "throughput": bits,
         "retransmits": 0, "rtt": 0.0001, "bytes": 1e9, "stalled": False, "succeeded": True,
         "error": None}
        for i, (size, mtu, bits) in enumerate([("standard", 1500, 4e9), ("jumbo", 9000, 9e9),
                                               ("jumbo", 9000, 9.2e9), ("standard", 1500, 4.1e9)])]
RESULT = {"schema": 1, "succeeded": True, "error": None, "diags": "", "path-mtu": 9000,
          "local-mtu": 9000, "pmtud": "not-needed", "dest-ip": "198.18.0.2", "ip-version": 4,
          "runs": LEGS, "standard": {"mean": 4.05e9, "stdev": 7e7, "n": 2},
          "jumbo": {"mean": 9.1e9, "stdev": 1.4e8, "n": 2}, "gain": 2.247, "gain-noise": 0.06,
          "mathis": {"standard": {"ceiling": 3.1e10, "mss": 1448},
                     "jumbo": {"ceiling": 1.9e11, "mss": 8948}},
          "verdict": "jumbo-faster", "skipped": None, "jumbo-mtu": 9000, "notes": [],
          "_token": "SECRET"}


def test_result_format_text_and_html():
    text = call("result-format", {"spec": {"dest": "h2"}, "result": RESULT}, argv=["text/plain"])
    assert text.status == 0, text
    lines = text.stdout.splitlines()
    assert lines[0] == "Jumbo (MTU 9000) throughput x2.25 +/- 0.06: jumbo faster; path MTU 9000"
    assert "Mathis ceiling:           standard 31.00 Gbit/s, jumbo 190.00 Gbit/s" in lines
    assert "8948" in text.stdout and "SECRET" not in text.stdout
    html = call("result-format", {"spec": {"dest": "<h2>"}, "result": RESULT},
                argv=["text/html"])
    assert html.status == 0 and "<h2>" not in html.stdout and "x2.25" in html.stdout
    # The receiver's MSS held the jumbo legs at 1448: said, with the size, as a measurement.
    capped_legs = [dict(leg, **{"observed-mss": 1448}) if leg["mtu"] == 9000 else leg
                   for leg in RESULT["runs"]]
    capped = dict(RESULT, verdict="mss-capped", gain=None, runs=capped_legs)
    text = call("result-format", {"spec": {"dest": "h2"}, "result": capped}).stdout
    assert text.splitlines()[0] == ("Jumbo (MTU 9000) not used by TCP: the receiver's MSS held "
                                    "the jumbo legs at 1448; path MTU 9000"), text
    failed = dict(RESULT, succeeded=False, verdict="failed", error="iperf3: refused", gain=None)
    text = call("result-format", {"spec": {}, "result": failed}).stdout
    assert text.startswith("Run failed: iperf3: refused")
    assert_clean_failure(call("result-format", {"spec": {}, "result": dict(RESULT, gain="big")}),
                         "/gain")
    assert_clean_failure(call("result-format", {"spec": {}, "result": RESULT},
                              argv=["image/png"]), "image/png")


def test_spec_format_marks_defaults():
    text = call("spec-format", {"dest": "h2", "rounds": 2}, argv=["text/plain"]).stdout
    assert "rounds:" in text and "order:" in text and "abba (default)" in text
    html = call("spec-format", {"dest": "h2"}, argv=["text/html"]).stdout
    assert html.startswith("<table>")
    assert_clean_failure(call("spec-format", {"dest": "h2", "hops": True}), "/hops")
