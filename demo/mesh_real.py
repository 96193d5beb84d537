"""`make demo-mesh`: the mesh as WLCG runs it, through perfSONAR's own daemons.

    python -m demo.mesh_real [--rounds N] [--sites cern,desy,...] [--timeout SECONDS]
                             [--repeat PT5M] [--slip PT2M]

1. builds the real mesh (lab/real_mesh.py): upstream pScheduler 5.2.5 nodes at the demo's
   sites, their routers, a real OpenSearch seeded like a perfSONAR 5 archive;
2. starts perfSONAR's pSConfig pScheduler agent on every node, reading the shipped template
   (psconfig/lhcone-jumbo-mesh.json) with the lab's addresses: the agents create the tasks;
3. waits for N rounds of pmtu results of every directed pair, both families, in OpenSearch;
4. prints `jumbo-report` and `jumbo-alarms` read from that OpenSearch;
5. checks every directed pair and family of every round against the lab's ground truth
   (demo/checks.py, the standard of `make demo`), and that no run failed to start;
prints peak memory and wall time, and removes everything, also on Ctrl-C or SIGTERM.
Exit status 0 only when every check passed.
"""

import argparse
import os
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _path in (os.path.join(ROOT, "python-jumbo"), ROOT):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from demo import checks  # noqa: E402 - after the path set-up above
from jumbo.core.units import duration_seconds  # noqa: E402
from lab import real_mesh  # noqa: E402

VENV_BIN = os.path.join(ROOT, ".venv", "bin")
FAMILIES = (4, 6)


def say(text=""):
    print(text, flush=True)


def as_result(record):
    """An archived flat record (archive/record.py) as the result fields demo/checks reads."""
    return {"succeeded": record.get("succeeded"), "error": record.get("error"),
            "path-mtu": record.get("path_mtu"), "pmtud": record.get("pmtud"),
            "blackhole": {"ttl": record.get("blackhole_ttl"), "ip": record.get("blackhole_ip")}}


def by_pair(records):
    """{(source site, dest site, ip version): [records, oldest first]} of the lab's sites."""
    found = {}
    for record in records:
        key = (real_mesh.site_of_label(record.get("source_site")),
               real_mesh.site_of_label(record.get("dest_site")), record.get("ip_version"))
        found.setdefault(key, []).append(record)
    return found


def wanted(sites):
    return [(s, d, v) for s, d in real_mesh.pairs(sites) for v in FAMILIES]


def missing(mesh, rounds):
    runs = by_pair(mesh.records("pmtu"))
    return [key for key in wanted(mesh.sites) if len(runs.get(key, [])) < rounds]


def check_round(mesh, runs, number):
    """Checks of round `number` (1-based): every directed pair and family against the truth."""
    results = []
    spec = {"target-mtu": 9000}
    for source, dest, version in wanted(mesh.sites):
        records = runs.get((source, dest, version), [])
        label = "round %d IPv%d" % (number, version)
        if len(records) < number:
            results.append(checks.Check("%s %s -> %s" % (label, source, dest), False,
                                        "no result archived"))
            continue
        for check in checks.measurement(mesh.topology, source, dest,
                                        as_result(records[number - 1]), spec):
            check.what = "%s %s" % (label, check.what)
            results.append(check)
    return results


def _memory(pid):
    """A process's proportional set size in bytes (its shared pages divided among their
    users), or its resident size where the kernel gives no smaps_rollup. PostgreSQL's shared
    buffers and gunicorn's forked workers share pages: summing resident sizes counted them
    once per process (9830 MiB "peak" for a 4-node mesh)."""
    for name, key in (("smaps_rollup", "Pss:"), ("status", "VmRSS:")):
        try:
            with open("/proc/%s/%s" % (pid, name)) as handle:
                for line in handle:
                    if line.startswith(key):
                        return int(line.split()[1]) * 1024
        except OSError:
            continue
    return 0


class MemoryPeak(object):
    """The largest total memory (PSS) of every process in the mesh's namespaces."""

    def __init__(self, mesh):
        self.mesh = mesh
        self.peak = 0

    def sample(self):
        total = 0
        namespaces = list(getattr(self.mesh.net, "created", []) or [])
        for name in namespaces:
            pids = subprocess.run(["ip", "netns", "pids", name], stdout=subprocess.PIPE,
                                  universal_newlines=True).stdout.split()
            total += sum(_memory(pid) for pid in pids)
        self.peak = max(self.peak, total)
        return total


def wait_rounds(mesh, rounds, timeout, memory):
    deadline = time.monotonic() + timeout
    last = None
    while True:
        memory.sample()
        left = missing(mesh, rounds)
        if not left:
            return True
        if len(left) != last:
            say("   waiting: %d of %d directed pair/family results of round %d not archived yet"
                % (len(left), len(wanted(mesh.sites)), rounds))
            last = len(left)
        if time.monotonic() > deadline:
            say("   gave up after %d s; still missing: %s" % (timeout, ", ".join(
                "%s->%s v%d" % key for key in left)))
            return False
        time.sleep(15)


