"""bench/pscheduler.py's summary: a run that gave no result is counted apart and never enters a
median, and a ratio with no result on either side is undecided, never a figure (measured at
load 40: upstream's fwmtu, tracemtu and rtt submissions failed 'Process took too long to run'
after 10-30 s, which a median of all waits would have reported as fast)."""

from bench import pscheduler


def test_failed_runs_never_enter_a_median_and_an_empty_case_leaves_the_ratio_undecided(capsys):
    waits = {"pmtu": [36.0, 40.0, None], "pmtu --reflector": [None, None, None],
             "mtu/fwmtu": [10.0, None, 12.0], "mtu/tracemtu": [None, 50.0, None],
             "rtt": [14.0, 16.5, 15.0]}
    assert pscheduler._summary(waits, {}) == 1
    out = capsys.readouterr().out
    assert "ratio pmtu / mtu-fwmtu (the floor): 3.45" in out           # 38.0 / 11.0
    assert "ratio pmtu --reflector / mtu-fwmtu (the floor): undecided" in out
    assert "median 38.0 s - target <= 25 s: NOT met" in out


def test_every_case_with_a_result_exits_0(capsys):
    waits = dict((name, [20.0, 22.0]) for name, _ in pscheduler.CASES)
    assert pscheduler._summary(waits, {}) == 0
    assert "ratio pmtu / mtu-fwmtu (the floor): 1.00" in capsys.readouterr().out


def test_upstream_tracemtu_failing_on_the_black_hole_is_shown_not_a_failed_bench(capsys):
    """Measured 2026-11-28 on the lab: upstream's tracemtu never gets past the black hole
    ("Destination ... not reached; last hop was #1"). The ratios need pmtu and fwmtu only:
    the bench decides (exit 0) and shows why tracemtu gave nothing."""
    waits = dict((name, [20.0, 22.0]) for name, _ in pscheduler.CASES)
    waits["mtu/tracemtu"] = [None, None]
    why = {"mtu/tracemtu": "Destination 198.18.201.2 not reached; last hop was #1 at 198.18.200.254."}
    assert pscheduler._summary(waits, why) == 0
    out = capsys.readouterr().out
    assert "mtu/tracemtu gave no result: Destination 198.18.201.2 not reached" in out
    waits["mtu/fwmtu"] = [None, None]                 # the floor itself: undecided
    assert pscheduler._summary(waits, why) == 1
