"""The reflector's sockets and the little it needs around them (jumbo.tool.reflector uses
these): socket options, the error queue (ICMP PTBs caused by its replies), the address a
request was sent to, token buckets, address comparison. Standard library only; Python 3.6."""

import ipaddress
import socket
import struct
import time

from ..probe.transport import (EXTENDED_ERR, IPV6_DONTFRAG, IPV6_MTU_DISCOVER, IPV6_PMTUDISC_PROBE,
                               IPV6_RECVERR, IP_MTU_DISCOVER, IP_PMTUDISC_PROBE, IP_RECVERR,
                               MSG_ERRQUEUE, SOL_IP, SOL_IPV6, SO_EE_ORIGIN_ICMP,
                               SO_EE_ORIGIN_ICMP6)
from ..probe.wire import (IP_PKTINFO, IPV6_PKTINFO, IPV6_RECVPKTINFO, IPV6_V6ONLY, big_buffers)


def same_address(text):
    """An address as compared by the reflector (IPv6 scope and case dropped), or None."""
    try:
        return ipaddress.ip_address(str(text).split("%")[0])
    except ValueError:
        return None


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


def sockaddr_ip(raw):
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
                found.append((origin, icmp_type, code, info, sockaddr_ip(raw[EXTENDED_ERR.size:]),
                              data))
    return found


def is_ptb(origin, icmp_type, code):
    return (origin == SO_EE_ORIGIN_ICMP and icmp_type == 3 and code == 4) or \
        (origin == SO_EE_ORIGIN_ICMP6 and icmp_type == 2)


def local_address(ancillary):
    """(level, type, packed address) to answer from: the address the request was sent to."""
    for level, kind, raw in ancillary:
        if level == SOL_IP and kind == IP_PKTINFO and len(raw) >= 12:
            return (SOL_IP, IP_PKTINFO, struct.pack("=i4s4s", 0, raw[4:8], b"\0" * 4))
        if level == SOL_IPV6 and kind == IPV6_PKTINFO and len(raw) >= 20:
            return (SOL_IPV6, IPV6_PKTINFO, struct.pack("=16si", raw[:16], 0))
    return None


def configure(sock, version):
    """Options of a reflector socket: errors and the request's address reported, replies
    DF and never fragmented here, non-blocking, big buffers."""
    if version == 6:
        sock.setsockopt(SOL_IPV6, IPV6_V6ONLY, 1)
        sock.setsockopt(SOL_IPV6, IPV6_RECVERR, 1)
        sock.setsockopt(SOL_IPV6, IPV6_RECVPKTINFO, 1)
        sock.setsockopt(SOL_IPV6, IPV6_MTU_DISCOVER, IPV6_PMTUDISC_PROBE)
        sock.setsockopt(SOL_IPV6, IPV6_DONTFRAG, 1)
    else:
        sock.setsockopt(SOL_IP, IP_RECVERR, 1)
        sock.setsockopt(SOL_IP, IP_PKTINFO, 1)
        sock.setsockopt(SOL_IP, IP_MTU_DISCOVER, IP_PMTUDISC_PROBE)
    sock.setblocking(False)
    big_buffers(sock)


def send_from(sock, data, addr, local):
    """Reply with the request's destination as source address, so the reply matches the
    source's flow (stateful firewalls, NAT) even on a multi-homed dest with asymmetric routes."""
    if local is None:
        return sock.sendto(data, addr)
    return sock.sendmsg([data], [local], 0, addr)
