"""Forward probing through the dest's reflector (p0 -> p1): the probe transport the engine uses
when the dest runs the tool (the wire format is jumbo.probe.wire's; the reflector itself is
jumbo.tool.reflector)."""

import os
import struct
import time

from . import transport as probe_transport
from .wire import (ANSWER, HELLO, PROBE, HEADER_LEN, UDP_HEADER, big_buffers, datagrams,
                   decode, encode, quoted_probe, token_key)
from ..core.mtu import IP_HEADER


class ForwardTransport(probe_transport.UdpTransport):
    """A jumbo.probe transport ("reflector"): each probe is a token-signed PROBE request of the
    exact size, sent with DF set and no local fragmentation, asking for the smallest reply;
    the reflector's answer (carrying the size it received) proves the size crossed the
    forward path. The dest spends no ICMP budget on it, so every probe can be answered;
    routers' frag-needed / packet-too-big and time-exceeded come back on the socket error
    queue as for the UDP transport. One socket, hence one source port, per flow (ECMP)."""

    name = "reflector"
    arrival_limited = False

    def __init__(self, dest_ip, version, port, token, source=None, flows=1):
        key = token_key(token)
        probe_transport.UdpTransport.__init__(self, dest_ip, version, source, flows, port)
        for sock in self.socks:
            big_buffers(sock)
        self.key = key
        self.flow_nonce = os.urandom(8)
        # The smallest reply that carries the received size.
        self.reply_size = IP_HEADER[version] + UDP_HEADER + HEADER_LEN + 2
        self.received = {}

    def send(self, size, flow=0, ttl=None, kind=PROBE):
        probe = self.next_id
        self.next_id += 1
        message = encode(self.key, b"Q", kind, probe, self.flow_nonce,
                         size=min(self.reply_size, size), total=size - self.overhead)
        self._send_bytes(self.socks[flow], message, ttl)
        return probe

    def hello(self, deadline, starting_until=None):
        """True when the reflector answers a HELLO before `deadline` (time.monotonic()).
        Until `starting_until` the dest participant may still be starting (its reflector
        not bound yet): a port unreachable then means "not yet", not "nothing listens"."""
        while time.monotonic() < deadline:
            self.send(0, 0, None, kind=HELLO)
            self.sent -= 1  # not a probe
            until = min(deadline, time.monotonic() + 0.2)
            while time.monotonic() < until:
                events = self.poll(until)
                if any(e.kind == probe_transport.ARRIVED for e in events):
                    return True
                if any(e.kind == probe_transport.UNREACH for e in events):
                    if starting_until is None or time.monotonic() >= starting_until:
                        return False  # nothing listens on the port (or it is filtered)
                    # Not bound yet: greet again shortly (each HELLO costs the dest one
                    # ICMP answer of its budget, so not in a tight loop).
                    time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))
                    break
        return False

    def _error_event(self, data, anc):
        event = super()._error_event(data, anc)
        if event is not None and event.kind == probe_transport.ARRIVED:
            # A port unreachable from the dest: no reflector there, not an arrival (only
            # the reflector's own answer proves one).
            event.kind = probe_transport.UNREACH
        return event

    def _probe_from_quote(self, data):
        return quoted_probe(data, self.flow_nonce)

    def _read_replies(self, sock):
        answers = (decode(self.key, b"A", data) for data in datagrams(sock, 256))
        return [self._arrival(message) for message in answers
                if message is not None and message[2] == self.flow_nonce
                and message[0] in (PROBE | ANSWER, HELLO | ANSWER)]

    def _arrival(self, message):
        """The ARRIVED event of an answer; a PROBE answer's body is the size that crossed."""
        seq, body = message[1], message[4]
        if len(body) == 2:
            self.received[seq] = struct.unpack("!H", body)[0]
        return probe_transport.Event(seq, probe_transport.ARRIVED, source=self.dest_ip)
