"""The jumbocheck tool on real paths: the namespace lab, the tool run as the unprivileged user
`jumbotest` through the harness (duration -> participant-data -> concurrent runs -> merge),
answers checked against the lab's ground truth."""

import datetime
import json
import time

import pytest

import harness
from lab_support import needs_lab
from jumbo.probe import wire
from jumbo.core import validate

USER = "jumbotest"
# Runs of 8 reverse flows until one saw both members of a two-member ECMP group
# (test_reverse_flows_catch_the_narrow_equal_cost_member): (1/128)**3, 1 in 2 million.
REVERSE_RUNS = 3


def _place(lab, node):
    return {"lab": lab, "node": node, "user": USER}


def _check(merged):
    valid, error = validate.check_result(merged)
    assert valid, error
    return merged


def _assert_within_slot(outcome, start_in):
    """Every participant finished inside its slot (the harness launched them start_in + <1 s
    before schedule.start), and none was killed."""
    for done in outcome.runs:
        assert not done.timed_out, done
        assert done.status == 0, done
        assert done.elapsed <= start_in + 1 + outcome.duration, (done.elapsed, outcome.duration)
        assert done.stdout.endswith("\n") and done.stdout.count("\n") == 1, done


@needs_lab
def test_source_only_run_finds_the_cern_black_hole(lab_factory):
    lab = lab_factory("vxlan-blackhole")
    truth = lab.truth("src", "dst")
    spec = {"schema": 1, "dest": lab.address("dst", 4)}
    outcome = harness.run_tool_participants("jumbocheck", spec, [_place(lab, "src")],
                                            start_in=1.0)
    _assert_within_slot(outcome, 1.0)
    merged = _check(outcome.merged)
    assert merged["succeeded"] is True, merged
    assert merged["path-mtu"] == truth["path-mtu"] == 8950
    assert merged["pmtud"] == truth["pmtud"] == "blackhole"
    assert merged["jumbo"] is False
    assert merged["reverse-path-mtu"] is None


@needs_lab
@pytest.mark.parametrize("version", [4, 6])
def test_two_participants_measure_an_asymmetric_reverse_path(lab_factory, version):
    lab = lab_factory("asymmetric")
    forward, backward = lab.truth("src", "dst"), lab.truth("dst", "src")
    # src is multi-homed here: the spec's source (its address towards r2, not its first one)
    # must be where the reverse probes come from and where the dest's replies go.
    topo = lab.topology
    source = str(topo.link_address(topo.link_between("src", "r2"), "src", version))
    spec = {"schema": 1, "dest": lab.address("dst", version), "reverse": True,
            "source": source}
    outcome = harness.run_tool_participants(
        "jumbocheck", spec, [_place(lab, "src"), _place(lab, "dst")], start_in=1.0)
    _assert_within_slot(outcome, 1.0)
    merged = _check(outcome.merged)
    assert merged["succeeded"] is True, merged
    assert merged["path-mtu"] == forward["path-mtu"] == 9000
    assert merged["reverse"]["dest-stats"]["answered"] > 0
    assert merged["reverse-path-mtu"] == backward["path-mtu"] == 1500
    assert merged["reverse-pmtud"] == backward["pmtud"] == "not-needed"
    assert merged["reverse-local-mtu"] == 1500
    assert merged["reverse-error"] is None
    # The token travelled to both runs but never into what the lead fetched from the dest.
    token = outcome.participant_data[1]["_token"]
    assert token not in json.dumps(outcome.results) and token not in json.dumps(merged)
    dest = outcome.results[1]
    assert dest["succeeded"] is True
    assert dest["result"]["reflector"]["stats"]["rejected"] == 0
    assert dest["result"]["reflector"]["peers"] == [source]


def _reverse_blackhole():
    """src - r1 - r2 - dst, 9000 / 8950 / 9000: r1 reports PTB (forward fine), r2 drops it
    (the reverse path dst -> src is a black hole)."""
    from lab.topology import Node, Topology
    nodes = [Node("src"), Node("r1", router=True), Node("r2", router=True, drop_ptb=True),
             Node("dst")]
    links = [("src", "r1", 9000), ("r1", "r2", 8950), ("r2", "dst", 9000)]
    return Topology("reverse-blackhole", nodes, links, description="black hole dst -> src only")


@needs_lab
@pytest.mark.parametrize("scenario", ["vxlan-blackhole", "reverse-blackhole"])
def test_reverse_pmtud_verdict_matches_the_truth(lab_factory, scenario):
    lab = lab_factory(_reverse_blackhole() if scenario == "reverse-blackhole" else scenario)
    forward, backward = lab.truth("src", "dst"), lab.truth("dst", "src")
    spec = {"schema": 1, "dest": lab.address("dst", 4), "reverse": True}
    outcome = harness.run_tool_participants(
        "jumbocheck", spec, [_place(lab, "src"), _place(lab, "dst")], start_in=1.0)
    merged = _check(outcome.merged)
    assert merged["path-mtu"] == forward["path-mtu"]
    assert merged["pmtud"] == forward["pmtud"]
    assert merged["reverse-path-mtu"] == backward["path-mtu"] == 8950
    assert merged["reverse-pmtud"] == backward["pmtud"]
    if backward["pmtud"] == "ok":
        assert any(p["useful"] and p["mtu"] == 8950 for p in merged["reverse-ptb"])
    else:
        assert merged["reverse-ptb"] == []


