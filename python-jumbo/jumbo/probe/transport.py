"""Probe transports: how a probe of N bytes is sent with DF set and how its fate is learnt.

A transport sends IP packets of an exact size (IP header included) with fragmentation
forbidden, and reports what came back as `Event`s. Two are built in, both unprivileged:

* `UdpTransport` ("udp"): UDP datagrams to a closed port of the dest. Arrival is proven by the
  dest's ICMP port unreachable, read from the socket error queue (IP_RECVERR / IPV6_RECVERR);
  routers' frag-needed / packet-too-big and time-exceeded arrive the same way. Works
  everywhere, but the dest rate-limits its port unreachables (Linux: burst 6, then 1/s for
  IPv4), so the search spends arrivals sparingly.
* `EchoTransport` ("icmp-echo"): ICMP echo through an ICMP datagram socket; needs
  `net.ipv4.ping_group_range` to include the user's group. Echo replies are not rate-limited.

Interface of a transport (a reflector transport, `jumbo/reflector.py`, can take the same shape):

    name                      method string for the result ("udp", "icmp-echo", "reflector")
    flows                     number of distinct flows it can send on (0 .. flows-1)
    arrival_limited           True when every arrival costs a rate-limited answer
    send(size, flow=0, ttl=None) -> probe id (int); raises ProbeError for local failures,
                                 LocalTooBig when the host itself refuses the size
    poll(deadline)            -> list of Event; waits at most until `deadline` (time.monotonic())
    fds()                     -> file descriptors to select() on (optional; [] = poll often)
    flow_info(flow)           -> {"source-port": int|None, "flow-label": int|None}
    close()

Event kinds: ARRIVED (the dest got it), TOO_BIG (a router said frag-needed / packet-too-big;
`mtu` is its claim, `source` the router), TTL (time exceeded at `source`), UNREACH (another
ICMP error: host/net/admin unreachable), LOCAL (a local error).

The two transports share the socket floor here (DF options, the error queue, the ICMP quote
parsing of both families), so that a change to how a probe's fate is read is made once. The
egress interface and its MTU are route.py's.
"""

import errno
import os
import select
import socket
import struct
import time

from ..core.errors import JumboError

SOL_IP, SOL_IPV6 = 0, 41
IP_TTL, IP_MTU_DISCOVER, IP_RECVERR = 2, 10, 11
IP_PMTUDISC_PROBE = 3
IPV6_UNICAST_HOPS, IPV6_MTU_DISCOVER, IPV6_RECVERR, IPV6_DONTFRAG = 16, 23, 25, 62
IPV6_PMTUDISC_PROBE = 3
MSG_ERRQUEUE = 0x2000
SO_EE_ORIGIN_LOCAL, SO_EE_ORIGIN_ICMP, SO_EE_ORIGIN_ICMP6 = 1, 2, 3
EXTENDED_ERR = struct.Struct("=IBBBBII")

IP_HEADER = {4: 20, 6: 40}
L4_HEADER = 8  # UDP and ICMP echo headers alike

ARRIVED, TOO_BIG, TTL, UNREACH, LOCAL = "arrived", "too-big", "ttl", "unreach", "local"

# A closed port is assumed on the dest (traceroute's customary range).
DEFAULT_PORT = 33434
MARKER = b"JMBP"


class ProbeError(JumboError):
    """A failure the operator must act on (the message says what); the run cannot measure."""


class LocalTooBig(JumboError):
    """The local host refuses to send this size (larger than the egress interface MTU)."""


class Event(object):
    __slots__ = ("probe", "kind", "source", "mtu", "icmp_type", "icmp_code", "when")

    def __init__(self, probe, kind, source=None, mtu=None, icmp_type=None, icmp_code=None,
                 when=None):
        self.probe = probe
        self.kind = kind
        self.source = source
        self.mtu = mtu
        self.icmp_type = icmp_type
        self.icmp_code = icmp_code
        self.when = time.monotonic() if when is None else when

    def __repr__(self):
        return "Event(%r, %s, %s, mtu=%s)" % (self.probe, self.kind, self.source, self.mtu)


