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
import json
import os
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _path in (os.path.join(ROOT, "python-jumbo"), ROOT):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from demo import checks  # noqa: E402 - after the path set-up above
from demo import mesh as demo_mesh  # noqa: E402
from jumbo.core.units import duration_seconds  # noqa: E402
from lab import real_mesh, runner_log, steady  # noqa: E402

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


def check_pairs(mesh):
    """Every archived jumbo-throughput run against the truth of its directed pair (IPv4: the
    template's task), and at least one run of each pair."""
    results = []
    runs = by_pair(mesh.records("jumbo-throughput"))
    for source, dest in real_mesh.pairs(mesh.sites):
        found = runs.get((source, dest, 4), [])
        if not found:
            results.append(checks.Check("jumbo-throughput IPv4 %s -> %s" % (source, dest), False,
                                        "no run archived"))
        for rec in found:
            results += checks.pair_measurement(mesh.topology, source, dest, rec)
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


def run_alarms(mesh, state):
    """One jumbo-alarms pass over the mesh's OpenSearch with the state file `state`: (exit
    status, [events]); an output line that is not an event is printed and fails the pass."""
    argv = [os.path.join(VENV_BIN, "jumbo-alarms"), "--store", mesh.archive_url, "--state", state]
    done = mesh.net.run(real_mesh.ARCHIVE, argv, check=False, timeout=300)
    say("   $ jumbo-alarms --store %s --state %s" % (mesh.archive_url, state))
    events = []
    for line in done.stdout.splitlines():
        say("     " + line)
        try:
            event = json.loads(line)
            events.append((event["event"], event["source"]))
        except (ValueError, KeyError, TypeError):
            return 1, events
    for line in done.stderr.rstrip().splitlines():
        say("     " + line)
    return done.returncode, events


def expected_alarms(topo, sites):
    """{(hop router, "ipv4"|"ipv6"): set of (source, dest) sites}: the events jumbo-alarms
    must raise on the lab, from its ground truth. The lab's paths never change, so no path
    regresses and no share drops; what remains is one "MTU black hole shared by multiple
    sites" per hop and family whose black holes two or more paths of two or more sites see
    (report/alarms.py _hop_events' rule)."""
    by_hop = {}
    for source, dest in real_mesh.pairs(sites):
        for version in FAMILIES:
            truth = topo.truth(source, dest, version)
            if truth["pmtud"] == "blackhole" and truth["blackhole-ip"]:
                hop = demo_mesh.node_of(topo, truth["blackhole-ip"])
                by_hop.setdefault((hop, "ipv%d" % version), set()).add((source, dest))
    return dict((key, pairs) for key, pairs in by_hop.items()
                if len(pairs) >= 2 and len(set(s for p in pairs for s in p)) >= 2)


def alarm_checks(mesh, events):
    """The first pass's events against expected_alarms: every expected hop event once, with
    its paths, and no other event."""
    wanted = expected_alarms(mesh.topology, mesh.sites)
    # The archived runs name their hosts as the template does (ps-<site>.lhcone.example, what
    # the agents put in the tasks); an address is accepted too.
    host_site = dict((mesh.topology.address(s, v), s) for s in mesh.sites for v in FAMILIES)
    host_site.update((real_mesh.TEMPLATE_NAMES[s], s) for s in mesh.sites)
    results = []
    seen = {}
    for name, source in events:
        hop = demo_mesh.node_of(mesh.topology, source.get("hop_ip")) \
            if name == "MTU black hole shared by multiple sites" else None
        key = (hop, source.get("ipv"))
        if hop is None or key not in wanted:
            results.append(checks.Check("alarm %s (%s)" % (name, key[1]), False,
                                        "not expected from the ground truth: %s" % source))
            continue
        pairs = set(tuple(host_site.get(h.strip()) for h in text.split("->"))
                    for text in source.get("pairs", []))
        seen[key] = seen.get(key, 0) + 1
        results.append(checks.Check("alarm black hole at %s %s" % key, pairs == wanted[key],
                                    "paths %s, expected %s" % (sorted(pairs),
                                                               sorted(wanted[key]))))
    for key in sorted(wanted):
        results.append(checks.Check("alarm black hole at %s %s raised once" % key,
                                    seen.get(key) == 1, "raised %d times" % seen.get(key, 0)))
    return results


