"""jumbo-alarms' events name what a ticket needs (issue 31): the path, its family, both
directions' path MTU before and now, the size that failed and the culprit hop, in the body,
the JSON line and the indexed document alike (every fact a field of the suite's own mapping);
one alarm per path and family (a flapping IPv4 path does not hide its IPv6 twin)."""

import datetime
import json

from fixtures import synth
from jumbo.archive.query_base import Latest
from jumbo.report import alarms, alarms_index, model
from jumbo.report.alarms_cli import run as alarms_run
import store_fixtures

DAYS = 14
START = (datetime.datetime.utcnow() - datetime.timedelta(days=DAYS - 1)).strftime("%Y-%m-%d")
MESH = synth.Mesh.small(days=DAYS, start=START)
FIREWALL = MESH.site_ip("SITE-E", 2)

sqlite_url, os_url, store_url = store_fixtures.both_stores(MESH.records, "almtxt")


def _events(url, tmp_path, *extra):
    return alarms_run(["--store", url, "--state", str(tmp_path / "state.json"),
                       "--out", str(tmp_path / "alarms.jsonl")] + list(extra))


def _history(src, dst):
    """The synthetic mesh's own truth for one path: its path MTU each way (the reverse one is
    the reverse path's) the day before the regression and now."""
    def both(day):
        return (MESH.truth(src, dst, day)["path_mtu"], MESH.truth(dst, src, day)["path_mtu"])
    return both(MESH.regress_day - 1), both(None)


def test_path_events_name_path_family_mtus_and_hop(store_url, tmp_path):
    events = _events(store_url, tmp_path)
    paths = [e for e in events if e["event"] == "jumbo path regressed"]
    assert len(paths) == 2
    for e in paths:
        s = e["source"]
        before, now = _history(s["src_host"], s["dest_host"])
        # the numbers are the store's results', as the mesh made them
        assert (s["from_path_mtu"], s["from_reverse_path_mtu"]) == before
        assert (s["path_mtu"], s["reverse_path_mtu"]) == now
        assert min(s["path_mtu"], s["reverse_path_mtu"]) == 1500
        body = e["body"]
        assert body.startswith("jumbo path regressed to standard: %s -> %s (IPv4): " % (
            s["src_host"], s["dest_host"])), body
        assert "path MTU %d -> %d, reverse %d -> %d" % (
            s["from_path_mtu"], s["path_mtu"], s["from_reverse_path_mtu"], s["reverse_path_mtu"]) in body
        if s["path_mtu"] == 1500:          # this direction's own hops show where it drops
            assert s["hop_ip"] and s["hop_mtu"] == 1500, s
            assert "at hop %s (TTL %d), MTU 1500" % (s["hop_ip"], s["hop_ttl"]) in body
    hop = next(e for e in events if e["event"] == "MTU black hole shared by multiple sites")
    s = hop["source"]
    assert s["hop_ip"] == FIREWALL and s["size"] and s["path_mtu"]
    assert hop["body"].startswith("MTU black hole at hop %s (IPv4, TTL %s) on 16 paths of 5 sites; "
                                  "%d-byte packets lost; path MTU %d, e.g. " % (
                                      FIREWALL, "/".join(map(str, s["hop_ttl"])), s["size"],
                                      s["path_mtu"])), hop["body"]
    # every fact of every event is a field of the suite's mapping (dynamic: false would keep an
    # unlisted one in _source only, never searchable)
    mapped = alarms_index.MAPPING["properties"]["source"]["properties"]
    for e in events:
        assert set(e["source"]) <= set(mapped), sorted(set(e["source"]) - set(mapped))
        assert set(e) - {"source"} <= set(alarms_index.MAPPING["properties"])


