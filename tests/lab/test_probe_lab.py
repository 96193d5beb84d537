"""The probe engine (`jumbocheck`) in the real namespace lab, run as the unprivileged user
`jumbotest`: every scenario's path MTU to the byte and its PMTUD verdict, against the truth."""

import json
import os

import pytest

from lab_support import ROOT, needs_lab

# This checkout's library, whatever checkout the virtualenv's editable install names (a
# worktree sharing another's virtualenv would otherwise run that one's code).
JUMBOCHECK = ["env", "PYTHONPATH=" + os.path.join(ROOT, "python-jumbo"),
              os.path.join(ROOT, ".venv", "bin", "jumbocheck")]
ALL_GROUPS = (0, 2147483647)

V6_KEY = {"clean-jumbo", "bottleneck-ptb", "vxlan-blackhole", "multi-router-blackhole",
          "echo-filtered", "lossy", "ecmp-partial-blackhole", "asymmetric",
          "blackhole-then-ptb", "lossy-long"}


def jumbocheck(lab, dest_argv, extra=()):
    done = lab.run("src", JUMBOCHECK + list(dest_argv) + list(extra) + ["--json"],
                   user="jumbotest", check=False, timeout=120)
    result = json.loads(done.stdout) if done.stdout.strip() else None
    return done.returncode, result, done.stderr


def check_against_truth(lab, result, truth):
    assert result["succeeded"] is True
    assert result["path-mtu"] == truth["path-mtu"], result
    assert result["pmtud"] == truth["pmtud"], result
    assert result["local-mtu"] == truth["local-mtu"]
    assert result["jumbo"] == (truth["path-mtu"] >= 9000)
    holes = [m["blackhole-ttl"] for m in truth["members"] if m["blackhole-ttl"]]
    if holes:
        assert result["blackhole"]["ttl"] in holes, result
        # The smallest size that vanishes silently: one byte above the link the black-hole
        # router cannot forward onto (not path MTU + 1 when a PTB stage comes after it).
        sizes = [m["hop-mtus"][m["blackhole-ttl"]] + 1 for m in truth["members"]
                 if m["blackhole-ttl"]]
        assert result["blackhole"]["size"] in sizes, result
    else:
        assert result["blackhole"] is None
    assert result["probes"] >= 1 and result["elapsed"] >= 0


def _scenarios():
    from lab import scenarios
    return sorted(scenarios.SCENARIOS)


@needs_lab
@pytest.mark.parametrize("scenario", _scenarios())
def test_every_scenario_exact(lab_factory, scenario):
    lab = lab_factory(scenario)
    truth = lab.truth("src", "dst")
    versions = (4, 6) if scenario in V6_KEY else (4,)
    if truth["partial"]:
        # Many flows over UDP need many port unreachables from the dest; IPv4 allows it one
        # a second after a burst of 6 (slow), IPv6 four a second: the ECMP check runs on v6.
        versions = (6,)
    extra = ["--flows", "12"] if truth["partial"] else []
    for version in versions:
        status, result, err = jumbocheck(lab, [lab.address("dst", version)], extra)
        assert status == 0, err
        assert result["ip-version"] == version
        assert result["method"] == "udp"  # ping_group_range is "1 0" in a new namespace
        check_against_truth(lab, result, truth)
        if truth["partial"]:
            seen = set((f["path-mtu"], f["pmtud"]) for f in result["flows"])
            assert seen == {(9000, "not-needed"), (8950, "blackhole")}, result["flows"]
            assert len(set(f["source-port"] for f in result["flows"])) == 12


@needs_lab
def test_lossy_path_stays_exact(lab_factory):
    """Echo for the first flow, UDP for the others, runs back to back: each run finds the
    dest's UDP answer budget (1/s for IPv4) spent by the previous one and must wait for it
    rather than take its silence for loss or an MTU, and still give the whole truth."""
    lab = lab_factory("lossy", ping_group_range=ALL_GROUPS)
    truth = lab.truth("src", "dst")
    for attempt in range(3):
        for version in (4, 6):
            status, result, err = jumbocheck(lab, [lab.address("dst", version)])
            assert status == 0, err
            assert result["method"] == "icmp-echo", result
            check_against_truth(lab, result, truth)
            assert all(f["path-mtu"] == truth["path-mtu"] for f in result["flows"]), result


