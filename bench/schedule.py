"""Schedule budget: the seconds each host must give per day to this suite's exclusive and
normal slots, for the shipped pSConfig template expanded to full meshes, beside the standard
WLCG throughput mesh.

`python -m bench schedule [--template FILE] [--hosts 12,100,300]` (make bench-schedule).

Nothing here is assumed about the plugins: every task of the template is expanded for one
pair as the pSConfig agent would, and the real executables answer, as the pScheduler server
asks them: the test's `enumerate` (its scheduling class), its `participants` (how many hosts
hold the slot) and the tool's `duration` (the slot). pScheduler reserves that slot on every
participant for every run; `exclusive` slots exclude every other exclusive and normal run,
`normal` ones exclude exclusive runs, `background` ones exclude nothing (not counted).

A full mesh of N hosts has N(N-1) ordered pairs per task; a host takes part in 2(N-1) of them
when the test has two participants (lead and dest), N-1 when only the lead runs.

The WLCG comparison: one upstream `throughput` test (iperf3, 20 s) per ordered pair every 6 h,
exclusive on both hosts. Its slot is what upstream's iperf3 tool asks for (read in
pscheduler-tool-iperf3 5.2.5): set-up time of 1 s per 50 ms of link RTT (default RTT 200 ms:
4 s) + omit (none) + duration + 3 s wait + 2 s server shutdown = 29 s.
"""

import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEMPLATE = os.path.join(ROOT, "psconfig", "lhcone-jumbo-mesh.json")
DAY = 86400.0
HOSTS = (12, 100, 300)
# What the standard mesh's upstream iperf3 slot is made of (see the module docstring).
WLCG_REPEAT = 6 * 3600.0
WLCG_SLOT = 4 + 0 + 20 + 3 + 2
# The targets of issue 13 for this suite's share of each host's day.
TARGETS = {12: 2.0, 100: 15.0}


def _method(cls, name, method, document):
    path = os.path.join(ROOT, "pscheduler-%s-%s" % (cls, name), name, method)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "python-jumbo") + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    proc = subprocess.run([path], input="" if document is None else json.dumps(document),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, timeout=30)
    if proc.returncode != 0:
        raise RuntimeError("%s %s %s failed: %s" % (cls, name, method, proc.stderr.strip()))
    return json.loads(proc.stdout)


def _seconds(text):
    match = re.match(r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$", text)
    if not match:
        raise ValueError("unreadable duration %r" % text)
    d, h, m, s = (float(g) if g else 0.0 for g in match.groups())
    return d * 86400 + h * 3600 + m * 60 + s


def _expand(value, pair):
    """{% address[i] %} -> the pair's host names (the only variables a spec here uses)."""
    if isinstance(value, dict):
        return {k: _expand(v, pair) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, pair) for v in value]
    if isinstance(value, str):
        return re.sub(r"\{%\s*address\[(\d)\]\s*%\}", lambda m: pair[int(m.group(1))], value)
    return value


def tasks_of(template):
    """[(task, test type, class, participants, slot seconds, repeat seconds)]."""
    rows = []
    pair = ("ps-a.example.org", "ps-b.example.org")
    for name, task in sorted(template["tasks"].items()):
        if task.get("disabled"):
            continue
        test = template["tests"][task["test"]]
        kind = test["type"]
        spec = dict(_expand(test["spec"], pair), schema=1)
        tool = (task.get("tools") or ["jumbocheck"])[0]
        klass = _method("test", kind, "enumerate", None)["scheduling-class"]
        participants = len(_method("test", kind, "participants", spec)["participants"])
        slot = _seconds(_method("tool", tool, "duration", {"type": kind, "spec": spec})["duration"])
        repeat = _seconds(template["schedules"][task["schedule"]]["repeat"])
        rows.append((name, kind, klass, participants, slot, repeat))
    return rows


def per_host_day(rows, hosts):
    """{class: seconds per host per day} for a full mesh of `hosts`."""
    totals = {"exclusive": 0.0, "normal": 0.0, "background": 0.0}
    for _, _, klass, participants, slot, repeat in rows:
        runs = (hosts - 1) * min(participants, 2) * DAY / repeat
        key = klass if klass in totals else "background"
        totals[key] += runs * slot
    return totals


def wlcg_per_host_day(hosts):
    return 2 * (hosts - 1) * DAY / WLCG_REPEAT * WLCG_SLOT


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench schedule", description=__doc__.split(
        "\n\n")[0])
    parser.add_argument("--template", default=TEMPLATE)
    parser.add_argument("--hosts", default=",".join(str(h) for h in HOSTS))
    args = parser.parse_args(argv)
    with open(args.template) as handle:
        template = json.load(handle)
    rows = tasks_of(template)
    print("Tasks of %s (slots from the plugins' own enumerate/participants/duration):"
          % os.path.relpath(args.template, ROOT))
    print("  %-22s %-17s %-11s %5s %7s %9s" % ("task", "test", "class", "hosts", "slot s",
                                                 "every"))
    for name, kind, klass, participants, slot, repeat in rows:
        print("  %-22s %-17s %-11s %5d %7.0f %8.0fh" % (name, kind, klass, participants, slot,
                                                       repeat / 3600.0))
    print("  %-22s %-17s %-11s %5d %7.0f %8.0fh" % ("(WLCG standard)", "throughput",
                                                   "exclusive", 2, WLCG_SLOT,
                                                   WLCG_REPEAT / 3600.0))
    print("")
    print("Seconds of each host's day held in exclusive/normal slots, full mesh:")
    print("  %6s | %22s %8s | %22s | %9s" % ("hosts", "this suite (s, share)", "target",
                                            "WLCG throughput mesh", "together"))
    failed = False
    for hosts in [int(h) for h in args.hosts.split(",") if h.strip()]:
        suite = per_host_day(rows, hosts)
        held = suite["exclusive"] + suite["normal"]
        wlcg = wlcg_per_host_day(hosts)
        share = 100.0 * held / DAY
        target = TARGETS.get(hosts)
        verdict = "-"
        if target is not None:
            ok = share <= target
            failed = failed or not ok
            verdict = "<=%g%% %s" % (target, "ok" if ok else "MISSED")
        print("  %6d | %10.0f s %8.2f%% %8s | %10.0f s %8.1f%% | %8.1f%%" % (
            hosts, held, share, verdict, wlcg, 100.0 * wlcg / DAY,
            100.0 * (held + wlcg) / DAY))
    print("  (background slots are not counted: they never block another run)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
