"""The real mesh: upstream pScheduler 5.2.5 nodes (built from source once, lab/real_pscheduler/
nodes.sh) at the demo's sites, joined by the demo's routers (demo/mesh.py, built by lab.netns),
each running perfSONAR's own pSConfig pScheduler agent on the SHIPPED template, archiving
through the `jumbo` archiver into a real OpenSearch seeded like a perfSONAR 5 archive.

Nothing here creates a task: the agents read the template (served over HTTP inside the lab)
and create the pmtu and jumbo-throughput tasks. Ground truth comes from the same Topology the
lab is built from (lab.topology), checked with the demo's own self-check (demo/checks.py).

Names: every namespace starts with `jm-` (Lab prefix "jm"); the work directory is $MESH_RPS,
else $RPS (default /srv/jumbo-rps: the two-node lab's, whose built node tree it shares);
OpenSearch listens on RPS_OPENSEARCH_PORT (default 9261, as the two-node lab's) at the archive
host's lab address, with a data directory of its own (var/opensearch/node-mesh-PORT, emptied
at start). The root namespace's network is never touched.
"""

import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import time

from demo import mesh as demo_mesh
from lab import steady
from lab.mesh_network import MeshNetwork
from lab.topology import Node, Topology

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NODES_SH = os.path.join(ROOT, "lab", "real_pscheduler", "nodes.sh")
OPENSEARCH_SH = os.path.join(ROOT, "scripts", "opensearch.sh")
TEMPLATE = os.path.join(ROOT, "psconfig", "lhcone-jumbo-mesh.json")
SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared", "real-pscheduler"))
ARCHIVE = "archive"          # the lab host OpenSearch and the template's web server live on
TEMPLATE_PORT = 8080         # inside the archive namespace only
# jumbo_history answering 503 while its new shards allocate: asked this often, this far apart.
RECORDS_TRIES, RECORDS_PAUSE = 6, 5.0
PREFIX = "jm"

# lab site -> the shipped template's address for it (its _meta.site names the site in results)
TEMPLATE_NAMES = {
    "cern": "ps-cern.lhcone.example", "desy": "ps-desy.lhcone.example",
    "nikhef": "ps-nikhef.lhcone.example", "ral": "ps-ral.lhcone.example",
    "bnl": "ps-bnl.lhcone.example",
}
# The five failures issue 29 asks for: jumbo, 1500, ECMP member black hole, PMTUD-working
# 8950 bottleneck, asymmetric return path. The smaller instance of `make test` keeps four.
DEMO_SITES = ("cern", "desy", "nikhef", "ral", "bnl")
TEST_SITES = ("cern", "desy", "ral", "bnl")
# `make test`'s instance (CI): a jumbo site, the 1500 site and the ECMP member black hole, both
# families; 12 directed pair/family results.
CI_SITES = ("cern", "desy", "ral")


def topology(sites=DEMO_SITES):
    """demo/mesh.py's topology reduced to `sites` and the routers their paths use, plus the
    archive host on the core behind a 1500 link (its MSS keeps every node's TCP to it small,
    so archiving never depends on a path's jumbo health)."""
    full = demo_mesh.build()
    unknown = [s for s in sites if s not in TEMPLATE_NAMES]
    if unknown:
        raise ValueError("no template address for site(s) %s" % ", ".join(unknown))
    keep = set(sites)
    for source in sites:
        for dest in sites:
            if source != dest:
                for path in full.paths(source, dest):
                    keep.update(path)
    nodes = [n for n in full.nodes.values() if n.name in keep] + [Node(ARCHIVE)]
    links = [link for link in full.links if link.a in keep and link.b in keep]
    # Site links first: a host's address is that of its first link (lab.topology).
    links = [link for link in links if link.a in sites] + \
        [link for link in links if link.a not in sites] + [(ARCHIVE, "core", 1500)]
    routes = dict((k, v) for k, v in full.routes.items() if k[0] in keep and k[1] in keep)
    return Topology("real-mesh", nodes, links, routes=routes,
                    description="the demo's sites as real pScheduler nodes")


