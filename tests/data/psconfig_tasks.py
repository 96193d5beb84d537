"""Run under /usr/bin/python3 with perfSONAR pSConfig's source on sys.path (argv[1]) and
pyjq's directory (argv[2]): each template named after them checked with pSConfig's own
schema and references (exit status 1 and the problems when it fails), then the tasks
pSConfig's own TaskGenerator makes from it, as the pSConfig pScheduler agent walks them
(disabled tasks skipped), one JSON line per task: {"template", "task", "type", "source", "dest", "direction", "ip-version",
"repeat"}."""

import json
import sys

sys.path[:0] = [sys.argv[1], sys.argv[2]]

from psconfig.client.psconfig.config import Config  # noqa: E402
from psconfig.client.psconfig.parsers.task_generator import TaskGenerator  # noqa: E402

for path in sys.argv[3:]:
    with open(path) as handle:
        config = Config(data=json.load(handle))
    # pSConfig's own schema and reference checks first, as `psconfig validate` runs them
    problems = config.validate() or config.validate_refs()  # refs of a valid document only
    if problems:
        raise SystemExit("%s: %s" % (path, "; ".join(str(p) for p in problems)))
    for name in config.task_names():
        task = config.task(name)
        if not task or task.disabled():
            continue
        generator = TaskGenerator(psconfig=config, pscheduler_url="https://localhost/pscheduler",
                                  task_name=name, match_addresses=[],
                                  use_psconfig_archives=True)
        if not generator.start():
            raise SystemExit("%s %s: %s" % (path, name, generator.error))
        while generator.next():
            if generator.error:
                raise SystemExit("%s %s: %s" % (path, name, generator.error))
            made = generator.pscheduler_task()
            if not made:
                raise SystemExit("%s %s: %s" % (path, name, generator.error))
            spec = made.data["test"]["spec"]
            print(json.dumps({"template": path, "task": name, "type": made.data["test"]["type"],
                              "source": spec["source"], "dest": spec["dest"],
                              "direction": spec.get("direction"),
                              "ip-version": spec.get("ip-version"),
                              "repeat": made.data["schedule"].get("repeat")}))
        generator.stop()
