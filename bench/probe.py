"""`python -m bench probe [SCENARIO ...] [--versions 4,6] [--modes udp,echo,reflector]
[--runs 3] [--flows N] [--no-anchors]`: jumbocheck on the lab scenarios, as a user runs it
(needs root to build the lab; the tool runs as `jumbotest`).

Per scenario, mode and family, `--runs` (3) runs back to back on one topology, so that every run
after the first meets the dest's ICMP budget as the run before left it (a mesh runs tests back
to back): each run's whole-process wall time (measured around the `jumbocheck` process, not
its self-reported `elapsed`), probes, method and whether path MTU and PMTUD verdict are exact.
Modes: `udp` (ping_group_range "1 0", the Debian default: the UDP fallback), `echo`
(ICMP datagram sockets allowed, as on EL8/EL9) and `reflector` (a two-participant run's forward
phase: the dest runs the reflector, the source a process calling jumbo.probe.measure with it,
as the tool's `run` does; its whole-process wall time is measured the same way).
Default scenarios: every fixed scenario plus `odd-blackhole`
and `odd-ptb`, whose link MTU is drawn at random in 1300..8999 (not a plateau)
for each bench run; a name like `odd-blackhole-4321` fixes it. `--flows N` runs with N flows
instead of the spec's default 4 (each further UDP flow needs one answer of the dest's
rate-limited ICMP budget).

Beside every single-ended run (udp, echo): the bound the dest's ICMP budget sets for it
(bench/budget.py: the answers the run needed beyond what the burst left, counted on the dest
with nftables, at the rate its kernel's sysctls give; the tokens follow from the runs before,
back to back) and the ratio of the run's wall time to that bound plus the case's floor (the
wall time of its fastest run the burst fully covered: the process, the probing and its round
trips with nothing waited for; shown as `floor`); per case the median ratio, and at the end
per mode and family. A run whose answers fit in the tokens left has bound 0: it shows "-",
sets the floor and stays out of the medians.

Anchors, side by side, after jumbocheck's runs (their UDP/ICMP use must not drain its budget):
tracepath (bounded: -m 8, killed after 20 s), a `ping -M do -s` binary search over
[min, local MTU] (1 s wait per ping), and upstream fwmtu's method (connected UDP socket,
IP_MTU after connect).
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
ALL_GROUPS = (0, 2147483647)

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


REFLECTOR = r"""
import sys, time
from jumbo.tool import reflector
from jumbo.probe import wire
server = reflector.Reflector(int(sys.argv[1]), sys.argv[2], (4, 6)).open()
print("ready", flush=True)
server.serve(time.monotonic() + float(sys.argv[3]))
"""

FORWARD = r"""
import json, sys
from jumbo import probe
try:
    result = probe.measure({"dest": sys.argv[1], "flows": int(sys.argv[4])},
                           reflector={"port": int(sys.argv[2]), "token": sys.argv[3]}).as_json()
except probe.ProbeError as err:
    result = {"succeeded": False, "error": str(err)}
