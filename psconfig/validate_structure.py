"""pSConfig template checks, part 1: the structure and references (the sections pSConfig
requires, the keys each object may have, every name a task, group, host or subtask refers to,
archive specs, schedules) and the address pairs a group expands to. validate_template.py runs it."""

import json
import re

NAME_RE = re.compile(r"^[a-zA-Z0-9:._\-]+$")
DURATION_RE = re.compile(r"^P(?:\d+(?:\.\d+)?W)?(?:\d+(?:\.\d+)?D)?"
                         r"(?:T(?:\d+(?:\.\d+)?H)?(?:\d+(?:\.\d+)?M)?(?:\d+(?:\.\d+)?S)?)?$")

# The keys pSConfig (5.x schema) accepts in each kind of object.
TOP_KEYS = {"addresses", "address-classes", "archives", "contexts", "groups", "hosts", "includes",
            "schedules", "subtasks", "tasks", "tests", "_meta"}
REQUIRED_TOP = ["addresses", "groups", "tests", "tasks"]
OBJECT_KEYS = {
    "addresses": ({"address", "host", "labels", "remote-addresses", "lead-bind-address",
                   "pscheduler-address", "contexts", "tags", "disabled", "no-agent", "_meta"},
                  ["address"]),
    "hosts": ({"archives", "tags", "no-agent", "disabled", "_meta"}, []),
    "address-classes": ({"data-source", "match-filter", "exclude-filter", "_meta"}, ["data-source"]),
    "tests": ({"type", "spec", "_meta"}, ["type", "spec"]),
    "schedules": ({"start", "slip", "sliprand", "repeat", "until", "max-runs", "_meta"}, []),
    "archives": ({"archiver", "data", "transform", "ttl", "_meta", "label", "runs", "schema"},
                 ["archiver", "data"]),
    "contexts": ({"context", "data", "_meta"}, ["context", "data"]),
    "subtasks": ({"test", "schedule-offset", "disabled", "archives", "tools", "reference", "_meta"},
                 ["test"]),
    "tasks": ({"scheduled-by", "group", "test", "schedule", "disabled", "archives", "tools",
               "subtasks", "priority", "reference", "_meta"}, ["group", "test"]),
}
GROUP_KEYS = {
    "mesh": ({"type", "addresses", "excludes-self", "excludes", "default-address-label", "_meta"},
             ["addresses"]),
    "disjoint": ({"type", "a-addresses", "b-addresses", "unidirectional", "excludes-self",
                  "excludes", "default-address-label", "_meta"}, ["a-addresses", "b-addresses"]),
    "list": ({"type", "addresses", "default-address-label", "_meta"}, ["addresses"]),
}
SITE_KEYS = ("source-site", "dest-site")


class Problems(object):
    """Collects what is wrong, each line prefixed with the object it belongs to."""

    def __init__(self):
        self.errors = []
        self.notes = []

    def error(self, where, text):
        line = "%s: %s" % (where, text)
        if line not in self.errors:
            self.errors.append(line)

    def note(self, text):
        if text not in self.notes:
            self.notes.append(text)



def section_of(template, name):
    value = template.get(name, {})
    return value if isinstance(value, dict) else {}


def check_structure(template, problems):
    if not isinstance(template, dict):
        problems.error("template", "the top level must be a JSON object")
        return False
    for key in sorted(set(template) - TOP_KEYS):
        problems.error("template", "unknown top-level key %r" % key)
    for key in REQUIRED_TOP:
        if key not in template:
            problems.error("template", "required section %r is missing" % key)
        elif not isinstance(template[key], dict) or not template[key]:
            problems.error("template", "section %r must be a non-empty object" % key)
    for section, (allowed, required) in OBJECT_KEYS.items():
        if section in template and not isinstance(template[section], dict):
            problems.error("template", "section %r must be an object" % section)
            continue
        for name, obj in section_of(template, section).items():
            where = "%s %r" % (section.rstrip("s") if section != "address-classes"
                               else "address-class", name)
            if not NAME_RE.match(name):
                problems.error(where, "name must match %s" % NAME_RE.pattern)
            if not isinstance(obj, dict):
                problems.error(where, "must be an object")
                continue
            for key in sorted(set(obj) - allowed):
                problems.error(where, "unknown key %r" % key)
            for key in required:
                if key not in obj:
                    problems.error(where, "required key %r is missing" % key)
    _check_groups(template, problems)
    _check_references(template, problems)
    _check_archive_specs(template, problems)
    _check_schedules(template, problems)
    return not problems.errors


