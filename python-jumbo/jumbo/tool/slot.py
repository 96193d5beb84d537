"""The run's time slot as the tool keeps it: the hard deadline derived from schedule.start +
the slot, and the last-resort alarms that turn an overrun or the runner's SIGTERM into a clean
`succeeded: false` line before the runner's kill. The slot's phases (its budget, a pure
function of the spec and the run's kind) are jumbo.core.spec.slot's: jumbo.tool.kinds hands
it the probe's and the reverse search's bounds.
"""

import signal
import threading
import time

from ..core.errors import JumboError
from ..core.spec.slot import PHASES

SCHEMA = 1
PROTOCOL = 2  # 2: reflector candidate ports, source address, run-time secret

DEST_EXIT_MARGIN = 1.0  # p1 stops this long before the slot ends
SLOT_ALARM_MARGIN = 0.3  # the last-resort alarm fires this long before the slot ends


class RunError(JumboError):
    """A run cannot go on; the text is for the operator."""


class Deadline(BaseException):
    """The slot's end (SIGALRM). A BaseException, so that no `except Exception` in a phase
    swallows it."""


class Terminated(BaseException):
    """SIGTERM (the runner's kill)."""


class StepOver(BaseException):
    """A bounded step's own alarm (not the slot's end)."""


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
