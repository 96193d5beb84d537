"""The lab's named scenarios: the paths WLCG sites really have, each with its truth.

Every scenario has two hosts `src` and `dst` (plus routers); `Topology.truth`
gives the true path MTU and PMTUD verdict for both directions.
"""

import functools
import random

from .topology import Node, Topology

# Link MTUs real networks have: a size drawn for a "non-plateau" scenario avoids them (and
# the sizes right next to them), so a search cannot get it right by trying plateaus first.
PLATEAU_SIZES = (1280, 1500, 4470, 8950, 9000, 9216)


def _chain(name, mtus, description, router_opts=None, routes=None, switches=None):
    """src - r1 - ... - dst, link i having MTU mtus[i]; router_opts[i] configures r(i+1);
    switches[i]: a narrower switch on link i (Link.switch_mtu)."""
    router_opts = router_opts or {}
    routers = ["r%d" % (i + 1) for i in range(len(mtus) - 1)]
    names = ["src"] + routers + ["dst"]
    nodes = [Node("src")] + [Node(r, router=True, **router_opts.get(r, {})) for r in routers] \
        + [Node("dst")]
    switches = switches or {}
    links = [(a, b, mtu, switches.get(i)) for i, (a, b, mtu) in enumerate(zip(names, names[1:], mtus))]
    return Topology(name, nodes, links, routes=routes, description=description)


# The fixed chains (see _chain): name, link MTUs from src to dst, one router's fault (a flag
# of topology.Node set on it, "ROUTER:FLAG") or None, and the description.
_CHAINS = (
    ("clean-jumbo", [9000, 9000, 9000], None, "jumbo end to end"),
    ("all-standard", [1500, 1500, 1500], None, "1500 everywhere"),
    ("bottleneck-ptb", [9000, 1500, 9000], None, "jumbo hosts, a 1500 link in the middle, PTB sent"),
    ("vxlan-ptb", [9000, 8950, 9000], None, "VXLAN-like 8950 fabric link, PTB sent"),
    ("vxlan-blackhole", [9000, 8950, 9000], "r1:drop_ptb",
     "VXLAN-like 8950 fabric link, router drops PTB (the CERN EOS case)"),
    ("multi-router", [9000, 9000, 4470, 9000], None,
     "three routers, the MTU drops to 4470 after the second and PTB is sent"),
    ("zero-ptb", [9000, 8950, 9000], "r1:zero_ptb",
     "8950 link whose router sends frag-needed / packet-too-big with MTU 0"),
    ("echo-filtered", [9000, 8950, 9000], "r1:drop_echo", "8950 link with PTB, ICMP echo dropped on the path"),
    ("multi-router-blackhole", [9000, 9000, 9000, 8950, 9000], "r3:drop_ptb", "black hole three routers out"),
    ("blackhole-then-ptb", [9000, 8950, 9000, 1500], "r1:drop_ptb",
     "two stages: an 8950 link whose router drops PTB, then a 1500 link with PTB "
     "(9000-byte packets vanish at r1, smaller ones get a real PTB at r3)"),
)


def _fixed_chain(name, mtus, fault, description):
    """The scenario of one row of _CHAINS: a function of no argument, like the others."""
    router_opts = {}
    if fault:
        router, _, flag = fault.partition(":")
        router_opts[router] = {flag: True}
    return functools.partial(_chain, name, mtus, description, router_opts)


def lossy(percent=2):
    return _chain("lossy", [9000, 8950, 9000],
                  "8950 link with PTB and %d%% random loss each way" % percent,
                  router_opts={"r1": {"loss_percent": percent}})


def lossy_long(percent=2):
    return _chain("lossy-long", [9000, 9000, 9000, 9000, 9000],
                  "jumbo end to end, four routers, %d%% random loss each way at r2" % percent,
                  router_opts={"r2": {"loss_percent": percent}})


def ecmp_partial_blackhole():
    """src - r1 =(two members)= r4 - dst; the member through r3 is narrower and black-holed."""
    nodes = [Node("src"), Node("r1", router=True), Node("r2", router=True),
             Node("r3", router=True, drop_ptb=True), Node("r4", router=True), Node("dst")]
    links = [("src", "r1", 9000), ("r1", "r2", 9000), ("r1", "r3", 9000),
             ("r2", "r4", 9000), ("r3", "r4", 8950), ("r4", "dst", 9000)]
    return Topology("ecmp-partial-blackhole", nodes, links,
                    description="two equal-cost members, one through an 8950 link that drops PTB")


def _ecmp(name, members, description, loss_percent=0):
    """src - r1 ={members}= rN - dst, hosts and every other link at 9000.

    `members`: one (MTU, drop_ptb) per equal-cost member; member i is the router r(i+2)
    joined to r1 at 9000 and to the far router at MTU (its router dropping PTBs when
    drop_ptb: a black hole at TTL 2 on that member alone). `loss_percent`: random loss at
    r1, on everything it forwards and sends, each way (nftables numgen, unseedable)."""
    routers = ["r%d" % (i + 2) for i in range(len(members))]
    far = "r%d" % (len(members) + 2)
    nodes = [Node("src"), Node("r1", router=True, loss_percent=loss_percent)]
    nodes += [Node(r, router=True, drop_ptb=drop) for r, (_mtu, drop) in zip(routers, members)]
    nodes += [Node(far, router=True), Node("dst")]
    links = [("src", "r1", 9000)]
    links += [("r1", r, 9000) for r in routers]
    links += [(r, far, mtu) for r, (mtu, _drop) in zip(routers, members)]
    links += [(far, "dst", 9000)]
    return Topology(name, nodes, links, description=description)


