"""The shipped pSConfig mesh template and its validator (which runs the real plugins).

psconfig/validate_template.py is run as an operator runs it; it executes the real `pmtu`
spec-is-valid and `jumbo` data-is-valid from this tree. Broken templates must be rejected with
the offending task named.
"""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEMPLATE = os.path.join(ROOT, "psconfig", "lhcone-jumbo-mesh.json")
VALIDATOR = os.path.join(ROOT, "psconfig", "validate_template.py")


# The validator's checks, imported as validate_template.py imports them (from its own directory).
sys.path.insert(0, os.path.join(ROOT, "psconfig"))
import validate_expand  # noqa: E402 - after the path set-up above
import validate_structure  # noqa: E402


def _template():
    with open(TEMPLATE) as f:
        return json.load(f)


def _validate(template, tmp_path, *args):
    path = tmp_path / "template.json"
    path.write_text(json.dumps(template))
    proc = subprocess.run([sys.executable, VALIDATOR, str(path)] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def _small_mesh(n=3):
    """The shipped template cut down to its first n addresses (for --deep runs)."""
    tpl = _template()
    keep = list(tpl["addresses"])[:n]
    tpl["addresses"] = {k: tpl["addresses"][k] for k in keep}
    tpl["hosts"] = {k: v for k, v in tpl["hosts"].items() if k in keep}
    tpl["groups"]["lhcone-mesh"]["addresses"] = [{"name": k} for k in keep]
    return tpl


def test_shipped_template_validates_with_the_real_plugins():
    proc = subprocess.run([sys.executable, VALIDATOR, TEMPLATE], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    # 3 tasks x 12 x 11 ordered pairs; one spec and one archive data per task went to the plugins
    assert "valid: 3 tasks over 396 address pairs; 3 test specs passed spec-is-valid, " \
           "3 archive data passed data-is-valid" in proc.stdout
    assert "note:" not in proc.stdout  # every test type and archiver was checked, sites present


def test_shipped_template_shape():
    tpl = _template()
    assert len(tpl["addresses"]) == 12
    sites = [a["_meta"]["site"] for a in tpl["addresses"].values()]
    assert len(set(sites)) == 12 and all(isinstance(s, str) and s for s in sites)
    assert "CERN" in sites
    by_test = {}
    for name, task in tpl["tasks"].items():
        test = tpl["tests"][task["test"]]
        assert test["type"] in ("pmtu", "jumbo-throughput")
        by_test[name] = (test["spec"], tpl["schedules"][task["schedule"]], test["type"])
        assert task["reference"]["source-site"] == "{% jq .addresses[0]._meta.site %}"
        assert task["reference"]["dest-site"] == "{% jq .addresses[1]._meta.site %}"
        for archive in task["archives"]:
            spec = tpl["archives"][archive]
            assert spec["archiver"] == "jumbo"
            # failed runs (black holes) must be archived: pScheduler's runs=all, archive schema 2
            assert spec["schema"] >= 2 and spec["runs"] == "all"
            assert spec["data"]["retry-policy"] and spec["data"]["_url"].startswith("https://")
    hourly = [n for n, (spec, sched, kind) in by_test.items() if sched["repeat"] == "PT1H"]
    daily = [n for n, (spec, sched, kind) in by_test.items() if sched["repeat"] == "P1D"]
    # pmtu about hourly in both families; the exclusive pair daily (a WLCG throughput cadence).
    assert sorted(hourly) == ["pmtu-v4", "pmtu-v6"] and daily == ["jumbo-throughput-v4"]
    assert sorted(by_test[n][0]["ip-version"] for n in hourly) == [4, 6]
    for name in hourly:
        spec, _, kind = by_test[name]
        # A full mesh measures B->A in its own task: reverse would only repeat it.
        assert kind == "pmtu" and spec["reverse"] is False
        # Through the dest's reflector (every mesh node runs the suite), with flows enough
        # that a hole on 1 of 4 ECMP members is missed in fewer than 1 run in 10,000.
        assert spec["reflector"] is True and 0.75 ** spec["flows"] < 1e-4
    assert by_test["jumbo-throughput-v4"][2] == "jumbo-throughput"
    assert by_test["jumbo-throughput-v4"][0]["order"] == "abba"


def test_reference_carries_both_sites_for_every_pair():
    """What pSConfig will put in each task's reference, expanded by the validator's engine."""
    tpl = _template()
    group = tpl["groups"]["lhcone-mesh"]
    pairs = validate_structure.group_pairs(tpl, group)
    assert len(pairs) == 12 * 11
    task = tpl["tasks"]["pmtu-v4"]
    for src, dst in pairs:
        exp = validate_expand.Expander(tpl, task, (src, dst))
        ref = exp.expand(task["reference"])
        spec = exp.expand(tpl["tests"][task["test"]]["spec"])
        assert exp.issues == []
        assert ref["source-site"] == tpl["addresses"][src]["_meta"]["site"]
        assert ref["dest-site"] == tpl["addresses"][dst]["_meta"]["site"]
        assert (spec["source"], spec["dest"]) == (src, dst)


def test_bad_spec_names_the_task(tmp_path):
    tpl = _template()
    tpl["tests"]["pmtu-v6"]["spec"]["ip-version"] = 5
    rc, out, err = _validate(tpl, tmp_path)
    assert rc == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "task 'pmtu-v6'" in lines[0] and "spec-is-valid" in lines[0]
    assert "ip-version" in lines[0]


def test_bad_archive_data_names_every_task_using_it(tmp_path):
    tpl = _template()
    tpl["archives"]["jumbo-central"]["data"]["_url"] = "ftp://archive.lhcone.example/"
    rc, out, err = _validate(tpl, tmp_path)
    assert rc == 1
    for task in tpl["tasks"]:
        assert any("task %r" % task in line and "data-is-valid" in line and "jumbo-central" in line
                   for line in err.splitlines()), (task, err)


def test_unknown_archive_key_is_rejected_by_the_archiver(tmp_path):
    tpl = _template()
    tpl["archives"]["jumbo-central"]["data"]["password"] = "secret"
    rc, out, err = _validate(tpl, tmp_path)
    assert rc == 1 and "data-is-valid" in err and "task 'pmtu-v4'" in err


@pytest.mark.parametrize("breakage, expected", [
    (lambda t: t["tasks"]["pmtu-v4"].__setitem__("schedule", "weekly"),
     "task 'pmtu-v4': schedule 'weekly' is not defined in schedules"),
    (lambda t: t["tasks"]["jumbo-throughput-v4"]["archives"].append("esmond"),
     "task 'jumbo-throughput-v4': archive 'esmond' is not defined in archives"),
    (lambda t: t["tasks"]["pmtu-v6"].__setitem__("test", "pmtu-v9"),
     "task 'pmtu-v6': test 'pmtu-v9' is not defined in tests"),
    (lambda t: t["groups"]["lhcone-mesh"]["addresses"].append({"name": "ps-x.lhcone.example"}),
     "group 'lhcone-mesh': addresses: address 'ps-x.lhcone.example' is not defined in addresses"
     " (used by task 'jumbo-throughput-v4', 'pmtu-v4', 'pmtu-v6')"),
    (lambda t: t["archives"]["jumbo-central"].pop("schema"),
     "archive 'jumbo-central': 'runs' needs archive \"schema\": 2"),
    (lambda t: t.pop("tests"), "template: required section 'tests' is missing"),
    (lambda t: t["tasks"]["pmtu-v4"].__setitem__("repeat", "PT1H"),
     "task 'pmtu-v4': unknown key 'repeat'"),
    (lambda t: t["tasks"]["jumbo-throughput-v4"].__setitem__("priority", 1),
     "task 'jumbo-throughput-v4': 'priority' 1 would let jumbo-throughput preempt"),
    (lambda t: t["tasks"]["pmtu-v4"].__setitem__("priority", 0),
     "task 'pmtu-v4': 'priority' 0 is dropped by pSConfig's agent"),
    (lambda t: t["tasks"]["jumbo-throughput-v4"].__setitem__("priority", True),
     "task 'jumbo-throughput-v4': 'priority' must be an integer"),
])
def test_broken_structure_is_rejected(tmp_path, breakage, expected):
    tpl = _template()
    breakage(tpl)
    rc, out, err = _validate(tpl, tmp_path)
    assert rc == 1
    assert expected in err, err


def test_the_shipped_priority_and_a_note_without_it(tmp_path):
    """The template's jumbo-throughput runs at priority -1 (validated on the real pScheduler:
    tests/integration/test_real_pscheduler_priority.py); without it the validator says what
    that risks, and the template stays valid."""
    tpl = _template()
    assert tpl["tasks"]["jumbo-throughput-v4"]["priority"] == -1
    assert all("priority" not in t for n, t in tpl["tasks"].items() if n.startswith("pmtu"))
    rc, out, err = _validate(tpl, tmp_path)
    assert rc == 0 and "note:" not in out + err, (out, err)
    del tpl["tasks"]["jumbo-throughput-v4"]["priority"]
    rc, out, err = _validate(tpl, tmp_path)
    assert rc == 0, err
    assert "task 'jumbo-throughput-v4': jumbo-throughput without \"priority\": -1 can push out" \
        in out + err, (out, err)


def test_missing_site_breaks_the_reference(tmp_path):
    tpl = _template()
    del tpl["addresses"]["ps-ral.lhcone.example"]["_meta"]["site"]
    rc, out, err = _validate(tpl, tmp_path)
    assert rc == 1
    assert "task 'pmtu-v4': ps-ral.lhcone.example -> ps-cern.lhcone.example: " \
           "reference.source-site is empty" in err
    assert "reference.dest-site is empty" in err


def test_non_string_meta_would_drop_the_task(tmp_path):
    tpl = _template()
    tpl["addresses"]["ps-pic.lhcone.example"]["_meta"]["site"] = 42
    rc, out, err = _validate(tpl, tmp_path)
    assert rc == 1
    assert "task 'pmtu-v4'" in err and "not a string" in err and "tostring" in err


def test_deep_checks_every_pair(tmp_path):
    tpl = _small_mesh(3)
    rc, out, err = _validate(tpl, tmp_path, "--deep")
    assert rc == 0, err
    assert "3 tasks over 18 address pairs; 18 test specs passed spec-is-valid" in out
    # an address only the later pairs use: quick mode sends only the first pair per task
    last = list(tpl["addresses"])[-1]
    tpl["addresses"][last]["address"] = "ps bad host"
    rc, out, err = _validate(tpl, tmp_path)
    assert rc == 0, err  # the first pair of each task (cern -> fnal) does not involve it
    rc, out, err = _validate(tpl, tmp_path, "--deep")
    assert rc == 1
    assert ("task 'pmtu-v4': test spec for ps-cern.lhcone.example -> %s rejected by pmtu "
            "spec-is-valid: At /dest:" % last) in err


def test_unreadable_and_non_json(tmp_path):
    rc, out, err = _validate({}, tmp_path)
    assert rc == 1 and "required section 'addresses' is missing" in err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    proc = subprocess.run([sys.executable, VALIDATOR, str(bad)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)
    assert proc.returncode == 1 and "not JSON" in proc.stderr
    proc = subprocess.run([sys.executable, VALIDATOR, str(tmp_path / "absent.json")],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
