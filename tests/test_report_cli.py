"""jumbo-report --site NAME: one site's own page, its paths as source and as dest (both
directions of each, so its paths are judged both ways), on a real SQLite store; a site the
store does not know is a usage error naming the known ones."""

import json

import store_fixtures
from jumbo.report.cli import main as cli_main

HOSTS = {"r1": "RAL", "r2": "RAL", "b1": "BNL", "c1": "CERN"}


def _records():
    out = []
    for source in HOSTS:
        for dest in HOSTS:
            if source == dest:
                continue
            # CERN <-> BNL is 1500; everything through RAL carries 9000
            small = {source, dest} == {"b1", "c1"}
            out.append({"id": "%s-%s" % (source, dest), "test_type": "pmtu", "source": source,
                        "dest": dest, "ip_version": 4, "start": "2026-11-02T10:00:00Z",
                        "succeeded": True, "path_mtu": 1500 if small else 9000,
                        "local_mtu": 9000, "target_mtu": 9000,
                        "pmtud": "ok" if small else "not-needed", "partial": False, "flows": 4,
                        "source_site": HOSTS[source], "dest_site": HOSTS[dest]})
    return out


def _json(tmp_path, *args):
    out = tmp_path / "r.json"
    assert cli_main(list(args) + ["--format", "json", "--out", str(out)]) == 0
    return json.loads(out.read_text())


def test_a_site_page_holds_its_own_paths(tmp_path, capsys):
    url = "sqlite:///" + str(tmp_path / "sites.db")
    store_fixtures.load(url, _records())
    mesh = _json(tmp_path, "--store", url)
    assert (mesh["paths_measured"], mesh["capable_paths"]) == (12, 10)
    bnl = _json(tmp_path, "--store", url, "--site", "BNL")
    keys = sorted((row[0], row[1]) for row in bnl["paths"])      # path_fields: source, dest, ...
    assert keys == sorted((s, d) for s in HOSTS for d in HOSTS
                          if s != d and "BNL" in (HOSTS[s], HOSTS[d]))
    assert bnl["site"] == "BNL" and bnl["paths_measured"] == 6
    assert (bnl["capable_paths"], bnl["paths_one_way"]) == (4, 0)     # b1 <-> c1 is 1500
    assert bnl["capable"] == 4 / 6.0
    ral = _json(tmp_path, "--store", url, "--site", "RAL")
    assert (ral["paths_measured"], ral["capable_paths"]) == (10, 10)
    assert cli_main(["--store", url, "--site", "RAL"]) == 0
    assert capsys.readouterr().out.startswith(
        "Jumbo-frame adoption report: site RAL (its paths as source and as dest)")
    # a site the store does not know, or no name at all: usage errors, the known sites named
    assert cli_main(["--store", url, "--site", "FNAL"]) == 2
    err = capsys.readouterr().err
    assert "--site FNAL: no measured path has that site (known: BNL, CERN, RAL)" in err
    assert cli_main(["--store", url, "--site", " "]) == 2
    assert "--site: expected a site name" in capsys.readouterr().err
