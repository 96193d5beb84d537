"""bench-reflector-load: the load a full mesh's hourly pmtu makes on one dest.

N sources (each its own namespace, behind one router, each access link with its own MTU so
every pair has its own truth) run a two-participant pmtu run (forward through the dest's
reflector, and the reverse path) to the same dest, all at the same schedule.start, as
pScheduler does when a mesh's tasks fall in the same minute. Every run is checked exact
against the topology's truth in both directions; the dest's processes (every process in its
namespace: N jumbocheck runs) are sampled every SAMPLE seconds for their summed resident
memory and CPU time. Printed: runs exact, ports (busy candidates passed over, runs that found
none), the dest's peak RSS and CPU, each beside its bound.

    make bench-reflector-load                       # 30 sources, IPv4
    make bench-reflector-load BENCH_ARGS="--sources 40 --version 6"

tests/lab/test_reflector_load_lab.py runs the same with 8 sources and asserts every run exact.
"""

import argparse
import os
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _path in (ROOT, os.path.join(ROOT, "python-jumbo"), os.path.join(ROOT, "tests")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

USER = "jumbotest"
# Access link MTUs, source i takes MTUS[i % len]: every run's truth is one of these (the
# router and the dest's link carry 9000).
MTUS = (9000, 1500, 4470, 8950, 2000, 9000, 3000, 7000)
SAMPLE = 0.1
# Seconds from launching the runs to their schedule.start: room for 2N Python processes to
# start on this one machine (pScheduler starts each 3 s early, on nodes of their own).
START_IN = 8.0
START_PER_SOURCE = 1.0
# Bounds (what a node can take for one mesh's minute): per dest run. The suite's run is one
# Python process of some 20 MB; its CPU is its start-up and a few hundred datagrams.
RSS_PER_RUN_MB = 48.0
CPU_PER_RUN_S = 1.5


def topology(sources):
    """srcN - r - dst: one router, each source's access link with its own MTU."""
    from lab.topology import Node, Topology
    names = ["s%d" % i for i in range(sources)]
    nodes = [Node(name) for name in names] + [Node("r", router=True), Node("dst")]
    links = [("r", "dst", 9000)] + [(name, "r", MTUS[i % len(MTUS)])
                                    for i, name in enumerate(names)]
    return Topology("reflector-load-%d" % sources, nodes, links,
                    description="%d sources, one dest" % sources)


class DestSampler(object):
    """Every process in the dest's network namespace, sampled: peak summed RSS, CPU seconds
    (each process's last utime + stime seen, summed), peak process count."""

    def __init__(self, netns_name):
        self.inode = os.stat("/run/netns/%s" % netns_name).st_ino
        self.cpu = {}
        self.peak_rss = 0
        self.peak_count = 0
        self.stop = threading.Event()
        self.ticks = os.sysconf("SC_CLK_TCK")
        self.thread = threading.Thread(target=self._loop)
        self.thread.daemon = True

    def _pids(self):
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    if os.stat("/proc/%s/ns/net" % name).st_ino == self.inode:
                        yield name
                except OSError:
                    continue

    def sample(self):
        rss, count = 0, 0
        for pid in self._pids():
            try:
                with open("/proc/%s/stat" % pid) as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
                with open("/proc/%s/status" % pid) as handle:
                    status = handle.read()
            except OSError:
                continue
            count += 1
            self.cpu[pid] = max(self.cpu.get(pid, 0), int(fields[11]) + int(fields[12]))
            for line in status.splitlines():
                if line.startswith("VmRSS:"):
                    rss += int(line.split()[1])
        self.peak_rss = max(self.peak_rss, rss)
        self.peak_count = max(self.peak_count, count)

    def _loop(self):
        while not self.stop.is_set():
            self.sample()
            self.stop.wait(SAMPLE)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()

    def cpu_seconds(self):
        return sum(self.cpu.values()) / float(self.ticks)


def spec_for(lab, version):
    return {"schema": 1, "dest": lab.address("dst", version), "reflector": True,
            "reverse": True, "ip-version": version}


# A program holding UDP ports on the dest (every one `held` asks for, all addresses), as
# other runs' reflectors (a mesh's background pmtu runs) hold them; it prints "ready" once bound.
HOLDER = r"""
import socket, sys, time
held = []
for port in map(int, sys.argv[1:]):
    for family, anywhere in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::")):
        sock = socket.socket(family, socket.SOCK_DGRAM)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind((anywhere, port))
        held.append(sock)
print("ready", flush=True)
time.sleep(600)
"""


def hold_ports(lab, ports):
    """Start the holder in the dest's namespace: its Popen (lab.destroy ends it by PID)."""
    proc = lab.popen("dst", ["python3", "-c", HOLDER] + [str(p) for p in ports], user=USER)
    if proc.stdout.readline().strip() != "ready":
        raise RuntimeError("the port holder did not start: %s" % proc.stderr.read())
    return proc


def run_all(lab, sources, version, held=()):
    """Every source's run to the dest at the same schedule.start, while `held` ports are
    taken on the dest: [(source, outcome or the exception)], the DestSampler."""
    import harness
    spec = spec_for(lab, version)
    holder = hold_ports(lab, held) if held else None
    outcomes = [None] * sources

    def one(i):
        places = [{"lab": lab, "node": "s%d" % i, "user": USER},
                  {"lab": lab, "node": "dst", "user": USER}]
        try:
            outcomes[i] = harness.run_tool_participants(
                "jumbocheck", spec, places, start_in=max(START_IN, START_PER_SOURCE * sources))
        except Exception as err:  # noqa: BLE001 - one run's failure is a figure, not the end
            outcomes[i] = err
    threads = [threading.Thread(target=one, args=(i,)) for i in range(sources)]
    with DestSampler(lab.ns("dst")) as sampler:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        sampler.sample()
    if holder is not None:
        holder.kill()  # our own process, by its PID
        holder.wait()
    return list(enumerate(outcomes)), sampler


def check(lab, index, outcome, version):
    """(exact, what was wrong or None, the dest's reflector report or None) of one run."""
    if isinstance(outcome, Exception):
        return False, "%s: %s" % (type(outcome).__name__, outcome), None
    name = "s%d" % index
    forward, backward = lab.truth(name, "dst", version), lab.truth("dst", name, version)
    merged = outcome.merged or {}
    if "took too long" in str(merged.get("error")):
        # 30 merged-results at once on this machine's 2 cores met the harness's timeout
        # (pScheduler's, 5 s): merge again, alone, from the same participant results.
        merged = remerge(outcome)
    dest = outcome.results[1] if len(outcome.results) > 1 else None
    report = ((dest or {}).get("result") or {}).get("reflector") if isinstance(dest, dict) \
        else None
    wrong = []
    if isinstance(dest, dict) and not dest.get("succeeded"):
        wrong.append("dest: %s" % dest.get("error"))  # "every reflector port is busy", ...
    if merged.get("succeeded") is not True:
        wrong.append("failed: %s" % merged.get("error"))
    if merged.get("path-mtu") != forward["path-mtu"]:
        wrong.append("path-mtu %s, truth %s" % (merged.get("path-mtu"), forward["path-mtu"]))
    if merged.get("method") != "reflector":
        wrong.append("method %s, not through the reflector" % merged.get("method"))
    peers = (report or {}).get("peers")
    if peers != [lab.address(name, version)]:
        wrong.append("the dest's reflector answered %s, not only its run's source" % peers)
    if merged.get("reverse-path-mtu") != backward["path-mtu"]:
        wrong.append("reverse-path-mtu %s, truth %s" % (merged.get("reverse-path-mtu"),
                                                       backward["path-mtu"]))
    return not wrong, "; ".join(wrong) or None, report


REMERGED = []


def remerge(outcome):
    import harness
    REMERGED.append(1)
    done = harness.invoke("tool", "jumbocheck", "merged-results", stdin={
        "test": outcome.inputs[0]["test"], "results": outcome.results})
    try:
        return done.json()
    except ValueError:
        return {"succeeded": False, "error": "merged-results again: %s" % done.stderr.strip()}


def measure(sources, version=4, held=()):
    """Build the lab, run the load (with `held` reflector ports taken on the dest by another
    program), check every run: a dict of the figures."""
    from lab import Lab
    del REMERGED[:]
    lab = Lab(topology(sources)).build()
    try:
        started = time.monotonic()
        outcomes, sampler = run_all(lab, sources, version, held)
        wall = time.monotonic() - started
        checked = [check(lab, i, o, version) for i, o in outcomes]
    finally:
        lab.destroy()
    reports = [r for _, _, r in checked if r]
    return {
        "sources": sources, "version": version, "wall": wall, "held": len(held),
        "exact": sum(1 for ok, _, _ in checked if ok),
        "wrong": ["s%d: %s" % (i, why) for i, (ok, why, _) in enumerate(checked) if not ok],
        "ports": sorted(r["port"] for r in reports),
        "passed-over": sum(len(r.get("busy-ports") or []) for r in reports),
        "foreign": sum(r["stats"].get("foreign", 0) for r in reports),
        "no-port": sum(1 for ok, why, _ in checked if why and "busy" in why),
        "peak-rss-mb": sampler.peak_rss / 1024.0, "cpu-s": sampler.cpu_seconds(),
        "peak-processes": sampler.peak_count, "remerged": len(REMERGED),
    }


def print_figures(figures, load):
    n = figures["sources"]
    print("bench-reflector-load: %d sources -> one dest, IPv%d, one schedule.start"
          % (n, figures["version"]))
    print("  runs exact (both directions, through the reflector): %d of %d   (bound: all)"
          % (figures["exact"], n))
    for line in figures["wrong"]:
        print("    " + line)
    ports = figures["ports"]
    print("  reflector ports: %d distinct of %d runs, %d of the range held by another program, "
          "candidates passed over busy: %d, runs with no port: %d   (bound: 0)"
          % (len(set(ports)), len(ports), figures["held"], figures["passed-over"],
             figures["no-port"]))
    print("  requests refused for coming from another address than the run's source (other "
          "runs greeting their candidate ports): %d" % figures["foreign"])
    print("  dest peak RSS (all its processes together): %.0f MB = %.1f MB per run   "
          "(bound: %.0f MB per run)" % (figures["peak-rss-mb"], figures["peak-rss-mb"] / n,
                                         RSS_PER_RUN_MB))
    print("  dest CPU (all its processes): %.1f s = %.2f s per run   (bound: %.1f s per run)"
          % (figures["cpu-s"], figures["cpu-s"] / n, CPU_PER_RUN_S))
    print("  dest processes at once: %d; wall, launch to last result: %.1f s; machine load "
          "before: %s" % (figures["peak-processes"], figures["wall"], load))
    print("  merged-results timed out under the load and merged again alone: %d"
          % figures["remerged"])


def held_ports(count):
    """`count` ports of the reflector range, every other one from its start."""
    from jumbo.tool.runner import REFLECTOR_PORTS
    return list(range(REFLECTOR_PORTS[0], REFLECTOR_PORTS[1] + 1, 2))[:count]


def within_bounds(figures):
    n = figures["sources"]
    return (figures["exact"] == n and figures["no-port"] == 0
            and figures["peak-rss-mb"] <= RSS_PER_RUN_MB * n
            and figures["cpu-s"] <= CPU_PER_RUN_S * n)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", type=int, default=30)
    parser.add_argument("--version", type=int, choices=(4, 6), default=4)
    parser.add_argument("--held", type=int, default=0,
                        help="reflector ports (every other one from 5500) another program "
                        "holds on the dest meanwhile, as background runs do (0 to 50)")
    args = parser.parse_args(argv)
    if not 0 <= args.held <= 50:
        sys.stderr.write("--held must be 0 to 50\n")
        return 2
    if os.geteuid() != 0:
        sys.stderr.write("bench-reflector-load builds namespaces: run it as root\n")
        return 2
    if not 1 <= args.sources <= 60:
        sys.stderr.write("--sources must be 1 to 60\n")
        return 2
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    figures = measure(args.sources, args.version, held_ports(args.held))
    print_figures(figures, load)
    return 0 if within_bounds(figures) else 1


if __name__ == "__main__":
    sys.exit(main())
