"""The adoption report against the real embedded store (SQLite) and a real OpenSearch 2.18.

Both stores are filled, through the archiver's own put APIs (jumbo.archive), with the history
of a synthetic mesh whose truth is known (fixtures.synth.Mesh.small): a 1500-configured
site, a 1500 core link shared by two sites, a firewalled site whose inbound paths are black
holes, a partial per-flow black hole, a regression and a flapping path. Every number the
report prints is checked against that truth, in every format, for both stores.
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
from jumbo.report.html import to_html
from opensearch_fixture import drop_prefix

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "python-jumbo")]))
MESH = synth.Mesh.small()
TARGET = 9000


def _load(url, records):
    from jumbo.archive.stores import open_store
    store = open_store(url)
    try:
        for i in range(0, len(records), 1000):
            outcomes = store.put_many(records[i:i + 1000])
            assert not [o for o in outcomes if o], outcomes
        if hasattr(store, "refresh"):
            store.refresh()
    finally:
        store.close()


@pytest.fixture(scope="module")
def records():
    return list(MESH.records())


@pytest.fixture(scope="module")
def sqlite_url(tmp_path_factory, records):
    path = tmp_path_factory.mktemp("report") / "jumbo.db"
    url = "sqlite:///" + str(path)
    _load(url, records)
    return url


@pytest.fixture(scope="module")
def os_url(request, records):
    """A real OpenSearch (the archiver's session fixture), our own index prefix."""
    base = request.getfixturevalue("opensearch_url")
    prefix = "rep%s_" % uuid.uuid4().hex[:8]
    url = "%s/?prefix=%s" % (base, prefix)
    _load(url, records)
    yield url
    from jumbo.archive.stores import open_store
    store = open_store(url)
    drop_prefix(store, prefix)


@pytest.fixture(params=["sqlite", "opensearch"])
def store_url(request):
    return request.getfixturevalue("sqlite_url" if request.param == "sqlite" else "os_url")


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
    assert r["paths_measured"] == truth["paths"] == 132
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
    assert all(b["configured_results"] == 110 for b in buckets)      # 10 of 12 hosts at 9000, 11 paths each
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
    _load(url, list(mesh.records()))
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
    assert int(summary["paths_measured"]) == r["paths_measured"]
    assert float(summary["capable"]) == r["capable"]
    assert int(summary["blackholes"]) == len(r["blackholes"])
    assert float(summary["configured"]) == r["configured"]
    bh_csv = sorted(set(row["item"] for row in rows if row["section"] == "blackhole"))
    assert bh_csv == sorted("%s->%s %s" % (b["source"], b["dest"], b["family"]) for b in r["blackholes"])
    cells = {row["item"]: row["value"] for row in rows
             if row["section"] == "matrix" and row["metric"] == "min_mtu"}
    assert cells == {"%s->%s" % (c["source_site"], c["dest_site"]): str(c["min_mtu"])
                     for c in r["matrix"]["cells"]}
    capable_pct = "%.1f%%" % (100 * r["capable"])
    text, html = outs["text"], outs["html"]
    import re
    assert re.search(r"capable\s+%s\s+of %d directed paths" % (re.escape(capable_pct), r["paths_measured"]), text)
    assert capable_pct in html
    for b in r["blackholes"]:
        assert "%s -> %s" % (b["source"], b["dest"]) in text
        assert b["source"] in html and b["dest"] in html
    assert "Black holes: fix these first (%d)" % len(r["blackholes"]) in text
    assert "Black holes: fix these first (%d)" % len(r["blackholes"]) in html
    # Library API and CLI agree.
    lib = build(store_url)
    assert lib["capable"] == r["capable"] and lib["paths_measured"] == r["paths_measured"]
    assert json.loads(to_json(lib))["blackholes"] == r["blackholes"]
    assert to_csv(lib).splitlines()[0] == "section,item,metric,value"
    assert to_text(lib).startswith("Jumbo-frame adoption report")


# -- the HTML page -------------------------------------------------------------------------------

class _Svg(object):
    def __init__(self, text):
        from html.parser import HTMLParser
        found = self.found = []

        class P(HTMLParser):
            def handle_starttag(self, tag, attrs):
                found.append((tag, dict(attrs)))
        P().feed(text)

    def tags(self, tag, **attrs):
        return [a for t, a in self.found if t == tag and all(
            v in (a.get(k) or "").split() if k == "class" else a.get(k) == v for k, v in attrs.items())]


def test_html_is_self_contained_with_plots(sqlite_url):
    r = build(sqlite_url)
    page = to_html(r)
    doc = _Svg(page)
    assert not doc.tags("script") and not doc.tags("link")
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in page
    for plot in ("trend-plot", "matrix-plot", "gains-plot"):
        assert len(doc.tags("svg", id=plot)) == 1
    assert len(doc.tags("rect", **{"class": "cell"})) == 36
    assert len(doc.tags("circle", **{"class": "bh-marker"})) == sum(
        1 for c in r["matrix"]["cells"] if c["blackholes"])
    fills = set(a["fill"] for a in doc.tags("rect", **{"class": "cell"}))
    from jumbo.report.html import GREEN, RED
    assert {GREEN, RED} <= fills
    targets = doc.tags("line", **{"class": "target-line"})
    assert sorted(t["data-target"] for t in targets) == ["DC26", "DC28"]
    assert [p["data-series"] for p in doc.tags("polyline", **{"class": "trend-line"})] == [
        "jumbo-results", "configured-results"]
    assert doc.tags("rect", **{"class": "bar-measured"}) and doc.tags("rect", **{"class": "bar-expected"})


def _png_pixels(path):
    """Decode an 8-bit RGB/RGBA non-interlaced PNG (what Chromium writes) with zlib only."""
    import struct
    import zlib
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype, _c, _f, interlace = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    assert depth == 8 and ctype in (2, 6) and interlace == 0
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        ftype = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ftype == 1:
                line[x] = (line[x] + a) & 255
            elif ftype == 2:
                line[x] = (line[x] + b) & 255
            elif ftype == 3:
                line[x] = (line[x] + ((a + b) >> 1)) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pred) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def _chromium():
    for name in ("chromium", "chromium-browser"):
        for d in os.environ.get("PATH", "").split(os.pathsep) + ["/usr/bin"]:
            if os.access(os.path.join(d, name), os.X_OK):
                return os.path.join(d, name)
    return None


