"""The adoption report against the real embedded store (SQLite) and a real OpenSearch 2.18.

Both stores are filled, through the archiver's own put APIs (jumbo.archive), with the history
of a synthetic mesh whose truth is known (fixtures.synth.Mesh.small): a 1500-configured
site, a 1500 core link shared by two sites, a firewalled site whose inbound paths are black
holes, a partial per-flow black hole, a regression and a flapping path. Every number the
report prints is checked against that truth, in every format, for both stores (the HTML page:
test_report_html_page.py; the frozen output: golden/test_report_golden.py).
"""

import csv
import io
import json
import os
import subprocess
import sys
import uuid

import pytest

from fixtures import synth
from jumbo.report import build_report as build, model
from jumbo.report.cli import main as cli_main
from jumbo.report.render import to_csv, to_json, to_text
from opensearch_fixture import drop_prefix
import store_fixtures

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "python-jumbo")]))
MESH = synth.Mesh.small()
TARGET = 9000
sqlite_url, os_url, store_url = store_fixtures.both_stores(MESH.records, "rep")


@pytest.fixture(scope="module")
def records():
    return list(MESH.records())


def run_cli(*args):
    proc = subprocess.run([sys.executable, "-m", "jumbo.report.cli"] + list(args), env=ENV,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


# -- numbers against the truth -------------------------------------------------------------------

def test_headline_matches_truth(store_url):
    r = build(store_url)
    truth = MESH.expected()
    assert r["paths"] == truth["paths"] == 132
    assert r["capable_paths"] == truth["capable_paths"]
    assert r["capable"] == pytest.approx(truth["capable"])
    assert r["hosts"] == truth["hosts"]
    assert r["configured_hosts"] == truth["configured_hosts"] == 10
    assert sorted((b["source"], b["dest"]) for b in r["blackholes"]) == truth["blackholes"]
    partial = [b for b in r["blackholes"] if b["partial"]]
    assert [(b["source"], b["dest"]) for b in partial] == [MESH.special["partial"]]
    firewall = MESH.site_ip("SITE-E", 2)
    inbound = [b for b in r["blackholes"] if not b["partial"]]
    assert inbound and all(b["hop_ip"] == firewall and b["dest_site"] == "SITE-E" and b["size"] == 9000
                           for b in inbound)
    assert [s["paths_met"] for s in r["status"]] == [False, False]
    assert r["used"] is None


def test_sites_culprits_and_matrix(store_url):
    r = build(store_url)
    sites = {s["site"]: s for s in r["sites"]}
    assert set(sites) == set(MESH.sites)
    b = sites["SITE-B"]
    assert b["host_mtu"] == [1500] and not b["configured"] and b["fails"] == "both"
    assert b["out_capable"] == 0 and b["in_capable"] == 0
    e = sites["SITE-E"]
    assert e["host_mtu"] == [9000] and e["blackholes"] == 16 and e["pmtud"].startswith("black holes")
    # The two sites whose fix unlocks most come first.
    assert {r["sites"][0]["site"], r["sites"][1]["site"]} == {"SITE-B", "SITE-E"}
    for s in r["sites"]:
        truth_out = sum(1 for h in MESH.hosts if h.site == s["site"] for o in MESH.hosts
                        if o is not h and MESH.capable(h, o))
        assert s["out_capable"] == truth_out, s["site"]
    # Localisation: the firewall of SITE-E and the small core link are named, in that order.
    culprits = [(c["hop_ip"], c["paths"]) for c in r["culprits"]]
    assert culprits[0][0] == MESH.site_ip("SITE-E", 2)
    assert culprits[1] == (synth.CORE_SMALL, 8)
    assert r["host_limited"] > 0
    # Matrix: smallest path MTU of each site pair, black-hole marks where the truth has them.
    cells = {(c["source_site"], c["dest_site"]): c for c in r["matrix"]["cells"]}
    assert len(cells) == 36
    for a in MESH.sites:
        for bsite in MESH.sites:
            truths = [MESH.truth(x, y) for x in MESH.hosts for y in MESH.hosts
                      if x is not y and x.site == a and y.site == bsite]
            cell = cells[(a, bsite)]
            assert cell["min_mtu"] == min(t["path_mtu"] for t in truths)
            assert cell["blackholes"] == sum(t["pmtud"] == "blackhole" for t in truths)


def test_trend_changes_gains(store_url):
    r = build(store_url)
    buckets = r["trend"]["buckets"]
    assert r["trend"]["interval"] == "day" and len(buckets) == MESH.days
    assert all(b["results"] == 132 for b in buckets)
    assert all(b["configured"] == 110 for b in buckets)      # 10 of 12 hosts at 9000, 11 paths each
    flap = MESH.special["flap"]
    regress = MESH.special["regress"]
    changes = r["changes"]
    regress_changes = [c for c in changes if (c["source"], c["dest"]) == regress]
    assert len(regress_changes) == 1
    assert regress_changes[0]["from"] == "jumbo" and regress_changes[0]["to"] == "standard"
    assert regress_changes[0]["start"][:10] == "2026-11-%02d" % (1 + MESH.regress_day)
    flapping = {(f["source"], f["dest"]): f["changes"] for f in r["flapping"]}
    assert flapping[flap] == MESH.days - 1
    assert regress not in flapping
    assert changes == sorted(changes, key=lambda c: c["start"], reverse=True)
    # Measured gain where paired throughput ran; a Mathis estimate for the other paths.
    measured = r["gains"]
    truth = sorted(MESH.gain(a, b) for a, b in MESH.pairs()
                   if MESH.has_throughput(a, b) and MESH.capable(a, b))
    assert sorted(g["gain"] for g in measured["items"]) == truth
    expected = r["expected_gains"]
    assert expected["paths"] > 100
    assert all(1.0 <= g["expected_gain"] <= 8960 / 1460.0 + 1e-9 for g in expected["items"])


def test_both_stores_give_the_same_report(sqlite_url, os_url):
    for opts in ({}, {"since": "2026-11-03T00:00:00Z", "until": "2026-11-10T00:00:00Z"},
                 {"until": "2026-11-06T00:00:00Z"}, {"since": "2026-11-08T00:00:00Z"},
                 {"interval": "week"}):
        a, b = build(sqlite_url, **opts), build(os_url, **opts)
        for key in a:
            if key not in ("generated", "store"):
                assert a[key] == b[key], (opts, key)


def test_window(sqlite_url):
    r = build(sqlite_url, since="2026-11-01T00:00:00Z", until="2026-11-03T00:00:00Z")
    assert r["window"]["results"] == 2 * 132
    assert len(r["trend"]["buckets"]) == 2
    # Before the regression day the regressed path was still capable.
    regress = MESH.special["regress"]
    assert r["capable_paths"] == sum(1 for a, b in MESH.pairs() if MESH.capable(a, b, day=1))
    assert not [c for c in r["changes"] if (c["source"], c["dest"]) == regress]


# -- traffic weighting, site files ---------------------------------------------------------------

def test_traffic_weighted_share(sqlite_url, tmp_path):
    volumes = tmp_path / "volumes.csv"
    volumes.write_text("source_site,dest_site,bytes\nSITE-A,SITE-F,600\nSITE-B,SITE-A,300\n"
                       "SITE-C,SITE-D,100\n")
    out = tmp_path / "r.json"
    assert cli_main(["--store", sqlite_url, "--format", "json", "--out", str(out),
                     "--volumes", str(volumes)]) == 0
    r = json.loads(out.read_text())

    def share(a, b):
        pairs = [(x, y) for x in MESH.hosts for y in MESH.hosts if x.site == a and y.site == b]
        return sum(MESH.capable(x, y) for x, y in pairs) / float(len(pairs))
    expected = (600 * share("SITE-A", "SITE-F") + 300 * share("SITE-B", "SITE-A")
                + 100 * share("SITE-C", "SITE-D")) / 1000.0
    assert r["used"] == pytest.approx(expected)
    assert r["used"] != pytest.approx(r["capable"])          # never blended with the path share
    assert r["traffic"]["bytes"] == 1000
    # Ranked by traffic unlocked: SITE-B's 300 bytes to SITE-A (all failing: B is at 1500) lead.
    sites = {s["site"]: s for s in r["sites"]}
    assert r["sites"][0]["site"] == "SITE-B"
    assert sites["SITE-B"]["unlocked_traffic"] == pytest.approx(300 / 1000.0)


def test_sites_file_instead_of_labels(tmp_path):
    mesh = synth.Mesh.small(label_sites=False)
    url = "sqlite:///" + str(tmp_path / "nolabels.db")
    store_fixtures.load(url, list(mesh.records()))
    unlabelled = build(url)
    assert [s["site"] for s in unlabelled["sites"]] == [model.NO_SITE]   # never guessed
    sites = tmp_path / "sites.txt"
    sites.write_text("# host site\n" + "".join("%s %s\n" % (h.name, h.site) for h in mesh.hosts))
    out = tmp_path / "r.json"
    assert cli_main(["--store", url, "--format", "json", "--out", str(out), "--sites", str(sites)]) == 0
    r = json.loads(out.read_text())
    assert sorted(s["site"] for s in r["sites"]) == sorted(mesh.sites)
    assert r["capable"] == pytest.approx(mesh.expected()["capable"])


# -- formats agree -------------------------------------------------------------------------------

def test_formats_agree(store_url, tmp_path):
    outs = {}
    for fmt in ("json", "csv", "text", "html"):
        path = tmp_path / ("r." + fmt)
        proc = run_cli("--store", store_url, "--format", fmt, "--out", str(path))
        assert proc.returncode == 0, proc.stderr
        outs[fmt] = path.read_text()
    r = json.loads(outs["json"])
    rows = list(csv.DictReader(io.StringIO(outs["csv"])))
    summary = {row["metric"]: row["value"] for row in rows if row["section"] == "summary"}
    assert int(summary["paths"]) == r["paths"]
    assert float(summary["capable"]) == r["capable"]
    assert int(summary["blackholes"]) == len(r["blackholes"])
    assert float(summary["configured"]) == r["configured"]
    bh_csv = sorted(set(row["item"] for row in rows if row["section"] == "blackhole"))
    assert bh_csv == sorted("%s->%s" % (b["source"], b["dest"]) for b in r["blackholes"])
    cells = {row["item"]: row["value"] for row in rows
             if row["section"] == "matrix" and row["metric"] == "min_mtu"}
    assert cells == {"%s->%s" % (c["source_site"], c["dest_site"]): str(c["min_mtu"])
                     for c in r["matrix"]["cells"]}
    capable_pct = "%.1f%%" % (100 * r["capable"])
    text, html = outs["text"], outs["html"]
    import re
    assert re.search(r"capable\s+%s\s+of %d directed paths" % (re.escape(capable_pct), r["paths"]), text)
    assert capable_pct in html
    for b in r["blackholes"]:
        assert "%s -> %s" % (b["source"], b["dest"]) in text
        assert b["source"] in html and b["dest"] in html
    assert "Black holes: fix these first (%d)" % len(r["blackholes"]) in text
    assert "Black holes: fix these first (%d)" % len(r["blackholes"]) in html
    # Library API and CLI agree.
    lib = build(store_url)
    assert lib["capable"] == r["capable"] and lib["paths"] == r["paths"]
    assert json.loads(to_json(lib))["blackholes"] == r["blackholes"]
    assert to_csv(lib).splitlines()[0] == "section,item,metric,value"
    assert to_text(lib).startswith("Jumbo-frame adoption report")


# -- bad input -----------------------------------------------------------------------------------

def test_bad_input_is_a_clean_message(sqlite_url, tmp_path):
    from jumbo.archive.stores import open_store
    empty = tmp_path / "empty.db"
    open_store("sqlite:///" + str(empty)).close()
    proc = run_cli("--store", "sqlite:///" + str(empty))
    assert proc.returncode == 4 and "no pmtu results" in proc.stderr

    proc = run_cli("--store", "sqlite:///" + str(tmp_path / "missing.db"))
    assert proc.returncode == 3 and "not found" in proc.stderr

    not_a_db = tmp_path / "junk.db"
    not_a_db.write_text("this is not sqlite\n" * 100)
    proc = run_cli("--store", "sqlite:///" + str(not_a_db))
    assert proc.returncode == 3 and "jumbo-report:" in proc.stderr

    proc = run_cli("--store", "http://127.0.0.1:1")
    assert proc.returncode == 3 and "cannot reach OpenSearch" in proc.stderr

    bad = tmp_path / "bad.csv"
    bad.write_text("source_site,dest_site,bytes\nSITE-A,SITE-B,lots\n")
    proc = run_cli("--store", sqlite_url, "--volumes", str(bad))
    assert proc.returncode == 2 and "line 2" in proc.stderr and "not a number" in proc.stderr

    bad.write_text("SITE-A;SITE-B;12\n")
    proc = run_cli("--store", sqlite_url, "--volumes", str(bad))
    assert proc.returncode == 2 and "expected source_site,dest_site,bytes" in proc.stderr

    unknown = tmp_path / "unknown.csv"
    unknown.write_text("SITE-A,SITE-NOWHERE,10\n")
    proc = run_cli("--store", sqlite_url, "--volumes", str(unknown))
    assert proc.returncode == 2 and "SITE-NOWHERE" in proc.stderr

    proc = run_cli("--store", sqlite_url, "--since", "2030-01-01")
    assert proc.returncode == 4 and "no pmtu results in the window" in proc.stderr

    proc = run_cli("--store", sqlite_url, "--since", "yesterday")
    assert proc.returncode == 2 and "unreadable date" in proc.stderr

    proc = run_cli("--store", sqlite_url, "--format", "pdf")
    assert proc.returncode == 2 and "invalid choice" in proc.stderr

    # the stores' own URL check (jumbo.archive.check_url), so the same words as the archiver's
    proc = run_cli("--store", "ftp://x")
    assert proc.returncode == 2 and "unknown store 'ftp'" in proc.stderr
    proc = run_cli("--store", "https://archive:port")
    assert proc.returncode == 2 and "port is not a number" in proc.stderr

    proc = run_cli("--store", sqlite_url, "--volumes", str(tmp_path / "nope.csv"))
    assert proc.returncode == 2 and "no such file" in proc.stderr


def test_opensearch_empty_prefix_is_no_data(opensearch_url):
    proc = run_cli("--store", "%s/?prefix=none%s_" % (opensearch_url, uuid.uuid4().hex[:6]))
    assert proc.returncode == 4 and "no pmtu results" in proc.stderr


# -- pScheduler results as the archiver receives them ----------------------------------------------

def _envelopes():
    """Archiver envelopes (the pScheduler result shape, fixtures/samples.py): site labels come
    from the task reference, as the pSConfig template fills them."""
    from fixtures import samples
    hosts = {"A": "ps-a.cern.example", "B": "ps-b.desy.example", "C": "ps-c.ral.example"}
    sites = {"A": "CERN", "B": "DESY", "C": "RAL"}
    out = []

    def pmtu(src, dst, minutes, **result):
        spec = {"schema": 1, "source": hosts[src], "dest": hosts[dst], "ip-version": 4}
        out.append(samples.envelope("pmtu", samples.pmtu_result(**result), spec, lead=hosts[src],
                                    minutes=minutes, reference={"source-site": sites[src],
                                                                "dest-site": sites[dst]}))
    for minutes in (0, 360):
        pmtu("A", "B", minutes, path_mtu=9000)
        pmtu("B", "A", minutes, path_mtu=9000)
        pmtu("C", "A", minutes, path_mtu=1500)
    pmtu("A", "C", 0, path_mtu=9000)                      # then a black hole appears
    pmtu("A", "C", 360, path_mtu=1500, pmtud="blackhole",
         blackhole={"ttl": 2, "ip": "198.18.2.1", "size": 9000})
    out.append(samples.latency_envelope(sent=1000, lost=10, source=hosts["A"], dest=hosts["B"]))
    return out


@pytest.mark.parametrize("kind", ["sqlite", "opensearch"])
def test_report_on_archived_pscheduler_results(kind, tmp_path, request):
    if kind == "sqlite":
        url = "sqlite:///" + str(tmp_path / "envelopes.db")
    else:
        base = request.getfixturevalue("opensearch_url")
        url = "%s/?prefix=env%s_" % (base, uuid.uuid4().hex[:8])
    store_fixtures.load(url, _envelopes())
    try:
        r = build(url)
        assert r["paths"] == 4 and r["capable_paths"] == 2 and r["capable"] == 0.5
        assert [(b["source"], b["dest"], b["hop_ip"], b["size"]) for b in r["blackholes"]] == [
            ("ps-a.cern.example", "ps-c.ral.example", "198.18.2.1", 9000)]
        assert sorted(s["site"] for s in r["sites"]) == ["CERN", "DESY", "RAL"]
        change = [(c["source"], c["from"], c["to"]) for c in r["changes"]]
        assert change == [("ps-a.cern.example", "jumbo", "blackhole")]
        expected = {(g["source"], g["dest"]): g for g in r["expected_gains"]["items"]}
        ab = expected[("ps-a.cern.example", "ps-b.desy.example")]
        assert ab["rtt"] == pytest.approx(0.010) and ab["loss"] == pytest.approx(0.01)
        assert ab["expected_gain"] == pytest.approx(8960 / 1460.0)
    finally:
        if kind == "opensearch":
            from jumbo.archive.stores import open_store
            store = open_store(url)
            prefix = url.split("prefix=")[1]
            drop_prefix(store, prefix)


def test_opensearch_without_latest_index(opensearch_url):
    """A store whose latest-per-path index is gone: the report computes the latest results
    from the history (composite + top_hits) and gets the same answer."""
    from jumbo.archive.stores import open_store
    mesh = synth.Mesh.small(days=3)
    prefix = "nolatest%s_" % uuid.uuid4().hex[:6]
    url = "%s/?prefix=%s" % (opensearch_url, prefix)
    store_fixtures.load(url, list(mesh.records()))
    store = open_store(url)
    try:
        assert store.request("DELETE", "/%sjumbo_latest" % prefix)[0] == 200
        r = build(url)
        truth = mesh.expected()
        assert r["paths"] == truth["paths"] and r["capable"] == pytest.approx(truth["capable"])
        assert sorted((b["source"], b["dest"]) for b in r["blackholes"]) == truth["blackholes"]
        assert r["gains"]["paths"] > 0 and r["expected_gains"]["paths"] > 0
    finally:
        drop_prefix(store, prefix)


def test_opensearch_without_latency_data(opensearch_url):
    """A mesh that archives pmtu results but no latency yet (a fresh deployment): the
    latency wildcard matches no index, and the report still runs, with no expected gains."""
    from jumbo.archive.stores import open_store
    prefix = "nolat%s_" % uuid.uuid4().hex[:6]
    url = "%s/?prefix=%s" % (opensearch_url, prefix)
    store_fixtures.load(url, [e for e in _envelopes() if e["result"]["test"]["type"] == "pmtu"])
    store = open_store(url)
    try:
        r = build(url)
        assert r["paths"] == 4 and r["capable"] == 0.5
        assert r["expected_gains"]["paths"] == 0
        proc = run_cli("--store", url)
        assert proc.returncode == 0, proc.stderr
    finally:
        drop_prefix(store, prefix)


def test_opensearch_latest_keeps_sub_second_start_times(opensearch_url, tmp_path):
    """A start stored with microseconds (or a non-zero millisecond) is read back from the
    latest index as stored (the row keeps the record's text; OpenSearch's date doc values
    would keep milliseconds), as SQLite gives it."""
    from jumbo.archive.stores import open_store
    from jumbo.archive.queries import Window, open_queries
    mesh = synth.Mesh.small(days=2)
    records = list(mesh.records())
    fractions = (".123456Z", ".5Z", ".25Z")
    for i, rec in enumerate(records):
        if rec["test_type"] == "pmtu" and i % 4:
            rec["start"] = rec["start"][:-1] + fractions[i % 3]
    prefix = "frac%s_" % uuid.uuid4().hex[:6]
    url = "%s/?prefix=%s" % (opensearch_url, prefix)
    sqlite_url = "sqlite:///" + str(tmp_path / "frac.db")
    store_fixtures.load(url, records)
    store_fixtures.load(sqlite_url, records)
    try:
        starts = []
        for store_url in (sqlite_url, url):
            queries = open_queries(store_url)
            try:
                starts.append(sorted((r.source, r.dest, r.ip_version, r.start)
                                     for r in queries.latest(Window(), TARGET)))
            finally:
                queries.close()
        assert len(starts[1]) == MESH.expected()["paths"]
        for fraction in fractions:
            assert any(row[3].endswith(fraction) for row in starts[1]), fraction
        assert starts[1] == starts[0]
    finally:
        drop_prefix(open_store(url), prefix)
