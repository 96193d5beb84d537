r"""The demo's lab mesh: six WLCG-like "sites" around one core router, as ONE lab.Topology.

Each site is a host named after the site (resolvable by that name inside the lab) behind
its own border network. Between them they show the cases the suite exists to find:

    cern    jumbo end to end: 9000 everywhere
    desy    a 1500 site: the host's own interface is 1500 (not jumbo-capable)
    nikhef  jumbo host behind a VXLAN-like 8950 fabric link; the routers send PTBs (PMTUD works)
    ral     an ECMP pair towards the core; one member crosses an 8950 link whose routers drop
            PTBs: a black hole for some flows only (the CERN EOS failure)
    bnl     asymmetric: traffic from bnl leaves on a 9000 path, traffic to bnl comes back
            through a 1500 link (PTB sent), so each direction has a different path MTU
    tokyo   a long, lossy path: four routers out, ~2 % random loss each way, jumbo end to end
            (the lab kernel has no netem, so "long" is hops, not delay)

Links and their MTUs (`=` marks where something goes wrong):

    cern   -9000- cern-gw  -9000- core
    desy   -1500- desy-gw  -9000- core
    nikhef -9000- nik-leaf =8950= nik-spine -9000- core         (PTBs sent)
    ral    -9000- ral-gw, then two equal-cost members to core:
               a: ral-gw -9000- ral-a1 -9000- ral-a2 -9000- core
               b: ral-gw -9000- ral-b1 =8950= ral-b2 -9000- core  (ral-b1, ral-b2 drop PTBs)
    bnl    -9000- bnl-gw   -9000- core                          (the way out)
                  bnl-gw   -9000- bnl-alt =1500= core           (the way back in)
    tokyo  -9000- tk1 -9000- tk2 -9000- tk3 -9000- core         (tk2 drops ~2 %)

The truth of every directed pair (path MTU, PMTUD verdict, where the black hole is)
comes from `Topology.truth`, so what the demo checks against cannot drift from what it builds.
"""

import collections
import itertools
import json
import os

from lab.topology import Node, Topology

TARGET_MTU = 9000

# name -> (one-line description, what a newcomer should look for)
SITES = collections.OrderedDict([
    ("cern", ("jumbo end to end (9000 on every link)",
              "path MTU 9000 towards every jumbo site")),
    ("desy", ("a 1500 site: the host itself is not jumbo-capable",
              "1500 in both directions; nothing to fix on the path, the host needs MTU 9000")),
    ("nikhef", ("jumbo host behind a VXLAN-like 8950 fabric link, PTBs sent",
                "path MTU 8950 and pmtud ok: PMTUD copes, but the fabric needs 9050+")),
    ("ral", ("ECMP pair, one member through an 8950 link whose routers drop PTBs",
             "pmtud blackhole on some flows only: the flows list differs per flow")),
    ("bnl", ("asymmetric: leaves on a 9000 path, answers come back through 1500",
             "path MTU 9000 from bnl, 1500 towards bnl: the reverse measurement shows it")),
    ("tokyo", ("long lossy path: four routers out, ~2% random loss each way",
               "jumbo works; throughput suffers from loss, jumbo suffers less (Mathis)")),
])

LOSS_PERCENT = 2

# The two kinds of node a mesh has: distributions that let every user open ICMP echo
# sockets (net.ipv4.ping_group_range "0 2147483647", EL9's default) and those that let
# nobody (Debian's default "1 0"). It is a per-namespace setting, so the demo has both.
ECHO_SITES = ("cern", "nikhef", "tokyo")
ALL_GROUPS, NO_GROUP = (0, 2147483647), (1, 0)


def ping_group_ranges():
    """{site: net.ipv4.ping_group_range} for lab.Lab: both kinds of node."""
    return dict((site, ALL_GROUPS if site in ECHO_SITES else NO_GROUP) for site in SITES)

TEMPLATE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "psconfig", "lhcone-jumbo-mesh.json")


def template_pmtu_spec(version=4):
    """The shipped mesh template's pmtu spec for one IP version, less its endpoints: what
    the demo measures every pair with, so that it shows what a mesh will see."""
    with open(TEMPLATE) as handle:
        tests = json.load(handle)["tests"]
    spec = dict(tests["pmtu-v%d" % version]["spec"])
    for key in ("source", "dest"):
        spec.pop(key, None)
    return spec


