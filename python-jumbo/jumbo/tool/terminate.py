"""SIGTERM from a method's first line: pScheduler's runner kills a run at the end of its slot,
which can come while the library is still loading on a busy node. Until the run installs
its own handler, a SIGTERM is noted instead of killing the process, so the run can still
answer with its one JSON line ("terminated") instead of vanishing without output."""

import signal

_received = []


def defer():
    """Note SIGTERM from now on (call before importing the rest of the library)."""
    signal.signal(signal.SIGTERM, lambda signum, frame: _received.append(signum))


def received():
    """Whether a SIGTERM came while deferred."""
    return bool(_received)