@pytest.mark.skipif(_chromium() is None, reason="chromium is not installed (scripts/setup.sh installs it)")
def test_html_renders_in_headless_chromium(sqlite_url, tmp_path):
    page = tmp_path / "report.html"
    assert cli_main(["--store", sqlite_url, "--format", "html", "--out", str(page)]) == 0
    shot = tmp_path / "shot.png"
    profile = tmp_path / "profile"
    profile.mkdir()
    proc = subprocess.run(
        [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--user-data-dir=%s" % profile, "--screenshot=%s" % shot, "--window-size=1400,2000",
         "file://%s" % page],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=90)
    assert shot.exists(), proc.stderr[-2000:]
    width, height, bpp, rows = _png_pixels(str(shot))
    assert (width, height) == (1400, 2000)
    colours = {}
    for row in rows[::4]:
        for x in range(0, width * bpp, bpp * 4):
            px = tuple(row[x:x + 3])
            colours[px] = colours.get(px, 0) + 1
    total = float(sum(colours.values()))
    white = colours.get((255, 255, 255), 0) / total
    assert white < 0.97, "screenshot is (nearly) blank"
    assert len(colours) > 20

    def near(rgb, tol=12):
        return sum(n for px, n in colours.items() if all(abs(p - q) <= tol for p, q in zip(px, rgb)))
    # The matrix is drawn: red (<= 1500) and green (target) cells are on the screen.
    assert near((0xd7, 0x30, 0x27)) > 50
    assert near((0x1a, 0x98, 0x50)) > 50


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
    _load(url, _envelopes())
    try:
        r = build(url)
        assert r["paths_measured"] == 4 and r["capable_paths"] == 2 and r["capable"] == 0.5
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
    _load(url, list(mesh.records()))
    store = open_store(url)
    try:
        assert store.request("DELETE", "/%sjumbo_latest" % prefix)[0] == 200
        r = build(url)
        truth = mesh.expected()
        assert r["paths_measured"] == truth["paths"] and r["capable"] == pytest.approx(truth["capable"])
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
    _load(url, [e for e in _envelopes() if e["result"]["test"]["type"] == "pmtu"])
    store = open_store(url)
    try:
        r = build(url)
        assert r["paths_measured"] == 4 and r["capable"] == 0.5
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
    _load(url, records)
    _load(sqlite_url, records)
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