def report(mesh, out):
    """jumbo-report and jumbo-alarms, read from the mesh's OpenSearch (inside the lab)."""
    state = os.path.join(out, "alarms-state.json")
    for argv in ([os.path.join(VENV_BIN, "jumbo-report"), "--store", mesh.archive_url],
                 [os.path.join(VENV_BIN, "jumbo-alarms"), "--store", mesh.archive_url,
                  "--state", state]):
        done = mesh.net.run(real_mesh.ARCHIVE, argv, check=False, timeout=300)
        say("   $ %s" % " ".join(os.path.basename(a) if i == 0 else a
                                 for i, a in enumerate(argv)))
        for line in (done.stdout + done.stderr).rstrip().splitlines():
            say("     " + line)
        if done.returncode != 0:
            return False
    return True


def non_starters(mesh):
    """Runs of the agents' tasks that pScheduler marked non-starter or missed, per node."""
    bad = []
    for site in mesh.sites:
        done = mesh.cli(site, ["schedule", "--host", real_mesh.TEMPLATE_NAMES[site], "-PT2H"],
                        timeout=120)
        for line in done.stdout.splitlines():
            if "Non-Starter" in line or "Missed" in line:
                bad.append("%s: %s" % (site, line.strip()))
    return bad


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="make demo-mesh (or python -m demo.mesh_real)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds of pmtu results to wait for and check, back to back "
                        "(default %(default)s, the issue's 'three runs')")
    parser.add_argument("--repeat", default="PT5M",
                        help="the template's hourly schedule in the lab: repeat (default "
                        "%(default)s: a lab cannot wait an hour per round)")
    parser.add_argument("--slip", default="PT2M", help="... and slip (default %(default)s)")
    parser.add_argument("--sites", default=",".join(real_mesh.DEMO_SITES),
                        help="lab sites (default %(default)s)")
    parser.add_argument("--timeout", type=int, default=1800,
                        help="seconds to wait for the rounds (default %(default)s)")
    parser.add_argument("--out", default=os.path.join(ROOT, "var", "demo-mesh"))
    args = parser.parse_args(argv)
    args.sites = tuple(s for s in args.sites.split(",") if s)
    if args.rounds < 1 or len(args.sites) < 2:
        parser.error("--rounds must be >= 1 and --sites name at least two sites")
    for name in ("repeat", "slip"):
        try:
            seconds = duration_seconds(getattr(args, name))
        except ValueError as err:
            parser.error("--%s: %s" % (name, err))
        if not 0 < seconds <= 86400:
            parser.error("--%s must be more than 0 and at most a day" % name)
    return args


def _interrupted(signum, frame):
    raise KeyboardInterrupt("signal %d" % signum)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if os.geteuid() != 0:
        say("demo-mesh: needs root (namespaces, PostgreSQL clusters)")
        return 2
    os.makedirs(args.out, exist_ok=True)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupted)
    started = time.monotonic()
    mesh = real_mesh.Mesh(sites=args.sites, repeat=args.repeat, slip=args.slip, say=say)
    memory = MemoryPeak(mesh)
    ok = False
    try:
        say("1. the real mesh: %s" % ", ".join(args.sites))
        mesh.up()
        memory.sample()
        say("2. the agents create the tasks; waiting for %d round(s) of pmtu results" % args.rounds)
        arrived = wait_rounds(mesh, args.rounds, args.timeout, memory)
        say("3. the report and the alarms, from OpenSearch (%s)" % mesh.archive_url)
        reported = report(mesh, args.out)
        say("4. ground-truth self-check")
        runs = by_pair(mesh.records("pmtu"))
        results = []
        for number in range(1, args.rounds + 1):
            results += check_round(mesh, runs, number)
        for check in results:
            if not check.ok:
                say("   MISMATCH %s: %s" % (check.what, check.detail))
        good = sum(1 for c in results if c.ok)
        say("   ground truth check: %d/%d checks exact over %d directed pairs x 2 families x "
            "%d round(s)" % (good, len(results), len(real_mesh.pairs(args.sites)), args.rounds))
        bad = non_starters(mesh)
        for line in bad:
            say("   NOT RUN " + line)
        say("   runs Non-Starter or Missed: %d" % len(bad))
        ok = arrived and reported and good == len(results) and not bad
    except KeyboardInterrupt as exc:
        say("\ndemo-mesh: interrupted (%s), removing the mesh" % (exc or "Ctrl-C"))
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        say("demo-mesh: %s" % exc)
    finally:
        memory.sample()
        mesh.down()
        say("   mesh removed (namespaces, node processes, PostgreSQL clusters, OpenSearch)")
        say("   peak memory of the mesh: %.0f MiB; wall time %.0f s" % (
            memory.peak / 2.0 ** 20, time.monotonic() - started))
    say("demo-mesh: %s" % ("every check passed" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
