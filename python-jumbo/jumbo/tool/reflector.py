"""The reverse path: a token-checking UDP reflector on the dest, and the size search on the source.

Why a reflector: the source can only see what comes back to it. To learn the MTU of the path
dest -> source, the dest must send packets of chosen sizes towards the source, with DF set, and
the source must say which sizes arrived. The dest participant (p1) runs `Reflector` for the
length of the run; the source (p0) runs `measure_reverse`.

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

Messages (UDP payload), all starting with a 40-byte header:
    magic "JMBO" | version u8 | type u8 | flags u8 | pad u8 | size u16 | body-length u16 |
    seq u32 | nonce 8 bytes | mac 16 bytes
mac = HMAC-SHA256(token, direction byte + first 24 header bytes + body), first 16 bytes; the
direction byte ("Q" request, "A" answer) stops a reply being replayed as a request.
Types: HELLO 1 (reachability, RTT), PROBE 2 (size = reply size wanted), STATUS 3 (p0 is done;
the answer carries p1's report as JSON), answers have the type | 0x80, LIMIT 0x84 (EMSGSIZE).

Everything here is standard library only and runs unprivileged on Python 3.6.
"""

import errno
import hashlib
import hmac
import json
import os
import select
import socket
import struct
import threading
import time

from ..probe import transport as probe_transport

PROTOCOL = 1
MAGIC = b"JMBO"
HEADER = struct.Struct("!4sBBBBHHI8s")  # 24 bytes, then the 16-byte mac
MAC_LEN = 16
HEADER_LEN = HEADER.size + MAC_LEN  # 40

HELLO, PROBE, STATUS = 1, 2, 3
ANSWER = 0x80
LIMIT = 0x84

# Linux socket option numbers (not all are exported by Python's socket module).
SOL_IP, SOL_IPV6 = 0, 41
IP_MTU_DISCOVER, IP_RECVERR = 10, 11
IP_PMTUDISC_DONT, IP_PMTUDISC_PROBE = 0, 3
IPV6_MTU_DISCOVER, IPV6_MTU, IPV6_RECVERR, IPV6_V6ONLY, IPV6_DONTFRAG = 23, 24, 25, 26, 62
IPV6_PMTUDISC_DONT, IPV6_PMTUDISC_PROBE = 0, 3
IP_PKTINFO, IPV6_RECVPKTINFO, IPV6_PKTINFO = 8, 49, 50
MSG_ERRQUEUE = 0x2000
SO_EE_ORIGIN_LOCAL, SO_EE_ORIGIN_ICMP, SO_EE_ORIGIN_ICMP6 = 1, 2, 3
EXTENDED_ERR = struct.Struct("=IBBBBII")  # struct sock_extended_err

IP_HEADER = {4: 20, 6: 40}
UDP_HEADER = 8
MIN_MTU = {4: 68, 6: 1280}

# Rate limits of the reflector (per run, all sources together).
RATE_PACKETS = 2000.0     # replies per second
BURST_PACKETS = 400.0
RATE_BYTES = 16000000.0   # reply bytes per second
BURST_BYTES = 4000000.0

# Source side search parameters.
# Seconds p0 keeps greeting p1 (p0 already waited the runner's START_WAIT for p1's start-up
# and clock skew, and the forward phase has usually talked to the reflector already).
HELLO_WINDOW = 2.5
HELLO_INTERVAL = 0.25
SIZES_PER_ROUND = 48      # probe sizes sent per round trip (over all flows)
CONFIRM = 3               # silences needed before a size counts as not crossing
MAX_ROUNDS = 8
MAX_FLOWS = 8             # reverse flows searched side by side (distinct source ports)
PACE_BYTES = 48000        # requests sent back to back before a short pause
PACE_PAUSE = 0.002
STATUS_TRIES = 4
STATUS_GRACE = 1.0        # the reflector answers STATUS retries this long after the first
STATUS_SIZE = 4000        # STATUS requests are padded so the JSON answer may be this large
DEFAULT_MAX_SIZE = 9216   # largest reply size tried when the spec has no max-mtu
PLATEAUS = (1280, 1500, 4470, 8950, 9000, 9216)


class ReflectorError(Exception):
    """The reflector cannot run (port busy, no address family available)."""


def family_version(family):
    return 6 if family == socket.AF_INET6 else 4


