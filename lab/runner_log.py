"""What pScheduler's runner logged about a run: the lab's nodes run it with `--debug`
(lab/real_pscheduler/nodes.sh), because a run it never picks up is marked Missed with no
`errors` at all.

Upstream's runner (pscheduler-server daemons/runner, 5.2.5) takes a pending run only when one
of its queries, every refresh (PT15S) or on a notification, finds it starting within refresh +
`run_start_margin` (PT3S) and not yet started; it logs "Run N, starts at T" for each one it
takes. A run with no such line was never taken: the ticker marks it Missed after
`run_straggle`. One with the line was taken and then failed to start in time."""

import datetime
import os

PICKUP = ", starts at "
BEFORE = 40.0        # seconds of the runner's log shown before a lost run's start


def node_log_dir(rps, site):
    """Where nodes.sh has a node's daemons log (scheduler, runner, archiver, API)."""
    return os.path.join(rps, "node-" + site, "log")


def daemon_log(rps, site, daemon="runner"):
    """A node daemon's log lines (read below)."""
    return read(os.path.join(node_log_dir(rps, site), daemon + ".log"))


def read(path):
    """The log's lines, [] when it cannot be read."""
    try:
        with open(path, errors="replace") as handle:
            return handle.read().splitlines()
    except OSError:
        return []


def _utc(start):
    if isinstance(start, (int, float)):
        return datetime.datetime.fromtimestamp(start, datetime.timezone.utc)
    return start.astimezone(datetime.timezone.utc)


def pickups(lines, start):
    """The "Run N, starts at T" lines of a run starting at `start` (epoch seconds or an aware
    datetime; the runner prints it in UTC as the lab's PostgreSQL does)."""
    stamp = PICKUP + _utc(start).strftime("%Y-%m-%d %H:%M:%S")
    return [line for line in lines if stamp in line]


def before(lines, start, seconds=BEFORE, width=160):
    """The lines the runner logged in the `seconds` before `start` (its stderr stamps them in
    the node's local time, UTC in the lab), each cut at `width`."""
    end = _utc(start).replace(tzinfo=None)
    out = []
    for line in lines:
        try:
            at = datetime.datetime.strptime(line[:19], "%Y-%m-%dT%H:%M:%S")
        except ValueError:
            continue
        if 0 <= (end - at).total_seconds() <= seconds:
            out.append(line if width is None else line[:width])
    return out


LOOP = ("Next run or check in", "Not waiting.")   # each turn of the runner's main loop
STARTED = " Started"                               # a runner (re)starting


def looping(lines, start):
    """Whether the runner was up and turning its loop around `start`: a loop line in the 20 s
    before it, and no start of the runner in the 60 s before it. A runner that crashed or was
    restarted missed the run for that reason, not for its pickup window."""
    recent = before(lines, start, 20.0, width=None)
    return (any(any(mark in line for mark in LOOP) for line in recent)
            and not any(line.endswith(STARTED) for line in before(lines, start, 60.0, width=None)))


def never_taken(lines, start):
    """A run starting at `start` that the runner, up and looping, never took."""
    return bool(lines) and looping(lines, start) and not pickups(lines, start)


def missed_reason(lines, start):
    """What the log says about a Missed run starting at `start`: never taken, or taken."""
    if not lines:
        return "no runner log to tell why"
    taken = pickups(lines, start)
    if taken:
        return "the runner took it (%s) but did not start it in time" % taken[-1].strip()[:120]
    if not looping(lines, start):
        return "the runner was not up and looping then (no loop line in the 20 s before, or a restart)"
    return "the runner never took it (no pickup in its debug log)"
