"""Participant 1's side of the legs: one `iperf3 -s` for exactly this run's legs, stopped
after the leg marked last (iperf3 `--extra-data`), at the deadline, or when it exits,
whichever comes first, and killed by its PID."""

import threading
import time

from .iperf import available, iperf3_path, json_documents, kill, port_free, spawn
from .plan import CONNECT_RETRY, EXTRA_TAG, duration, interval, leg_timeout, settings


def serve(spec, port, deadline=None, bind=None, auth_argv=()):
    """Run one `iperf3 -s` for this run's legs; stop after the last leg or at `deadline`.

    `deadline` is a Unix time (time.time()); None means now + duration(spec); `auth_argv`
    the authentication options (jumbo.tool.iperf_auth). Returns {succeeded, error, port,
    served, refused, stopped, tests: [{leg, bytes, cpu, error}]}."""
    result = {"succeeded": False, "error": None, "port": port, "served": 0, "refused": 0,
              "stopped": None, "tests": []}
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
    chunks, errors = [], []
    readers = [_reader(proc.stdout, chunks), _reader(proc.stderr, errors)]
    try:
        stopped = _watch(proc, chunks, deadline)
    finally:
        kill(proc)
        for reader in readers:
            reader.join(timeout=2)
    result["stopped"] = stopped
    _collect(result, json_documents("".join(chunks)))
    return _outcome(result, stopped, proc, errors, port)


def _reader(stream, sink):
    """A daemon thread appending the stream's lines to `sink` until it closes."""
    def pump():
        for line in iter(stream.readline, ""):
            sink.append(line)
        stream.close()

    reader = threading.Thread(target=pump)
    reader.daemon = True
    reader.start()
    return reader


def _watch(proc, chunks, deadline):
    """Wait for the last leg, the server's exit or the deadline: which one stopped it."""
    seen = 0
    while time.time() < deadline:
        if proc.poll() is not None:
            return "exited"
        if len(chunks) != seen:  # new output: has the last leg ended?
            seen = len(chunks)
            if any(is_last(doc) for doc in json_documents("".join(chunks))):
                return "last-leg"
        time.sleep(0.1)
    return "deadline"


def _collect(result, docs):
    for doc in docs:
        if refused(doc):
            result["refused"] += 1  # a client without this run's credentials: not a leg
            continue
        test = server_test(doc)
        if test["leg"] is None and "interrupt" in (test["error"] or ""):
            continue  # our own stop signal, not a test
        result["tests"].append(test)
    result["served"] = len([t for t in result["tests"] if t["leg"] is not None])


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
