"""The real mesh in steady state (issue 29): WLCG's own throughput mesh beside the suite's tasks
in the lab's template, and every agent-created run counted by test and state from each node's
own schedule (`pscheduler schedule --format json`), with the checks that say a run was lost.

A run can be lost in two ways pScheduler shows differently: it is in the schedule in a state
that is not Finished (Missed, Non-Starter, Failed, Preempted, or still unfinished long after
its slot ended), or it is not in the schedule at all (no slot within the slip: the exclusive
jumbo-throughput pushing WLCG's throughput test out would look like this). The first is
counted from the states; the second from the gap between a task's consecutive runs, which
its schedule bounds by repeat + slip.
"""

import collections
import copy
import datetime
import json

from jumbo.core.units import duration_seconds

from . import runner_log

# WLCG's throughput mesh as its pSConfig template has it: one upstream `throughput` test per
# ordered pair, iperf3, 20 s (bench/schedule.py WLCG_SLOT); every 6 h in production.
WLCG_TEST = "wlcg-throughput"
WLCG_SPEC = {"source": "{% address[0] %}", "dest": "{% address[1] %}", "duration": "PT20S",
             "ip-version": 4}
# The schedule's final states, as upstream's run_state table names them (state-display).
FINISHED = "finished"
MISSED = "missed"
LOST = ("missed", "nonstart", "failed", "preempted")
DISPLAY = {"finished": "Finished", "missed": "Missed", "nonstart": "Non-Starter",
           "failed": "Failed", "preempted": "Preempted", "unfinished": "unfinished"}
COLUMNS = ("finished", "missed", "nonstart", "failed", "preempted", "unfinished")
# A run still pending/running this long after its slot ended is stuck, not unfinished.
STUCK_AFTER = 180.0
# What the scheduler may add to repeat + slip between two runs of one task (its start lead,
# a busy node's late posting of the next run) before the gap means a run was not scheduled.
GAP_MARGIN = 120.0


# pScheduler schedules a task's runs this far ahead (its `configurables.schedule_horizon`,
# P1D by default) for a mesh measuring hourly: 24 runs of each task ahead.
PRODUCTION_HORIZON = 86400.0
PRODUCTION_REPEAT = 3600.0


def horizon(repeat):
    """pScheduler's scheduling horizon for a lab whose hourly repeats are shortened to `repeat`
    (ISO 8601): P1D shortened by the same factor (PT5M: PT2H), so that each node schedules as
    many runs of a task ahead as a production node does. With P1D and PT5M every node placed
    ~270 runs of each task ahead, and the five nodes' schedulers alone held the 2-core machine
    at load 30-50 (2026-11-28). A task whose slip is longer than the horizon (the template's
    daily jumbo-throughput, slip PT20H) is then not scheduled within a demo's rounds at all;
    pScheduler leaves it until its slip fits (upstream schedule.sql, issue #1064)."""
    seconds = duration_seconds(repeat) * PRODUCTION_HORIZON / PRODUCTION_REPEAT
    return "PT%dS" % max(int(seconds), 600)


def with_throughput(doc, repeat, slip):
    """The lab's template `doc` (lab.real_mesh.template) plus WLCG's throughput mesh on the
    same group, every `repeat` within `slip`, and the template's daily jumbo-throughput put on
    that same schedule, so both exclusive tests compete for the same hosts within the lab's
    hour. The WLCG task names no archive: its runs are counted from the schedules (the lab
    has no Logstash), and the `jumbo` archiver is for the suite's own tests."""
    doc = copy.deepcopy(doc)
    group = doc["tasks"]["jumbo-throughput-v4"]["group"]
    doc["tests"][WLCG_TEST] = {"type": "throughput", "spec": dict(WLCG_SPEC),
                               "_meta": {"display-name": "WLCG throughput (iperf3, 20 s)"}}
    doc["schedules"][WLCG_TEST] = {"repeat": repeat, "slip": slip, "sliprand": True}
    doc["schedules"]["daily"].update({"repeat": repeat, "slip": slip})
    doc["tasks"][WLCG_TEST] = {"group": group, "test": WLCG_TEST, "schedule": WLCG_TEST,
                               "tools": ["iperf3"],
                               "reference": {"display-task-name": "Throughput"}}
    return doc


