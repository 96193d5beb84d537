"""How the source finds the dest's reflector, and the dest knows whom to answer.

Ports chosen at scheduling time are not held (pScheduler has no way to reserve them, and no
channel between the participants once the runs start), and a mesh's background pmtu runs hold
reflector ports of their own. So p1 offers candidate ports in its participant data
(`reflector-ports`), binds the first one free when its run starts, and p0 greets all of them
with a signed HELLO: only p1's own reflector can answer it (the answer is signed with the run's
token), so the port that answers is the one. The HELLO has room for the answer's body: the
run's secret, made by p1 when the run starts (jumbo.tool.iperf_auth keys the legs' password
with it), which the reflector sends to the run's source address only.

p0 names that address in its own participant data (`source-address`): the spec's `source`,
else the address its routes give towards the dest, as the probes will leave.

Standard library only; Python 3.6.
"""

import os
import select
import socket
import time

from ..core.resolve import ResolveError, resolve, source_address as route_source
from ..probe.wire import ANSWER, HEADER_LEN, HELLO, decode, encode, token_key

MAX_CANDIDATES = 16
GREET_INTERVAL = 0.25   # seconds between two rounds of HELLOs to every candidate
SECRET_BYTES = 16       # the run's secret: 128 random bits, as hex in the HELLO answer
HELLO_TOTAL = HEADER_LEN + 2 * SECRET_BYTES + 8  # a HELLO's payload: room for the secret


class Found(object):
    """The reflector found: its port and the run's secret (None when not sent)."""

    def __init__(self, port, secret):
        self.port, self.secret = port, secret


def new_secret():
    return os.urandom(SECRET_BYTES).hex().encode("ascii")


def source_address(spec):
    """The address p0 will probe from (for p0's participant data), or None; `spec`: a RunSpec."""
    version = spec.ip_version if spec.ip_version in (4, 6) else None
    try:
        dest, version = resolve(spec.dest, version)
        if spec.source:
            return resolve(spec.source, version)[0]
    except (ResolveError, TypeError):
        return None
    return route_source(dest, version)


def candidates(data):
    """The candidate ports of p1's participant data, checked: a list (maybe empty)."""
    ports = data.get("reflector-ports") if isinstance(data, dict) else None
    if not isinstance(ports, list) or not ports or len(ports) > MAX_CANDIDATES:
        return []
    if any(isinstance(p, bool) or not isinstance(p, int) or not 0 < p < 65536 for p in ports):
        return []
    if len(set(ports)) != len(ports):
        return []
    return ports


def peer_source(data):
    """p0's `source-address` from the participant-data array, as text, or None."""
    source = data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else {}
    address = source.get("source-address")
    if not isinstance(address, str) or len(address) > 64:
        return None
    try:
        socket.inet_pton(socket.AF_INET6 if ":" in address else socket.AF_INET, address)
    except (OSError, ValueError):
        return None
    return address


def find(address, ports, token, version, until, source=None):
    """Greet every candidate port of the dest's reflector at `address` until one answers or
    `until` (time.monotonic()) passes: a Found, or None. Each round is one small datagram per
    candidate; nothing is sent after the answer."""
    key = token_key(token)
    family = socket.AF_INET6 if version == 6 else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_DGRAM)
    try:
        if source:
            sock.bind((source, 0))
        sock.setblocking(False)
        nonce, seq = os.urandom(8), 0
        while time.monotonic() < until:
            for port in ports:
                try:
                    sock.sendto(encode(key, b"Q", HELLO, seq, nonce, total=HELLO_TOTAL),
                                (address, port))
                except OSError:
                    pass  # a port unreachable from an earlier round surfacing: not an answer
                seq += 1
            found = _answer(sock, key, nonce, min(until, time.monotonic() + GREET_INTERVAL))
            if found is not None:
                return found
        return None
    finally:
        sock.close()


def _answer(sock, key, nonce, until):
    while True:
        remaining = until - time.monotonic()
        if remaining <= 0:
            return None
        try:
            ready, _, _ = select.select([sock], [], [], remaining)
        except InterruptedError:
            continue
        if not ready:
            return None
        try:
            data, addr = sock.recvfrom(2048)
        except (BlockingIOError, InterruptedError):
            continue
        except OSError:
            continue  # ICMP port unreachable of a candidate nobody holds
        message = decode(key, b"A", data)
        if message is not None and message[0] == HELLO | ANSWER and message[2] == nonce:
            body = message[4]
            return Found(addr[1], body.decode("ascii", "replace") if body else None)
