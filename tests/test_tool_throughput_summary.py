"""jumbo.tool.throughput.summary: each size's mean and spread, the jumbo gain with its noise,
the Mathis ceilings, the stall check against the standard legs, and the verdict (figures
worked out by hand from the formulas the module states)."""

import math

import pytest

from jumbo.tool.throughput import summary


def _run(order, size, throughput, direction="forward", succeeded=True, stalled=False,
         error=None, mss=None):
    return {"order": order, "size": size, "direction": direction, "throughput": throughput,
            "succeeded": succeeded, "stalled": stalled, "error": error,
            "mss": mss or (1460 if size == "standard" else 8960), "observed-mss": None,
            "mtu": 1500 if size == "standard" else 9000, "pmtu": None,
            "rtt": 0.01, "bytes": 10 ** 9, "retransmits": 10}


def test_stats():
    assert summary.stats([]) == {"mean": None, "stdev": None, "min": None, "max": None, "n": 0}
    assert summary.stats([5.0]) == {"mean": 5.0, "stdev": None, "min": 5.0, "max": 5.0, "n": 1}
    got = summary.stats([2.0, 4.0, 9.0])
    assert got["mean"] == 5.0 and got["n"] == 3 and (got["min"], got["max"]) == (2.0, 9.0)
    assert got["stdev"] == pytest.approx(math.sqrt((9 + 1 + 16) / 2.0))  # sample stdev


def test_gain_noise_from_the_spread_of_repeated_runs():
    std = summary.stats([4e9, 5e9])
    jum = summary.stats([11e9, 13e9])
    gain, noise = summary.gain_and_noise(std, jum)
    assert gain == pytest.approx(12 / 4.5)
    cv_s, cv_j = std["stdev"] / 4.5e9, jum["stdev"] / 12e9
    assert noise == pytest.approx(gain * ((cv_s ** 2 + cv_j ** 2) / 2) ** 0.5)
    assert summary.gain_and_noise(summary.stats([4e9]), summary.stats([8e9])) == (2.0, None)
    assert summary.gain_and_noise(summary.stats([]), summary.stats([8e9])) == (None, None)
    assert summary.gain_and_noise(summary.stats([0.0, 0.0]), jum) == (None, None)


def test_mathis_ceiling_and_loss_floor():
    run = {"succeeded": True, "rtt": 0.01, "bytes": 1448 * 10000, "observed-mss": 1448,
           "mss": 1460, "retransmits": 1, "throughput": 1e8}
    m = summary.mathis([run])
    assert m["loss"] == pytest.approx(1e-4) and m["mss"] == 1448 and not m["loss-floored"]
    assert m["ceiling"] == pytest.approx(1448 * 8 / 0.01 * 1.5 ** 0.5 / 1e-2)
    assert m["loss-limited"] is True  # 1e8 is above half the 1.42e8 ceiling
    run["retransmits"] = 0
    m = summary.mathis([run])
    assert m["loss-floored"] and m["loss"] == pytest.approx(0.5e-4)
    assert summary.mathis([dict(run, succeeded=False)]) is None
    assert summary.mathis([dict(run, rtt=None)]) is None and summary.mathis([]) is None


def test_a_run_near_its_ceiling_is_loss_limited():
    run = {"succeeded": True, "rtt": 0.01, "bytes": 1448 * 10000, "observed-mss": 1448,
           "mss": 1460, "retransmits": 1, "throughput": 1e8}
    ceiling = summary.mathis([run])["ceiling"]  # 1.419e8 bit/s
    assert summary.mathis([dict(run, throughput=0.5 * ceiling)])["loss-limited"] is True
    assert summary.mathis([dict(run, throughput=0.49 * ceiling)])["loss-limited"] is False


def _abba(std, jumbo):
    return [_run(0, "standard", std[0]), _run(1, "jumbo", jumbo[0]),
            _run(2, "jumbo", jumbo[1]), _run(3, "standard", std[1])]


@pytest.mark.parametrize("std,jumbo,verdict", [
    ((4e9, 4e9), (9e9, 9e9), "jumbo-faster"),
    ((4e9, 4e9), (4.1e9, 4.1e9), "no-difference"),     # gain 1.025, within the 5 % floor
    ((4e9, 4e9), (4.3e9, 4.3e9), "jumbo-faster"),       # gain 1.075
    ((4e9, 4e9), (3e9, 3e9), "jumbo-slower"),
    # A noisy gain: 1.5 +- 2 x noise does not clear 1.
    ((1e9, 7e9), (5e9, 7e9), "no-difference"),
    # Gain 1.5, each size's spread 25 % of its mean: noise 0.375; 1.5 - 2 x 0.375 < 1.
    ((4e9 - 0.5 ** 0.5 * 1e9, 4e9 + 0.5 ** 0.5 * 1e9),
     (6e9 - 0.5 ** 0.5 * 1.5e9, 6e9 + 0.5 ** 0.5 * 1.5e9), "no-difference"),
])
def test_the_verdict_weighs_the_gain_against_its_noise(std, jumbo, verdict):
    result = summary.summarize(_abba(std, jumbo), {"jumbo-mtu": 9000})
    assert result["verdict"] == verdict, result
    assert result["gain"] == pytest.approx(sum(jumbo) / sum(std))
    assert result["notes"] == [] and result["error"] is None and "by-direction" not in result


