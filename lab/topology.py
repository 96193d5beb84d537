"""Lab topologies as data: nodes, links with MTUs, filters, and the ground truth they imply.

A Topology says nothing about how it is built (see netns.py): tests, the demo
and the benchmarks read the same definitions, and the truth (path MTU per
directed pair, whether PMTUD works, where the black hole is) is derived from
the links and filters, so a scenario cannot disagree with itself.

Addressing stays inside 198.18.0.0/15 and fd00::/8, as the project requires.
"""

import collections
import ipaddress



class Link(collections.namedtuple("Link", "a b mtu switch_mtu")):
    """A point-to-point link: both interfaces at `mtu`. `switch_mtu`, off by default: a
    layer-2 device on the link that carries frames of at most that MTU and drops larger
    ones without a word (no router, so no ICMP: a black hole on the link itself, the
    commonest one in the field: a switch port left at 1500 between jumbo hosts)."""

    __slots__ = ()

    def __new__(cls, a, b, mtu, switch_mtu=None):
        return super(Link, cls).__new__(cls, a, b, mtu, switch_mtu)

    def carries(self):
        """The largest packet the link delivers."""
        return self.mtu if self.switch_mtu is None else min(self.mtu, self.switch_mtu)


class Node(collections.namedtuple("Node", "name router drop_ptb drop_echo loss_percent zero_ptb")):
    """A host, or with `router` a router that forwards. A router's faults, all off by default:

    drop_ptb      sends no ICMP frag-needed / packet-too-big: the black hole.
    drop_echo     drops forwarded ICMP echo requests (echo filtered on the path).
    loss_percent  random loss, in percent, on everything it forwards.
    zero_ptb      its frag-needed / packet-too-big carries MTU 0 (RFC 1191's old routers,
                  broken middleboxes): PMTUD is told "too big" but not the size.
    """

    __slots__ = ()

    def __new__(cls, name, router=False, drop_ptb=False, drop_echo=False, loss_percent=0,
                zero_ptb=False):
        return super(Node, cls).__new__(cls, name, router, drop_ptb, drop_echo, loss_percent,
                                        zero_ptb)

    def __repr__(self):
        return "Node(%r)" % self.name


