"""The culprits table (jumbo.report.culprits) names the site that owns a hop and counts the
others its failing paths touch as affected, on a real SQLite store: the demo's case, where
every path through a black-holing firewall starts at one site (RAL), gave all six sites as
the hop's sites on the code before; the owners file, where it holds the hop, wins."""

import json

import store_fixtures
from jumbo.report import cli

DESTS = {"b1": "BNL", "c1": "CERN", "k1": "KIT", "f1": "FNAL", "p1": "PIC"}
FIREWALL = "198.18.7.1"


def _rec(source, dest, source_site, dest_site, **fields):
    rec = {"id": "%s-%s" % (source, dest), "test_type": "pmtu", "source": source, "dest": dest,
           "ip_version": 4, "start": "2026-11-02T10:00:00Z", "succeeded": True,
           "path_mtu": 9000, "local_mtu": 9000, "target_mtu": 9000, "pmtud": "not-needed",
           "partial": False, "flows": 4, "reverse_path_mtu": 9000, "reverse_pmtud": "ok",
           "source_site": source_site, "dest_site": dest_site}
    rec.update(fields)
    return rec


def _store(tmp_path):
    """r1 (RAL) -> every other site: a black hole at RAL's firewall; the rest clean."""
    url = "sqlite:///" + str(tmp_path / "culprits.db")
    records = [_rec("r1", d, "RAL", site, path_mtu=1500, pmtud="blackhole", blackhole_ttl=1,
                    blackhole_ip=FIREWALL, blackhole_size=9000)
               for d, site in sorted(DESTS.items())]
    records += [_rec(d, "r1", site, "RAL") for d, site in sorted(DESTS.items())]
    store_fixtures.load(url, records)
    return url


def test_the_hop_is_the_owning_sites_and_the_others_are_affected(tmp_path):
    url = _store(tmp_path)
    r, text, _out = cli.run(["--store", url, "--no-resolve"])
    (hop,) = r["culprits"]
    assert (hop["hop_ip"], hop["paths"], hop["blackholes"]) == (FIREWALL, 5, 5)
    assert (hop["site"], hop["candidates"]) == ("RAL", [])
    assert hop["owner_basis"] == "every path through it starts or ends there"
    assert hop["affected_sites"] == sorted(DESTS.values()) and hop["affected_site_count"] == 5
    assert "sites" not in hop
    line = [x for x in text.splitlines() if x.strip().startswith(FIREWALL)][0]
    assert "owner: RAL (every path through it starts or ends there)" in line
    assert "5 other sites affected (BNL, CERN, FNAL, KIT, PIC)" in line
    r, page, _out = cli.run(["--store", url, "--no-resolve", "--format", "html"])
    assert "<th>owner</th><th>affected sites</th>" in page.replace("\n", "")
    r, csv_text, _out = cli.run(["--store", url, "--no-resolve", "--format", "csv"])
    assert "culprit,%s,site,RAL" % FIREWALL in csv_text
    assert "culprit,%s,affected_site_count,5" % FIREWALL in csv_text


def test_the_owners_file_names_the_owner_and_ral_becomes_affected(tmp_path):
    url = _store(tmp_path)
    owners = tmp_path / "owners.json"
    owners.write_text(json.dumps({"prefixes": [{"prefix": "198.18.7.0/24", "site": "JANET"}]}))
    r, _text, _out = cli.run(["--store", url, "--no-resolve", "--owners", str(owners)])
    (hop,) = r["culprits"]
    assert (hop["site"], hop["owner_basis"]) == ("JANET", "owners file")
    assert hop["affected_sites"] == sorted(list(DESTS.values()) + ["RAL"])
    assert hop["affected_site_count"] == 6


def test_stored_hops_are_read_once_per_text_and_a_damaged_store_gives_none():
    from jumbo.report.culprits import hop_tuples
    text = json.dumps([{"ttl": 1, "ip": "198.18.0.2", "mtu": 9000, "rtt": None},
                       {"ttl": 2, "ip": "198.18.1.2", "mtu": 8950}])
    first = hop_tuples(text)
    assert first == ((1, "198.18.0.2", 9000), (2, "198.18.1.2", 8950))
    assert hop_tuples(text) is first                      # the same text: not parsed again
    other = json.dumps([{"ttl": 3, "ip": None, "mtu": None}])
    assert hop_tuples(other) == ((3, None, None),)        # another text: its own hops
    assert hop_tuples(text) == first
    for damaged in ("7", '{"ttl": 1}', "not json", "null", '"text"'):
        assert hop_tuples(damaged) == ()
    assert hop_tuples([(4, "198.18.2.2", 1500), {"ttl": 5}]) == ((4, "198.18.2.2", 1500),
                                                                  (5, None, None))
