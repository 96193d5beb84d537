#!/usr/bin/env python3
"""Check a pSConfig template that schedules the `pmtu` (and `jumbo-throughput`) tests before
publishing it to a mesh.

    psconfig/validate_template.py TEMPLATE.json [--deep] [--plugins CLASSES_DIR] [--quiet]

What is checked:
  1. structure: the sections pSConfig requires (addresses, groups, tests, tasks), the keys each
     object may have, and that every name a task, group, host or subtask refers to exists;
     archive specs: `runs` needs archive `schema` >= 2, `label` needs 3;
  2. template variables: `{% address[i] %}` within the group's dimensions, `{% jq ... %}` over
     the addresses' and hosts' `_meta` giving a string (pSConfig drops the task otherwise), and
     the task `reference` keys `source-site` / `dest-site` filled for every pair, which is how
     site names reach each archived result (pSConfig strips `_meta` before pScheduler sees it);
  3. the real plugins: every test spec (pmtu, jumbo-throughput, ...), expanded for the
     group's pairs as the pSConfig agent would (with `schema: 1` added), goes through its
     test's `spec-is-valid`, and
     every archive's `data` through its archiver's `data-is-valid` (the `jumbo` archiver, or any
     other archiver installed here), the same calls pScheduler makes when the agent posts a task.
     By default one pair per task is sent (like `psconfig validate`); --deep sends every pair.

Plugins are looked up in --plugins (a pScheduler `classes` directory), then in this source tree
(pscheduler-<class>-<name>/<name>/), then in the RPM and Debian install paths.

Every problem names the task (or the object) it comes from. Exit status: 0 valid, 1 problems
found (listed on stderr), 2 the check itself could not run (file unreadable, plugin missing).
"""

import argparse
import json
import os
import sys

# The checks live beside this script (validate_*.py), as they are installed: a script's own
# directory is on sys.path when it runs; put it there when it is loaded as a module too.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from validate_plugins import Plugins, check_tasks
from validate_structure import Problems, check_structure, section_of


def _blame_tasks(template, problems):
    """Name the tasks behind problems found in shared objects (tests, archives, groups)."""
    users = {}
    for task_name, task in section_of(template, "tasks").items():
        if not isinstance(task, dict):
            continue
        for key, kind in (("group", "group"), ("test", "test"), ("schedule", "schedule")):
            if isinstance(task.get(key), str):
                users.setdefault("%s %r" % (kind, task[key]), []).append(task_name)
        for archive in task.get("archives") or []:
            users.setdefault("archive %r" % archive, []).append(task_name)
    blamed = []
    for line in problems.errors:
        obj = line.split(": ", 1)[0]
        if obj in users:
            line = "%s (used by task %s)" % (line, ", ".join(repr(t) for t in sorted(users[obj])))
        blamed.append(line)
    problems.errors = blamed


def validate(template, deep=False, classes_dirs=(), require=("test/pmtu",)):
    """(problems, summary) for a parsed template. RuntimeError if a required plugin is missing."""
    problems = Problems()
    summary = {"tasks": 0, "pairs": 0, "specs": 0, "archives": 0}
    if check_structure(template, problems) or isinstance(template, dict):
        # Dangling references are skipped by the expansion (already reported above).
        summary = check_tasks(template, problems, Plugins(classes_dirs), deep=deep,
                              require=require)
    _blame_tasks(template, problems)
    return problems, summary


def main(argv=None):
    parser = argparse.ArgumentParser(description="Check a pSConfig template for the pmtu test.")
    parser.add_argument("template", help="the pSConfig JSON file")
    parser.add_argument("--deep", action="store_true",
                        help="send every pair's spec to the plugins, not one per task")
    parser.add_argument("--plugins", action="append", default=[], metavar="CLASSES_DIR",
                        help="a pScheduler classes directory to take the plugins from first")
    parser.add_argument("--quiet", action="store_true", help="print problems only")
    args = parser.parse_args(argv)
    try:
        with open(args.template) as f:
            template = json.load(f)
    except (OSError, IOError) as err:
        sys.stderr.write("%s: cannot read: %s\n" % (args.template, err))
        return 2
    except ValueError as err:
        sys.stderr.write("%s: INVALID: not JSON: %s\n" % (args.template, err))
        return 1
    try:
        problems, summary = validate(template, deep=args.deep, classes_dirs=args.plugins)
    except RuntimeError as err:
        sys.stderr.write("%s: cannot check: %s\n" % (args.template, err))
        return 2
    if not args.quiet:
        for note in problems.notes:
            sys.stdout.write("note: %s\n" % note)
    if problems.errors:
        for line in problems.errors:
            sys.stderr.write("%s: INVALID: %s\n" % (args.template, line))
        return 1
    if not args.quiet:
        sys.stdout.write("%s: valid: %d tasks over %d address pairs; %d test specs passed "
                         "spec-is-valid, %d archive data passed data-is-valid%s\n"
                         % (args.template, summary["tasks"], summary["pairs"], summary["specs"],
                            summary["archives"], "" if args.deep else " (one pair per task; "
                            "--deep for all)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
