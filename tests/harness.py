"""Run pScheduler plugin executables exactly as the pScheduler server does.

Used by the test suite and by the demo. Three entry points, one result type:

    invoke(cls, name, method, stdin=None, argv=(), timeout=None, user=None, netns=None)
        One method call: direct exec of <repo>/pscheduler-<cls>-<name>/<name>/<method> (no
        shell), argv after the path, stdin as text, the server's time limit for that method
        (SIGTERM at the limit, SIGKILL 0.5 s later, then status 2 and stderr
        "Process took too long to run."). Returns a Completed.

    run_tool_participants(tool, test, participants, start_in=5.0, test_type="pmtu")
        One run of a (multi-participant) tool as the scheduler + runners + lead do it:
        `duration` -> slot, `participant-data` on every participant -> the full array,
        every participant's `run` started concurrently with one `schedule.start`, the lead's
        and the others' outputs read as the runner reads them, then `merged-results` on the
        lead. Returns a ToolRun.

    archive_stream(archiver, records, ...)          (in harness_archive.py, beside this file)
        The archiver daemon: one long-lived `archive` process fed RFC 7464 records; a reply
        with `retry` is re-sent (attempts + 1) after that delay, up to a bound; a process that
        dies, times out or falls silent is restarted and the same record re-sent, 3 tries at
        most. Returns one ArchiveOutcome per record.

Where the code runs:
    * `python3` in a plugin's shebang resolves to the interpreter under test: the directory of
      $JUMBO_PYTHON (default: this interpreter) goes first on PATH, and PYTHONPATH points at
      the repository's `python-jumbo` (where `import jumbo` comes from).
    * `user="jumbotest"` runs the method as that unprivileged user (needs root: runuser).
    * `netns` places it in a network namespace: a (lab, node) pair from `lab.Lab` (uses
      `lab.argv(node, argv, user)`) or a plain namespace name (`ip netns exec NAME`).

JSON the way the server reads it:
    Completed.json(max_schema=None)   json_load(): `#` members dropped at every depth, optional
                                      top-level schema check (REST API / daemons)
    Completed.sql_json()              what SQL-called methods get: plain JSON, `#` kept
    Completed.runner_json()           the runner's line reader: each line loses its last
                                      character (assumed '\\n'), so output without a final
                                      newline loses its closing brace
"""

import atexit
import datetime
import json
import math
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBRARY = os.path.join(ROOT, "python-jumbo")
if LIBRARY not in sys.path:
    sys.path.insert(0, LIBRARY)
RS = "\x1e"

# The server's time limit per method (seconds; None = no limit), from the plugin contract 1.1.
TIMEOUTS = {
    "enumerate": 15, "spec-is-valid": None, "participants": 5, "cli-to-spec": 5,
    "spec-to-cli": 15, "result-format": None, "spec-format": None,
    "can-run": 5, "duration": 15, "participant-data": 15, "merged-results": 5,
    "data-is-valid": 15, "archive": 120,
}
# Used for methods with no server limit, so a broken plugin cannot hang the test suite.
SAFETY_TIMEOUT = 60
RUN_START_MARGIN = 3      # the runner starts `run` this long before schedule.start
KILL_GRACE = 0.5          # SIGTERM, then SIGKILL after this


class Completed(object):
    """The outcome of one method call: status, stdout, stderr (text), argv, elapsed seconds."""

    def __init__(self, argv, status, stdout, stderr, elapsed, timed_out=False):
        self.argv = argv
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
        self.elapsed = elapsed
        self.timed_out = timed_out

    def __repr__(self):
        return "Completed(%s, status=%r, stdout=%r, stderr=%r)" % (
            os.path.basename(self.argv[-1] if self.argv else "?"), self.status,
            self.stdout[:400], self.stderr[:400])

    def json(self, max_schema=None):
        """stdout parsed like pscheduler.json_load(): raises ValueError like it does."""
        return json_load(self.stdout, max_schema=max_schema)

    def sql_json(self):
        """stdout as the database casts it (trailing whitespace trimmed, `#` members kept)."""
        return json.loads(self.stdout.rstrip())

    def runner_json(self, max_schema=1):
        """stdout as the runner reads a `run` output: see runner_text()."""
        return json_load(runner_text(self.stdout), max_schema=max_schema)