def test_site_events_name_their_paths(sqlite_url, tmp_path):
    events = _events(sqlite_url, tmp_path, "--hop-min-sites", "6", "--min-sites", "1")
    assert sorted(e["tags"][0] for e in events) == ["SITE-A", "SITE-F"]
    for e in events:
        assert e["body"].startswith("jumbo regressed on 2 IPv4 paths from/to %s and 1 other site "
                                    "(2 to standard), e.g. " % e["tags"][0]), e["body"]
        assert len(e["source"]["pairs"]) == 2 and "path MTU 9000 -> " in e["body"]


def test_index_documents_carry_the_same_facts_searchable(os_url, tmp_path):
    """An index made under the template's first version (without the MTU fields) is brought
    up to date: the documents are found by the MTUs the body names."""
    from jumbo.archive.stores import open_store
    store = open_store(os_url)
    index = store.name(alarms_index.ALARMS_INDEX)
    old = json.loads(json.dumps(alarms_index.MAPPING))
    for field in ("from_path_mtu", "from_reverse_path_mtu", "reverse_path_mtu", "hop_mtu"):
        old["properties"]["source"]["properties"].pop(field, None)
    old["_meta"]["version"] = 1
    try:
        status, _ = store.request("PUT", "/_index_template/" + index, dict(
            alarms_index.template(index), version=1, template={"mappings": old}))
        assert status == 200
        assert store.request("PUT", "/" + index, {"mappings": old})[0] == 200
        events = _events(os_url, tmp_path, "--index")
        paths = [e for e in events if e["event"] == "jumbo path regressed"]
        assert len(paths) == 2
        for e in paths:
            s = e["source"]
            query = {"query": {"bool": {"filter": [
                {"term": {"source.src_host": s["src_host"]}},
                {"term": {"source.from_path_mtu": s["from_path_mtu"]}},
                {"term": {"source.reverse_path_mtu": s["reverse_path_mtu"]}}]}}}
            status, doc = store.request("POST", "/%s/_search" % index, query)
            assert status == 200
            hits = doc["hits"]["hits"]
            assert [h["_id"] for h in hits] == [s["alarm_id"]], doc
            assert hits[0]["_source"]["body"] == e["body"]
            assert hits[0]["_source"]["source"] == s
    finally:
        store.request("DELETE", "/" + index)
        store.request("DELETE", "/_index_template/" + index)
        store.close()


def _path(src, dst, version, state, mtu, reverse_mtu, hops=None):
    row = Latest(src, dst, version, None, None, src[:1], dst[:1], "2026-11-20T00:00:00Z", True,
                 None, mtu, 9000, "ok", False, None, None, None, reverse_mtu, None, hops, 1)
    return model.Path(src, dst, version, src[:1], dst[:1], row.start, mtu, reverse_mtu, True, 9000,
                      "ok", False, False, False, state == "jumbo", state, (), True, row)


def test_one_alarm_per_path_and_family():
    """a -> b regressed in both families; only its IPv4 twin flaps: the IPv6 path's alarm
    is raised (the flapping list is per family, as the report keys it)."""
    change = {"source": "a", "dest": "b", "from": "jumbo", "to": "standard",
              "start": "2026-11-19T00:00:00Z", "from_mtu": 9000, "to_mtu": 1500,
              "from_reverse_mtu": 9000, "to_reverse_mtu": 9000}
    report = {"changes": [dict(change, ip_version=4), dict(change, ip_version=6)],
              "flapping": [{"source": "a", "dest": "b", "ip_version": 4, "changes": 5}]}
    collector = alarms.Collector()

    class Opts(object):
        target = 9000
    collector(report, [_path("a", "b", 4, "standard", 1500, 9000),
                       _path("a", "b", 6, "standard", 1500, 9000)], {}, Opts())
    got = alarms.events(report, collector, ("x", "y"))
    assert [(e["source"]["ipv"], e["body"]) for _k, e in got] == [
        ("ipv6", "jumbo path regressed to standard: a -> b (IPv6): path MTU 9000 -> 1500, "
                 "reverse 9000 -> 9000")]