def make_mac(key, direction, head, body):
    return hmac.new(key, direction + head + body, hashlib.sha256).digest()[:MAC_LEN]


def encode(key, direction, kind, seq, nonce, size=0, body=b"", total=0):
    """A message; padded with zeros to `total` payload bytes."""
    head = HEADER.pack(MAGIC, PROTOCOL, kind, 0, 0, size, len(body), seq, nonce)
    message = head + make_mac(key, direction, head, body) + body
    if total > len(message):
        message += b"\0" * (total - len(message))
    return message


def decode(key, direction, data):
    """(kind, seq, nonce, size, body) of a well-formed, authentic message, else None."""
    if len(data) < HEADER_LEN:
        return None
    magic, version, kind, _flags, _pad, size, blen, seq, nonce = HEADER.unpack(data[:HEADER.size])
    if magic != MAGIC or version != PROTOCOL or HEADER_LEN + blen > len(data):
        return None
    body = data[HEADER_LEN:HEADER_LEN + blen]
    mac = data[HEADER.size:HEADER_LEN]
    if not hmac.compare_digest(mac, make_mac(key, direction, data[:HEADER.size], body)):
        return None
    return kind, seq, nonce, size, body


def token_key(token):
    """The HMAC key of a hex token (participant data `_token`)."""
    if not isinstance(token, str) or len(token) < 16:
        raise ValueError("the reflector token must be a hex string of at least 16 digits")
    try:
        return bytes.fromhex(token)
    except ValueError:
        raise ValueError("the reflector token is not hexadecimal")


def new_token():
    """A one-time run token: 128 random bits, hex."""
    return os.urandom(16).hex()


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


def _big_buffers(sock, size=4 * 1024 * 1024):
    """Ask for large socket buffers (the kernel caps them at rmem_max/wmem_max): a round of
    probes arrives as a burst."""
    for option in (socket.SO_RCVBUF, socket.SO_SNDBUF):
        try:
            sock.setsockopt(socket.SOL_SOCKET, option, size)
        except OSError:
            pass


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
                _big_buffers(sock)
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
            # One entry per (sender, MTU): routers repeat the same PTB for every big reply.
            for entry in self.ptb:
                if entry["from"] == offender and entry["mtu"] == info:
                    entry["count"] += 1
                    if size is not None:
                        entry["size"] = min(entry["size"] or size, size)
                    if flow and flow not in entry["flows"] and len(entry["flows"]) < 8:
                        entry["flows"].append(flow)
                    entry["useful"] = entry["useful"] and useful
                    break
            else:
                if len(self.ptb) < 32:
                    self.ptb.append({"from": offender, "mtu": info, "size": size,
                                     "useful": useful, "count": 1,
                                     "flows": [flow] if flow else []})

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
            reply = self._status_reply(seq, nonce, received - overhead, body)
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
                self.stats["local-limit"] += 1
                if self.local_limit is None or size < self.local_limit:
                    self.local_limit = size
                self._errors(version, sock)
                hint = b""
                if self.local_mtu and self.local_mtu < size:
                    hint = struct.pack("!H", self.local_mtu)
                try:
                    _send_from(sock, encode(self.key, b"A", LIMIT, seq, nonce, size=size,
                                            body=hint), addr, local)
                except OSError:
                    pass
            else:
                self.stats["errors"] += 1
            return
        self.stats["answered"] += 1
        if kind == PROBE:
            self.largest = max(self.largest, size)
            key = (nonce, size)
            if key in self.sent_sizes or len(self.sent_sizes) < 16384:
                self.sent_sizes[key] = self.sent_sizes.get(key, 0) + 1

    def _status_reply(self, seq, nonce, room, body):
        report = self.report()
        # p0 asks how often the sizes it found silent were really sent: a reply never sent
        # means its request was lost on the forward path, not the reply on the reverse path.
        try:
            sizes = json.loads(body.decode()) if body else []
        except ValueError:
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


# ----------------------------------------------------------------------------------------------
# The source side: a size search over reply sizes


