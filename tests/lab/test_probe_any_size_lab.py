"""The probe engine at sizes that are not plateaus, in the real namespace lab, runs back to back.

The link MTU is drawn at random for every test run (lab.scenarios.odd_size: 1300..8999, away
from the plateaus; the drawn size is in the test's messages), both families, three runs of
`jumbocheck` back to back on one topology as the unprivileged user `jumbotest`, with the
kernel's ICMP rate limits left as they are: every run after the first meets the dest's answer
budget as the run before left it. Each run must be exact; none may say `unknown`.
Timing is not asserted here (see `make bench-probe`)."""

import json
import os

import pytest

import harness
from lab_support import ROOT, needs_lab
from jumbo.probe import wire

# This checkout's library, whatever checkout the virtualenv's editable install names (a
# worktree sharing another's virtualenv would otherwise run that one's code).
JUMBOCHECK = ["env", "PYTHONPATH=" + os.path.join(ROOT, "python-jumbo"),
              os.path.join(ROOT, ".venv", "bin", "jumbocheck")]
ALL_GROUPS = (0, 2147483647)
USER = "jumbotest"
RUNS = 3


def _jumbocheck(lab, dest, extra=()):
    done = lab.run("src", JUMBOCHECK + [dest, "--json"] + list(extra), user=USER, check=False,
                   timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _exact(result, truth, size):
    assert result["succeeded"] is True
    assert (result["path-mtu"], result["pmtud"]) == (truth["path-mtu"], truth["pmtud"]), \
        (size, result)
    assert all(f["path-mtu"] == truth["path-mtu"] for f in result["flows"]), \
        (size, result["flows"])


@needs_lab
@pytest.mark.parametrize("echo", [False, True], ids=["udp", "echo"])
@pytest.mark.parametrize("kind", ["odd-blackhole", "odd-ptb"])
def test_any_size_back_to_back(lab_factory, kind, echo):
    from lab import scenarios
    size = scenarios.odd_size()
    lab = lab_factory(scenarios.get("%s-%d" % (kind, size)),
                      ping_group_range=ALL_GROUPS if echo else None)
    truth = lab.truth("src", "dst")
    assert truth["path-mtu"] == size
    for version in (4, 6):
        for _ in range(RUNS):
            result = _jumbocheck(lab, lab.address("dst", version))
            _exact(result, truth, size)
            assert result["method"] == ("icmp-echo" if echo else "udp")
            if truth["pmtud"] == "blackhole":
                assert result["blackhole"]["size"] == size + 1, (size, result["blackhole"])
                assert result["blackhole"]["ttl"] == 1
                # A size that merely reached a hop is not that hop's MTU.
                assert all(h["mtu"] in (None, truth["local-mtu"]) for h in result["hops"]), \
                    (size, result["hops"])


@needs_lab
def test_hops_give_the_real_mtu_at_any_size(lab_factory):
    from lab import scenarios
    size = scenarios.odd_size()
    lab = lab_factory(scenarios.odd_blackhole(size))
    result = _jumbocheck(lab, lab.address("dst", 4), ["--hops"])
    assert result["path-mtu"] == size, (size, result)
    mtus = [h["mtu"] for h in result["hops"]]
    # Hop 1 (r1) is reached by the local MTU; the dest only by the path MTU.
    assert mtus[0] == 9000 and mtus[-1] == size, (size, result["hops"])


REFLECTOR_SCRIPT = """
import json, sys, time
from jumbo.tool import reflector
from jumbo.probe import wire
server = reflector.Reflector(%d, %r, (4, 6)).open()
print("ready", flush=True)
print(json.dumps(server.serve(time.monotonic() + %f)), flush=True)
"""

FORWARD_SCRIPT = """
import json, sys
from jumbo import probe
out = []
for version in (4, 6):
    for _ in range(%d):
        dest = %r if version == 4 else %r
        result = probe.measure({"dest": dest}, reflector={"port": %d, "token": %r}).as_json()
        out.append(result)
# STATUS: the reflector stops serving (as p0 tells p1 at the end of a run).
import time
from jumbo.tool import reverse
reverse.say_goodbye(%r, %d, %r, 4, time.monotonic() + 3)
print(json.dumps(out))
"""


@needs_lab
def test_forward_probing_through_the_reflector(lab_factory):
    """Two-participant runs probe forward through the dest's reflector: no ICMP budget, every
    flow its own source port; exact at a random size, back to back, both families."""
    from lab import scenarios
    size = scenarios.odd_size()
    lab = lab_factory(scenarios.odd_blackhole(size))
    truth = lab.truth("src", "dst")
    token, port = wire.new_token(), 5543
    server = lab.popen("dst", harness.python_argv(REFLECTOR_SCRIPT % (port, token, 60.0)), user=USER)
    try:
        assert server.stdout.readline().strip() == "ready"
        script = FORWARD_SCRIPT % (RUNS, lab.address("dst", 4), lab.address("dst", 6), port,
                                   token, lab.address("dst", 4), port, token)
        done = lab.run("src", harness.python_argv(script), user=USER, timeout=120)
        results = json.loads(done.stdout)
    finally:
        server.communicate(timeout=70)
    assert len(results) == 2 * RUNS
    for result in results:
        assert result["method"] == "reflector", result
        _exact(result, truth, size)
        assert result["blackhole"]["size"] == size + 1 and result["blackhole"]["ttl"] == 1
        assert len(set(f["source-port"] for f in result["flows"])) == len(result["flows"])


NO_REFLECTOR_SCRIPT = """
import json
from jumbo import probe
result = probe.measure({"dest": %r}, reflector={"port": 5544, "token": "00" * 16}).as_json()
print(json.dumps(result))
"""


@needs_lab
def test_without_a_reflector_the_engine_probes_single_ended(lab_factory):
    """Nothing listens on the reflector port: its port unreachable is not taken for an
    arrival; the engine says so and measures with UDP."""
    lab = lab_factory("vxlan-blackhole")
    truth = lab.truth("src", "dst")
    done = lab.run("src", harness.python_argv(NO_REFLECTOR_SCRIPT % lab.address("dst", 4)), user=USER,
                   timeout=60)
    result = json.loads(done.stdout)
    assert result["method"] == "udp"
    assert "reflector did not answer" in result["diags"]
    _exact(result, truth, truth["path-mtu"])


# A dest's own firewall, as perfSONAR nodes run one: firewalld (EL8/EL9) rejects UDP to a
# closed port with host-prohibited, nftables' `reject` answers admin-prohibited; others drop.
DEST_FIREWALL = {
    "reject-host-prohibited": "meta nfproto ipv4 meta l4proto udp reject with icmp type "
                              "host-prohibited",
    "reject-admin-prohibited": "meta l4proto udp reject with icmpx type admin-prohibited",
    "drop": "meta l4proto udp drop",
}


def _dest_firewall(lab, rule):
    lab.run("dst", ["nft", "add table inet hostfw"])
    lab.run("dst", ["nft", "add chain inet hostfw input { type filter hook input priority 0 ; }"])
    lab.run("dst", ["nft", "add rule inet hostfw input " + rule])


@needs_lab
@pytest.mark.parametrize("echo", [False, True], ids=["udp", "echo"])
@pytest.mark.parametrize("firewall", ["reject-host-prohibited", "reject-admin-prohibited"])
def test_a_rejecting_dest_firewall_is_an_answer(lab_factory, firewall, echo):
    # The reject comes from the dest's own address for a packet it took in whole: proof that
    # the probe crossed, like a port unreachable (before: "unreachable", the run failed).
    from lab import scenarios
    size = scenarios.odd_size()
    lab = lab_factory(scenarios.odd_blackhole(size),
                      ping_group_range=ALL_GROUPS if echo else None)
    _dest_firewall(lab, DEST_FIREWALL[firewall])
    truth = lab.truth("src", "dst")
    versions = (4,) if firewall == "reject-host-prohibited" else (4, 6)
    for version in versions:
        result = _jumbocheck(lab, lab.address("dst", version))
        _exact(result, truth, size)
        assert result["blackhole"]["size"] == size + 1 and result["blackhole"]["ttl"] == 1, \
            (size, result)


@needs_lab
@pytest.mark.parametrize("version", [4, 6])
def test_a_dest_dropping_udp_leaves_the_echo_answer_and_says_so(lab_factory, version):
    # Echo answers, UDP to closed ports vanishes at the dest: the path MTU comes from echo,
    # the UDP flows stop once the dest has had time to answer (instead of spending the whole
    # slot), the time left still locates the black hole, and the result says why.
    from lab import scenarios
    size = scenarios.odd_size()
    lab = lab_factory(scenarios.odd_blackhole(size), ping_group_range=ALL_GROUPS)
    _dest_firewall(lab, DEST_FIREWALL["drop"])
    truth = lab.truth("src", "dst")
    result = _jumbocheck(lab, lab.address("dst", version))
    assert result["method"] == "icmp-echo"
    assert (result["path-mtu"], result["pmtud"]) == (truth["path-mtu"], truth["pmtud"]), \
        (size, result)
    assert result["blackhole"]["size"] == size + 1 and result["blackhole"]["ttl"] == 1, \
        (size, result)
    assert "none of the UDP probes" in result["diags"], result["diags"]
    echo_flows = [f for f in result["flows"] if f["source-port"] is None]
    assert [f["path-mtu"] for f in echo_flows] == [size]
    assert all(f["pmtud"] == "unknown" for f in result["flows"] if f["source-port"]), \
        result["flows"]
