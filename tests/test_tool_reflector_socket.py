"""jumbo.tool.reflector_socket: the reflector's socket options, error queue, reply address,
token buckets and address comparison. Real loopback sockets; the option numbers are Linux's
(include/uapi/linux/in.h, in6.h, errqueue.h), written here independently of the module."""

import select
import socket
import struct

import pytest

from jumbo.tool.reflector_socket import (TokenBucket, configure, family_version, is_ptb,
                                         local_address, read_error_queue, same_address,
                                         send_from, sockaddr_ip)

SOL_IP, SOL_IPV6 = 0, 41
IP_MTU_DISCOVER, IP_RECVERR, IP_PKTINFO, IP_PMTUDISC_PROBE = 10, 11, 8, 3
IPV6_MTU_DISCOVER, IPV6_RECVERR, IPV6_V6ONLY, IPV6_RECVPKTINFO, IPV6_DONTFRAG = 23, 25, 26, 49, 62
ORIGIN_LOCAL, ORIGIN_ICMP, ORIGIN_ICMP6 = 1, 2, 3


@pytest.mark.parametrize("text,address", [
    ("198.18.0.1", "198.18.0.1"), ("FD00::1", "fd00::1"), ("fe80::1%eth0", "fe80::1"),
    ("fd00:0:0::0001", "fd00::1")])
def test_addresses_compare_without_case_scope_or_spelling(text, address):
    assert same_address(text) == same_address(address)
    assert str(same_address(text)) == address


@pytest.mark.parametrize("text", ["", "host.example", "198.18.0.256", None, "1.2.3.4; rm -rf /",
                                  "fd00::1::2", 42])
def test_what_is_not_an_address_compares_as_none(text):
    assert same_address(text) is None


def test_family_version():
    assert family_version(socket.AF_INET) == 4
    assert family_version(socket.AF_INET6) == 6


def test_token_bucket_limits_bursts_and_refills():
    bucket = TokenBucket(rate=1.0, burst=5.0)
    assert sum(bucket.take() for _ in range(20)) == 5
    # Three seconds' worth of refill (written into its clock, not slept): three more.
    bucket.stamp -= 3.0
    assert sum(bucket.take() for _ in range(20)) == 3
    # Never above the burst, however long it was idle.
    bucket.stamp -= 1000.0
    assert sum(bucket.take() for _ in range(20)) == 5
    assert TokenBucket(rate=1.0, burst=100.0).take(60) is True
    assert TokenBucket(rate=1.0, burst=10.0).take(11) is False


def test_the_offender_is_read_from_a_sockaddr():
    v4 = struct.pack("=HH4s8x", socket.AF_INET, socket.htons(9), socket.inet_aton("198.18.7.1"))
    assert sockaddr_ip(v4) == "198.18.7.1"
    v6 = struct.pack("=HHI16sI", socket.AF_INET6, socket.htons(9), 0,
                     socket.inet_pton(socket.AF_INET6, "fd00::7:1"), 0)
    assert sockaddr_ip(v6) == "fd00::7:1"
    assert sockaddr_ip(v6[:20]) is None  # cut inside the address
    assert sockaddr_ip(v4[:7]) is None
    assert sockaddr_ip(b"") is None
    assert sockaddr_ip(struct.pack("=H", socket.AF_UNIX) + b"\0" * 22) is None


@pytest.mark.parametrize("origin,icmp_type,code,ptb", [
    (ORIGIN_ICMP, 3, 4, True),     # IPv4 fragmentation needed
    (ORIGIN_ICMP, 3, 3, False),    # IPv4 port unreachable
    (ORIGIN_ICMP, 11, 0, False),   # time exceeded
    (ORIGIN_ICMP6, 2, 0, True),    # IPv6 packet too big
    (ORIGIN_ICMP6, 1, 4, False),   # IPv6 port unreachable
    (ORIGIN_ICMP, 2, 0, False),    # an ICMPv6 type under the IPv4 origin
    (ORIGIN_LOCAL, 3, 4, False),   # the local stack, not a router
])
def test_only_a_routers_frag_needed_or_packet_too_big_is_a_ptb(origin, icmp_type, code, ptb):
    assert is_ptb(origin, icmp_type, code) is ptb


def test_a_reflector_socket_has_the_options_it_needs():
    v4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        configure(v4, 4)
        assert v4.getsockopt(SOL_IP, IP_RECVERR) == 1
        assert v4.getsockopt(SOL_IP, IP_PKTINFO) == 1
        assert v4.getsockopt(SOL_IP, IP_MTU_DISCOVER) == IP_PMTUDISC_PROBE
        assert v4.gettimeout() == 0.0
    finally:
        v4.close()
    try:
        v6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    except OSError:
        pytest.skip("no IPv6 on this host")
    try:
        configure(v6, 6)
        for option, value in ((IPV6_V6ONLY, 1), (IPV6_RECVERR, 1), (IPV6_RECVPKTINFO, 1),
                              (IPV6_MTU_DISCOVER, IP_PMTUDISC_PROBE), (IPV6_DONTFRAG, 1)):
            assert v6.getsockopt(SOL_IPV6, option) == value, option
        assert v6.gettimeout() == 0.0
    finally:
        v6.close()


@pytest.fixture
def reflector_and_client():
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    client = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        configure(server, 4)
        server.bind(("0.0.0.0", 0))
        client.bind(("127.0.0.1", 0))
        client.settimeout(5)
        yield server, client
    finally:
        server.close()
        client.close()


def _request(server, client, to):
    client.sendto(b"request", (to, server.getsockname()[1]))
    server.settimeout(5)
    data, ancillary, _flags, addr = server.recvmsg(2048, 512)
    server.setblocking(False)
    return data, ancillary, addr


def test_the_reply_leaves_from_the_address_the_request_was_sent_to(reflector_and_client):
    server, client = reflector_and_client
    data, ancillary, addr = _request(server, client, "127.0.0.5")
    assert data == b"request" and addr == client.getsockname()
    local = local_address(ancillary)
    assert local == (SOL_IP, IP_PKTINFO,
                     struct.pack("=i4s4s", 0, socket.inet_aton("127.0.0.5"), b"\0" * 4))
    assert send_from(server, b"answer", addr, local) == 6
    assert client.recvfrom(100) == (b"answer", ("127.0.0.5", server.getsockname()[1]))
    # Without it the kernel picks the source by route: 127.0.0.1, not the address asked.
    send_from(server, b"plain", addr, None)
    assert client.recvfrom(100) == (b"plain", ("127.0.0.1", server.getsockname()[1]))


def test_no_packet_info_no_reply_address():
    assert local_address([]) is None
    assert local_address([(SOL_IP, IP_PKTINFO, b"\0" * 8)]) is None  # too short
    assert local_address([(socket.SOL_SOCKET, 29, b"\0" * 16)]) is None


def test_the_error_queue_gives_origin_type_code_offender_and_the_datagram():
    # A datagram to a closed loopback port: the kernel answers port unreachable (ICMP 3/3),
    # which IP_RECVERR puts on the sender's error queue.
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    closed = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        configure(sender, 4)
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        closed.close()
        assert read_error_queue(sender) == []
        sender.sendto(b"lost", ("127.0.0.1", port))
        select.select([sender], [], [], 5)  # a pending error makes the socket readable
        found = read_error_queue(sender)
        assert found == [(ORIGIN_ICMP, 3, 3, 0, "127.0.0.1", b"lost")]
        assert not is_ptb(*found[0][:3])
        assert read_error_queue(sender) == []  # drained
    finally:
        sender.close()
