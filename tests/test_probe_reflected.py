"""jumbo.probe.reflected: the forward transport that probes through the dest's reflector.
Against a real jumbo.tool.reflector over loopback (real sockets, MTU 65536, so every size
crosses whole): each signed PROBE of an exact IP size comes back as an ARRIVED event whose
body is that very size as the reflector received it; the reply is the smallest that carries
it (IP + UDP + 40-byte header + 2 = 70 bytes on IPv4); a HELLO is greeted; a wrong token gets
silence, and a closed port (no reflector) is UNREACH, never an arrival."""

import socket
import threading
import time

import pytest

from jumbo.probe import transport as probe_transport
from jumbo.probe.reflected import ForwardTransport
from jumbo.probe.wire import new_token
from jumbo.tool import reflector


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def served():
    """A real reflector on a free loopback port; its token, port and the server."""
    token, port = new_token(), free_udp_port()
    server = reflector.Reflector([port], token, (4,)).open()
    thread = threading.Thread(target=server.serve, args=(time.monotonic() + 20,))
    thread.start()
    yield token, port, server
    server.done.set()
    thread.join(25)
    server.close()


def arrivals(transport, expected, seconds=5.0):
    """ARRIVED events polled until `expected` probe ids were seen or `seconds` passed."""
    seen = {}
    deadline = time.monotonic() + seconds
    while set(expected) - set(seen) and time.monotonic() < deadline:
        for event in transport.poll(min(deadline, time.monotonic() + 0.5)):
            seen.setdefault(event.probe, event)
    return seen


def test_each_size_sent_comes_back_as_the_size_the_reflector_received(served):
    token, port, server = served
    forward = ForwardTransport("127.0.0.1", 4, port, token)
    try:
        assert forward.hello(time.monotonic() + 5)
        sizes = {forward.send(size): size for size in (1280, 1500, 8972, 9000)}
        seen = arrivals(forward, sizes)
    finally:
        forward.close()
    assert sorted(seen) == sorted(sizes)
    assert all(e.kind == probe_transport.ARRIVED and e.source == "127.0.0.1"
               for e in seen.values())
    assert {seq: forward.received[seq] for seq in sizes} == sizes
    assert forward.sent == 4  # the HELLO is not counted as a probe
    report = server.report()
    assert report["stats"]["rejected"] == 0
    # Every answer is the 70-byte minimum, however large the probe was.
    assert forward.reply_size == 20 + 8 + 40 + 2
    assert report["largest-reply"] == forward.reply_size


def test_one_socket_hence_one_source_port_per_flow(served):
    token, port, _server = served
    forward = ForwardTransport("127.0.0.1", 4, port, token, flows=3)
    try:
        ports = [forward.flow_info(flow)["source-port"] for flow in range(3)]
        assert ports == [s.getsockname()[1] for s in forward.socks]
        assert len(set(ports)) == 3
    finally:
        forward.close()


def test_a_wrong_token_is_not_greeted(served):
    _token, port, server = served
    stranger = ForwardTransport("127.0.0.1", 4, port, new_token())
    try:
        assert stranger.hello(time.monotonic() + 0.8) is False
        probe = stranger.send(1500)
        assert arrivals(stranger, [probe], seconds=0.8) == {}
    finally:
        stranger.close()
    assert server.report()["stats"]["answered"] == 0
    assert server.report()["stats"]["rejected"] >= 1


def test_a_closed_port_is_unreachable_not_an_arrival():
    forward = ForwardTransport("127.0.0.1", 4, free_udp_port(), new_token())
    try:
        started = time.monotonic()
        assert forward.hello(started + 10) is False
        # The port unreachable ended it, long before the deadline (no reflector, no wait).
        assert time.monotonic() - started < 9
        probe = forward.send(1500)
        events = []
        deadline = time.monotonic() + 3
        while not events and time.monotonic() < deadline:
            events = forward.poll(deadline)
    finally:
        forward.close()
    assert [(e.probe, e.kind) for e in events] == [(probe, probe_transport.UNREACH)]
    assert forward.received == {}


def test_while_the_dest_may_be_starting_a_closed_port_is_tried_again():
    forward = ForwardTransport("127.0.0.1", 4, free_udp_port(), new_token())
    try:
        started = time.monotonic()
        assert forward.hello(started + 10, starting_until=started + 1.0) is False
        # Greeted again until `starting_until`, then given up (not the whole 10 s).
        assert 1.0 <= time.monotonic() - started < 9
    finally:
        forward.close()
