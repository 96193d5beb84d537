"""The report's `used` from the fireflies the collector stored (jumbo-report --fireflies), on
both stores: the synthetic mesh's results, and firefly sums of a known truth between its
sites; the headline, the section, the CSV rows and the HTML say the source and the bytes with
no MSS; sums outside the window and between unmapped sites are not counted; without
--fireflies the report is as before."""

import datetime
import json
import sqlite3
import time

from fixtures import synth
from jumbo.archive.firefly_store import open_fireflies
from jumbo.report.cli import main as cli_main
import store_fixtures

START = (datetime.datetime.utcnow() - datetime.timedelta(days=6)).strftime("%Y-%m-%d")
MESH = synth.Mesh.small(days=7, start=START)
sqlite_url, os_url, store_url = store_fixtures.both_stores(MESH.records, "ffu")

NOW = time.time()
# (src, dst, version): [jumbo, standard, unknown-MSS bytes, flows], in two flushes of an hour ago.
TRUTH = {("SITE-A", "SITE-B", 4): [8e9, 2e9, 1e9, 40], ("SITE-A", "SITE-B", 6): [0, 3e9, 0, 9],
         ("SITE-C", "SITE-A", 4): [1e9, 0, 5e8, 7]}
UNMAPPED = {("SITE-A", "", 4): [9e9, 0, 0, 1]}
OLD = {("SITE-A", "SITE-B", 4): [0, 7e12, 0, 1]}       # 30 days ago: outside the window


def _store_fireflies(url):
    store = open_fireflies(url)
    try:
        half = {k: [int(x / 2) for x in v[:3]] + [v[3]] for k, v in TRUTH.items()}
        store.write(NOW - 3720, NOW - 3660, "c1:10514", dict(list(half.items()) + list(UNMAPPED.items())))
        store.write(NOW - 3660, NOW - 3600, "c1:10514", {k: [int(x / 2) for x in v[:3]] + [0]
                                                         for k, v in TRUTH.items()})
        store.write(NOW - 30 * 86400, NOW - 30 * 86400 + 60, "c1:10514", OLD)
    finally:
        store.close()


def report(url, tmp_path, *extra, fmt="json"):
    out = tmp_path / ("r." + fmt)
    assert cli_main(["--store", url, "--format", fmt, "--out", str(out)] + list(extra)) == 0
    return json.loads(out.read_text()) if fmt == "json" else out.read_text()


def test_used_from_fireflies_matches_the_truth(store_url, tmp_path):
    before = report(store_url, tmp_path)
    _store_fireflies(store_url)
    try:
        r = report(store_url, tmp_path, "--fireflies")
        f = r["fireflies"]
        jumbo = sum(v[0] for v in TRUTH.values())
        standard = sum(v[1] for v in TRUTH.values())
        unknown = sum(v[2] for v in TRUTH.values())
        assert (f["jumbo_bytes"], f["standard_bytes"], f["unknown_mss_bytes"]) == (jumbo, standard, unknown)
        assert f["used"] == jumbo / (jumbo + standard)
        assert f["unknown_mss_share"] == unknown / (jumbo + standard + unknown)
        assert f["used_low"] == jumbo / (jumbo + standard + unknown)
        assert f["used_high"] == (jumbo + unknown) / (jumbo + standard + unknown)
        assert f["unmapped_bytes"] == 9e9
        assert f["by_ip_version"]["ipv6"]["used"] == 0.0
        assert f["by_ip_version"]["ipv4"]["used"] == 9e9 / 11e9
        assert r["used"] == f["used"] and r["used_source"] == "fireflies"
        assert all(s["traffic"] == f["used"] for s in r["status"])
        cells = {(c["source_site"], c["dest_site"], c["ip_version"]): c for c in f["cells"]}
        assert set(cells) == set(TRUTH)
        for key, (j, s, u, n) in TRUTH.items():
            c = cells[key]
            assert (c["jumbo_bytes"], c["standard_bytes"], c["unknown_mss_bytes"], c["flows"]) == (j, s, u, n)
            assert c["source"] == "fireflies"
        # The rest of the report is what it was without --fireflies.
        for key in ("paths", "capable", "configured", "blackholes"):
            assert r[key] == before[key]
        assert "fireflies" not in before and before["used"] is None
        text = report(store_url, tmp_path, "--fireflies", fmt="text")
        assert ("used         64.3%  of bytes sent with a known MSS on jumbo-sized segments (fireflies; "
                "IPv4 81.8%, IPv6 0.0%); 1.5 GB of 15.5 GB had no MSS (9.7%): 58.1% to 67.7%") in text
        assert "Traffic from fireflies" in text and "SITE-A -> SITE-B" in text
        csv_text = report(store_url, tmp_path, "--fireflies", fmt="csv")
        assert "fireflies,mesh,unknown_mss_bytes,1500000000" in csv_text
        assert "fireflies,SITE-A->SITE-B/ipv6,standard_bytes,3000000000" in csv_text
        html = report(store_url, tmp_path, "--fireflies", fmt="html")
        assert 'id="fireflies"' in html and "had no MSS" in html
    finally:
        _drop_fireflies(store_url)


