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

from ..core.errors import JumboError
from ..core.mtu import IP_HEADER, MIN_MTU
from ..probe.transport import SO_EE_ORIGIN_LOCAL
from ..probe.wire import ANSWER, HEADER_LEN, HELLO, LIMIT, PROBE, STATUS, UDP_HEADER, decode, encode, token_key
from .reflector_socket import (TokenBucket, configure, is_ptb, local_address, read_error_queue, same_address,
                               send_from)

# Rate limits of the reflector (per run, all sources together).
RATE_PACKETS = 2000.0     # replies per second
BURST_PACKETS = 400.0
RATE_BYTES = 16000000.0   # reply bytes per second
BURST_BYTES = 4000000.0

# What one run may make the reflector send in all (a reverse search needs at most
# MAX_ROUNDS x SIZES_PER_ROUND replies of at most 64 KiB: 25 MB; a forward search through the
# reflector asks for small replies): whatever a token holder sends, no more than this leaves.
RUN_BYTES = 32000000
RUN_PACKETS = 100000

STATUS_ROOM = 1280 - 40 - 8  # UDP payload of a STATUS answer: fits IPv6's minimum MTU
STATUS_GRACE = 1.0        # the reflector answers STATUS retries this long after the first


class ReflectorError(JumboError):
    """The reflector cannot run (every candidate port busy, no address family available)."""


