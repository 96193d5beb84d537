"""The pScheduler method protocol: JSON in, JSON out, exit status.

Plugin executables are thin: they call one of these helpers with one library
function. Everything here follows the server's behaviour described in the
plugin contract: `#`-prefixed members are comments, stdout carries exactly one
newline-terminated JSON document, stderr carries human text, and a non-zero
exit means "the method itself broke".
"""

import json
import sys
import traceback



def strip_comments(value):
    """Drop object members whose names start with '#', at every depth (as the server does)."""
    if isinstance(value, dict):
        return {k: strip_comments(v) for k, v in value.items() if not k.startswith("#")}
    if isinstance(value, list):
        return [strip_comments(v) for v in value]
    return value


def loads(text):
    """Parse JSON text the way pScheduler does; raise ValueError with a readable message."""
    try:
        return strip_comments(json.loads(text))
    except ValueError as err:
        raise ValueError("Invalid JSON: %s" % err)


def read_stdin():
    return loads(sys.stdin.read())


def dumps(value, pretty=False):
    if pretty:
        return json.dumps(value, indent=2, sort_keys=True)
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def emit(value, pretty=False, stream=None):
    """Write one JSON document and the newline the runner relies on."""
    stream = stream or sys.stdout
    stream.write(dumps(value, pretty) + "\n")
    stream.flush()


def fail(message, status=1):
    """Explain on stderr (whole lines only: the runner reads line by line) and exit."""
    sys.stdout.flush()
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()
    sys.exit(status)


def run_method(function):
    """Run a method body; turn any unexpected exception into a clean failure, never a traceback.

    The traceback is kept for the log (stderr is shown to users by pScheduler,
    so only its last line goes there unless JUMBO_DEBUG is set).
    """
    try:
        function()
    except SystemExit:
        raise
    except KeyboardInterrupt:
        fail("Interrupted", 1)
    except ValueError as err:
        fail(str(err), 1)
    except Exception as err:  # noqa: BLE001 - the contract wants text, not a traceback
        import os
        if os.environ.get("JUMBO_DEBUG"):
            traceback.print_exc()
        fail("%s: %s" % (type(err).__name__, err), 1)