def ecmp4_overlay_blackhole(loss_percent=0):
    """Four equal-cost fabric members, one an 8950 overlay (VXLAN-like) whose router drops
    PTBs: a hole on a quarter of the flows (the CERN EOS case)."""
    name = "ecmp4-overlay-blackhole" + ("-lossy" if loss_percent else "")
    return _ecmp(name, [(9000, False), (9000, False), (9000, False), (8950, True)],
                 "4 ECMP members, one an 8950 overlay link whose router drops PTB%s"
                 % (", %d%% random loss each way at r1" % loss_percent if loss_percent else ""),
                 loss_percent=loss_percent)


def ecmp4_overlay_blackhole_lossy(percent=2):
    return ecmp4_overlay_blackhole(loss_percent=percent)


def ecmp2_1500_blackhole():
    """Two equal-cost members, one through a 1500 link whose router drops PTBs."""
    return _ecmp("ecmp2-1500-blackhole", [(9000, False), (1500, True)],
                 "2 ECMP members, one through a 1500 link whose router drops PTB")


def asymmetric():
    """Forward src->dst through r1 (9000); reverse through r2 with a 1500 link, PTB sent."""
    nodes = [Node("src"), Node("r1", router=True), Node("r2", router=True), Node("dst")]
    links = [("src", "r1", 9000), ("r1", "dst", 9000), ("src", "r2", 9000), ("r2", "dst", 1500)]
    routes = {("src", "dst"): ["r1"], ("dst", "src"): ["r2"],
              ("r1", "src"): ["src"], ("r2", "dst"): ["dst"]}
    return Topology("asymmetric", nodes, links, routes=routes,
                    description="forward path jumbo, reverse path 1500 (PTB sent)")


def odd_size(rng=None, low=1300, high=8999):
    """A link MTU drawn at random in [low, high], at least 2 bytes from every plateau."""
    rng = rng or random.SystemRandom()
    while True:
        size = rng.randint(low, high)
        if all(abs(size - p) > 2 for p in PLATEAU_SIZES):
            return size


def odd_blackhole(size=None):
    """Jumbo hosts, a link of a non-plateau MTU in the middle whose router drops PTB."""
    size = size or odd_size()
    return _chain("odd-blackhole-%d" % size, [9000, size, 9000],
                  "black hole at a non-plateau %d-byte link (router drops PTB)" % size,
                  router_opts={"r1": {"drop_ptb": True}})


def odd_ptb(size=None):
    """Jumbo hosts, a link of a non-plateau MTU in the middle, PTB sent."""
    size = size or odd_size()
    return _chain("odd-ptb-%d" % size, [9000, size, 9000],
                  "a non-plateau %d-byte link in the middle, PTB sent" % size)


# The black hole in every position of a path (the hop table must be right in each): on the
# source's own link (a switch, so before hop 1; also with the dest directly connected), in the
# middle, and on the link into the dest (big packets reach no hop past the hole).
HOLE_POSITION_SCENARIOS = {
    "hole-first-link-direct": functools.partial(
        _chain, "hole-first-link-direct", [9000],
        "dest directly connected through an 8950 switch: big frames vanish before any hop",
        switches={0: 8950}),
    "hole-first-link": functools.partial(
        _chain, "hole-first-link", [9000, 9000, 9000],
        "an 8950 switch between the source and its first router", switches={0: 8950}),
    "hole-middle-link": functools.partial(
        _chain, "hole-middle-link", [9000, 9000, 8950, 9000],
        "r2 forwards onto an 8950 link and drops PTB", router_opts={"r2": {"drop_ptb": True}}),
    "hole-last-link": functools.partial(
        _chain, "hole-last-link", [9000, 9000, 8950],
        "r2 forwards onto the dest's 8950 link and drops PTB",
        router_opts={"r2": {"drop_ptb": True}}),
}


# Scenarios whose link MTU is drawn per call (see odd_size); not in SCENARIOS, whose
# topologies are fixed.
RANDOM_SCENARIOS = {
    "odd-blackhole": odd_blackhole,
    "odd-ptb": odd_ptb,
}


SCENARIOS = dict((row[0], _fixed_chain(*row)) for row in _CHAINS)
SCENARIOS.update({
    "lossy": lossy,
    "lossy-long": lossy_long,
    "ecmp-partial-blackhole": ecmp_partial_blackhole,
    "asymmetric": asymmetric,
})

# The ECMP benchmark's cases (bench/ecmp.py): a hole on a share of the members that a run of
# few flows misses by chance, so they stay out of SCENARIOS, whose every run must be exact.
ECMP_SCENARIOS = {
    "ecmp4-overlay-blackhole": ecmp4_overlay_blackhole,
    "ecmp4-overlay-blackhole-lossy": ecmp4_overlay_blackhole_lossy,
    "ecmp2-1500-blackhole": ecmp2_1500_blackhole,
}


def get(name):
    """A scenario by name; `odd-blackhole` / `odd-ptb` draw their size, `odd-ptb-4321` fixes it."""
    base, _, size = name.rpartition("-")
    if base in RANDOM_SCENARIOS and size.isdigit():
        return RANDOM_SCENARIOS[base](int(size))
    if name in RANDOM_SCENARIOS:
        return RANDOM_SCENARIOS[name]()
    if name in ECMP_SCENARIOS:
        return ECMP_SCENARIOS[name]()
    if name in HOLE_POSITION_SCENARIOS:
        return HOLE_POSITION_SCENARIOS[name]()
    try:
        return SCENARIOS[name]()
    except KeyError:
        known = sorted(SCENARIOS) + sorted(ECMP_SCENARIOS) + sorted(HOLE_POSITION_SCENARIOS) \
            + sorted(RANDOM_SCENARIOS)
        raise KeyError("unknown scenario %r (known: %s)" % (name, ", ".join(known)))
