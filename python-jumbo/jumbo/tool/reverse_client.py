"""The source's socket to the dest's reflector for the reverse search: one per flow, requests
padded and sent without DF so they cross the forward path whatever its MTU (jumbo.tool.
reflector says why), answers read and matched."""

import errno
import os
import select
import socket
import time

from ..core.mtu import IP_HEADER, MIN_MTU
from ..probe.transport import (IPV6_MTU_DISCOVER, IP_MTU_DISCOVER, SOL_IP, SOL_IPV6)
from ..probe.wire import (ANSWER, HEADER_LEN, IPV6_MTU, IPV6_PMTUDISC_DONT, IP_PMTUDISC_DONT,
                          LIMIT, PROBE, UDP_HEADER, big_buffers, datagrams, decode, encode)


class ReflectorClient(object):
    """One flow's socket to the dest's reflector (its own source port): requests padded to
    the size wanted and sent without DF, answers matched to them by seq."""

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
        big_buffers(self.sock)
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
                self.route_mtu = route_mtu(address, port)
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
            self.drain()
            if wanted.issubset(self.replies):
                return
            remaining = until - time.monotonic()
            if remaining <= 0:
                return
            try:
                select.select([self.sock], [], [], remaining)
            except InterruptedError:
                pass

    def drain(self):
        """Take every answer waiting on the socket (an ICMP error surfacing there, e.g. port
        unreachable, is passed over)."""
        for data in datagrams(self.sock, 512):
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


def route_mtu(address, port):
    """The kernel's MTU for the route to address (IPv6), or None."""
    probe = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    try:
        probe.connect((address, port))
        return probe.getsockopt(SOL_IPV6, IPV6_MTU)
    except OSError:
        return None
    finally:
        probe.close()
