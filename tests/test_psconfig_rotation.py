"""The large-mesh template and its rotation (psconfig/rotate_template.py), and the schedule
arithmetic of bench-schedule (bench/schedule_plan.py) against an independent count: the
tasks perfSONAR pSConfig's own TaskGenerator (5.2.4, the real-pscheduler tarball) makes
from a week of generated templates, counted per host and day."""

import datetime
import glob
import json
import os
import subprocess
import sys
import tarfile

import pytest

from bench import schedule, schedule_plan as plan

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LARGE = os.path.join(ROOT, "psconfig", "lhcone-jumbo-mesh-large.json")
SHIPPED = os.path.join(ROOT, "psconfig", "lhcone-jumbo-mesh.json")
ROTATE = os.path.join(ROOT, "psconfig", "rotate_template.py")
VALIDATOR = os.path.join(ROOT, "psconfig", "validate_template.py")
LISTER = os.path.join(ROOT, "tests", "data", "psconfig_tasks.py")
SRC = os.environ.get("PSCHEDULER_SRC",
                     os.path.normpath(os.path.join(ROOT, "..", "shared", "real-pscheduler")))
PYDEPS = os.path.join(ROOT, "var", "real-pscheduler", "pydeps")
rt = plan.rotation


def _load(path):
    with open(path) as handle:
        return json.load(handle)


def _mesh(hosts):
    """The large template over `hosts` addresses in 198.18.0.0/24 (no name lookups)."""
    tpl = _load(LARGE)
    names = ["198.18.0.%d" % (i + 1) for i in range(hosts)]
    tpl["addresses"] = {n: {"address": n, "_meta": {"site": "S%d" % i, "country": "XX",
                                                    "lhcone": "yes"}}
                        for i, n in enumerate(names)}
    tpl["hosts"] = {}
    tpl["groups"]["lhcone-mesh"]["addresses"] = [{"name": n} for n in names]
    return tpl, names