class Topology(object):
    """Nodes joined by point-to-point links; routes by shortest path, ECMP where equal.

    `routes` overrides shortest-path routing: {(node, dest_host): [next_hop, ...]}
    makes asymmetric paths; several next hops make an ECMP route.
    """

    def __init__(self, name, nodes, links, routes=None, description=""):
        self.name = name
        self.description = description
        self.nodes = collections.OrderedDict((n.name, n) for n in nodes)
        self.links = [Link(*link) if not isinstance(link, Link) else link for link in links]
        self.routes = dict(routes or {})
        for link in self.links:
            for end in (link.a, link.b):
                if end not in self.nodes:
                    raise ValueError("link %s-%s names unknown node %s" % (link.a, link.b, end))

    # -- addressing ---------------------------------------------------------------------------

    def link_index(self, link):
        return self.links.index(link)

    def link_prefix(self, link, version):
        index = self.link_index(link)
        if version == 4:
            # 198.18.0.0/15 split into /24s: 512 links are plenty for a lab.
            return ipaddress.ip_network("198.%d.%d.0/24" % (18 + index // 256, index % 256))
        return ipaddress.ip_network("fd00:18:%x::/64" % index)

    def link_address(self, link, node, version):
        prefix = self.link_prefix(link, version)
        offset = 1 if node == link.a else 2
        return prefix[offset]

    def interface_name(self, link, node):
        return "l%d%s" % (self.link_index(link), "a" if node == link.a else "b")

    def hosts(self):
        return [n for n in self.nodes.values() if not n.router]

    def address(self, host, version=4):
        """The address of a host: the one on its first link."""
        for link in self.links:
            if host in (link.a, link.b):
                return str(self.link_address(link, host, version))
        raise KeyError(host)

    def neighbours(self, node):
        for link in self.links:
            if link.a == node:
                yield link.b, link
            elif link.b == node:
                yield link.a, link

    def link_between(self, a, b):
        for link in self.links:
            if {link.a, link.b} == {a, b}:
                return link
        raise KeyError((a, b))

    def local_mtu(self, host):
        return max(link.mtu for _, link in self.neighbours(host))

    # -- routing ------------------------------------------------------------------------------

    def _distances(self, target):
        distance = {target: 0}
        queue = collections.deque([target])
        while queue:
            node = queue.popleft()
            for other, _ in self.neighbours(node):
                if other not in distance:
                    distance[other] = distance[node] + 1
                    # Hosts do not forward: paths continue through routers only.
                    if self.nodes[other].router:
                        queue.append(other)
        return distance

    def next_hops(self, node, dest):
        """Neighbours `node` forwards to on the way to host `dest` (several: ECMP)."""
        if (node, dest) in self.routes:
            return list(self.routes[(node, dest)])
        distance = self._distances(dest)
        best = [other for other, _ in self.neighbours(node)
                if other in distance and (other == dest or self.nodes[other].router)]
        if not best:
            return []
        shortest = min(distance[o] for o in best)
        return [o for o in best if distance[o] == shortest]

    def paths(self, source, dest, limit=64):
        """Every forwarding path source -> dest (lists of node names), following next_hops."""
        found = []

        def walk(path):
            if len(found) >= limit or len(path) > 32:
                return
            here = path[-1]
            if here == dest:
                found.append(path)
                return
            for nxt in self.next_hops(here, dest):
                if nxt not in path:
                    walk(path + [nxt])

        walk([source])
        return found

    # -- ground truth -------------------------------------------------------------------------

    def path_truth(self, path, version=4):
        """Truth for one forwarding path: its MTU, PMTUD health, and where big packets vanish
        (`blackhole-ttl`: the last hop they reach, 0 when they vanish on the source's own
        link; `blackhole-ip`: that hop's address, in `version`, on the link the probes reach
        it by: where its time-exceeded messages come from; None for the source)."""
        links = [self.link_between(a, b) for a, b in zip(path, path[1:])]
        mtus = [link.carries() for link in links]
        path_mtu = min(mtus)
        first_mtu = links[0].mtu  # the source's interface: what it sends at most
        truth = {"path-mtu": path_mtu, "pmtud": "not-needed" if path_mtu >= first_mtu else "ok",
                 "blackhole-ttl": None, "blackhole-router": None, "blackhole-ip": None,
                 "hop-mtus": mtus, "path": list(path)}
        # Walk the path: every router whose next link is narrower than what reaches it must
        # report it; a router that drops PTBs at that point is the black hole, and so is a
        # switch narrower than what reaches it (it can report nothing).
        current = first_mtu
        for ttl, (node, link) in enumerate(zip(path, links)):
            if ttl > 0 and link.mtu < current:
                if self.nodes[node].drop_ptb:
                    self._hole(truth, path, ttl, version)
                    break
                current = link.mtu
            if link.carries() < current:
                self._hole(truth, path, ttl, version)
                break
        return truth

    def _hole(self, truth, path, ttl, version):
        truth["pmtud"] = "blackhole"
        truth["blackhole-ttl"] = ttl
        if ttl == 0:
            return  # on the source's own link: no hop before it
        node = path[ttl]
        truth["blackhole-router"] = node
        truth["blackhole-ip"] = self.link_address(
            self.link_between(path[ttl - 1], node), node, version).compressed

    def truth(self, source, dest, version=4):
        """Ground truth for the directed pair source -> dest, over all its ECMP members.

        `members`: one path_truth per member; `bad-share`: the share of members whose big
        packets vanish (a flow hashing independently misses them with probability
        (1 - bad-share) per flow); `blackhole-ttl` / `blackhole-ip`: where they vanish, when
        every black-holed member agrees (else None)."""
        members = [self.path_truth(p, version) for p in self.paths(source, dest)]
        if not members:
            raise ValueError("no path from %s to %s" % (source, dest))
        verdicts = {m["pmtud"] for m in members}
        if "blackhole" in verdicts:
            pmtud = "blackhole"
        elif "ok" in verdicts:
            pmtud = "ok"
        else:
            pmtud = "not-needed"
        holes = [m for m in members if m["pmtud"] == "blackhole"]
        where = {(m["blackhole-ttl"], m["blackhole-ip"]) for m in holes}
        ttl, ip = where.pop() if len(where) == 1 else (None, None)
        return {
            "source": source, "dest": dest, "ip-version": version,
            "path-mtu": min(m["path-mtu"] for m in members),
            "local-mtu": self.local_mtu(source),
            "pmtud": pmtud,
            "partial": len({(m["path-mtu"], m["pmtud"]) for m in members}) > 1,
            "members": members,
            "bad-share": len(holes) / float(len(members)),
            "blackhole-ttl": ttl, "blackhole-ip": ip,
            "loss": any(self.nodes[n].loss_percent for p in self.paths(source, dest) for n in p),
            "echo-filtered": any(self.nodes[n].drop_echo for p in self.paths(source, dest) for n in p),
        }
