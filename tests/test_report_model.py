"""The report's model (jumbo.report.model, path_record, culprits, change_list) on a small
dual-stack mesh with a known truth, on both stores: one meaning per number, the IP family on
every path, the per-path list, changes that a flapping path cannot bury, the end hosts named.

The mesh (12 days, one run per path and day, 2026-11-01 ..):
  ral <-> bnl   IPv4 and IPv6 both ways: black holes at the same hop, the v4 one at hop 3
                (198.18.9.1), the v6 one at hop 4 (fd00:9::1): two black holes, never one
  cern -> ral   IPv4 only, 9000 out; ral -> cern never measured: jumbo one way, not capable
  f0..f9 <-> kit, IPv4: jumbo both ways until day 6, when the ten f -> kit paths regress to
                1500 (and stay there): ten regressions on one day
  flap <-> kit  IPv4: 9000 on even days, 1500 on odd days (11 changes each way)
  tiny <-> kit  IPv4: tiny's own interface is 1500 (local MTU), both ways 1500
"""

import csv
import html
import io
import json

import pytest

import store_fixtures
from jumbo.report import build_report as build
from jumbo.report.html import to_html
from jumbo.report.render import to_csv, to_json, to_text

DAYS = 12
REGRESS_DAY = 6
SITES = {"ral": "RAL", "bnl": "BNL", "cern": "CERN", "kit": "KIT", "flap": "FLAP", "tiny": "TINY"}
SITES.update(("f%d" % i, "F%d" % i) for i in range(10))


def _rec(source, dest, day, ipv=4, **fields):
    rec = {"id": "%s-%s-%d-%d" % (source, dest, ipv, day), "test_type": "pmtu", "source": source,
           "dest": dest, "ip_version": ipv, "start": "2026-11-%02dT%02d:%02d:00Z" % (
               day + 1, 1 + len(source) % 20, (len(dest) * 7 + ipv) % 60),
           "succeeded": True, "path_mtu": 9000, "local_mtu": 9000, "target_mtu": 9000,
           "pmtud": "not-needed", "partial": False, "flows": 4, "blackhole_flows": 0,
           "source_site": SITES[source], "dest_site": SITES[dest],
           "source_ip": "198.18.1.%d" % (len(source)) if ipv == 4 else "fd00:1::%d" % len(source),
           "dest_ip": "198.18.2.%d" % (len(dest)) if ipv == 4 else "fd00:2::%d" % len(dest)}
    rec.update(fields)
    return rec


def _hole(ttl, ip):
    return {"path_mtu": 1500, "pmtud": "blackhole", "blackhole_ttl": ttl, "blackhole_ip": ip,
            "blackhole_size": 9000}


def truth(source, dest, ipv, day):
    """What a run of that path on that day returns (the record's fields), None if no run."""
    if {source, dest} == {"ral", "bnl"}:
        return _hole(3, "198.18.9.1") if ipv == 4 else _hole(4, "fd00:9::1")
    if ipv == 6:
        return None
    if (source, dest) == ("cern", "ral"):
        return {}
    if (source, dest) == ("ral", "cern"):
        return None
    if source.startswith("f") and source != "flap" and dest == "kit":
        return {"path_mtu": 1500, "pmtud": "ok"} if day >= REGRESS_DAY else {}
    if "flap" in (source, dest):
        return {} if day % 2 == 0 else {"path_mtu": 1500, "pmtud": "ok"}
    if "tiny" in (source, dest):
        return {"path_mtu": 1500, "pmtud": "not-needed" if source == "tiny" else "ok",
                "local_mtu": 1500 if source == "tiny" else 9000}
    return {}


PAIRS = ([("ral", "bnl"), ("bnl", "ral"), ("cern", "ral"), ("flap", "kit"), ("kit", "flap"),
          ("tiny", "kit"), ("kit", "tiny")]
         + [(f, "kit") for f in ("f%d" % i for i in range(10))]
         + [("kit", f) for f in ("f%d" % i for i in range(10))])


def records():
    out = []
    for day in range(DAYS):
        for source, dest in PAIRS:
            for ipv in (4, 6):
                fields = truth(source, dest, ipv, day)
                if fields is not None:
                    out.append(_rec(source, dest, day, ipv, **fields))
    return out


sqlite_url, os_url, store_url = store_fixtures.both_stores(records, "rmodel")


def _paths(r):
    """The JSON's per-path list (columnar: `path_fields` names each row's values) by path."""
    j = json.loads(to_json(r))
    records = [dict(zip(j["path_fields"], row)) for row in j["paths"]]
    return {(p["source"], p["dest"], p["ip_version"]): p for p in records}


