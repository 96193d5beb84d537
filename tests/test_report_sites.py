"""jumbo.report.sites: the site-pair cells, the traffic-weighted share, the matrix and the
sites ranked by what fixing them would unlock, on a four-path mesh worked out by hand:

    a1 (A) -> b1 (B)   capable, 9000
    b1 (B) -> a1 (A)   1500, failing outbound
    a1 (A) -> c1 (C)   capable, 9000
    c1 (C) -> b1 (B)   black hole, failing outbound, no MTU

a1 is proven jumbo-ready with B and C, b1 with A only, c1 with A only."""

import pytest

from jumbo.report import sites
from jumbo.report.errors import ReportError
from jumbo.report.path_record import PathRecord

START = "2026-11-28T10:00:00Z"


def _path(src, dst, ssite, dsite, mtu, capable, failing=(), blackhole=False, pmtud="ok",
          succeeded=True):
    return PathRecord(src, dst, 4, ssite, dsite, START, mtu, mtu, True, 9000, pmtud, False,
                      blackhole, False, capable, "jumbo" if capable else "standard", failing,
                      succeeded, None)


PATHS = [
    _path("a1", "b1", "A", "B", 9000, True),
    _path("b1", "a1", "B", "A", 1500, False, failing=("out",)),
    _path("a1", "c1", "A", "C", 9000, True),
    _path("c1", "b1", "C", "B", None, False, failing=("out",), blackhole=True,
          pmtud="blackhole", succeeded=False),
]
HOST_MTU = {"a1": (START, 9000, "A"), "b1": (START, 1500, "B"), "c1": (START, None, "C")}
VOLUMES = [("A", "B", 100.0), ("B", "A", 50.0), ("A", "C", 10.0), ("B", "C", 40.0)]


def test_cells_count_each_site_pair():
    cells = sites.cells(PATHS)
    assert cells == {
        ("A", "B"): {"paths": 1, "capable": 1, "min_mtu": 9000, "max_mtu": 9000, "blackholes": 0},
        ("B", "A"): {"paths": 1, "capable": 0, "min_mtu": 1500, "max_mtu": 1500, "blackholes": 0},
        ("A", "C"): {"paths": 1, "capable": 1, "min_mtu": 9000, "max_mtu": 9000, "blackholes": 0},
        ("C", "B"): {"paths": 1, "capable": 0, "min_mtu": None, "max_mtu": None, "blackholes": 1}}
    assert sites.names(cells) == ["A", "B", "C"]


def test_a_cells_mtus_are_its_smallest_and_largest_measured():
    cells = sites.cells(PATHS + [_path("a2", "b1", "A", "B", 4000, False),
                                 _path("a3", "b1", "A", "B", 2000, False, succeeded=False)])
    assert cells[("A", "B")] == {"paths": 3, "capable": 1, "min_mtu": 4000, "max_mtu": 9000,
                                 "blackholes": 0}


def test_traffic_weighs_each_pair_by_its_capable_share():
    cells = sites.cells(PATHS)
    got = sites.traffic(VOLUMES, cells, sites.names(cells))
    assert got == {"bytes": 200.0, "measured_bytes": 160.0, "capable_bytes": 110.0,
                   "used": 110.0 / 160.0, "unmeasured": [["B", "C", 40.0]]}
    assert sites.traffic([], cells, ["A"])["used"] is None
    # Two paths of (A, B), one capable: half its bytes count as carried by jumbo paths.
    cells = sites.cells(PATHS + [_path("a2", "b1", "A", "B", 1500, False)])
    assert sites.traffic(VOLUMES, cells, sites.names(cells))["capable_bytes"] == 60.0


def test_a_volume_matrix_naming_an_unknown_site_is_refused():
    cells = sites.cells(PATHS)
    with pytest.raises(ReportError) as caught:
        sites.traffic([("A", "Z", 1.0), ("Y", "B", 1.0)], cells, sites.names(cells))
    assert str(caught.value) == ("volume matrix names sites the store does not know: Y, Z "
                                 "(known: A, B, C)")
    assert caught.value.status == 2