# ------------------------------------------------------------------------------------------
# JSON, the server's way

def strip_comments(value):
    """Drop object members whose names start with '#', at every depth (arrays included).

    Deliberately not jumbo.protocol.method.strip_comments: the harness plays the server, and a
    server-side rule checked with the plugins' own code would hide the plugins' mistakes."""
    if isinstance(value, dict):
        return {k: strip_comments(v) for k, v in value.items() if not k.startswith("#")}
    if isinstance(value, list):
        return [strip_comments(v) for v in value]
    return value


def null_private(value):
    """What an unkeyed fetch sees: `_` members' values replaced by null, recursively."""
    if isinstance(value, dict):
        return {k: (None if k.startswith("_") else null_private(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [null_private(v) for v in value]
    return value


def json_load(text, max_schema=None):
    """pscheduler.json_load: parse, strip `#` members; with max_schema, the top level must be
    an object whose integer `schema` (absent = 1) is <= max_schema. Raises ValueError."""
    value = strip_comments(json.loads(text))
    if max_schema is not None:
        if not isinstance(value, dict):
            raise ValueError("Top level is not a JSON object")
        version = value.get("schema", 1)
        if isinstance(version, bool) or not isinstance(version, int):
            raise ValueError("Schema value must be an integer.")
        if version > max_schema:
            raise ValueError("Schema version %d is not supported (highest is %d)."
                             % (version, max_schema))
    return value


def runner_text(stdout):
    """The text the runner assembles from `run` output: lines read one by one, the last
    character of each dropped (assumed to be the newline), lines after the last RS record
    only."""
    lines = stdout.splitlines(True)
    kept = []
    for line in lines:
        if line.startswith(RS):
            kept = []  # plain lines before an RS record are thrown away
        kept.append(line[:-1])
    return "\n".join(kept)


# ------------------------------------------------------------------------------------------
# Running one program

def interpreter_dir():
    return os.path.dirname(os.path.abspath(os.environ.get("JUMBO_PYTHON", sys.executable)))


def python_argv(script):
    """argv running `script` with the interpreter under test and the repository's library."""
    return ["env", "PYTHONPATH=" + LIBRARY, os.path.join(interpreter_dir(), "python3"), "-c", script]


def plugin_env(extra=None):
    """The environment plugins run with: the interpreter under test first on PATH, the
    repository's library on PYTHONPATH."""
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)  # it would hide a missing flush (contract 7.3)
    env["PATH"] = interpreter_dir() + os.pathsep + env.get("PATH", "/usr/bin:/bin")
    paths = [LIBRARY] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                         if p and p != LIBRARY]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.update(extra or {})
    return env


def method_path(cls, name, method):
    """<repo>/pscheduler-<cls>-<name>/<name>/<method>."""
    return os.path.join(ROOT, "pscheduler-%s-%s" % (cls, name), name, method)


def wrap(argv, user=None, netns=None, env=None):
    """The argv that runs `argv` as `user` inside `netns` (see the module doc)."""
    argv = list(argv)
    if user is not None:
        # runuser may reset PATH; env(1) re-applies ours, then execs the method directly.
        keep = env or plugin_env()
        argv = ["env"] + ["%s=%s" % (k, keep[k]) for k in ("PATH", "PYTHONPATH", "TMPDIR")
                          if k in keep] + argv
    if isinstance(netns, tuple):
        lab, node = netns
        return lab.argv(node, argv, user)
    prefix = []
    if netns is not None:
        prefix = ["ip", "netns", "exec", netns]
    if user is not None:
        prefix += ["runuser", "-u", user, "--"]
    return prefix + argv


def _kill(proc):
    """SIGTERM, then SIGKILL after KILL_GRACE, to the process group this harness created."""
    for sig, grace in ((signal.SIGTERM, KILL_GRACE), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def run_program(argv, stdin="", timeout=None, env=None):
    """Run argv with stdin text; a Completed. Status 2 on timeout or when it cannot start."""
    started = time.monotonic()
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, universal_newlines=True, env=env,
                                start_new_session=True)
    except Exception as err:  # noqa: BLE001 - as the server: the exception text becomes stderr
        return Completed(argv, 2, "", "%s: %s" % (type(err).__name__, err),
                         time.monotonic() - started)
    try:
        out, err = proc.communicate(stdin or "", timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        out, _ = proc.communicate()
        return Completed(argv, 2, out, "Process took too long to run.",
                         time.monotonic() - started, timed_out=True)
    return Completed(argv, proc.returncode, out, err, time.monotonic() - started)


def _stdin_text(stdin):
    if stdin is None:
        return ""
    if isinstance(stdin, str):
        return stdin
    return json.dumps(stdin)


def invoke(cls, name, method, stdin=None, argv=(), timeout=None, user=None, netns=None,
           env=None):
    """Call one plugin method as the server does; a Completed.

    cls: "test" | "tool" | "archiver"; name: the plugin name; stdin: text, or a JSON value
    (dumped), or None (empty); timeout: seconds, default the server's limit for `method`
    (methods without one get SAFETY_TIMEOUT); env: extra environment variables."""
    path = method_path(cls, name, method)
    if timeout is None:
        timeout = TIMEOUTS.get(method) or SAFETY_TIMEOUT
    full_env = plugin_env(env)
    return run_program(wrap([path] + [str(a) for a in argv], user, netns, full_env),
                       _stdin_text(stdin), timeout, full_env)


# ------------------------------------------------------------------------------------------
# A whole tool run, all participants

class ToolRun(object):
    """Everything one run produced: `duration` (slot seconds), `participant_data` (the full
    array), `inputs` (each participant's run input), `runs` (each participant's Completed),
    `results` (what merged-results got), `merged` (its parsed output; None if that was not
    valid JSON) and `merged_completed` (its Completed)."""

    def __init__(self):
        self.duration = None
        self.participant_data = []
        self.inputs = []
        self.runs = []
        self.results = []
        self.merged = None
        self.merged_completed = None


def _participant_place(part):
    """(user, netns) of a participant description."""
    part = part or {}
    netns = part.get("netns")
    if netns is None and part.get("lab") is not None:
        netns = (part["lab"], part["node"])
    return part.get("user"), netns


def _iso(moment):
    return moment.replace(microsecond=0).isoformat()


# Every run's private TMPDIR until it is removed: a caller interrupted while runs go on in
# its (daemon) threads never reaches their cleanup, so the interpreter's exit does it.
_live_tmpdirs = set()


def _remove_tmpdirs(paths=None):
    for path in list(_live_tmpdirs if paths is None else paths):
        shutil.rmtree(path, ignore_errors=True)
        _live_tmpdirs.discard(path)


atexit.register(_remove_tmpdirs)


def _private_tmpdir(user):
    path = tempfile.mkdtemp(prefix="jumbo-run-")
    _live_tmpdirs.add(path)
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(path, entry.pw_uid, entry.pw_gid)
    return path


def run_tool_participants(tool, test, participants, start_in=5.0, test_type="pmtu"):
    """One scheduled run of `tool` for `test` (a spec, or {"type", "spec"}) with one
    participant description per participant, lead first:
        {"lab": lab, "node": "h1", "user": "jumbotest"}   or   {"netns": name|(lab, node)}
        or {} (here, as the current user).
    Every `run` starts at the same moment with the same schedule.start (now + start_in,
    whole seconds, in UTC) and is killed like the runner does at slot end + 1 s."""
    if not (isinstance(test, dict) and "spec" in test and "type" in test):
        test = {"type": test_type, "spec": test}
    outcome = ToolRun()
    places = [_participant_place(p) for p in participants]

    # Slot length, as the database trigger computes it (rounded up to whole seconds).
    done = invoke("tool", tool, "duration", stdin=test)
    if done.status != 0:
        raise RuntimeError("duration failed: %s" % done.stderr.strip())
    slot = int(math.ceil(_duration_seconds(done.sql_json()["duration"])))
    outcome.duration = slot

    # participant-data on every participant, lead first, gathered into one array.
    for index, (user, netns) in enumerate(places):
        done = invoke("tool", tool, "participant-data", user=user, netns=netns,
                      stdin={"participant": index, "test": test})
        if done.status != 0:
            raise RuntimeError("participant-data %d failed: %s" % (index, done.stderr.strip()))
        outcome.participant_data.append(done.sql_json())

    now = datetime.datetime.now(datetime.timezone.utc)
    start = (now + datetime.timedelta(seconds=start_in)).replace(microsecond=0) \
        + datetime.timedelta(seconds=1)
    task_uuid = str(uuid.uuid4())
    threads, tmpdirs = [], []
    outcome.runs = [None] * len(places)
    for index, (user, netns) in enumerate(places):
        run_input = {
            "schema": 1, "task-uuid": task_uuid,
            "schedule": {"start": _iso(start), "duration": "PT%dS" % slot},
            "test": test, "participant": index,
            "participant-data": outcome.participant_data,
        }
        outcome.inputs.append(run_input)
        tmpdir = _private_tmpdir(user)
        tmpdirs.append(tmpdir)
        # The runner kills `run` at slot + margin + 1 s after a launch `margin` before start;
        # here launch is now, so the limit counts from now.
        limit = (start - datetime.datetime.now(datetime.timezone.utc)).total_seconds() \
            + slot + 1

        def go(i=index, u=user, n=netns, d=run_input, t=tmpdir, lim=limit):
            outcome.runs[i] = invoke("tool", tool, "run", stdin=d, user=u, netns=n,
                                     timeout=lim, env={"TMPDIR": t})
        threads.append(threading.Thread(target=go))
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        # The runner deletes each run's TMPDIR whatever happens.
        _remove_tmpdirs(tmpdirs)

    # The lead's view: its own output as the runner read it, the others fetched unkeyed.
    # Each runner turns a failed `run` into a failure result; a non-lead's silent or
    # unparseable output is stored as null.
    results = []
    for index, done in enumerate(outcome.runs):
        if done.status != 0:
            local = {"succeeded": False, "error": "Tool failed: %s" % done.stderr,
                     "diags": done.stdout}
        elif index == 0:
            try:
                local = done.runner_json()
            except ValueError:
                local = {"succeeded": False, "error": "Tool %s returned invalid JSON" % tool,
                         "diags": done.stdout}
        else:
            try:
                local = done.runner_json() if done.stdout.strip() else None
            except ValueError:
                local = None
        results.append(local if index == 0 else null_private(local))
    outcome.results = results

    merge = invoke("tool", tool, "merged-results", stdin={"test": test, "results": results})
    outcome.merged_completed = merge
    if merge.status != 0:
        outcome.merged = {"succeeded": False,
                          "error": "Tool %s failed to merge results: %s" % (tool, merge.stderr)}
    else:
        try:
            outcome.merged = merge.json()
        except ValueError:
            # The 5.2.5 runner crashes on this and leaves the run in `cleanup`, unarchived.
            outcome.merged = None
    if tool == "jumbocheck":
        _assert_validates_whole(test.get("type"), results[0], outcome.merged)
    return outcome


def _assert_validates_whole(test_type, lead, merged):
    """Every result the suite's own tool produces in the lab validates against its schema as
    a whole: the source's test result and the merged one (nothing is repaired at run time)."""
    from jumbo.core import validate
    check = validate.check_pair_result if test_type == "jumbo-throughput" \
        else validate.check_result
    for what, value in (("source participant", (lead or {}).get("result")),
                        ("merged-results", merged)):
        if isinstance(value, dict) and "schema" in value:
            valid, error = check(value)
            assert valid, "%s result does not validate: %s\n%s" % (what, error, value)


def _duration_seconds(text):
    from jumbo.core.units import duration_seconds
    return duration_seconds(text)


# The archiver daemon's stand-in is in harness_archive.py, beside this file (this one would
# pass 450 lines); its entry point belongs to the harness's face: harness.archive_stream.
import harness_archive  # noqa: E402 - it imports the runner above from this module

ArchiveOutcome = harness_archive.ArchiveOutcome
archive_stream = harness_archive.archive_stream