print(json.dumps(result))
"""

GOODBYE = r"""
import sys, time
from jumbo.tool import reverse
reverse.say_goodbye(sys.argv[1], int(sys.argv[2]), sys.argv[3], 4, time.monotonic() + 3)
"""


def _library_python(script):
    return ["env", "PYTHONPATH=" + os.path.join(ROOT, "python-jumbo"), PYTHON, "-c", script]


def timed(lab, argv, timeout=90):
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


def anchors(lab, dest, version, truth):
    floor = 68 if version == 4 else 1280
    pmtu, pprobes, psec = ping_search(lab, dest, version, floor, truth["local-mtu"])
    tmtu, _hops, tsec = tracepath(lab, dest, version)
    fw = lab.run("src", [PYTHON, "-c", FWMTU, dest], user=USER, check=False)
    fwmtu = int(fw.stdout.strip()) if fw.stdout.strip().isdigit() else None

    def mark(mtu):
        return "ok" if mtu == truth["path-mtu"] else "WRONG(%s)" % mtu
    return "ping-bisect %s %.1fs %dp | tracepath %s %.1fs | fwmtu %s" % (
        mark(pmtu), psec, pprobes, mark(tmtu), tsec, mark(fwmtu))


def _options(argv):
    import argparse
    parser = argparse.ArgumentParser(
        prog="python -m bench probe", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", metavar="SCENARIO",
                        help="lab scenarios (default: every fixed one plus odd-blackhole, odd-ptb)")
    parser.add_argument("--versions", default="4,6", help="IP versions, comma-separated (4,6)")
    parser.add_argument("--modes", default="udp,echo,reflector",
                        help="probe methods, comma-separated: udp, echo, reflector (all three)")
    parser.add_argument("--runs", type=int, default=3, help="runs back to back per case (3)")
    parser.add_argument("--flows", type=int, default=None,
                        help="flows per run (default: the spec's default, 4)")
    parser.add_argument("--echo", action="store_true", help="the earlier spelling of --modes echo")
    parser.add_argument("--no-anchors", dest="anchors", action="store_false",
                        help="skip tracepath, the ping bisection and fwmtu")
    args = parser.parse_args(argv)
    try:
        versions = tuple(int(v) for v in args.versions.split(","))
    except ValueError:
        parser.error("--versions takes 4, 6 or 4,6")
    modes = ("echo",) if args.echo else tuple(args.modes.split(","))
    if set(versions) - {4, 6}:
        parser.error("--versions takes 4, 6 or 4,6")
    if set(modes) - {"udp", "echo", "reflector"}:
        parser.error("--modes takes udp, echo, reflector")
    if args.runs < 1 or (args.flows is not None and not 1 <= args.flows <= 64):
        parser.error("--runs must be >= 1 and --flows 1..64")
    return {"versions": versions, "modes": modes, "runs": args.runs, "anchors": args.anchors,
            "flows": args.flows, "names": args.names}


def _with_floor(walls, bounds, floors, key):
    """The bound of each run: its own work's floor plus the wait its budget forces. The floor
    is the wall time of the same case's fastest run the burst fully covered (bound 0: the
    process, the probing and its round trips, nothing waited for); a case none of whose runs
    had bound 0 takes the smallest such floor seen for the mode and family so far. Returns
    (floor, [(answers, budget bound, wall / (floor + budget bound) or None)])."""
    free = [w for w, (_a, b, _r) in zip(walls, bounds) if b <= 0 and w > 0]
    floor = min(free) if free else floors.get(key)
    if free:
        floors[key] = min(floors.get(key, floor), floor)
    out = []
    for wall, (answers, bound, _r) in zip(walls, bounds):
        ratio = None
        if bound > 0 and floor is not None:
            ratio = wall / (floor + bound)
        out.append((answers, bound, ratio))
    return floor, out


def _median(values):
    values = sorted(values)
    return values[len(values) // 2] if values else 0


def main(argv):
    from lab import scenarios
    opts = _options(argv)
    names = opts["names"] or sorted(scenarios.SCENARIOS) + sorted(scenarios.RANDOM_SCENARIOS)
    load = os.getloadavg()
    print("load average at start: %.2f %.2f %.2f on %d cores" % (load + (os.cpu_count(),)))
    print("%-26s %-9s %1s %-6s %-26s %-22s %-10s %-14s %s" % (
        "scenario", "mode", "v", "truth", "wall s per run", "probes per run", "method",
        "exact per run", "| dest's answers, budget bound s, wall/bound per run; median"))
    rows = []
    budgets = set()
    floors = {}
    for name in names:
        for mode in opts["modes"]:
            _scenario_in_mode(scenarios.get(name), mode, opts, rows, budgets, floors)
    _summary(rows, opts, budgets)
    load = os.getloadavg()
    print("load average at end: %.2f %.2f %.2f" % load)
    return 1 if any(not r["exact"] for r in rows) else 0


def _scenario_in_mode(topology, mode, opts, rows, budgets, floors):
    """One scenario's lab in one probe mode: every IP version, its line printed each."""
    from lab import Lab
    with Lab(topology, ping_group_range=ALL_GROUPS if mode == "echo" else None) as lab:
        truth = lab.truth("src", "dst")
        reflected = _start_reflector(lab) if mode == "reflector" else None
        for version in opts["versions"]:
            line = _case(lab, topology, mode, version, truth, reflected, opts, rows, budgets,
                         floors)
            if opts["anchors"] and mode == opts["modes"][0]:
                line += "  || " + anchors(lab, lab.address("dst", version), version, truth)
            print(line)
            sys.stdout.flush()
        if reflected is not None:
            port, token = reflected
            lab.run("src", _library_python(GOODBYE) + [lab.address("dst", 4), str(port),
                                                       token], user=USER, check=False)


def _start_reflector(lab, port=5545):
    """The reflector on the dest, as the tool starts it: (port, token)."""
    from jumbo.probe import wire
    token = wire.new_token()
    server = lab.popen("dst", _library_python(REFLECTOR) + [str(port), token, "900"], user=USER)
    server.stdout.readline()
    return port, token


