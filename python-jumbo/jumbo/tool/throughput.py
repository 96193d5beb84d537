"""The paired 1500/9000 throughput phase: what jumbo frames buy on this path, now.

Participant 1 (the dest) runs one `iperf3 -s` for exactly this run's legs (`serve`);
participant 0 (the source) runs the clients (`run_legs`), alternating the TCP MSS of a
standard 1500-byte path and of the jumbo path, in ABBA order by default (1500, 9000,
9000, 1500 per round) so that a slow drift of the path or of the hosts cancels out.

Everything here runs on the nodes: Python 3.6, standard library only.

How each leg proves its size
----------------------------
`iperf3 -M MSS` clamps the TCP MSS (MTU - 40 for IPv4, MTU - 60 for IPv6). The number
iperf3 prints as `start.tcp_mss` only echoes that request, so it proves nothing. The
kernel's own sending MSS (`tcpi_snd_mss`) is not printed either, but the congestion
window iperf3 prints per interval (`snd_cwnd`) is `tcpi_snd_cwnd * tcpi_snd_mss` bytes:
the greatest common divisor of those samples (taken on the sending side: the client
forward, the server's output in reverse) is the MSS the kernel really used. It is
reported as `observed-mss`. Linux subtracts the TCP options it puts on every segment
(timestamps: 12 bytes, so MSS 1460 shows as 1448 and 8960 as 8948); a leg is accepted
when `MSS - 40 <= observed-mss <= MSS` (40 bytes is the most TCP options can take) and
rejected otherwise. When the window samples are too few or all equal, the GCD may be a
multiple of the MSS; the largest divisor not above the MSS is then taken (noted in
`mss-note`). The kernel's path MTU for the socket (`tcpi_pmtu`, per interval in iperf3 >=
3.11) is reported as `pmtu` (the smallest seen); a leg whose socket learnt a path MTU
below its own MTU did not run at its size and is rejected too.

Never hang
----------
Every client has `--connect-timeout`, a test length `-t`, and a hard timeout (`-t` +
`-O` + a margin) after which it is killed by its PID; the whole phase has a deadline.
The server stops after the leg marked last (iperf3 `--extra-data`), at the deadline,
or when it exits, whichever comes first, and is killed by its PID.

Size: over 400 lines, with serve, _run_from_json and summarize over 60: one iperf3 leg is
one contract (the argv the client gets, the JSON both ends print, the MSS proof read from it,
the gain and its noise over the legs), kept in one module so that a change of iperf3's output
is read and fixed in one place; each long function is one pass over one iperf3 document or
one server lifetime, with its failure cases in order.
"""

import argparse
import errno
import json
import math
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

from ..core.mtu import JUMBO_MTU, MSS_TOLERANCE, STANDARD_MTU, mss_for
from ..testtype.spec import THROUGHPUT_DEFAULTS
from ..core.units import duration_seconds
# Ports the dest's iperf3 server picks from (participant-data).
PORT_RANGE = (5600, 5999)

CONNECT_TIMEOUT = 3.0       # iperf3 --connect-timeout, per attempt
CONNECT_RETRY = 6.0         # how long the first leg retries while the server is not yet there
BETWEEN_LEGS_RETRY = 2.0    # later legs: the server only needs to get ready for the next test
LEG_MARGIN = 6.0            # parameter exchange, results exchange, process start (kill bound)
# What the slot gives beyond -O + -t (duration()): one leg's process start, connection,
# parameter and results exchange (measured in the lab: README "jumbo-throughput"), and the
# first leg's wait for a server that the dest starts at the slot's start.
LEG_OVERHEAD = 2.0
FIRST_CONNECT = 2.0
TEARDOWN = 2.0              # stopping the server, last results
# A run is stalled when its receiver got less than this share of the standard runs' mean.
STALL_FRACTION = 0.01
# Mathis et al. (1997): rate <= MSS / RTT * C / sqrt(p), C = sqrt(3/2).
MATHIS_C = math.sqrt(1.5)
EXTRA_TAG = "jumbocheck"


# The spec's defaults have one home: jumbo.testtype.spec.
DEFAULTS = THROUGHPUT_DEFAULTS


