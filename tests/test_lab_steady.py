"""lab/steady.py without root: WLCG's throughput mesh in the lab's template, and the count of
runs by state from pScheduler's own schedule answer, with the two ways a run can be lost (a
state that is not Finished; no run at all where the schedule promised one)."""

import collections
import copy
import datetime
import json

import pytest

from lab import real_mesh, steady

SITES = real_mesh.TEST_SITES
T0 = 1795800000.0  # 2026-11-28T...Z, any fixed moment


def _template():
    return real_mesh.template(real_mesh.topology(SITES), SITES, "http://198.18.18.1:9261",
                              "PT5M", "PT2M")


def test_throughput_mesh_is_wlcgs_one_iperf3_test_per_ordered_pair_beside_the_suites():
    base = _template()
    doc = steady.with_throughput(base, "PT20M", "PT10M")
    task = doc["tasks"][steady.WLCG_TEST]
    assert task["group"] == "lhcone-mesh" and task["tools"] == ["iperf3"]
    assert doc["groups"]["lhcone-mesh"]["type"] == "mesh"  # every ordered pair
    test = doc["tests"][task["test"]]
    assert test["type"] == "throughput"
    assert test["spec"]["duration"] == "PT20S"
    assert doc["schedules"][task["schedule"]] == {"repeat": "PT20M", "slip": "PT10M",
                                                  "sliprand": True}
    # jumbo-throughput competes on the same schedule; everything else as the lab had it
    assert doc["schedules"]["daily"]["repeat"] == "PT20M"
    assert doc["schedules"]["daily"]["slip"] == "PT10M"
    assert doc["schedules"]["hourly"] == base["schedules"]["hourly"]
    for name in base["tasks"]:
        assert doc["tasks"][name] == base["tasks"][name]
    assert base == _template()  # the lab's template itself untouched


def _stamp(seconds):
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def _run(start, state="finished", test="pmtu", task="t1", end=None):
    stamp = _stamp
    return {"start-time": stamp(start), "end-time": stamp(end or start + 30), "state": state,
            "state-display": steady.DISPLAY.get(state, state),
            "task": {"href": "https://ps-cern.lhcone.example/pscheduler/tasks/" + task,
                     "test": {"type": test, "spec": {}}}}


def test_schedule_is_parsed_from_pschedulers_json():
    text = json.dumps([_run(T0), _run(T0 + 300, "missed", "throughput", "t2")])
    runs = steady.parse_schedule("cern", text)
    assert [(r.test, r.state, r.start) for r in runs] == [("pmtu", "finished", T0),
                                                         ("throughput", "missed", T0 + 300)]
    # pScheduler also prints +00:00
    item = _run(T0)
    item["start-time"] = item["start-time"].replace("Z", "+00:00")
    assert steady.parse_schedule("cern", json.dumps([item]))[0].start == T0


@pytest.mark.parametrize("text", [
    "Nothing scheduled", "{}", json.dumps([{"state": "finished"}]),
    json.dumps([dict(_run(T0), **{"start-time": "2026-11-28T17:00:00"})]),  # no zone
    json.dumps([dict(_run(T0), state=3)]),
])
def test_a_schedule_that_is_not_one_is_refused_with_the_node_named(text):
    with pytest.raises(ValueError, match="^desy: "):
        steady.parse_schedule("desy", text)


def _runs(items, node="cern"):
    return steady.parse_schedule(node, json.dumps(items))


def test_counts_by_state_and_a_run_stuck_after_its_slot_counts_as_failed():
    now = T0 + 3600
    runs = _runs([_run(T0), _run(T0 + 300, "missed"), _run(T0 + 600, "nonstart"),
                  _run(T0 + 900, "running"),                   # long after its slot: stuck
                  _run(now - 20, "running", end=now + 10)])     # still in its slot
    per_node, per_test = steady.counts(runs, now)
    assert per_test["pmtu"] == collections.Counter(
        {"finished": 1, "missed": 1, "nonstart": 1, "failed": 1, "unfinished": 1})
    assert per_node[("cern", "pmtu")] == per_test["pmtu"]
    lines = steady.table(per_node, per_test)
    assert "Non-Starter" in lines[0] and lines[-1].split()[:3] == ["all", "pmtu", "1"]


def test_every_lost_run_is_listed_with_what_pscheduler_says_about_it():
    """A failed demo says why: each lost run's node, test, start, state and `errors` (made
    one printable line, cut at ERRORS_SHOWN); a finished or unfinished run is not listed."""
    now = T0 + 3600
    failed = dict(_run(T0 + 600, "failed"), errors="Tool jumbocheck failed to merge results:\n"
                  "Process took too long to run.")
    nonstart = dict(_run(T0 + 300, "nonstart", "jumbo-throughput"), errors=["x" * 400])
    runs = _runs([_run(T0), nonstart, failed, _run(T0 + 900, "running"),
                  _run(now - 20, "running", end=now + 10)])
    lines = steady.lost_runs(runs, now)
    assert len(lines) == 3, lines
    assert lines[0].startswith("   lost: cern jumbo-throughput ") and "Non-Starter" in lines[0]
    assert lines[0].endswith("x" * (steady.ERRORS_SHOWN - 2) + "...")
    assert lines[1].endswith("Failed: Tool jumbocheck failed to merge results: Process took "
                             "too long to run.")
    assert lines[2].endswith("Failed: (no errors given)")       # stuck after its slot