@pytest.mark.parametrize("hosts", [2, 3, 8, 9, 14, 15])
def test_rounds_meet_every_pair_once_and_a_host_once_a_round(hosts):
    names = ["h%d" % i for i in range(hosts)]
    rounds = rt.round_robin(names)
    seen = [frozenset(p) for pairs in rounds for p in pairs]
    assert len(seen) == len(set(seen)) == hosts * (hosts - 1) // 2
    for pairs in rounds:
        flat = [h for p in pairs for h in p]
        assert len(flat) == len(set(flat))
    week = [p for day in range(7) for p in rt.day_pairs(names, day, 7)]
    assert sorted(week) == sorted(p for pairs in rounds for p in pairs)
    # the busiest host-day: ceil(rounds / 7), rounds N-1 (N even) or N (N odd: one rests)
    assert len(rounds) == (hosts - 1 if hosts % 2 == 0 else hosts)
    busiest = max(sum(host in p for p in rt.day_pairs(names, day, 7))
                  for day in range(7) for host in names)
    assert busiest == plan.rotation_runs(hosts, 7)[0] == -(-len(rounds) // 7)


def test_large_base_validates_and_runs_no_exclusive_task_itself():
    proc = subprocess.run([sys.executable, VALIDATOR, LARGE], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "valid: 2 tasks over 264 address pairs" in proc.stdout
    tpl = _load(LARGE)
    shipped = _load(SHIPPED)
    # the names the shipped template's users rely on are the same
    assert set(tpl["tests"]) == set(shipped["tests"]) and tpl["archives"] == shipped["archives"]
    assert tpl["groups"] == shipped["groups"] and set(tpl["tasks"]) == set(shipped["tasks"])
    assert tpl["tasks"]["jumbo-throughput-v4"]["disabled"] is True


def test_a_day_template_validates(tmp_path):
    out = tmp_path / "today.json"
    proc = subprocess.run([sys.executable, ROTATE, LARGE, "--date", "2026-11-26", "-o",
                           str(out)], stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run([sys.executable, VALIDATOR, str(out)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    day = (datetime.date(2026, 11, 26) - datetime.date(1970, 1, 1)).days % 7
    assert _load(str(out))["_meta"]["rotation-date"] == "2026-11-26"
    # 12 hosts: 11 rounds of 6 pairs, round r on day r mod 7
    assert "over %d address pairs" % (264 + 6 * len(range(day, 11, 7))) in proc.stdout


@pytest.mark.parametrize("breakage, expected", [
    (lambda t: t["tasks"]["jumbo-throughput-v4"].pop("disabled"), "must be disabled"),
    (lambda t: t["tasks"]["jumbo-throughput-v4"]["_meta"]["rotation"].update(days=0),
     "integer 1..28"),
    (lambda t: t["tasks"]["jumbo-throughput-v4"]["_meta"]["rotation"].update(days=True),
     "integer 1..28"),
    (lambda t: t["tasks"]["jumbo-throughput-v4"]["_meta"].pop("rotation"), "nothing to rotate"),
    (lambda t: t["groups"]["lhcone-mesh"]["addresses"].append({"class": "x"}),
     "named, enabled addresses only"),
    (lambda t: t["groups"]["lhcone-mesh"]["addresses"].append({"name": "nowhere"}),
     "'nowhere' is not defined"),
    (lambda t: t.__setitem__("groups", []), "section 'groups' must be an object"),
    (lambda t: t["addresses"].__setitem__("ps-x", "ps-x.example"), "address 'ps-x' must be"),
    (lambda t: t["tasks"]["pmtu-v4"].__setitem__("_meta", ["x"]), "task 'pmtu-v4' must be"),
])
def test_rotation_refuses_a_base_it_cannot_rotate_safely(tmp_path, breakage, expected):
    tpl = _load(LARGE)
    breakage(tpl)
    path = tmp_path / "base.json"
    path.write_text(json.dumps(tpl))
    proc = subprocess.run([sys.executable, ROTATE, str(path), "-o", str(tmp_path / "o.json")],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=60)
    assert proc.returncode == 1 and expected in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "o.json").exists()


def test_rotation_cli_bad_date_and_missing_file(tmp_path):
    proc = subprocess.run([sys.executable, ROTATE, LARGE, "--date", "26/11/2026"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=60)
    assert proc.returncode == 2 and "YYYY-MM-DD" in proc.stderr
    proc = subprocess.run([sys.executable, ROTATE, str(tmp_path / "absent.json")],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=60)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr


@pytest.fixture(scope="module")
def rows():
    return plan.tasks_of(_load(LARGE)), plan.tasks_of(_load(SHIPPED))


def test_the_plan_meets_the_target_at_300_hosts_and_the_shipped_template_does_not(rows):
    large, shipped = rows
    limit = plan.DAY * schedule.TARGET_SHARE / 100.0
    new = plan.host_day(large, 300)
    # 299 rounds over 7 days: at most 43 runs a day, each both directions of one pair
    slot = [t.slot for t in large if t.kind == "jumbo-throughput"][0]
    assert new["exclusive"][1] == 43 * slot <= limit and new["normal"] == (0.0, 0.0)
    assert plan.gain_every(large, 300) == 7.0
    old = plan.host_day(shipped, 300)
    assert old["exclusive"][1] > 20 * limit    # 42 %: 598 runs of 61 s each day
    assert plan.gain_every(shipped, 300) == 1.0
    # 600 hosts cannot hold 2 % with a weekly cadence: 14 days can
    assert plan.host_day(large, 600)["exclusive"][1] > limit
    assert plan.days_for_share(large, 600, schedule.TARGET_SHARE) == 14


def _psconfig_source(tmp_path):
    tarballs = sorted(glob.glob(os.path.join(SRC, "psconfig-5.2.4-*.tar.gz")))
    if not tarballs or not os.path.isdir(PYDEPS):
        if os.environ.get("CI"):
            pytest.fail("perfSONAR pSConfig 5.2.4 tarball (PSCHEDULER_SRC) or %s missing" % PYDEPS)
        pytest.skip("perfSONAR pSConfig 5.2.4 tarball not in %s (PSCHEDULER_SRC)" % SRC)
    with tarfile.open(tarballs[0]) as tar:
        members = [m for m in tar.getmembers() if "/perfsonar-psconfig/psconfig/" in m.name
                   and (m.isdir() or m.isfile())]
        tar.extractall(str(tmp_path / "src"), members=members)
    found = glob.glob(str(tmp_path / "src" / "**" / "perfsonar-psconfig"), recursive=True)
    assert found, "no perfsonar-psconfig directory in %s" % tarballs[0]
    return found[0]


def test_a_week_of_tasks_from_psconfig_itself_matches_the_plan(tmp_path, rows):
    """9 hosts (odd: one rests each round): the 7 day templates through pSConfig's own schema
    check and task generator; per host and day, its exclusive runs times the slot are the
    plan's figures, every directed pair's gain is measured once in the week. The pmtu tasks
    are the base's every day (compared here), and pSConfig makes them hourly for every
    directed pair in both families (counted on a 4-host base: the count does not depend on
    the rotation, and every task costs the generator time)."""
    source = _psconfig_source(tmp_path)
    tpl, names = _mesh(9)
    paths = []
    for day in range(7):
        today = rt.rotate(tpl, datetime.date(1970, 1, 1) + datetime.timedelta(days=day))
        kept = {k: v for k, v in today["tasks"].items() if "rotation-of" not in
                v.get("_meta", {})}
        assert kept == {k: v for k, v in tpl["tasks"].items() if not v.get("disabled")}
        assert today["groups"]["lhcone-mesh"] == tpl["groups"]["lhcone-mesh"]
        assert today["tests"] == tpl["tests"] and today["schedules"] == tpl["schedules"]
        today["tasks"] = {k: v for k, v in today["tasks"].items() if k not in kept}
        paths.append(str(tmp_path / ("day%d.json" % day)))
        with open(paths[-1], "w") as handle:
            json.dump(today, handle)
    small, _ = _mesh(4)
    with open(str(tmp_path / "base.json"), "w") as handle:
        json.dump(small, handle)
    proc = subprocess.run(["/usr/bin/python3", LISTER, source, PYDEPS] + paths +
                          [str(tmp_path / "base.json")],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    tasks = [json.loads(line) for line in proc.stdout.splitlines()]
    pmtu = [(t["ip-version"], t["source"], t["dest"], t["repeat"]) for t in tasks
            if t["type"] == "pmtu"]
    assert len(pmtu) == len(set(pmtu)) == 2 * 4 * 3 and {t[3] for t in pmtu} == {"PT1H"}
    assert sorted(set(t[0] for t in pmtu)) == [4, 6]
    # the base's rotating task is disabled: pSConfig makes nothing of it
    assert all(t["template"] in paths for t in tasks if t["type"] == "jumbo-throughput")
    slot = [t.slot for t in rows[0] if t.kind == "jumbo-throughput"][0]
    held = {(h, d): 0.0 for h in names for d in range(7)}
    directed = []
    for t in tasks:
        if t["type"] != "jumbo-throughput":
            continue
        assert t["direction"] == "both" and t["repeat"] == "P7D"
        day = paths.index(t["template"])
        for host in (t["source"], t["dest"]):
            held[(host, day)] += slot
        directed += [(t["source"], t["dest"]), (t["dest"], t["source"])]
    assert sorted(directed) == sorted((a, b) for a in names for b in names if a != b)
    figures = plan.host_day(rows[0], 9)["exclusive"]
    assert max(held.values()) == figures[1]
    assert sum(held.values()) / len(held) == pytest.approx(figures[0])
