"""The archiver daemon, as the harness runs it (tests/harness.py's third entry point,
harness.archive_stream): one long-lived `archive` process fed RFC 7464 records, replies with
`retry` re-sent after their delay, a dead, slow or silent process restarted. Import it as
`harness.archive_stream`: this module takes the plugin runner from harness."""

import datetime
import json
import queue
import subprocess
import threading
import time

from harness import (RS, TIMEOUTS, _duration_seconds, _iso, _kill, method_path, plugin_env,
                     strip_comments, wrap)


class ArchiveOutcome(object):
    """One record's fate: `replies` (every reply, in order), `attempts` (records sent),
    `succeeded`, `error` (the last error), `restarts` (process restarts it caused)."""

    def __init__(self, record):
        self.record = record
        self.replies = []
        self.attempts = 0
        self.succeeded = False
        self.error = None
        self.restarts = 0

    def __repr__(self):
        return "ArchiveOutcome(succeeded=%r, attempts=%d, error=%r)" % (
            self.succeeded, self.attempts, self.error)


class _ArchiveProcess(object):
    """A long-lived `archive` process with a line reader (so replies can time out)."""

    def __init__(self, argv, env):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, universal_newlines=True, env=env,
                                     start_new_session=True)
        self.lines = queue.Queue()
        self.stderr = []
        threading.Thread(target=self._pump, args=(self.proc.stdout, self.lines),
                         daemon=True).start()
        threading.Thread(target=self._drain, daemon=True).start()

    @staticmethod
    def _pump(stream, lines):
        for line in iter(stream.readline, ""):
            lines.put(line)
        lines.put(None)

    def _drain(self):
        for line in iter(self.proc.stderr.readline, ""):
            self.stderr.append(line)

    def exchange(self, record, timeout):
        """Send one record, return the reply line or raise IOError."""
        try:
            self.proc.stdin.write(RS + json.dumps(record, separators=(",", ":")) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as err:
            raise IOError("write failed: %s" % err)
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise IOError("no reply within %s s" % timeout)
        if line is None:
            raise IOError("archiver exited (stderr: %s)" % "".join(self.stderr).strip())
        return line

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            _kill(self.proc)


def _parse_reply(line):
    """A reply as the daemon's RFC 7464 parser reads it; ValueError when it would fail."""
    if not line.startswith(RS):
        raise ValueError("Reply does not start with RS: %r" % line[:80])
    reply = strip_comments(json.loads(line[1:]))
    if not isinstance(reply, dict):
        raise ValueError("Reply is not a JSON object: %r" % line[:80])
    return reply


def archive_stream(archiver, records, user=None, netns=None, timeout=TIMEOUTS["archive"],
                   max_attempts=5, retry_scale=1.0, max_wait=30.0, process_tries=3):
    """Feed `records` to one long-lived `archive` process, as the archiver daemon does.

    records: archive inputs ({"data", "result", ...}); `attempts` and `last-attempt` are set
        here (0 / null on the first try).
    A reply {"succeeded": false, "retry": "PT.."} schedules the record again after that delay
        times `retry_scale` (capped at `max_wait` seconds), attempts + 1, while the record has
        been sent fewer than `max_attempts` times; other records go first meanwhile.
    A failed exchange (process died, no reply within `timeout`) restarts the process and
        re-sends the same record, `process_tries` tries in all, then gives up with
        "Possibly-permanent archiver error". A reply without RS or not a JSON object fails the
        record at once, as the daemon's parser does.
    Returns [ArchiveOutcome] in the order of `records`."""
    argv = wrap([method_path("archiver", archiver, "archive")], user, netns, plugin_env())
    env = plugin_env()
    outcomes = [ArchiveOutcome(r) for r in records]
    pending = [(time.monotonic(), i, 0, None) for i in range(len(records))]
    process = None
    try:
        while pending:
            pending.sort(key=lambda item: (item[0], item[1]))
            due, index, attempts, last = pending.pop(0)
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            outcome = outcomes[index]
            record = dict(records[index])
            record["attempts"] = attempts
            record["last-attempt"] = last
            line = None
            for _ in range(process_tries):
                if process is None:
                    process = _ArchiveProcess(argv, env)
                try:
                    line = process.exchange(record, timeout)
                    break
                except IOError as err:
                    outcome.error = str(err)
                    outcome.restarts += 1
                    _kill(process.proc)
                    process = None
            outcome.attempts += 1
            sent_at = _iso(datetime.datetime.now(datetime.timezone.utc))
            if line is None:
                outcome.error = "Possibly-permanent archiver error: %s" % outcome.error
                continue
            try:
                reply = _parse_reply(line)
            except ValueError as err:
                outcome.error = str(err)
                outcome.replies.append(line)
                continue
            outcome.replies.append(reply)
            if reply.get("succeeded"):
                outcome.succeeded = True
                outcome.error = None
                continue
            outcome.error = reply.get("error")
            retry = reply.get("retry")
            if retry is not None and outcome.attempts < max_attempts:
                wait = min(_duration_seconds(retry) * retry_scale, max_wait)
                pending.append((time.monotonic() + wait, index, attempts + 1, sent_at))
    finally:
        if process is not None:
            process.close()
    return outcomes
