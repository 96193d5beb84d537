"""The reverse-path reflector's pieces without a lab: message codec, token, rate limits, and a
whole search over loopback (real sockets, no root needed)."""

import socket
import time

import pytest

from jumbo.core.spec import RunSpec
from jumbo.tool import reflector, reverse
from jumbo.probe import wire
from loopback_reflector import free_udp_port, serving


def test_messages_are_authenticated_in_both_directions():
    key = bytes.fromhex(wire.new_token())
    message = reflector.encode(key, b"Q", reflector.PROBE, 7, b"n" * 8, size=1500, total=1472)
    assert len(message) == 1472
    assert reflector.decode(key, b"Q", message)[:4] == (reflector.PROBE, 7, b"n" * 8, 1500)
    # A reply cannot be replayed as a request, another key fails, any changed bit fails.
    assert reflector.decode(key, b"A", message) is None
    assert reflector.decode(bytes.fromhex(wire.new_token()), b"Q", message) is None
    tampered = bytearray(message)
    tampered[10] ^= 1
    assert reflector.decode(key, b"Q", bytes(tampered)) is None
    assert reflector.decode(key, b"Q", message[:20]) is None


@pytest.mark.parametrize("token", [None, 5, "", "abc", "zz" * 16])
def test_bad_tokens_are_refused(token):
    with pytest.raises(ValueError):
        reflector.token_key(token)


def test_tokens_are_random_128_bit_hex():
    tokens = {wire.new_token() for _ in range(50)}
    assert len(tokens) == 50
    assert all(len(t) == 32 and int(t, 16) >= 0 for t in tokens)


def test_search_over_loopback_and_the_dest_report():
    token = wire.new_token()
    with serving(token) as (server, port, thread):
        answer = reverse.measure_reverse("127.0.0.1", port, token, 4, max_size=9000,
                                           timeout=0.5)
        # STATUS told the reflector the source was done: it stops long before its deadline.
        thread.join(9)
        stopped = not thread.is_alive()
    assert stopped
    assert answer.error is None
    assert answer.path_mtu == 9000  # the largest size asked for came back
    assert answer.pmtud == "not-needed"
    report = server.report()
    assert report["stats"]["rejected"] == 0 and report["largest-reply"] == 9000


def test_a_wrong_token_gets_no_answer_and_the_search_says_why():
    with serving(wire.new_token(), seconds=6) as (server, port, _thread):
        answer = reverse.measure_reverse("127.0.0.1", port, wire.new_token(), 4,
                                           timeout=0.5, deadline=time.monotonic() + 5)
    assert answer.path_mtu is None
    assert "did not answer" in answer.error
    assert server.report()["stats"]["answered"] == 0
    assert server.report()["stats"]["rejected"] >= 1


def test_a_busy_port_is_a_clear_error():
    holder = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    holder.bind(("0.0.0.0", 0))
    try:
        with pytest.raises(reflector.ReflectorError) as caught:
            reflector.Reflector(holder.getsockname()[1], wire.new_token(), (4,)).open()
    finally:
        holder.close()
    assert "busy" in str(caught.value)


def test_the_budget_covers_the_slowest_search():
    """BUDGET_ROUNDS rounds at a 300 ms round trip (each waits 1.5 round trips after its last
    request), the greeting and the STATUS exchange; a `timeout` shorter than that wait caps
    every round, and the bound with it."""
    budget = reverse.max_duration(RunSpec({"timeout": "PT1S"}))
    wait = reverse.round_wait(1.0, reverse.WORST_RTT)
    assert wait >= reverse.ROUND_WAIT_RTTS * 0.3
    assert budget >= reverse.HELLO_BUDGET + reverse.BUDGET_ROUNDS * wait + 2 * wait
    assert budget <= 6.0
    assert reverse.max_duration(RunSpec({"timeout": "PT0.2S"})) < budget
    assert reverse.bound(1.0) == budget


def test_only_the_runs_source_address_is_answered():
    """Issue 32 row 11, over loopback: a reflector told its run's source is 127.0.0.2
    answers the token's holder there, and never the same signed requests from 127.0.0.1
    (another host, or a spoofed third party's address): counted `foreign`."""
    from jumbo.tool import reflector_port
    token = wire.new_token()
    with serving(token, addresses={4: "127.0.0.1"}, source="127.0.0.2",
                 secret=b"ab" * 16) as (server, port, _thread):
        stranger = reflector_port.find("127.0.0.1", [port], token, 4, time.monotonic() + 0.6,
                                       source="127.0.0.1")
        source = reflector_port.find("127.0.0.1", [port], token, 4, time.monotonic() + 2,
                                     source="127.0.0.2")
    assert stranger is None
    assert source is not None and source.port == port and source.secret == "ab" * 16
    report = server.report()
    assert report["stats"]["foreign"] >= 1 and report["peers"] == ["127.0.0.2"], report