# ------------------------------------------------------------------------------------------
# The spec

def _settings(spec):
    """The throughput object with defaults and seconds, or None when there is none."""
    phase = (spec or {}).get("throughput")
    if not isinstance(phase, dict):
        return None
    full = dict(DEFAULTS)
    full.update(phase)
    full["seconds"] = duration_seconds(full["duration"])
    full["omit-seconds"] = duration_seconds(full.get("omit") or "PT0S")
    return full


def _directions(settings):
    if settings["direction"] == "both":
        return ["forward", "reverse"]
    return [settings["direction"]]


def _pattern(settings):
    """Sizes per round: ABBA (standard, jumbo, jumbo, standard) or AB."""
    if settings["order"] == "ab":
        return ["standard", "jumbo"]
    return ["standard", "jumbo", "jumbo", "standard"]


def leg_count(spec):
    settings = _settings(spec)
    if settings is None:
        return 0
    return int(settings["rounds"]) * len(_pattern(settings)) * len(_directions(settings))


def leg_timeout(settings):
    """Hard bound on one iperf3 client: connect (with retries), -O, -t, exchanges."""
    return CONNECT_RETRY + settings["omit-seconds"] + settings["seconds"] + LEG_MARGIN


def duration(spec):
    """Seconds the phase is given in the slot; 0 without `throughput`.

    This is what a mesh pays for every run in an exclusive slot, so it is what the legs
    need when they work: the first connection's wait for the server + every leg's -O + -t
    + LEG_OVERHEAD (rounds x 4 legs for ABBA or x 2 for AB, doubled when the direction is
    both) + teardown. A leg that hangs is still killed at its own leg_timeout, and no leg
    starts that cannot end before the phase's deadline: the legs it leaves out are reported
    as failed ("no time left before the deadline"), the slot is never overrun."""
    settings = _settings(spec)
    if settings is None:
        return 0
    per_leg = settings["omit-seconds"] + settings["seconds"] + LEG_OVERHEAD
    return int(math.ceil(FIRST_CONNECT + leg_count(spec) * per_leg + TEARDOWN))


def jumbo_leg_mtu(path_mtu, local_mtu=None):
    """(mtu or None, note): the size the jumbo leg can honestly test.

    path MTU >= 9000: 9000. Between 1500 and 9000: the path MTU (said in the note).
    1500 or less: None, the jumbo leg is skipped (the standard legs still run, so the
    result keeps a baseline). Unknown path MTU: 9000 (or the local MTU) is tried, and the
    stall check decides."""
    candidates = [JUMBO_MTU]
    note = None
    if local_mtu:
        candidates.append(int(local_mtu))
    if path_mtu:
        candidates.append(int(path_mtu))
    else:
        note = "path MTU unknown: the jumbo leg tries %d and relies on the stall check" % min(
            candidates)
    mtu = min(candidates)
    if mtu <= STANDARD_MTU:
        return None, ("path MTU %s is not above %d: no jumbo leg to run (the standard legs "
                      "still run)" % (path_mtu if path_mtu else local_mtu, STANDARD_MTU))
    if mtu < JUMBO_MTU and note is None:
        what = "path MTU" if path_mtu and int(path_mtu) == mtu else "local MTU"
        note = "%s is %d: the jumbo leg runs at MTU %d, not %d" % (what, mtu, mtu, JUMBO_MTU)
    return mtu, note


def plan(spec, path_mtu, ip_version=4, local_mtu=None):
    """The legs in order: [{order, round, size, mtu, mss, direction}], and the plan notes."""
    settings = _settings(spec)
    if settings is None:
        return [], {"skipped": "no throughput phase in the spec"}
    jumbo_mtu, note = jumbo_leg_mtu(path_mtu, local_mtu)
    legs = []
    for rnd in range(int(settings["rounds"])):
        for size in _pattern(settings):
            mtu = STANDARD_MTU if size == "standard" else jumbo_mtu
            if mtu is None:
                continue
            for direction in _directions(settings):
                legs.append({"order": len(legs), "round": rnd, "size": size, "mtu": mtu,
                             "mss": mss_for(mtu, ip_version), "direction": direction})
    info = {"jumbo-mtu": jumbo_mtu, "note": note,
            "skipped": note if jumbo_mtu is None else None}
    return legs, info


