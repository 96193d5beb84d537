"""The reverse path: a token-checking UDP reflector on the dest (its wire format: jumbo.probe.wire).

Why a reflector: the source can only see what comes back to it. To learn the MTU of the path
dest -> source, the dest must send packets of chosen sizes towards the source, with DF set, and
the source must say which sizes arrived. The dest participant (p1) runs `Reflector` for the
length of the run; the source (p0) runs `measure_reverse` (jumbo.tool.reverse), and probes the
forward path through the reflector with jumbo.probe.reflected's transport.

The server checks every message (token, replay, size, rate) in the order the refusals must
happen: nothing is answered before the token and the replay window agree.

How sizes travel (all sizes are IP packet sizes: IP header + UDP header + payload):

* p0 sends a request asking for a reply of N bytes. The request itself is padded to N bytes and
  sent WITHOUT DF (IPv4: IP_PMTUDISC_DONT; IPv6: fragmented by p0 itself to the measured forward
  path MTU through IPV6_MTU), so it still arrives, as fragments, when the forward path is
  narrower than N, even when the forward path is a black hole. The reverse search is therefore
  bounded by the reverse path only, not by min(forward, reverse).
* p1 answers only requests that carry a valid HMAC made with the run's one-time token, never
  with more bytes than the request had (so the reflector cannot amplify anything), never to a
  replayed request, and at a bounded rate (token buckets on packets and bytes).
* p1 sends each reply with DF set and without local fragmentation (IPv4 IP_PMTUDISC_PROBE;
  IPv6 IPV6_PMTUDISC_PROBE + IPV6_DONTFRAG): the reply crosses the reverse path whole or not at
  all, and the probe ignores any path MTU p1 has cached, so the search sees the path itself.
* When a reply is larger than p1's own interface MTU the kernel refuses it (EMSGSIZE); p1 then
  sends a small LIMIT notice, so p0 can tell "too big for the dest host itself" (the reverse
  local MTU) from "lost on the path".
* p1 listens to its socket error queue (IP_RECVERR / IPV6_RECVERR): ICMP frag-needed / packet-
  too-big messages caused by its replies are recorded (sender, suggested MTU, the reply size
  they answer, whether the MTU is usable). They are returned to p0 in the STATUS answer and in
  p1's own run output. A reply that vanishes with no PTB reaching p1 is a reverse black hole.

Everything here is standard library only and runs unprivileged on Python 3.6.
"""

import errno
import json
import select
import socket
import struct
import threading
import time

from ..core.mtu import IP_HEADER, MIN_MTU
from ..probe.wire import (ANSWER, EXTENDED_ERR, HEADER_LEN, HELLO, IP_MTU_DISCOVER,  # noqa: F401
                          IP_PKTINFO, IP_PMTUDISC_DONT, IP_PMTUDISC_PROBE, IP_RECVERR,
                          IPV6_DONTFRAG, IPV6_MTU_DISCOVER, IPV6_PKTINFO, IPV6_PMTUDISC_PROBE,
                          IPV6_RECVERR, IPV6_RECVPKTINFO, IPV6_V6ONLY, LIMIT, MSG_ERRQUEUE,
                          PROBE, SO_EE_ORIGIN_ICMP, SO_EE_ORIGIN_ICMP6, SO_EE_ORIGIN_LOCAL,
                          SOL_IP, SOL_IPV6, STATUS, UDP_HEADER, big_buffers, decode, encode,
                          new_token, token_key)

# Rate limits of the reflector (per run, all sources together).
RATE_PACKETS = 2000.0     # replies per second
BURST_PACKETS = 400.0
RATE_BYTES = 16000000.0   # reply bytes per second
BURST_BYTES = 4000000.0

STATUS_ROOM = 1280 - 40 - 8  # UDP payload of a STATUS answer: fits IPv6's minimum MTU
STATUS_GRACE = 1.0        # the reflector answers STATUS retries this long after the first


class ReflectorError(Exception):
    """The reflector cannot run (port busy, no address family available)."""


def family_version(family):
    return 6 if family == socket.AF_INET6 else 4