def report(mesh, out):
    """jumbo-report and jumbo-alarms, read from the mesh's OpenSearch (inside the lab); the
    alarms twice with one state file, as a cron job runs them: the second pass raises nothing
    (an alarm is raised once while its condition holds). (ok, [alarm checks])."""
    argv = [os.path.join(VENV_BIN, "jumbo-report"), "--store", mesh.archive_url]
    done = mesh.net.run(real_mesh.ARCHIVE, argv, check=False, timeout=300)
    say("   $ jumbo-report --store %s" % mesh.archive_url)
    for line in (done.stdout + done.stderr).rstrip().splitlines():
        say("     " + line)
    # This archive is new: so is the state (a previous mesh's would hold its events back).
    state = os.path.join(out, "alarms-state.json")
    if os.path.exists(state):
        os.remove(state)
    first, events = run_alarms(mesh, state)
    again, repeated = run_alarms(mesh, state)
    results = alarm_checks(mesh, events)
    results.append(checks.Check("alarms: a second pass raises nothing again", not repeated,
                                "%d events raised again" % len(repeated)))
    return done.returncode == 0 and first == 0 and again == 0, results


def schedule_check(mesh, args, since):
    """Every agent-created run in each node's schedule since the agents started, counted by
    test and state (lab/steady.py), printed; [problem text], empty when every run finished,
    none was Missed, Non-Starter, Failed or Preempted, and no task went without a run for
    longer than its schedule allows (a run pushed out is never in the schedule at all)."""
    now = time.time()
    runs = []
    for site in mesh.sites:
        runs += mesh.schedule(site, since - 60, now + 3600)
    per_node, per_test = steady.counts(runs, now)
    logs = dict((site, runner_log.daemon_log(mesh.rps, site)) for site in mesh.sites)
    for line in steady.table(per_node, per_test) + steady.lost_runs(runs, now, logs):
        say(line)
    n = len(real_mesh.pairs(mesh.sites))
    bounds = {"pmtu": duration_seconds(args.repeat) + duration_seconds(args.slip)}
    expected = {"pmtu": 2 * n}
    if args.with_throughput:
        leg = duration_seconds(args.throughput_repeat) + duration_seconds(args.throughput_slip)
        bounds.update({"throughput": leg, "jumbo-throughput": leg})
        expected.update({"throughput": n, "jumbo-throughput": n})
    # The first run of a task may come a whole repeat + slip after the agent made it.
    found = steady.gaps(runs, bounds, since, now)
    excused = steady.never_taken(runs, now, logs)
    for test, n in sorted(excused.items()):
        allowed = steady.upstream_share(per_test[test], n)
        say("   %s: %d Missed run(s) pScheduler's runner never took (upstream's pickup window, "
            "docs/operator.md); %d excused" % (test, n, allowed))
    return steady.verdict(per_test, found, expected, steady.task_counts(runs), excused)


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="make demo-mesh (or python -m demo.mesh_real)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds of pmtu results to wait for and check, back to back "
                        "(default %(default)s, the issue's 'three runs')")
    parser.add_argument("--repeat", default="PT5M",
                        help="the template's hourly schedule in the lab: repeat (default "
                        "%(default)s: a lab cannot wait an hour per round)")
    parser.add_argument("--slip", default="PT4M",
                        help="... and slip (default %(default)s: production spreads its hourly "
                        "runs over 50 of 60 minutes; a 2-minute slip crammed a round's 40 runs "
                        "into 40%% of the lab's 5 and their merges ran out of pScheduler's 5 s)")
    parser.add_argument("--sites", default=",".join(real_mesh.DEMO_SITES),
                        help="lab sites (default %(default)s)")
    parser.add_argument("--timeout", type=int, default=1800,
                        help="seconds to wait for the rounds (default %(default)s)")
    parser.add_argument("--with-throughput", action="store_true",
                        help="add WLCG's own throughput mesh (upstream iperf3 `throughput`, "
                        "20 s, every ordered pair) to the lab's template and put the daily "
                        "jumbo-throughput on the same schedule: both exclusive tests compete")
    parser.add_argument("--throughput-repeat", default="PT30M",
                        help="... their repeat in the lab (default %(default)s; 6 h and 1 day "
                        "in production)")
    parser.add_argument("--throughput-slip", default="PT25M",
                        help="... and slip (default %(default)s)")
    parser.add_argument("--steady", default=None, metavar="DURATION",
                        help="steady state: keep the mesh running this long (e.g. PT1H) after "
                        "the agents start, then check every complete round and each node's "
                        "schedule")
    parser.add_argument("--upstream-fixes", action="store_true",
                        help="an experiment, never a demo's verdict on the suite: start the "
                        "nodes with three one-line changes to upstream's scheduling "
                        "(lab/real_pscheduler/nodes.sh, RPS_UPSTREAM_FIXES) to measure what "
                        "its conflict drop costs the mesh")
    parser.add_argument("--out", default=os.path.join(ROOT, "var", "demo-mesh"))
    args = parser.parse_args(argv)
    args.sites = tuple(s for s in args.sites.split(",") if s)
    if args.rounds < 1 or len(args.sites) < 2:
        parser.error("--rounds must be >= 1 and --sites name at least two sites")
    for name in ("repeat", "slip", "throughput_repeat", "throughput_slip", "steady"):
        if getattr(args, name) is None:
            continue
        try:
            seconds = duration_seconds(getattr(args, name))
        except ValueError as err:
            parser.error("--%s: %s" % (name.replace("_", "-"), err))
        if not 0 < seconds <= 86400:
            parser.error("--%s must be more than 0 and at most a day" % name.replace("_", "-"))
    if args.steady is not None:
        # The rounds the steady time holds are all checked; the wait allows for the set-up.
        rounds = int(duration_seconds(args.steady) // duration_seconds(args.repeat))
        args.rounds = max(args.rounds, rounds)
        args.timeout = max(args.timeout, int(duration_seconds(args.steady)) + 900)
    return args


def keep_logs(mesh, out):
    """Each node's daemon logs (scheduler, runner, archiver, API, PostgreSQL) copied to
    OUT/node-logs/SITE before the mesh is removed, for a demo that failed: a lost run's
    reason is often only there (pScheduler gives a Missed run no `errors`)."""
    kept = os.path.join(out, "node-logs")
    for site in mesh.sites:
        source = runner_log.node_log_dir(mesh.rps, site)
        if not os.path.isdir(source):
            continue
        target = os.path.join(kept, site)
        try:
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(source, target)
        except OSError as exc:
            say("   node logs of %s not kept: %s" % (site, exc))
    if os.path.isdir(kept):
        say("   the nodes' logs are kept in %s" % kept)


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
    if args.upstream_fixes:
        # Read by nodes.sh through the mesh's environment (lab.real_mesh.Mesh.env).
        os.environ["RPS_UPSTREAM_FIXES"] = "1"
        say("demo-mesh: EXPERIMENT: upstream pScheduler's scheduling changed on every node "
            "(--upstream-fixes)")
    started = time.monotonic()
    throughput = (args.throughput_repeat, args.throughput_slip) if args.with_throughput else None
    mesh = real_mesh.Mesh(sites=args.sites, repeat=args.repeat, slip=args.slip, say=say,
                          throughput=throughput)
    memory = MemoryPeak(mesh)
    ok = False
    try:
        say("1. the real mesh: %s%s" % (", ".join(args.sites), "; with WLCG's throughput mesh "
                                        "(every %s, slip %s)" % throughput if throughput else ""))
        mesh.up()
        agents_started = time.time()
        memory.sample()
        say("2. the agents create the tasks; waiting for %d round(s) of pmtu results" % args.rounds)
        arrived = wait_rounds(mesh, args.rounds, args.timeout, memory)
        say("   agents running for %.0f s" % (time.time() - agents_started))
        say("3. the report and the alarms, from OpenSearch (%s)" % mesh.archive_url)
        reported, results = report(mesh, args.out)
        say("4. ground-truth self-check")
        runs = by_pair(mesh.records("pmtu"))
        for number in range(1, args.rounds + 1):
            results += check_round(mesh, runs, number)
        if args.with_throughput:
            results += check_pairs(mesh)
        for check in results:
            if not check.ok:
                say("   MISMATCH %s: %s" % (check.what, check.detail))
        good = sum(1 for c in results if c.ok)
        say("   ground truth check: %d/%d checks exact over %d directed pairs x 2 families x "
            "%d round(s), and the alarms" % (good, len(results), len(real_mesh.pairs(args.sites)),
                                            args.rounds))
        say("5. every run of the agents' tasks, by state, from each node's schedule")
        try:
            bad = schedule_check(mesh, args, agents_started)
        except ValueError as exc:
            bad = [str(exc)]
        for line in bad:
            say("   NOT RUN " + line)
        say("   runs lost (Missed, Non-Starter, Failed, Preempted, never scheduled): %s"
            % ("none" if not bad else "%d problem(s)" % len(bad)))
        ok = arrived and reported and good == len(results) and not bad
    except KeyboardInterrupt as exc:
        say("\ndemo-mesh: interrupted (%s), removing the mesh" % (exc or "Ctrl-C"))
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        say("demo-mesh: %s" % exc)
    finally:
        memory.sample()
        if not ok:
            keep_logs(mesh, args.out)
        mesh.down()
        say("   mesh removed (namespaces, node processes, PostgreSQL clusters, OpenSearch)")
        say("   peak memory of the mesh: %.0f MiB; wall time %.0f s" % (
            memory.peak / 2.0 ** 20, time.monotonic() - started))
    say("demo-mesh: %s%s" % ("every check passed" if ok else "FAILED",
                             " (EXPERIMENT: upstream's scheduling changed)" if args.upstream_fixes
                             else ""))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