class Transport(object):
    """Base class: see the module documentation for the interface."""

    name = "abstract"
    flows = 1
    arrival_limited = False

    def send(self, size, flow=0, ttl=None):
        raise NotImplementedError

    def poll(self, deadline):
        raise NotImplementedError

    def fds(self):
        return []

    def flow_info(self, flow):
        return {"source-port": None, "flow-label": None}

    def close(self):
        pass


# Destination-unreachable codes that the dest itself sends for a packet its IP layer took in
# whole: a closed port, and what a host firewall's REJECT answers (firewalld, the usual
# firewall of EL8/EL9 perfSONAR nodes, rejects with host-prohibited; nftables' `reject` with
# admin-prohibited). From the dest's own address each one proves the probe crossed the path.
# IPv4 (type 3): protocol 2, port 3, net/host prohibited 9/10, administratively prohibited 13.
# IPv6 (type 1): administratively prohibited 1, port 4, ingress/egress policy 5, reject route 6.
DEST_ANSWER_CODES = {4: frozenset((2, 3, 9, 10, 13)), 6: frozenset((1, 4, 5, 6))}


# (ICMP type, code or None for any) of a router's answers per ICMP family, and the type of
# the dest's own unreachable whose codes (DEST_ANSWER_CODES) prove a probe arrived.
ROUTER_ANSWERS = {4: ((3, 4, TOO_BIG), (11, None, TTL)), 6: ((2, None, TOO_BIG), (3, None, TTL))}
DEST_UNREACH_TYPE = {4: 3, 6: 1}


def _classify(version, ee_origin, ee_type, ee_code, ee_errno, dest_ip, offender):
    """Map an extended error to an event kind."""
    if ee_origin == SO_EE_ORIGIN_LOCAL:
        return LOCAL
    family = 4 if (version == 4 or ee_origin == SO_EE_ORIGIN_ICMP) else 6
    for kind_type, kind_code, kind in ROUTER_ANSWERS[family]:
        if ee_type == kind_type and kind_code in (None, ee_code):
            return kind
    if ee_type == DEST_UNREACH_TYPE[family] and ee_code in DEST_ANSWER_CODES[family] \
            and offender == dest_ip:
        return ARRIVED
    return UNREACH


def _offender(version, anc_data):
    """The address after sock_extended_err in the control message (SO_EE_OFFENDER)."""
    rest = anc_data[EXTENDED_ERR.size:]
    try:
        family = struct.unpack("=H", rest[:2])[0]
        if family == socket.AF_INET:
            return socket.inet_ntop(socket.AF_INET, rest[4:8])
        if family == socket.AF_INET6:
            return socket.inet_ntop(socket.AF_INET6, rest[8:24])
    except (struct.error, ValueError, OSError):
        pass
    return None