def test_the_per_path_list_against_the_truth(store_url):
    r = build(store_url)
    listed = _paths(r)
    measured = set((s, d, v) for s, d in PAIRS for v in (4, 6)
                   if truth(s, d, v, DAYS - 1) is not None)
    assert set(listed) == measured and r["paths_measured"] == len(measured) == 29
    v4, v6 = listed[("ral", "bnl", 4)], listed[("ral", "bnl", 6)]
    assert (v4["family"], v4["state"], v4["culprit_hop_ip"], v4["culprit_hop_ttl"]) == (
        "IPv4", "blackhole", "198.18.9.1", 3)
    assert (v6["family"], v6["state"], v6["culprit_hop_ip"], v6["culprit_hop_ttl"]) == (
        "IPv6", "blackhole", "fd00:9::1", 4)
    one_way = listed[("cern", "ral", 4)]
    assert (one_way["state"], one_way["capable"], one_way["reverse_measured"],
            one_way["path_mtu"], one_way["reverse_path_mtu"]) == ("jumbo-one-way", False, False,
                                                                 9000, None)
    tiny = listed[("kit", "tiny", 4)]
    assert (tiny["limiting_host"], tiny["limiting_host_mtu"]) == ("tiny", 1500)
    assert listed[("tiny", "kit", 4)]["limiting_host"] == "tiny"
    regressed = listed[("f3", "kit", 4)]
    assert (regressed["state"], regressed["path_mtu"], regressed["reverse_path_mtu"]) == (
        "standard", 1500, 9000)
    assert listed[("kit", "f3", 4)]["state"] == "standard"      # its reverse is 1500
    assert listed[("flap", "kit", 4)]["last_measured"][:10] == "2026-11-%02d" % DAYS
    # every record has every field, in the documented order
    from jumbo.report.path_record import FIELDS
    j = json.loads(to_json(r))
    assert j["path_fields"] == list(FIELDS) and all(len(row) == len(FIELDS) for row in j["paths"])


def test_one_meaning_per_number(store_url):
    r = build(store_url)
    # 29 paths: 28 measured both ways (a reflector or the reverse path's own run), one not
    assert (r["paths_both_ways"], r["paths_one_way"], r["jumbo_one_way_paths"]) == (28, 1, 1)
    capable = [k for k, p in _paths(r).items() if p["capable"]]
    # day 11 is odd: flap is 1500; the f paths regressed; tiny, ral<->bnl fail; cern->ral one way
    assert capable == [] and r["capable_paths"] == 0 and r["capable"] == 0.0
    buckets = r["trend"]["buckets"]
    assert [b["results"] for b in buckets] == [29] * DAYS
    # the trend counts results: day 0 has 20 f<->kit + 2 flap + cern->ral (one way) jumbo runs
    assert buckets[0]["jumbo_results"] == 23
    assert buckets[0]["jumbo_results_share"] == pytest.approx(23 / 29.0)
    assert "capable" not in buckets[0] and "capable_share" not in buckets[0]
    text = to_text(r)
    assert "share of results (runs, not paths)" in text
    assert "paths measured both ways 28, one way only 1" in text
    rows = {(x["section"], x["item"], x["metric"]): x["value"]
            for x in csv.DictReader(io.StringIO(to_csv(r)))}
    assert rows[("summary", "mesh", "paths_one_way")] == "1"
    assert rows[("trend", "2026-11-01", "jumbo_results")] == "23"


def test_no_target_is_met_while_a_path_lacks_its_reverse(tmp_path):
    """Every path measured one way, all at 9000: the capable share is 0, and DC26/DC28 are
    not met (on the code before, reverse never measured counted as capable both ways: 100 %,
    'paths met')."""
    url = "sqlite:///" + str(tmp_path / "one-way.db")
    store_fixtures.load(url, [_rec("cern", "ral", 0, v) for v in (4, 6)])
    r = build(url)
    assert [s["paths_met"] for s in r["status"]] == [False, False]
    assert (r["capable"], r["paths_one_way"], r["jumbo_one_way_paths"]) == (0.0, 2, 2)
    # and with its reverse measured by the reflector, it is capable and the targets are met
    store_fixtures.load(url, [_rec("cern", "ral", 1, v, reverse_path_mtu=9000, reverse_pmtud="ok")
                              for v in (4, 6)])
    r = build(url)
    assert (r["capable"], r["paths_one_way"]) == (1.0, 0)
    assert [s["paths_met"] for s in r["status"]] == [True, True]