class Reflector(object):
    """p1's responder. `open()` binds the first free of its candidate ports (fails clearly when
    every one is busy), `serve()` answers until the deadline or until p0's STATUS, `report()`
    says what happened.

    Whom it answers: requests from `source` only (the lead's address, from its participant
    data; the other family then not at all); without one, in each family, from the first
    address that sends a signed request, and from no other for the rest of the run. A holder
    of the run's token elsewhere can then only make the reflector send to the run's own
    source, and at most RUN_BYTES in all. `secret` (made by the dest when the run starts,
    never in participant data) goes back in the HELLO answer to that address only, when the
    HELLO has room for it."""

    def __init__(self, ports, token, versions=(4, 6), addresses=None, source=None, secret=b""):
        ports = [ports] if isinstance(ports, int) else list(ports)
        self.ports = [int(p) for p in ports]
        self.port = self.ports[0] if self.ports else None
        self.key = token_key(token)
        self.versions = tuple(versions)
        self.addresses = dict(addresses or {})  # version -> address to bind (else every one)
        allowed = same_address(source) if source else None
        self.sources = {allowed.version: allowed} if allowed else {}  # version -> address
        self.fixed = source is not None  # a source given: no other address, in any family
        self.secret = secret
        self.sent_bytes = 0
        self.sockets = {}
        self.packets = TokenBucket(RATE_PACKETS, BURST_PACKETS)
        self.volume = TokenBucket(RATE_BYTES, BURST_BYTES)
        self.seen = set()
        self.done = threading.Event()
        self.done_at = None
        self.stats = {"requests": 0, "answered": 0, "rejected": 0, "replayed": 0,
                      "rate-limited": 0, "too-large": 0, "local-limit": 0, "errors": 0,
                      "foreign": 0, "over-budget": 0}
        self.busy = []           # candidate ports found busy before one was free
        self.ptb = []
        self.local_limit = None  # smallest reply size refused by the dest host itself
        self.local_mtu = None    # the MTU the dest's kernel gave with that refusal
        self.largest = 0         # largest reply sent
        self.sent_sizes = {}     # (flow nonce, reply size) -> replies of that size sent
        self.peers = set()
        self.notes = []

    # -- sockets ------------------------------------------------------------------------------

    def open(self):
        """Bind the first candidate port free in every family (the test's address only, when
        known); a port another program holds is passed over, not an error."""
        problems = []
        for port in self.ports:
            busy = self._bind(port, problems)
            if not busy:
                break
            self.busy.append(port)
        else:
            raise ReflectorError("every reflector port is busy on the dest (%s/udp)"
                                 % ",".join(str(p) for p in self.ports))
        if not self.sockets:
            raise ReflectorError("reflector could not listen on port %d/udp: %s"
                                 % (self.port, "; ".join(problems)))
        for problem in problems:
            self.notes.append("no reflector for %s" % problem)
        return self

    def _bind(self, port, problems):
        """Sockets on `port` in every family: True when one of them is busy (none kept)."""
        self.port = port
        del problems[:]
        for version in self.versions:
            family = socket.AF_INET6 if version == 6 else socket.AF_INET
            try:
                sock = socket.socket(family, socket.SOCK_DGRAM)
            except OSError as err:
                problems.append("IPv%d: %s" % (version, err.strerror or err))
                continue
            try:
                configure(sock, version)
                sock.bind((self.addresses.get(version) or ("::" if version == 6 else "0.0.0.0"),
                           port))
            except OSError as err:
                sock.close()
                if err.errno == errno.EADDRINUSE:
                    self.close()
                    return True
                problems.append("IPv%d: %s" % (version, err.strerror or err))
                continue
            self.sockets[version] = sock
        return False

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
                        self._handle(version, sock, data, addr, local_address(ancillary))
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
        message = self._admit(version, data, addr)
        if message is None:
            return
        kind, seq, nonce, size, body = message
        overhead = UDP_HEADER + IP_HEADER[version]
        received = len(data) + overhead
        reply = self._reply(kind, seq, nonce, size, body, received, overhead)
        if reply is None or not self._may_send(len(reply) + overhead, received):
            return
        self.peers.add(addr[0])
        try:
            send_from(sock, reply, addr, local)
        except OSError as err:
            if err.errno == errno.EMSGSIZE and kind == PROBE:
                self._too_big_here(version, sock, seq, nonce, size, addr, local)
            else:
                self.stats["errors"] += 1
            return
        self._count_sent(kind, nonce, size, len(reply) + overhead)

    def _admit(self, version, data, addr):
        """The request decoded, or None (counted) when it is not answered: from an address
        other than the run's source, not signed with the run's token, or a replay. Nothing
        is answered before the token and the replay window agree."""
        peer, allowed = same_address(addr[0]), self.sources.get(version)
        if (allowed is not None or self.fixed) and peer != allowed:
            self.stats["foreign"] += 1  # not the run's source: never answered
            return None
        message = decode(self.key, b"Q", data)
        if message is None:
            self.stats["rejected"] += 1
            return None
        if allowed is None:
            # No source address known: the first signed request's is the only one answered.
            self.sources[version] = peer
        _kind, seq, nonce, _size, _body = message
        if (nonce, seq) in self.seen:
            self.stats["replayed"] += 1
            return None
        if len(self.seen) < 200000:
            self.seen.add((nonce, seq))
        return message

    def _reply(self, kind, seq, nonce, size, body, received, overhead):
        """The answer to an admitted request of `received` bytes (IP packet), or None
        (counted) when there is none."""
        if kind == PROBE:
            if size > received or size < overhead + HEADER_LEN:
                self.stats["too-large"] += 1
                return None
            total = size - overhead
            # The size that arrived, when the reply has room for it: a forward probe (a big
            # DF request asking for a small reply) is answered with what crossed.
            said = struct.pack("!H", min(received, 65535)) \
                if total >= HEADER_LEN + 2 else b""
            return encode(self.key, b"A", PROBE | ANSWER, seq, nonce, size=size, body=said,
                          total=total)
        if kind == HELLO:
            # The run's secret when the HELLO has room for it (no amplification).
            room = received - overhead - HEADER_LEN >= len(self.secret)
            return encode(self.key, b"A", HELLO | ANSWER, seq, nonce,
                          body=self.secret if room else b"")
        if kind == STATUS:
            # The report goes back whole (DF, never fragmented, like every reply): at most
            # what the smallest IPv6 path carries, so it crosses a 1500 (or 1280) member of
            # the reverse path however large p0's request was (p0 fragments its own).
            reply = self._status_reply(seq, nonce, min(received - overhead, STATUS_ROOM), body)
            if self.done_at is None:
                self.done_at = time.monotonic()
            self.done.set()
            return reply
        self.stats["rejected"] += 1
        return None

    def _may_send(self, length, received):
        """Whether a reply of `length` bytes (IP packet) may leave, or why not (counted):
        never larger than its request (no amplification), within what one run may make the
        reflector send, and within the rate limits."""
        if length > received:
            self.stats["too-large"] += 1
            return False
        if self.stats["answered"] >= RUN_PACKETS or self.sent_bytes + length > RUN_BYTES:
            self.stats["over-budget"] += 1
            return False
        if not (self.packets.take() and self.volume.take(length)):
            self.stats["rate-limited"] += 1
            return False
        return True

    def _count_sent(self, kind, nonce, size, length):
        self.stats["answered"] += 1
        self.sent_bytes += length
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
            send_from(sock, encode(self.key, b"A", LIMIT, seq, nonce, size=size, body=hint),
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
            "busy-ports": list(self.busy),
            "source": " ".join(str(a) for _, a in sorted(self.sources.items())) or None,
            "sent-bytes": self.sent_bytes,
            "versions": sorted(self.sockets) if self.sockets else list(self.versions),
            "stats": dict(self.stats),
            "ptb": list(self.ptb),
            "local-limit": self.local_limit,
            "local-mtu": self.local_mtu,
            "largest-reply": self.largest or None,
            "peers": sorted(self.peers),
            "notes": list(self.notes),
        }