class _Client(object):
    def __init__(self, address, port, key, version, forward_mtu, source=None):
        self.address = (address, port)
        self.key = key
        self.version = version
        self.overhead = IP_HEADER[version] + UDP_HEADER
        self.nonce = os.urandom(8)
        self.seq = 0
        self.sent = {}  # seq -> (kind, size, time sent)
        self.replies = {}  # seq -> (kind, size, rtt, body)
        self.probes = 0
        self.forward_mtu = forward_mtu
        self.route_mtu = None
        family = socket.AF_INET6 if version == 6 else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_DGRAM)
        self.sock.setblocking(False)
        _big_buffers(self.sock)
        if source:
            # The spec's source address: the reverse path measured is the one to it.
            try:
                self.sock.bind((source, 0))
            except OSError:
                self.sock.close()
                raise
        if version == 6:
            # Requests may be fragmented, by us, to what the forward path really carries.
            self.sock.setsockopt(SOL_IPV6, IPV6_MTU_DISCOVER, IPV6_PMTUDISC_DONT)
            if forward_mtu and forward_mtu >= MIN_MTU[6]:
                try:
                    self.sock.setsockopt(SOL_IPV6, IPV6_MTU, int(forward_mtu))
                except OSError:
                    pass
                self.route_mtu = _route_mtu(address, port)
        else:
            # DF off: routers fragment requests larger than the forward path.
            self.sock.setsockopt(SOL_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DONT)

    def close(self):
        self.sock.close()

    def padded(self, size):
        """The request size for a reply of `size` bytes.

        Linux sends an IPv6 datagram no larger than the route MTU whole, even when IPV6_MTU
        is smaller (it only fragments datagrams above the route MTU, at IPV6_MTU). So a
        request between the forward path MTU and the route MTU is padded past the route MTU,
        to be fragmented and cross the forward path. IPv4 routers fragment by themselves."""
        if self.version == 6 and self.forward_mtu and self.route_mtu and \
                self.forward_mtu < size <= self.route_mtu:
            return self.route_mtu + 1
        return size

    def send(self, kind, size=0, total=0, body=b""):
        self.seq += 1
        seq = self.seq
        payload = max(HEADER_LEN + len(body), total - self.overhead if total else 0)
        message = encode(self.key, b"Q", kind, seq, self.nonce, size=size, body=body,
                         total=payload)
        self.sent[seq] = (kind, size, time.monotonic())
        if kind == PROBE:
            self.probes += 1
        try:
            self.sock.sendto(message, self.address)
        except OSError as err:
            if err.errno in (errno.ENOBUFS, errno.EAGAIN, errno.ECONNREFUSED, errno.EHOSTUNREACH,
                             errno.ENETUNREACH):
                return seq
            raise
        return seq

    def collect(self, wanted, until):
        """Read answers until every seq in `wanted` has one or `until` (monotonic) passes."""
        wanted = set(wanted)
        while True:
            self._drain()
            if wanted.issubset(self.replies):
                return
            remaining = until - time.monotonic()
            if remaining <= 0:
                return
            try:
                select.select([self.sock], [], [], remaining)
            except InterruptedError:
                pass

    def _drain(self):
        for _ in range(512):
            try:
                data, _addr = self.sock.recvfrom(65535)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                continue  # an ICMP error (e.g. port unreachable) surfaced on the socket
            message = decode(self.key, b"A", data)
            if message is None:
                continue
            kind, seq, nonce, size, body = message
            if nonce != self.nonce or seq not in self.sent or seq in self.replies:
                continue
            sent_kind, sent_size, stamp = self.sent[seq]
            if (kind & ~ANSWER) != sent_kind and kind != LIMIT:
                continue
            if kind == PROBE | ANSWER and len(data) + self.overhead != sent_size:
                continue
            self.replies[seq] = (kind, sent_size, time.monotonic() - stamp, body)


def _route_mtu(address, port):
    """The kernel's MTU for the route to address (IPv6), or None."""
    probe = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    try:
        probe.connect((address, port))
        return probe.getsockopt(SOL_IPV6, IPV6_MTU)
    except OSError:
        return None
    finally:
        probe.close()


def _spread(low, high, count):
    """Up to `count` distinct integers strictly between low and high, evenly spaced."""
    if high - low <= 1:
        return []
    if high - low - 1 <= count:
        return list(range(low + 1, high))
    step = (high - low) / float(count + 1)
    return sorted({int(round(low + step * i)) for i in range(1, count + 1)} - {low, high})


