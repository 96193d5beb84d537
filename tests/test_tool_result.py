"""jumbo.tool.result: the test result assembled on the source and merged on the lead."""

from jumbo.core import validate
from jumbo.core.result import Reverse
from jumbo.core.spec import RunSpec
from jumbo.probe import PathResult
from jumbo.tool import result

SPEC = {"schema": 1, "dest": "198.18.0.2", "reverse": True}
FORWARD = {"path-mtu": 8950, "local-mtu": 9000, "pmtud": "blackhole", "method": "udp",
           "ip-version": 4, "dest-ip": "198.18.0.2", "source-ip": "198.18.0.1", "probes": 9,
           "blackhole": {"ttl": 1, "ip": "198.18.0.2", "size": 8951}}


def _valid(res):
    """The JSON of a PmtuResult, checked against the result schema."""
    res = res.as_json()
    ok, error = validate.check_result(res)
    assert ok, error
    return res


def _assemble(forward, error=None, reverse=None):
    return result.assemble(RunSpec(SPEC), PathResult.from_json(forward) if forward else None,
                           error, reverse)


def _reverse(path_mtu, pmtud, **details):
    reverse = Reverse()
    reverse.path_mtu, reverse.pmtud = path_mtu, pmtud
    for name, value in details.items():
        setattr(reverse, name, value)
    return reverse


def test_a_black_hole_is_a_successful_measurement():
    res = _valid(_assemble(FORWARD, None, _reverse(9000, "not-needed")))
    assert res["succeeded"] is True and res["error"] is None
    assert res["jumbo"] is False and res["pmtud"] == "blackhole"
    assert res["reverse-path-mtu"] == 9000


def test_no_forward_answer_is_a_failure_with_the_reason():
    res = _valid(_assemble(None, "cannot resolve nowhere.invalid"))
    assert res["succeeded"] is False
    assert "nowhere.invalid" in res["error"]
    assert res["reverse-error"]


def test_the_schema_names_every_member_a_result_carries():
    """The result schema is complete: every member assemble/merge write is declared (the
    black hole, the engine's method, PTBs, ...), and an undeclared one does not validate,
    so a result is never repaired at run time."""
    engine = dict(FORWARD, elapsed=0.25, rtt="PT0.001S", flows=[], hops=[{"ttl": 1, "ip": "198.18.0.2",
                                                          "mtu": 9000, "rtt": "PT0.001S"}],
                  ptb=[{"from": "198.18.0.1", "mtu": 8950, "useful": True}])
    res = _valid(_assemble(engine, None, _reverse(9000, "ok", rtt=0.001)))
    assert res["blackhole"] == FORWARD["blackhole"] and res["ptb"] and res["reverse"]
    for name in result.FORWARD_FIELDS:
        assert name.replace("_", "-") in res, name
    ok, error = validate.check_result(dict(res, surprise=1))
    assert not ok and "surprise" in error
    ok, error = validate.check_result(dict(res, blackhole="hop 1"))
    assert not ok and "blackhole" in error


def _lead(reverse):
    res = _assemble(FORWARD, None, reverse).as_json()
    return {"succeeded": True, "result": res, "error": None, "diags": ""}


def _dest(ptb, succeeded=True):
    return {"succeeded": succeeded, "error": None if succeeded else "port 5501 busy",
            "diags": "", "result": {"role": "dest", "reflector": {
                "ptb": ptb, "stats": {"answered": 3}, "local-mtu": 9000}}}


PENDING = _reverse(8950, "unknown", pending=True)


def test_the_dests_report_decides_a_pending_reverse_verdict():
    ptb = [{"from": "198.18.1.2", "mtu": 8950, "size": 8951, "useful": True, "count": 3}]
    merged = _valid(result.merge({"type": "pmtu", "spec": SPEC}, [_lead(PENDING), _dest(ptb)]))
    assert merged["reverse-pmtud"] == "ok"
    assert merged["reverse-local-mtu"] == 9000
    silent = _valid(result.merge({"type": "pmtu", "spec": SPEC}, [_lead(PENDING), _dest([])]))
    assert silent["reverse-pmtud"] == "blackhole"


def test_a_failed_dest_is_named_and_the_forward_answer_stays():
    lead = _lead(Reverse.not_measured("the dest participant's reflector did not answer"))
    merged = _valid(result.merge({"type": "pmtu", "spec": SPEC}, [lead, _dest([], False)]))
    assert merged["succeeded"] is True and merged["path-mtu"] == 8950
    assert "busy" in merged["diags"]
    assert "did not answer" in merged["reverse-error"]
