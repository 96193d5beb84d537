"""jumbo.probe.outcome: the forward answer made once from the flows' searches. Each flow is
the engine's own (jumbo.probe.rounds.Flow) over a real UDP transport (its source ports are
the kernel's, read back from the sockets) and a real SizeSearch driven to a known end: a
1500 path that sends PTBs confirms 1500 (`ok`), a 9000 path confirms 9000 (`not-needed`),
and a path that stays silent above 8000 leaves only a lower bound (no path MTU, `unknown`)."""

import pytest

from jumbo.core.result import Blackhole, Flow, Hop, Ptb
from jumbo.probe.outcome import SCHEMA, PathResult, distinct_ptbs, flow_entries
from jumbo.probe.rounds import Flow as SearchFlow
from jumbo.probe.search import SizeSearch
from jumbo.probe.transport import UdpTransport


def searched(path_mtu, ptb=True, local_max=9000):
    """A search run against a path of `path_mtu`: sizes up to it arrive, larger ones draw a
    PTB naming it (or, without PTBs, are never heard of again and never reported)."""
    search = SizeSearch(local_max, 68)
    for _ in range(80):
        sizes = search.next_round()
        if not sizes:
            break
        for size in sizes:
            if size <= path_mtu:
                search.arrived(size)
            elif ptb:
                search.failed_sign(size, ptb=True, ptb_mtu=path_mtu)
    return search


@pytest.fixture
def transport():
    udp = UdpTransport("127.0.0.1", 4, flows=3)
    yield udp
    udp.close()


def test_the_path_mtu_is_the_smallest_confirmed_flow(transport):
    flows = [SearchFlow(transport, 0, searched(9000)), SearchFlow(transport, 1, searched(1500)),
             SearchFlow(transport, 2, searched(8000, ptb=False))]
    entries, path_mtu = flow_entries(flows)
    assert path_mtu == 1500
    ports = [s.getsockname()[1] for s in transport.socks]
    assert len(set(ports)) == 3
    assert entries == [
        Flow(flow=0, path_mtu=9000, pmtud="not-needed", source_port=ports[0], flow_label=None),
        Flow(flow=1, path_mtu=1500, pmtud="ok", source_port=ports[1], flow_label=None),
        Flow(flow=2, path_mtu=None, pmtud="unknown", source_port=ports[2], flow_label=None)]


def test_a_lower_bound_is_never_a_path_mtu(transport):
    unconfirmed = searched(8000, ptb=False)
    assert unconfirmed.result() is not None and unconfirmed.result() <= 8000  # proven floor
    entries, path_mtu = flow_entries([SearchFlow(transport, 0, unconfirmed)])
    assert path_mtu is None
    assert entries[0].path_mtu is None and entries[0].pmtud == "unknown"
    assert flow_entries([]) == ([], None)


def test_each_ptb_is_kept_once_in_the_order_heard():
    heard = [{"from": "198.18.1.1", "mtu": 1500, "useful": True},
             {"from": "198.18.2.1", "mtu": 8000, "useful": False},
             {"from": "198.18.1.1", "mtu": 1500, "useful": True},
             {"from": "198.18.1.1", "mtu": 1400, "useful": True}]
    assert distinct_ptbs(heard) == [Ptb(sender="198.18.1.1", mtu=1500, useful=True),
                                    Ptb(sender="198.18.2.1", mtu=8000, useful=False),
                                    Ptb(sender="198.18.1.1", mtu=1400, useful=True)]
    assert distinct_ptbs([]) == []


def result(**fields):
    base = dict(path_mtu=9000, local_mtu=9000, target_mtu=9000, pmtud="not-needed",
                method="udp", ip_version=4, dest_ip="198.18.0.2", source_ip="198.18.0.1",
                hops=[Hop(ttl=1, ip="198.18.0.2", mtu=9000)], flows=[], flows_not_measured=0,
                probes=12, elapsed=1.5, rtt=0.001, ptb=[], diags=[])
    base.update(fields)
    return PathResult(**base)


@pytest.mark.parametrize("path_mtu,target,pmtud,jumbo", [
    (9000, 9000, "not-needed", True), (8999, 9000, "ok", False), (1500, None, "ok", False),
    (9000, None, "ok", True), (9000, 9000, "unknown", None), (None, 9000, "unknown", None),
    (8000, 8000, "ok", True), (1500, 9000, "unknown", False)])
def test_jumbo_is_the_suites_one_rule(path_mtu, target, pmtud, jumbo):
    # Below the target is False whatever PMTUD says; at or above it True, unless flows were
    # left unconfirmed (undecided is never jumbo); no path MTU is undecided. Target 9000 when
    # the spec named none.
    answer = result(path_mtu=path_mtu, target_mtu=target, pmtud=pmtud)
    assert answer.jumbo is jumbo
    assert answer.as_json()["jumbo"] is jumbo


def test_the_json_carries_every_forward_field_under_its_result_name():
    hole = Blackhole(ttl=2, ip="198.18.1.1", size=8000)
    answer = result(path_mtu=1500, pmtud="blackhole", blackhole=hole,
                    flows=[Flow(flow=0, path_mtu=1500, pmtud="blackhole", source_port=40000,
                                flow_label=None)],
                    ptb=[Ptb(sender="198.18.1.1", mtu=1500, useful=True)],
                    diags=["retried once", "rtt high"])
    document = answer.as_json()
    assert document["schema"] == SCHEMA == 1
    assert document["succeeded"] is True and document["error"] is None
    assert document["diags"] == "retried once; rtt high"
    assert document["path-mtu"] == 1500 and document["jumbo"] is False
    assert document["blackhole"] == {"ttl": 2, "ip": "198.18.1.1", "size": 8000}
    assert document["flows"] == [{"flow": 0, "source-port": 40000, "flow-label": None,
                                  "path-mtu": 1500, "pmtud": "blackhole"}]
    assert document["ptb"] == [{"from": "198.18.1.1", "mtu": 1500, "useful": True}]
    assert document["hops"] == [{"ttl": 1, "ip": "198.18.0.2", "mtu": 9000}]
    assert document["flows-not-measured"] == 0 and document["ip-version"] == 4
    assert result(diags=[]).as_json()["diags"] is None
    assert result(blackhole=None).as_json()["blackhole"] is None


def test_read_back_from_its_json_the_answer_is_the_same():
    answer = result(path_mtu=1500, pmtud="blackhole",
                    blackhole=Blackhole(ttl=2, ip="198.18.1.1", size=8000),
                    ptb=[Ptb(sender="198.18.1.1", mtu=1500, useful=True)], diags=["one note"])
    again = PathResult.from_json(answer.as_json())
    assert again.as_json() == answer.as_json()
    assert isinstance(again.blackhole, Blackhole) and again.blackhole.size == 8000
    assert isinstance(again.hops[0], Hop) and again.hops[0].mtu == 9000
    assert again.diags == ["one note"]


def test_a_partial_document_reads_with_absent_fields_as_none():
    again = PathResult.from_json({"path-mtu": 9000, "pmtud": "not-needed"})
    assert again.path_mtu == 9000 and again.jumbo is True  # target defaults to 9000
    assert again.hops is None and again.blackhole is None and again.diags == []


def test_an_unknown_field_is_refused():
    with pytest.raises(TypeError, match="no field colour"):
        PathResult(path_mtu=9000, colour="blue")
