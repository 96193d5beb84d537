"""The operator's wait on a real pScheduler: from typing `pscheduler task ... --dest X` to the
result on the screen, on the two-node lab of lab/real_pscheduler/nodes.sh (A -> B, path MTU
8950, black hole at hop 1), for the suite's pmtu beside upstream's own tests on the same nodes.

    python -m bench pscheduler [--runs 3] [--keep-up] [-- extra pmtu options]

The cases, run in turn (round after round, so load drifts hit them alike):
  pmtu               `task pmtu --dest B` (single-ended)
  pmtu --reflector   the template's mode (B's reflector answers)
  mtu/fwmtu          upstream's `mtu` with `fwmtu`: pScheduler's floor (that tool only reads
                     the interface MTU; it probes nothing, so it is wrong on this path)
  mtu/tracemtu       upstream's `mtu` with `tracemtu` (a prober: it fails on a black hole)
  rtt                upstream's `rtt` (ping), the everyday test
Each case's median wait, and the ratio of pmtu's and the reflector's median to fwmtu's: the
scheduling overhead the suite adds over the floor. The load is printed before and after.

Brings the lab up (unless it is already up: RPS's node-a answers) and takes it down again
(unless --keep-up or it was already up). Needs root and the upstream source (PSCHEDULER_SRC,
as the integration tests).
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NODES = os.path.join(ROOT, "lab", "real_pscheduler", "nodes.sh")
DEST = "198.18.201.2"
TARGET = 25.0


def _cli(env, args, timeout=600):
    return subprocess.run(["bash", NODES, "cli", "a"] + args, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=timeout)


def _lab_is_up(env):
    try:
        return _cli(env, ["ping", DEST], timeout=30).returncode == 0
    except (subprocess.SubprocessError, OSError):
        return False


CASES = [  # (name, CLI after `pscheduler`)
    ("pmtu", ["task", "pmtu", "--dest", DEST]),
    ("pmtu --reflector", ["task", "pmtu", "--dest", DEST, "--reflector"]),
    ("mtu/fwmtu", ["task", "--tool", "fwmtu", "mtu", "--dest", DEST]),
    ("mtu/tracemtu", ["task", "--tool", "tracemtu", "mtu", "--dest", DEST]),
    ("rtt", ["task", "rtt", "--dest", DEST]),
]


def _one(env, argv):
    """(wait s, scheduled slot s or None, succeeded, the result's first line)."""
    t0 = time.monotonic()
    done = _cli(env, argv)
    wait = time.monotonic() - t0
    out = done.stdout
    slot = re.search(r"Ends .*\(~(\d+) seconds\)", out)
    # the verdict: the first line of the result, after the CLI's own progress lines
    shown = out.split("Waiting for result...", 1)[-1].strip()
    first = shown.splitlines()[0] if shown else "(no output)"
    failed = done.returncode != 0 or "Run did not complete" in out or first.startswith(
        ("Run failed", "Error", "Failed"))
    # The CLI prints why a run failed after "Error from <host>:" (upstream's tracemtu on the
    # lab's black hole: "Destination ... not reached; last hop was #1 ...").
    why = re.search(r"Error from [^\n]*:\n\s*([^\n]+)", out)
    if failed and why:
        first = why.group(1).strip()
    return wait, int(slot.group(1)) if slot else None, not failed, first


def _median(values):
    done = [v for v in values if v is not None]
    return statistics.median(done) if done else None


# The cases a ratio is made of: without a result from each, the bench decides nothing.
DECIDING = ("pmtu", "pmtu --reflector", "mtu/fwmtu")


def _summary(waits, why):
    """The medians of the runs that gave a result, and the ratios to the floor; exit status 1
    when a case a ratio is made of never gave one (the ratio could not be decided). Another
    case without a result (upstream's tracemtu fails on the lab's black hole, which is the
    point of the suite) is shown with its reason."""
    print("%-17s %9s %7s %7s %9s" % ("case", "median s", "min", "max", "results"))
    for name, _ in CASES:
        done = [v for v in waits[name] if v is not None]
        print("%-17s %9s %7s %7s %6d/%d" % (
            name, "%.1f" % _median(done) if done else "-", "%.1f" % min(done) if done else "-",
            "%.1f" % max(done) if done else "-", len(done), len(waits[name])))
        if not done and why.get(name):
            print("  %s gave no result: %s" % (name, why[name]))
    floor = _median(waits["mtu/fwmtu"])
    for name in ("pmtu", "pmtu --reflector"):
        mine = _median(waits[name])
        print("ratio %s / mtu-fwmtu (the floor): %s" % (
            name, "%.2f" % (mine / floor) if mine and floor else
            "undecided (a case gave no result)"))
    median = _median(waits["pmtu"])
    print("operator's wait for pmtu: median %s - target <= %.0f s: %s" % (
        "%.1f s" % median if median else "-", TARGET,
        "met" if median and median <= TARGET else "NOT met"))
    return 0 if all(_median(waits[name]) for name in DECIDING) else 1


def _load():
    return "load average %.2f %.2f %.2f on %d CPUs" % (os.getloadavg() + (os.cpu_count() or 0,))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench pscheduler",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="rounds (each case once per round)")
    parser.add_argument("--keep-up", action="store_true", help="leave the lab running")
    parser.add_argument("extra", nargs="*", help="more `task pmtu` options (after --)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    env = dict(os.environ, RPS=os.environ.get("RPS", "/srv/jumbo-rps"))
    started_here = False
    if not _lab_is_up(env):
        t0 = time.monotonic()
        up = subprocess.run(["bash", NODES, "up"], env=env)
        if up.returncode != 0:
            subprocess.run(["bash", NODES, "down"], env=env)
            return 1
        started_here = True
        print("lab up in %.1f s (build and start of two nodes)" % (time.monotonic() - t0))
    waits = dict((name, []) for name, _ in CASES)
    why = {}
    try:
        print("before: " + _load())
        print("%-17s %4s  %8s  %6s  %s" % ("case", "run", "wait s", "slot s", "first line"))
        for index in range(args.runs):
            for name, argv in CASES:
                argv = argv + args.extra if name.startswith("pmtu") else argv
                wait, slot, ok, first = _one(env, argv)
                print("%-17s %4d  %8.1f  %6s  %s%s" % (name, index + 1, wait, slot or "?",
                                                      "" if ok else "FAILED: ", first[:60]))
                # A failed run's wait is no wait for a result: counted apart, never in a median.
                waits[name].append(wait if ok else None)
                if not ok:
                    why[name] = first
        print("after:  " + _load())
        return _summary(waits, why)
    finally:
        if started_here and not args.keep_up:
            subprocess.run(["bash", NODES, "down"], env=env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