@needs_lab
def test_absent_dest_participant_leaves_the_forward_answer_intact(lab_factory):
    """The dest's run never happens: the lead's reverse phase reports a clear error within its
    hello window, the merge (with a null dest result) still succeeds on the forward answer."""
    lab = lab_factory("vxlan-ptb")
    spec = {"schema": 1, "dest": lab.address("dst", 4), "reverse": True}
    test = {"type": "pmtu", "spec": spec}
    slot = harness.invoke("tool", "jumbocheck", "duration", stdin=test).sql_json()["duration"]
    data = [harness.invoke("tool", "jumbocheck", "participant-data", user=USER,
                           netns=(lab, node), stdin={"participant": i, "test": test}).sql_json()
            for i, node in enumerate(("src", "dst"))]
    start = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    run_input = {"schema": 1, "task-uuid": "t", "test": test, "participant": 0,
                 "schedule": {"start": start.isoformat(), "duration": slot},
                 "participant-data": data}
    began = time.monotonic()
    done = harness.invoke("tool", "jumbocheck", "run", stdin=run_input, user=USER,
                          netns=(lab, "src"), timeout=120)
    took = time.monotonic() - began
    assert done.status == 0, done
    lead = done.runner_json()
    assert lead["succeeded"] is True, lead
    assert took < 30, took
    merge = harness.invoke("tool", "jumbocheck", "merged-results",
                           stdin={"test": test, "results": [lead, None]})
    merged = _check(merge.json(max_schema=1))
    assert merged["succeeded"] is True
    assert merged["path-mtu"] == 8950 and merged["pmtud"] == "ok"
    assert merged["reverse-path-mtu"] is None
    assert "did not answer" in merged["reverse-error"]


# ------------------------------------------------------------------------------------------
# The reflector itself, on a real path: tokens, sizes

REFLECTOR_SCRIPT = """
import json, sys, time
from jumbo.tool import reflector
server = reflector.Reflector(%d, %r, (4,)).open()
print("ready", flush=True)
print(json.dumps(server.serve(time.monotonic() + %f)), flush=True)
"""


PROBER_SCRIPT = """
import json, socket, time
from jumbo.tool import reflector
from jumbo.probe import transport, wire


def ask(key, kind, size, total, seq):
    message = reflector.encode(key, b"Q", kind, seq, b"testtest", size=size,
                               total=max(reflector.HEADER_LEN, total - 28))
    sock.sendto(message, addr)


def answers(wait=0.5):
    found = []
    end = time.monotonic() + wait
    while time.monotonic() < end:
        try:
            data, _ = sock.recvfrom(65535)
            found.append(data)
        except socket.timeout:
            break
    return found


key, wrong = bytes.fromhex(%r), bytes.fromhex(%r)
addr = (%r, %d)
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.setsockopt(0, transport.IP_MTU_DISCOVER, wire.IP_PMTUDISC_DONT)
sock.settimeout(0.3)
out = {}
ask(wrong, reflector.PROBE, 1000, 1000, 1)
out["wrong-token"] = len(answers())
ask(key, reflector.PROBE, 4000, 1000, 2)
out["larger-than-request"] = len(answers())
ask(key, reflector.PROBE, 1000, 1000, 3)
out["valid"] = [len(d) + 28 for d in answers()]
ask(key, reflector.PROBE, 1000, 1000, 3)
out["replayed"] = len(answers())
ask(key, reflector.STATUS, 0, 1200, 4)
print(json.dumps(out))
"""


@needs_lab
def test_reflector_ignores_wrong_tokens_and_never_answers_larger(lab_factory):
    lab = lab_factory("clean-jumbo")
    token = wire.new_token()
    port = 5544
    server = lab.popen("dst", harness.python_argv(REFLECTOR_SCRIPT % (port, token, 6.0)), user=USER)
    assert server.stdout.readline().strip() == "ready"
    # The test's own prober runs in src as the unprivileged user.
    script = PROBER_SCRIPT % (token, wire.new_token(), lab.address("dst", 4), port)
    done = lab.run("src", harness.python_argv(script), user=USER, timeout=30)
    seen = json.loads(done.stdout)
    assert seen["wrong-token"] == 0
    assert seen["larger-than-request"] == 0
    assert seen["valid"] == [1000]
    assert seen["replayed"] == 0
    out, _ = server.communicate(timeout=15)
    report = json.loads(out.strip().splitlines()[-1])
    assert report["stats"]["rejected"] == 1
    assert report["stats"]["too-large"] == 1
    assert report["stats"]["replayed"] == 1
    assert report["largest-reply"] == 1000