def measure_reverse(address, port, token, version, forward_mtu=None, min_size=None,
                    max_size=None, timeout=1.0, deadline=None, flows=1, source=None):
    """Measure the reverse path MTU (dest -> here) with p1's reflector at address:port.

    `flows` searches run side by side, each from its own source port: on a reverse path with
    equal-cost members the dest's replies to each flow may be hashed onto a different member,
    so a member that is narrower (or a black hole) is caught, as the forward engine does.

    Returns a dict: reverse-path-mtu (the smallest over the flows, or None), reverse-pmtud,
    reverse-local-mtu (the dest's own interface MTU when known), reverse-ptb (PTBs the dest
    received), reverse-flows, probes, elapsed, rtt, rounds, error, notes, and the dest's report
    (`dest-report`) when its STATUS answer came back.
    """
    started = time.monotonic()
    if deadline is None:
        deadline = started + max_duration({"timeout": "PT%gS" % timeout})
    key = token_key(token)
    floor = max(MIN_MTU[version], min_size or 0, IP_HEADER[version] + UDP_HEADER + HEADER_LEN)
    ceiling = min(int(max_size or DEFAULT_MAX_SIZE), 65535)
    if ceiling < floor:
        ceiling = floor
    answer = {"reverse-path-mtu": None, "reverse-pmtud": "unknown", "reverse-local-mtu": None,
              "reverse-ptb": [], "reverse-flows": [], "probes": 0, "elapsed": 0.0, "rtt": None,
              "error": None, "notes": [], "dest-report": None,
              "reflector": "%s:%d" % (address, port)}
    clients = []
    try:
        for _ in range(max(1, min(int(flows or 1), MAX_FLOWS))):
            clients.append(_Client(address, port, key, version, forward_mtu, source))
    except OSError as err:
        for client in clients:
            client.close()
        answer["error"] = "cannot open the reverse-path socket: %s" % (err.strerror or err)
        return answer
    try:
        return _search(clients, answer, floor, ceiling, timeout, deadline, started)
    except OSError as err:
        answer["error"] = "reverse path measurement failed: %s" % (err.strerror or err)
        return answer
    finally:
        answer["probes"] = sum(client.probes for client in clients)
        answer["elapsed"] = round(time.monotonic() - started, 3)
        for client in clients:
            client.close()


class _FlowSearch(object):
    """The size search of one flow: the largest size answered (good), the sizes that stayed
    silent (with counts), and, when found, the boundary (good + 1, settled)."""

    def __init__(self, index, client, plan):
        self.index = index
        self.client = client
        self.plan = list(plan)
        self.seqs = []
        self.good = None
        self.silent = {}
        self.boundary = None
        self.done = False

    def port(self):
        try:
            return self.client.sock.getsockname()[1]
        except OSError:
            return None

    def update(self, refused, floor, ceiling, per_round):
        """Account for this round's answers and plan the next round (or finish)."""
        for seq in self.seqs:
            if self.client.replies.get(seq) is None:
                size = self.client.sent[seq][1]
                self.silent[size] = self.silent.get(size, 0) + 1
        # Late answers to earlier rounds count too: any arrival is proof.
        for kind, size, _rtt, _body in self.client.replies.values():
            if kind == PROBE | ANSWER and (self.good is None or size > self.good):
                self.good = size
        low = self.good if self.good is not None else floor - 1
        if self.good is not None and self.good >= ceiling:
            self.done, self.plan = True, []
            return
        above = sorted({s for s in self.silent if s > low} | {s for s in refused if s > low})
        if not above:
            self.plan = [ceiling]
            return
        high = above[0]
        settled = high in refused or self.silent.get(high, 0) >= CONFIRM
        if high == low + 1 and settled:
            self.boundary = high
            self.done, self.plan = True, []
            return
        self.plan = _spread(low, high, per_round - 1)
        if not settled:
            self.plan += [high] * (2 if high == low + 1 else 1)


def _collect_all(searches, until):
    """Read answers on every flow's socket until each has its round's answers or `until`."""
    while True:
        pending = []
        for search in searches:
            search.client._drain()
            if not set(search.seqs).issubset(search.client.replies):
                pending.append(search.client.sock)
        remaining = until - time.monotonic()
        if not pending or remaining <= 0:
            return
        try:
            select.select(pending, [], [], remaining)
        except InterruptedError:
            pass


