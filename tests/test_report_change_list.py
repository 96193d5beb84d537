"""jumbo.report.change_list: the report's changes section. A store's changes (newest first,
as the readers give them) and flapping paths, ranked by hand: a flapping path's changes go to
the flapping list only; each other change is a regression (jumbo -> not jumbo), an
improvement (-> jumbo) or a change; the days are summed, the day with most regressions first
(newest first among equals); a site's page keeps its own paths only."""

from jumbo.report.change_list import add_changes
from jumbo.report.path_record import PathRecord


def change(source, dest, start, was, now, ip_version=4, mtus=(9000, 1500)):
    return {"source": source, "dest": dest, "ip_version": ip_version, "start": start,
            "from": was, "to": now, "path_mtu_before": mtus[0], "path_mtu_after": mtus[1]}


def path(source, dest, ip_version=4, state="jumbo"):
    return PathRecord(source, dest, ip_version, source.upper(), dest.upper(), "2026-11-20", 9000,
                      None, False, 9000, "ok", False, None, None, True, state, False, True)


# Newest first. flap<->kit flaps; on the 20th a and b regressed (IPv4, IPv6) and c improved;
# on the 19th d changed from failed to standard; on the 18th e regressed.
CHANGES = [
    change("flap", "kit", "2026-11-21T04:00:00Z", "standard", "jumbo"),
    change("a", "kit", "2026-11-20T10:00:00Z", "jumbo", "standard"),
    change("b", "kit", "2026-11-20T09:00:00Z", "jumbo", "failed", ip_version=6),
    change("c", "kit", "2026-11-20T08:00:00Z", "standard", "jumbo", mtus=(1500, 9000)),
    change("flap", "kit", "2026-11-20T04:00:00Z", "jumbo", "standard"),
    change("d", "kit", "2026-11-19T08:00:00Z", "failed", "standard", mtus=(None, 1500)),
    change("e", "ral", "2026-11-18T08:00:00Z", "jumbo", "standard"),
]
STORE = {"changes": CHANGES, "changed_paths": 6, "total_changes": 7,
         "flapping": [{"source": "flap", "dest": "kit", "ip_version": 4, "changes": 2}]}
PATHS = [path("a", "kit"), path("b", "kit", 6, "failed"), path("c", "kit"), path("d", "kit"),
         path("e", "ral"), path("flap", "kit", state="failed")]


def test_a_flapping_paths_changes_are_in_the_flapping_list_only():
    report = {}
    add_changes(report, STORE, PATHS)
    assert [(c["source"], c["kind"], c["family"]) for c in report["changes"]] == [
        ("a", "regression", "IPv4"), ("b", "regression", "IPv6"), ("c", "improvement", "IPv4"),
        ("d", "change", "IPv4"), ("e", "regression", "IPv4")]
    assert report["flapping"] == [{"source": "flap", "dest": "kit", "ip_version": 4,
                                   "changes": 2, "family": "IPv4"}]
    # The MTUs before and after are kept as the store gave them.
    assert (report["changes"][2]["path_mtu_before"], report["changes"][2]["path_mtu_after"]) \
        == (1500, 9000)


def test_the_days_are_summed_with_the_most_regressions_first():
    report = {}
    add_changes(report, STORE, PATHS)
    assert [dict(d) for d in report["change_days"]] == [
        {"day": "2026-11-20", "regressions": 2, "improvements": 1, "changes": 3,
         "regressed": ["a -> kit IPv4", "b -> kit IPv6"]},
        {"day": "2026-11-18", "regressions": 1, "improvements": 0, "changes": 1,
         "regressed": ["e -> ral IPv4"]},
        {"day": "2026-11-19", "regressions": 0, "improvements": 0, "changes": 1,
         "regressed": []}]


def test_the_counts_are_the_stores_and_failed_paths_are_counted():
    report = {}
    add_changes(report, STORE, PATHS)
    assert (report["changed_paths"], report["total_changes"], report["failed_paths"]) == (6, 7, 2)


def test_a_sites_page_keeps_its_own_paths_and_recounts():
    # RAL's page: only e -> ral is one of its paths.
    report = {}
    add_changes(report, STORE, [path("e", "ral")], site="RAL")
    assert [c["source"] for c in report["changes"]] == ["e"]
    assert report["flapping"] == []
    assert (report["changed_paths"], report["total_changes"], report["failed_paths"]) == (1, 1, 0)
    # A family is part of the path: b's IPv6 change is not the page of b's IPv4 path.
    report = {}
    add_changes(report, STORE, [path("b", "kit", 4)], site="KIT")
    assert report["changes"] == [] and report["change_days"] == []


def test_the_stores_records_are_not_changed():
    before = [dict(c) for c in CHANGES]
    add_changes({}, STORE, PATHS)
    assert CHANGES == before


def test_a_record_without_a_family_is_shown_as_dash():
    report = {}
    store = {"changes": [change("x", "y", "2026-11-20T00:00:00Z", "jumbo", "standard",
                                ip_version=None)],
             "changed_paths": 1, "flapping": []}
    add_changes(report, store, [])
    assert report["changes"][0]["family"] == "-"
    assert report["change_days"][0]["regressed"] == ["x -> y -"]
    assert report["total_changes"] is None  # the store did not count them