class SocketTransport(Transport):
    """Common parts: DF sockets, error-queue reading, probe bookkeeping."""

    def __init__(self, dest_ip, version, source=None, flows=1):
        self.dest_ip = dest_ip
        self.version = version
        self.family = socket.AF_INET if version == 4 else socket.AF_INET6
        self.source = source
        self.flows = flows
        self.overhead = IP_HEADER[version] + L4_HEADER
        self.nonce = os.urandom(4)
        self.next_id = 1
        self.socks = []
        self.by_fd = {}
        self.sent = 0
        # Largest size the host can send (the engine sets the egress interface MTU).
        self.max_size = 65535

    def _df_options(self, sock):
        if self.version == 4:
            sock.setsockopt(SOL_IP, IP_MTU_DISCOVER, IP_PMTUDISC_PROBE)
            sock.setsockopt(SOL_IP, IP_RECVERR, 1)
        else:
            sock.setsockopt(SOL_IPV6, IPV6_MTU_DISCOVER, IPV6_PMTUDISC_PROBE)
            sock.setsockopt(SOL_IPV6, IPV6_RECVERR, 1)
            try:
                sock.setsockopt(SOL_IPV6, IPV6_DONTFRAG, 1)
            except OSError:
                pass

    def _set_ttl(self, sock, ttl):
        if self.version == 4:
            sock.setsockopt(SOL_IP, IP_TTL, ttl)
        else:
            sock.setsockopt(SOL_IPV6, IPV6_UNICAST_HOPS, ttl)

    def _payload(self, probe_id, length):
        head = MARKER + self.nonce + struct.pack("!I", probe_id)
        if length < len(head):
            return head[:max(length, 0)]
        return head + b"\0" * (length - len(head))

    def _send_bytes(self, sock, data, ttl):
        self._set_ttl(sock, ttl if ttl else 64)
        for attempt in range(4):
            try:
                sock.send(data)
                self.sent += 1
                return
            except OSError as err:
                code = err.errno
                last = attempt == 3
                if code == errno.EMSGSIZE:
                    # A pending PTB also surfaces as EMSGSIZE (sk_err): retry unless the size
                    # is really beyond the egress interface.
                    if len(data) + self.overhead > self.max_size or last:
                        raise LocalTooBig()
                    time.sleep(0.0002)
                    continue
                if code in (errno.EAGAIN, errno.ENOBUFS) and not last:
                    time.sleep(0.001)
                    continue
                if code in (errno.ECONNREFUSED, errno.EHOSTUNREACH, errno.ENETUNREACH,
                            errno.EPROTO, errno.EACCES) and not last:
                    # Most likely the pending ICMP error of an earlier probe: reading it
                    # through send() cleared it, so try again.
                    continue
                if code == errno.ENETUNREACH:
                    raise ProbeError("No route to %s from this host (network unreachable)"
                                     % self.dest_ip)
                if code == errno.EHOSTUNREACH:
                    raise ProbeError("%s is unreachable (host unreachable)" % self.dest_ip)
                raise ProbeError("Cannot send to %s: %s" % (self.dest_ip, err.strerror))


    def fds(self):
        return [s.fileno() for s in self.socks]

    def poll(self, deadline):
        events = []
        fds = self.fds()
        while True:
            timeout = max(0.0, deadline - time.monotonic())
            try:
                ready = select.select(fds, [], [], timeout)[0] if fds else []
            except InterruptedError:
                ready = []
            for fd in ready:
                events.extend(self._drain(self.by_fd[fd]))
            if events or time.monotonic() >= deadline:
                return events

    def _drain(self, sock):
        events = []
        for _ in range(256):
            try:
                data, anc, _flags, _addr = sock.recvmsg(2048, 1024,
                                                        MSG_ERRQUEUE | socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                break
            event = self._error_event(data, anc)
            if event is not None:
                events.append(event)
        events.extend(self._read_replies(sock))
        # A hard error also sits in sk_err; reading it keeps the next send clean.
        try:
            sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        except OSError:
            pass
        return events

    def _read_replies(self, sock):
        return []

    def _error_event(self, data, anc):
        for level, kind, value in anc:
            if level not in (SOL_IP, SOL_IPV6) or kind not in (IP_RECVERR, IPV6_RECVERR):
                continue
            if len(value) < EXTENDED_ERR.size:
                continue
            ee_errno, origin, ee_type, ee_code, _pad, info, _data = EXTENDED_ERR.unpack(
                value[:EXTENDED_ERR.size])
            probe = self._probe_from_quote(data)
            if probe is None:
                return None
            offender = _offender(self.version, value)
            what = _classify(self.version, origin, ee_type, ee_code, ee_errno, self.dest_ip,
                             offender)
            return Event(probe, what, source=offender, mtu=info if what == TOO_BIG else None,
                         icmp_type=ee_type, icmp_code=ee_code)
        return None

    def _probe_from_payload(self, data):
        if len(data) >= 12 and data[:4] == MARKER and data[4:8] == self.nonce:
            return struct.unpack("!I", data[8:12])[0]
        return None

    def close(self):
        for sock in self.socks:
            try:
                sock.close()
            except OSError:
                pass
        self.socks = []


def _open_flow_sockets(transport, port, flows, tune=None):
    """One connected UDP socket per flow (so one source port each: what ECMP hashes on),
    DF set, registered with `transport`; `tune(sock)` adjusts each. Their source ports go to
    transport.ports. Raises ProbeError (the transport closed) when a socket cannot open."""
    transport.ports = []
    try:
        for _ in range(flows):
            sock = socket.socket(transport.family, socket.SOCK_DGRAM)
            transport._df_options(sock)
            if transport.source:
                sock.bind((transport.source, 0))
            sock.connect((transport.dest_ip, port))
            sock.setblocking(False)
            if tune is not None:
                tune(sock)
            transport.socks.append(sock)
            transport.by_fd[sock.fileno()] = sock
            transport.ports.append(sock.getsockname()[1])
    except OSError as err:
        transport.close()
        raise socket_problem(err, transport.dest_ip, transport.version, transport.source)


class UdpTransport(SocketTransport):
    name = "udp"
    arrival_limited = True

    def __init__(self, dest_ip, version, source=None, flows=1, port=DEFAULT_PORT):
        SocketTransport.__init__(self, dest_ip, version, source, flows)
        self.port = port
        _open_flow_sockets(self, port, flows)

    def send(self, size, flow=0, ttl=None):
        probe = self.next_id
        self.next_id += 1
        payload = self._payload(probe, size - self.overhead)
        self._send_bytes(self.socks[flow], payload, ttl)
        return probe

    def _probe_from_quote(self, data):
        return self._probe_from_payload(data)

    def flow_info(self, flow):
        return {"source-port": self.ports[flow], "flow-label": None}


class EchoTransport(SocketTransport):
    name = "icmp-echo"
    arrival_limited = False

    def __init__(self, dest_ip, version, source=None):
        SocketTransport.__init__(self, dest_ip, version, source, 1)
        proto = socket.IPPROTO_ICMP if version == 4 else socket.IPPROTO_ICMPV6
        self.request_type = 8 if version == 4 else 128
        self.reply_type = 0 if version == 4 else 129
        try:
            sock = socket.socket(self.family, socket.SOCK_DGRAM, proto)
        except OSError as err:
            raise ProbeError("ICMP datagram sockets not allowed (net.ipv4.ping_group_range): %s"
                             % err.strerror)
        try:
            self._df_options(sock)
            if source:
                sock.bind((source, 0))
            sock.connect((dest_ip, 0))
            sock.setblocking(False)
        except OSError as err:
            sock.close()
            raise socket_problem(err, dest_ip, version, source)
        self.socks = [sock]
        self.by_fd = {sock.fileno(): sock}

    def send(self, size, flow=0, ttl=None):
        probe = self.next_id
        self.next_id += 1
        header = struct.pack("!BBHHH", self.request_type, 0, 0, 0, probe & 0xffff)
        payload = self._payload(probe, size - self.overhead)
        self._send_bytes(self.socks[0], header + payload, ttl)
        return probe

    def _probe_from_quote(self, data):
        # The quote starts with our ICMP echo header.
        return self._probe_from_payload(data[8:])

    def _read_replies(self, sock):
        events = []
        for _ in range(256):
            try:
                data = sock.recv(70000, socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                break
            if len(data) >= 8 and data[0] == self.reply_type:
                probe = self._probe_from_payload(data[8:])
                if probe is not None:
                    events.append(Event(probe, ARRIVED, source=self.dest_ip))
        return events


def socket_problem(err, dest_ip, version, source):
    if err.errno == errno.ENETUNREACH:
        return ProbeError("No route to %s from this host (network unreachable)" % dest_ip)
    if err.errno == errno.EADDRNOTAVAIL:
        if source:
            return ProbeError("Source address %s is not configured on this host" % source)
        return ProbeError("This host has no IPv%d address to reach %s" % (version, dest_ip))
    if err.errno == errno.EAFNOSUPPORT:
        return ProbeError("This host does not support IPv%d" % version)
    if err.errno in (errno.EACCES, errno.EPERM):
        return ProbeError("Permission denied opening a probe socket: %s" % err.strerror)
    return ProbeError("Cannot open a probe socket to %s: %s" % (dest_ip, err.strerror))