# ------------------------------------------------------------------------------------------
# Helpers for the tool

def iperf3_path():
    return shutil.which("iperf3")


def available():
    """(True, None) when iperf3 can run here, else (False, reason): for can-run."""
    path = iperf3_path()
    if not path:
        return False, "iperf3 is not installed (not found in PATH)"
    return True, None


def _port_free(port, bind=None):
    """True when nothing listens on TCP `port` here (on `bind`, or on every address)."""
    if bind:
        families = [(socket.AF_INET6 if ":" in bind else socket.AF_INET, bind)]
    else:
        families = [(socket.AF_INET6, "::"), (socket.AF_INET, "0.0.0.0")]
    for family, address in families:
        try:
            sock = socket.socket(family, socket.SOCK_STREAM)
        except OSError:
            continue  # no IPv6 here: the IPv4 check decides
        try:
            # iperf3 sets SO_REUSEADDR too: only a live listener makes the port busy.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((address, port))
        except OSError as err:
            if err.errno == errno.EADDRINUSE:
                return False
            if family != socket.AF_INET6 or bind:
                return False
        finally:
            sock.close()
    return True


def choose_port(low=PORT_RANGE[0], high=PORT_RANGE[1], tries=32):
    """A random TCP port in [low, high] that nothing listens on here (participant-data).

    The port is only checked, not held: `serve` reports clearly if it is taken by then."""
    rng = random.SystemRandom()
    port = rng.randint(low, high)
    for _ in range(tries):
        if _port_free(port):
            return port
        port = rng.randint(low, high)
    return port


def _prctl():
    """libc's prctl, looked up before fork (importing in a forked child of a threaded
    process may deadlock), or None where there is none."""
    try:
        import ctypes
        return ctypes.CDLL(None, use_errno=True).prctl
    except Exception:  # noqa: BLE001 - not Linux, no libc: no parent-death signal
        return None


def _spawn(argv, env=None):
    """Start iperf3 in its own session; it dies with us (Linux PR_SET_PDEATHSIG), so a
    killed participant leaves no server listening and no client sending behind it."""
    prctl = _prctl()

    def die_with_parent():
        if prctl is not None:
            prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG

    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True, start_new_session=True,
                            preexec_fn=die_with_parent, env=env)


def _kill(proc):
    """End a process we started (its own session) by its PID; wait for it."""
    if proc.poll() is not None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except OSError:
            try:
                os.kill(proc.pid, sig)
            except OSError:
                pass
        try:
            proc.wait(timeout=2)
            return
        except subprocess.TimeoutExpired:
            continue


def _json_documents(text):
    """Every JSON object in a concatenation of pretty-printed documents (iperf3 -s -J)."""
    decoder = json.JSONDecoder()
    found = []
    index = 0
    while True:
        start = text.find("{", index)
        if start < 0:
            break
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            break
        found.append(value)
        index = end
    return found


# ------------------------------------------------------------------------------------------
# Participant 1: the server

def _interval(settings):
    """Reporting interval: enough window samples to infer the MSS (0.1 s .. 1 s)."""
    return max(0.1, min(1.0, round(settings["seconds"] / 20.0, 1)))


