"""jumbo-report --check (report/check.py), the monitoring check, on real stores (SQLite and a
real OpenSearch): the exit status Nagios/Icinga/Checkmk act on (0 OK, 1 WARNING, 2 CRITICAL,
3 UNKNOWN), the one status line and its performance data, every number against the synthetic
mesh's own truth; never OK when the store cannot be read or the data cannot decide."""

import datetime
import re
import uuid

import pytest

from fixtures import synth
from jumbo.report.cli import main as report_main
from opensearch_fixture import drop_prefix
import store_fixtures

DAYS = 3
# The last day is yesterday: every result is between 23 and 72 hours old whenever this runs.
START = (datetime.datetime.utcnow() - datetime.timedelta(days=DAYS)).strftime("%Y-%m-%d")
MESH = synth.Mesh.small(days=DAYS, start=START)
FIREWALL = MESH.site_ip("SITE-E", 2)
FRESH = ["--stale-hours", "100"]
PERF = re.compile(r"^'?([A-Za-z_]+)'?=(\d+)(s?)(;[\d.]*){0,4}$")

sqlite_url, os_url, store_url = store_fixtures.both_stores(MESH.records, "chk")


def _variant():
    """SITE-D's hosts measure nothing and no result carries the reverse direction (its paths
    are measured one way only), and every result from or to SITE-B failed."""
    for rec in MESH.records():
        if rec["test_type"] != "pmtu" or rec["source"].endswith(".site-d.example"):
            continue
        rec = dict(rec, reverse_path_mtu=None, reverse_pmtud=None)
        if "site-b" in rec["source"] + rec["dest"]:
            rec.update(succeeded=False, error="no route to host", path_mtu=None, pmtud=None,
                       jumbo=None, hops=None, local_mtu=None)
        yield rec


@pytest.fixture(scope="module", params=["sqlite", "opensearch"])
def variant_url(request, tmp_path_factory):
    if request.param == "sqlite":
        url = "sqlite:///" + str(tmp_path_factory.mktemp("chkv") / "jumbo.db")
        store_fixtures.load(url, _variant())
        yield url
        return
    prefix = "chkv%s_" % uuid.uuid4().hex[:8]
    url = "%s/?prefix=%s" % (request.getfixturevalue("opensearch_url"), prefix)
    store_fixtures.load(url, _variant())
    yield url
    from jumbo.archive.stores import open_store
    drop_prefix(open_store(url), prefix)


def check(capsys, *argv):
    """(exit status, status text, {perfdata label: value}, detail lines)."""
    status = report_main(["--check"] + list(argv))
    out = capsys.readouterr().out.splitlines()
    head, _, perf = out[0].partition(" | ")
    values = {}
    for item in perf.split():
        m = PERF.match(item)
        assert m, item                  # the plugin guidelines' 'label'=value[UOM];warn;crit;min;max
        values[m.group(1)] = int(m.group(2))
    assert "|" not in head and all("|" not in line for line in out[1:])
    return status, head, values, out[1:]


def truth(site):
    """The report's numbers for `site`'s paths, from the mesh's truth (the last day)."""
    pairs = [(a, b) for a, b in MESH.pairs() if site in (a.site, b.site)]
    fwd = set((a.name, b.name) for a, b in pairs if MESH.truth(a, b)["pmtud"] == "blackhole")
    rev = set((a.name, b.name) for a, b in pairs if MESH.truth(b, a)["pmtud"] == "blackhole") - fwd
    return {"paths_measured": len(pairs), "capable_paths": sum(1 for a, b in pairs if MESH.capable(a, b)),
            "blackholes": len(fwd), "reverse_blackholes": len(rev), "stale_paths": 0,
            "paths_one_way": 0, "unknown_paths": 0, "failed_paths": 0}


def test_black_hole_on_the_sites_paths_is_critical(store_url, capsys):
    status, head, perf, details = check(capsys, "--store", store_url, "--site", "SITE-E", *FRESH)
    expected = truth("SITE-E")
    assert expected["blackholes"] == 16 and expected["reverse_blackholes"] == 16
    assert status == 2, head
    assert head.startswith("JUMBO CRITICAL - 32 black-holed paths on SITE-E's paths (42 paths, "), head
    assert "black hole at hop %s; 9000-byte packets lost" % FIREWALL in head
    assert dict((k, perf[k]) for k in expected) == expected
    assert len(details) == 32 and all("(IPv4)" in d for d in details)