# -- the report's output is frozen: the same answers whatever the queries do inside the store ----

GOLDEN = os.path.join(ROOT, "tests", "data", "report_golden.json")
GOLDEN_OPTIONS = (
    {}, {"since": "2026-11-03T00:00:00Z", "until": "2026-11-10T00:00:00Z"},
    {"until": "2026-11-06T00:00:00Z"}, {"since": "2026-11-08T00:00:00Z"}, {"interval": "week"},
    {"target": 1500}, {"limit": 3, "flap": 2},
)


def golden_reports(url):
    """The reports on the small mesh for each GOLDEN_OPTIONS, as JSON would carry them,
    without the two fields that legitimately differ (generation time, store kind)."""
    out = []
    for opts in GOLDEN_OPTIONS:
        r = json.loads(to_json(build(url, **opts)))
        r.pop("generated")
        r.pop("store")
        out.append({"options": opts, "report": r})
    return out


@pytest.mark.parametrize("kind", ["sqlite", "opensearch"])
def test_report_equals_the_golden_output(kind, request):
    """tests/data/report_golden.json was written by the report as it was before its queries
    moved into the stores' aggregations (commit 3b5290f, `python tests/test_report.py
    --write-golden`); the report must still say exactly that, for both stores."""
    url = request.getfixturevalue("sqlite_url" if kind == "sqlite" else "os_url")
    with open(GOLDEN) as handle:
        golden = json.load(handle)
    got = golden_reports(url)
    assert [g["options"] for g in got] == [g["options"] for g in golden]
    for new, old in zip(got, golden):
        for key in old["report"]:
            assert new["report"].get(key) == old["report"][key], (kind, new["options"], key)
        assert sorted(new["report"]) == sorted(old["report"])



def test_opensearch_golden_output_over_many_scroll_pages(os_url, monkeypatch):
    """The small mesh fits in one scroll page; with pages of 7 hits every scroll of the latest
    index (the two disjoint latest scans, gains, latency) runs over many pages, each read
    ahead while the last one is handled: the report must not change."""
    from jumbo.archive.opensearch import search as reader  # SCROLL_PAGE lives in search
    monkeypatch.setattr(reader, "SCROLL_PAGE", 7)
    with open(GOLDEN) as handle:
        golden = json.load(handle)
    assert golden_reports(os_url) == golden