def serve(spec, port, deadline=None, bind=None, auth_argv=()):
    """Run one `iperf3 -s` for this run's legs; stop after the last leg or at `deadline`.

    `deadline` is a Unix time (time.time()); None means now + duration(spec); `auth_argv`
    the authentication options (jumbo.tool.iperf_auth). Returns {succeeded, error, port,
    served, refused, stopped, tests: [{leg, bytes, cpu, error}]}."""
    result = {"succeeded": False, "error": None, "port": port, "served": 0, "refused": 0,
              "stopped": None, "tests": []}
    settings = _settings(spec)
    if settings is None:
        result["error"] = "no throughput phase in the spec"
        return result
    ok, reason = available()
    if not ok:
        result["error"] = reason
        return result
    if deadline is None:
        deadline = time.time() + duration(spec)
    if not _port_free(int(port), bind):
        result["error"] = "port %d is busy on the dest: cannot start the iperf3 server" % port
        return result
    argv = [iperf3_path(), "-s", "-p", str(int(port)), "-J", "-i", str(_interval(settings)),
            "--idle-timeout", str(int(max(5, leg_timeout(settings) * 2))),
            "--rcv-timeout", str(int(1000 * max(5, settings["seconds"] + CONNECT_RETRY)))]
    if bind:
        argv += ["-B", bind]
    proc = _spawn(argv + list(auth_argv))
    chunks = []
    errors = []

    def pump(stream, sink):
        for line in iter(stream.readline, ""):
            sink.append(line)
        stream.close()

    readers = [threading.Thread(target=pump, args=(proc.stdout, chunks)),
               threading.Thread(target=pump, args=(proc.stderr, errors))]
    for reader in readers:
        reader.daemon = True
        reader.start()
    stopped = "deadline"
    seen = 0
    try:
        while time.time() < deadline:
            if proc.poll() is not None:
                stopped = "exited"
                break
            if len(chunks) != seen:  # new output: has the last leg ended?
                seen = len(chunks)
                if any(_is_last(doc) for doc in _json_documents("".join(chunks))):
                    stopped = "last-leg"
                    break
            time.sleep(0.1)
    finally:
        _kill(proc)
        for reader in readers:
            reader.join(timeout=2)
    docs = _json_documents("".join(chunks))
    result["stopped"] = stopped
    for doc in docs:
        if _refused(doc):
            result["refused"] += 1  # a client without this run's credentials: not a leg
            continue
        test = _server_test(doc)
        if test["leg"] is None and "interrupt" in (test["error"] or ""):
            continue  # our own stop signal, not a test
        result["tests"].append(test)
    result["served"] = len([t for t in result["tests"] if t["leg"] is not None])
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


def _refused(doc):
    """A test the server refused (iperf3's "test authorization failed"): its extra_data is
    whatever that client sent, never a leg or the last-leg mark."""
    return "authorization failed" in str(doc.get("error") or "")


def _is_last(doc):
    if _refused(doc):
        return False
    extra = doc.get("extra_data") or ""
    return isinstance(extra, str) and extra.startswith(EXTRA_TAG) and extra.endswith(" last")


def _server_test(doc):
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


# ------------------------------------------------------------------------------------------
# Participant 0: the clients

def _client_argv(settings, leg, dest, port, ip_version, last, total):
    argv = [iperf3_path(), "-c", dest, "-p", str(int(port)), "-J",
            "-%d" % (6 if ip_version == 6 else 4),
            "-t", _num(settings["seconds"]), "-i", str(_interval(settings)),
            "-M", str(leg["mss"]), "-P", str(int(settings["parallel"])),
            "--connect-timeout", str(int(CONNECT_TIMEOUT * 1000)),
            "--extra-data", "%s leg %d of %d%s" % (EXTRA_TAG, leg["order"], total,
                                                  " last" if last else "")]
    if settings["omit-seconds"]:
        argv += ["-O", _num(settings["omit-seconds"])]
    if leg["direction"] == "reverse":
        # The server sends: its output carries the windows that prove the MSS. Only then:
        # that output is one big segment from the dest, and on a path where one ECMP member
        # is narrower it teaches the dest a smaller path MTU toward us, which it then
        # advertises as MSS on every later connection (the kernel caches PMTU per address).
        argv += ["-R", "--get-server-output"]
    if settings.get("congestion"):
        argv += ["-C", settings["congestion"]]
    if settings.get("fq-rate"):
        argv += ["--fq-rate", str(int(settings["fq-rate"]))]
    return argv


def _num(value):
    return str(int(value)) if float(value) == int(value) else "%g" % value


_RETRYABLE = ("connection refused", "server is busy", "unable to connect", "no route",
              "control socket has closed", "connection reset")


