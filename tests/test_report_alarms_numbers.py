"""The alarms' numbers mean what the report's mean (issue 31): each number an event carries is
read back from jumbo-report's own JSON on the same store and window: a share event's
baseline and recent shares are the report's per-site share of the two periods, a path event's
change and MTUs are the report's change entry, a hop event's paths are the report's black
holes at that hop. A guard for renames in the report's model: an alarm must follow them."""

import datetime
import json

from fixtures import synth
from jumbo.report.alarms_cli import run as alarms_run
from jumbo.report.cli import run as report_run
import store_fixtures

DAYS = 14
START = (datetime.datetime.utcnow() - datetime.timedelta(days=DAYS - 1)).strftime("%Y-%m-%d")
MESH = synth.Mesh.small(days=DAYS, start=START)
UNTIL = (datetime.datetime.utcnow() + datetime.timedelta(days=1)).strftime("%Y-%m-%d")
SPLIT = (datetime.datetime.utcnow() - datetime.timedelta(days=4)).strftime("%Y-%m-%dT00:00:00Z")

sqlite_url, os_url, store_url = store_fixtures.both_stores(MESH.records, "almnum")


def _report(url, since, until):
    report, _text, _out = report_run(["--store", url, "--format", "json", "--since", since,
                                      "--until", until, "--limit", "1000000"])
    return json.loads(json.dumps(report))


def test_alarm_numbers_are_the_reports(sqlite_url, tmp_path):
    events = alarms_run(["--store", sqlite_url, "--state", str(tmp_path / "s"),
                         "--out", str(tmp_path / "o"), "--until", UNTIL, "--recent-since", SPLIT,
                         "--baseline-days", "30", "--share-drop", "1"])
    kinds = sorted(set(e["event"] for e in events))
    assert kinds == ["MTU black hole shared by multiple sites", "jumbo path regressed",
                     "jumbo share decreased"], kinds
    window = events[0]["source"]
    whole = _report(sqlite_url, window["from"], window["to"])
    base = _report(sqlite_url, window["from"], SPLIT)
    recent = _report(sqlite_url, SPLIT, window["to"])
    for e in events:
        s = e["source"]
        if e["event"] == "jumbo share decreased":
            assert s["basis"] == "paths"
            site = s["site"]
            assert s["baseline"] == next(x["capable"] for x in base["sites"] if x["site"] == site)
            assert s["recent"] == next(x["capable"] for x in recent["sites"] if x["site"] == site)
            assert "%.1f %% -> %.1f %%" % (100 * s["baseline"], 100 * s["recent"]) in e["body"]
        elif e["event"] == "jumbo path regressed":
            change = next(c for c in whole["changes"] if (c["source"], c["dest"]) ==
                          (s["src_host"], s["dest_host"]) and "ipv%d" % c["ip_version"] == s["ipv"])
            assert (s["changed_at"], s["from_state"], s["to_state"]) == (change["start"], change["from"],
                                                                         change["to"])
            assert (s["from_path_mtu"], s["from_reverse_path_mtu"]) == (change["from_mtu"],
                                                                        change["from_reverse_mtu"])
            assert (s["path_mtu"], s["reverse_path_mtu"]) == (change["to_mtu"], change["to_reverse_mtu"])
        else:
            holes = [b for b in whole["blackholes"] if b["hop_ip"] == s["hop_ip"]]
            assert s["num_pairs"] == len(holes)
            assert sorted(s["pairs"]) == sorted("%s -> %s" % (b["source"], b["dest"]) for b in holes)
            assert s["size"] == max(b["size"] for b in holes)
            assert s["path_mtu"] == min(b["path_mtu"] for b in holes)