def test_opensearch_latest_documents_without_packed_fields(opensearch_url, records, monkeypatch):
    """A store set up before template version 4: latest documents without `row_v1` or
    `locate_v1` (here some of each, as after an upgrade while the mesh archives) are read from
    their _source, over many scroll pages; the report is the golden one."""
    from jumbo.archive.stores import open_store
    from jumbo.archive.opensearch import search as reader  # SCROLL_PAGE lives in search
    from jumbo.archive.record import epoch_ms
    prefix = "nopack%s_" % uuid.uuid4().hex[:6]
    url = "%s/?prefix=%s" % (opensearch_url, prefix)
    _load(url, records)
    store = open_store(url)
    try:
        index = prefix + "jumbo_latest"
        status, parsed = store.request("POST", "/%s/_search" % index,
                                       {"size": 10000, "sort": [{"path": "asc"}]})
        assert status == 200
        hits = parsed["hits"]["hits"]
        lines = []
        for i, hit in enumerate(hits):
            drop = [field for field, gone in (("row_v1", i % 2 == 0), ("locate_v1", i % 3 == 1))
                    if gone]
            if not drop:
                continue
            body = dict(hit["_source"])
            for field in drop:
                del body[field]
            lines.append(json.dumps({"index": {"_index": index, "_id": hit["_id"],
                                               "version": epoch_ms(body["start"]),
                                               "version_type": "external_gte"}}))
            lines.append(json.dumps(body))
        status, parsed = store.request("POST", "/_bulk?refresh=true", "\n".join(lines) + "\n",
                                       ndjson=True)
        assert status == 200 and not parsed["errors"]
        for field, kept in (("row_v1", len(hits) // 2), ("locate_v1", len(hits) - len(hits[1::3]))):
            status, parsed = store.request("POST", "/%s/_count" % index, {
                "query": {"exists": {"field": field}}})
            assert parsed["count"] == kept, field
        monkeypatch.setattr(reader, "SCROLL_PAGE", 7)
        with open(GOLDEN) as handle:
            golden = json.load(handle)
        assert golden_reports(url) == golden
    finally:
        drop_prefix(store, prefix)


def test_sqlite_summaries_old_store_and_upgrade(tmp_path, records):
    """A version-1 store (no summary tables, no latest_rows) is reported from its history and
    the latest/results join; opened once by a version-4 writer it gets the summaries, filled
    from that history, counted exactly like the ones the trigger keeps, latest_rows, the
    same rows the triggers keep, and the evidence of partial black holes, the same as the
    triggers keep; both give the golden report."""
    import sqlite3
    from jumbo.archive.queries import open_queries
    from jumbo.archive.stores import open_store
    path = str(tmp_path / "old.db")
    url = "sqlite:///" + path
    _load(url, records)
    conn = sqlite3.connect(path)
    kept = {t: sorted(conn.execute("SELECT * FROM %s" % t), key=repr)
            for t in ("pmtu_days", "pmtu_path_states", "latest_rows", "pmtu_evidence",
                      "pmtu_evidence_clean")}
    # the mesh's partial black hole, seen every day
    assert [r[:2] for r in kept["pmtu_evidence"]] == [("%s|%s|4|pmtu" % MESH.special["partial"],
                                                         MESH.days)]
    assert sum(r[-3] for r in kept["pmtu_days"]) == sum(1 for r in records if r["test_type"] == "pmtu")
    assert len(kept["latest_rows"]) == conn.execute("SELECT COUNT(*) FROM latest").fetchone()[0]
    assert len(kept["latest_rows"]) >= MESH.expected()["paths"]
    conn.executescript("DROP TRIGGER results_pmtu_summary; DROP TABLE pmtu_days; "
                       "DROP TABLE pmtu_path_states; DROP TRIGGER latest_rows_insert; "
                       "DROP TRIGGER latest_rows_update; DROP TABLE latest_rows; "
                       "DROP TRIGGER results_pmtu_evidence; DROP TRIGGER results_pmtu_clean; "
                       "DROP TABLE pmtu_evidence; DROP TABLE pmtu_evidence_clean; "
                       "PRAGMA user_version = 1;")
    conn.close()
    with open(GOLDEN) as handle:
        golden = [g["report"] for g in json.load(handle)]
    queries = open_queries(url)
    assert not queries.has_summary and not queries.has_latest_rows
    queries.close()
    assert [g["report"] for g in golden_reports(url)] == golden
    open_store(url).close()          # the upgrade
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 4
    assert {t: sorted(conn.execute("SELECT * FROM %s" % t), key=repr) for t in kept} == kept
    conn.close()
    queries = open_queries(url)
    assert queries.has_summary and queries.has_latest_rows
    queries.close()
    assert [g["report"] for g in golden_reports(url)] == golden


if __name__ == "__main__" and sys.argv[1:] == ["--write-golden"]:
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        url = "sqlite:///" + os.path.join(tmp, "golden.db")
        _load(url, list(MESH.records()))
        os.makedirs(os.path.dirname(GOLDEN), exist_ok=True)
        with open(GOLDEN, "w") as handle:
            json.dump(golden_reports(url), handle, indent=1, sort_keys=True)
            handle.write("\n")
    print("wrote", GOLDEN)