def _run_client(argv, timeout, env=None):
    """Run one client; (json or None, error text or None, timed_out)."""
    proc = _spawn(argv, env)
    try:
        out, err = proc.communicate(timeout=max(0.5, timeout))
    except subprocess.TimeoutExpired:
        _kill(proc)
        out, err = proc.communicate()
        return _parse(out), "iperf3 did not finish within %.0f s: killed" % timeout, True
    except BaseException:
        _kill(proc)
        raise
    doc = _parse(out)
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


def _parse(text):
    docs = _json_documents(text or "")
    return docs[0] if docs else None


def run_legs(spec, dest, port, path_mtu, ip_version=4, deadline=None, local_mtu=None,
             auth=None):
    """Run every leg against the dest's server; return the `throughput` result object.

    `auth`: this run's client credentials (jumbo.tool.iperf_auth.Credentials: argv, env).

    `deadline` is a Unix time; None means now + duration(spec). Whatever completes is
    kept; a failed leg carries `succeeded: false` and its `error`. Units: throughput in
    bit/s (received, all streams), rtt and max-rtt in seconds, CPU in percent."""
    settings = _settings(spec)
    if settings is None:
        return None
    ip_version = 6 if ip_version == 6 else 4
    if deadline is None:
        deadline = time.time() + duration(spec)
    legs, info = plan(spec, path_mtu, ip_version, local_mtu)
    runs = []
    ok, reason = available()
    if not ok:
        for leg in legs:
            runs.append(_failed_run(leg, reason))
        return summarize(runs, info, error=reason)
    total = len(legs)
    patience = CONNECT_RETRY  # for the server to come up; none once it is known to be gone
    for index, leg in enumerate(legs):
        last = index == total - 1
        argv = _client_argv(settings, leg, dest, port, ip_version, last, total) + \
            list(auth.argv if auth else [])
        bound = leg_timeout(settings)
        started = time.time()
        doc, error, timed_out = None, None, False
        while True:
            remaining = min(bound - (time.time() - started), deadline - time.time())
            if remaining < settings["seconds"] + settings["omit-seconds"] + 1:
                error = error or "no time left before the deadline"
                break
            doc, error, timed_out = _run_client(argv, remaining, auth.env if auth else None)
            if error and not timed_out and _retryable(error) and \
                    time.time() - started < patience:
                time.sleep(0.3)
                continue
            break
        if error and doc is None and _retryable(error):
            patience = 0.0  # the dest stopped answering: fail the next legs at once
        elif doc is not None:
            patience = BETWEEN_LEGS_RETRY
        run = _run_from_json(leg, doc, error, timed_out)
        runs.append(run)
    return summarize(runs, info)


def _retryable(error):
    text = error.lower()
    return any(word in text for word in _RETRYABLE)


def _failed_run(leg, error):
    run = _blank_run(leg)
    run["error"] = error
    return run


def _blank_run(leg):
    return {"order": leg["order"], "round": leg["round"], "size": leg["size"],
            "direction": leg["direction"], "mtu": leg["mtu"], "mss": leg["mss"],
            "observed-mss": None, "pmtu": None, "throughput": None, "retransmits": None,
            "cpu-sender": None, "cpu-receiver": None, "rtt": None, "max-rtt": None,
            "bytes": None, "stalled": False, "succeeded": False, "error": None}


def _gcd_all(values):
    result = 0
    for value in values:
        result = math.gcd(result, int(value))
    return result