def test_a_run_never_scheduled_shows_as_a_gap_longer_than_repeat_plus_slip():
    bound = 420.0  # PT5M + PT2M
    # every 5 to 7 minutes: no gap; then one run missing (14 min)
    starts = [T0, T0 + 400, T0 + 700, T0 + 1120, T0 + 1960, T0 + 2300]
    runs = _runs([_run(t) for t in starts])
    found = steady.gaps(runs, {"pmtu": bound}, T0 - 60, T0 + 2400)
    assert [(g[0], g[1], g[3]) for g in found] == [("cern", "pmtu", 840.0)]
    # the tail counts too: no run since the last start for longer than the bound
    tail = steady.gaps(runs, {"pmtu": bound}, T0 - 60, T0 + 2300 + bound + steady.GAP_MARGIN + 1)
    assert len(tail) == 2
    # a test without a bound, and runs before the agents started, are not looked at
    assert steady.gaps(runs, {}, T0 - 60, T0 + 9999) == []
    assert steady.gaps(runs, {"pmtu": bound}, T0 + 1960, T0 + 2400) == []


def test_verdict_passes_only_when_every_expected_task_ran_and_nothing_was_lost():
    now = T0 + 3600
    good = _runs([_run(T0, task="a"), _run(T0 + 30, test="throughput", task="b")]) + \
        _runs([_run(T0 + 30, test="throughput", task="b")], node="desy")
    per_node, per_test = steady.counts(good, now)
    tasks = steady.task_counts(good)
    assert tasks == {"pmtu": 1, "throughput": 1}  # one task on two nodes is one task
    assert steady.verdict(per_test, [], {"pmtu": 1, "throughput": 1}, tasks) == []
    # a missing task, a test with nothing, a lost run, a gap: each named
    problems = steady.verdict(per_test, [], {"pmtu": 2, "jumbo-throughput": 1}, tasks)
    assert any("pmtu: 1 tasks" in p for p in problems)
    assert any(p.startswith("jumbo-throughput: no finished run") for p in problems)
    lost = good + _runs([_run(T0 + 60, "missed", test="throughput", task="b")], node="desy")
    per_node, per_test = steady.counts(lost, now)
    assert steady.verdict(per_test, [], {"throughput": 1}, tasks) == ["throughput: 1 Missed"]
    gap = [("desy", "throughput", "https://x/tasks/b", 900.0, T0, T0 + 900)]
    assert "desy throughput: no run for 900 s" in \
        steady.verdict(per_test, gap, {"throughput": 1}, tasks)[-1]


def test_the_shipped_template_is_never_changed_in_place():
    shipped = json.load(open(real_mesh.TEMPLATE))
    before = copy.deepcopy(shipped)
    steady.with_throughput(shipped, "PT20M", "PT10M")
    assert shipped == before


def test_the_scheduling_horizon_is_shortened_as_the_repeats_are():
    """A production node schedules hourly tasks P1D ahead: 24 runs. The lab's PT5M repeats get
    PT2H, the same 24 runs ahead (not the ~270 of P1D that kept the machine at load 30-50)."""
    assert steady.horizon("PT5M") == "PT7200S"
    assert steady.horizon("PT1H") == "PT86400S"                  # production: upstream's P1D
    assert steady.horizon("PT10S") == "PT600S"                   # never under 10 minutes
    for repeat in ("PT5M", "PT10M", "PT30M"):
        ahead = steady.duration_seconds(steady.horizon(repeat)) / steady.duration_seconds(repeat)
        assert ahead == 24


def test_a_missed_run_the_runner_never_took_is_excused_up_to_one_percent():
    """Upstream's pickup window (docs/operator.md, known issues): a Missed run whose node's
    runner log shows it looping and never taking the run is left out of the verdict, at most
    1 % of a test's runs (at least one); a Missed run it took, or one beyond that share, is
    still a problem."""
    stamp = lambda t: datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime(  # noqa: E731
        "%Y-%m-%dT%H:%M:%S")
    missed_at = T0 + 600
    log = ["%s Next run or check in 0:00:15" % stamp(missed_at - 10)]
    runs = _runs([_run(T0), _run(missed_at, "missed"), _run(missed_at + 1, "missed")])
    now = T0 + 3600
    per_node, per_test = steady.counts(runs, now)
    tasks = steady.task_counts(runs)
    excused = steady.never_taken(runs, now, {"cern": log})
    assert excused == {"pmtu": 2}
    # 3 runs: one excused (at least one), the other still lost
    assert steady.verdict(per_test, [], {"pmtu": 1}, tasks, excused) == ["pmtu: 1 Missed"]
    assert steady.verdict(per_test, [], {"pmtu": 1}, tasks) == ["pmtu: 2 Missed"]
    # taken by the runner: not excused
    taken = log + ["%s Run 7, starts at %s+00:00" % (stamp(missed_at - 9), stamp(missed_at).replace("T", " "))]
    assert steady.never_taken(runs, now, {"cern": taken}) == {"pmtu": 1}
    # no log: nothing excused
    assert steady.never_taken(runs, now, {}) == {}