def _case(lab, topology, mode, version, truth, reflected, opts, rows, budgets, floors):
    """opts["runs"] runs back to back of one scenario, mode and family: their rows appended,
    the case's line returned."""
    from bench.budget import Budget
    dest = lab.address("dst", version)
    budget = Budget(lab, "dst", "src", version) if reflected is None else None
    walls, probes, exacts, methods, bounds = [], [], [], set(), []
    for _ in range(opts["runs"]):
        run, bound = _one_run(lab, dest, reflected, budget, opts["flows"])
        if bound is not None:
            bounds.append(bound)
        try:
            result = json.loads(run["out"])
        except ValueError:
            result = {}
        exact = result.get("path-mtu") == truth["path-mtu"] and \
            result.get("pmtud") == truth["pmtud"]
        walls.append(run.get("wall") or 0.0)
        probes.append(result.get("probes") or 0)
        exacts.append(exact)
        methods.add(result.get("method"))
        rows.append({"scenario": topology.name, "mode": mode, "version": version,
                     "wall": walls[-1], "probes": probes[-1], "exact": exact,
                     "rss_kb": run.get("rss_kb") or 0,
                     "unknown": result.get("pmtud") == "unknown" or result.get("path-mtu") is None,
                     "ratio": None, "blackhole": truth["pmtud"] == "blackhole"})
    line = "%-26s %-9s %1d %-6s %-26s %-22s %-10s %s" % (
        topology.name, mode, version, truth["path-mtu"], " ".join("%.2f" % w for w in walls),
        " ".join(str(p) for p in probes), ",".join(sorted(str(m) for m in methods)),
        " ".join("yes" if e else "NO" for e in exacts))
    if budget is not None:
        floor, bounds = _with_floor(walls, bounds, floors, (mode, version))
        for row, (_a, _b, ratio) in zip(rows[-len(bounds):], bounds):
            row["ratio"] = ratio
        line += _bounds_text(bounds, floor)
        budgets.add(budget.describe())
        budget.close()
    return line


def _one_run(lab, dest, reflected, budget, flows):
    """One timed run: through the dest's reflector when `reflected` is (port, token), else
    jumbocheck under the dest's answer budget. (run, (answers, bound, None) or None)."""
    if reflected is not None:
        port, token = reflected
        return timed(lab, _library_python(FORWARD) + [dest, str(port), token,
                                                      str(flows or 4)]), None
    # The library of this checkout, whatever checkout the virtualenv's jumbo points at (a
    # side-by-side run of two checkouts sharing one virtualenv measures each its own).
    run, answers, _tokens, bound = budget.measure(lambda: timed(
        lab, ["env", "PYTHONPATH=" + os.path.join(ROOT, "python-jumbo"), JUMBOCHECK, dest,
              "--json"] + (["--flows", str(flows)] if flows else [])))
    return run, (answers, bound, None)


def _bounds_text(bounds, floor):
    ratios = [r for _a, _b, r in bounds if r is not None]
    return " | %s; %s floor %s" % (" ".join(
        "%d,%.2f,%s" % (a, b, "%.2f" % r if r is not None else "-") for a, b, r in bounds),
        "%.2f" % _median(ratios) if ratios else "-",
        "%.2f" % floor if floor is not None else "-")


def _summary(rows, opts, budgets):
    wrong = [r for r in rows if not r["exact"]]
    print("\n%d runs, %d exact, %d unknown; median probes per run %d" % (
        len(rows), len(rows) - len(wrong), sum(r["unknown"] for r in rows),
        _median([r["probes"] for r in rows])))
    _summary_walls(rows, opts)
    for text in sorted(budgets):
        print("  " + text)
    _summary_ratios(rows, opts)


def _summary_walls(rows, opts):
    for mode in opts["modes"]:
        for version in opts["versions"]:
            part = [r for r in rows if r["mode"] == mode and r["version"] == version]
            holes = [r for r in part if r["blackhole"]]
            if part:
                print("  %-9s IPv%d: wall max %.2f s (black holes %.2f s), median %.2f s; "
                      "median probes %d; peak memory median %.1f MB, max %.1f MB"
                      % (mode, version, max(r["wall"] for r in part),
                         max([r["wall"] for r in holes] or [0]),
                         _median([r["wall"] for r in part]),
                         _median([r["probes"] for r in part]),
                         _median([r["rss_kb"] for r in part]) / 1024.0,
                         max(r["rss_kb"] for r in part) / 1024.0))


def _summary_ratios(rows, opts):
    for mode in [m for m in opts["modes"] if m != "reflector"]:
        for version in opts["versions"]:
            ratios = [r["ratio"] for r in rows if r["mode"] == mode and r["version"] == version
                      and r["ratio"] is not None]
            if ratios:
                print("  %-9s IPv%d: median wall / (floor + budget bound) %.2f over %d runs with a bound "
                      "(max %.2f)" % (mode, version, _median(ratios), len(ratios), max(ratios)))