def observed_mss(cwnds, requested):
    """(mss, note): the kernel's sending MSS from congestion-window samples in bytes."""
    values = [int(v) for v in cwnds if v]
    if not values:
        return None, "no congestion-window samples"
    # The MSS the kernel used lies in [requested - MSS_TOLERANCE, requested] when the leg is
    # right: take the largest size there that divides every sample.
    for size in range(requested, max(0, requested - MSS_TOLERANCE) - 1, -1):
        if size and all(v % size == 0 for v in values):
            return size, None
    gcd = _gcd_all(values)
    if gcd <= requested:
        return gcd, None
    for k in range(2, gcd // max(1, requested - MSS_TOLERANCE) + 2):
        if gcd % k == 0 and gcd // k <= requested:
            return gcd // k, "inferred from %d window sample(s) sharing a factor" % len(values)
    return None, "window samples do not reveal the MSS"


def _sender_view(doc, direction):
    """The sending side's JSON: the client's forward, the server's output in reverse."""
    if direction == "reverse":
        return doc.get("server_output_json") or {}
    return doc


def _run_from_json(leg, doc, error, timed_out):
    run = _blank_run(leg)
    run["error"] = error
    if doc is None:
        run["stalled"] = timed_out
        return run
    end = doc.get("end") or {}
    sender = _sender_view(doc, leg["direction"])
    sender_end = sender.get("end") or {}
    # Throughput: what the receiver got, summed over streams.
    received = end.get("sum_received") or {}
    if received.get("bits_per_second") is not None:
        run["throughput"] = float(received["bits_per_second"])
        run["bytes"] = received.get("bytes")
    sent = end.get("sum_sent") or {}
    if sent.get("retransmits") is not None:
        run["retransmits"] = int(sent["retransmits"])
    cpu = end.get("cpu_utilization_percent") or {}
    if leg["direction"] == "forward":
        run["cpu-sender"], run["cpu-receiver"] = cpu.get("host_total"), cpu.get("remote_total")
    else:
        run["cpu-sender"], run["cpu-receiver"] = cpu.get("remote_total"), cpu.get("host_total")
    rtts, max_rtts = [], []
    for stream in sender_end.get("streams") or []:
        side = stream.get("sender") or {}
        if side.get("mean_rtt"):
            rtts.append(side["mean_rtt"])
        if side.get("max_rtt"):
            max_rtts.append(side["max_rtt"])
    # iperf3 reports RTT in microseconds; the result carries seconds.
    run["rtt"] = sum(rtts) / len(rtts) / 1e6 if rtts else None
    run["max-rtt"] = max(max_rtts) / 1e6 if max_rtts else None
    cwnds, pmtus = [], []
    for interval in sender.get("intervals") or []:
        for stream in interval.get("streams") or []:
            if stream.get("snd_cwnd"):
                cwnds.append(stream["snd_cwnd"])
            if stream.get("pmtu"):
                pmtus.append(int(stream["pmtu"]))
    for stream in sender_end.get("streams") or []:
        side = stream.get("sender") or {}
        if side.get("max_snd_cwnd"):
            cwnds.append(side["max_snd_cwnd"])
    run["observed-mss"], note = observed_mss(cwnds, leg["mss"])
    if note:
        run["mss-note"] = note
    run["pmtu"] = min(pmtus) if pmtus else None
    # Stall: in the last half of the (not omitted) intervals the flow, or one of its
    # parallel streams (each hashed on its own ports: an ECMP member), carried nothing.
    streams, total = {}, 0
    intervals = [i for i in (doc.get("intervals") or [])
                 if not (i.get("sum") or {}).get("omitted")]
    for interval in intervals[len(intervals) // 2:]:
        total += (interval.get("sum") or {}).get("bytes") or 0
        for stream in interval.get("streams") or []:
            key = stream.get("socket")
            streams[key] = streams.get(key, 0) + (stream.get("bytes") or 0)
    stalled_streams = len([k for k, v in streams.items() if v == 0])
    run["stalled-streams"] = stalled_streams
    if timed_out or run["bytes"] == 0 or (intervals and total == 0):
        run["stalled"] = True
        if not run["error"]:
            run["error"] = "stalled: no bytes flowed at MSS %d after the first interval(s)" % (
                leg["mss"])
    elif stalled_streams:
        run["stalled"] = True
        if not run["error"]:
            run["error"] = ("stalled: %d of %d streams stopped at MSS %d while the others "
                            "flowed (a flow hashed onto a path that drops big packets)" % (
                                stalled_streams, len(streams), leg["mss"]))
    if run["error"] is None:
        problem = _size_problem(leg, run)
        if problem:
            run["error"] = problem
    run["succeeded"] = run["error"] is None and run["throughput"] is not None
    return run


def _size_problem(leg, run):
    seen = run["observed-mss"]
    if seen is not None and not (leg["mss"] - MSS_TOLERANCE <= seen <= leg["mss"]):
        return ("observed MSS %d does not match the leg's MSS %d (allowed %d..%d): the flow "
                "ran at a smaller size (a smaller MSS advertised by the peer, or a path MTU "
                "it learnt)" % (seen, leg["mss"], leg["mss"] - MSS_TOLERANCE, leg["mss"]))
    if run["pmtu"] is not None and run["pmtu"] < leg["mtu"]:
        return "the kernel's path MTU for this flow was %d, below the leg's MTU %d" % (
            run["pmtu"], leg["mtu"])
    return None


# ------------------------------------------------------------------------------------------
# Aggregates, noise, Mathis, verdict

def _stats(values):
    if not values:
        return {"mean": None, "stdev": None, "min": None, "max": None, "n": 0}
    mean = sum(values) / len(values)
    stdev = None
    if len(values) > 1:
        stdev = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
    return {"mean": mean, "stdev": stdev, "min": min(values), "max": max(values),
            "n": len(values)}


def gain_and_noise(standard, jumbo):
    """gain = jumbo mean / standard mean; noise = gain x sqrt(cv_j^2/n_j + cv_s^2/n_s).

    The coefficient of variation of each size's repeated runs, divided by the square root
    of their count, is the relative standard error of its mean; the two add in quadrature
    for a ratio. With a single run of a size there is no spread to measure: noise is None."""
    if not standard["n"] or not jumbo["n"] or not standard["mean"]:
        return None, None
    gain = jumbo["mean"] / standard["mean"]
    if standard["stdev"] is None or jumbo["stdev"] is None or not jumbo["mean"]:
        return gain, None
    cv_s = standard["stdev"] / standard["mean"]
    cv_j = jumbo["stdev"] / jumbo["mean"]
    return gain, gain * math.sqrt(cv_s ** 2 / standard["n"] + cv_j ** 2 / jumbo["n"])


def mathis(runs):
    """Mathis ceiling for the runs of one size: MSS / RTT x sqrt(3/2) / sqrt(p).

    MSS: the observed one (else the requested). RTT: mean of the runs' mean RTT. Loss p:
    retransmitted / sent segments pooled over the runs, where sent segments = bytes / MSS.
    With no retransmission the loss is only known to be below 1 / segments: p is then
    floored at 0.5 / segments, so the ceiling is indicative (a lower bound of the model)."""
    runs = [r for r in runs if r["succeeded"] and r["rtt"] and r["bytes"]]
    if not runs:
        return None
    mss_values = [r["observed-mss"] or r["mss"] for r in runs]
    mss = sum(mss_values) / float(len(mss_values))
    rtt = sum(r["rtt"] for r in runs) / len(runs)
    segments = sum(r["bytes"] / float(r["observed-mss"] or r["mss"]) for r in runs)
    retransmits = sum(r["retransmits"] or 0 for r in runs)
    floored = retransmits == 0
    loss = max(retransmits, 0.5) / segments if segments else None
    if not loss:
        return None
    ceiling = mss * 8 / rtt * MATHIS_C / math.sqrt(loss)
    measured = sum(r["throughput"] for r in runs) / len(runs)
    return {"mss": int(round(mss)), "rtt": rtt, "loss": loss, "loss-floored": floored,
            "ceiling": ceiling, "loss-limited": measured >= 0.5 * ceiling}


def summarize(runs, info, error=None):
    """The `throughput` result object from the runs and the plan's notes."""
    standard_runs = [r for r in runs if r["size"] == "standard"]
    jumbo_runs = [r for r in runs if r["size"] == "jumbo"]
    std = _stats([r["throughput"] for r in standard_runs if r["succeeded"]])
    jum = _stats([r["throughput"] for r in jumbo_runs if r["succeeded"]])
    gain, noise = gain_and_noise(std, jum)
    # A stall only means a black hole when runs of the standard size flowed meanwhile.
    if std["n"]:
        floor = STALL_FRACTION * std["mean"]
        for run in jumbo_runs:
            if run["throughput"] is not None and run["throughput"] < floor and \
                    not run["stalled"]:
                run["stalled"] = True
                run["succeeded"] = False
                run["error"] = run["error"] or "stalled: %.0f bit/s against %.0f at 1500" % (
                    run["throughput"], std["mean"])
        jum = _stats([r["throughput"] for r in jumbo_runs if r["succeeded"]])
        gain, noise = gain_and_noise(std, jum)
    notes = [n for n in [info.get("note")] if n]
    if info.get("jumbo-mtu") is None:
        verdict = "skipped" if std["n"] else "failed"
    elif std["n"] and any(r["stalled"] for r in jumbo_runs):
        verdict = "blackhole"
        stalled = [r["order"] for r in jumbo_runs if r["stalled"]]
        notes.append("jumbo run(s) %s stalled at full MSS while the 1500 runs flowed: "
                     "big packets vanish on this path (PMTUD black hole)" %
                     ", ".join(str(o) for o in stalled))
    elif gain is None:
        verdict = "failed"
    else:
        margin = max(2 * noise, 0.05) if noise is not None else 0.05
        if gain - margin > 1:
            verdict = "jumbo-faster"
        elif gain + margin < 1:
            verdict = "jumbo-slower"
        else:
            verdict = "no-difference"
    failed = [r for r in runs if not r["succeeded"]]
    if failed and verdict not in ("blackhole",):
        notes.append("run(s) %s failed: %s" % (", ".join(str(r["order"]) for r in failed),
                                               failed[0]["error"]))
    result = {
        "runs": runs,
        "standard": std,
        "jumbo": jum,
        "gain": gain,
        "gain-noise": noise,
        "mathis": {"standard": mathis(standard_runs), "jumbo": mathis(jumbo_runs)},
        "verdict": verdict,
        "skipped": info.get("skipped"),
        "jumbo-mtu": info.get("jumbo-mtu"),
        "notes": notes,
        "error": error,
    }
    directions = sorted(set(r["direction"] for r in runs))
    if len(directions) > 1:
        result["by-direction"] = {}
        for direction in directions:
            s = _stats([r["throughput"] for r in standard_runs
                        if r["succeeded"] and r["direction"] == direction])
            j = _stats([r["throughput"] for r in jumbo_runs
                        if r["succeeded"] and r["direction"] == direction])
            g, gn = gain_and_noise(s, j)
            result["by-direction"][direction] = {"standard": s, "jumbo": j, "gain": g,
                                                 "gain-noise": gn}
    return result


# ------------------------------------------------------------------------------------------
# A small command line: `python -m jumbo.tool.throughput serve|client|duration|port`

def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m jumbo.tool.throughput",
                                     description="Paired 1500/9000 iperf3 legs (JSON out).")
    sub = parser.add_subparsers(dest="command")
    for name in ("serve", "client", "duration", "port"):
        cmd = sub.add_parser(name)
        if name == "port":
            continue
        cmd.add_argument("--spec", required=True, help="the test spec, JSON text")
        if name == "duration":
            continue
        cmd.add_argument("--port", type=int, required=True)
        cmd.add_argument("--deadline", type=float, default=None, help="Unix time")
        if name == "serve":
            cmd.add_argument("--bind", default=None)
        else:
            cmd.add_argument("--dest", required=True)
            cmd.add_argument("--path-mtu", type=int, default=None)
            cmd.add_argument("--local-mtu", type=int, default=None)
            cmd.add_argument("--ip-version", type=int, choices=[4, 6], default=4)
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_usage(sys.stderr)
        return 2
    try:
        spec = json.loads(args.spec) if hasattr(args, "spec") else None
        if args.command == "port":
            out = {"port": choose_port()}
        elif args.command == "duration":
            out = {"duration": duration(spec)}
        elif args.command == "serve":
            out = serve(spec, args.port, args.deadline, args.bind)
        else:
            out = run_legs(spec, args.dest, args.port, args.path_mtu, args.ip_version,
                           args.deadline, args.local_mtu)
    except (ValueError, KeyError, TypeError) as err:
        sys.stderr.write("throughput: %s\n" % err)
        return 1
    sys.stdout.write(json.dumps(out, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
