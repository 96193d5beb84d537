"""Partial (ECMP) black holes in the namespace lab (issue 22): the ECMP cases' truth, that the lab
really spreads flows over every member, and the tool on the 4-member overlay case: through the
dest's reflector with the template's 40 flows, and single-ended UDP with the default flows
(which may miss a hole on 1 of 4 members by chance, but never leaves it unknown). The
benchmark over many runs is `make bench-ecmp`."""

import pytest

import harness
from lab_support import needs_lab

USER = "jumbotest"
NO_ECHO = (1, 0)


def test_truth_of_the_overlay_case_per_member():
    from lab import scenarios
    for version, hole_ip in ((4, "198.18.4.2"), (6, "fd00:18:4::2")):
        truth = scenarios.get("ecmp4-overlay-blackhole").truth("src", "dst", version)
        assert sorted(m["path-mtu"] for m in truth["members"]) == [8950, 9000, 9000, 9000]
        assert (truth["path-mtu"], truth["pmtud"], truth["partial"]) == (8950, "blackhole", True)
        assert truth["bad-share"] == 0.25 and truth["local-mtu"] == 9000
        bad = [m for m in truth["members"] if m["pmtud"] == "blackhole"]
        # The hole is the router before the 8950 link: TTL 2, its address on the link from r1.
        assert [(m["blackhole-ttl"], m["blackhole-router"], m["blackhole-ip"]) for m in bad] \
            == [(2, "r5", hole_ip)]
        assert (truth["blackhole-ttl"], truth["blackhole-ip"]) == (2, hole_ip)
        assert all(m["pmtud"] == "not-needed" and m["blackhole-ip"] is None
                   for m in truth["members"] if m not in bad)
    lossy = scenarios.get("ecmp4-overlay-blackhole-lossy").truth("src", "dst")
    assert lossy["loss"] and lossy["bad-share"] == 0.25 and lossy["blackhole-ttl"] == 2
    two = scenarios.get("ecmp2-1500-blackhole").truth("src", "dst", 6)
    assert sorted(m["path-mtu"] for m in two["members"]) == [1500, 9000]
    assert (two["bad-share"], two["blackhole-ttl"], two["blackhole-ip"]) == (0.5, 2, "fd00:18:2::2")


@needs_lab
@pytest.mark.parametrize("case", ["ecmp4-overlay-blackhole", "ecmp2-1500-blackhole"])
def test_the_lab_spreads_udp_flows_over_every_member(lab_factory, case):
    lab = lab_factory(case)
    members = len(lab.truth("src", "dst")["members"])
    for version in (4, 6):
        hits = lab.ecmp_hits("src", "dst", version)
        assert len(hits) == members and all(hits.values()), hits
        assert sum(hits.values()) == 40
        # ICMP echo has no ports: it takes one member, always the same.
        for _ in range(2):
            echo = lab.ecmp_hits("src", "dst", version, echo=True)
            assert sorted(echo.values()) == [0] * (members - 1) + [1], echo


def _reflector_run(lab, version, flows=40):
    from bench import ecmp
    spec = ecmp.reflector_spec(lab.address("dst", version), flows)
    places = [{"lab": lab, "node": node, "user": USER} for node in ("src", "dst")]
    outcome = harness.run_tool_participants("jumbocheck", spec, places, start_in=0.5)
    return spec, outcome.merged


@needs_lab
def test_through_the_reflector_40_flows_the_partial_hole_is_exact_and_located(lab_factory):
    """The template's way (issue 22): the dest's node answers the forward probes, 40 flows cost
    nothing, so a hole on 1 of 4 members is found ((3/4)^40 ~ 1e-5 to miss it), sized and
    located at the truth's hop, in well under a second of probing."""
    lab = lab_factory("ecmp4-overlay-blackhole")
    for version in (4, 6):
        truth = lab.truth("src", "dst", version)
        for _ in range(2):
            spec, merged = _reflector_run(lab, version)
            assert spec.get("reflector") is True, "the pmtu spec lacks the reflector field"
            assert merged["succeeded"] is True, merged
            assert merged["method"] == "reflector", merged
            assert (merged["path-mtu"], merged["pmtud"]) == (8950, "blackhole"), merged
            verdicts = set((f["path-mtu"], f["pmtud"]) for f in merged["flows"])
            assert verdicts == {(9000, "not-needed"), (8950, "blackhole")}, merged["flows"]
            assert merged["blackhole"]["ttl"] == truth["blackhole-ttl"], merged["blackhole"]
            assert merged["blackhole"]["ip"] == truth["blackhole-ip"], merged["blackhole"]
            assert merged["blackhole"]["size"] == 8951
            assert merged["elapsed"] < 1.0, merged["elapsed"]


@needs_lab
@pytest.mark.parametrize("case", ["ecmp4-overlay-blackhole", "ecmp4-overlay-blackhole-lossy"])
def test_single_ended_udp_finds_and_locates_the_hole_or_misses_it_by_chance(lab_factory, case):
    """Default spec (4 flows), UDP (ping_group_range "1 0"), runs back to back: each run either
    reports the partial hole located at the truth's hop, or reports every flow crossing when
    no measured flow took the bad member (told by the lab's counters) - never unknown or
    unconfirmed (flows the dest's budget leaves no time for may be left out, said so)."""
    from bench import ecmp
    lab = lab_factory(case, ping_group_range=NO_ECHO)
    for version in (4, 6):
        truth = lab.truth("src", "dst", version)
        bad = {"r5"}
        for _ in range(2):
            result, _wall = ecmp.single_ended(lab, lab.address("dst", version), None)
            assert result.get("method") == "udp", result
            on_bad = ecmp.on_bad_members(lab, version, result, ecmp.UDP_PORT, bad, False)
            kind, located = ecmp.classify(result, truth, on_bad)
            # Flows the budget leaves no time for may be left out, said so (flows-not-measured):
            # the measured ones must all be confirmed, and a miss is a miss of those.
            assert len(result["flows"]) + result.get("flows-not-measured", 0) == 4, result
            if kind in ("exact", "whole"):
                # `whole`: every measured flow took the bad member (the counters say so):
                # the hole on all of them is right, and located all the same.
                assert located, result["blackhole"]
            else:
                assert kind == "miss" and on_bad == 0, (kind, on_bad, result)


SEND = r"""
import socket, sys, time
dest, count, gap = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
s = socket.socket(socket.AF_INET6 if ":" in dest else socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(count):
    s.sendto(b"x", (dest, 33434))
    time.sleep(gap)
"""


@needs_lab
def test_the_dest_budget_bench_probe_reads_is_the_kernels(lab_factory):
    """bench/budget.py's model of the dest's port-unreachable budget (burst 6, then the rate
    its sysctls give per family) against what the kernel sends: a burst of 30 datagrams gets
    6 answers, 2 s of datagrams every 10 ms about 2 s x rate more."""
    import sys
    import time
    from bench.budget import BURST, Budget
    lab = lab_factory("clean-jumbo")
    for version in (4, 6):
        budget = Budget(lab, "dst", "src", version)
        try:
            dest = lab.address("dst", version)
            before = budget.answers()
            lab.run("src", [sys.executable, "-c", SEND, dest, "30", "0"])
            assert budget.answers() - before == BURST
            before, start = budget.answers(), time.monotonic()
            lab.run("src", [sys.executable, "-c", SEND, dest, "200", "0.01"])
            spent = time.monotonic() - start
            got = budget.answers() - before
            assert abs(got - spent * budget.rate) <= max(2, 0.25 * spent * budget.rate), \
                (version, got, spent, budget.describe())
        finally:
            budget.close()
