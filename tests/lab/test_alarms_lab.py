"""jumbo-alarms on a real namespace mesh: two measurement rounds (the pmtu test through the
harness, as pScheduler runs it, archived by the jumbo archiver), a regression injected between
them, and the events it must raise, once.

    a --\\
         nren -9000- core -9000- c-gw -9000- c        (round 2: core <-> c-gw at 1500, and both
    b --/                                              routers drop their PTBs)

Round 1: every path jumbo. Round 2: a -> c and b -> c vanish at core (one hop, seen by both
through the same interface), c -> a and c -> b at c-gw: two "MTU black hole shared by multiple
sites" events; every site's capable share halves or worse against round 1: three "jumbo share
decreased" events; nothing else, and nothing at all when the same data is read again.
"""

import datetime
import json
import time
import uuid

import harness
from lab.topology import Node, Topology
from lab_support import needs_lab
from jumbo.report.alarms_cli import main as alarms_main

SITES = ("a", "b", "c")


def topology(regressed=False):
    r = lambda name: Node(name, router=True, drop_ptb=regressed and name in ("core", "c-gw"))  # noqa: E731
    nodes = [Node("a"), Node("b"), Node("c"), r("nren"), r("core"), r("c-gw")]
    links = [("a", "nren", 9000), ("b", "nren", 9000), ("c", "c-gw", 9000), ("nren", "core", 9000),
             ("core", "c-gw", 1500 if regressed else 9000)]
    return Topology("alarm-mesh", nodes, links, description="three sites, one regressing link")


def _now():
    return datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def measure_round(lab, store_url):
    records = []
    for source in SITES:
        for dest in SITES:
            if source == dest:
                continue
            spec = {"schema": 1, "dest": lab.address(dest, 4)}
            start = _now()
            outcome = harness.run_tool_participants(
                "jumbocheck", {"type": "pmtu", "spec": spec},
                [{"lab": lab, "node": source, "user": "jumbotest"}], start_in=1.0)
            merged = outcome.merged
            assert merged.get("succeeded") is True, merged
            run = "https://%s/pscheduler/tasks/%s/runs/%s" % (source, uuid.uuid4(), uuid.uuid4())
            reference = {"source-site": source, "dest-site": dest}
            records.append({"data": {"schema": 1, "_url": store_url}, "attempts": 0, "run-href": run,
                            "result": {"id": run.rsplit("/", 1)[1], "schedule": {"start": start},
                                       "test": {"type": "pmtu", "spec": spec},
                                       "tool": {"name": "jumbocheck"}, "participants": [source],
                                       "result": merged, "reference": reference,
                                       "task": {"reference": reference}, "run": {"href": run}}})
    outcomes = harness.archive_stream("jumbo", records, retry_scale=0.2, max_wait=5.0)
    assert all(o.succeeded for o in outcomes), [o.error for o in outcomes]


def inject(lab):
    """core <-> c-gw down to 1500, both routers dropping their PTBs (lab/netns.py's rules)."""
    topo = lab.topology
    link = topo.link_between("core", "c-gw")
    for node in ("core", "c-gw"):
        lab.run(node, ["ip", "link", "set", topo.interface_name(link, node), "mtu", "1500"])
        lab.run(node, ["nft", "-f", "-"], input_text="\n".join([
            "add table inet lab", "add chain inet lab lab_out { type filter hook output priority 0; }",
            "add rule inet lab lab_out icmp type destination-unreachable icmp code frag-needed drop",
            "add rule inet lab lab_out icmpv6 type packet-too-big drop"]) + "\n")


def alarms(store_url, state, out, split):
    assert alarms_main(["--store", store_url, "--state", str(state), "--out", str(out),
                        "--recent-since", split]) == 0
    return [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []


@needs_lab
def test_a_regression_raises_the_expected_alarms_once(lab_factory, tmp_path):
    store_url = "sqlite:///" + str(tmp_path / "jumbo.db")
    lab = lab_factory(topology())
    measure_round(lab, store_url)
    time.sleep(1.1)
    split = datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ")
    time.sleep(1.1)
    inject(lab)
    measure_round(lab, store_url)

    truth = topology(regressed=True)
    holes = {}
    for s in SITES:
        for d in SITES:
            if s != d:
                t = truth.truth(s, d)
                assert t["pmtud"] == ("blackhole" if "c" in (s, d) else "not-needed"), (s, d, t)
                if t["pmtud"] == "blackhole":
                    holes.setdefault(t["members"][0]["blackhole-router"], set()).add((s, d))
    assert holes == {"core": {("a", "c"), ("b", "c")}, "c-gw": {("c", "a"), ("c", "b")}}

    state, out = tmp_path / "state.json", tmp_path / "alarms.jsonl"
    events = alarms(store_url, state, out, split)
    hop_events = [e for e in events if e["event"] == "MTU black hole shared by multiple sites"]
    share_events = [e for e in events if e["event"] == "jumbo share decreased"]
    assert len(events) == len(hop_events) + len(share_events) == 5, [e["event"] for e in events]

    # One event per hop, located at the router the truth names, for exactly its paths.
    routers = {}
    for e in hop_events:
        node = [n for n in truth.nodes if any(
            str(truth.link_address(link, n, 4)) == e["source"]["hop_ip"]
            for link in truth.links if n in (link.a, link.b))]
        routers[node[0]] = set(tuple(p.split(" -> ")) for p in e["source"]["pairs"])
        assert e["tags"] == ["A", "B", "C"] and e["source"]["num_pairs"] == 2
    names = {lab.address(s, 4): s for s in SITES}
    named = {router: set((names.get(s, s), names.get(d, d)) for s, d in pairs)
             for router, pairs in routers.items()}
    assert named == holes, named

    # Every site's capable share against round 1 (all 100 %): a and b keep 2 of 4 paths, c none.
    shares = {e["tags"][0]: (e["source"]["baseline"], e["source"]["recent"], e["source"]["basis"])
              for e in share_events}
    assert shares == {"A": (1.0, 0.5, "paths"), "B": (1.0, 0.5, "paths"), "C": (1.0, 0.0, "paths")}

    # The same data again: nothing raised, nothing cleared.
    before = state.read_text()
    assert alarms(store_url, state, out, split) == events
    assert json.loads(state.read_text()) == json.loads(before)