def test_a_jumbo_run_far_below_the_standard_runs_is_a_black_hole():
    runs = _abba((4e9, 4e9), (9e9, 3e7))  # 3e7 < 1 % of 4e9
    result = summary.summarize(runs, {"jumbo-mtu": 9000, "note": None})
    assert result["verdict"] == "blackhole"
    assert runs[2]["stalled"] and not runs[2]["succeeded"]
    assert runs[2]["error"] == "stalled: 30000000 bit/s against 4000000000 at 1500"
    assert result["notes"] == ["jumbo run(s) 2 stalled at full MSS while the 1500 runs flowed: "
                               "big packets vanish on this path (PMTUD black hole)"]
    assert result["jumbo"]["n"] == 1  # the stalled run is no throughput sample


def test_without_standard_runs_a_stall_is_no_black_hole():
    runs = [_run(0, "standard", None, succeeded=False, error="connect failed"),
            _run(1, "jumbo", None, succeeded=False, stalled=True, error="stalled")]
    result = summary.summarize(runs, {"jumbo-mtu": 9000})
    assert result["verdict"] == "failed"
    assert result["notes"] == ["run(s) 0, 1 failed: connect failed"]


def test_a_skipped_jumbo_leg_keeps_the_baseline():
    runs = [_run(0, "standard", 4e9), _run(1, "standard", 4e9)]
    info = {"jumbo-mtu": None, "note": "no jumbo", "skipped": "no jumbo"}
    result = summary.summarize(runs, info)
    assert result["verdict"] == "skipped" and result["skipped"] == "no jumbo"
    assert result["standard"]["mean"] == 4e9 and result["gain"] is None
    assert result["notes"] == ["no jumbo"]
    assert summary.summarize([], info)["verdict"] == "failed"


def test_both_directions_get_their_own_gain():
    runs = [_run(0, "standard", 4e9), _run(1, "standard", 2e9, direction="reverse"),
            _run(2, "jumbo", 8e9), _run(3, "jumbo", 2e9, direction="reverse")]
    result = summary.summarize(runs, {"jumbo-mtu": 9000})
    by = result["by-direction"]
    assert by["forward"]["gain"] == 2.0 and by["reverse"]["gain"] == 1.0
    assert result["gain"] == pytest.approx(5e9 / 3e9)


def _capped(order, throughput=2e9, seen=2896):
    return dict(_run(order, "jumbo", throughput, succeeded=False,
                     error="observed MSS %d does not match the leg's MSS 8960" % seen),
                **{"observed-mss": seen, "pmtu": 9000})


def test_jumbo_legs_the_receivers_mss_held_small_are_a_finding():
    standard = [dict(_run(o, "standard", 2.1e9), **{"observed-mss": 1448, "pmtu": 9000})
                for o in (0, 3)]
    runs = [standard[0], _capped(1), _capped(2), standard[1]]
    result = summary.summarize(runs, {"jumbo-mtu": 9000})
    assert result["verdict"] == "mss-capped" and result["gain"] is None
    # 2896 = 2 x 1448: the standard legs' MSS divides it, so it is the size.
    assert [r["observed-mss"] for r in runs] == [1448, 1448, 1448, 1448]
    assert result["notes"] == [
        "jumbo legs ran at MSS 1448 while their sockets' path MTU was 9000: TCP did not use "
        "jumbo frames. The receiving host advertised a smaller MSS: its route back to the "
        "sender has a smaller path MTU (an asymmetric return path; the pmtu test's reverse "
        "measurement shows it) or a middlebox clamps MSS"]
    # One jumbo leg that failed otherwise: no finding, the run failed.
    timed_out = _run(2, "jumbo", None, succeeded=False, error="iperf3 timed out")
    runs = [standard[0], _capped(1), timed_out, standard[1]]
    assert summary.summarize(runs, {"jumbo-mtu": 9000})["verdict"] == "failed"
    # One jumbo leg at its size: the gain stands on it, the capped leg is a failed run.
    fine = dict(_run(2, "jumbo", 6e9), **{"observed-mss": 8948, "pmtu": 9000})
    result = summary.summarize([standard[0], _capped(1), fine, standard[1]],
                               {"jumbo-mtu": 9000})
    assert result["verdict"] == "jumbo-faster" and result["jumbo"]["n"] == 1
    assert result["notes"][0].startswith("run(s) 1 failed: observed MSS 1448")
