"""The `jumbocheck` tool plugin's merged-results (contract 4.8), run through the harness as the server
runs it: the forward answer kept, the dest's reflector report folded in, failed and hostile inputs
answered with a failed result, the pair test's legs merged, private members never shown. Like
test_plugin_jumbocheck.py (whose helpers it uses), it needs no lab and no root."""

import json

import pytest

import harness
from jumbo.core import validate
from test_plugin_jumbocheck import PAIR, REVERSE, SPEC, as_pair, as_test, assert_no_traceback, call


# ------------------------------------------------------------------------------------------
# merged-results (contract 4.8)

def _source_output(**fields):
    from jumbo.tool import result
    forward = {"path-mtu": 8950, "local-mtu": 9000, "pmtud": "blackhole", "method": "udp",
               "ip-version": 4, "dest-ip": "198.18.0.2", "probes": 12}
    forward.update(fields)
    from jumbo.core.result import Reverse
    from jumbo.core.spec import RunSpec
    from jumbo.probe import PathResult
    reverse = Reverse()
    reverse.path_mtu, reverse.pmtud, reverse.local_mtu, reverse.probes = \
        1500, "not-needed", 1500, 20
    merged = result.assemble(RunSpec(dict(REVERSE, **{"target-mtu": 9000})),
                             PathResult.from_json(forward), None, reverse)
    return {"succeeded": True, "result": merged.as_json(), "error": None, "diags": ""}


def _merged_results(stdin):
    """merged-results' answer to `stdin`: whatever it was given, it exits 0 with no traceback."""
    done = call("merged-results", stdin)
    assert done.status == 0, done
    assert_no_traceback(done)
    return done.json(max_schema=1)


def _merge(results, test=None, check=validate.check_result):
    """The merged result of `results` for `test` (REVERSE's by default), valid by `check`."""
    merged = _merged_results({"test": test or as_test(REVERSE), "results": results})
    valid, error = check(merged)
    assert valid, error
    return merged


def test_merged_results_keeps_the_forward_answer_when_the_dest_is_missing():
    merged = _merge([_source_output(), None])
    assert merged["succeeded"] is True
    assert merged["path-mtu"] == 8950 and merged["pmtud"] == "blackhole"
    assert merged["jumbo"] is False
    assert merged["reverse-path-mtu"] == 1500
    assert "dest participant" in merged["diags"]


def test_merged_results_folds_in_the_dests_reflector_report():
    source = _source_output()
    source["result"]["reverse-pmtud"] = "unknown"
    source["result"]["reverse"]["pending"] = True
    dest = {"succeeded": True, "error": None, "diags": "",
            "result": {"role": "dest", "throughput-server": None,
                       "reflector": {"ptb": [{"from": "198.18.3.1", "mtu": 1500, "size": 1501,
                                              "useful": True, "count": 2}],
                                     "stats": {"answered": 10}, "local-limit": None}}}
    merged = _merge([source, dest])
    assert merged["reverse-pmtud"] == "ok"
    assert merged["reverse-ptb"][0]["from"] == "198.18.3.1"


def test_merged_results_of_a_failed_source_is_a_failed_result():
    merged = _merge([{"succeeded": False, "error": "Tool failed: boom", "diags": "x"}, None])
    assert merged["succeeded"] is False
    assert "boom" in merged["error"]


@pytest.mark.parametrize("stdin", ["", "{", "[]", {"test": as_test(SPEC)},
                                   {"test": as_test(SPEC), "results": []},
                                   {"test": as_test(SPEC), "results": [None]},
                                   {"test": as_test(SPEC), "results": [{"result": 5}]},
                                   {"test": 3, "results": "x"}])
def test_merged_results_answers_bad_input_with_a_failed_result(stdin):
    merged = _merged_results(stdin)
    assert merged["succeeded"] is False and merged["error"]
    assert validate.check_result(merged)[0]


def _pair_merge(results):
    return _merge(results, as_pair(PAIR), validate.check_pair_result)


def test_pair_merged_results_with_a_missing_or_failed_peer():
    from jumbo.core.result import Throughput
    from jumbo.probe import PathResult
    from jumbo.tool import pair_result as pair
    from jumbo.tool import throughput
    legs, info = throughput.plan({"throughput": {}}, 9000)
    runs = [dict(throughput.blank_run(leg), error="iperf3: connection refused") for leg in legs]
    failed = Throughput.from_json(throughput.summarize(runs, info))
    forward = PathResult.from_json({"path-mtu": 9000, "pmtud": "not-needed"})
    lead = {"succeeded": False, "error": None, "diags": "",
            "result": pair.assemble(forward, None, failed).as_json()}
    merged = _pair_merge([lead, None])
    assert merged["succeeded"] is False and merged["verdict"] == "failed"
    assert "connection refused" in merged["error"] and "missing" in merged["diags"]
    server = {"succeeded": False, "error": "port 5601 is busy on the dest", "served": 0}
    dest = {"succeeded": False, "error": "iperf3 server: port busy", "diags": "",
            "result": {"role": "dest", "reflector": {}, "throughput-server": server}}
    merged = _pair_merge([lead, dest])
    assert merged["server"]["error"] == server["error"]
    assert "dest participant: iperf3 server: port busy" in merged["diags"]
    # Without the legs at all (the peer never answered): a failed result that says why.
    lone = {"succeeded": False, "error": None, "diags": "",
            "result": pair.assemble(None, "no route to host", None,
                                    peer_error="no peer data").as_json()}
    merged = _pair_merge([lone, None])
    assert merged["error"] == "no peer data" and merged["path-mtu-error"] == "no route to host"


def test_path_mtu_step_is_cut_at_its_budget_and_the_slot_alarm_restored():
    """slot.bounded: the step's own alarm stops a slow step, then the slot's alarm is
    re-armed for the slot's end (a slow sleep stands in for a slow probe)."""
    import signal
    import time as clock
    from jumbo.tool import slot

    class Slot(object):
        end = clock.time() + 30

    fired = []
    previous = signal.signal(signal.SIGALRM, lambda *a: fired.append(1))
    try:
        began = clock.monotonic()
        value, error = slot.bounded(Slot(), 0.3, lambda run: (clock.sleep(5), None), "cut")
        assert clock.monotonic() - began < 2
        assert (value, error) == (None, "cut")
        left = signal.getitimer(signal.ITIMER_REAL)[0]
        assert 28 < left <= 30, left   # the slot's own alarm again
        assert signal.getsignal(signal.SIGALRM) is not None and not fired
        # A quick step passes through untouched.
        assert slot.bounded(Slot(), 5, lambda run: ({"path-mtu": 9000}, None), "cut") == \
            ({"path-mtu": 9000}, None)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_private_members_never_reach_the_merged_result():
    merged = _merge([_source_output(), harness.null_private(
        {"succeeded": True, "result": {"role": "dest", "reflector": None}, "_x": "secret"})])
    assert "secret" not in json.dumps(merged)
