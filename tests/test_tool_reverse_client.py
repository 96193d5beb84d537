"""jumbo.tool.reverse_client: one flow's socket to the dest's reflector, over loopback with the
real Reflector (jumbo.tool.reflector) answering: requests padded to the size wanted, answers
matched by seq, nonce and size; anything else on the socket passed over."""

import gc
import socket
import time
import warnings

import pytest

from jumbo.core.mtu import IP_HEADER
from jumbo.probe.wire import ANSWER, HELLO, PROBE, UDP_HEADER, encode, token_key
from jumbo.probe import wire
from jumbo.tool.reverse_client import ReflectorClient, route_mtu
from loopback_reflector import free_udp_port, serving


@pytest.fixture
def served():
    """A real reflector on loopback for 20 s (ended by the test), and its token."""
    token = wire.new_token()
    with serving(token, seconds=20) as (_server, port, _thread):
        yield port, token_key(token)


def test_a_probe_is_answered_at_the_size_asked(served):
    port, key = served
    client = ReflectorClient("127.0.0.1", port, key, 4, None)
    try:
        hello = client.send(HELLO)
        client.collect([hello], time.monotonic() + 10)
        sizes = {client.send(PROBE, size, size): size for size in (1500, 4000, 9000)}
        client.collect(list(sizes), time.monotonic() + 10)
        assert client.replies[hello][0] == HELLO | ANSWER
        for seq, size in sizes.items():
            kind, sent_size, rtt, _body = client.replies[seq]
            assert (kind, sent_size) == (PROBE | ANSWER, size) and rtt >= 0
        assert client.probes == 3 and client.seq == 4
    finally:
        client.close()


def test_answers_that_are_not_ours_are_passed_over():
    """A datagram from a socket we control: a reply signed with another key, one with another
    nonce, one for a seq never sent, and one whose size is not what was asked all go unmatched;
    the genuine one is taken once."""
    peer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    peer.bind(("127.0.0.1", 0))
    key = token_key(wire.new_token())
    client = ReflectorClient("127.0.0.1", peer.getsockname()[1], key, 4, None)
    try:
        seq = client.send(PROBE, 1000, 1000)
        request, back = peer.recvfrom(65535)
        assert len(request) + IP_HEADER[4] + UDP_HEADER == 1000  # padded to the size asked
        payload = 1000 - client.overhead

        def reply(k=key, nonce=client.nonce, s=seq, total=payload):
            peer.sendto(encode(k, b"A", PROBE | ANSWER, s, nonce, size=1000, total=total), back)
        reply(k=token_key(wire.new_token()))
        reply(nonce=b"x" * 8)
        reply(s=seq + 5)
        reply(total=payload - 100)
        peer.sendto(b"garbage", back)
        client.collect([seq], time.monotonic() + 1.0)
        assert client.replies == {}
        reply()
        reply()
        client.collect([seq], time.monotonic() + 10)
        assert list(client.replies) == [seq] and client.replies[seq][:2] == (PROBE | ANSWER, 1000)
    finally:
        client.close()
        peer.close()


def test_a_request_to_a_closed_port_is_no_crash():
    client = ReflectorClient("127.0.0.1", free_udp_port(), token_key(wire.new_token()), 4,
                             None)
    try:
        first = client.send(PROBE, 1500, 1500)
        client.collect([first], time.monotonic() + 0.5)  # ICMP port unreachable surfaces
        assert client.send(PROBE, 1500, 1500) == first + 1 and client.replies == {}
    finally:
        client.close()


def test_a_source_address_not_of_this_host_is_an_error_and_leaks_no_socket():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        with pytest.raises(OSError):
            ReflectorClient("127.0.0.1", 9, token_key(wire.new_token()), 4, None,
                            source="198.18.255.254")
        gc.collect()  # an unclosed socket says so when it is collected
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]


def test_an_ipv6_request_between_the_forward_and_route_mtu_is_padded_past_the_route():
    client = ReflectorClient("127.0.0.1", 9, token_key(wire.new_token()), 4, None)
    try:
        assert client.padded(9000) == 9000  # IPv4: routers fragment
        client.version, client.forward_mtu, client.route_mtu = 6, 1500, 9000
        assert [client.padded(s) for s in (1500, 1501, 9000, 9001)] == [1500, 9001, 9001, 9001]
        client.route_mtu = None
        assert client.padded(4000) == 4000
    finally:
        client.close()


def test_route_mtu_is_the_kernels_for_the_route_or_none():
    if not socket.has_ipv6:
        pytest.skip("no IPv6 here")
    mtu = route_mtu("::1", 9)
    assert mtu is None or mtu == 65536  # loopback's MTU, where ::1 is configured
    assert route_mtu("not an address", 9) is None
