"""The real mesh's network (lab/real_mesh.py): lab.netns.Lab plus what real pScheduler nodes
need from it (host names, the API's port 443, TCP kept off a member that drops PTBs)."""

import os

from demo import mesh as demo_mesh
from lab.netns import Lab


class MeshNetwork(Lab):
    """lab.netns.Lab, plus what real nodes need: the template's host names resolve to the
    sites' lab addresses (both families) in every namespace, the API may bind 443 as user
    pscheduler, and TCP (the nodes' API calls, archiving) is kept off a member that drops PTBs
    (policy routing on the splitting routers), so the mesh's own control plane keeps working
    while the UDP probes still hash over every member."""

    def __init__(self, topo, sites, names, prefix):
        """`names`: {site: the template's host name}; `prefix`: of every namespace."""
        self.sites = tuple(sites)
        self.names = dict(names)
        groups = dict((s, demo_mesh.ALL_GROUPS) for s in self.sites)
        super(MeshNetwork, self).__init__(topo, ping_group_range=groups, prefix=prefix)

    def _write_hosts_file(self, name):
        super(MeshNetwork, self)._write_hosts_file(name)
        with open(os.path.join("/etc/netns", name, "hosts"), "a") as handle:
            for site in self.sites:
                for version in (4, 6):
                    handle.write("%s %s\n" % (self.topology.address(site, version),
                                              self.names[site]))
        # pSConfig's agent resolves its own addresses with dnspython, which refuses to start
        # without a nameserver: name one that answers nothing (port unreachable), fast.
        with open(os.path.join("/etc/netns", name, "resolv.conf"), "w") as handle:
            handle.write("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")

    def _build(self):
        super(MeshNetwork, self)._build()
        for site in self.sites:
            self.run(site, ["sysctl", "-qw", "net.ipv4.ip_unprivileged_port_start=0"])
        self._pin_tcp()

    def _pin_tcp(self):
        topo = self.topology
        for router in (n for n in topo.nodes.values() if n.router):
            rules = False
            for host in topo.hosts():
                hops = topo.next_hops(router.name, host.name)
                if len(hops) < 2:
                    continue
                healthy = [h for h in hops if not any(
                    topo.nodes[n].drop_ptb for p in topo.paths(h, host.name) for n in p)]
                if not healthy:
                    continue
                via_link = topo.link_between(router.name, healthy[0])
                for version in (4, 6):
                    for link in topo.links:
                        if host.name in (link.a, link.b) and router.name not in (link.a, link.b):
                            self.run(router.name, [
                                "ip", "-%d" % version, "route", "replace",
                                str(topo.link_prefix(link, version)), "via",
                                str(topo.link_address(via_link, healthy[0], version)),
                                "table", "100"])
                rules = True
            if rules:
                for version in (4, 6):
                    self.run(router.name, ["ip", "-%d" % version, "rule", "add", "ipproto",
                                           "tcp", "table", "100", "pref", "100"])
