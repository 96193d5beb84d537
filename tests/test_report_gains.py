"""jumbo.report.gains: measured jumbo gains and the gains expected from the Mathis ceilings
(rate <= MSS / RTT x sqrt(3/2) / sqrt(p)) where only latency and loss were measured; the
figures are worked out by hand (IPv4 MSS 1460 / 8960, IPv6 1440 / 8940)."""

import math

import pytest

from jumbo.report import gains

C = math.sqrt(1.5)


def test_the_mathis_ceiling():
    assert gains.mathis(1460, 0.1, 1e-4) == pytest.approx(1460 * 8 / 0.1 * C / 0.01)
    assert gains.mathis(1460, 0.1, 1e-4) == pytest.approx(14305020, rel=1e-6)
    for rtt, loss in ((0.1, 0), (0.1, None), (0, 1e-4), (None, 1e-4), (-1, 1e-4), (0.1, -1)):
        assert gains.mathis(1460, rtt, loss) is None


def test_the_histogram_bins_from_each_edge_with_an_open_last_bin():
    counts = gains.histogram([0.5, 1.0, 1.09, 1.1, 2.5, 7.0, 100.0])
    assert [(b["from"], b["to"], b["count"]) for b in counts] == [
        (1.0, 1.1, 3), (1.1, 1.25, 1), (1.25, 1.5, 0), (1.5, 2.0, 0), (2.0, 3.0, 1),
        (3.0, 4.0, 0), (4.0, 5.0, 0), (5.0, 6.0, 0), (6.0, 7.0, 0), (7.0, None, 2)]
    assert sum(b["count"] for b in gains.histogram([])) == 0


class _Path(object):
    def __init__(self, source, dest, ip_version=4, capable=False, ips=(None, None)):
        self.source, self.dest, self.ip_version, self.capable = source, dest, ip_version, capable
        self.source_ip, self.dest_ip = ips


def test_measured_gains_are_sorted_summarised_and_limited():
    measured = [{"source": "b", "dest": "a", "gain": 3.0}, {"source": "a", "dest": "b", "gain": 1.0},
                {"source": "a", "dest": "c", "gain": 2.0}]
    found, expected = gains.gain_tables(measured, [], [], 9000, 10e9, 2)
    assert found["paths"] == 3
    assert [(g["source"], g["dest"]) for g in found["items"]] == [("a", "b"), ("a", "c")]
    assert found["summary"] == {"count": 3, "min": 1.0, "p25": 1.0, "median": 2.0, "p75": 3.0,
                                "max": 3.0, "mean": 2.0}
    assert expected == {"paths": 0, "link_speed": 10e9, "summary": None,
                        "histogram": gains.histogram([]), "items": []}


def test_expected_gain_is_the_ratio_of_the_ceilings_under_the_link_speed():
    latency = [("a", "b", None, None, 0.1, 1e-4, 10),           # both ceilings below 10 Gb/s
               ("a", "c", None, None, 0.1, 0.0, 10),            # no loss: both at the link
               (None, None, "fd00::1", "fd00::4", 0.1, 1e-4, 10),  # found by address, IPv6
               ("a", "e", None, None, 0.0001, 1e-6, 10),        # standard above the link too
               ("a", "f", None, None, None, 1e-4, 10),          # no RTT: not used
               ("a", "m", None, None, 0.1, 1e-4, 10)]           # measured: not expected
    paths = [_Path("a", "b", capable=False), _Path("a", "c", capable=True),
             _Path("x", "y", 6, ips=("fd00::1", "fd00::4")), _Path("a", "e"), _Path("a", "f"),
             _Path("a", "m"), _Path("a", "z")]
    found, expected = gains.gain_tables([{"source": "a", "dest": "m", "gain": 1.2}], latency,
                                        paths, 9000, 10e9, 10)
    by_path = {(i["source"], i["dest"]): i for i in expected["items"]}
    assert set(by_path) == {("a", "b"), ("a", "c"), ("x", "y"), ("a", "e")}
    ab = by_path[("a", "b")]
    assert ab["expected_gain"] == pytest.approx(8960 / 1460.0)
    assert ab["mathis_standard"] == pytest.approx(1460 * 8 / 0.1 * C / 0.01)
    assert ab["mathis_jumbo"] == pytest.approx(8960 * 8 / 0.1 * C / 0.01)
    assert (ab["rtt"], ab["loss"], ab["ip_version"], ab["capable"]) == (0.1, 1e-4, 4, False)
    assert by_path[("x", "y")]["expected_gain"] == pytest.approx(8940 / 1440.0)
    assert by_path[("a", "c")]["expected_gain"] == 1.0
    assert by_path[("a", "c")]["mathis_standard"] is None
    assert by_path[("a", "e")]["expected_gain"] == 1.0
    # Largest expected gain first: IPv6's 6.21 before IPv4's 6.14, then the 1.0s by name.
    assert [(i["source"], i["dest"]) for i in expected["items"]] == [
        ("x", "y"), ("a", "b"), ("a", "c"), ("a", "e")]
    assert expected["paths"] == 4 and expected["summary"]["count"] == 4
    assert found["paths"] == 1


def test_a_smaller_target_lowers_the_jumbo_mss():
    paths = [_Path("a", "b")]
    _, expected = gains.gain_tables([], [("a", "b", None, None, 0.1, 1e-4, 1)], paths, 4000,
                                    10e9, 10)
    assert expected["items"][0]["expected_gain"] == pytest.approx(3960 / 1460.0)