def pairs(sites):
    return [(s, d) for s in sites for d in sites if s != d]


def template(topo, sites, archive_url, repeat="PT10M", slip="PT2M"):
    """The shipped template with the lab's addresses: only the lab's sites stay (their
    addresses, hosts and group members as shipped), the archive URL points at the lab's
    OpenSearch, and the hourly schedule repeats every `repeat` with `slip` (a lab cannot wait
    an hour; said so in docs/developer.md). Tests, tasks, tools and the daily schedule are
    as shipped."""
    with open(TEMPLATE) as handle:
        doc = json.load(handle)
    names = set(TEMPLATE_NAMES[s] for s in sites)
    doc["addresses"] = dict((k, v) for k, v in doc["addresses"].items() if k in names)
    doc["hosts"] = dict((k, v) for k, v in doc["hosts"].items() if k in names)
    for group in doc["groups"].values():
        group["addresses"] = [a for a in group["addresses"] if a["name"] in names]
    for archive in doc["archives"].values():
        if archive.get("archiver") == "jumbo":
            archive["data"]["_url"] = archive_url
    doc["schedules"]["hourly"].update({"repeat": repeat, "slip": slip})
    return doc


def site_of_label(label):
    """The lab site a result's reference.source-site / dest-site ("CERN", "NL-T1") names."""
    with open(TEMPLATE) as handle:
        addresses = json.load(handle)["addresses"]
    for site, name in TEMPLATE_NAMES.items():
        if addresses[name]["_meta"]["site"] == label:
            return site
    return None


