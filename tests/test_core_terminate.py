"""jumbo.core.terminate: once deferred, a SIGTERM is noted, not fatal (checked in a child
process with a real signal, so this test's own handlers are untouched)."""

import os
import signal
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHILD = """
import os, signal, sys, time
sys.path.insert(0, %r)
from jumbo.core import terminate
import %s as deferring
deferring.defer()
print(terminate.received(), flush=True)   # ready: deferred, nothing noted yet
sys.stdin.readline()          # the parent sends SIGTERM, then a line
print(terminate.received(), flush=True)
"""


def _child(library_module="jumbo.core.terminate"):
    """A child that defers through `library_module` and asks jumbo.core.terminate."""
    code = CHILD % (os.path.join(ROOT, "python-jumbo"), library_module)
    return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, universal_newlines=True)


def run_through(library_module):
    child = _child(library_module)
    try:
        before = child.stdout.readline().strip()
        child.send_signal(signal.SIGTERM)
        out, _ = child.communicate("go\n", timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    return before, out.strip(), child.returncode


def test_a_sigterm_after_defer_is_noted_and_the_process_lives_on():
    # The line is read only after the signal: the handler has run by then (it runs in the
    # main thread between bytecodes, before readline returns the parent's later line).
    assert run_through("jumbo.core.terminate") == ("False", "True", 0)


def test_without_defer_a_sigterm_ends_the_process():
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.readline()"],
                             stdin=subprocess.PIPE)
    child.send_signal(signal.SIGTERM)
    child.communicate(timeout=60)
    assert child.returncode == -signal.SIGTERM