def test_the_matrix_lists_cells_in_order_with_their_counters():
    cells = sites.cells(PATHS)
    matrix = sites.matrix(cells, sites.names(cells))
    assert matrix["sites"] == ["A", "B", "C"]
    assert [(c["source_site"], c["dest_site"]) for c in matrix["cells"]] == [
        ("A", "B"), ("A", "C"), ("B", "A"), ("C", "B")]
    assert list(matrix["cells"][0]) == ["source_site", "dest_site", "blackholes", "capable",
                                        "max_mtu", "min_mtu", "paths"]


def _by_site(entries):
    return {e["site"]: e for e in entries}


def test_sites_ranked_by_the_paths_fixing_them_unlocks():
    entries = sites.ranked(PATHS, HOST_MTU, ["A", "B", "C"], 9000, None, 4)
    assert [(e["rank"], e["site"], e["unlocked_paths"]) for e in entries] == [
        (1, "B", 2), (2, "C", 1), (3, "A", 0)]
    a, b, c = (_by_site(entries)[s] for s in "ABC")
    assert (a["hosts"], a["host_mtu"], a["configured"]) == (1, [9000], True)
    assert (b["host_mtu"], b["configured"], c["host_mtu"], c["configured"]) == (
        [1500], False, [], False)
    assert (a["out_paths"], a["out_capable"], a["in_paths"], a["in_capable"]) == (2, 2, 1, 0)
    assert a["capable"] == pytest.approx(2 / 3.0) and a["fails"] == "inbound"
    assert (b["out_fail"], b["in_fail"], b["fails"]) == (1, 1, "both")
    assert (c["fails"], c["blackholes"], b["blackholes"], a["blackholes"]) == ("outbound", 1, 1, 0)
    assert (a["pmtud"], b["pmtud"], c["pmtud"]) == ("ok", "black holes (1)", "black holes (1)")
    assert c["pmtud_counts"] == {"blackhole": 1}
    assert (b["unlocked"], c["unlocked"]) == (0.5, 0.25)
    assert all(e["unlocked_traffic"] is None for e in entries)


def test_with_volumes_sites_are_ranked_by_the_traffic_they_unlock():
    cells = sites.cells(PATHS)
    traffic = sites.traffic(VOLUMES, cells, sites.names(cells))
    entries = sites.ranked(PATHS, HOST_MTU, ["A", "B", "C"], 9000, traffic, 4,
                           volumes=VOLUMES, pairs=cells)
    found = _by_site(entries)
    # b1 -> a1 carries (B, A)'s 50 bytes; c1 -> b1's pair has no volume.
    assert found["B"]["unlocked_traffic"] == 50.0 / 160.0
    assert found["C"]["unlocked_traffic"] == 0.0 and found["A"]["unlocked_traffic"] == 0.0
    assert [e["site"] for e in entries] == ["B", "C", "A"]


def test_a_path_within_one_site_unlocks_nothing_and_counts_its_black_hole_once():
    paths = [_path("a1", "a2", "A", "A", None, False, failing=("out",), blackhole=True,
                   pmtud="blackhole", succeeded=False), _path("a1", "b1", "A", "B", 9000, True)]
    entries = _by_site(sites.ranked(paths, {}, ["A", "B"], 9000, None, 2))
    assert entries["A"]["blackholes"] == 1 and entries["A"]["unlocked_paths"] == 0
    assert entries["A"]["hosts"] == 2 and entries["B"]["pmtud"] == "unknown"


def test_a_host_proven_only_within_its_own_site_unlocks_nothing_elsewhere():
    """b1 -> b2 is capable inside B: b1 is not thereby proven for C's sake."""
    paths = [_path("b1", "b2", "B", "B", 9000, True), _path("b1", "c1", "B", "C", 1500, False)]
    entries = _by_site(sites.ranked(paths, {}, ["B", "C"], 9000, None, 2))
    assert entries["C"]["unlocked_paths"] == 0 and entries["B"]["unlocked_paths"] == 0
