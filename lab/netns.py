"""Build a Topology out of real Linux network namespaces, veth links, routes and nftables.

Safety rules kept here, once, for every user of the lab:
- only namespaces this process created are touched, and all of them are removed on
  exit, on an exception, on SIGTERM/SIGINT (context manager + atexit + signal handler);
- nothing in the root namespace changes: veth pairs are created directly inside their
  namespaces, routes and nftables rules live inside the namespaces;
- processes are started through Lab.popen and ended by their PID only.
"""

import atexit
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import time

_counter = itertools.count()
_live_labs = set()


def _sh(argv, check=True, input_text=None):
    done = subprocess.run(argv, input=input_text, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    if check and done.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(argv), done.returncode,
                                                   done.stderr.strip()))
    return done


def _cleanup_all():
    for lab in list(_live_labs):
        lab.destroy()


atexit.register(_cleanup_all)


def _on_signal(signum, frame):
    _cleanup_all()
    raise SystemExit(128 + signum)


class Lab(object):
    """A running topology. Use as a context manager: `with Lab(topology) as lab: ...`."""

    def __init__(self, topology, ping_group_range=None, offload=False, prefix=None,
                 hash_seed=None):
        self.topology = topology
        # Unique per process and per lab, so parallel test runs never collide.
        self.prefix = prefix or "jl%d-%d" % (os.getpid(), next(_counter))
        # (low, high) for every node, or {node name: (low, high)}; None keeps the default.
        self.ping_group_range = ping_group_range
        # Segmentation offload on host links (off by default, as on hosts where per-packet
        # cost matters; the throughput tests rely on this).
        self.offload = offload
        # ECMP hash seed of every node (net.ipv4.fib_multipath_hash_seed, both families,
        # kernels >= 6.11): fixes which member a port-less flow (ICMP echo) takes. None: the
        # kernel's random seed per namespace, so that member changes from lab to lab.
        self.hash_seed = hash_seed
        self.processes = []
        self.created = []
        self.up = False

    # -- naming -------------------------------------------------------------------------------

    def ns(self, node):
        return "%s-%s" % (self.prefix, node)

    def address(self, host, version=4):
        return self.topology.address(host, version)

    def truth(self, source, dest, version=4):
        return self.topology.truth(source, dest, version)

    # -- lifecycle ----------------------------------------------------------------------------

    def __enter__(self):
        self.build()
        return self

    def __exit__(self, *exc):
        self.destroy()
        return False

    def build(self):
        _live_labs.add(self)
        for sig in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(sig) in (signal.SIG_DFL, None):
                signal.signal(sig, _on_signal)
        try:
            self._build()
        except BaseException:
            self.destroy()
            raise
        self.up = True
        return self

    def _build(self):
        topo = self.topology
        for node in topo.nodes.values():
            name = self.ns(node.name)
            _sh(["ip", "netns", "add", name])
            self.created.append(name)
            self._write_hosts_file(name)
            self._sysctls(node)
            self.run(node.name, ["ip", "link", "set", "lo", "up"])
        for link in topo.links:
            ia, ib = topo.interface_name(link, link.a), topo.interface_name(link, link.b)
            _sh(["ip", "link", "add", ia, "netns", self.ns(link.a), "mtu", str(link.mtu),
                 "type", "veth", "peer", "name", ib, "netns", self.ns(link.b), "mtu", str(link.mtu)])
            for end, ifname in ((link.a, ia), (link.b, ib)):
                for version in (4, 6):
                    prefix = topo.link_prefix(link, version)
                    addr = "%s/%d" % (topo.link_address(link, end, version), prefix.prefixlen)
                    extra = ["nodad"] if version == 6 else []
                    self.run(end, ["ip", "addr", "add", addr, "dev", ifname] + extra)
                self.run(end, ["ip", "link", "set", ifname, "up"])
                if not topo.nodes[end].router:
                    # Real checksums on the wire, as a NIC would put them (lab-notes: veth
                    # leaves them partial and ICMP quotes then fail to match).
                    features = ["tx", "off"]
                    if not self.offload:
                        features += ["tso", "off", "gso", "off", "gro", "off"]
                    self.run(end, ["ethtool", "-K", ifname] + features, check=False)
        for node in topo.nodes.values():
            self._routes(node.name)
            self._filters(node)
        self._warm_up()

    def _warm_up(self):
        # Freshly created IPv6 links lose the very first packets while their link-local
        # addresses and neighbours settle. Ping across every link, both ends, both
        # families, until it answers (bounded: 10 tries of 0.3 s); links, not end-to-end
        # paths, so scenarios that filter echo or drop at random still come up quickly.
        topo = self.topology
        for link in topo.links:
            for here, there in ((link.a, link.b), (link.b, link.a)):
                for version in (4, 6):
                    argv = ["ping", "-%d" % version, "-n", "-q", "-c", "1", "-W", "0.3",
                            str(topo.link_address(link, there, version))]
                    for _ in range(10):
                        if self.run(here, argv, check=False).returncode == 0:
                            break

    def _write_hosts_file(self, name):
        # `ip netns exec` bind-mounts /etc/netns/<ns>/hosts over /etc/hosts: lab host names
        # resolve inside the lab, and nowhere else.
        directory = os.path.join("/etc/netns", name)
        os.makedirs(directory, exist_ok=True)
        lines = ["127.0.0.1 localhost", "::1 localhost ip6-localhost"]
        for host in self.topology.hosts():
            lines.append("%s %s" % (self.topology.address(host.name, 4), host.name))
            lines.append("%s %s6" % (self.topology.address(host.name, 6), host.name))
        with open(os.path.join(directory, "hosts"), "w") as handle:
            handle.write("\n".join(lines) + "\n")
        for extra in ("resolv.conf", "nsswitch.conf"):
            # No DNS inside the lab: unknown names fail fast instead of timing out.
            with open(os.path.join(directory, extra), "w") as handle:
                handle.write("hosts: files\n" if extra == "nsswitch.conf" else "")

    def _sysctls(self, node):
        settings = {
            "net.ipv4.conf.all.rp_filter": "0",
            "net.ipv4.conf.default.rp_filter": "0",
            "net.ipv6.conf.all.accept_dad": "0",
            "net.ipv6.conf.default.accept_dad": "0",
            "net.ipv4.ip_forward": "1" if node.router else "0",
            "net.ipv6.conf.all.forwarding": "1" if node.router else "0",
            # Hash strictly on the 5-tuple (lab-notes: policy 1 follows the socket hash on veth).
            "net.ipv4.fib_multipath_hash_policy": "3",
            "net.ipv4.fib_multipath_hash_fields": "0x0037",
            "net.ipv6.fib_multipath_hash_policy": "3",
            "net.ipv6.fib_multipath_hash_fields": "0x0037",
        }
        if self.hash_seed is not None:
            settings["net.ipv4.fib_multipath_hash_seed"] = str(self.hash_seed)
        groups = self.ping_group_range
        if isinstance(groups, dict):
            groups = groups.get(node.name)  # per node: both kinds of host in one lab
        if groups is not None:
            settings["net.ipv4.ping_group_range"] = "%d %d" % tuple(groups)
        for key, value in settings.items():
            self.run(node.name, ["sysctl", "-qw", "%s=%s" % (key, value)], check=False)

    def _routes(self, node):
        topo = self.topology
        for host in topo.hosts():
            if host.name == node:
                continue
            hops = topo.next_hops(node, host.name)
            if not hops:
                continue
            for version in (4, 6):
                for link in topo.links:
                    if host.name not in (link.a, link.b):
                        continue
                    if node in (link.a, link.b):
                        continue  # directly connected
                    prefix = str(topo.link_prefix(link, version))
                    gateways = []
                    for hop in hops:
                        via = topo.link_between(node, hop)
                        gateways.append((str(topo.link_address(via, hop, version)),
                                         topo.interface_name(via, node)))
                    family = ["-6"] if version == 6 else ["-4"]
                    if len(gateways) == 1:
                        gw, dev = gateways[0]
                        argv = ["ip"] + family + ["route", "replace", prefix, "via", gw, "dev", dev]
                    else:
                        argv = ["ip"] + family + ["route", "replace", prefix]
                        for gw, dev in gateways:
                            argv += ["nexthop", "via", gw, "dev", dev]
                    self.run(node, argv)
        # Transit subnets (router-router links) stay reachable for ICMP sources via
        # the routers' own addresses; hosts only need routes to other hosts.

    def _filters(self, node):
        rules = []
        if node.drop_ptb:
            rules += ["add rule inet lab lab_out icmp type destination-unreachable icmp code frag-needed drop",
                      "add rule inet lab lab_out icmpv6 type packet-too-big drop"]
        if node.zero_ptb:
            # nftables rewrites the MTU field and fixes the ICMP checksum.
            rules += ["add rule inet lab lab_out icmp type destination-unreachable icmp code frag-needed icmp mtu set 0",
                      "add rule inet lab lab_out icmpv6 type packet-too-big icmpv6 mtu set 0"]
        if node.drop_echo:
            rules += ["add rule inet lab lab_fwd icmp type echo-request drop",
                      "add rule inet lab lab_fwd icmpv6 type echo-request drop"]
        if node.loss_percent:
            rules += ["add rule inet lab lab_post numgen random mod 100 < %d drop" % node.loss_percent]
        rules += self._switch_rules(node)
        if not rules:
            return
        script = "\n".join([
            "add table inet lab",
            "add chain inet lab lab_in { type filter hook prerouting priority -300; }",
            "add chain inet lab lab_out { type filter hook output priority 0; }",
            "add chain inet lab lab_fwd { type filter hook forward priority 0; }",
            "add chain inet lab lab_post { type filter hook postrouting priority 0; }",
        ] + rules) + "\n"
        self.run(node.name, ["nft", "-f", "-"], input_text=script)

    def _switch_rules(self, node):
        """A link's narrow switch (Link.switch_mtu): frames above it dropped as they come in
        on either end, before routing, so nothing answers them (a switch sends no ICMP)."""
        rules = []
        for _other, link in self.topology.neighbours(node.name):
            if link.switch_mtu is not None and link.switch_mtu < link.mtu:
                rules.append('add rule inet lab lab_in iifname "%s" meta length > %d drop'
                             % (self.topology.interface_name(link, node.name), link.switch_mtu))
        return rules

    def destroy(self):
        """Remove every process and namespace this lab made. Safe to call twice."""
        for proc in self.processes:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except OSError:
                    pass
                try:
                    proc.wait(timeout=5)
                except Exception:  # noqa: BLE001 - best effort in teardown
                    pass
        self.processes = []
        for name in reversed(self.created):
            # Processes left in our namespaces were started by us (through run/popen).
            pids = _sh(["ip", "netns", "pids", name], check=False).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (OSError, ValueError):
                    pass
            _sh(["ip", "netns", "del", name], check=False)
            shutil.rmtree(os.path.join("/etc/netns", name), ignore_errors=True)
        self.created = []
        self.up = False
        _live_labs.discard(self)

    # -- running things inside -----------------------------------------------------------------

    def argv(self, node, argv, user=None):
        prefix = ["ip", "netns", "exec", self.ns(node)]
        if user:
            prefix += ["runuser", "-u", user, "--"]
        return prefix + list(argv)

    def run(self, node, argv, user=None, check=True, input_text=None, timeout=120, env=None):
        done = subprocess.run(self.argv(node, argv, user), input=input_text,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=timeout, env=env)
        if check and done.returncode != 0:
            raise RuntimeError("[%s] %s failed (%d): %s" % (node, " ".join(argv), done.returncode,
                                                            done.stderr.strip()))
        return done

    def popen(self, node, argv, user=None, **kwargs):
        """Start a long-running process in `node`; it is killed (by PID) at teardown."""
        kwargs.setdefault("stdout", subprocess.PIPE)
        kwargs.setdefault("stderr", subprocess.PIPE)
        kwargs.setdefault("universal_newlines", True)
        proc = subprocess.Popen(self.argv(node, argv, user), start_new_session=True, **kwargs)
        self.processes.append(proc)
        return proc

    def _split(self, source, dest):
        """The first router splitting source -> dest over several members, and its members."""
        for path in self.topology.paths(source, dest)[:1]:
            for node in path[1:-1]:
                hops = self.topology.next_hops(node, dest)
                if len(hops) > 1:
                    return node, hops
        return None, []

    def ecmp_hits(self, source, dest, version=4, ports=range(40000, 40040), echo=False):
        """Which ECMP member small packets source -> dest take: {member router: packets}.

        One UDP datagram from each source port in `ports` (to port 33434), or with `echo` one
        ICMP echo request (echo carries no ports: with hash policy 3 every echo of a host
        pair takes one member); see ecmp_members."""
        if echo:
            counted = self._count_members(source, dest, version, [None], None)
        else:
            counted = self._count_members(source, dest, version, list(ports), 33434)
        hits = {}
        for (_port, member), packets in counted.items():
            hits[member] = hits.get(member, 0) + packets
        return hits

    def ecmp_members(self, source, dest, version, ports, dport):
        """{source port: member router} of UDP flows source:port -> dest:dport (one datagram
        each, counted and dropped at the splitting router, so the dest never answers them
        and its ICMP budget is left alone); ports whose datagram was lost are missing."""
        counted = self._count_members(source, dest, version, list(ports), dport)
        return dict((port, member) for (port, member), packets in counted.items() if packets)

    def _count_members(self, source, dest, version, ports, dport):
        """nftables counters on the splitting router, one per (source port, member); the
        datagrams (or the one echo request, ports [None]) are sent as root and dropped there.
        The counters are removed again."""
        router, hops = self._split(source, dest)
        if router is None:
            return {}
        echo = ports == [None]
        rules = ["add table inet spread",
                 "add chain inet spread hits { type filter hook forward priority -10; }"]
        for hop in hops:
            ifname = self.topology.interface_name(self.topology.link_between(router, hop), router)
            for port in ports:
                if echo:
                    match = "icmp type echo-request" if version == 4 else \
                        "icmpv6 type echo-request"
                else:
                    match = "udp sport %d udp dport %d" % (port, dport)
                rules.append('add rule inet spread hits oifname "%s" %s counter drop '
                             'comment "%s %s"' % (ifname, match, port, hop))
        self.run(router, ["nft", "-f", "-"], input_text="\n".join(rules) + "\n")
        try:
            target = self.address(dest, version)
            if echo:
                self.run(source, ["ping", "-%d" % version, "-n", "-c", "1", "-W", "0.2",
                                  target], check=False)
            else:
                script = ("import socket, sys\n"
                          "for port in sys.argv[3:]:\n"
                          "    s = socket.socket(socket.AF_INET6 if ':' in sys.argv[1] else "
                          "socket.AF_INET, socket.SOCK_DGRAM)\n"
                          "    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
                          "    s.bind(('', int(port)))\n"
                          "    s.sendto(b'x', (sys.argv[1], int(sys.argv[2])))\n"
                          "    s.close()\n")
                self.run(source, [sys.executable, "-c", script, target, str(dport)]
                         + [str(p) for p in ports])
            listing = self.run(router, ["nft", "-j", "list", "table", "inet", "spread"]).stdout
        finally:
            self.run(router, ["nft", "delete", "table", "inet", "spread"], check=False)
        counted = {}
        for item in json.loads(listing).get("nftables", []):
            rule = item.get("rule")
            if not rule:
                continue
            port, member = rule.get("comment").split(" ")
            for expr in rule.get("expr", []):
                if "counter" in expr:
                    key = (None if port == "None" else int(port), member)
                    counted[key] = expr["counter"]["packets"]
        return counted

    def wait_for(self, predicate, timeout=10.0, interval=0.05):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(interval)
        return False
