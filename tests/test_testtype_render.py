"""jumbo.testtype.render: a result is read once at the door into its typed object
(PmtuResult / PairResult) and rendered from its attributes; a member of a shape the schema
would refuse reads as missing, never raises."""

from jumbo.core.result import PairResult, PmtuResult
from jumbo.testtype import pair, render

RESULT = {"schema": 1, "succeeded": True, "path-mtu": 1500, "target-mtu": 9000, "jumbo": False,
          "pmtud": "blackhole", "local-mtu": 9000, "dest-ip": "198.18.0.2",
          "blackhole": {"ttl": 2, "ip": "198.18.2.1", "size": 9000},
          "hops": [{"ttl": 1, "ip": "198.18.1.1", "mtu": 9000},
                   {"ttl": 2, "ip": "198.18.2.1", "mtu": 9000}],
          "flows": [{"flow": 0, "path-mtu": 1500, "pmtud": "blackhole"},
                    {"flow": 1, "path-mtu": 9000, "pmtud": "not-needed"}],
          "_token": "SECRET"}


def test_the_json_and_the_typed_result_render_the_same():
    typed = PmtuResult.from_json(dict((k, v) for k, v in RESULT.items() if k != "_token"))
    line = render.verdict(RESULT)
    assert line == render.verdict(typed)
    assert line == ("Path MTU 1500 < 9000: black hole between hop 2 (198.18.2.1) and hop 3, "
                    "1501-9000 byte packets vanish; 1 of 2 flows black-holed (ECMP)")
    text = render.result_text({"dest": "h2"}, RESULT)
    assert text == render.result_text({"dest": "h2"}, typed)
    assert "SECRET" not in text and "198.18.1.1" in text


def test_members_of_a_wrong_shape_read_as_missing():
    hostile = dict(RESULT, flows="x", hops=[5, "y"], blackhole=7, ptb={"from": 1},
                   throughput=[1], **{"flows-not-measured": "many"})
    line = render.verdict(hostile)
    assert line == "Path MTU 1500 < 9000: black hole, 1501-9000 byte packets vanish"
    assert "Flows:" not in render.result_text({}, hostile)
    assert render.verdict(None) == "Path MTU unknown"


def test_a_pair_result_is_read_once_too():
    result = {"schema": 1, "succeeded": True, "verdict": "jumbo-faster", "gain": 1.5,
              "gain-noise": 0.1, "jumbo-mtu": 9000, "path-mtu": 9000, "runs": [],
              "notes": ["n1"], "_iperf3-key": "SECRET"}
    line = pair.verdict(result)
    assert line == "Jumbo (MTU 9000) throughput x1.50 +/- 0.10: jumbo faster; path MTU 9000"
    assert line == pair.verdict(PairResult.from_json(result))
    text = pair.result_text({"dest": "h2"}, result)
    assert "SECRET" not in text and "Note:" in text and "x1.50 (+/- 0.10)" in text
