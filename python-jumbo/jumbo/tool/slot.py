"""The run's time slot: its phase budget (a pure function of the spec), the hard deadline
derived from schedule.start + the slot, and the last-resort alarms that turn an overrun or
the runner's SIGTERM into a clean `succeeded: false` line before the runner's kill.

Time budget (`duration_seconds`, rounded up to whole seconds):
  START_WAIT (clock skew between the nodes, p1 start-up)
  + jumbo.probe.max_duration(spec)                  forward phase (jumbo-throughput: at
                                                    most PATH_MTU_BUDGET, enforced)
  + jumbo.tool.reverse.max_duration(spec)           reverse phase, when `reverse`
  + jumbo.tool.throughput.duration(spec)            throughput phase, when `throughput`
  + STATUS_BUDGET + TEARDOWN
"""

import math
import signal
import threading
import time

from .. import probe
from ..core.errors import JumboError
from ..core.spec import run_spec
from . import reverse as reverse_search
from . import throughput

SCHEMA = 1
PROTOCOL = 2  # 2: reflector candidate ports, source address, run-time secret

START_WAIT = 2.0      # p0 waits this long after start before talking to p1 (skew, start-up)
STATUS_BUDGET = 2.0   # the final STATUS exchange with p1 when no reverse search ran
TEARDOWN = 2.0        # stopping servers, writing the result
DEST_EXIT_MARGIN = 1.0  # p1 stops this long before the slot ends
SLOT_ALARM_MARGIN = 0.3  # the last-resort alarm fires this long before the slot ends
# jumbo-throughput measures the path MTU (one flow) before its legs, inside its exclusive slot:
# that step gets at most this long. When it runs out the legs still run, the jumbo leg at 9000
# (or the local MTU) with the stall check deciding, and the result says why the path MTU is
# unknown. pmtu itself has no such cap: its forward phase runs in the background.
PATH_MTU_BUDGET = 8.0
PHASES = ("start", "forward", "reverse", "throughput", "end")


class RunError(JumboError):
    """A run cannot go on; the text is for the operator."""


class Deadline(BaseException):
    """The slot's end (SIGALRM). A BaseException, so that no `except Exception` in a phase
    swallows it."""


class Terminated(BaseException):
    """SIGTERM (the runner's kill)."""


class StepOver(BaseException):
    """A bounded step's own alarm (not the slot's end)."""


def phase_budget(spec):
    """Seconds per phase for a spec: {"start", "forward", "reverse", "throughput", "end"}."""
    full = run_spec(spec)
    forward = float(probe.max_duration(full))
    if full.is_pair:
        forward = min(forward, PATH_MTU_BUDGET)
    reverse = reverse_search.max_duration(full) if full.reverse else 0.0
    legs = float(throughput.duration(full)) if full.is_pair else 0.0
    two = full.needs_dest
    return {"start": START_WAIT if two else 0.0, "forward": forward, "reverse": reverse,
            "throughput": legs,
            # The final STATUS exchange runs only without a reverse search (which ends with
            # its own STATUS, inside its budget).
            "end": (STATUS_BUDGET if two and not full.reverse else 0.0) + TEARDOWN}


def duration_seconds(spec):
    return int(math.ceil(sum(phase_budget(spec).values())))


def budget_text(budget):
    return ", ".join("%s %.1f s" % (k, budget[k]) for k in PHASES)


def sleep_until(moment):
    while True:
        remaining = moment - time.time()
        if remaining <= 0:
            return
        time.sleep(min(remaining, 1.0))


def arm_alarm(moment):
    """A last resort: SIGALRM just before the slot ends, and SIGTERM (the runner's kill),
    both turned into exceptions so that `finally` clauses stop our servers and the run still
    prints its one line (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def fire(signum, frame):
        raise Deadline()

    def terminate(signum, frame):
        raise Terminated()

    previous = (signal.signal(signal.SIGALRM, fire), signal.signal(signal.SIGTERM, terminate))
    signal.setitimer(signal.ITIMER_REAL, max(0.01, moment - time.time()))
    return previous


def disarm_alarm(previous):
    if previous is None:
        return
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous[0])
    signal.signal(signal.SIGTERM, previous[1])


def bounded(run, seconds, step, reason):
    """step(run) -> (value, error), stopped after `seconds` with (None, reason). The slot's
    alarm is suspended meanwhile and re-armed after (main thread only; elsewhere unbounded)."""
    if threading.current_thread() is not threading.main_thread():
        return step(run)

    def over(signum, frame):
        raise StepOver()

    slot_left = run.end - SLOT_ALARM_MARGIN - time.time()
    previous = signal.signal(signal.SIGALRM, over if seconds < slot_left else
                             signal.getsignal(signal.SIGALRM))
    signal.setitimer(signal.ITIMER_REAL, max(0.01, min(seconds, slot_left)))
    try:
        outcome = step(run)
    except StepOver:
        outcome = (None, reason)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    # Only reached without an exception in flight (a Deadline propagates as it is).
    left = run.end - SLOT_ALARM_MARGIN - time.time()
    if left <= 0:
        raise Deadline()
    signal.setitimer(signal.ITIMER_REAL, left)
    return outcome
