"""The pmtu spec and result schemas, the spec library and the renderers, in-process.

Runs under the current jsonschema and, via scripts/check-compat.sh, under Python 3.6 +
jsonschema 3.0.1: the verdicts must be the same.
"""

import jsonschema
import pytest

from jumbo.testtype import render, spec as specs
from jumbo.core import schema, validate


# ------------------------------------------------------------------------------------------
# The schemas themselves

@pytest.mark.parametrize("version", sorted(schema.SPEC_VERSIONS))
def test_spec_schema_is_a_valid_draft7_schema(version):
    jsonschema.Draft7Validator.check_schema(schema.spec_schema(version))


@pytest.mark.parametrize("version", sorted(schema.RESULT_VERSIONS))
def test_result_schema_is_a_valid_draft7_schema(version):
    jsonschema.Draft7Validator.check_schema(schema.result_schema(version))


@pytest.mark.parametrize("text,ok", [
    ("PT10S", True), ("PT0.5S", True), ("P1D", True), ("PT1H2M3S", True), ("P1W", True),
    ("PT", False), ("P", False), ("10", False), ("pt10s", False), ("PT10", False),
    ("PT-1S", False),
])
def test_duration_definition(text, ok):
    valid, _ = validate.check({"dest": "h", "timeout": text}, schema.spec_schema(1))
    assert valid is ok


# ------------------------------------------------------------------------------------------
# Results

FULL_RESULT = {
    "schema": 1, "succeeded": True, "error": None, "diags": "probed 23 sizes",
    "path-mtu": 8950, "local-mtu": 9000, "target-mtu": 9000, "jumbo": False,
    "pmtud": "blackhole", "blackhole": {"ttl": 2, "ip": "198.18.1.2", "size": 9000},
    "method": "icmp-echo", "ip-version": 4, "dest-ip": "198.18.3.2",
    "hops": [{"ttl": 1, "ip": "198.18.1.1", "mtu": 9000, "rtt": "PT0.0001S"},
             {"ttl": 2, "ip": None, "mtu": None, "rtt": None}],
    "flows": [{"flow": 0, "source-port": 40000, "flow-label": None, "path-mtu": 8950,
               "pmtud": "blackhole"},
              {"flow": 1, "source-port": 40001, "flow-label": None, "path-mtu": 9000,
               "pmtud": "not-needed"}],
    "reverse-path-mtu": 9000, "reverse-pmtud": "not-needed", "probes": 23, "elapsed": 2.5,
    "ptb": [{"from": "198.18.1.1", "mtu": 8950, "useful": True}],
    "throughput": {
        "runs": [{"order": 0, "direction": "forward", "mtu": 1500, "mss": 1460,
                  "observed-mss": 1448, "pmtu": 1500, "throughput": 4.6e9, "retransmits": 0,
                  "cpu-sender": 80.5, "cpu-receiver": 40.0, "rtt": "PT0.0001S",
                  "succeeded": True, "error": None}],
        "standard": {"mean": 4.6e9, "stdev": 0.0, "runs": 1}, "jumbo": None, "gain": None,
    },
}


def test_full_result_is_valid():
    assert validate.check_result(FULL_RESULT) == (True, None)


def test_minimal_result_is_valid():
    assert validate.check_result({"schema": 1, "succeeded": False, "error": "no route"}) == \
        (True, None)


@pytest.mark.parametrize("change,field", [
    ({"pmtud": "maybe"}, "/pmtud"),
    ({"path-mtu": "9000"}, "/path-mtu"),
    ({"succeeded": "yes"}, "/succeeded"),
    ({"hops": [{"ip": "x", "mtu": 1}]}, "/hops/0"),
    ({"flows": [{"flow": 0, "path-mtu": 1500, "pmtud": "??"}]}, "/flows/0/pmtud"),
    ({"probes": -1}, "/probes"),
    ({"schema": 2}, "/schema"),
    ({"schema": "1"}, "/schema"),
])
def test_bad_results_name_the_field(change, field):
    result = dict(FULL_RESULT, **change)
    valid, error = validate.check_result(result)
    assert not valid
    assert field in error, error


def test_result_without_succeeded_is_invalid():
    result = dict(FULL_RESULT)
    del result["succeeded"]
    assert not validate.check_result(result)[0]


# ------------------------------------------------------------------------------------------
# Spec library

def test_cli_help_is_an_error_with_text():
    with pytest.raises(specs.CliError) as caught:
        specs.cli_to_spec(["--help"])
    assert caught.value.is_help and "--target-mtu" in str(caught.value)


def test_cli_round_trip_in_process():
    spec = {"schema": 1, "dest": "fd00::2", "source": "fd00::1", "ip-version": 6,
            "min-mtu": 1280, "max-mtu": 9216, "target-mtu": 9000, "flows": 2, "hops": True,
            "reverse": False, "timeout": "PT2S"}
    assert specs.cli_to_spec(specs.spec_to_cli(spec)) == spec


def test_participants_requires_valid_spec():
    with pytest.raises(ValueError) as caught:
        specs.participants({"dest": "h", "flows": 0})
    assert "/flows" in str(caught.value)