def _time(text):
    """An ISO 8601 time as pScheduler prints it (2026-11-28T17:20:05Z or +00:00)."""
    if not isinstance(text, str):
        raise ValueError("not a time: %r" % (text,))
    text = text.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    moment = datetime.datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError("a time without its zone: %r" % text)
    return moment.timestamp()


Run = collections.namedtuple("Run", "node test task start end state errors")
# The most of a run's `errors` text shown (a node's answer, printed on the operator's screen).
ERRORS_SHOWN = 300


def parse_schedule(node, text):
    """[Run] of one node's `pscheduler schedule --format json` output; ValueError with what
    is wrong when it is not a list of runs (a node's answer is validated like any input)."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise ValueError("%s: schedule is not JSON (%s): %.200s" % (node, exc, text))
    if not isinstance(doc, list):
        raise ValueError("%s: schedule is not a list of runs" % node)
    runs = []
    for item in doc:
        try:
            task = item["task"]
            test = task["test"]["type"]
            state = item["state"]
            if not (isinstance(test, str) and isinstance(state, str)):
                raise TypeError("test type and state must be strings")
            runs.append(Run(node, test, str(task.get("href") or ""), _time(item["start-time"]),
                            _time(item["end-time"]), state, _errors(item.get("errors"))))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError("%s: a run of the schedule is malformed (%s): %.200s"
                             % (node, exc, json.dumps(item)[:200]))
    return runs


def _errors(value):
    """The schedule's `errors` of a run (why pScheduler did not start it, or why it failed) as
    one printable line of at most ERRORS_SHOWN characters; None when there are none."""
    if value in (None, "", [], {}):
        return None
    text = value if isinstance(value, str) else json.dumps(value)
    text = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return text[:ERRORS_SHOWN] + ("..." if len(text) > ERRORS_SHOWN else "")


def lost_runs(runs, now, runner_logs=None):
    """Text lines, one per run lost (Missed, Non-Starter, Failed, Preempted, stuck): node,
    test, start, state and what pScheduler says about it, so a failed demo says why; for a
    Missed run (pScheduler gives it no errors) what the node's runner log says
    (`runner_logs`: {node: lines}, lab/runner_log.py)."""
    lines = []
    for run in sorted(runs, key=lambda r: (r.start, r.node, r.test)):
        column = state_of(run, now)
        if column not in LOST:
            continue
        why = run.errors or "(no errors given)"
        if column == MISSED and runner_logs is not None:
            why = runner_log.missed_reason(runner_logs.get(run.node) or [], run.start)
        lines.append("   lost: %s %s %s %s: %s" % (
            run.node, run.test, _clock(run.start), DISPLAY[column], why))
    return lines


def state_of(run, now):
    """The run's column: its final state, `unfinished` while its slot may still be ending,
    and `failed` for one left pending or running STUCK_AFTER after its slot."""
    if run.state == FINISHED or run.state in LOST:
        return run.state
    return "unfinished" if run.end > now - STUCK_AFTER else "failed"


def counts(runs, now):
    """{(node, test): Counter(column)} and {test: Counter(column)} summed over the nodes (a
    run of two participants is in both nodes' schedules and counted on each)."""
    per_node = collections.defaultdict(collections.Counter)
    per_test = collections.defaultdict(collections.Counter)
    for run in runs:
        column = state_of(run, now)
        per_node[(run.node, run.test)][column] += 1
        per_test[run.test][column] += 1
    return per_node, per_test


def gaps(runs, bounds, since, now):
    """[(node, test, task, seconds, from, to)] where a task's consecutive runs on a node start
    further apart than its schedule's repeat + slip (bounds[test], seconds) + GAP_MARGIN, or
    its last run started that long before `now`: a run the scheduler never placed. Runs are
    looked at from `since` (the agents' start) on; a test without a bound is not checked."""
    by_task = collections.defaultdict(list)
    for run in runs:
        if run.test in bounds and run.start >= since:
            by_task[(run.node, run.test, run.task)].append(run.start)
    found = []
    for (node, test, task), starts in sorted(by_task.items()):
        limit = bounds[test] + GAP_MARGIN
        # A run already placed after `now` closes the tail; else `now` does.
        starts = sorted(starts)
        if starts[-1] < now:
            starts.append(now)
        for before, after in zip(starts, starts[1:]):
            if after - before > limit:
                found.append((node, test, task, after - before, before, after))
    return found


def table(per_node, per_test):
    """The counts as text lines: one per node and test, then the totals per test."""
    head = "   %-8s %-18s" % ("node", "test") + "".join("%12s" % DISPLAY[c] for c in COLUMNS)
    lines = [head]
    for (node, test), counter in sorted(per_node.items()):
        lines.append("   %-8s %-18s" % (node, test) + "".join("%12d" % counter[c]
                                                           for c in COLUMNS))
    for test, counter in sorted(per_test.items()):
        lines.append("   %-8s %-18s" % ("all", test) + "".join("%12d" % counter[c]
                                                          for c in COLUMNS))
    return lines


def task_counts(runs):
    """{test: number of distinct tasks} over every node's schedule (a task of two
    participants is one task: the same UUID on both nodes)."""
    tasks = collections.defaultdict(set)
    for run in runs:
        tasks[run.test].add(run.task.rstrip("/").rsplit("/", 1)[-1])
    return dict((test, len(uuids)) for test, uuids in tasks.items())


def never_taken(runs, now, runner_logs):
    """{test: n} of the Missed runs whose node's runner log shows it never took them
    (lab/runner_log.py): upstream's pickup window, not the suite (docs/operator.md, known
    issues). A node without a log excuses nothing."""
    out = collections.Counter()
    for run in runs:
        if state_of(run, now) == MISSED and runner_log.never_taken(
                runner_logs.get(run.node) or [], run.start):
            out[run.test] += 1
    return dict(out)


def upstream_share(counter, excused):
    """At most this many of a test's Missed runs are excused: 1 %, at least one (what one
    round of a small mesh can lose to the runner's window; more means an unhealthy node)."""
    return min(excused, counter[MISSED], max(1, sum(counter.values()) // 100))


def verdict(per_test, found_gaps, expected_tasks, tasks, excused=None):
    """[problem text]: empty when every expected test has its tasks (expected_tasks: {test:
    how many}; tasks: task_counts), every run finished and none was left out. An expected
    test with no finished run is a problem too (a check that found nothing to count cannot
    pass). `excused` ({test: n}, never_taken) leaves out Missed runs upstream's runner never
    took, up to upstream_share; the caller prints them."""
    problems = []
    excused = excused or {}
    for test, wanted in sorted(expected_tasks.items()):
        counter = per_test.get(test, collections.Counter())
        if counter[FINISHED] == 0:
            problems.append("%s: no finished run in any node's schedule" % test)
        if tasks.get(test, 0) != wanted:
            problems.append("%s: %d tasks with runs in the schedules, %d expected" % (
                test, tasks.get(test, 0), wanted))
    for test, counter in sorted(per_test.items()):
        counter = collections.Counter(counter)
        counter[MISSED] -= upstream_share(counter, excused.get(test, 0))
        lost = dict((DISPLAY[c], counter[c]) for c in LOST if counter[c])
        if lost:
            problems.append("%s: %s" % (test, ", ".join(
                "%d %s" % (n, name) for name, n in sorted(lost.items()))))
    for node, test, task, seconds, before, after in found_gaps:
        problems.append("%s %s: no run for %.0f s (%s to %s; task %s)" % (
            node, test, seconds, _clock(before), _clock(after), task.rsplit("/", 1)[-1][:8]))
    return problems


def _clock(seconds):
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%H:%M:%S")
