"""Participant 1's side of the legs: one `iperf3 -s` for exactly this run's legs, stopped
after the leg marked last (iperf3 `--extra-data`), at the deadline, or when it exits,
whichever comes first, and killed by its PID.

Anyone who reaches the port during the slot makes iperf3 print a document (a refused login,
a client that connected and left): a peer flooding the port makes tens of thousands. So the
server's output is read once, as it arrives (`ServerLog`: each document parsed when its last
line comes, then reduced to a few numbers), and the report keeps this run's legs and only
counts the rest: its size does not grow with what others send."""

import json
import threading
import time

from .iperf import available, iperf3_path, json_documents, kill, port_free, spawn
from .plan import CONNECT_RETRY, EXTRA_TAG, duration, interval, leg_timeout, settings

MAX_LEGS = 64          # leg entries kept (a run has at most a few dozen legs)
MAX_OTHERS = 8         # entries kept of tests that are not this run's legs (the first ones)
MAX_REASONS = 8        # distinct refusal texts counted (the rest under "other")
MAX_DOCUMENT = 4 << 20  # characters of one document: a leg's is some kB; larger is not ours
MAX_STDERR = 32        # stderr lines kept


def serve(spec, port, deadline=None, bind=None, auth_argv=()):
    """Run one `iperf3 -s` for this run's legs; stop after the last leg or at `deadline`.

    `deadline` is a Unix time (time.time()); None means now + duration(spec); `auth_argv`
    the authentication options (jumbo.tool.iperf_auth). Returns {succeeded, error, port,
    served, refused, refusals, others, stopped, tests: [{leg, bytes, cpu, error}]}."""
    result = {"succeeded": False, "error": None, "port": port, "served": 0, "refused": 0,
              "refusals": {}, "others": 0, "stopped": None, "tests": []}
    phase = settings(spec)
    if phase is None:
        result["error"] = "no throughput phase in the spec"
        return result
    ok, reason = available()
    if not ok:
        result["error"] = reason
        return result
    if deadline is None:
        deadline = time.time() + duration(spec)
    if not port_free(int(port), bind):
        result["error"] = "port %d is busy on the dest: cannot start the iperf3 server" % port
        return result
    argv = [iperf3_path(), "-s", "-p", str(int(port)), "-J", "-i", str(interval(phase)),
            "--idle-timeout", str(int(max(5, leg_timeout(phase) * 2))),
            "--rcv-timeout", str(int(1000 * max(5, phase.seconds + CONNECT_RETRY)))]
    if bind:
        argv += ["-B", bind]
    proc = spawn(argv + list(auth_argv))
    log, errors = ServerLog(), []
    readers = [_reader(proc.stdout, log.feed), _reader(proc.stderr, _bounded_append(errors))]
    try:
        stopped = _watch(proc, log, deadline)
    finally:
        kill(proc)
        for reader in readers:
            reader.join(timeout=2)
    result["stopped"] = stopped
    log.report(result)
    return _outcome(result, stopped, proc, errors, port)


def _bounded_append(sink):
    def append(line):
        if len(sink) < MAX_STDERR:
            sink.append(line[:512])
    return append


def _reader(stream, take):
    """A daemon thread giving the stream's lines to `take` until it closes."""
    def pump():
        for line in iter(stream.readline, ""):
            take(line)
        stream.close()

    reader = threading.Thread(target=pump)
    reader.daemon = True
    reader.start()
    return reader


def _watch(proc, log, deadline):
    """Wait for the last leg, the server's exit or the deadline: which one stopped it."""
    while time.time() < deadline:
        if proc.poll() is not None:
            return "exited"
        if log.last.is_set():
            return "last-leg"
        log.last.wait(min(0.1, max(0.0, deadline - time.time())))
    return "deadline"


