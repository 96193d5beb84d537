"""lab/real_mesh.py without root: the reduced topology keeps the demo's truth, and the template
the agents read is the shipped one with only the lab's addresses, archive URL and hourly
schedule changed."""

import copy
import json

import pytest

from demo import mesh as demo_mesh
from lab import real_mesh

SHIPPED = json.load(open(real_mesh.TEMPLATE))


def _by_router(topo, truth):
    truth = copy.deepcopy(truth)
    for item in [truth] + truth["members"]:
        item["blackhole-ip"] = demo_mesh.node_of(topo, item["blackhole-ip"]) \
            if item["blackhole-ip"] else None
    return truth


@pytest.mark.parametrize("sites", [real_mesh.DEMO_SITES, real_mesh.TEST_SITES,
                                   real_mesh.CI_SITES])
def test_reduced_topology_keeps_every_pairs_truth(sites):
    full = demo_mesh.build()
    reduced = real_mesh.topology(sites)
    for source, dest in real_mesh.pairs(sites):
        for version in (4, 6):
            # Link addresses differ (fewer links); the router each address names must not.
            assert _by_router(reduced, reduced.truth(source, dest, version)) == \
                _by_router(full, full.truth(source, dest, version))
    assert "tokyo" not in reduced.nodes and "tk2" not in reduced.nodes
    for site in sites:
        assert reduced.address(site) == reduced.address(site, 4)  # the site's own link first


def test_the_reduced_mesh_still_shows_every_failure_the_issue_asks_for():
    topo = real_mesh.topology(real_mesh.DEMO_SITES)
    assert topo.truth("cern", "desy")["path-mtu"] == 1500                   # a 1500 site
    assert topo.truth("desy", "cern")["local-mtu"] == 1500
    ral = topo.truth("ral", "cern")                                         # ECMP member hole
    assert ral["pmtud"] == "blackhole" and ral["partial"] and ral["bad-share"] == 0.5
    nikhef = topo.truth("cern", "nikhef")                                   # 8950, PMTUD works
    assert (nikhef["path-mtu"], nikhef["pmtud"]) == (8950, "ok")
    assert topo.truth("bnl", "cern")["path-mtu"] == 9000                    # asymmetric
    assert topo.truth("cern", "bnl")["path-mtu"] == 1500
    assert topo.truth("cern", "ral")["path-mtu"] == 8950


def test_the_ci_instance_keeps_the_1500_site_and_the_ecmp_hole_in_both_families():
    topo = real_mesh.topology(real_mesh.CI_SITES)
    for version in (4, 6):
        assert topo.truth("cern", "desy", version)["path-mtu"] == 1500          # the 1500 site
        assert topo.truth("desy", "cern", version)["local-mtu"] == 1500
        hole = topo.truth("ral", "cern", version)                               # ECMP member
        assert hole["pmtud"] == "blackhole" and hole["partial"]
        assert topo.truth("cern", "ral", version)["path-mtu"] == 8950


def test_archive_host_is_off_every_sites_path():
    topo = real_mesh.topology(real_mesh.TEST_SITES)
    for source, dest in real_mesh.pairs(real_mesh.TEST_SITES):
        for path in topo.paths(source, dest):
            assert real_mesh.ARCHIVE not in path


def test_unknown_site_is_refused():
    with pytest.raises(ValueError, match="tokyo"):
        real_mesh.topology(("cern", "tokyo"))


def test_template_changes_only_addresses_archive_url_and_hourly_schedule():
    sites = real_mesh.TEST_SITES
    topo = real_mesh.topology(sites)
    served = real_mesh.template(topo, sites, "http://198.18.18.1:9271", "PT10M", "PT4M")
    names = sorted(real_mesh.TEMPLATE_NAMES[s] for s in sites)
    assert sorted(served["addresses"]) == names
    assert sorted(served["hosts"]) == names
    assert [a["name"] for a in served["groups"]["lhcone-mesh"]["addresses"]] == \
        [a["name"] for a in SHIPPED["groups"]["lhcone-mesh"]["addresses"] if a["name"] in names]
    for name in names:
        assert served["addresses"][name] == SHIPPED["addresses"][name]
    assert served["tests"] == SHIPPED["tests"]
    assert served["tasks"] == SHIPPED["tasks"]
    assert served["schedules"]["daily"] == SHIPPED["schedules"]["daily"]
    hourly = dict(SHIPPED["schedules"]["hourly"], repeat="PT10M", slip="PT4M")
    assert served["schedules"]["hourly"] == hourly
    expected = copy.deepcopy(SHIPPED["archives"])
    expected["jumbo-central"]["data"]["_url"] = "http://198.18.18.1:9271"
    assert served["archives"] == expected


def test_site_labels_map_back_to_lab_sites():
    assert real_mesh.site_of_label("CERN") == "cern"
    assert real_mesh.site_of_label("NL-T1") == "nikhef"
    assert real_mesh.site_of_label("FNAL") is None


def test_records_ask_again_while_the_new_index_allocates_its_shards(monkeypatch):
    """jumbo_history answers 503 "all shards failed" while the shards of the index the
    archiver just made allocate (the steady hour's start, 2026-11-29): asked again, a few
    times; a 503 that lasts is still an error."""
    monkeypatch.setattr(real_mesh, "RECORDS_PAUSE", 0.0)
    mesh = real_mesh.Mesh(sites=("cern", "ral"))
    hit = {"hits": {"hits": [{"_source": {"jumbo": {"source": "a"}}}]}}
    answers = [(200, {})] + [(503, {"error": "all shards failed"})] * 2 + [(200, hit)]
    calls = []
    monkeypatch.setattr(mesh, "opensearch", lambda *a, **k: calls.append(a) or answers.pop(0))
    assert mesh.records() == [{"source": "a"}]
    assert len(calls) == 4                       # the refresh, two 503s, the answer
    answers[:] = [(200, {})] + [(503, {})] * real_mesh.RECORDS_TRIES
    with pytest.raises(RuntimeError, match="reading jumbo_history: 503"):
        mesh.records()
