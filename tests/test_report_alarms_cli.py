"""jumbo-alarms takes only the options it acts on (issue 31): the report's options that shape
a report it never writes are refused with exit status 2 and a message naming them, and its
--help lists none of them (its man page is checked against the parser by
tests/test_packaging_man.py)."""

import json
import os
import subprocess
import sys

import pytest

from fixtures import synth
from jumbo.report.alarms_cli import main as alarms_main
import store_fixtures

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MESH = synth.Mesh.small(days=3)
REFUSED = (["--format", "html"], ["--format", "json"], ["--volumes", "volumes.csv"],
           ["--interval", "week"], ["--link-speed", "1e9"], ["--limit", "5"])


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    url = "sqlite:///" + str(tmp_path_factory.mktemp("almcli") / "jumbo.db")
    store_fixtures.load(url, MESH.records())
    return url


@pytest.mark.parametrize("option", REFUSED, ids=[o[0] for o in REFUSED])
def test_report_options_it_ignores_are_refused(store, tmp_path, capfd, option):
    out = tmp_path / "alarms.jsonl"
    status = alarms_main(["--store", store, "--state", str(tmp_path / "s"), "--out", str(out)]
                         + option)
    err = capfd.readouterr().err
    assert status == 2, err
    assert "jumbo-alarms: unrecognized arguments: %s" % " ".join(option) in err, err
    assert not out.exists() and not (tmp_path / "s").exists()     # nothing done


def test_the_options_it_keeps_still_work(store, tmp_path):
    out = tmp_path / "alarms.jsonl"
    status = alarms_main(["--store", store, "--state", str(tmp_path / "s"), "--out", str(out),
                          "--since", "2026-11-01", "--target-mtu", "9000", "--flap", "3"])
    assert status == 0
    events = [json.loads(line) for line in out.read_text().splitlines()]
    # the mesh's firewall, and its one path regressing on day 1 (both directions fail since)
    assert [e["event"] for e in events] == ["MTU black hole shared by multiple sites"] + \
        ["jumbo path regressed"] * 2
    assert alarms_main(["--store", store, "--state", str(tmp_path / "t"), "--target-mtu", "99"]) == 2


def test_help_lists_only_its_own_options():
    proc = subprocess.run([sys.executable, "-c", "import sys; from jumbo.report.alarms_cli import "
                           "main; sys.exit(main(['--help']))"], cwd=ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True,
                          env=dict(os.environ, COLUMNS="200",
                                   PYTHONPATH=os.path.join(ROOT, "python-jumbo")))
    assert proc.returncode == 0, proc.stderr
    for option in sorted(set(o[0] for o in REFUSED)):
        assert option not in proc.stdout, option
    for option in ("--state", "--store", "--index", "--since", "--prometheus", "--version"):
        assert option in proc.stdout, option


def test_a_sites_used_share_from_the_fireflies(tmp_path):
    """With --fireflies, a site's share is its used share from the fireflies stored: SITE-A
    sent 80 % of its bytes at jumbo MSS in the baseline, 10 % in the recent days: one event
    naming the fireflies (on the code before --fireflies was refused, and the share was the
    paths')."""
    import datetime
    import time
    from jumbo.archive.firefly_store import open_fireflies
    start = (datetime.datetime.utcnow() - datetime.timedelta(days=6)).strftime("%Y-%m-%d")
    mesh = synth.Mesh.small(days=7, start=start)
    url = "sqlite:///" + str(tmp_path / "ff.db")
    store_fixtures.load(url, mesh.records())
    now = time.time()
    store = open_fireflies(url)
    try:
        store.write(now - 4 * 86400 - 60, now - 4 * 86400, "c1:10514",
                    {("SITE-A", "SITE-B", 4): [int(8e9), int(2e9), 0, 5]})
        store.write(now - 86400 - 60, now - 86400, "c1:10514",
                    {("SITE-A", "SITE-B", 4): [int(1e9), int(9e9), int(3e9), 5]})
    finally:
        store.close()
    out = tmp_path / "alarms.jsonl"
    assert alarms_main(["--store", url, "--state", str(tmp_path / "s"), "--out", str(out),
                        "--fireflies", "--recent-days", "2", "--baseline-days", "4"]) == 0
    events = [json.loads(line) for line in out.read_text().splitlines()]
    shares = [e for e in events if e["source"].get("basis")]
    assert sorted((e["source"]["site"], e["source"]["basis"]) for e in shares) == [
        ("SITE-A", "fireflies bytes"), ("SITE-B", "fireflies bytes")]
    a = [e for e in shares if e["source"]["site"] == "SITE-A"][0]
    assert (a["source"]["baseline"], a["source"]["recent"], a["source"]["change"]) == (0.8, 0.1, -87.5)
    assert a["body"] == ("jumbo share of SITE-A decreased by 87.5 %: 80.0 % -> 10.0 % of its bytes "
                         "sent at jumbo MSS (fireflies; the bytes with a known MSS)")
