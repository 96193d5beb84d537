"""The `pmtu` test plugin's result-format and spec-format (contract 3.6, 3.7), run through the harness
as the server runs them: the verdict first, partial results, the throughput detail, HTML escaped
and private members hidden, hostile input refused. Like test_plugin_pmtu.py (whose helpers it
uses), it needs no lab and no root."""

import pytest

from test_plugin_pmtu import assert_clean_failure, call


# ------------------------------------------------------------------------------------------
# result-format and spec-format (contract 3.6, 3.7)

BLACKHOLE = {
    "schema": 1, "succeeded": True, "path-mtu": 8950, "local-mtu": 9000, "target-mtu": 9000,
    "jumbo": False, "pmtud": "blackhole",
    "blackhole": {"ttl": 1, "ip": "198.18.1.1", "size": 9000},
    "method": "icmp-echo", "ip-version": 4, "dest-ip": "198.18.2.2",
    "hops": [{"ttl": 1, "ip": "198.18.1.1", "mtu": 8950, "rtt": "PT0.0002S"},
             {"ttl": 2, "ip": "198.18.2.2", "mtu": None, "rtt": None}],
    "flows": [{"flow": 0, "source-port": 33434, "flow-label": None, "path-mtu": 8950,
               "pmtud": "blackhole"}],
    "probes": 23, "elapsed": 1.5,
    "_token": "SECRET-TOKEN",
}

CLEAN = {"schema": 1, "succeeded": True, "path-mtu": 9000, "local-mtu": 9000,
         "target-mtu": 9000, "jumbo": True, "pmtud": "not-needed"}


def formatted(spec, result, mime=None):
    done = call("result-format", {"spec": spec, "result": result},
                argv=[mime] if mime else [])
    assert done.status == 0, done
    return done.stdout


def test_result_format_text_verdict_first():
    text = formatted({"dest": "h2"}, BLACKHOLE, "text/plain")
    assert text.splitlines()[0] == ("Path MTU 8950 < 9000: black hole between hop 1 (198.18.1.1) "
                                    "and hop 2 (198.18.2.2), 8951-9000 byte packets vanish")
    assert "198.18.2.2" in text and "Hops" in text and "Flows" in text
    assert "SECRET" not in text
    # Default MIME is text/plain.
    assert formatted({"dest": "h2"}, BLACKHOLE) == text


def test_result_format_clean_path():
    text = formatted({"dest": "h2"}, CLEAN, "text/plain")
    assert text.splitlines()[0] == "Path MTU 9000: jumbo end to end, PMTUD not needed"


def test_result_format_partial_results():
    # Only the required fields; the target comes from the spec (or its default).
    text = formatted({"dest": "h2"}, {"schema": 1, "succeeded": True, "path-mtu": 1500},
                     "text/plain")
    assert text.startswith("Path MTU 1500 < 9000")
    html = formatted({"dest": "h2", "target-mtu": 4000}, {"succeeded": True}, "text/html")
    assert "Path MTU unknown" in html


def test_result_format_throughput_detail():
    result = dict(CLEAN, throughput={
        "runs": [{"order": 0, "direction": "forward", "mtu": 1500, "mss": 1460,
                  "observed-mss": 1448, "throughput": 4.5e9, "retransmits": 0,
                  "succeeded": True, "error": None},
                 {"order": 1, "direction": "forward", "mtu": 9000, "mss": 8960,
                  "observed-mss": 8948, "throughput": 1.2e10, "retransmits": 3,
                  "succeeded": True, "error": None}],
        "standard": {"mean": 4.5e9, "stdev": 1e8, "runs": 1},
        "jumbo": {"mean": 1.2e10, "stdev": 2e8, "runs": 1},
        "gain": 2.67, "gain-noise": 0.1})
    text = formatted({"dest": "h2", "throughput": {}}, result, "text/plain")
    assert "x2.67" in text.splitlines()[0]
    assert "12.00 Gbit/s" in text and "4.50 Gbit/s" in text and "8948" in text


def test_result_format_shows_both_mathis_ceilings():
    """The JSON has a ceiling object per size (jumbo.tool.throughput.mathis); the text used to
    read "Mathis ceiling: standard -, jumbo -" while both were there."""
    from jumbo.tool import throughput
    legs = [{"size": size, "succeeded": True, "mss": mss, "observed-mss": mss - 12,
             "rtt": 0.01, "bytes": 5e9, "retransmits": 10, "throughput": 3e9}
            for size, mss in (("standard", 1460), ("jumbo", 8960))]
    mathis = {"standard": throughput.mathis(legs[:1]), "jumbo": throughput.mathis(legs[1:])}
    result = dict(CLEAN, throughput={"runs": [], "mathis": mathis, "gain": 1.5})
    text = formatted({"dest": "h2"}, result, "text/plain")
    line = [row for row in text.splitlines() if row.startswith("Mathis ceiling:")][0]
    assert 0.5e9 < mathis["standard"]["ceiling"] < 1e9 < mathis["jumbo"]["ceiling"] < 1e10
    expected = "standard %.2f Mbit/s, jumbo %.2f Gbit/s" % (
        mathis["standard"]["ceiling"] / 1e6, mathis["jumbo"]["ceiling"] / 1e9)
    assert line.split(":", 1)[1].strip() == expected, line
    assert "Mathis ceiling</th><td>" + expected in formatted({"dest": "h2"}, result, "text/html")


def test_result_format_html_escapes_everything_and_hides_private_members():
    hostile = '<script>alert("x")</script>'
    result = dict(BLACKHOLE, **{"dest-ip": hostile, "error": None,
                                "hops": [{"ttl": 1, "ip": hostile, "mtu": 1500,
                                          "rtt": None, "_secret": "SECRET-HOP"}],
                                "_secret": "SECRET-TOP"})
    html = formatted({"dest": hostile, "_key": "SECRET-SPEC"}, result, "text/html")
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    assert "SECRET" not in html
    assert html.lstrip().startswith("<")


@pytest.mark.parametrize("stdin,argv,fragment", [
    ("garbage", ["text/plain"], "Invalid JSON"),
    ({"spec": {"dest": "h2"}}, ["text/plain"], "result"),
    ({"spec": {"dest": "h2"}, "result": CLEAN}, ["image/png"], "image/png"),
    ({"spec": {"dest": "h2"}, "result": dict(CLEAN, schema=2)}, ["text/plain"], "/schema"),
    ({"spec": {"dest": "h2"}, "result": dict(CLEAN, **{"path-mtu": "big"})}, [],
     "/path-mtu"),
    ({"spec": {"dest": "h2"}, "result": [1]}, [], "/result"),
])
def test_result_format_rejects(stdin, argv, fragment):
    assert_clean_failure(call("result-format", stdin, argv=argv), fragment)


def test_spec_format():
    spec = {"dest": "h2.example.org", "reverse": True}
    text = call("spec-format", spec, argv=["text/plain"])
    assert text.status == 0, text
    assert "dest:" in text.stdout and "h2.example.org" in text.stdout
    assert "flows" in text.stdout and "(default)" in text.stdout
    assert "throughput" not in text.stdout
    html = call("spec-format", spec, argv=["text/html"])
    assert html.status == 0 and "<table>" in html.stdout and "h2.example.org" in html.stdout
    assert_clean_failure(call("spec-format", {"dest": "<h2>"}), "/dest")
    assert_clean_failure(call("spec-format", {"dest": "h2", "flows": -1}), "/flows")
    assert_clean_failure(call("spec-format", "{"), "Invalid JSON")