def _drop_fireflies(url):
    store = open_fireflies(url)
    if hasattr(store, "client"):
        store.client.request("DELETE", "/" + store.index)
    else:
        with sqlite3.connect(store.path) as db:
            db.execute("DELETE FROM firefly_bytes")
    store.close()


def test_no_fireflies_stored_gives_no_used(sqlite_url, tmp_path):
    r = report(sqlite_url, tmp_path, "--fireflies")
    assert r["fireflies"]["used"] is None and r["fireflies"]["bytes"] == 0
    assert r["used"] is None and r.get("used_source") is None


def test_the_targets_distance_counts_the_fireflies_bytes(sqlite_url, tmp_path):
    """With `used` from the fireflies, DC26/DC28's distance is in their bytes (those with a
    known MSS, which the used share is counted on), per week over the report's window; on
    the code before it fell back to paths ('N more paths both ways')."""
    _store_fireflies(sqlite_url)
    try:
        r = report(sqlite_url, tmp_path, "--fireflies")
        f = r["fireflies"]
        known = f["jumbo_bytes"] + f["standard_bytes"]
        assert known == 14e9 and f["jumbo_bytes"] == 9e9
        due = {t["target"]: t for t in r["targets_due"]}
        dc26, dc28 = due["DC26"], due["DC28"]
        assert dc26["counted_on"] == dc28["counted_on"] == \
            "traffic (fireflies, bytes with a known MSS)"
        assert dc26["current"] == dc28["current"] == f["used"]
        assert (dc26["met"], dc26["distance"]["bytes"], dc26["distance"]["paths"]) == (True, 0.0, None)
        assert dc28["met"] is False
        assert abs(dc28["distance"]["bytes"] - (0.99 * known - 9e9)) < 1.0
        days = (datetime.datetime.strptime(f["to"], "%Y-%m-%dT%H:%M:%SZ")
                - datetime.datetime.strptime(f["from"], "%Y-%m-%dT%H:%M:%SZ")).total_seconds() / 86400.0
        assert abs(dc28["distance"]["bytes_per_week"] - dc28["distance"]["bytes"] * 7 / days) < 1.0
        assert dc28["distance_text"].endswith("TB/week more on jumbo")
    finally:
        _drop_fireflies(sqlite_url)


def test_the_trend_shows_the_fireflies_used_share_per_bucket(sqlite_url, tmp_path):
    """Each trend bucket gets the used share of the fireflies stored in its own period: the
    day of the two flushes 64.3 % (9 of 14 GB with a known MSS, 1.5 GB without), the other
    days none (no bytes: no share); in the text, CSV and the page's legend (on the code before
    the trend had no used share from the fireflies)."""
    _store_fireflies(sqlite_url)
    try:
        r = report(sqlite_url, tmp_path, "--fireflies")
        day = datetime.datetime.utcfromtimestamp(NOW - 3600).strftime("%Y-%m-%d")
        buckets = {b["bucket"]: b for b in r["trend"]["buckets"]}
        b = buckets[day]
        assert (b["used_share"], b["used_source"], b["traffic_bytes"], b["unknown_mss_bytes"]) == (
            9e9 / 14e9, "fireflies", 14e9, 1.5e9)
        assert all(x["used_share"] is None for k, x in buckets.items() if k != day)
        text = report(sqlite_url, tmp_path, "--fireflies", fmt="text")
        assert "; used 64.3% of bytes (fireflies)" in [x for x in text.splitlines()
                                                       if x.startswith("  " + day)][0]
        csv_text = report(sqlite_url, tmp_path, "--fireflies", fmt="csv")
        assert "trend,%s,used_source,fireflies" % day in csv_text
        html = report(sqlite_url, tmp_path, "--fireflies", fmt="html")
        assert "used (bytes, fireflies)" in html
    finally:
        _drop_fireflies(sqlite_url)