def test_a_clean_site_is_ok_and_the_mesh_is_not(store_url, capsys):
    status, head, perf, details = check(capsys, "--store", store_url, "--site", "site-b", *FRESH)
    assert status == 0, head
    assert head.startswith("JUMBO OK - site-b's paths, none black-holed"), head
    assert dict((k, perf[k]) for k in truth("SITE-B")) == truth("SITE-B") and details == []
    age = (datetime.datetime.utcnow() - MESH.start - datetime.timedelta(days=DAYS - 1)).total_seconds()
    assert age - 3700 <= perf["newest_age"] <= age + 60       # the newest result: yesterday, first hour
    status, head, perf, _ = check(capsys, "--store", store_url, *FRESH)
    assert status == 2 and perf["paths_measured"] == len(list(MESH.pairs())), head


def test_stale_data_is_a_warning(store_url, capsys):
    status, head, perf, details = check(capsys, "--store", store_url, "--site", "SITE-B",
                                        "--stale-hours", "1")
    assert status == 1, head
    assert head.startswith("JUMBO WARNING - 42 not measured for 1 h on SITE-B's paths"), head
    assert perf["stale_paths"] == 42 and len(details) == 42


def test_one_way_and_failed_paths(variant_url, capsys):
    # SITE-D: measured towards it only, and never the other way: a warning, 22 paths one way
    # (SITE-B's 4 of them failed besides)
    status, head, perf, _ = check(capsys, "--store", variant_url, "--site", "SITE-D", *FRESH)
    assert status == 1, head
    assert perf["paths_measured"] == 20 and perf["paths_one_way"] == 20 and perf["failed_paths"] == 4, perf
    assert "20 measured one way only" in head and "4 failed" in head
    # SITE-B: every path failed: the data cannot decide
    status, head, perf, details = check(capsys, "--store", variant_url, "--site", "SITE-B", *FRESH)
    assert status == 3, head
    assert head.startswith("JUMBO UNKNOWN - no path of SITE-B's paths decided: 38 failed"), head
    assert perf["failed_paths"] == 38 == len(details)


@pytest.mark.parametrize("argv, says", [
    (["--store", "http://127.0.0.1:9/"], "127.0.0.1:9"),                  # nothing listens
    (["--store", "sqlite:///nonexistent/jumbo.db"], "nonexistent"),
    (["--until", "2001-01-01"], "no pmtu results in the window"),
    (["--site", "SITE-Z"], "no path from or to site SITE-Z in the store (its sites: SITE-A,"),
    (["--format", "html"], "--check writes no report: --format do not apply"),
    (["--stale-hours", "0"], "--stale-hours must be in"),
    (["--bogus"], "unrecognized arguments: --bogus"),
])
def test_what_cannot_decide_is_unknown_never_ok(sqlite_url, capsys, argv, says):
    if not any(a == "--store" for a in argv):
        argv = ["--store", sqlite_url] + argv
    status, head, perf, _ = check(capsys, *argv)
    assert status == 3 and head.startswith("JUMBO UNKNOWN - ") and perf == {}, head
    assert says in head, head


def test_check_options_without_check_are_refused(sqlite_url, capsys):
    # (--site too, while the report has no --site of its own: check.add_options)
    assert report_main(["--store", sqlite_url, "--stale-hours", "5"]) == 2
    assert "work only with --check" in capsys.readouterr().err


def test_labels_cannot_forge_the_status_line(tmp_path, capsys):
    """A site label from the store carrying '|' and terminal escapes shows escaped, and the
    performance data stays the plugin's own."""
    url = "sqlite:///" + str(tmp_path / "j.db")
    evil = "EVIL|paths=0;;;0\x1b[2J"
    store_fixtures.load(url, (dict(r, source_site=evil) for r in synth.Mesh.small(days=1, start=START)
                              .records(extras=False)))
    status, head, perf, _ = check(capsys, "--store", url, "--site", "SITE-NONE")
    assert status == 3 and "\x1b" not in head and "EVIL/paths=0;;;0\\x1b[2J" in head, head
    status, head, perf, _ = check(capsys, "--store", url, "--site", evil, *FRESH)
    assert status == 2 and perf["paths_measured"] == 132 and "\x1b" not in head, head   # every source is there