@needs_lab
@pytest.mark.parametrize("percent", [2, 5])
def test_long_lossy_path_stays_exact(lab_factory, percent):
    """Four routers, random loss each way (the demo's tokyo): a lost probe is never taken
    for an MTU limit, and every flow is confirmed within the time bound."""
    from lab import scenarios
    lab = lab_factory(scenarios.lossy_long(percent), ping_group_range=ALL_GROUPS)
    truth = lab.truth("src", "dst")
    for attempt in range(2):
        for version in (4, 6):
            status, result, err = jumbocheck(lab, [lab.address("dst", version)])
            assert status == 0, err
            check_against_truth(lab, result, truth)
            assert all(f["path-mtu"] == truth["path-mtu"] for f in result["flows"]), result


@needs_lab
@pytest.mark.parametrize("version", [4, 6])
def test_black_hole_before_a_ptb_stage(lab_factory, version):
    """9000-byte packets vanish at r1 (8950 link, PTB dropped) while 8950-byte ones get a
    genuine 1500 PTB from r3: a TCP sender at 9000 never hears a PTB and stalls."""
    lab = lab_factory("blackhole-then-ptb")
    truth = lab.truth("src", "dst")
    assert (truth["path-mtu"], truth["pmtud"]) == (1500, "blackhole")
    assert truth["members"][0]["blackhole-ttl"] == 1
    status, result, err = jumbocheck(lab, [lab.address("dst", version)], ["--hops"])
    assert status == 0, err
    check_against_truth(lab, result, truth)
    assert result["blackhole"] == {"ttl": 1, "size": 8951,
                                   "ip": lab.topology.link_address(
                                       lab.topology.links[0], "r1", version).compressed}
    assert all(f["pmtud"] == "blackhole" for f in result["flows"])
    assert [h["mtu"] for h in result["hops"]][0] == 9000
    assert result["hops"][-1]["ip"] == lab.address("dst", version)


@needs_lab
@pytest.mark.parametrize("scenario", ["vxlan-blackhole", "echo-filtered", "multi-router"])
def test_with_icmp_datagram_sockets_allowed(lab_factory, scenario):
    lab = lab_factory(scenario, ping_group_range=ALL_GROUPS)
    truth = lab.truth("src", "dst")
    for version in (4, 6):
        status, result, err = jumbocheck(lab, [lab.address("dst", version)], ["--hops"])
        assert status == 0, err
        check_against_truth(lab, result, truth)
        expected = "udp" if truth["echo-filtered"] else "icmp-echo"
        assert result["method"] == expected
        # Per-hop view: the last hop is the dest, and the MTU drops where the truth says.
        hops = result["hops"]
        assert hops and hops[-1]["ip"] == lab.address("dst", version)
        assert [h["mtu"] for h in hops][-1] == truth["path-mtu"]
        assert hops[0]["mtu"] == truth["members"][0]["hop-mtus"][0] or \
            truth["members"][0]["hop-mtus"][1] < hops[0]["mtu"]


@needs_lab
def test_host_names_and_text_output(lab_factory):
    lab = lab_factory("vxlan-ptb")
    done = lab.run("src", JUMBOCHECK + ["dst", "--flows", "2"], user="jumbotest", check=False)
    assert done.returncode == 0, done.stderr
    # the same verdict line as `pscheduler task pmtu` (jumbo.testtype.render.verdict)
    assert done.stdout.startswith("Path MTU 8950 < 9000: not jumbo, PMTUD works"), done.stdout


