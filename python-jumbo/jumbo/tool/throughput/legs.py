"""Participant 0's side: the iperf3 clients, one per leg, in the plan's order, each with
`--connect-timeout`, a test length `-t` and a hard timeout (-t + -O + a margin) after which
it is killed by its PID; no leg starts that cannot end before the phase's deadline."""

import subprocess
import time

from .iperf import available, first_document, iperf3_path, kill, spawn
from .plan import (BETWEEN_LEGS_RETRY, CONNECT_RETRY, CONNECT_TIMEOUT, EXTRA_TAG, duration,
                   interval, leg_timeout, plan, settings)
from .proof import failed_run, run_from_json
from .summary import summarize

# Client errors worth another try while the dest's server is coming up.
RETRYABLE = ("connection refused", "server is busy", "unable to connect", "no route",
             "control socket has closed", "connection reset")


def client_argv(phase, leg, dest, port, ip_version, last, total):
    argv = [iperf3_path(), "-c", dest, "-p", str(int(port)), "-J",
            "-%d" % (6 if ip_version == 6 else 4),
            "-t", _num(phase.seconds), "-i", str(interval(phase)),
            "-M", str(leg["mss"]), "-P", str(phase.parallel),
            "--connect-timeout", str(int(CONNECT_TIMEOUT * 1000)),
            "--extra-data", "%s leg %d of %d%s" % (EXTRA_TAG, leg["order"], total,
                                                  " last" if last else "")]
    if phase.omit_seconds:
        argv += ["-O", _num(phase.omit_seconds)]
    if leg["direction"] == "reverse":
        # The server sends: its output carries the windows that prove the MSS. Only then:
        # that output is one big segment from the dest, and on a path where one ECMP member
        # is narrower it teaches the dest a smaller path MTU toward us, which it then
        # advertises as MSS on every later connection (the kernel caches PMTU per address).
        argv += ["-R", "--get-server-output"]
    if phase.congestion:
        argv += ["-C", phase.congestion]
    if phase.fq_rate:
        argv += ["--fq-rate", str(int(phase.fq_rate))]
    return argv


def _num(value):
    return str(int(value)) if float(value) == int(value) else "%g" % value


def run_client(argv, timeout, env=None):
    """Run one client; (json or None, error text or None, timed_out)."""
    proc = spawn(argv, env)
    try:
        out, err = proc.communicate(timeout=max(0.5, timeout))
    except subprocess.TimeoutExpired:
        kill(proc)
        out, err = proc.communicate()
        return first_document(out), "iperf3 did not finish within %.0f s: killed" % timeout, True
    except BaseException:
        kill(proc)
        raise
    doc = first_document(out)
    if proc.returncode is not None and proc.returncode < 0:
        return doc, "iperf3 was killed (signal %d) before the leg ended" % -proc.returncode, False
    if doc is None:
        text = (err or out or "").strip() or "status %d" % proc.returncode
        return None, "iperf3: %s" % text, False
    if doc.get("error"):
        return doc, "iperf3: %s" % doc["error"], False
    if proc.returncode not in (0, None):
        return doc, "iperf3 exited with status %d" % proc.returncode, False
    return doc, None, False


def retryable(error):
    text = error.lower()
    return any(word in text for word in RETRYABLE)


def run_legs(spec, dest, port, path_mtu, ip_version=4, deadline=None, local_mtu=None,
             auth=None):
    """Run every leg against the dest's server; return the `throughput` result object.

    `auth`: this run's client credentials (jumbo.tool.iperf_auth.Credentials: argv, env).

    `deadline` is a Unix time; None means now + duration(spec). Whatever completes is
    kept; a failed leg carries `succeeded: false` and its `error`. Units: throughput in
    bit/s (received, all streams), rtt and max-rtt in seconds, CPU in percent."""
    phase = settings(spec)
    if phase is None:
        return None
    ip_version = 6 if ip_version == 6 else 4
    if deadline is None:
        deadline = time.time() + duration(spec)
    legs, info = plan(spec, path_mtu, ip_version, local_mtu)
    ok, reason = available()
    if not ok:
        return summarize([failed_run(leg, reason) for leg in legs], info, error=reason)
    runs = []
    total = len(legs)
    patience = CONNECT_RETRY  # for the server to come up; none once it is known to be gone
    for index, leg in enumerate(legs):
        argv = client_argv(phase, leg, dest, port, ip_version, index == total - 1, total) + \
            list(auth.argv if auth else [])
        doc, error, timed_out = _run_leg(phase, argv, deadline, patience,
                                         auth.env if auth else None)
        if error and doc is None and retryable(error):
            patience = 0.0  # the dest stopped answering: fail the next legs at once
        elif doc is not None:
            patience = BETWEEN_LEGS_RETRY
        runs.append(run_from_json(leg, doc, error, timed_out))
    return summarize(runs, info)


def _run_leg(phase, argv, deadline, patience, env):
    """One leg's client, retried while its server is not there yet (for `patience` s), never
    past its own hard bound or the deadline: (doc, error, timed_out)."""
    bound = leg_timeout(phase)
    started = time.time()
    doc, error, timed_out = None, None, False
    while True:
        remaining = min(bound - (time.time() - started), deadline - time.time())
        if remaining < phase.seconds + phase.omit_seconds + 1:
            return doc, error or "no time left before the deadline", timed_out
        doc, error, timed_out = run_client(argv, remaining, env)
        if error and not timed_out and retryable(error) and time.time() - started < patience:
            time.sleep(0.3)
            continue
        return doc, error, timed_out