def _check_groups(template, problems):
    addresses = section_of(template, "addresses")
    classes = section_of(template, "address-classes")
    for name, group in section_of(template, "groups").items():
        where = "group %r" % name
        if not isinstance(group, dict):
            problems.error(where, "must be an object")
            continue
        gtype = group.get("type")
        if gtype not in GROUP_KEYS:
            problems.error(where, "type must be one of %s, not %r" % (sorted(GROUP_KEYS), gtype))
            continue
        allowed, required = GROUP_KEYS[gtype]
        for key in sorted(set(group) - allowed):
            problems.error(where, "unknown key %r for a %s group" % (key, gtype))
        for key in required:
            if key not in group:
                problems.error(where, "required key %r is missing" % key)
        for key in ("addresses", "a-addresses", "b-addresses"):
            selectors = group.get(key)
            if selectors is None:
                continue
            if not isinstance(selectors, list) or not selectors:
                problems.error(where, "%r must be a non-empty list" % key)
                continue
            for sel in selectors:
                if not isinstance(sel, dict) or ("name" in sel) == ("class" in sel):
                    problems.error(where, "%s: each selector is {\"name\": ...} or "
                                          "{\"class\": ...}, not %s" % (key, json.dumps(sel)))
                elif "name" in sel:
                    if sel["name"] not in addresses:
                        problems.error(where, "%s: address %r is not defined in addresses"
                                       % (key, sel["name"]))
                    elif "label" in sel and sel["label"] not in (
                            addresses[sel["name"]].get("labels") or {}):
                        problems.error(where, "%s: address %r has no label %r"
                                       % (key, sel["name"], sel["label"]))
                elif sel["class"] not in classes:
                    problems.error(where, "%s: address class %r is not defined in "
                                          "address-classes" % (key, sel["class"]))


def _check_references(template, problems):
    names = {section: set(section_of(template, section)) for section in
             ("addresses", "hosts", "groups", "tests", "schedules", "archives", "contexts",
              "subtasks")}
    for name, addr in section_of(template, "addresses").items():
        if isinstance(addr, dict) and "host" in addr and addr["host"] not in names["hosts"]:
            problems.error("address %r" % name, "host %r is not defined in hosts" % addr["host"])
        for ctx in (addr.get("contexts") or []) if isinstance(addr, dict) else []:
            if ctx not in names["contexts"]:
                problems.error("address %r" % name, "context %r is not defined in contexts" % ctx)
    for name, host in section_of(template, "hosts").items():
        for archive in (host.get("archives") or []) if isinstance(host, dict) else []:
            if archive not in names["archives"]:
                problems.error("host %r" % name, "archive %r is not defined in archives" % archive)
    for name, sub in section_of(template, "subtasks").items():
        if not isinstance(sub, dict):
            continue
        if "test" in sub and sub["test"] not in names["tests"]:
            problems.error("subtask %r" % name, "test %r is not defined in tests" % sub["test"])
        for archive in sub.get("archives") or []:
            if archive not in names["archives"]:
                problems.error("subtask %r" % name, "archive %r is not defined in archives"
                               % archive)
    for name, task in section_of(template, "tasks").items():
        if not isinstance(task, dict):
            continue
        where = "task %r" % name
        for key, section in (("group", "groups"), ("test", "tests"), ("schedule", "schedules")):
            if key in task and task[key] not in names[section]:
                problems.error(where, "%s %r is not defined in %s" % (key, task[key], section))
        for key, section in (("archives", "archives"), ("subtasks", "subtasks")):
            value = task.get(key, [])
            if not isinstance(value, list):
                problems.error(where, "%r must be a list of names" % key)
                continue
            for ref in value:
                if ref not in names[section]:
                    problems.error(where, "%s %r is not defined in %s"
                                   % (key.rstrip("s"), ref, section))
        tools = task.get("tools", [])
        if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
            problems.error(where, "'tools' must be a list of tool names")
        if "scheduled-by" in task and (not isinstance(task["scheduled-by"], int)
                                       or task["scheduled-by"] < 0):
            problems.error(where, "'scheduled-by' must be an integer >= 0")
        _check_priority(template, where, task, problems)


