"""The pScheduler method protocol: JSON in, JSON out, exit status.

Plugin executables are thin: they call one of these helpers with one function of their
plugin's module in this package. Everything here follows the server's behaviour described in the
plugin contract: `#`-prefixed members are comments, stdout carries exactly one
newline-terminated JSON document, stderr carries human text, and a non-zero
exit means "the method itself broke".
"""

import json
import re
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
    except RecursionError:
        # The parser (and strip_comments) recurse per level: "[[[[..." 100,000 deep is not
        # a document any method reads, and must be an answer, not a traceback.
        raise ValueError("Invalid JSON: nested too deeply")


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


# ------------------------------------------------------------------------------------------
# Answers every test plugin gives the same way

def spec_is_valid(text, validate):
    """spec-is-valid on raw stdin text with the test's `validate(spec) -> (ok, error)`:
    always an answer, never an exception."""
    try:
        spec = loads(text)
    except ValueError as err:
        return {"valid": False, "error": str(err)}
    try:
        valid, error = validate(spec)
    except Exception as err:  # noqa: BLE001 - the contract wants valid:false, never a crash
        return {"valid": False, "error": "Unable to validate: %s: %s" % (type(err).__name__, err)}
    return {"valid": True} if valid else {"valid": False, "error": error}


def json_type(value):
    for kind, name in ((bool, "boolean"), (str, "string"), (int, "number"), (float, "number"),
                       (list, "array"), (dict, "object")):
        if isinstance(value, kind):
            return name
    return "null"


def argv_from_json(value):
    """The argv the server sends as a JSON array on stdin; numbers are stringified."""
    if not isinstance(value, list):
        raise ValueError("Expected a JSON array of arguments on standard input")
    argv = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, (str, int, float)):
            raise ValueError("Arguments must be strings or numbers, not %s" % json_type(item))
        argv.append(item if isinstance(item, str) else str(item))
    return argv


def cli_argv(argv, stdin):
    """The argv of cli-to-spec: its own arguments, or when called without any, the JSON array
    read from `stdin` (empty input counts as no arguments)."""
    if argv:
        return list(argv)
    text = stdin.read()
    if not text.strip():
        return []
    return argv_from_json(loads(text))


MIME_TYPES = ("text/plain", "text/html")

# C0 (but tab and newline), DEL, C1 and the Unicode line separators: in a formatted spec or
# result they are a host name's or a peer's message smuggling terminal escapes or lines.
_CONTROL = re.compile(u"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def printable(text):
    """`text` with control characters written as \\xNN / \\uNNNN escapes (result-format and
    spec-format output: pScheduler prints it on a terminal or in a page)."""
    return _CONTROL.sub(lambda m: ("\\x%02x" if ord(m.group(0)) < 0x100 else "\\u%04x")
                        % ord(m.group(0)), text)


def mime_type(argv):
    """The format asked of result-format / spec-format (argv[0]; text/plain by default)."""
    mime = argv[0] if argv else "text/plain"
    if mime not in MIME_TYPES:
        raise ValueError("Unsupported format %r (use text/plain or text/html)" % mime)
    return mime
