"""The operator's wait on a real pScheduler: from typing `pscheduler task pmtu --dest X` to the
result on the screen, on the two-node lab of lab/real_pscheduler/nodes.sh (A -> B, path MTU
8950, black hole at hop 1).

    python -m bench pscheduler [--runs 3] [--keep-up] [-- extra pmtu options]

Brings the lab up (unless it is already up: RPS's node-a answers), runs the task N times one
after the other, prints each wait beside the slot pScheduler scheduled for it (start and end as
the CLI announces them) and the tool's own elapsed time, then the median against the target,
and takes the lab down again (unless --keep-up or it was already up). Needs root and the
upstream source (PSCHEDULER_SRC, as the integration tests).
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


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench pscheduler",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep-up", action="store_true", help="leave the lab running")
    parser.add_argument("extra", nargs="*", help="more `task pmtu` options (after --)")
    args = parser.parse_args(argv)
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
    waits = []
    try:
        task = ["task", "pmtu", "--dest", DEST] + args.extra
        print("command: pscheduler %s   (on node a, %d runs, one after the other)"
              % (" ".join(task), args.runs))
        print("%4s  %8s  %8s  %10s  %s" % ("run", "wait s", "slot s", "tool s", "first line"))
        for index in range(args.runs):
            t0 = time.monotonic()
            done = _cli(env, task)
            wait = time.monotonic() - t0
            out = done.stdout
            slot = re.search(r"Ends .*\(~(\d+) seconds\)", out)
            elapsed = re.search(r"^Elapsed:\s+([\d.]+) (m?s)", out, re.M)
            tool = None
            if elapsed:
                tool = float(elapsed.group(1)) / (1000.0 if elapsed.group(2) == "ms" else 1.0)
            # the verdict: the first line of the result, after the CLI's own progress lines
            shown = out.split("Waiting for result...", 1)[-1].strip()
            first = shown.splitlines()[0] if shown else "(no output)"
            print("%4d  %8.1f  %8s  %10s  %s" % (index + 1, wait, slot.group(1) if slot else "?",
                                                 "%.3f" % tool if tool is not None else "?",
                                                 first[:70]))
            if done.returncode != 0:
                print(out)
                return 1
            waits.append(wait)
        median = statistics.median(waits)
        print("operator's wait, submit to result: median %.1f s (min %.1f, max %.1f) "
              "- target <= %.0f s: %s" % (median, min(waits), max(waits), TARGET,
                                         "met" if median <= TARGET else "NOT met"))
        load = os.getloadavg()
        print("machine: %d CPUs, load average %.2f %.2f %.2f" % ((os.cpu_count() or 0,) + load))
    finally:
        if started_here and not args.keep_up:
            subprocess.run(["bash", NODES, "down"], env=env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
