"""The template's priority for jumbo-throughput (-1) under the real pScheduler 5.2.5: an
upstream `throughput` task (no priority, as WLCG's pSConfig template makes it) whose wanted
start falls inside a pending jumbo-throughput run.

Why (upstream database/schedule.sql, api_proposed_times, and run.sql, run_has_conflicts):
the times a node proposes skip pending runs whose priority is NULL, while the check made when
the run is inserted counts them as priority 0. A task without a priority proposes the pending
exclusive run's own time, is refused at insert, retries the same proposal and gives up (the
conflict drop, docs/operator.md). A pending run with a priority is avoided by those proposals;
at -1 it also yields at insert and at start to any run at 0 or NULL, so it never pushes out
another test.

Truth: with jumbo-throughput at -1 the throughput run is placed after it and both finish; the
same two tasks with jumbo-throughput at no priority: the throughput run is a Non-Starter that
gave up on conflicts (the control: this test fails where the priority makes no difference).
"""

import datetime
import time

from real_pscheduler import ADDR, task_url

DEST4 = ADDR["b"]
# A run's final states (upstream run_state.sql); `cleanup` and the rest are on the way.
ENDED = ("finished", "overdue", "missed", "failed", "preempted", "nonstart", "canceled")


def _at(seconds):
    return (datetime.datetime.utcnow() + datetime.timedelta(seconds=seconds)).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def _scheduled(cli, timeout=120):
    """The task URL once pScheduler has placed its first run (the CLI says so)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = "".join(cli.out)
        if "Next scheduled run" in text or cli.proc.poll() is not None:
            return task_url(text) or _task(text)
        time.sleep(0.5)
    raise AssertionError("no run scheduled in %d s:\n%s" % (timeout, "".join(cli.out)))


def _task(text):
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "Task URL:" and i + 1 < len(lines):
            return lines[i + 1].strip()
    return None


def _only_run(nodes, url, timeout=300):
    """The task's one run once it is no longer pending or running."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        runs = nodes.task_runs(url)
        if runs and runs[0]["state"] in ENDED:
            return runs[0]
        time.sleep(3)
    raise AssertionError("the run of %s did not end in %d s" % (url, timeout))


def _parse(text):
    return datetime.datetime.strptime(text[:19], "%Y-%m-%dT%H:%M:%S")


def _pair(nodes, priority):
    """(jumbo-throughput run, throughput run): the throughput task wants a start 5 s into the
    pending jumbo-throughput run, with 3 minutes of slip."""
    args = ["task", "--start", _at(45)]
    if priority is not None:
        args += ["--priority", str(priority)]
    jumbo = nodes.cli_background("a", args + ["jumbo-throughput", "--dest", DEST4,
                                              "--duration", "2", "--omit", "0"])
    jumbo_url = _scheduled(jumbo)
    first = nodes.task_runs(jumbo_url)[0]
    assert first["state"] == "pending", first
    wanted = _parse(first["start-time"]) + datetime.timedelta(seconds=5)
    other = nodes.cli_background("a", ["task", "--start", wanted.strftime("%Y-%m-%dT%H:%M:%SZ"),
                                       "--slip", "PT3M", "throughput", "--dest", DEST4,
                                       "--duration", "PT5S"])
    other_url = _scheduled(other)
    try:
        return _only_run(nodes, jumbo_url), _only_run(nodes, other_url)
    finally:
        for cli in (jumbo, other):
            cli.stop()


def test_jumbo_throughput_at_minus_one_never_pushes_out_a_throughput_test(nodes):
    # The control first: without a priority, pScheduler's conflict drop.
    jumbo, other = _pair(nodes, None)
    assert jumbo["state"] == "finished", jumbo
    assert other["state"] == "nonstart", other
    assert "conflict" in str(other.get("errors") or other.get("result-merged")), other
    # The template's priority: the throughput run is placed after it, and both run.
    jumbo, other = _pair(nodes, -1)
    assert other["state"] == "finished", other
    assert jumbo["state"] == "finished", jumbo
    assert _parse(other["start-time"]) >= _parse(jumbo["end-time"]), (jumbo, other)
