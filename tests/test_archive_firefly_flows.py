"""The collector's memory (jumbo.archive.firefly_flows): bytes between ongoing fireflies at the
newer message's MSS, a short flow's bytes (its end's usage.sent) with no MSS, counters that
restart, the bounds on flows and site pairs, expiry."""

from jumbo.archive.firefly import Firefly
from jumbo.archive.firefly_flows import FlowTable, mss_class, JUMBO, STANDARD, UNKNOWN

SITES = {"198.18.0.1": "A", "198.18.1.2": "B", "fd00::1": "A", "fd00::2": "B"}


def ff(state, sport=40000, mss=None, sent=None, usage=None, version=4, protocol="tcp"):
    src, dst = ("198.18.0.1", "198.18.1.2") if version == 4 else ("fd00::1", "fd00::2")
    return Firefly(state, version, src, dst, sport, 1094, protocol, mss, None, sent, usage)


def table(**kw):
    return FlowTable(SITES.get, **kw)


def test_mss_classes_follow_the_family():
    assert mss_class(1460, 4) == STANDARD and mss_class(1461, 4) == JUMBO
    assert mss_class(1440, 6) == STANDARD and mss_class(1441, 6) == JUMBO
    assert mss_class(None, 4) == UNKNOWN and mss_class(0, 6) == UNKNOWN


def test_counter_differences_at_the_newest_mss():
    t = table()
    for m in (ff("start"), ff("ongoing", mss=8948, sent=1000), ff("ongoing", mss=8948, sent=5000),
              ff("ongoing", mss=1448, sent=5600), ff("end")):
        t.observe(m, 0.0)
    assert t.take() == {("A", "B", 4): [5000, 600, 0, 1]}
    assert not t.flows and t.take() == {}


def test_a_short_flow_counts_with_no_mss_and_a_long_ones_tail_at_its_mss():
    t = table()
    t.observe(ff("start", sport=1), 0.0)
    t.observe(ff("end", sport=1, usage=777), 0.1)
    t.observe(ff("ongoing", sport=2, mss=8928, sent=100, version=6), 0.0)
    t.observe(ff("end", sport=2, usage=150, version=6), 0.0)
    assert t.take() == {("A", "B", 4): [0, 0, 777, 1], ("A", "B", 6): [150, 0, 0, 1]}


def test_a_counter_that_went_down_is_a_new_socket_and_counts_whole():
    t = table()
    t.observe(ff("ongoing", mss=1448, sent=1000), 0.0)
    t.observe(ff("ongoing", mss=1448, sent=300), 1.0)
    assert t.take()[("A", "B", 4)][:3] == [0, 1300, 0]


def test_no_mss_in_an_ongoing_message_keeps_the_flows_last_one():
    t = table()
    t.observe(ff("ongoing", mss=8948, sent=10), 0.0)
    t.observe(ff("ongoing", mss=None, sent=30), 0.0)
    assert t.take()[("A", "B", 4)][:3] == [30, 0, 0]


def test_bounded_flows_refused_not_evicted_and_expired():
    t = table(max_flows=2, expiry=10.0)
    for port in (1, 2, 3):
        t.observe(ff("ongoing", sport=port, mss=8948, sent=100), 0.0)
    assert len(t.flows) == 2 and t.counts["flows_refused"] == 1
    assert t.take()[("A", "B", 4)] == [200, 0, 0, 2]
    t.observe(ff("ongoing", sport=1, mss=8948, sent=150), 5.0)
    assert t.expire(12.0) == 1                  # port 2, silent since 0.0
    t.observe(ff("ongoing", sport=3, mss=8948, sent=100), 12.0)
    assert t.take()[("A", "B", 4)] == [150, 0, 0, 1]


def test_bounded_cells_and_unmapped_addresses():
    t = FlowTable(lambda a: None if a.endswith("2") else "A", max_cells=1)
    t.observe(ff("ongoing", sport=1, mss=1448, sent=5), 0.0)
    t.observe(ff("ongoing", sport=2, mss=1428, sent=5, version=6), 0.0)
    assert t.take() == {("A", "", 4): [0, 5, 0, 1]}
    assert t.counts["cells_refused"] == 2


def test_udp_is_not_counted_and_restore_adds_back():
    t = table()
    t.observe(ff("ongoing", protocol="udp", mss=1448, sent=5), 0.0)
    assert t.take() == {} and t.counts["not_tcp"] == 1
    t.observe(ff("ongoing", mss=1448, sent=5), 0.0)
    taken = t.take()
    t.observe(ff("ongoing", mss=1448, sent=8), 0.0)
    t.restore(taken)
    assert t.take() == {("A", "B", 4): [0, 8, 0, 1]}
