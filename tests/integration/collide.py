"""Two exclusive tasks made to want one slot on the real pScheduler nodes: the first placed
45 s out, the second asking for a start 5 s into the first's pending run, with 3 minutes of
slip and no random slip (so the time it asks for is the first it may be proposed). Whether
pScheduler places the second after the first or drops it as a Non-Starter is what
test_real_pscheduler_priority.py and test_real_pscheduler_upstream_fixes.py read."""

import datetime
import time

from real_pscheduler import ADDR, task_url

DEST4 = ADDR["b"]
# A run's final states (upstream run_state.sql); `cleanup` and the rest are on the way.
ENDED = ("finished", "overdue", "missed", "failed", "preempted", "nonstart", "canceled")
JUMBO_THROUGHPUT = ["jumbo-throughput", "--dest", DEST4, "--duration", "2", "--omit", "0"]
THROUGHPUT = ["throughput", "--dest", DEST4, "--duration", "PT5S"]


def at(seconds):
    return (datetime.datetime.utcnow() + datetime.timedelta(seconds=seconds)).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def parse(text):
    return datetime.datetime.strptime(text[:19], "%Y-%m-%dT%H:%M:%S")


def scheduled(cli, timeout=120):
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


def only_run(nodes, url, timeout=300):
    """The task's one run once it is no longer pending or running."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        runs = nodes.task_runs(url)
        if runs and runs[0]["state"] in ENDED:
            return runs[0]
        time.sleep(3)
    raise AssertionError("the run of %s did not end in %d s" % (url, timeout))


def collide(nodes, first, second, first_priority=None, second_priority=None):
    """(first run, second run) once both ended: `first` and `second` are a test and its
    options (JUMBO_THROUGHPUT, THROUGHPUT), each task at its priority (None: none given)."""
    def options(priority):
        return ["--priority", str(priority)] if priority is not None else []
    one = nodes.cli_background("a", ["task", "--start", at(45)] + options(first_priority) + first)
    clis = [one]
    try:
        one_url = scheduled(one)
        pending = nodes.task_runs(one_url)[0]
        assert pending["state"] == "pending", pending
        wanted = parse(pending["start-time"]) + datetime.timedelta(seconds=5)
        two = nodes.cli_background("a", ["task", "--start", wanted.strftime("%Y-%m-%dT%H:%M:%SZ"),
                                         "--slip", "PT3M"] + options(second_priority) + second)
        clis.append(two)
        two_url = scheduled(two)
        return only_run(nodes, one_url), only_run(nodes, two_url)
    finally:
        for cli in clis:
            cli.stop()