@needs_lab
def test_a_run_never_outlives_its_slot(lab_factory):
    """A slot far shorter than `duration` asks for (as when the clock jumped): the phases'
    deadlines and the last-resort alarm end the run inside it, with one clean JSON line."""
    lab = lab_factory("vxlan-ptb")
    spec = {"schema": 1, "dest": lab.address("dst", 4), "reverse": True}
    test = {"type": "pmtu", "spec": spec}
    data = [harness.invoke("tool", "jumbocheck", "participant-data", user=USER,
                           netns=(lab, node), stdin={"participant": i, "test": test}).sql_json()
            for i, node in enumerate(("src", "dst"))]
    start = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0) \
        + datetime.timedelta(seconds=1)
    run_input = {"schema": 1, "task-uuid": "t", "test": test, "participant": 0,
                 "schedule": {"start": start.isoformat(), "duration": "PT3S"},
                 "participant-data": data}
    done = harness.invoke("tool", "jumbocheck", "run", stdin=run_input, user=USER,
                          netns=(lab, "src"), timeout=30)
    finished = datetime.datetime.now(datetime.timezone.utc)
    assert (finished - start).total_seconds() <= 3.0, finished - start
    assert done.status == 0 and done.stdout.count("\n") == 1, done
    lead = done.runner_json()
    # Nobody answers the reverse probes (the dest never runs), and the slot ends first.
    assert lead["result"]["path-mtu"] == 8950
    assert lead["result"]["reverse-path-mtu"] is None
    assert lead["result"]["reverse-error"]


@needs_lab
def test_the_dest_stops_cleanly_when_the_runner_kills_it(lab_factory):
    """SIGTERM (the runner's kill at the slot's end) while the dest's reflector waits: its
    servers stop and it still prints one JSON line saying what happened."""
    lab = lab_factory("clean-jumbo")
    spec = {"schema": 1, "dest": lab.address("dst", 4), "reverse": True}
    test = {"type": "pmtu", "spec": spec}
    data = [{"schema": 1, "protocol": 2},
            harness.invoke("tool", "jumbocheck", "participant-data", user=USER,
                           netns=(lab, "dst"), stdin={"participant": 1, "test": test}).sql_json()]
    start = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    run_input = {"schema": 1, "task-uuid": "t", "test": test, "participant": 1,
                 "schedule": {"start": start.isoformat(), "duration": "PT60S"},
                 "participant-data": data}
    done = harness.invoke("tool", "jumbocheck", "run", stdin=run_input, user=USER,
                          netns=(lab, "dst"), timeout=3)
    assert done.timed_out
    assert done.elapsed < 6, done.elapsed
    assert done.stdout.count("\n") == 1, done
    output = json.loads(done.stdout)
    assert output["succeeded"] is False
    assert "terminated" in output["error"]


@needs_lab
def test_reverse_flows_catch_the_narrow_equal_cost_member(lab_factory):
    """Reverse ECMP: the dest hashes its replies to each of the source's flows onto one of two
    members, one of them 8950 (PTB sent by r4). A run measures the way back with 8 flows, and
    its answer is the minimum of what they saw. All 8 land on one member in 1 run of 128 (CI
    met it on 2026-11-29), so the test runs again, at most REVERSE_RUNS times in all, until
    a run's flows saw both members: missing them all is 1 in 2 million. Every run's answer
    must agree with its own flows, and the run that saw both must say 8950."""
    lab = lab_factory("ecmp-partial-blackhole")
    backward = lab.truth("dst", "src")
    assert backward["partial"] is True
    members = {m["path-mtu"]: m["pmtud"] for m in backward["members"]}
    assert set(members) == {8950, 9000}
    spec = {"schema": 1, "dest": lab.address("dst", 4), "reverse": True, "flows": 8}
    seen = []
    for _ in range(REVERSE_RUNS):
        outcome = harness.run_tool_participants(
            "jumbocheck", spec, [_place(lab, "src"), _place(lab, "dst")], start_in=1.0)
        merged = _check(outcome.merged)
        flows = merged["reverse-flows"]
        assert len(flows) == 8
        for flow in flows:
            assert flow["pmtud"] == members[flow["path-mtu"]]
        mtus = {f["path-mtu"] for f in flows}
        assert merged["reverse-path-mtu"] == min(mtus)
        seen.append(sorted(mtus))
        if mtus == set(members):
            break
    assert seen[-1] == [8950, 9000], seen
    assert merged["reverse-path-mtu"] == backward["path-mtu"] == 8950
    assert merged["reverse-pmtud"] == backward["pmtud"] == "ok"