def test_without_a_source_address_the_first_signed_requester_is_the_only_one(monkeypatch):
    from jumbo.tool import reflector_port
    token = wire.new_token()
    with serving(token) as (server, port, _thread):
        first = reflector_port.find("127.0.0.1", [port], token, 4, time.monotonic() + 2,
                                    source="127.0.0.3")
        second = reflector_port.find("127.0.0.1", [port], token, 4, time.monotonic() + 0.6,
                                     source="127.0.0.4")
    assert first is not None and second is None
    assert server.report()["source"] == "127.0.0.3"


def test_what_one_run_can_make_the_reflector_send_is_bounded(monkeypatch):
    """Whatever a token holder asks, the reflector sends at most RUN_BYTES for the run (here
    lowered to 20 kB so that the test asks for more): the rest is counted `over-budget`."""
    monkeypatch.setattr(reflector, "RUN_BYTES", 20000)
    token = wire.new_token()
    with serving(token) as (server, port, _thread):
        answer = reverse.measure_reverse("127.0.0.1", port, token, 4, max_size=9000,
                                         timeout=0.3, deadline=time.monotonic() + 5)
    report = server.report()
    assert report["sent-bytes"] <= 20000, report
    assert report["stats"]["over-budget"] > 0, report
    assert answer.probes * 1000 > 20000  # it asked for more than it got


def test_the_reflector_listens_on_the_tests_address_only():
    """Issue 32 row 8: bound to the test's address (here 127.0.0.1), the reflector is not
    there on another address of the node (127.0.0.2), and another program may hold the same
    port on that other address meanwhile (it could not, bound to every address)."""
    from jumbo.tool import reflector_port
    token = wire.new_token()
    port = free_udp_port()
    other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    other.bind(("127.0.0.2", port))  # another run's socket on another address, same port
    try:
        with serving(token, port=port, addresses={4: "127.0.0.1"}) as (server, port, _thread):
            elsewhere = reflector_port.find("127.0.0.2", [port], token, 4,
                                            time.monotonic() + 0.6)
            here = reflector_port.find("127.0.0.1", [port], token, 4, time.monotonic() + 2)
    finally:
        other.close()
    assert elsewhere is None and here is not None and here.port == port
    assert server.report()["busy-ports"] == []


def test_every_refusal_is_counted_where_it_happens(monkeypatch):
    """Signed and unsigned requests over loopback, one of each refusal, in the order the
    reflector checks them: each counted once under its own name, and only the two the
    packet budget (lowered to a burst of 2) allows are answered."""
    monkeypatch.setattr(reflector, "RATE_PACKETS", 0.001)
    monkeypatch.setattr(reflector, "BURST_PACKETS", 2.0)
    token = wire.new_token()
    key = bytes.fromhex(token)
    client = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    client.bind(("127.0.0.1", 0))
    client.settimeout(0.5)
    stranger = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    stranger.bind(("127.0.0.2", 0))
    overhead = reflector.UDP_HEADER + 20

    def probe(seq, size=100, signed_with=key, kind=reflector.PROBE):
        # A 100-byte request (IP packet) asking for a reply of `size`.
        return reflector.encode(signed_with, b"Q", kind, seq, b"n" * 8, size=size,
                                total=100 - overhead)

    first = probe(1)
    requests = [first, first,                        # answered, then a replay
                probe(2, size=9000),                 # a reply larger than its request
                probe(3, kind=0x7f),                 # signed, but no such request
                probe(4, signed_with=bytes(16)),     # not signed with the run's token
                probe(5), probe(6)]                  # answered, then over the burst
    answers = 0
    try:
        with serving(token, addresses={4: "127.0.0.1"}) as (server, port, _thread):
            for request in requests:
                client.sendto(request, ("127.0.0.1", port))
            stranger.sendto(probe(7), ("127.0.0.1", port))
            while True:
                try:
                    data = client.recv(65535)
                except socket.timeout:
                    break
                answers += reflector.decode(key, b"A", data) is not None
    finally:
        client.close()
        stranger.close()
    stats = server.report()["stats"]
    assert answers == 2, stats
    assert (stats["requests"], stats["answered"], stats["replayed"], stats["too-large"],
            stats["rejected"], stats["rate-limited"], stats["foreign"]) == \
        (8, 2, 1, 1, 2, 1, 1), stats
