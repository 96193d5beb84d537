#!/usr/bin/env python3
"""Today's pSConfig template of a large mesh whose exclusive task rotates over the days.

    psconfig/rotate_template.py BASE.json [--date YYYY-MM-DD] [-o OUT.json]

Why a generated template: pSConfig 5 has no rotation, and a static template cannot spread
a weekly task over the week. The pSConfig pScheduler agent creates every task of a pass at
once and renews it with `start` = the old task's `until` (psconfig
client/pscheduler/task_manager.py), and pScheduler repeats from that first start
(database/task.sql task_next_run) and slips a run at most within its one-day schedule
horizon (database/schedule.sql): every weekly run a host leads falls on the same day.
So the coordinator publishes a new template each day (cron, just after 00:00 UTC) where the
rotating task covers only that day's pairs; agents read it as their remote.

BASE is a template whose rotating task is `disabled` (so that a BASE read by mistake
creates nothing) and carries `"_meta": {"rotation": {"days": D}}` over a mesh group. Its
unordered pairs are dealt into rounds in which every host meets at most one other (the circle
method: N-1 rounds for N hosts, N even; one host rests per round when N is odd), and round
r runs on day r mod D (days since 1970-01-01 UTC, mod D). The task's spec should measure
both directions (`direction: both`), so one run per unordered pair measures both directed
pairs. Each day a host is in at most ceil(R/D) runs, R the number of rounds (N-1 for N
even, N for N odd), and every pair is measured once every D days.

The day's pairs become one `disjoint` group per lead (a-addresses: the lead, b-addresses:
its partners that day, unidirectional) and one task per group, named TASK.LEAD; every other
task (pmtu hourly) is left as it is, so the agents keep those tasks from day to day.
"""

import argparse
import copy
import datetime
import json
import os
import sys

EPOCH = datetime.date(1970, 1, 1)
MAX_DAYS = 28


class RotationError(ValueError):
    pass


def round_robin(names):
    """Rounds of (lead, dest) pairs: every unordered pair of `names` in exactly one round,
    every name in at most one pair per round (circle method). Leads alternate."""
    players = list(names) + ([None] if len(names) % 2 else [])
    n = len(players)
    rounds = []
    for r in range(n - 1):
        pairs = []
        for i in range(n // 2):
            a, b = players[i], players[n - 1 - i]
            if a is not None and b is not None:
                pairs.append((a, b) if (r + i) % 2 == 0 else (b, a))
        rounds.append(pairs)
        players = [players[0], players[-1]] + players[1:-1]
    return rounds


def day_pairs(names, day, days):
    """The (lead, dest) pairs of day `day` (0 .. days-1)."""
    return [pair for r, pairs in enumerate(round_robin(names)) if r % days == day
            for pair in pairs]


def day_of(date, days):
    return (date - EPOCH).days % days


def _sections(template):
    for key in ("addresses", "groups", "tasks"):
        if not isinstance(template.get(key), dict):
            raise RotationError("section %r must be an object" % key)
    for key, one in (("addresses", "address"), ("groups", "group"), ("tasks", "task")):
        for name, value in template[key].items():
            if not isinstance(value, dict) or not isinstance(value.get("_meta", {}), dict):
                raise RotationError("%s %r must be an object (its _meta too)" % (one, name))


def rotating_tasks(template):
    """{task name: days} of the tasks that rotate; RotationError when one is malformed."""
    _sections(template)
    found = {}
    for name, task in template["tasks"].items():
        rotation = task.get("_meta", {}).get("rotation")
        if rotation is None:
            continue
        days = rotation.get("days") if isinstance(rotation, dict) else None
        if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_DAYS:
            raise RotationError("task %r: _meta.rotation.days must be an integer 1..%d, not %r"
                                % (name, MAX_DAYS, days))
        if task.get("disabled") is not True:
            raise RotationError("task %r: a rotating task must be disabled in the base "
                                "template (an agent reading the base must not run it on "
                                "every pair)" % name)
        group = template["groups"].get(task.get("group"))
        if not isinstance(group, dict) or group.get("type") != "mesh":
            raise RotationError("task %r: a rotating task needs a mesh group" % name)
        found[name] = days
    if not found:
        raise RotationError("no task carries _meta.rotation: nothing to rotate")
    return found


def mesh_names(template, group):
    addresses = template["addresses"]
    names = []
    for sel in group.get("addresses") or []:
        if not isinstance(sel, dict) or "name" not in sel or sel.get("disabled"):
            raise RotationError("rotation takes named, enabled addresses only, not %s"
                                % json.dumps(sel))
        if sel["name"] not in addresses:
            raise RotationError("address %r is not defined in addresses" % sel["name"])
        if not addresses[sel["name"]].get("disabled"):
            names.append(sel["name"])
    if len(set(names)) != len(names):
        raise RotationError("an address is listed twice in the rotating group")
    return names


def rotate(template, date):
    """The template for `date` (a datetime.date): a new dict, `template` is left as it is."""
    out = copy.deepcopy(template)
    groups = out.setdefault("groups", {})
    for name, days in sorted(rotating_tasks(template).items()):
        task = out["tasks"].pop(name)
        day = day_of(date, days)
        leads = {}
        for lead, dest in day_pairs(mesh_names(template, groups[task["group"]]), day, days):
            leads.setdefault(lead, []).append(dest)
        for lead, dests in leads.items():
            key = "%s.%s" % (name, lead)
            if key in groups or key in out["tasks"]:
                raise RotationError("name %r is already taken" % key)
            groups[key] = {"type": "disjoint", "unidirectional": True,
                           "a-addresses": [{"name": lead}],
                           "b-addresses": [{"name": d} for d in dests]}
            day_task = copy.deepcopy(task)
            day_task.pop("disabled")
            day_task["group"] = key
            day_task["_meta"] = dict(day_task["_meta"], **{
                "rotation-of": name, "rotation-day": "%d of %d" % (day, days)})
            out["tasks"][key] = day_task
    out["_meta"] = dict(out.get("_meta") or {}, **{"rotation-date": date.isoformat()})
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base")
    parser.add_argument("--date", help="UTC date YYYY-MM-DD (default: today, UTC)")
    parser.add_argument("-o", "--output", help="write here (default: stdout)")
    args = parser.parse_args(argv)
    try:
        date = (datetime.datetime.strptime(args.date, "%Y-%m-%d").date() if args.date
                else datetime.datetime.utcnow().date())
    except ValueError:
        sys.stderr.write("rotate_template: --date must be YYYY-MM-DD, not %r\n" % args.date)
        return 2
    try:
        with open(args.base) as handle:
            template = json.load(handle)
        if not isinstance(template, dict):
            raise RotationError("the template must be a JSON object")
        text = json.dumps(rotate(template, date), indent=2, sort_keys=False) + "\n"
    except (OSError, ValueError) as err:
        sys.stderr.write("rotate_template: %s: %s\n" % (args.base, err))
        return 1
    if args.output:
        # Written aside and renamed: an agent fetching the published file mid-write must
        # read yesterday's template or today's, never half of one.
        partial = args.output + ".partial"
        with open(partial, "w") as handle:
            handle.write(text)
        os.replace(partial, args.output)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
