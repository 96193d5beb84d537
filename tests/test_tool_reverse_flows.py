"""jumbo.tool.reverse_flows: each reverse flow's size search, the dest's refusals and each
flow's verdict from the dest's report. A flow's socket is a real ReflectorClient whose sent
requests and received answers are written in as the search would have seen them; the
silences a size needs are worked out from jumbo.probe.silence (3 on a clean path; with one
crossing size lost beside 5 arrivals: rate 2/8, ceil(log 1e-3 / log 0.25) = 5)."""

import struct

import pytest

from jumbo.core.result.pmtu import Reverse
from jumbo.probe.wire import ANSWER, LIMIT, PROBE, new_token, token_key
from jumbo.tool import reverse_flows
from jumbo.tool.reverse_client import ReflectorClient

FLOOR, CEILING = 1280, 9000


@pytest.fixture
def search():
    client = ReflectorClient("127.0.0.1", 9, token_key(new_token()), 4, None)
    yield reverse_flows.FlowSearch(0, client, [CEILING])
    client.close()


def _round(search, answered, silent=(), limits=()):
    """One round: `answered` sizes came back, `silent` did not, `limits` drew a LIMIT notice
    (size, interface MTU hint or None)."""
    search.seqs = []
    for size in list(answered) + list(silent) + [s for s, _hint in limits]:
        search.client.seq += 1
        seq = search.client.seq
        search.client.sent[seq] = (PROBE, size, 0.0)
        search.seqs.append(seq)
        if size in answered:
            search.client.replies[seq] = (PROBE | ANSWER, size, 0.01, b"")
        hint = dict(limits).get(size, False)
        if hint is not False:
            body = struct.pack("!H", hint) if hint is not None else b""
            search.client.replies[seq] = (LIMIT, size, 0.01, body)


def test_spread_gives_distinct_sizes_strictly_inside():
    sizes = reverse_flows.spread(1500, 8951, 23)
    assert len(sizes) == 23 and sizes == sorted(set(sizes))
    assert 1500 < sizes[0] and sizes[-1] < 8951
    assert reverse_flows.spread(10, 13, 23) == [11, 12]
    assert reverse_flows.spread(10, 11, 23) == []
    assert reverse_flows.spread(4000, 9000, 4) == [5000, 6000, 7000, 8000]


def test_a_silent_size_is_narrowed_then_tried_again_until_settled(search):
    _round(search, [1500, 4000], silent=[9000])
    search.update(set(), FLOOR, CEILING, 5)
    assert search.good == 4000 and search.silent == {9000: 1} and not search.done
    assert search.plan == [5000, 6000, 7000, 8000, 9000]  # spread + the unsettled size again


def test_the_boundary_is_found_after_three_silences_on_a_clean_path(search):
    _round(search, [8999], silent=[9000])
    search.update(set(), FLOOR, CEILING, 5)
    assert search.plan == [9000, 9000] and search.boundary is None  # adjacent: twice
    _round(search, [], silent=[9000, 9000])
    search.update(set(), FLOOR, CEILING, 5)
    assert (search.boundary, search.done, search.plan) == (9000, True, [])


def test_where_the_flow_lost_a_crossing_size_five_silences_are_needed(search):
    _round(search, [1300, 1400, 1500, 1600, 8999], silent=[1450, 9000, 9000, 9000])
    search.update(set(), FLOOR, CEILING, 5)
    assert search.silent == {1450: 1, 9000: 3} and search.good == 8999
    assert search.boundary is None and search.plan == [9000, 9000]
    _round(search, [], silent=[9000, 9000])
    search.update(set(), FLOOR, CEILING, 5)
    assert search.boundary == 9000


def test_a_size_the_dest_refuses_settles_at_once(search):
    _round(search, [8000], limits=[(8001, None)])
    refused = set()
    reverse_flows.refusals(search, refused, FLOOR)
    assert refused == {8001}
    search.update(refused, FLOOR, CEILING, 5)
    assert (search.boundary, search.done) == (8001, True)


def test_a_limit_notice_with_the_dests_mtu_refuses_everything_above_it(search):
    _round(search, [1500], limits=[(9000, 8000)])
    refused = set()
    reverse_flows.refusals(search, refused, FLOOR)
    assert refused == {9000, 8001}
    # A hint below the floor or not below the size asked says nothing more.
    _round(search, [], limits=[(9000, 1000), (4000, 4000)])
    refused = set()
    reverse_flows.refusals(search, refused, FLOOR)
    assert refused == {9000, 4000}


def test_the_largest_size_coming_back_ends_the_search(search):
    _round(search, [9000])
    search.update(set(), FLOOR, CEILING, 5)
    assert (search.good, search.done, search.plan, search.boundary) == (9000, True, [], None)


def test_nothing_silent_above_asks_the_ceiling(search):
    _round(search, [3000])
    search.update(set(), FLOOR, CEILING, 5)
    assert search.plan == [CEILING] and not search.done


def _verdict(search, refused=(), report=None):
    answer = Reverse.started("127.0.0.1:9")
    flow = reverse_flows.flow_verdict(search, set(refused), CEILING, report, answer)
    return flow, answer


def test_a_flow_with_no_answer_is_unknown(search):
    flow, answer = _verdict(search)
    assert (flow.path_mtu, flow.pmtud, answer.notes) == (None, "unknown", [])


def test_a_flow_without_a_boundary_is_not_needed_or_a_lower_bound(search):
    search.good = 9000
    flow, answer = _verdict(search)
    assert flow.pmtud == "not-needed"
    assert answer.notes == ["replies of the largest size tried (9000) came back"]
    search.good = 5000
    flow, answer = _verdict(search)
    assert (flow.path_mtu, flow.pmtud) == (5000, "unknown")
    assert answer.notes == ["reverse search stopped early (time budget): 5000 is a lower bound"]


def test_a_boundary_the_dest_refused_is_its_own_limit(search):
    search.good, search.boundary = 8000, 8001
    assert _verdict(search, refused={8001})[0].pmtud == "not-needed"


def test_without_the_dests_report_the_verdict_waits(search):
    search.good, search.boundary = 8000, 8001
    flow, answer = _verdict(search)
    assert flow.pmtud == "unknown" and answer.pending is True


def test_the_dests_report_decides_ok_or_black_hole(search):
    search.good, search.boundary = 8000, 8001
    nonce = search.client.nonce.hex()
    sent = {"boundary": {"%s:8001" % nonce: 3}}
    flow, answer = _verdict(search, report=dict(sent, ptb=[]))
    assert (flow.path_mtu, flow.pmtud, answer.notes) == (8000, "blackhole", [])
    ptb = {"useful": True, "mtu": 8000, "flows": []}
    assert _verdict(search, report=dict(sent, ptb=[ptb]))[0].pmtud == "ok"
    ptb = {"useful": True, "mtu": 1500, "flows": [nonce]}
    assert _verdict(search, report=dict(sent, ptb=[ptb]))[0].pmtud == "ok"
    flow, answer = _verdict(search, report=dict(sent, ptb=[{"useful": False, "mtu": 8000}]))
    assert flow.pmtud == "blackhole"
    assert answer.notes == ["the dest received too-big messages, none usable for flow 0"]
    # The requests for the boundary's size never reached the dest: no verdict on PMTUD.
    flow, answer = _verdict(search, report={"boundary": {}, "ptb": [ptb]})
    assert flow.pmtud == "unknown"
    assert answer.notes == ["requests for 8001-byte replies never reached the dest (lost on "
                            "the forward path): 8000 is a lower bound of the reverse path MTU"]
