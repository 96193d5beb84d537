"""Issue 32 rows 6 and 7: jumbo-alarms' files and runs (alarm_state.py) on the synthetic mesh
of test_report_alarms.py (3 events: one hop, two paths), real processes and a real OpenSearch.

  row 6  a link planted at the state's temporary name, at --out, at the state itself or at
         its lock: the link's target is never written;
  row 7  three runs at once emit each event once; a run that cannot take the lock does
         nothing. (A failed --index then a good run, against a real OpenSearch: test_report_alarms.py,
         beside the mesh it already loads there.)
"""

import datetime
import json
import os
import subprocess
import sys

import pytest

import store_fixtures
from fixtures import synth
from jumbo.report import alarm_state
from jumbo.report.alarms_cli import main as alarms_main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "python-jumbo")]))
DAYS = 14
START = (datetime.datetime.utcnow() - datetime.timedelta(days=DAYS - 1)).strftime("%Y-%m-%d")
MESH = synth.Mesh.small(days=DAYS, start=START)
EVENTS = 3          # test_report_alarms.py: the firewall's hop, two regressed paths

@pytest.fixture(scope="module")
def sqlite_url(tmp_path_factory):
    url = "sqlite:///" + str(tmp_path_factory.mktemp("als") / "jumbo.db")
    store_fixtures.load(url, MESH.records())
    return url


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def victim(tmp_path):
    path = tmp_path / "victim.txt"
    path.write_text("precious\n")
    return path


# -- row 6 ----------------------------------------------------------------------------------------

def test_state_never_written_through_a_planted_link(sqlite_url, tmp_path, victim):
    state, out = tmp_path / "state.json", tmp_path / "alarms.jsonl"
    os.symlink(str(victim), str(state) + ".tmp")        # the name the state was written under
    assert alarms_main(["--store", sqlite_url, "--state", str(state), "--out", str(out)]) == 0
    assert victim.read_text() == "precious\n"
    assert not os.path.islink(str(state)) and len(alarm_state.load(str(state))) == EVENTS
    assert len(lines(out)) == EVENTS
    assert [n for n in os.listdir(str(tmp_path)) if n.startswith(".state.json.")] == []


@pytest.mark.parametrize("planted", ["out", "state", "lock"])
def test_no_file_of_a_run_follows_a_planted_link(sqlite_url, tmp_path, victim, planted, capfd):
    state, out = tmp_path / "state.json", tmp_path / "alarms.jsonl"
    link = {"out": str(out), "state": str(state), "lock": str(state) + ".lock"}[planted]
    os.symlink(str(victim), link)
    assert alarms_main(["--store", sqlite_url, "--state", str(state), "--out", str(out)]) == 2
    assert victim.read_text() == "precious\n"
    assert "a symbolic link (refused)" in capfd.readouterr().err
    assert os.readlink(link) == str(victim)            # left as it was found


# -- row 7 ----------------------------------------------------------------------------------------

def test_three_runs_at_once_emit_each_event_once(sqlite_url, tmp_path):
    state, out = tmp_path / "state.json", tmp_path / "alarms.jsonl"
    command = [sys.executable, "-m", "jumbo.report.alarms_cli", "--store", sqlite_url,
               "--state", str(state), "--out", str(out)]
    runs = [subprocess.Popen(command, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True) for _ in range(3)]
    results = [run.communicate(timeout=600) for run in runs]
    assert [run.returncode for run in runs] == [0, 0, 0], results
    got = lines(out)
    assert len(got) == EVENTS, [e["event"] for e in got]
    assert len(set(e["source"]["alarm_id"] for e in got)) == EVENTS
    assert sorted(err.split("jumbo-alarms: ")[1].split(" new")[0] for _o, err in results) == \
        ["0", "0", str(EVENTS)]


def test_a_run_waits_for_the_lock_then_gives_up_doing_nothing(sqlite_url, tmp_path, capfd):
    state, out = tmp_path / "state.json", tmp_path / "alarms.jsonl"
    with alarm_state.Lock(str(state)):
        assert alarms_main(["--store", sqlite_url, "--state", str(state), "--out", str(out),
                            "--lock-wait", "0.5"]) == 3
    assert "another jumbo-alarms run held" in capfd.readouterr().err
    assert not out.exists() and not state.exists()
