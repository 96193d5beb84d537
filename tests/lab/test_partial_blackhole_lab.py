"""The CERN EOS case in the namespace lab: a black hole on one ECMP member only, run back to
back as a mesh does, through the dest's reflector (the template's way) and single-ended.

Ground truth from the lab: the healthy member carries 9000, the other crosses an 8950 link
whose routers drop PTBs, so big packets of the flows hashed onto it vanish at its first router.
"""

import pytest

import harness
from lab.topology import Node, Topology
from lab_support import needs_lab
from test_probe_lab import jumbocheck

USER = "jumbotest"


def _lossy_partial(loss_percent=2):
    """src - r1 = two members = r4 - dst; member b has the 8950 link (PTBs dropped); r4 drops
    loss_percent of the packets each way (the demo's ral -> tokyo, in small)."""
    nodes = [Node("src"), Node("r1", router=True), Node("a1", router=True),
             Node("a2", router=True), Node("b1", router=True, drop_ptb=True),
             Node("b2", router=True, drop_ptb=True),
             Node("r4", router=True, loss_percent=loss_percent), Node("dst")]
    links = [("src", "r1", 9000), ("r1", "a1", 9000), ("a1", "a2", 9000), ("a2", "r4", 9000),
             ("r1", "b1", 9000), ("b1", "b2", 8950), ("b2", "r4", 9000), ("r4", "dst", 9000)]
    return Topology("lossy-partial", nodes, links,
                    description="two ECMP members, one black-holed at 8950, 2 % loss")


def _located_at_truth(lab, result, truth):
    member = [m for m in truth["members"] if m["pmtud"] == "blackhole"][0]
    hole = result["blackhole"]
    assert hole is not None, result
    assert hole["ttl"] == member["blackhole-ttl"], result
    assert hole["size"] == 8951, result
    router_ips = set(str(lab.topology.link_address(link, member["blackhole-router"], v))
                     for link in lab.topology.links
                     if member["blackhole-router"] in (link.a, link.b) for v in (4, 6))
    assert hole["ip"] in router_ips, (hole, member)


@needs_lab
@pytest.mark.parametrize("version", [4, 6])
def test_through_the_reflector_every_run_finds_and_locates_the_partial_hole(lab_factory,
                                                                            version):
    """The template's spec (40 flows through the dest's reflector): three runs back to back,
    each exact with the partial black hole and its hop, the probing itself well under 1 s."""
    lab = lab_factory("ecmp-partial-blackhole")
    truth = lab.truth("src", "dst")
    places = [{"lab": lab, "node": "src", "user": USER}, {"lab": lab, "node": "dst", "user": USER}]
    spec = {"schema": 1, "dest": lab.address("dst", version), "flows": 40, "reflector": True}
    for _ in range(3):
        outcome = harness.run_tool_participants("jumbocheck", spec, places, start_in=0.5)
        result = outcome.merged
        assert result["succeeded"] and result["method"] == "reflector", result
        assert (result["path-mtu"], result["pmtud"]) == (8950, "blackhole"), result
        verdicts = sorted(set(f["pmtud"] for f in result["flows"]))
        assert verdicts == ["blackhole", "not-needed"] and len(result["flows"]) == 40, verdicts
        assert result["flows-not-measured"] == 0 and result["jumbo"] is False
        _located_at_truth(lab, result, truth)
        assert result["elapsed"] < 1.0, result["elapsed"]


@needs_lab
def test_single_ended_udp_measures_whole_flows_or_says_it_did_not(lab_factory):
    """UDP only (Debian's ping_group_range), 2 % loss on a partial black hole, four runs back
    to back on the dest's spent ICMP budget: every run ends with each flow either confirmed or
    reported as not measured, never half-measured (no `unknown`); a hole found is located; a
    run that found none saw every measured flow cross 9000 (the flows' luck, not a guess)."""
    lab = lab_factory(_lossy_partial())
    truth = lab.truth("src", "dst")
    assert truth["partial"] and truth["loss"]
    for _ in range(4):
        status, result, err = jumbocheck(lab, [lab.address("dst", 4), "--flows", "4"])
        assert status == 0, err
        assert result["method"] == "udp" and result["pmtud"] != "unknown", result
        assert all(f["path-mtu"] is not None for f in result["flows"]), result["flows"]
        assert len(result["flows"]) + result["flows-not-measured"] == 4
        if result["flows-not-measured"]:
            assert "%d of 4 flows not measured" % result["flows-not-measured"] in \
                result["diags"]
        if result["pmtud"] == "blackhole":
            assert result["path-mtu"] == 8950
            _located_at_truth(lab, result, truth)
        else:
            assert (result["path-mtu"], result["pmtud"]) == (9000, "not-needed"), result
            assert set(f["path-mtu"] for f in result["flows"]) == {9000}


@needs_lab
def test_the_final_status_crosses_a_1500_member_over_ipv6(lab_factory):
    """p1's STATUS answer (its report) went back as large as p0's request, unfragmented: over
    IPv6, on a path with a 1500 member, it was lost in 28 of 50 runs (bench-ecmp), the lead
    waited for it and p1 served to its slot's end. It now fits IPv6's minimum MTU."""
    lab = lab_factory("ecmp2-1500-blackhole")
    places = [{"lab": lab, "node": "src", "user": USER}, {"lab": lab, "node": "dst", "user": USER}]
    spec = {"schema": 1, "dest": lab.address("dst", 6), "flows": 40, "reflector": True}
    for _ in range(3):
        outcome = harness.run_tool_participants("jumbocheck", spec, places, start_in=0.5)
        result = outcome.merged
        assert result["succeeded"] and result["method"] == "reflector", result
        assert "did not answer the final STATUS" not in (result.get("diags") or ""), result
        # p1 ended when p0 said it was done, not at its slot's end.
        assert outcome.runs[1].elapsed < outcome.duration - 2, outcome.runs[1].elapsed
