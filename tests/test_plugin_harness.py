"""The harness drives tools and archivers as the server does (checked with tiny stand-ins).

The stand-in plugins live in a temporary repository root; they use only the standard library.
"""

import json
import os
import textwrap

import pytest

import harness


def _plugin(root, cls, name, methods):
    directory = root / ("pscheduler-%s-%s" % (cls, name)) / name
    directory.mkdir(parents=True)
    for method, body in methods.items():
        path = directory / method
        path.write_text("#!/usr/bin/env python3\nimport json, os, sys, time\n"
                        + textwrap.dedent(body))
        path.chmod(0o755)


TOOL = {
    "duration": """
        json.load(sys.stdin)
        print(json.dumps({"duration": "PT2.2S"}))
    """,
    "participant-data": """
        data = json.load(sys.stdin)
        print(json.dumps({"index": data["participant"], "_token": "t%d" % data["participant"]}))
    """,
    "run": """
        import datetime
        data = json.load(sys.stdin)
        sys.stdout.write(json.dumps({
            "succeeded": True, "participant": data["participant"],
            "start": data["schedule"]["start"], "slot": data["schedule"]["duration"],
            "seen": data["participant-data"], "tmpdir": os.environ.get("TMPDIR"),
            "launched": time.time(), "_secret": "hidden"}) + "\\n")
    """,
    "merged-results": """
        data = json.load(sys.stdin)
        print(json.dumps({"schema": 1, "succeeded": all(r and r["succeeded"]
                                                        for r in data["results"]),
                          "results": data["results"]}))
    """,
}


@pytest.fixture
def fake_root(tmp_path, monkeypatch):
    monkeypatch.setattr(harness, "ROOT", str(tmp_path))
    return tmp_path


def test_run_tool_participants_one_start_for_all(fake_root):
    _plugin(fake_root, "tool", "faketool", TOOL)
    run = harness.run_tool_participants("faketool", {"dest": "h2"}, [{}, {}], start_in=1)
    assert run.duration == 3  # rounded up
    assert run.participant_data == [{"index": 0, "_token": "t0"}, {"index": 1, "_token": "t1"}]
    lead, other = run.results
    # Same start, same slot, full participant data (secrets included) for everyone.
    assert lead["start"] == other["start"] and lead["slot"] == other["slot"] == "PT3S"
    assert run.inputs[0]["participant-data"] == run.inputs[1]["participant-data"]
    assert lead["seen"] == run.participant_data
    assert other["seen"] == harness.null_private(run.participant_data)  # fetched unkeyed
    assert abs(lead["launched"] - other["launched"]) < 1.0  # started concurrently
    # The lead keeps its own private members; the other's arrive nulled (unkeyed fetch).
    assert lead["_secret"] == "hidden" and other["_secret"] is None
    assert lead["tmpdir"] != other["tmpdir"] and not os.path.exists(lead["tmpdir"])
    assert run.merged["succeeded"] is True
    assert run.inputs[1]["participant"] == 1 and run.inputs[0]["test"]["type"] == "pmtu"


def test_run_tool_participants_failures_as_the_runner_sees_them(fake_root):
    tool = dict(TOOL)
    tool["run"] = """
        data = json.load(sys.stdin)
        if data["participant"] == 0:
            sys.stderr.write("probe socket refused\\n")
            sys.exit(1)
        sys.stdout.write('{"succeeded": true}')  # no final newline: the runner loses the brace
    """
    _plugin(fake_root, "tool", "faketool", tool)
    run = harness.run_tool_participants("faketool", {"type": "pmtu", "spec": {"dest": "h"}},
                                        [{}, {}], start_in=0)
    assert run.results[0]["succeeded"] is False
    assert "Tool failed: probe socket refused" in run.results[0]["error"]
    assert run.results[1] is None
    assert run.merged["succeeded"] is False


def test_run_is_killed_at_slot_end(fake_root):
    tool = dict(TOOL)
    tool["run"] = """
        sys.stdin.read()
        time.sleep(30)
    """
    _plugin(fake_root, "tool", "faketool", tool)
    run = harness.run_tool_participants("faketool", {"dest": "h"}, [{}], start_in=0)
    assert run.runs[0].status == 2 and run.runs[0].timed_out
    assert run.runs[0].elapsed < 8
    assert run.results[0]["error"] == "Tool failed: Process took too long to run."


ARCHIVER = """
    state = {}
    for line in sys.stdin:
        record = json.loads(line.lstrip("\\x1e"))
        if record["result"] == "crash":
            sys.exit(3)
        key = record["result"]
        state[key] = state.get(key, 0) + 1
        if record["result"] == "flaky" and record["attempts"] < 2:
            reply = {"succeeded": False, "error": "collector busy", "retry": "PT10S",
                     "pid": os.getpid()}
        elif record["result"] == "bad":
            reply = {"succeeded": False, "error": "rejected", "pid": os.getpid()}
        else:
            reply = {"succeeded": True, "seen-attempts": record["attempts"],
                     "last-attempt": record["last-attempt"], "pid": os.getpid()}
        sys.stdout.write("\\x1e" + json.dumps(reply) + "\\n")
        sys.stdout.flush()
"""


def test_archive_stream_retries_and_restarts(fake_root):
    _plugin(fake_root, "archiver", "fakearch", {"archive": ARCHIVER})
    records = [{"data": {}, "result": name} for name in ("ok", "flaky", "bad", "crash")]
    ok, flaky, bad, crash = harness.archive_stream("fakearch", records, retry_scale=0.01,
                                                   timeout=5)
    assert ok.succeeded and ok.attempts == 1 and ok.replies[0]["seen-attempts"] == 0
    # Retried after the (scaled) delay with attempts counted and last-attempt set.
    assert flaky.succeeded and flaky.attempts == 3
    assert flaky.replies[-1]["seen-attempts"] == 2 and flaky.replies[-1]["last-attempt"]
    # One long-lived process served the first records; the crash forced a new one.
    assert ok.replies[0]["pid"] == flaky.replies[0]["pid"] == bad.replies[0]["pid"]
    assert flaky.replies[-1]["pid"] != ok.replies[0]["pid"]
    assert not bad.succeeded and bad.attempts == 1 and bad.error == "rejected"
    assert not crash.succeeded and crash.restarts == 3
    assert crash.error.startswith("Possibly-permanent archiver error")


def test_archive_stream_rejects_replies_without_rs(fake_root):
    _plugin(fake_root, "archiver", "fakearch", {"archive": """
        for line in sys.stdin:
            print("debug: got a record")
            sys.stdout.flush()
    """})
    (outcome,) = harness.archive_stream("fakearch", [{"data": {}, "result": {}}], timeout=5)
    assert not outcome.succeeded and outcome.attempts == 1 and "RS" in outcome.error


def test_archive_stream_retry_is_bounded(fake_root):
    _plugin(fake_root, "archiver", "fakearch", {"archive": """
        for line in sys.stdin:
            sys.stdout.write("\\x1e" + json.dumps({"succeeded": False, "error": "down",
                                                   "retry": "PT1S"}) + "\\n")
            sys.stdout.flush()
    """})
    (outcome,) = harness.archive_stream("fakearch", [{"data": {}, "result": {}}],
                                        max_attempts=4, retry_scale=0.01, timeout=5)
    assert not outcome.succeeded and outcome.attempts == 4 and outcome.error == "down"
    assert [json.dumps(r["retry"]) for r in outcome.replies] == ['"PT1S"'] * 4
