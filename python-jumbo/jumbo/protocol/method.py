"""The pScheduler method protocol: JSON in, JSON out, exit status.

Plugin executables are thin: they call one of these helpers with one function of their
plugin's module in this package. Everything here follows the server's behaviour described in the
plugin contract: `#`-prefixed members are comments, stdout carries exactly one
newline-terminated JSON document, stderr carries human text, and a non-zero
exit means "the method itself broke".
"""

import json
import os
import re
import sys
import traceback


def strip_comments(value):
    """Drop object members whose names start with '#', at every depth (as the server does)."""
    if isinstance(value, list):
        return [strip_comments(item) for item in value]
    if not isinstance(value, dict):
        return value
    return dict((key, strip_comments(item)) for key, item in value.items()
                if not key.startswith("#"))


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


def dumps(value, pretty=False, sort_keys=True):
    if pretty:
        return json.dumps(value, indent=2, sort_keys=sort_keys)
    return json.dumps(value, separators=(",", ":"), sort_keys=sort_keys)


def emit(value, pretty=False, stream=None, sort_keys=True):
    """Write one JSON document and the newline the runner relies on (members sorted unless
    `sort_keys` is false: an enumeration keeps the order a reader expects)."""
    stream = stream or sys.stdout
    stream.write(dumps(value, pretty, sort_keys) + "\n")
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


# ------------------------------------------------------------------------------------------
# One test plugin's methods

class TestTypePlugin(object):
    """The methods of one test plugin (pmtu, jumbo-throughput), stdin text and argv in, the
    answer out, over its test type's functions:

    spec          validate, cli_to_spec, spec_to_cli, participants, require_valid
    render        result_text, result_html, spec_text, spec_html
    check_result  result -> (valid, error), the result's schema
    read_result   the parsed result-format input -> its result object (ValueError if none)
    """

    __test__ = False  # a pScheduler test type's plugin, not a test case to collect

    def __init__(self, spec, render, check_result, read_result):
        self.spec = spec
        self.render = render
        self.check_result = check_result
        self.read_result = read_result

    def methods(self):
        """spec_is_valid, cli_to_spec, spec_to_cli, participants, result_format, spec_format:
        the functions the method executables call."""
        return (self.spec_is_valid, self.cli_to_spec, self.spec_to_cli, self.participants,
                self.result_format, self.spec_format)

    def spec_is_valid(self, text):
        return spec_is_valid(text, self.spec.validate)

    def cli_to_spec(self, argv, stdin):
        return self.spec.cli_to_spec(cli_argv(argv, stdin))

    def spec_to_cli(self, text):
        return self.spec.spec_to_cli(loads(text))

    def participants(self, text):
        return self.spec.participants(loads(text))

    def result_format(self, text, argv=()):
        """stdin {"spec", "result"} and argv [MIME] -> the formatted text. Raises ValueError
        (message for stderr, exit 1) on bad input."""
        mime = mime_type(list(argv))
        document = loads(text)
        result = self.read_result(document)
        checked = dict(result)
        checked.setdefault("schema", 1)
        valid, error = self.check_result(checked)
        if not valid:
            raise ValueError("Invalid result: %s" % error)
        spec = document.get("spec")
        spec = spec if isinstance(spec, dict) else {}
        if mime == "text/html":
            return printable(self.render.result_html(spec, result))
        return printable(self.render.result_text(spec, result))

    def spec_format(self, text, argv=()):
        """stdin (the spec) and argv [MIME] -> the formatted spec."""
        mime = mime_type(list(argv))
        spec = self.spec.require_valid(loads(text))
        if mime == "text/html":
            return printable(self.render.spec_html(spec))
        return printable(self.render.spec_text(spec))
