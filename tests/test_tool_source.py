"""jumbo.tool.source: participant 0's phases. What runs here without sending anything beyond
this machine's loopback: finding the dest's reflector among its candidate ports (a real
jumbo.tool.reflector on 127.0.0.1, or closed ports), what a run without the dest's data or
ports says, and the legs' phase, which never raises (its failure is a Throughput saying why).
The forward probe itself is jumbo.probe's (its tests and the namespace lab)."""

import datetime
import socket
import threading
import time

import pytest

from jumbo.core.result import Throughput
from jumbo.probe.wire import new_token
from jumbo.tool import reflector, runner, source
from jumbo.tool.slot import PROTOCOL, RunError

SECRET = "ab" * 16


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def a_run(peer, test_type="pmtu", spec=None):
    start = datetime.datetime.now(datetime.timezone.utc).isoformat()
    data = [{}, peer] if peer is not None else [{}]
    return runner.Run({"test": {"type": test_type, "spec": spec or {"dest": "127.0.0.1",
                                                                     "reverse": True}},
                       "participant": 0, "schedule": {"start": start, "duration": "PT60S"},
                       "participant-data": data})


@pytest.fixture
def served():
    token, port = new_token(), free_udp_port()
    server = reflector.Reflector([port], token, (4,), secret=SECRET.encode()).open()
    thread = threading.Thread(target=server.serve, args=(time.monotonic() + 20,))
    thread.start()
    yield token, port
    server.done.set()
    thread.join(25)
    server.close()


def test_the_reflector_is_found_on_the_candidate_that_answers(served):
    token, port = served
    closed = free_udp_port()
    run = a_run({"protocol": PROTOCOL, "reflector-ports": [closed, port], "_token": token})
    peer = source.located_peer(run, time.monotonic() + 5)
    assert peer["reflector-port"] == port
    assert peer["secret"] == SECRET
    assert "reflector-error" not in peer
    # Once found, kept for the run: the next phase does not greet again.
    assert source.located_peer(run, time.monotonic() + 5) is peer


def test_no_answer_on_any_candidate_is_said_with_the_ports_tried():
    first, second = sorted((free_udp_port(), free_udp_port()))
    run = a_run({"protocol": PROTOCOL, "reflector-ports": [first, second],
                 "_token": new_token(), "reflector-port": 9})
    peer = source.located_peer(run, time.monotonic() + 0.5)
    assert "reflector-port" not in peer  # what the dest's data claimed is not believed
    assert peer["reflector-error"] == (
        "the dest participant's reflector did not answer on any of its 2 candidate ports at "
        "127.0.0.1 (dest not running the tool, UDP %d-%d filtered, or this node is not the "
        "source address it expects)" % (first, second))


@pytest.mark.parametrize("ports", [[], [0], [70000], [True], ["5001"], [5001, 5001], None])
def test_bad_candidate_ports_are_not_greeted(ports):
    run = a_run({"protocol": PROTOCOL, "reflector-ports": ports, "_token": new_token()})
    peer = source.located_peer(run, time.monotonic() + 5)
    assert "did not answer on any of its 0 candidate ports" in peer["reflector-error"]
    assert "UDP ports filtered" in peer["reflector-error"]


def test_without_the_dests_data_or_with_another_protocol_it_is_a_run_error():
    with pytest.raises(RunError, match="no participant data from the dest participant"):
        source.located_peer(a_run(None), time.monotonic() + 1)
    with pytest.raises(RunError, match="speaks jumbocheck protocol 1, this node %d" % PROTOCOL):
        source.located_peer(a_run({"protocol": 1}), time.monotonic() + 1)


def test_legs_without_the_dests_iperf3_port_fail_and_say_why():
    run = a_run({"protocol": PROTOCOL}, "jumbo-throughput", {"dest": "127.0.0.1"})
    for peer in ({}, {"iperf3-port": "5201"}, {"iperf3-port": None}):
        legs = source.legs_phase(run, peer, "127.0.0.1", 4, None)
        assert isinstance(legs, Throughput)
        assert legs.as_json() == {"runs": [], "verdict": "failed", "skipped": None,
                                  "error": "participant data of the dest lacks the iperf3 port"}


def test_the_legs_phase_never_raises():
    class Broken(object):
        data = []
        end = 0.0

        @property
        def full(self):
            raise KeyError("spec")

    legs = source.legs_phase(Broken(), {"iperf3-port": 5201}, "127.0.0.1", 4, None)
    assert legs.verdict == "failed"
    assert legs.error == "throughput phase failed: KeyError: 'spec'"


def test_the_greeting_goes_on_through_the_unused_forward_budget():
    """A forward phase that ended early leaves its budget to the greeting (a dest that started
    late is still met); one that used its budget leaves HELLO_WINDOW; the window never reaches
    into the time the later phases were given, nor past the slot."""
    run = a_run({})                  # pmtu --reverse: start 2 s, forward 7.56 s, reverse 5.3 s
    b = run.budget
    forward_end = run.start + b["start"] + b["forward"]
    assert source.greet_window(run, run.start + 3.0) == pytest.approx(forward_end - run.start - 3.0)
    assert source.greet_window(run, forward_end + 1.0) == source.reverse_search.HELLO_WINDOW
    # A slot cut short (a clock that jumped): only what is left of it before the teardown.
    assert source.greet_window(run, run.end - source.TEARDOWN - 1.0) == pytest.approx(1.0)
    assert source.greet_window(run, run.end) == 0.0
    # The legs' time is never taken: a jumbo-throughput slot exactly its budget.
    pair = a_run({}, test_type="jumbo-throughput", spec={"dest": "127.0.0.1"})
    pair.end = pair.start + sum(pair.budget.values())
    later = pair.budget["throughput"] + pair.budget["end"]
    at = pair.start + pair.budget["start"] + 1.0
    assert at + source.greet_window(pair, at) == pytest.approx(pair.end - later)


def test_a_dest_whose_reflector_starts_late_is_found_within_the_window():
    """The reflector opens 4 s after the greeting began, later than HELLO_WINDOW (2.5 s): found,
    because the forward phase's budget was not used up (on the code before: not found)."""
    token, port = new_token(), free_udp_port()
    run = a_run({"protocol": PROTOCOL, "reflector-ports": [port], "_token": token})
    server = reflector.Reflector([port], token, (4,), secret=SECRET.encode())

    def late():
        time.sleep(4.0)
        server.open()
        server.serve(time.monotonic() + 10)

    thread = threading.Thread(target=late)
    thread.start()
    try:
        window = source.greet_window(run)
        assert window > 5.0
        peer = source.located_peer(run, time.monotonic() + window)
        assert peer.get("reflector-port") == port, peer
    finally:
        server.done.set()
        thread.join(20)
        server.close()