def _check_priority(template, where, task, problems):
    """pScheduler's priority of an exclusive task decides whether it pushes out the mesh's
    other exclusive tests (docs/operator.md, known issues): the suite's jumbo-throughput runs
    at -1, so that the times the other tests propose avoid its pending runs and it yields to
    them at insert and at start."""
    priority = task.get("priority")
    if "priority" in task and (not isinstance(priority, int) or isinstance(priority, bool)):
        problems.error(where, "'priority' must be an integer")
        return
    if priority == 0:
        problems.error(where, "'priority' 0 is dropped by pSConfig's agent (it sends only a "
                              "priority that is not 0): leave it out or give another value")
    test = section_of(template, "tests").get(task.get("test"))
    if not isinstance(test, dict) or test.get("type") != "jumbo-throughput":
        return
    if priority is not None and priority > 0:
        problems.error(where, "'priority' %d would let jumbo-throughput preempt the mesh's own "
                              "throughput tests: use -1" % priority)
    elif priority is None:
        problems.note("%s: jumbo-throughput without \"priority\": -1 can push out the mesh's own "
                      "throughput tests (pScheduler's conflict drop, docs/operator.md)" % where)


def _check_archive_specs(template, problems):
    for name, archive in section_of(template, "archives").items():
        if not isinstance(archive, dict):
            continue
        where = "archive %r" % name
        schema = archive.get("schema", 1)
        if not isinstance(schema, int) or isinstance(schema, bool) or schema < 1:
            problems.error(where, "'schema' must be an integer >= 1")
            continue
        if "runs" in archive:
            if archive["runs"] not in ("all", "succeeded", "failed"):
                problems.error(where, "'runs' must be all, succeeded or failed")
            if schema < 2:
                problems.error(where, "'runs' needs archive \"schema\": 2 (pScheduler rejects "
                                      "it in a schema-1 archive spec)")
        if "label" in archive and schema < 3:
            problems.error(where, "'label' needs archive \"schema\": 3")
        if "ttl" in archive and not _is_duration(archive["ttl"]):
            problems.error(where, "'ttl' %r is not an ISO 8601 duration" % (archive["ttl"],))


def _check_schedules(template, problems):
    for name, sched in section_of(template, "schedules").items():
        if not isinstance(sched, dict):
            continue
        for key in ("repeat", "slip"):
            if key in sched and not _is_duration(sched[key]):
                problems.error("schedule %r" % name, "%r %r is not an ISO 8601 duration"
                               % (key, sched[key]))


def _is_duration(value):
    return isinstance(value, str) and value not in ("P", "PT") and bool(DURATION_RE.match(value))


def _selected(template, selectors):
    """Address names a selector list picks (classes are resolved by the agent: not here)."""
    out = []
    for sel in selectors or []:
        if isinstance(sel, dict) and "name" in sel and not sel.get("disabled"):
            out.append(sel["name"])
    return out


def group_pairs(template, group):
    """The address-name tuples a group expands to (mesh/disjoint: 2, list: 1 dimension)."""
    addresses = section_of(template, "addresses")

    def host_of(name):
        return addresses.get(name, {}).get("host") or name

    def excluded(a, b):
        scope = group.get("excludes-self", "host")
        if scope == "host":
            return host_of(a) == host_of(b) or a == b
        if scope == "address":
            return a == b
        return False

    enabled = [n for n in _selected(template, group.get("addresses"))
               if not addresses.get(n, {}).get("disabled")]
    gtype = group.get("type")
    if gtype == "mesh":
        return [(a, b) for a in enabled for b in enabled if not excluded(a, b)]
    if gtype == "disjoint":
        a_side = _selected(template, group.get("a-addresses"))
        b_side = _selected(template, group.get("b-addresses"))
        pairs = [(a, b) for a in a_side for b in b_side if not excluded(a, b)]
        if not group.get("unidirectional"):
            pairs += [(b, a) for a in a_side for b in b_side if not excluded(a, b)]
        return pairs
    if gtype == "list":
        return [(a,) for a in enabled]
    return []
