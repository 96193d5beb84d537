"""jumbo.tool.result: the test result assembled on the source and merged on the lead."""

from jumbo.tool import result
from jumbo.core import validate

SPEC = {"schema": 1, "dest": "198.18.0.2", "reverse": True}
FORWARD = {"path-mtu": 8950, "local-mtu": 9000, "pmtud": "blackhole", "method": "udp",
           "ip-version": 4, "dest-ip": "198.18.0.2", "source-ip": "198.18.0.1", "probes": 9,
           "blackhole": {"ttl": 1, "ip": "198.18.0.2", "size": 8951}}


def _valid(res):
    ok, error = validate.check_result(res)
    assert ok, error
    return res


def test_a_black_hole_is_a_successful_measurement():
    res = _valid(result.assemble(SPEC, FORWARD, None, {"reverse-path-mtu": 9000,
                                                       "reverse-pmtud": "not-needed"}))
    assert res["succeeded"] is True and res["error"] is None
    assert res["jumbo"] is False and res["pmtud"] == "blackhole"
    assert res["reverse-path-mtu"] == 9000


def test_no_forward_answer_is_a_failure_with_the_reason():
    res = _valid(result.assemble(SPEC, None, "cannot resolve nowhere.invalid"))
    assert res["succeeded"] is False
    assert "nowhere.invalid" in res["error"]
    assert res["reverse-error"]


def test_the_schema_names_every_member_a_result_carries():
    """The result schema is complete: every member assemble/merge write is declared (the
    black hole, the engine's method, PTBs, ...), and an undeclared one does not validate,
    so a result is never repaired at run time."""
    engine = dict(FORWARD, elapsed=0.25, flows=[], hops=[{"ttl": 1, "ip": "198.18.0.2",
                                                          "mtu": 9000, "rtt": "PT0.001S"}],
                  ptb=[{"from": "198.18.0.1", "mtu": 8950, "useful": True}])
    res = _valid(result.assemble(SPEC, engine, None, {"reverse-path-mtu": 9000,
                                                      "reverse-pmtud": "ok", "rtt": 0.001}))
    assert res["blackhole"] == FORWARD["blackhole"] and res["ptb"] and res["reverse"]
    for member in result.FORWARD_FIELDS:
        assert member in res, member
    ok, error = validate.check_result(dict(res, surprise=1))
    assert not ok and "surprise" in error
    ok, error = validate.check_result(dict(res, blackhole="hop 1"))
    assert not ok and "blackhole" in error


def _lead(reverse):
    res = result.assemble(SPEC, FORWARD, None, reverse)
    return {"succeeded": True, "result": res, "error": None, "diags": ""}


def _dest(ptb, succeeded=True):
    return {"succeeded": succeeded, "error": None if succeeded else "port 5501 busy",
            "diags": "", "result": {"role": "dest", "reflector": {
                "ptb": ptb, "stats": {"answered": 3}, "local-mtu": 9000}}}


PENDING = {"reverse-path-mtu": 8950, "reverse-pmtud": "unknown", "pending": True}


def test_the_dests_report_decides_a_pending_reverse_verdict():
    ptb = [{"from": "198.18.1.2", "mtu": 8950, "size": 8951, "useful": True, "count": 3}]
    merged = _valid(result.merge({"type": "pmtu", "spec": SPEC}, [_lead(PENDING), _dest(ptb)]))
    assert merged["reverse-pmtud"] == "ok"
    assert merged["reverse-local-mtu"] == 9000
    silent = _valid(result.merge({"type": "pmtu", "spec": SPEC}, [_lead(PENDING), _dest([])]))
    assert silent["reverse-pmtud"] == "blackhole"


def test_a_failed_dest_is_named_and_the_forward_answer_stays():
    lead = _lead({"error": "the dest participant's reflector did not answer"})
    merged = _valid(result.merge({"type": "pmtu", "spec": SPEC}, [lead, _dest([], False)]))
    assert merged["succeeded"] is True and merged["path-mtu"] == 8950
    assert "busy" in merged["diags"]
    assert "did not answer" in merged["reverse-error"]