def _send_round(searches):
    """Send every flow's sizes for this round, interleaved, paced in bursts of PACE_BYTES so
    that neither the dest's socket buffer nor a router queue overflows (a lost burst would
    look like an MTU limit)."""
    for search in searches:
        search.seqs = []
    burst = 0
    for index in range(max(len(s.plan) for s in searches)):
        for search in searches:
            if index < len(search.plan):
                size = search.plan[index]
                total = search.client.padded(size)
                search.seqs.append(search.client.send(PROBE, size, total))
                burst += total
                if burst >= PACE_BYTES:
                    time.sleep(PACE_PAUSE)
                    burst = 0


def _refusals(search, refused, floor):
    """LIMIT notices of this round: sizes the dest host itself cannot send (definitive)."""
    for seq in search.seqs:
        reply = search.client.replies.get(seq)
        if reply is None or reply[0] != LIMIT:
            continue
        size = search.client.sent[seq][1]
        refused.add(size)
        if len(reply[3]) == 2:
            # The dest's kernel said its interface MTU: nothing above it can be sent.
            hint = struct.unpack("!H", reply[3])[0]
            if floor <= hint < size:
                refused.add(hint + 1)


def _search(clients, answer, floor, ceiling, timeout, deadline, started):
    # 1. Hello until the reflector answers (it may start a little after us).
    first = clients[0]
    hello_until = min(deadline, started + HELLO_WINDOW)
    rtt = None
    while rtt is None and time.monotonic() < hello_until:
        seq = first.send(HELLO)
        first.collect([seq], min(hello_until, time.monotonic() + HELLO_INTERVAL))
        answered = [v for s, v in first.replies.items() if v[0] == HELLO | ANSWER]
        if answered:
            rtt = min(v[2] for v in answered)
    if rtt is None:
        answer["error"] = ("the dest participant's reflector at %s did not answer within %.1f s "
                           "(dest not running the tool, port filtered, or a wrong token)"
                           % (answer["reflector"], hello_until - started))
        return answer
    answer["rtt"] = round(rtt, 6)
    wait = _round_wait(timeout, rtt)

    # 2. The size searches, one per flow, round by round; LIMIT refusals are the dest host's
    #    own limit and count for every flow.
    plan = sorted({s for s in (floor,) + PLATEAUS + (ceiling,) if floor <= s <= ceiling})
    searches = [_FlowSearch(i, client, plan) for i, client in enumerate(clients)]
    per_round = max(6, SIZES_PER_ROUND // len(searches))
    refused = set()
    rounds = 0
    while rounds < MAX_ROUNDS and time.monotonic() + wait < deadline:
        active = [s for s in searches if not s.done and s.plan]
        if not active:
            break
        rounds += 1
        _send_round(active)
        _collect_all(active, time.monotonic() + wait)
        for search in active:
            _refusals(search, refused, floor)
        for search in active:
            search.update(refused, floor, ceiling, per_round)
            if search.good is None and search.silent.get(floor, 0) >= CONFIRM:
                search.done = True
    answer["rounds"] = rounds

    # 3. STATUS: p1's view (PTBs it received, its own limit, whether the silent sizes were
    #    really sent); it also tells p1 we are done.
    silent_edges = ["%s:%d" % (s.client.nonce.hex(), s.boundary) for s in searches
                    if s.boundary is not None and s.boundary not in refused]
    report = status(first, wait, deadline, silent_edges)
    answer["dest-report"] = report
    if report:
        answer["reverse-ptb"] = report.get("ptb") or []
        if report.get("local-mtu"):
            answer["reverse-local-mtu"] = report["local-mtu"]
    for search in searches:
        answer["reverse-flows"].append(_flow_verdict(search, refused, ceiling, report, answer))

    measured = [f["path-mtu"] for f in answer["reverse-flows"] if f["path-mtu"] is not None]
    if not measured:
        answer["error"] = "no reply of even %d bytes came back from the dest (reverse path)" % floor
        return answer
    answer["reverse-path-mtu"] = min(measured)
    verdicts = set(f["pmtud"] for f in answer["reverse-flows"] if f["path-mtu"] is not None)
    for verdict in ("blackhole", "unknown", "ok", "not-needed"):
        if verdict in verdicts:
            answer["reverse-pmtud"] = verdict
            break
    if answer["reverse-local-mtu"] is None and any(
            s.boundary in refused for s in searches if s.boundary is not None):
        answer["reverse-local-mtu"] = max(measured)
    if len(set(measured)) > 1:
        answer["notes"].append("reverse flows differ (%s): equal-cost paths of different MTU"
                               % ", ".join(str(m) for m in measured))
    return answer


def _flow_verdict(search, refused, ceiling, report, answer):
    flow = {"flow": search.index, "source-port": search.port(), "path-mtu": search.good,
            "pmtud": "unknown"}
    if search.good is None:
        return flow
    if search.boundary is None:
        if search.good >= ceiling:
            flow["pmtud"] = "not-needed"
            _note(answer, "replies of the largest size tried (%d) came back" % ceiling)
        else:
            _note(answer, "reverse search stopped early (time budget): %d is a lower bound"
                  % search.good)
        return flow
    if search.boundary in refused:
        flow["pmtud"] = "not-needed"
        return flow
    if report is None:
        _note(answer, "the dest's STATUS answer was lost: reverse PMTUD not judged here")
        answer["pending"] = True  # merged-results decides from the dest's own report
        return flow
    sent = (report.get("boundary") or {}).get("%s:%d" % (search.client.nonce.hex(),
                                                           search.boundary))
    if not sent:
        _note(answer, "requests for %d-byte replies never reached the dest (lost on the forward "
              "path): %d is a lower bound of the reverse path MTU"
              % (search.boundary, search.good))
        return flow
    ptbs = [p for p in report.get("ptb") or [] if p.get("useful")]
    nonce = search.client.nonce.hex()
    # A usable too-big for this flow's replies, or one naming exactly the MTU this flow found
    # (routers rate-limit their ICMP, so not every flow gets its own).
    if any(nonce in (p.get("flows") or []) or p.get("mtu") == search.good for p in ptbs):
        flow["pmtud"] = "ok"
    else:
        flow["pmtud"] = "blackhole"
        if report.get("ptb"):
            _note(answer, "the dest received too-big messages, none usable for flow %d"
                  % search.index)
    return flow


def _note(answer, text):
    if text not in answer["notes"]:
        answer["notes"].append(text)


def status(client, wait, deadline, sizes=()):
    """Send STATUS (padded so the answer fits) until answered; p1's report dict, or None.
    `sizes`: reply sizes found silent; p1 says how many replies of each it really sent."""
    body = json.dumps(list(sizes)[:32]).encode()
    for _ in range(STATUS_TRIES):
        if time.monotonic() >= deadline:
            break
        seq = client.send(STATUS, 0, client.padded(STATUS_SIZE), body=body)
        client.collect([seq], min(deadline, time.monotonic() + max(wait, 0.3)))
        reply = client.replies.get(seq)
        if reply is not None:
            try:
                report = json.loads(reply[3].decode())
            except ValueError:
                return None
            return report if isinstance(report, dict) else None
    return None


def say_goodbye(address, port, token, version, deadline, wait=0.3):
    """Only the STATUS exchange (used when no reverse search ran): p1 stops serving early."""
    try:
        client = _Client(address, port, token_key(token), version, None)
    except (OSError, ValueError):
        return None
    try:
        return status(client, wait, deadline)
    except OSError:
        return None
    finally:
        client.close()


# ----------------------------------------------------------------------------------------------
# Forward probing through the reflector (p0 -> p1): a probe transport for jumbo.probe


class ForwardTransport(probe_transport._SocketTransport):
    """A jumbo.probe transport ("reflector"): each probe is a token-signed PROBE request of the
    exact size, sent with DF set and no local fragmentation, asking for the smallest reply;
    the reflector's answer (carrying the size it received) proves the size crossed the
    forward path. The dest spends no ICMP budget on it, so every probe can be answered;
    routers' frag-needed / packet-too-big and time-exceeded come back on the socket error
    queue as for the UDP transport. One socket, hence one source port, per flow (ECMP)."""

    name = "reflector"
    arrival_limited = False

    def __init__(self, dest_ip, version, port, token, source=None, flows=1):
        probe_transport._SocketTransport.__init__(self, dest_ip, version, source, flows)
        self.key = token_key(token)
        self.port = port
        self.flow_nonce = os.urandom(8)
        self.ports = []
        # The smallest reply that carries the received size.
        self.reply_size = IP_HEADER[version] + UDP_HEADER + HEADER_LEN + 2
        self.received = {}
        try:
            for _ in range(flows):
                sock = socket.socket(self.family, socket.SOCK_DGRAM)
                self._df_options(sock)
                if source:
                    sock.bind((source, 0))
                sock.connect((dest_ip, port))
                sock.setblocking(False)
                _big_buffers(sock)
                self.socks.append(sock)
                self.by_fd[sock.fileno()] = sock
                self.ports.append(sock.getsockname()[1])
        except OSError as err:
            self.close()
            raise probe_transport._socket_problem(err, dest_ip, version, source)

    def send(self, size, flow=0, ttl=None, kind=PROBE):
        probe = self.next_id
        self.next_id += 1
        message = encode(self.key, b"Q", kind, probe, self.flow_nonce,
                         size=min(self.reply_size, size), total=size - self.overhead)
        self._send_bytes(self.socks[flow], message, ttl)
        return probe

    def hello(self, deadline):
        """True when the reflector answers a HELLO before `deadline` (time.monotonic())."""
        while time.monotonic() < deadline:
            self.send(0, 0, None, kind=HELLO)
            self.sent -= 1  # not a probe
            until = min(deadline, time.monotonic() + 0.2)
            while time.monotonic() < until:
                events = self.poll(until)
                if any(e.kind == probe_transport.ARRIVED for e in events):
                    return True
                if any(e.kind == probe_transport.UNREACH for e in events):
                    return False  # nothing listens on the port (or it is filtered)
        return False

    def _error_event(self, data, anc):
        event = probe_transport._SocketTransport._error_event(self, data, anc)
        if event is not None and event.kind == probe_transport.ARRIVED:
            # A port unreachable from the dest: no reflector there, not an arrival (only
            # the reflector's own answer proves one).
            event.kind = probe_transport.UNREACH
        return event

    def _probe_from_quote(self, data):
        # The quote starts with our request's header (routers quote at least that much).
        if len(data) >= HEADER.size:
            fields = HEADER.unpack(data[:HEADER.size])
            if fields[0] == MAGIC and fields[8] == self.flow_nonce:
                return fields[7]
        return None

    def _read_replies(self, sock):
        events = []
        for _ in range(256):
            try:
                data = sock.recv(65535, socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                continue  # a pending ICMP error surfaced; the error queue holds it
            message = decode(self.key, b"A", data)
            if message is None or message[2] != self.flow_nonce:
                continue
            kind, seq, _nonce, _size, body = message
            if kind not in (PROBE | ANSWER, HELLO | ANSWER):
                continue
            if len(body) == 2:
                self.received[seq] = struct.unpack("!H", body)[0]
            events.append(probe_transport.Event(seq, probe_transport.ARRIVED,
                                                source=self.dest_ip))
        return events

    def flow_info(self, flow):
        return {"source-port": self.ports[flow], "flow-label": None}


# The slowest round trip the reverse bound is made for (intercontinental paths), and the
# rounds it budgets: a round waits ROUND_WAIT_RTTS round trips after its last request.
WORST_RTT = 0.3
ROUND_WAIT_RTTS = 1.5
BUDGET_ROUNDS = 6
# The greeting the bound budgets: the forward phase has already met the reflector, so it
# answers at once (HELLO_WINDOW still applies when there is time, e.g. no forward phase).
HELLO_BUDGET = 1.0


def _round_wait(timeout, rtt):
    """How long a round waits for its replies after its last request: the replies come back
    to back one round trip after the requests, so ROUND_WAIT_RTTS round trips (+50 ms of
    jitter), at least 0.15 s, at most `timeout`. A reply later than that still counts in
    the next rounds (any arrival is proof; a size counts as silent only CONFIRM times)."""
    return min(max(timeout, 0.05), max(0.15, ROUND_WAIT_RTTS * rtt + 0.05))


def max_duration(spec):
    """Upper bound, in seconds, of measure_reverse for a spec (pure function of the spec):
    the greeting (HELLO_BUDGET), BUDGET_ROUNDS rounds and two STATUS tries, each round its
    RTT-based wait at WORST_RTT (capped by `timeout`). measure_reverse stops at this deadline
    (a search cut short says so: its answer is then a lower bound)."""
    from ..test.spec import duration_seconds_or_none
    timeout = duration_seconds_or_none((spec or {}).get("timeout") or "PT1S") or 1.0
    wait = _round_wait(timeout, WORST_RTT)
    return round(HELLO_BUDGET + BUDGET_ROUNDS * wait + 2 * max(wait, 0.3) + 0.3, 3)