class ServerLog(object):
    """`iperf3 -s -J`'s stdout, line by line: a document ends at a line that is only "}" (iperf3
    prints each one indented, its own braces at column 0), is parsed once and reduced at once.
    Work and memory are linear in the output and the kept state is bounded."""

    def __init__(self):
        self.lock = threading.Lock()
        self.last = threading.Event()
        self.lines, self.size = [], 0
        self.legs, self.others = [], []
        self.counts = {"refused": 0, "others": 0, "oversized": 0, "dropped": 0}
        self.reasons = {}

    def feed(self, line):
        with self.lock:
            if not self.lines and not line.startswith("{"):
                return  # between documents: nothing of ours
            self.size += len(line)
            if self.size > MAX_DOCUMENT:
                self.counts["oversized"] += 1
                self.lines, self.size = [], 0
                return
            self.lines.append(line)
            if line.rstrip() == "}":
                self._end_document()

    def _end_document(self):
        text = "".join(self.lines)
        self.lines, self.size = [], 0
        try:
            doc = json.loads(text)
        except ValueError:
            docs = json_documents(text)  # a "}" line inside a document: keep what parses
            if not docs:
                return
            doc = docs[0]
        if isinstance(doc, dict):
            self._take(doc)

    def _take(self, doc):
        if refused(doc):
            self._refuse(str(doc.get("error")))
            return
        test = server_test(doc)
        error = test["error"] or ""
        if "interrupt" in error:
            # Our own stop signal, never a test: iperf3 may repeat the last test's start in it
            # (seen without authentication: a fifth "served" leg, the last one again).
            return
        if test["leg"] is None:
            if error:
                # A client that never became a test (left before or while logging in):
                # refused, whatever it sent.
                self._refuse(error)
                return
            self.counts["others"] += 1  # a test that is not a leg (possible without auth)
            self._keep(self.others, MAX_OTHERS, test)
            return
        self._keep(self.legs, MAX_LEGS, test)
        if is_last(doc):
            self.last.set()

    def _keep(self, kept, limit, test):
        if len(kept) < limit:
            kept.append(test)
        else:
            self.counts["dropped"] += 1

    def _refuse(self, error):
        self.counts["refused"] += 1
        reason = error.strip()[:120] or "no error text"
        if reason not in self.reasons and len(self.reasons) >= MAX_REASONS:
            reason = "other"
        self.reasons[reason] = self.reasons.get(reason, 0) + 1

    def report(self, result):
        """Fill `result`'s tests, served, refused, refusals and others (after the end)."""
        with self.lock:
            if self.lines:  # a document the server's end cut short: what of it parses
                for doc in json_documents("".join(self.lines))[:1]:
                    if isinstance(doc, dict):
                        self._take(doc)
                self.lines, self.size = [], 0
            result["tests"] = self.legs + self.others
            result["served"] = len(self.legs)
            result["refused"] = self.counts["refused"]
            result["refusals"] = dict(self.reasons)
            result["others"] = self.counts["others"]
            for key in ("oversized", "dropped"):
                if self.counts[key]:
                    result[key] = self.counts[key]


def _outcome(result, stopped, proc, errors, port):
    problems = [t["error"] for t in result["tests"] if t["error"]]
    if stopped == "exited":
        # Without --one-off the server only ends on its own when something went wrong.
        text = "".join(errors).strip() or " ".join(problems)
        if "in use" in text.lower():
            result["error"] = "port %d is busy on the dest: %s" % (port, text)
        else:
            result["error"] = "iperf3 server exited: %s" % (text or "status %s" % proc.returncode)
        return result
    result["succeeded"] = True
    if problems:
        result["error"] = "; ".join(sorted(set(problems)))
    return result


def refused(doc):
    """A test the server refused (iperf3's "test authorization failed"): its extra_data is
    whatever that client sent, never a leg or the last-leg mark."""
    return "authorization failed" in str(doc.get("error") or "")


def is_last(doc):
    if refused(doc):
        return False
    extra = doc.get("extra_data") or ""
    return isinstance(extra, str) and extra.startswith(EXTRA_TAG) and extra.endswith(" last")


def server_test(doc):
    extra = doc.get("extra_data") or ""
    leg = None
    if isinstance(extra, str) and extra.startswith(EXTRA_TAG):
        try:
            leg = int(extra.split()[2])
        except (IndexError, ValueError):
            leg = None
    end = doc.get("end") or {}
    # Bytes that crossed: received (forward) or sent (reverse), whichever side this was.
    moved = [(end.get(key) or {}).get("bytes") for key in ("sum_received", "sum_sent")]
    moved = [b for b in moved if b is not None]
    cpu = (end.get("cpu_utilization_percent") or {}).get("host_total")
    return {"leg": leg, "bytes": max(moved) if moved else None, "cpu": cpu,
            "error": doc.get("error")}