def build(loss_percent=LOSS_PERCENT):
    """The demo mesh as one Topology (nothing is built here: see lab.Lab)."""
    R = lambda name, **opts: Node(name, router=True, **opts)  # noqa: E731 - short table below
    nodes = [Node(site) for site in SITES] + [
        R("core"),
        R("cern-gw"),
        R("desy-gw"),
        R("nik-spine"), R("nik-leaf"),
        R("ral-gw"), R("ral-a1"), R("ral-a2"),
        R("ral-b1", drop_ptb=True), R("ral-b2", drop_ptb=True),
        R("bnl-gw"), R("bnl-alt"),
        R("tk1"), R("tk2", loss_percent=loss_percent), R("tk3"),
    ]
    links = [
        # A host's first link gives its address: list each site's own link first.
        ("cern", "cern-gw", 9000), ("desy", "desy-gw", 1500), ("nikhef", "nik-leaf", 9000),
        ("ral", "ral-gw", 9000), ("bnl", "bnl-gw", 9000), ("tokyo", "tk1", 9000),
        ("cern-gw", "core", 9000),
        ("desy-gw", "core", 9000),
        # VXLAN-like fabric: the leaf-spine link carries 50 bytes less.
        ("nik-leaf", "nik-spine", 8950), ("nik-spine", "core", 9000),
        # Two equal-cost members between ral-gw and core; the b member is narrower in the
        # middle and both of its routers drop ICMP frag-needed / packet-too-big.
        ("ral-gw", "ral-a1", 9000), ("ral-a1", "ral-a2", 9000), ("ral-a2", "core", 9000),
        ("ral-gw", "ral-b1", 9000), ("ral-b1", "ral-b2", 8950), ("ral-b2", "core", 9000),
        # bnl: out through bnl-gw -> core; back in through core -> bnl-alt (1500) -> bnl-gw.
        ("bnl-gw", "core", 9000), ("core", "bnl-alt", 1500), ("bnl-alt", "bnl-gw", 9000),
        # tokyo: the long way round, with loss in the middle.
        ("tk1", "tk2", 9000), ("tk2", "tk3", 9000), ("tk3", "core", 9000),
    ]
    routes = {("core", "bnl"): ["bnl-alt"]}
    return Topology("demo-mesh", nodes, links, routes=routes,
                    description="six WLCG-like sites around one core router")


# Traffic between the sites, TB per week (an illustration, WLCG-like: the Tier-0 exports
# most, Tier-1s exchange more than Tier-2s). Read by the report as its volume matrix, so
# the adoption share is also given weighted by traffic, as the DC26/DC28 targets are.
_TIER = {"cern": 0, "ral": 1, "bnl": 1, "nikhef": 1, "desy": 2, "tokyo": 2}
_VOLUME_BY_TIERS = {(0, 1): 120, (1, 0): 30, (0, 2): 40, (2, 0): 10, (1, 1): 25, (1, 2): 15,
                    (2, 1): 8, (2, 2): 3}


def volume_tb(source, dest):
    return _VOLUME_BY_TIERS[(_TIER[source], _TIER[dest])]


def sites(topology=None):
    return list(SITES)


def pairs(topology=None, quick=False):
    """Every directed pair of sites (30), or with quick=True a small set covering each case."""
    if quick:
        return [("cern", "nikhef"), ("ral", "cern"), ("desy", "cern"), ("cern", "bnl")]
    return list(itertools.permutations(SITES, 2))


def expected(topology, source, dest, target_mtu=TARGET_MTU):
    """What a correct measurement of source -> dest must say, in result-field terms."""
    truth = topology.truth(source, dest)
    back = topology.truth(dest, source)
    holes = [m for m in truth["members"] if m["pmtud"] == "blackhole"]
    # On a partial black hole, flows that take a healthy member report that member's MTU.
    healthy = [m["path-mtu"] for m in truth["members"] if m["pmtud"] != "blackhole"]
    return {
        "source": source,
        "dest": dest,
        "path-mtu": truth["path-mtu"],
        "local-mtu": truth["local-mtu"],
        "pmtud": truth["pmtud"],
        "partial": truth["partial"],
        "jumbo": truth["path-mtu"] >= target_mtu,
        "blackhole-router": holes[0]["blackhole-router"] if holes else None,
        "blackhole-ttl": holes[0]["blackhole-ttl"] if holes else None,
        "healthy-member-mtus": sorted(set(healthy)),
        "member-mtus": sorted(set(m["path-mtu"] for m in truth["members"])),
        "reverse-path-mtu": back["path-mtu"],
        "reverse-pmtud": back["pmtud"],
        "loss": truth["loss"],
    }


def addresses(topology, node):
    """Every address of a node (IPv4 and IPv6, one per link end): how a hop IP is named."""
    found = set()
    for link in topology.links:
        if node in (link.a, link.b):
            for version in (4, 6):
                found.add(str(topology.link_address(link, node, version)))
    return found


def node_of(topology, ip):
    """The node that owns address `ip`, or None."""
    for node in topology.nodes:
        if ip in addresses(topology, node):
            return node
    return None


PICTURE = [line[4:] for line in __doc__.splitlines()
           if line.startswith("    ") and " -9000- " in line or "a: ral" in line
           or "b: ral" in line]


def describe(topology):
    """Printable lines: the sites and what each one is for, then the links."""
    lines = []
    for name, (what, look) in SITES.items():
        lines.append("  %-7s %-11s %s" % (name, topology.address(name), what))
    lines.append("")
    lines.extend("  " + line for line in PICTURE)
    return lines
