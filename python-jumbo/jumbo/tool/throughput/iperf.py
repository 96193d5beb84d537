"""iperf3 as a process: where it is, a free port for its server, starting it so that it dies
with us, stopping it by its PID, and reading the JSON documents it prints."""

import ctypes
import errno
import json
import os
import random
import shutil
import signal
import socket
import subprocess

from .plan import PORT_RANGE


def iperf3_path():
    return shutil.which("iperf3")


def available():
    """(True, None) when iperf3 can run here, else (False, reason): for can-run."""
    path = iperf3_path()
    if not path:
        return False, "iperf3 is not installed (not found in PATH)"
    return True, None


def port_free(port, bind=None):
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
        if port_free(port):
            return port
        port = rng.randint(low, high)
    return port


def _prctl():
    """libc's prctl, looked up before fork (importing in a forked child of a threaded
    process may deadlock), or None where there is none."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except Exception:  # noqa: BLE001 - not Linux, no libc: no parent-death signal
        return None


def spawn(argv, env=None):
    """Start iperf3 in its own session; it dies with us (Linux PR_SET_PDEATHSIG), so a
    killed participant leaves no server listening and no client sending behind it."""
    prctl = _prctl()

    def die_with_parent():
        if prctl is not None:
            prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG

    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True, start_new_session=True,
                            preexec_fn=die_with_parent, env=env)


def kill(proc):
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


def json_documents(text):
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


def first_document(text):
    """The first JSON document in iperf3's output, or None."""
    docs = json_documents(text or "")
    return docs[0] if docs else None