class TokenBucket(object):
    def __init__(self, rate, burst):
        self.rate, self.burst = rate, burst
        self.level = burst
        self.stamp = time.monotonic()

    def take(self, amount=1.0):
        now = time.monotonic()
        self.level = min(self.burst, self.level + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.level >= amount:
            self.level -= amount
            return True
        return False


def _sockaddr_ip(raw):
    """The IP address in a struct sockaddr_in / sockaddr_in6 (SO_EE_OFFENDER), or None."""
    if len(raw) >= 8:
        family = struct.unpack("=H", raw[:2])[0]
        if family == socket.AF_INET:
            return socket.inet_ntop(socket.AF_INET, raw[4:8])
        if family == socket.AF_INET6 and len(raw) >= 24:
            return socket.inet_ntop(socket.AF_INET6, raw[8:24])
    return None


def read_error_queue(sock, limit=64):
    """Drain a socket's error queue: [(origin, type, code, info, offender, payload)]."""
    found = []
    for _ in range(limit):
        try:
            data, ancillary, _flags, _addr = sock.recvmsg(
                2048, 512, MSG_ERRQUEUE | socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            break
        except OSError:
            break
        for level, kind, raw in ancillary:
            if (level, kind) in ((SOL_IP, IP_RECVERR), (SOL_IPV6, IPV6_RECVERR)) \
                    and len(raw) >= EXTENDED_ERR.size:
                _errno, origin, icmp_type, code, _pad, info, _data = \
                    EXTENDED_ERR.unpack(raw[:EXTENDED_ERR.size])
                found.append((origin, icmp_type, code, info, _sockaddr_ip(raw[EXTENDED_ERR.size:]),
                              data))
    return found


def is_ptb(origin, icmp_type, code):
    return (origin == SO_EE_ORIGIN_ICMP and icmp_type == 3 and code == 4) or \
        (origin == SO_EE_ORIGIN_ICMP6 and icmp_type == 2)


def _local_address(ancillary):
    """(level, type, packed address) to answer from: the address the request was sent to."""
    for level, kind, raw in ancillary:
        if level == SOL_IP and kind == IP_PKTINFO and len(raw) >= 12:
            return (SOL_IP, IP_PKTINFO, struct.pack("=i4s4s", 0, raw[4:8], b"\0" * 4))
        if level == SOL_IPV6 and kind == IPV6_PKTINFO and len(raw) >= 20:
            return (SOL_IPV6, IPV6_PKTINFO, struct.pack("=16si", raw[:16], 0))
    return None


def _send_from(sock, data, addr, local):
    """Reply with the request's destination as source address, so the reply matches the
    source's flow (stateful firewalls, NAT) even on a multi-homed dest with asymmetric routes."""
    if local is None:
        return sock.sendto(data, addr)
    return sock.sendmsg([data], [local], 0, addr)


class Reflector(object):
    """p1's responder. `open()` binds (fails clearly when the port is busy), `serve()` answers
    until the deadline or until p0's STATUS, `report()` says what happened."""

    def __init__(self, port, token, versions=(4, 6)):
        self.port = int(port)
        self.key = token_key(token)
        self.versions = tuple(versions)
        self.sockets = {}
        self.packets = TokenBucket(RATE_PACKETS, BURST_PACKETS)
        self.volume = TokenBucket(RATE_BYTES, BURST_BYTES)
        self.seen = set()
        self.done = threading.Event()
        self.done_at = None
        self.stats = {"requests": 0, "answered": 0, "rejected": 0, "replayed": 0,
                      "rate-limited": 0, "too-large": 0, "local-limit": 0, "errors": 0}
        self.ptb = []
        self.local_limit = None  # smallest reply size refused by the dest host itself
        self.local_mtu = None    # the MTU the dest's kernel gave with that refusal
        self.largest = 0         # largest reply sent
        self.sent_sizes = {}     # (flow nonce, reply size) -> replies of that size sent
        self.peers = set()
        self.notes = []

    # -- sockets ------------------------------------------------------------------------------

    def open(self):
        problems = []
        for version in self.versions:
            family = socket.AF_INET6 if version == 6 else socket.AF_INET
            try:
                sock = socket.socket(family, socket.SOCK_DGRAM)
            except OSError as err:
                problems.append("IPv%d: %s" % (version, err.strerror or err))
                continue
            try:
                if version == 6:
                    sock.setsockopt(SOL_IPV6, IPV6_V6ONLY, 1)
                    sock.setsockopt(SOL_IPV6, IPV6_RECVERR, 1)
                    sock.setsockopt(SOL_IPV6, IPV6_RECVPKTINFO, 1)
                    sock.setsockopt(SOL_IPV6, IPV6_MTU_DISCOVER, IPV6_PMTUDISC_PROBE)
                    sock.setsockopt(SOL_IPV6, IPV6_DONTFRAG, 1)
                    sock.bind(("::", self.port))
                else:
                    sock.setsockopt(SOL_IP, IP_RECVERR, 1)
                    sock.setsockopt(SOL_IP, IP_PKTINFO, 1)
                    sock.setsockopt(SOL_IP, IP_MTU_DISCOVER, IP_PMTUDISC_PROBE)
                    sock.bind(("0.0.0.0", self.port))
                sock.setblocking(False)
                big_buffers(sock)
            except OSError as err:
                sock.close()
                if err.errno == errno.EADDRINUSE:
                    self.close()
                    raise ReflectorError("reflector port %d/udp is busy on the dest (IPv%d)"
                                         % (self.port, version))
                problems.append("IPv%d: %s" % (version, err.strerror or err))
                continue
            self.sockets[version] = sock
        if not self.sockets:
            raise ReflectorError("reflector could not listen on port %d/udp: %s"
                                 % (self.port, "; ".join(problems)))
        for problem in problems:
            self.notes.append("no reflector for %s" % problem)
        return self

    def close(self):
        for sock in self.sockets.values():
            sock.close()
        self.sockets = {}

    # -- serving ------------------------------------------------------------------------------

    def serve(self, deadline):
        """Answer requests until `deadline` (time.monotonic()) or p0's STATUS."""
        by_fd = {sock.fileno(): (version, sock) for version, sock in self.sockets.items()}
        try:
            while True:
                if self.done.is_set():
                    # Stay a moment for STATUS retries (our answer may have been lost).
                    if self.done_at is None or time.monotonic() > self.done_at + STATUS_GRACE:
                        break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                try:
                    ready, _, _ = select.select(list(by_fd), [], [], min(remaining, 0.2))
                except InterruptedError:
                    continue
                for fd in ready:
                    version, sock = by_fd[fd]
                    self._errors(version, sock)
                    for _ in range(64):
                        try:
                            data, ancillary, _flags, addr = sock.recvmsg(65535, 256)
                        except (BlockingIOError, InterruptedError):
                            break
                        except OSError:
                            # A pending ICMP error surfaces here once (IP_RECVERR); the error
                            # queue holds the details.
                            self._errors(version, sock)
                            continue
                        self._handle(version, sock, data, addr, _local_address(ancillary))
        finally:
            for version, sock in self.sockets.items():
                self._errors(version, sock)
        return self.report()

    def _errors(self, version, sock):
        for origin, icmp_type, code, info, offender, payload in read_error_queue(sock):
            if origin == SO_EE_ORIGIN_LOCAL:
                # Our own EMSGSIZE (counted at sendto); it carries the interface MTU.
                if info and (version == 4 or info >= MIN_MTU[6]):
                    self.local_mtu = info
                continue
            if not is_ptb(origin, icmp_type, code):
                self.stats["errors"] += 1
                continue
            size, flow = None, None
            decoded = decode(self.key, b"A", payload) if payload else None
            if decoded:
                size, flow = decoded[3], decoded[2].hex()
            useful = MIN_MTU[version] <= info and (size is None or info < size)
            self._note_ptb(offender, info, size, flow, useful)

    def _note_ptb(self, offender, mtu, size, flow, useful):
        """One entry per (sender, MTU): routers repeat the same PTB for every big reply."""
        for entry in self.ptb:
            if entry["from"] == offender and entry["mtu"] == mtu:
                entry["count"] += 1
                if size is not None:
                    entry["size"] = min(entry["size"] or size, size)
                if flow and flow not in entry["flows"] and len(entry["flows"]) < 8:
                    entry["flows"].append(flow)
                entry["useful"] = entry["useful"] and useful
                return
        if len(self.ptb) < 32:
            self.ptb.append({"from": offender, "mtu": mtu, "size": size, "useful": useful,
                             "count": 1, "flows": [flow] if flow else []})

    def _handle(self, version, sock, data, addr, local=None):
        self.stats["requests"] += 1
        message = decode(self.key, b"Q", data)
        if message is None:
            self.stats["rejected"] += 1
            return
        kind, seq, nonce, size, body = message
        if (nonce, seq) in self.seen:
            self.stats["replayed"] += 1
            return
        if len(self.seen) < 200000:
            self.seen.add((nonce, seq))
        received = len(data) + UDP_HEADER + IP_HEADER[version]
        overhead = UDP_HEADER + IP_HEADER[version]
        if kind == PROBE:
            if size > received or size < overhead + HEADER_LEN:
                self.stats["too-large"] += 1
                return
            total = size - overhead
            # The size that arrived, when the reply has room for it: a forward probe (a big
            # DF request asking for a small reply) is answered with what crossed.
            said = struct.pack("!H", min(received, 65535)) \
                if total >= HEADER_LEN + 2 else b""
            reply = encode(self.key, b"A", PROBE | ANSWER, seq, nonce, size=size, body=said,
                           total=total)
        elif kind == HELLO:
            reply = encode(self.key, b"A", HELLO | ANSWER, seq, nonce)
        elif kind == STATUS:
            # The report goes back whole (DF, never fragmented, like every reply): at most
            # what the smallest IPv6 path carries, so it crosses a 1500 (or 1280) member of
            # the reverse path however large p0's request was (p0 fragments its own).
            reply = self._status_reply(seq, nonce, min(received - overhead, STATUS_ROOM), body)
            if self.done_at is None:
                self.done_at = time.monotonic()
            self.done.set()
        else:
            self.stats["rejected"] += 1
            return
        if len(reply) + overhead > received:
            self.stats["too-large"] += 1
            return
        if not (self.packets.take() and self.volume.take(len(reply) + overhead)):
            self.stats["rate-limited"] += 1
            return
        self.peers.add(addr[0])
        try:
            _send_from(sock, reply, addr, local)
        except OSError as err:
            if err.errno == errno.EMSGSIZE and kind == PROBE:
                self._too_big_here(version, sock, seq, nonce, size, addr, local)
            else:
                self.stats["errors"] += 1
            return
        self.stats["answered"] += 1
        if kind == PROBE:
            self.largest = max(self.largest, size)
            key = (nonce, size)
            if key in self.sent_sizes or len(self.sent_sizes) < 16384:
                self.sent_sizes[key] = self.sent_sizes.get(key, 0) + 1

    def _too_big_here(self, version, sock, seq, nonce, size, addr, local):
        """The dest's own kernel refused a reply of `size` (EMSGSIZE): note the local limit
        and send a LIMIT notice (with the interface MTU when the kernel said it)."""
        self.stats["local-limit"] += 1
        if self.local_limit is None or size < self.local_limit:
            self.local_limit = size
        self._errors(version, sock)
        hint = b""
        if self.local_mtu and self.local_mtu < size:
            hint = struct.pack("!H", self.local_mtu)
        try:
            _send_from(sock, encode(self.key, b"A", LIMIT, seq, nonce, size=size, body=hint),
                       addr, local)
        except OSError:
            pass

    def _status_reply(self, seq, nonce, room, body):
        report = self.report()
        # p0 asks how often the sizes it found silent were really sent: a reply never sent
        # means its request was lost on the forward path, not the reply on the reverse path.
        try:
            sizes = json.loads(body.decode()) if body else []
        except (ValueError, RecursionError):  # RecursionError: "[[[[..." nested deeply
            sizes = []
        if not isinstance(sizes, list):
            sizes = []
        report["boundary"] = {}
        for item in sizes[:32]:
            # "<flow nonce hex>:<size>"
            try:
                flow, size = str(item).split(":")
                count = self.sent_sizes.get((bytes.fromhex(flow), int(size)), 0)
            except ValueError:
                continue
            report["boundary"][str(item)] = count
        full = report["ptb"]
        for keep, flows in ((len(full), 8), (8, 8), (8, 2), (4, 0), (0, 0)):
            report["ptb"] = [dict(p, flows=p["flows"][:flows]) for p in full[:keep]]
            body = json.dumps(report, separators=(",", ":"), sort_keys=True).encode()
            if HEADER_LEN + len(body) <= room:
                break
        else:
            body = b"{}"
        return encode(self.key, b"A", STATUS | ANSWER, seq, nonce, body=body)

    def report(self):
        return {
            "port": self.port,
            "versions": sorted(self.sockets) if self.sockets else list(self.versions),
            "stats": dict(self.stats),
            "ptb": list(self.ptb),
            "local-limit": self.local_limit,
            "local-mtu": self.local_mtu,
            "largest-reply": self.largest or None,
            "peers": sorted(self.peers),
            "notes": list(self.notes),
        }