# ------------------------------------------------------------------------------------------
# Renderers

def test_verdicts():
    assert render.verdict(FULL_RESULT).startswith(
        "Path MTU 8950 < 9000: black hole between hop 2 (198.18.1.2) and hop 3, 8951-9000 "
        "byte packets vanish")
    assert "1 of 2 flows black-holed (ECMP)" in render.verdict(FULL_RESULT)
    ok = {"succeeded": True, "path-mtu": 1500, "target-mtu": 9000, "pmtud": "ok",
          "ptb": [{"from": "198.18.1.1", "mtu": 1500, "useful": True}]}
    assert render.verdict(ok) == \
        "Path MTU 1500 < 9000: not jumbo, PMTUD works (too-big from 198.18.1.1)"
    unknown = {"succeeded": True, "path-mtu": 1500, "target-mtu": 9000, "pmtud": "unknown"}
    assert render.verdict(unknown) == "Path MTU 1500 < 9000: not jumbo, PMTUD could not be checked"
    clean = {"succeeded": True, "path-mtu": 9000, "target-mtu": 9000, "pmtud": "not-needed",
             "reverse-path-mtu": 1500}
    assert render.verdict(clean) == \
        "Path MTU 9000: jumbo end to end, PMTUD not needed; reverse path MTU 1500"
    hole_unlocated = {"succeeded": True, "path-mtu": 1500, "target-mtu": 9000,
                      "pmtud": "blackhole", "blackhole": None}
    assert render.verdict(hole_unlocated) == \
        "Path MTU 1500 < 9000: black hole, 1501-9000 byte packets vanish"
    assert render.verdict({"succeeded": False, "error": "dest unreachable"}) == \
        "Run failed: dest unreachable"


@pytest.mark.parametrize("result", [
    {}, {"succeeded": True}, {"hops": "x", "flows": [1, None, {}]},
    {"throughput": {"runs": "no"}}, {"throughput": {"runs": [{}], "standard": 5}},
    {"path-mtu": 9000.0, "blackhole": "x", "ptb": [None]}, {"elapsed": "soon"},
])
def test_renderers_survive_partial_and_odd_results(result):
    for function in (render.result_text, render.result_html):
        out = function({"dest": "h"}, result)
        assert out.strip()
    render.result_text(None, result)


def test_html_escapes_and_hides_private_members():
    hostile = "<img src=x onerror=alert(1)>&\"'"
    result = dict(FULL_RESULT, **{"dest-ip": hostile, "_token": "SECRET"})
    result["hops"] = [{"ttl": 1, "ip": hostile, "mtu": 9000, "rtt": None, "_x": "SECRET"}]
    out = render.result_html({"dest": hostile, "_k": "SECRET"}, result)
    assert "<img" not in out and "SECRET" not in out
    assert "&lt;img" in out
    spec_out = render.spec_html({"dest": hostile, "_k": "SECRET"})
    assert "<img" not in spec_out and "SECRET" not in spec_out
    text = render.result_text({"dest": "h"}, result)
    assert "SECRET" not in text


@pytest.mark.parametrize("field", ["dest", "source"])
def test_scoped_ipv6_is_refused_at_submit(field):
    """A zone (fe80::1%eth0) passed spec-is-valid and then failed at run time; refuse it."""
    spec = {"schema": 1, "dest": "fd00::2", field: "fe80::1%a0"}
    valid, error = specs.validate(spec)
    assert not valid and error.startswith("At /%s:" % field) and "scope" in error, error
    assert specs.is_valid(spec)["valid"] is False


@pytest.mark.parametrize("elapsed, shown", [(0.003, "3 ms"), (0.0004, "0.4 ms"),
                                            (1.5, "1.50 s"), (0.0, "0 ms")])
def test_elapsed_shows_milliseconds_below_a_second(elapsed, shown):
    result = {"schema": 1, "succeeded": True, "path-mtu": 9000, "elapsed": elapsed}
    text = render.result_text({"dest": "x"}, result)
    assert "Elapsed:      %s" % shown in text, text


def test_spec_format_shows_every_spec_field():
    """Every field of the spec's schema, `reflector` (the template's key option) included,
    as given and as a default, in text and HTML."""
    fields = set(schema.SPEC_VERSIONS[schema.MAX_SPEC_SCHEMA]["properties"]) - {"schema"}
    spec = {"source": "h1", "source-node": "n1", "dest": "h2", "dest-node": "n2",
            "ip-version": 4, "target-mtu": 9000, "max-mtu": 9000, "min-mtu": 1280,
            "flows": 8, "hops": True, "reverse": False, "reflector": True, "timeout": "PT2S"}
    assert set(spec) == fields  # this test knows every field
    shown = render.spec_text(spec)
    assert shown.split("reflector:")[1].split("\n")[0].strip() == "yes", shown
    assert "(default)" not in shown
    assert "reflector:   no (default)" in render.spec_text({"dest": "h2"})
    assert "<th>reflector</th><td>yes</td>" in render.spec_html(spec)
    assert sorted(line.split(":")[0] for line in shown.splitlines()) == sorted(fields)
