"""jumbo.report.held: a path sighted with a partial black hole and not cleared since by enough
clean flows is reported as that hole whatever its latest run says. Needed flows are worked
out from jumbo.archive.evidence's rule (1 - share) ** F < 0.001: share 0.5 needs 10 clean
flows, share 0.25 needs 25."""

from jumbo.archive.evidence import Evidence, path_key
from jumbo.archive.query_base import LATEST_FIELDS, Latest
from jumbo.report import held
from jumbo.report.path_record import PathRecord

KEY = ("ps1.a", "ps1.b", 4)


def _row(**fields):
    values = dict.fromkeys(LATEST_FIELDS)
    values.update(source=KEY[0], dest=KEY[1], ip_version=KEY[2], succeeded=True, path_mtu=9000,
                  pmtud="ok", partial=False, start="2026-11-27T00:00:00Z")
    values.update(fields)
    return PathRecord.unjudged(Latest(**values), "A", "B")


def _ev(share=0.5, clean_flows=3, ttl=4, ip="198.18.1.1", size=8972):
    return Evidence(seen=2, runs=5, first="2026-11-20T00:00:00Z", last="2026-11-25T00:00:00Z",
                    share=share, ttl=ttl, ip=ip, size=size, clean_flows=clean_flows)


def test_a_lucky_latest_run_is_read_as_the_partial_hole_it_holds():
    rows = {KEY: _row()}
    ev = _ev()
    assert held.hold(rows, {path_key(*KEY): ev}) == {KEY: ev}
    row = rows[KEY]
    assert (row.partial, row.blackhole_ttl, row.blackhole_ip, row.blackhole_size) == (
        True, 4, "198.18.1.1", 8972)
    assert (row.pmtud, row.path_mtu, row.start) == ("ok", 9000, "2026-11-27T00:00:00Z")


def test_enough_clean_flows_clear_the_hole():
    for share, clean, kept in ((0.5, 9, True), (0.5, 10, False), (0.25, 24, True),
                               (0.25, 25, False), (1.0, 1, False), (1.0, 0, True)):
        rows = {KEY: _row()}
        found = held.hold(rows, {path_key(*KEY): _ev(share=share, clean_flows=clean)})
        assert (KEY in found) is kept, (share, clean)
        assert rows[KEY].partial is kept


def test_a_latest_run_that_located_the_hole_keeps_its_own_words():
    rows = {KEY: _row(pmtud="blackhole", partial=True, blackhole_ttl=6, blackhole_ip=None,
                      blackhole_size=9000)}
    before = rows[KEY]
    assert KEY in held.hold(rows, {path_key(*KEY): _ev()})
    assert rows[KEY] is before


def test_a_full_hole_not_located_takes_the_sightings_place_and_stays_full():
    rows = {KEY: _row(pmtud="blackhole", partial=False, path_mtu=None, blackhole_size=9000)}
    held.hold(rows, {path_key(*KEY): _ev()})
    row = rows[KEY]
    assert (row.partial, row.blackhole_ttl, row.blackhole_ip, row.blackhole_size) == (
        False, 4, "198.18.1.1", 9000)  # the run's own size stays


def test_a_located_hop_of_a_run_that_saw_no_hole_is_kept():
    rows = {KEY: _row(blackhole_ip="198.18.9.9")}
    held.hold(rows, {path_key(*KEY): _ev()})
    assert (rows[KEY].partial, rows[KEY].blackhole_ttl, rows[KEY].blackhole_ip) == (
        True, None, "198.18.9.9")


def test_other_paths_and_families_are_untouched():
    v6 = ("ps1.a", "ps1.b", 6)
    rows = {KEY: _row(), v6: _row(ip_version=6)}
    found = held.hold(rows, {path_key(*v6): _ev()})
    assert list(found) == [v6]
    assert (rows[KEY].partial, rows[KEY].blackhole_ttl, rows[KEY].blackhole_ip) == (False, None, None)
    assert held.hold({KEY: _row()}, {}) == {}


def test_fields_are_the_entrys_evidence():
    assert held.fields(_ev(share=0.333333)) == [
        ("seen", 2), ("runs", 5), ("failed_share", 0.3333), ("clean_flows", 3),
        ("needed_flows", 18), ("first_seen", "2026-11-20T00:00:00Z"),
        ("last_seen", "2026-11-25T00:00:00Z")]
    assert held.fields(None) == [(name, None) for name in (
        "seen", "runs", "failed_share", "clean_flows", "needed_flows", "first_seen",
        "last_seen")]


def test_changes_after_the_first_sighting_are_no_change_of_state():
    def change(src, start, version=4):
        return {"source": src, "dest": "ps1.b", "ip_version": version, "start": start}
    report = {"changes": [change("ps1.a", "2026-11-19T00:00:00Z"),
                          change("ps1.a", "2026-11-20T00:00:00Z"),
                          change("ps1.a", "2026-11-22T00:00:00Z"),
                          change("ps1.a", "2026-11-22T00:00:00Z", version=6),
                          change("ps1.c", "2026-11-22T00:00:00Z")],
              "flapping": [{"source": "ps1.a", "dest": "ps1.b", "ip_version": 4},
                           {"source": "ps1.a", "dest": "ps1.b", "ip_version": 6}],
              "count": 5}
    got = held.changes(report, {KEY: _ev()})
    assert [(c["source"], c["start"][:10], c["ip_version"]) for c in got["changes"]] == [
        ("ps1.a", "2026-11-19", 4), ("ps1.a", "2026-11-20", 4), ("ps1.a", "2026-11-22", 6),
        ("ps1.c", "2026-11-22", 4)]
    assert got["flapping"] == [{"source": "ps1.a", "dest": "ps1.b", "ip_version": 6}]
    assert got["count"] == 5 and len(report["changes"]) == 5  # the store's counts; not changed
    assert held.changes(report, {}) is report
