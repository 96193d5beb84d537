"""The arithmetic of bench-schedule: each task's slot from the plugins' own methods, and the
seconds a host gives per day in full meshes, with the rotation of psconfig/rotate_template.py.

Slots: every task of a template is expanded for one pair as the pSConfig agent would, and
the real executables answer as the pScheduler server asks them: the test's `enumerate`
(scheduling class), its `participants` (how many hosts hold the slot) and the tool's
`duration` (the slot). pScheduler reserves that slot on every participant for every run;
`exclusive` slots exclude every other exclusive and normal run, `normal` ones exclude
exclusive runs, `background` ones exclude nothing.

A full mesh of N hosts has N(N-1) ordered pairs per task; a host takes part in 2(N-1) of
them when the test has two participants (lead and dest), N-1 when only the lead runs.

The busiest day: a task repeating daily or faster spreads evenly. A task repeating less
often does not: the pSConfig agent creates all its tasks in one pass and renews each with
`start` = the old task's `until` (psconfig task_manager.py), pScheduler repeats from that
start (task.sql task_next_run) and slips a run only within its one-day schedule horizon
(schedule.sql), so all of a host's runs of a weekly task fall on one day: that day carries
the week's runs. A rotating task (psconfig/rotate_template.py) is counted from the
generator's own rounds: the most runs any host has on any day.
"""

import importlib.util
import json
import math
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DAY = 86400.0


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


rotation = _load(os.path.join(ROOT, "psconfig", "rotate_template.py"), "rotate_template")


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


def seconds(text):
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


class Task(object):
    """One task of a template as pScheduler will hold it."""

    def __init__(self, name, kind, klass, participants, slot, repeat, rotation_days, both):
        self.name, self.kind, self.klass = name, kind, klass
        self.participants, self.slot, self.repeat = participants, slot, repeat
        self.rotation_days = rotation_days  # None: every pair every `repeat`
        self.both = both                    # one run measures both directions


def tasks_of(template):
    """[Task] of the template: enabled tasks, and the rotating ones (disabled in a base)."""
    rotating = {}
    if any("rotation" in (t.get("_meta") or {}) for t in template["tasks"].values()):
        rotating = rotation.rotating_tasks(template)
    rows = []
    pair = ("ps-a.example.org", "ps-b.example.org")
    for name, task in sorted(template["tasks"].items()):
        if task.get("disabled") and name not in rotating:
            continue
        test = template["tests"][task["test"]]
        kind = test["type"]
        spec = dict(_expand(test["spec"], pair), schema=1)
        tool = (task.get("tools") or ["jumbocheck"])[0]
        klass = _method("test", kind, "enumerate", None)["scheduling-class"]
        participants = len(_method("test", kind, "participants", spec)["participants"])
        slot = seconds(_method("tool", tool, "duration", {"type": kind, "spec": spec})["duration"])
        repeat = seconds(template["schedules"][task["schedule"]]["repeat"])
        rows.append(Task(name, kind, klass, participants, slot, repeat, rotating.get(name),
                         spec.get("direction") == "both"))
    return rows


def names(hosts):
    return ["h%04d" % i for i in range(hosts)]


def rotation_runs(hosts, days):
    """(busiest host-day's runs, mean runs per host-day, directed pairs covered in `days`)
    from the generator's own day lists."""
    busiest, covered = 0, set()
    for day in range(days):
        count = {}
        for lead, dest in rotation.day_pairs(names(hosts), day, days):
            count[lead] = count.get(lead, 0) + 1
            count[dest] = count.get(dest, 0) + 1
            covered.add((lead, dest))
        busiest = max([busiest] + list(count.values()))
    return busiest, (hosts - 1) / float(days), covered


def host_day(rows, hosts):
    """{class: (mean seconds per host per day, busiest day's seconds)}, full mesh."""
    totals = {"exclusive": [0.0, 0.0], "normal": [0.0, 0.0], "background": [0.0, 0.0]}
    for task in rows:
        key = task.klass if task.klass in totals else "background"
        if task.rotation_days:
            busiest, mean, _ = rotation_runs(hosts, task.rotation_days)
            totals[key][0] += mean * task.slot
            totals[key][1] += busiest * task.slot
            continue
        per_repeat = (hosts - 1) * min(task.participants, 2)
        totals[key][0] += per_repeat * DAY / task.repeat * task.slot
        totals[key][1] += per_repeat * max(1.0, DAY / task.repeat) * task.slot
    return {k: tuple(v) for k, v in totals.items()}


def gain_every(rows, hosts):
    """Days between two measurements of every directed pair's gain (None: some never)."""
    worst = 0.0
    found = False
    for task in rows:
        if task.kind != "jumbo-throughput":
            continue
        found = True
        if task.rotation_days:
            _, _, covered = rotation_runs(hosts, task.rotation_days)
            directed = len(covered) * (2 if task.both else 1)
            if directed < hosts * (hosts - 1):
                return None
            worst = max(worst, float(task.rotation_days))
        else:
            worst = max(worst, task.repeat / DAY)
    return worst if found else None


def days_for_share(rows, hosts, share):
    """Fewest rotation days keeping the busiest host-day within `share` % (None: none do)."""
    fixed = sum(host_day([t for t in rows if not t.rotation_days], hosts)[k][1]
                for k in ("exclusive", "normal"))
    rotating = [t for t in rows if t.rotation_days and t.klass in ("exclusive", "normal")]
    if not rotating:
        return None
    for days in range(1, rotation.MAX_DAYS + 1):
        rounds = hosts - 1 if hosts % 2 == 0 else hosts    # odd: one host rests a round
        held = fixed + sum(math.ceil(rounds / float(days)) * t.slot for t in rotating)
        if 100.0 * held / DAY <= share:
            return days
    return None
