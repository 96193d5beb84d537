"""The demo mesh: its truth says what the demo promises, and the kernel agrees with that truth."""

import subprocess

from lab_support import needs_lab


def _mesh():
    from demo import mesh
    return mesh, mesh.build()


def test_truth_covers_every_case_the_demo_promises():
    mesh, topo = _mesh()
    truth = {(s, d): mesh.expected(topo, s, d) for s, d in mesh.pairs(topo)}
    assert len(truth) == 30
    assert truth[("cern", "tokyo")]["path-mtu"] == 9000
    assert truth[("cern", "tokyo")]["pmtud"] == "not-needed"
    assert truth[("cern", "tokyo")]["loss"] is True
    assert truth[("desy", "cern")]["path-mtu"] == 1500
    assert truth[("desy", "cern")]["local-mtu"] == 1500
    assert truth[("cern", "nikhef")]["path-mtu"] == 8950
    assert truth[("cern", "nikhef")]["pmtud"] == "ok"
    # ral: one ECMP member black-holed, in both directions.
    for pair, router in ((("ral", "cern"), "ral-b1"), (("cern", "ral"), "ral-b2")):
        assert truth[pair]["pmtud"] == "blackhole"
        assert truth[pair]["partial"] is True
        assert truth[pair]["member-mtus"] == [8950, 9000]
        assert truth[pair]["blackhole-router"] == router
    # bnl: asymmetric.
    assert truth[("bnl", "cern")]["path-mtu"] == 9000
    assert truth[("bnl", "cern")]["reverse-path-mtu"] == 1500
    assert truth[("cern", "bnl")]["path-mtu"] == 1500
    # Hop addresses name their routers (how a measured black-hole hop is checked).
    link = topo.link_between("ral-gw", "ral-b1")
    assert mesh.node_of(topo, str(topo.link_address(link, "ral-b1", 4))) == "ral-b1"
    assert mesh.node_of(topo, str(topo.link_address(link, "ral-b1", 6))) == "ral-b1"
    assert mesh.node_of(topo, "192.0.2.1") is None
    # Quick mode is a subset of the full mesh.
    assert set(mesh.pairs(topo, quick=True)) <= set(truth)


def test_the_printed_picture_matches_the_topology():
    import re
    mesh, topo = _mesh()
    seen = 0
    for line in mesh.PICTURE:
        for a, mtu, b in re.findall(r"(?<![\w-])(?=([\w-]+)\s+[-=](\d+)[-=]\s+([\w-]+))", line):
            assert topo.link_between(a, b).mtu == int(mtu), line
            seen += 1
    assert seen == len(topo.links)


def _ping_df(lab, source, dest, ip_size, version=4):
    header = 20 if version == 4 else 40
    argv = ["ping", "-%d" % version, "-n", "-c", "1", "-W", "1", "-M", "do",
            "-s", str(ip_size - header - 8), dest if version == 4 else dest + "6"]
    return lab.run(source, argv, check=False).returncode == 0


@needs_lab
def test_mesh_builds_and_the_kernel_agrees_with_the_truth(lab_factory):
    mesh, topo = _mesh()
    lab = lab_factory(topo)
    # Names resolve inside the lab (the hosts file the Lab writes).
    assert _ping_df(lab, "cern", "desy", 1400)
    for source, dest in [("cern", "nikhef"), ("nikhef", "cern"), ("cern", "desy"),
                         ("cern", "bnl"), ("bnl", "cern"), ("cern", "tokyo")]:
        truth = mesh.expected(topo, source, dest)
        for version in (4, 6):
            # tokyo's path drops ~2 %: allow a few tries for the packet that must pass.
            assert any(_ping_df(lab, source, dest, truth["path-mtu"], version)
                       for _ in range(4)), (source, dest, version)
            if truth["path-mtu"] < truth["local-mtu"]:
                assert not _ping_df(lab, source, dest, truth["path-mtu"] + 1, version), \
                    (source, dest, version)
    # The black-holed ECMP member: 8950 crosses on both members, so it always passes;
    # a 9000-byte packet passes on the healthy member only, never with a PTB back.
    assert _ping_df(lab, "ral", "cern", 8950)
    names = list(lab.created)
    lab.destroy()
    listed = subprocess.run(["ip", "netns", "list"], stdout=subprocess.PIPE,
                            universal_newlines=True).stdout
    assert not any(name in listed for name in names)


# Sends one 9000-byte DF datagram from each of 16 source ports and reports, per port, the
# ICMP error that came back ("3/4/1500": frag-needed, MTU 1500) or "silent".
_FLOW_PROBE = r"""
import select, socket, struct, sys, time
addr = socket.gethostbyname(sys.argv[1])
for sport in range(41000, 41016):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, 10, 3)   # IP_MTU_DISCOVER = IP_PMTUDISC_PROBE (DF)
    s.setsockopt(socket.IPPROTO_IP, 11, 1)   # IP_RECVERR
    s.bind(("", sport))
    s.sendto(b"x" * (9000 - 28), (addr, 33434))
    answer, deadline = "silent", time.time() + 0.5
    while time.time() < deadline and answer == "silent":
        select.select([], [], [s], 0.1)
        try:
            _d, anc, _f, _a = s.recvmsg(64, 512, socket.MSG_ERRQUEUE)
        except BlockingIOError:
            continue
        for _l, _t, data in anc:
            _e, _o, kind, code, _p, info, _x = struct.unpack("IBBBBII", data[:16])
            answer = "%d/%d/%d" % (kind, code, info)
    print(sport, answer)
    s.close()
"""


@needs_lab
def test_ral_to_bnl_is_a_black_hole_for_some_flows_even_behind_a_ptb(lab_factory):
    """The compound case the truth calls a (partial) black hole: on the ECMP member through
    ral-b1 a 9000-byte packet vanishes with no PTB; on the other member it reaches core, whose
    1500 link towards bnl answers frag-needed. A prober that only trusts the later PTB
    (for a smaller size) would wrongly call PMTUD ok here."""
    mesh, topo = _mesh()
    assert mesh.expected(topo, "ral", "bnl")["pmtud"] == "blackhole"
    lab = lab_factory(mesh.build(loss_percent=0))
    done = lab.run("ral", ["python3", "-c", _FLOW_PROBE, "bnl"])
    answers = [line.split()[1] for line in done.stdout.splitlines()]
    assert len(answers) == 16
    assert set(answers) == {"silent", "3/4/1500"}, answers
