"""`python -m bench probe [SCENARIO ...] [--versions 4,6] [--echo]`: jumbocheck against the
anchors on the lab scenarios (needs root to build the lab; tools run as `jumbotest`).

Anchors: tracepath (bounded: -m 8, killed after 20 s), a `ping -M do -s` binary search over
[min, local MTU] (1 s wait per ping), and upstream fwmtu's method (connected UDP socket,
IP_MTU after connect). Per scenario: correct?, seconds, probes, ratio to each anchor, the
information-theoretic minimum ratio, and jumbocheck's peak memory (ru_maxrss of the child).
"""

import json
import os
import re
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "python-jumbo"))

JUMBOCHECK = os.path.join(ROOT, ".venv", "bin", "jumbocheck")
PYTHON = os.path.join(ROOT, ".venv", "bin", "python")
USER = "jumbotest"

MEASURE = r"""
import json, resource, subprocess, sys, time
t = time.monotonic()
done = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, universal_newlines=True)
wall = time.monotonic() - t
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"wall": wall, "rss_kb": rss, "status": done.returncode, "out": done.stdout}))
"""

FWMTU = r"""
import socket, sys
family = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(family, socket.SOCK_DGRAM)
s.connect((sys.argv[1], 33434))
print(s.getsockopt(0, 14) if family == socket.AF_INET else s.getsockopt(41, 24))
"""


def timed(lab, argv, timeout=60):
    done = lab.run("src", [PYTHON, "-c", MEASURE] + argv, user=USER, check=False,
                   timeout=timeout)
    try:
        return json.loads(done.stdout)
    except ValueError:
        return {"wall": None, "rss_kb": None, "status": -1, "out": done.stdout + done.stderr}


def ping_search(lab, dest, version, low, high):
    header = 28 if version == 4 else 48
    probes, start = 0, time.monotonic()

    def ok(size):
        argv = ["ping", "-%d" % version, "-n", "-c", "1", "-W", "1", "-M", "do", "-s",
                str(size - header), dest]
        return lab.run("src", argv, user=USER, check=False).returncode == 0

    if not ok(low):
        return None, 1, time.monotonic() - start
    probes = 1
    while low < high:
        mid = (low + high + 1) // 2
        probes += 1
        if ok(mid):
            low = mid
        else:
            high = mid - 1
    return low, probes, time.monotonic() - start


def tracepath(lab, dest, version):
    start = time.monotonic()
    argv = ["timeout", "20", "tracepath", "-%d" % version, "-n", "-m", "8", dest]
    done = lab.run("src", argv, user=USER, check=False, timeout=30)
    match = re.findall(r"pmtu (\d+)", done.stdout)
    hops = len(re.findall(r"^\s*\d+:", done.stdout, re.M))
    return (int(match[-1]) if match else None), hops, time.monotonic() - start


def main(argv):
    from lab import Lab, scenarios
    from jumbo.probe.search import information_minimum
    versions = (4, 6)
    echo = "--echo" in argv
    names = []
    i = 0
    while i < len(argv):
        if argv[i] == "--versions":
            versions = tuple(int(v) for v in argv[i + 1].split(","))
            i += 1
        elif not argv[i].startswith("-"):
            names.append(argv[i])
        i += 1
    names = names or sorted(scenarios.SCENARIOS)
    rows = []
    print("%-24s %2s %-5s %7s %6s %6s %8s | %-14s %-14s %-12s" % (
        "scenario", "v", "exact", "seconds", "probes", "x-min", "rss-KB",
        "ping-bisect", "tracepath", "fwmtu"))
    for name in names:
        with Lab(scenarios.get(name),
                 ping_group_range=(0, 2147483647) if echo else None) as lab:
            truth = lab.truth("src", "dst")
            for version in versions:
                dest = lab.address("dst", version)
                run = timed(lab, [JUMBOCHECK, dest, "--json"])
                try:
                    result = json.loads(run["out"])
                except ValueError:
                    result = {}
                exact = result.get("path-mtu") == truth["path-mtu"] and \
                    result.get("pmtud") == truth["pmtud"]
                seconds = result.get("elapsed") or 0.0
                probes = result.get("probes") or 0
                floor = 68 if version == 4 else 1280
                minimum = information_minimum(truth["local-mtu"], floor)
                # Anchors (after jumbocheck: their UDP/ICMP use must not drain its budget).
                pmtu, pprobes, psec = ping_search(lab, dest, version, floor, truth["local-mtu"])
                tmtu, thops, tsec = tracepath(lab, dest, version)
                fw = lab.run("src", [PYTHON, "-c", FWMTU, dest], user=USER, check=False)
                fwmtu = int(fw.stdout.strip()) if fw.stdout.strip().isdigit() else None

                def anchor(mtu, sec, count):
                    mark = "ok" if mtu == truth["path-mtu"] else "WRONG(%s)" % mtu
                    ratio = (sec / seconds) if seconds else 0
                    return "%s %.1fs x%.0f%s" % (mark, sec, ratio,
                                                 " %dp" % count if count else "")
                print("%-24s %2d %-5s %7.3f %6d %6.2f %8s | %-14s %-14s %-12s" % (
                    name, version, "yes" if exact else "NO", seconds, probes,
                    probes / float(minimum), run.get("rss_kb"),
                    anchor(pmtu, psec, pprobes), anchor(tmtu, tsec, thops),
                    "ok" if fwmtu == truth["path-mtu"] else "WRONG(%s)" % fwmtu))
                sys.stdout.flush()
                rows.append({"scenario": name, "version": version, "exact": exact,
                             "seconds": seconds, "probes": probes, "minimum": minimum})
    wrong = [r for r in rows if not r["exact"]]
    print("\n%d runs, %d exact; jumbocheck median %.3f s; x-min = probes / ceil(log2(sizes))"
          % (len(rows), len(rows) - len(wrong),
             sorted(r["seconds"] for r in rows)[len(rows) // 2] if rows else 0))
    return 1 if wrong else 0