@needs_lab
def test_errors_are_clean(lab_factory):
    lab = lab_factory("clean-jumbo")
    status, result, err = jumbocheck(lab, ["no-such-host.invalid"])
    assert status == 1 and result["succeeded"] is False
    assert "resolve" in result["error"] and "Traceback" not in err
    status, result, err = jumbocheck(lab, ["198.19.250.1"])
    assert status == 1 and "route" in result["error"], result
    lab.run("src", ["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"])
    status, result, err = jumbocheck(lab, [lab.address("dst", 6)])
    assert status == 1 and "Traceback" not in err, err
    assert "IPv6" in result["error"] or "route" in result["error"], result
    status, result, err = jumbocheck(lab, ["dst", "-6"])
    assert status == 1 and "Traceback" not in err
    done = lab.run("src", JUMBOCHECK + ["dst", "--flows", "many"], user="jumbotest", check=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr


@needs_lab
@pytest.mark.parametrize("scenario", ["multi-router", "multi-router-blackhole"])
def test_hops_report_the_mtu_where_it_changes(lab_factory, scenario):
    """Per-hop MTU, tracepath-style: hop k carries the smallest link MTU of the first k links."""
    lab = lab_factory(scenario)
    truth = lab.truth("src", "dst")
    status, result, err = jumbocheck(lab, [lab.address("dst")], ["--hops"])
    assert status == 0, err
    link_mtus = truth["members"][0]["hop-mtus"]
    hole = truth["members"][0]["blackhole-ttl"]
    expected, running = [], None
    for mtu in link_mtus:
        running = mtu if running is None else min(running, mtu)
        expected.append(running)
    measured = [hop["mtu"] for hop in result["hops"]]
    if hole is None:
        assert measured == expected, result["hops"]
    else:
        # Past a black hole the hop's MTU is only known once the search found the size.
        assert measured[:hole] == expected[:hole], result["hops"]
        assert result["blackhole"]["ttl"] == hole
    assert result["hops"][-1]["ip"] == lab.address("dst")


@needs_lab
@pytest.mark.parametrize("version", [4, 6])
def test_a_ptb_with_mtu_zero_is_reported_not_trusted(lab_factory, version):
    lab = lab_factory("zero-ptb")
    truth = lab.truth("src", "dst")
    status, result, err = jumbocheck(lab, [lab.address("dst", version)])
    assert status == 0, err
    assert result["path-mtu"] == truth["path-mtu"]
    # The router did signal (senders fall back to the minimum MTU), so not a black hole,
    # but the size it gave is listed as useless and the answer came from the probes.
    assert result["pmtud"] == "ok"
    assert result["ptb"] and all(p["mtu"] == 0 and p["useful"] is False for p in result["ptb"])


@needs_lab
def test_without_hops_a_black_hole_gives_no_hop_mtus(lab_factory):
    """Without --hops the black-hole walk only locates the hole: the size that reached a hop
    is not that hop's MTU, so the result has no hops (found on a real pScheduler: hop 1 said
    "mtu": 8951 on an 8950 path)."""
    lab = lab_factory("multi-router-blackhole")
    truth = lab.truth("src", "dst")
    status, result, err = jumbocheck(lab, [lab.address("dst")])
    assert status == 0, err
    assert result["blackhole"]["ttl"] == truth["members"][0]["blackhole-ttl"]
    assert result["hops"] == [], result["hops"]


@needs_lab
@pytest.mark.parametrize("dest", ["127.0.0.1", "::1"])
def test_loopback_mtu_above_the_largest_ip_packet_is_no_black_hole(lab_factory, dest):
    # The namespace's own loopback: MTU 65536, one more than an IP packet can be. Before the
    # engine capped its search at 65535, that unsendable size read as a silent black hole.
    lab = lab_factory("clean-jumbo")
    status, result, err = jumbocheck(lab, [dest])
    assert status == 0, err
    assert result["local-mtu"] == 65536
    assert result["path-mtu"] == 65535, result
    assert result["pmtud"] != "blackhole" and result["blackhole"] is None, result


@needs_lab
def test_jumbocheck_refuses_what_needs_pscheduler_nodes(lab_factory):
    lab = lab_factory("clean-jumbo")
    for extra in (["--reverse"], ["--dest-node", "198.18.0.9"]):
        done = lab.run("src", JUMBOCHECK + [lab.address("dst", 4)] + extra, user="jumbotest",
                       check=False)
        assert done.returncode == 2, done.stdout
        assert "pscheduler task pmtu" in done.stderr
        assert not done.stdout
    done = lab.run("src", JUMBOCHECK + ["--help"], user="jumbotest", check=False)
    assert done.returncode == 0
    for option in ("--flows", "--hops", "--timeout", "--json", "-6"):
        assert option in done.stdout
    options = [line.split()[0] for line in done.stdout.splitlines() if line.startswith("  -")]
    assert "--flows=N" in options and not [o for o in options if "reverse" in o or "node" in o]
