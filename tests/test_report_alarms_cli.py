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