class Mesh(object):
    """The running mesh: network, OpenSearch, nodes, agents. `down()` removes all of it and is
    safe to call twice (also from a signal handler)."""

    def __init__(self, sites=DEMO_SITES, rps=None, port=None, repeat="PT10M", slip="PT8M",
                 say=None, throughput=None):
        self.sites = tuple(sites)
        self.topology = topology(self.sites)
        # The two-node lab's $RPS by default: its node tree (nodes.sh build, stamped) is built
        # once and cloned for every node of both; node names (sites vs a, b) never collide.
        self.rps = rps or os.environ.get("MESH_RPS") or os.environ.get("RPS", "/srv/jumbo-rps")
        self.port = int(port or os.environ.get("RPS_OPENSEARCH_PORT", "9261"))
        self.repeat, self.slip = repeat, slip
        # (repeat, slip): WLCG's throughput mesh added, jumbo-throughput on that schedule
        self.throughput = throughput
        self.say = say or (lambda text: print(text, flush=True))
        self.net = None
        self.agents = []
        self.started_nodes = []
        self.opensearch_up = False
        self.web = None
        self.sink = None

    # -- names -------------------------------------------------------------------------------

    @property
    def archive_url(self):
        return "http://%s:%d" % (self.topology.address(ARCHIVE), self.port)

    def env(self):
        spec = " ".join("%s,%s-%s,%s,%s" % (s, PREFIX, s, self.topology.address(s, 4),
                                            self.topology.address(s, 6)) for s in self.sites)
        src = os.environ.get("PSCHEDULER_SRC", SHARED)
        # Two API workers per node, not the two-node lab's four: the mesh's nodes share the
        # cores, and an idle worker still costs memory and wake-ups.
        return dict(os.environ, RPS=self.rps, RPS_NODES=spec, PSCHEDULER_SRC=src,
                    RPS_API_WAIT=os.environ.get("RPS_API_WAIT", "600"),
                    RPS_API_WORKERS=os.environ.get("RPS_API_WORKERS", "2"),
                    RPS_SCHEDULE_HORIZON=steady.horizon(self.repeat))

    def nodes_sh(self, *args, **kwargs):
        return subprocess.run(["bash", NODES_SH] + list(args), env=self.env(),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=kwargs.get("timeout", 900))

    # -- up ----------------------------------------------------------------------------------

    def up(self):
        for name in subprocess.run(["ip", "netns", "list"], stdout=subprocess.PIPE,
                                   universal_newlines=True).stdout.split():
            if name.startswith(PREFIX + "-"):
                raise RuntimeError("namespace %s exists: another mesh is up" % name)
        os.makedirs(self.rps, exist_ok=True)
        os.chmod(self.rps, 0o755)
        t0 = time.monotonic()
        self.net = MeshNetwork(self.topology, self.sites, TEMPLATE_NAMES, PREFIX).build()
        self.say("   network: %d namespaces (%s-*), %d links, both families" % (
            len(self.topology.nodes), PREFIX, len(self.topology.links)))
        self._syslog_sink()
        # OpenSearch starts (a minute or more on a busy machine) while the nodes are built.
        archive = concurrent.futures.ThreadPoolExecutor(1)
        opensearch = archive.submit(self._opensearch)
        archive.shutdown(wait=False)
        try:
            self._nodes(t0)
        except BaseException:
            concurrent.futures.wait([opensearch])  # then down() can stop it; the nodes' error wins
            raise
        opensearch.result()  # raises what the start raised
        self._serve_template()
        for site in self.sites:
            self._start_agent(site)
        self.say("   pSConfig pScheduler agent running on every node (remote: %s)"
                 % self.template_url)
        return self

    def _nodes(self, t0):
        done = self.nodes_sh("build")
        if done.returncode != 0:
            raise RuntimeError("node build failed:\n" + done.stdout[-3000:])
        self.say("   node tree built once in %.0f s (upstream pScheduler 5.2.5 + the suite's "
                 "packages)" % (time.monotonic() - t0))
        # Nodes start two at a time (each is its own directory, cluster and namespace): more
        # at once on two cores only makes each one's own waits run out.
        self.started_nodes = list(self.sites)
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            started = list(pool.map(lambda site: (site, self.nodes_sh("start", site)),
                                    self.sites))
        for site, done in started:
            if done.returncode != 0:
                raise RuntimeError("node %s did not start:\n%s" % (site, done.stdout[-3000:]))
        self.say("   %d pScheduler nodes up after %.0f s" % (len(self.sites), time.monotonic() - t0))

    def _syslog_sink(self):
        if os.path.exists("/dev/log"):
            return
        sink = os.path.join(ROOT, "lab", "real_pscheduler", "syslog_sink.py")
        self.sink = subprocess.Popen([sys.executable, sink, os.path.join(self.rps, "syslog.log")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(20):
            if os.path.exists("/dev/log"):
                break
            time.sleep(0.1)

    def opensearch_env(self):
        # A JVM starting beside five nodes on two shared cores needs more than the usual 90 s.
        return dict(os.environ, OPENSEARCH_PORT=str(self.port), OPENSEARCH_INSTANCE=self.instance,
                    OPENSEARCH_HOST=self.topology.address(ARCHIVE),
                    OPENSEARCH_WAIT=os.environ.get("OPENSEARCH_WAIT", "600"))

    @property
    def instance(self):
        return "mesh-%d" % self.port

    def _opensearch(self):
        env = self.opensearch_env()
        # A fresh archive every time: a previous mesh's results would pass for this one's.
        shutil.rmtree(os.path.join(ROOT, "var", "opensearch", "node-" + self.instance, "data"),
                      ignore_errors=True)
        self.opensearch_up = True
        done = subprocess.run(self.net.argv(ARCHIVE, ["bash", OPENSEARCH_SH, "start"]), env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=int(env["OPENSEARCH_WAIT"]) + 120)
        if done.returncode != 0:
            raise RuntimeError("OpenSearch did not start:\n" + done.stdout)
        # Seeded like a perfSONAR 5 archive: its own index template for pscheduler_*, as
        # perfsonar-archive installs it, before any result arrives (tests/perfsonar_shapes.py).
        sys.path.insert(0, os.path.join(ROOT, "tests"))
        import perfsonar_shapes
        status, body = self.opensearch("PUT", "/_index_template/" +
                                       perfsonar_shapes.PERFSONAR_TEMPLATE_NAME,
                                       perfsonar_shapes.perfsonar_template())
        if status != 200:
            raise RuntimeError("seeding perfSONAR's index template: %s %s" % (status, body))

    def opensearch(self, method, path, body=None):
        argv = ["curl", "-sS", "-m", "30", "-X", method, "-w", "\n%{http_code}",
                "-H", "Content-Type: application/json", self.archive_url + path]
        if body is not None:
            argv[-1:-1] = ["--data-binary", "@-"]
        done = self.net.run(ARCHIVE, argv, check=False, timeout=60,
                            input_text=json.dumps(body) if body is not None else None)
        text, _, status = done.stdout.rpartition("\n")
        try:
            return int(status or 0), json.loads(text)
        except ValueError:
            return int(status or 0), text

    @property
    def template_url(self):
        return "http://%s:%d/mesh.json" % (self.topology.address(ARCHIVE), TEMPLATE_PORT)

    def _serve_template(self):
        web = os.path.join(self.rps, "web")
        os.makedirs(web, exist_ok=True)
        doc = template(self.topology, self.sites, self.archive_url, self.repeat, self.slip)
        if self.throughput:
            doc = steady.with_throughput(doc, *self.throughput)
        with open(os.path.join(web, "mesh.json"), "w") as handle:
            json.dump(doc, handle, indent=2)
        os.chmod(web, 0o755)
        self.web = self.net.popen(ARCHIVE, [
            "/usr/bin/python3", "-m", "http.server", "--bind", self.topology.address(ARCHIVE),
            "--directory", web, str(TEMPLATE_PORT)], user="nobody",
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def agent_config(self, site):
        base = os.path.join(self.rps, "psconfig-" + site)
        return base, {
            "remotes": [{"url": self.template_url, "configure-archives": True}],
            "pscheduler-assist-server": self.topology.address(site, 4),
            "match-addresses": [TEMPLATE_NAMES[site], self.topology.address(site, 4),
                                self.topology.address(site, 6)],
            "include-directory": base + "/pscheduler.d",
            "archive-directory": base + "/archives.d",
            "transform-directory": base + "/transforms.d",
            "requesting-agent-file": base + "/requesting-agent.json",
            "client-uuid-file": base + "/client-uuid",
            "pscheduler-tracker-file": base + "/psc_tracker",
            "cache-directory": base + "/cache/",
            # The lab's only shortening of the agent: look at the template every minute.
            "check-interval": "PT1M",
            "check-config-interval": "PT30S",
        }

    def _psconfig_source(self):
        src = os.path.join(self.rps, "psconfig-src")
        agent = os.path.join(src, "psconfig", "psconfig", "perfsonar-psconfig")
        if not os.path.isdir(agent):
            shared = os.environ.get("PSCHEDULER_SRC", SHARED)
            tarballs = sorted(f for f in os.listdir(shared) if f.startswith("psconfig-5.2.4-"))
            if not tarballs:
                raise RuntimeError("no psconfig-5.2.4-*.tar.gz in %s" % shared)
            os.makedirs(src, exist_ok=True)
            subprocess.run(["tar", "-xzf", os.path.join(shared, tarballs[0]), "-C", src],
                           check=True)
            subprocess.run(["chmod", "-R", "a+rX", src], check=True)
        return agent

    def _start_agent(self, site):
        agent = self._psconfig_source()
        base, config = self.agent_config(site)
        # A fresh agent: a previous mesh's tracker, cache and UUID are not this one's.
        shutil.rmtree(base, ignore_errors=True)
        for sub in ("pscheduler.d", "archives.d", "transforms.d", "cache"):
            os.makedirs(os.path.join(base, sub), exist_ok=True)
        path = os.path.join(base, "pscheduler-agent.json")
        with open(path, "w") as handle:
            json.dump(config, handle, indent=2)
        subprocess.run(["chown", "-R", "pscheduler:", base], check=True)
        log = open(os.path.join(base, "agent.log"), "a")
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": base,
               "PYTHONPATH": "%s:%s/pylib" % (agent, self.rps)}
        proc = self.net.popen(site, [
            "setpriv", "--reuid=pscheduler", "--regid=pscheduler", "--init-groups",
            "env"] + ["%s=%s" % kv for kv in env.items()] + [
            "/usr/bin/python3", os.path.join(agent, "bin", "psconfig_pscheduler_agent"),
            "--config", path, "--disable-inotify"], stdout=log, stderr=subprocess.STDOUT)
        self.agents.append(proc)

    # -- reading -----------------------------------------------------------------------------

    def records(self, test_type="pmtu"):
        """The jumbo_history records of `test_type` (flat, archive/record.py fields)."""
        self.opensearch("POST", "/jumbo_history/_refresh")
        # 503 "all shards failed": the index the archiver just made is still allocating its
        # shards (seen at load 31, 2026-11-29); asked again, a few times only.
        for attempt in range(RECORDS_TRIES):
            status, body = self.opensearch("POST", "/jumbo_history/_search", {
                "size": 1000, "query": {"term": {"jumbo.test_type": test_type}},
                "sort": [{"jumbo.start": "asc"}]})
            if status != 503 or attempt == RECORDS_TRIES - 1:
                break
            time.sleep(RECORDS_PAUSE)
        if status == 404:
            return []
        if status != 200:
            raise RuntimeError("reading jumbo_history: %s %s" % (status, body))
        return [hit["_source"]["jumbo"] for hit in body["hits"]["hits"]]

    def tasks(self, site):
        """The tasks the node holds, as its API serves them expanded (what the agents made)."""
        url = "https://%s/pscheduler/tasks?expanded=true" % self.topology.address(site, 4)
        done = subprocess.run(self.net.argv(site, ["curl", "-sk", "-m", "30", url]),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=60)
        tasks = json.loads(done.stdout)
        if not isinstance(tasks, list) or not all(isinstance(t, dict) for t in tasks):
            raise ValueError("%s: the task list is not a list of tasks: %r" % (site, done.stdout[:200]))
        return tasks

    def cli(self, site, args, timeout=120):
        return subprocess.run(["bash", NODES_SH, "cli", site] + list(args), env=self.env(),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=timeout)

    def schedule(self, site, start, end):
        """[steady.Run] of the node's schedule from `start` to `end` (epoch seconds; runs
        already placed after now included); ValueError when the answer is not a schedule."""
        stamp = lambda t: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))  # noqa: E731
        done = self.cli(site, ["schedule", "--format", "json", "--host", TEMPLATE_NAMES[site],
                               stamp(start), stamp(end)], timeout=180)
        if done.returncode != 0:
            raise ValueError("%s: pscheduler schedule failed: %s" % (site, done.stdout[-500:]))
        return steady.parse_schedule(site, done.stdout)

    # -- down --------------------------------------------------------------------------------

    def down(self):
        for proc in self.agents:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.agents:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        self.agents = []
        for site in reversed(self.started_nodes):
            self.nodes_sh("stop", site, timeout=120)
        self.started_nodes = []
        if self.opensearch_up and self.net is not None:
            subprocess.run(self.net.argv(ARCHIVE, ["bash", OPENSEARCH_SH, "stop"]),
                           env=self.opensearch_env(),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
            self.opensearch_up = False
        if self.net is not None:
            self.net.destroy()  # the web server, whatever the runners left, the namespaces
            self.net = None
        if self.sink is not None and self.sink.poll() is None:
            self.sink.terminate()
            self.sink.wait(timeout=10)
        self.sink = None