def test_a_reverse_named_by_address_is_the_same_path(tmp_path):
    """pScheduler names a run's source by the node's name and the task its dest by address:
    a -> 198.18.2.2 and b -> 198.18.2.1 are one path's two directions, matched by the hosts'
    addresses (on the code before: both 'jumbo-one-way', capable 0)."""
    url = "sqlite:///" + str(tmp_path / "named.db")
    a, b = "198.18.2.1", "198.18.2.2"
    def rec(source, dest, source_ip, dest_ip):
        # the site labels from the names, the dest then named by its address
        return dict(_rec(source, dest, 0), dest=dest_ip, source_ip=source_ip, dest_ip=dest_ip)
    store_fixtures.load(url, [rec("ral", "bnl", a, b), rec("bnl", "ral", b, a),
                              rec("cern", "kit", "198.18.2.8", "198.18.2.9")])
    r = build(url)
    assert (r["paths_measured"], r["paths_one_way"]) == (3, 1)
    states = dict(((p.source, p.dest), p.state) for p in r["paths"])
    assert states == {("ral", b): "jumbo", ("bnl", a): "jumbo",
                      ("cern", "198.18.2.9"): "jumbo-one-way"}, states


def test_the_family_keeps_ipv4_and_ipv6_apart(store_url):
    r = build(store_url)
    # four black holes, four CSV keys (the code before keyed both families 'ral->bnl')
    items = set(x["item"] for x in csv.DictReader(io.StringIO(to_csv(r)))
                if x["section"] == "blackhole")
    assert items == {"ral->bnl IPv4", "ral->bnl IPv6", "bnl->ral IPv4", "bnl->ral IPv6"}
    holes = [(b["source"], b["dest"], b["family"], b["hop_ip"]) for b in r["blackholes"]]
    assert sorted(holes) == [("bnl", "ral", "IPv4", "198.18.9.1"), ("bnl", "ral", "IPv6", "fd00:9::1"),
                             ("ral", "bnl", "IPv4", "198.18.9.1"), ("ral", "bnl", "IPv6", "fd00:9::1")]
    text = to_text(r)
    assert "  ral -> bnl IPv4  [RAL -> BNL]" in text and "  ral -> bnl IPv6  [RAL -> BNL]" in text
    page = to_html(r)
    assert "<th>family</th>" in page and "<td>IPv6</td>" in page
    flapping = [(f["source"], f["family"]) for f in r["flapping"]]
    assert sorted(flapping) == [("flap", "IPv4"), ("kit", "IPv4")]


def test_a_flapping_path_does_not_bury_a_regression_of_ten_paths(store_url):
    # 22 newer changes of the two flapping paths, 10 regressions on one day: within a limit
    # of 10 changes the regressions are still all there
    r = build(store_url, limit=10)
    day = r["change_days"][0]
    assert (day["day"], day["regressions"]) == ("2026-11-%02d" % (REGRESS_DAY + 1), 10)
    assert sorted(day["regressed"]) == sorted("f%d -> kit IPv4" % i for i in range(10))
    # the flapping paths' changes are in the flapping list only, with their count
    assert {(f["source"], f["changes"]) for f in r["flapping"]} == {("flap", DAYS - 1),
                                                                   ("kit", DAYS - 1)}
    assert not [c for c in r["changes"] if "flap" in (c["source"], c["dest"])]
    regress = [c for c in r["changes"] if c["source"] == "f3"]
    assert [(c["from"], c["to"], c["from_mtu"], c["to_mtu"], c["family"]) for c in regress] == [
        ("jumbo", "standard", 9000, 1500, "IPv4")]
    text = to_text(r)
    summary = text.index("2026-11-%02d  10 paths lost the target" % (REGRESS_DAY + 1))
    assert summary < text.index("Flapping paths")
    assert "path MTU 9000 -> 1500, reverse -" not in text      # no reverse measured, none shown
    assert "jumbo -> standard  path MTU 9000 -> 1500" in text


def test_the_hosts_limiting_paths_are_named(store_url):
    r = build(store_url)
    assert r["limiting_hosts"] == [{"host": "tiny", "ip_version": 4, "family": "IPv4",
                                    "site": "TINY", "interface_mtu": 1500, "paths": 2}]
    assert r["host_limited"] == 2
    line = "2 failing paths are limited by an end host's own MTU (configuration, not a hop): " \
           "tiny (IPv4, MTU 1500, 2 paths)"
    assert line in to_text(r)
    assert line in html.unescape(to_html(r))


def test_a_site_page_draws_the_trend_of_its_own_paths(store_url):
    """--site KIT: the trend counts the results of KIT's paths only (f0..f9, flap and tiny
    with kit, both ways: 24 a day, 22 of them jumbo on day 0), not the mesh's 29 and 23 (on
    the code before, a site's page drew the whole mesh's trend)."""
    r = build(store_url, site="KIT")
    buckets = r["trend"]["buckets"]
    assert [b["results"] for b in buckets] == [24] * DAYS
    assert buckets[0]["jumbo_results"] == 22
    # day 11: the ten f -> kit paths regressed, flap is 1500 (odd day): kit -> f* only
    assert buckets[-1]["jumbo_results"] == 10
    assert r["paths_measured"] == 24
    text = to_text(r)
    assert "site KIT's hosts' results" in text
