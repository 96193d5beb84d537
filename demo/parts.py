"""The suite's parts the demo drives, found where the repository keeps them.

The demo runs the real plugin executables exactly as the tests do (through the test
harness in tests/harness.py), the real archiver process and the real report command.
Each part is looked up once; a part that is not there is reported with the reason,
never replaced by a stand-in.
"""

import importlib
import json
import os
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEST_PLUGIN = os.path.join(ROOT, "pscheduler-test-pmtu", "pmtu")
TOOL_PLUGIN = os.path.join(ROOT, "pscheduler-tool-jumbocheck", "jumbocheck")
ARCHIVER_PLUGIN = os.path.join(ROOT, "pscheduler-archiver-jumbo", "jumbo")
# The tool runs as this user, as pScheduler runs tools as `pscheduler`.
TOOL_USER = "jumbotest"

for _path in (ROOT, os.path.join(ROOT, "python-jumbo")):
    if _path not in sys.path:
        sys.path.insert(0, _path)


class Missing(Exception):
    """A part the demo needs is not (yet) in the repository."""


class Part(object):
    def __init__(self, name, ok, detail):
        self.name = name
        self.ok = ok
        self.detail = detail

    def __repr__(self):
        return "Part(%s, %s, %s)" % (self.name, self.ok, self.detail)


def _executables(directory, methods):
    missing = [m for m in methods if not os.access(os.path.join(directory, m), os.X_OK)]
    if not os.path.isdir(directory):
        return "%s does not exist" % os.path.relpath(directory, ROOT)
    if missing:
        return "%s lacks %s" % (os.path.relpath(directory, ROOT), ", ".join(missing))
    return None


def load_harness():
    """tests/harness.py, imported as the tests import it (with tests/ on sys.path: its parts,
    tests/harness_*.py, import it by that name)."""
    tests = os.path.join(ROOT, "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    try:
        return importlib.import_module("harness")
    except ImportError as err:
        raise Missing("tests/harness.py cannot be imported (%s)" % err)


def report_command():
    """argv prefix of `jumbo-report` (the console script next to this interpreter, if any)."""
    script = os.path.join(os.path.dirname(sys.executable), "jumbo-report")
    if os.access(script, os.X_OK):
        return [script]
    return [sys.executable, "-c", "import sys; from jumbo.report.cli import main; sys.exit(main())"]


def survey():
    """Which parts are there: {name: Part}."""
    parts = {}
    problem = _executables(TEST_PLUGIN, ["spec-is-valid", "participants", "result-format"])
    parts["test"] = Part("pmtu test plugin", problem is None, problem or TEST_PLUGIN)
    problem = _executables(TOOL_PLUGIN, ["can-run", "duration", "participant-data", "run",
                                         "merged-results"])
    parts["tool"] = Part("jumbocheck tool plugin", problem is None, problem or TOOL_PLUGIN)
    try:
        harness = load_harness()
        if not hasattr(harness, "run_tool_participants"):
            raise Missing("tests/harness.py has no run_tool_participants yet")
        parts["harness"] = Part("plugin harness", True, "tests/harness.py")
    except Missing as err:
        parts["harness"] = Part("plugin harness", False, str(err))
    try:
        import pwd
        pwd.getpwnam(TOOL_USER)
        parts["user"] = Part("unprivileged user", True, TOOL_USER)
    except KeyError:
        parts["user"] = Part("unprivileged user", False,
                             "no user %s (scripts/setup.sh creates it)" % TOOL_USER)
    problem = _executables(ARCHIVER_PLUGIN, ["data-is-valid", "archive"])
    parts["archiver"] = Part("jumbo archiver plugin", problem is None, problem or ARCHIVER_PLUGIN)
    try:
        importlib.import_module("jumbo.report.cli")
        parts["report"] = Part("jumbo-report", True, " ".join(report_command()[:1]))
    except Exception as err:  # noqa: BLE001 - any import failure means "not usable yet"
        parts["report"] = Part("jumbo-report", False,
                               "jumbo.report.cli cannot be imported (%s: %s)"
                               % (type(err).__name__, err))
    from .telemetry import missing
    why = missing()
    parts["prometheus"] = Part("Prometheus (telemetry)", why is None, why or "used and configured "
                               "measured from flowd-go and node exporter metrics")
    return parts


def invoke(cls, name, method, payload, argv=()):
    """Run one plugin method as the server does (through the harness: the suite's interpreter
    and library, the server's time limit): JSON on stdin, the stdout text back."""
    done = load_harness().invoke(cls, name, method, stdin=payload, argv=argv)
    if done.status != 0:
        raise RuntimeError("%s %s failed (exit %d): %s" % (
            name, method, done.status, done.stderr.strip()[-500:]))
    return done.stdout


def invoke_json(cls, name, method, payload, argv=()):
    text = invoke(cls, name, method, payload, argv)
    try:
        return json.loads(text)
    except ValueError:
        raise RuntimeError("%s %s printed no JSON: %r" % (name, method, text[:200]))


def have(program):
    return shutil.which(program) is not None
