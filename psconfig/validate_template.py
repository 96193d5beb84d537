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
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
INSTALLED_CLASSES = ["/usr/libexec/pscheduler/classes", "/usr/lib/pscheduler/classes"]
PLUGIN_TIMEOUT = 15  # seconds: what pScheduler's database allows data-is-valid

NAME_RE = re.compile(r"^[a-zA-Z0-9:._\-]+$")
DURATION_RE = re.compile(r"^P(?:\d+(?:\.\d+)?W)?(?:\d+(?:\.\d+)?D)?"
                         r"(?:T(?:\d+(?:\.\d+)?H)?(?:\d+(?:\.\d+)?M)?(?:\d+(?:\.\d+)?S)?)?$")
VAR_RE = re.compile(r"\{%\s+(.*?)\s+%\}")
INDEXED_VAR_RE = re.compile(r"^(address|pscheduler_address|lead_bind_address)\[(\d+)\]$")

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


# ------------------------------------------------------------------------------------------
# 1. Structure and references


def _section(template, name):
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
        for name, obj in _section(template, section).items():
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
    addresses = _section(template, "addresses")
    classes = _section(template, "address-classes")
    for name, group in _section(template, "groups").items():
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
    names = {section: set(_section(template, section)) for section in
             ("addresses", "hosts", "groups", "tests", "schedules", "archives", "contexts",
              "subtasks")}
    for name, addr in _section(template, "addresses").items():
        if isinstance(addr, dict) and "host" in addr and addr["host"] not in names["hosts"]:
            problems.error("address %r" % name, "host %r is not defined in hosts" % addr["host"])
        for ctx in (addr.get("contexts") or []) if isinstance(addr, dict) else []:
            if ctx not in names["contexts"]:
                problems.error("address %r" % name, "context %r is not defined in contexts" % ctx)
    for name, host in _section(template, "hosts").items():
        for archive in (host.get("archives") or []) if isinstance(host, dict) else []:
            if archive not in names["archives"]:
                problems.error("host %r" % name, "archive %r is not defined in archives" % archive)
    for name, sub in _section(template, "subtasks").items():
        if not isinstance(sub, dict):
            continue
        if "test" in sub and sub["test"] not in names["tests"]:
            problems.error("subtask %r" % name, "test %r is not defined in tests" % sub["test"])
        for archive in sub.get("archives") or []:
            if archive not in names["archives"]:
                problems.error("subtask %r" % name, "archive %r is not defined in archives"
                               % archive)
    for name, task in _section(template, "tasks").items():
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


def _check_archive_specs(template, problems):
    for name, archive in _section(template, "archives").items():
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
    for name, sched in _section(template, "schedules").items():
        if not isinstance(sched, dict):
            continue
        for key in ("repeat", "slip"):
            if key in sched and not _is_duration(sched[key]):
                problems.error("schedule %r" % name, "%r %r is not an ISO 8601 duration"
                               % (key, sched[key]))


def _is_duration(value):
    return isinstance(value, str) and value not in ("P", "PT") and bool(DURATION_RE.match(value))


# ------------------------------------------------------------------------------------------
# 2. Groups into pairs, template variables


def _selected(template, selectors):
    """Address names a selector list picks (classes are resolved by the agent: not here)."""
    out = []
    for sel in selectors or []:
        if isinstance(sel, dict) and "name" in sel and not sel.get("disabled"):
            out.append(sel["name"])
    return out


def group_pairs(template, group):
    """The address-name tuples a group expands to (mesh/disjoint: 2, list: 1 dimension)."""
    addresses = _section(template, "addresses")

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


class JqUnsupported(Exception):
    pass


_JQ_PATH_RE = re.compile(r'^\.(addresses|hosts)\[(\d+)\]((?:\.(?:[A-Za-z_][A-Za-z0-9_]*|"[^"]*"))*)'
                         r'(\s*\|\s*tostring)?$')
_JQ_STEP_RE = re.compile(r'\.([A-Za-z_][A-Za-z0-9_]*|"[^"]*")')


def eval_jq(expr, context):
    """The small jq subset templates use: .addresses[i]._meta.key (| tostring)."""
    match = _JQ_PATH_RE.match(expr.strip())
    if not match:
        raise JqUnsupported(expr)
    items = context.get(match.group(1), [])
    index = int(match.group(2))
    value = items[index] if index < len(items) else None
    for step in _JQ_STEP_RE.findall(match.group(3) or ""):
        key = step[1:-1] if step.startswith('"') else step
        value = value.get(key) if isinstance(value, dict) else None
    if match.group(4):
        value = value if isinstance(value, str) else json.dumps(value)
    return value


class Expander(object):
    """pSConfig's template variables for one task and one tuple of addresses."""

    def __init__(self, template, task, pair):
        addresses = _section(template, "addresses")
        hosts = _section(template, "hosts")
        self.pair = pair
        self.task = task
        self.addr_objs = [addresses.get(n, {}) for n in pair]
        self.context = {
            "addresses": self.addr_objs,
            "hosts": [hosts.get(a.get("host"), {}) if a.get("host") else {} for a in self.addr_objs],
        }
        self.issues = []

    def _var(self, name):
        match = INDEXED_VAR_RE.match(name)
        if match:
            kind, index = match.group(1), int(match.group(2))
            if index >= len(self.pair):
                self.issues.append("{%% %s %%} but the group has only %d dimension(s)"
                                   % (name, len(self.pair)))
                return ""
            obj = self.addr_objs[index]
            if kind == "address":
                return obj.get("address", self.pair[index])
            if kind == "pscheduler_address":
                return obj.get("pscheduler-address", obj.get("address", self.pair[index]))
            return obj.get("lead-bind-address", "")
        if name == "scheduled_by_address":
            index = self.task.get("scheduled-by", 0)
            if index >= len(self.pair):
                self.issues.append("scheduled-by %d but the group has only %d dimension(s)"
                                   % (index, len(self.pair)))
                return ""
            return self.addr_objs[index].get("address", self.pair[index])
        if name == "localhost":
            return "localhost"
        if name == "flip":
            return False
        if name.startswith("jq "):
            try:
                value = eval_jq(name[3:], self.context)
            except JqUnsupported:
                return "{jq}"
            if value is None:
                return ""
            if not isinstance(value, str):
                self.issues.append("{%% %s %%} gives %s, not a string: pSConfig drops the task "
                                   "(end the expression with | tostring)" % (name, json.dumps(value)))
                return json.dumps(value)
            return value
        self.issues.append("unknown template variable {%% %s %%}" % name)
        return ""

    def expand(self, value):
        if isinstance(value, dict):
            return {k: self.expand(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.expand(v) for v in value]
        if isinstance(value, str):
            whole = VAR_RE.fullmatch(value.strip())
            if whole:  # the whole string is one variable: replaced by its value
                return self._var(whole.group(1))
            return VAR_RE.sub(lambda m: str(self._var(m.group(1))), value)
        return value


# ------------------------------------------------------------------------------------------
# 3. The real plugins


class Plugins(object):
    def __init__(self, classes_dirs):
        self.classes_dirs = list(classes_dirs)
        self.cache = {}

    def find(self, cls, name):
        candidates = [os.path.join(d, cls, name) for d in self.classes_dirs]
        candidates.append(os.path.join(REPO, "pscheduler-%s-%s" % (cls, name), name))
        candidates += [os.path.join(d, cls, name) for d in INSTALLED_CLASSES]
        for path in candidates:
            if os.path.isfile(os.path.join(path, "enumerate")):
                return path
        return None

    def call(self, cls, name, method, document):
        """(valid, error) from a validating method; raises RuntimeError if the plugin broke."""
        key = (cls, name, method, json.dumps(document, sort_keys=True))
        if key in self.cache:
            return self.cache[key]
        plugin = self.find(cls, name)
        env = dict(os.environ)
        # The interpreter running this script (and its jsonschema) runs the plugins too; in a
        # source tree the library is next to them.
        env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "/usr/bin:/bin")
        if plugin.startswith(REPO + os.sep):
            lib = os.path.join(REPO, "python-jumbo")
            env["PYTHONPATH"] = lib + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        try:
            proc = subprocess.Popen([os.path.join(plugin, method)], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    universal_newlines=True, env=env)
        except OSError as err:
            raise RuntimeError("cannot run %s %s %s: %s" % (cls, name, method, err))
        try:
            out, err = proc.communicate(json.dumps(document), timeout=PLUGIN_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise RuntimeError("%s %s %s took longer than %d s" % (cls, name, method,
                                                                   PLUGIN_TIMEOUT))
        if proc.returncode != 0:
            raise RuntimeError("%s %s %s failed (exit %d): %s" % (
                cls, name, method, proc.returncode, err.strip() or "(no message)"))
        try:
            answer = json.loads(out)
            result = (bool(answer["valid"]), answer.get("error"))
        except (ValueError, KeyError, TypeError):
            raise RuntimeError("%s %s %s printed no {\"valid\": ...} answer: %r"
                               % (cls, name, method, out[:200]))
        self.cache[key] = result
        return result


# The suite's tests: their archived results are grouped by the reference's site labels.
SUITE_TESTS = ("pmtu", "jumbo-throughput")


def check_tasks(template, problems, plugins, deep=False, require=("test/pmtu",)):
    """Expand each task for its pairs and run the specs and archive data through the plugins.

    Returns a summary dict. Plugins named in `require` must be found, else RuntimeError.
    """
    groups = _section(template, "groups")
    tests = _section(template, "tests")
    archives = _section(template, "archives")
    summary = {"tasks": 0, "pairs": 0, "specs": 0, "archives": 0}
    for item in require:
        cls, name = item.split("/")
        if plugins.find(cls, name) is None:
            raise RuntimeError("the %s plugin %r is not here: install pscheduler-%s-%s or pass "
                               "--plugins" % (cls, name, cls, name))
    for task_name, task in sorted(_section(template, "tasks").items()):
        if not isinstance(task, dict) or task.get("disabled"):
            continue
        where = "task %r" % task_name
        group = groups.get(task.get("group"))
        test = tests.get(task.get("test"))
        if not isinstance(group, dict) or not isinstance(test, dict):
            continue  # already reported as a dangling reference
        pairs = group_pairs(template, group)
        if not pairs:
            problems.error(where, "group %r expands to no address pairs" % task.get("group"))
            continue
        summary["tasks"] += 1
        summary["pairs"] += len(pairs)
        test_type = test.get("type")
        task_archives = [(n, archives[n]) for n in task.get("archives") or []
                         if isinstance(archives.get(n), dict)]
        for index, pair in enumerate(pairs):
            deep_pair = deep or index == 0
            expander = Expander(template, task, pair)
            spec = expander.expand(test.get("spec"))
            reference = expander.expand(task.get("reference")) if "reference" in task else None
            label = " -> ".join(pair)
            for issue in expander.issues:
                problems.error(where, "%s: %s" % (label, issue))
            _check_reference(where, label, test_type, task, reference, problems)
            if deep_pair:
                _check_spec(where, label, test, spec, plugins, problems, summary)
                for archive_name, archive in task_archives:
                    data = Expander(template, task, pair).expand(archive.get("data"))
                    _check_archive(where, label, archive_name, archive, data, plugins, problems,
                                   summary)
    return summary


def _check_reference(where, label, test_type, task, reference, problems):
    if test_type not in SUITE_TESTS:
        return
    if not isinstance(reference, dict) or not any(k in reference for k in SITE_KEYS):
        problems.note("%s: no reference.source-site/dest-site: archived results of this task "
                      "cannot be grouped by site" % where)
        return
    for key in SITE_KEYS:
        value = reference.get(key)
        if value == "{jq}":
            continue  # a jq expression this checker cannot evaluate
        if not isinstance(value, str) or not value:
            problems.error(where, "%s: reference.%s is empty (is _meta.site set on both "
                                  "addresses?)" % (label, key))


# What each plugin class is checked with: (its name in a note, the validating method, the
# summary's counter, what goes unchecked when the plugin is not here).
_CHECKS = {
    "test": ("test type", "spec-is-valid", "specs", "specs"),
    "archiver": ("archiver", "data-is-valid", "archives", "data"),
}


def _plugin_verdict(where, context, cls, name, document, plugins, problems, summary):
    """The plugin's (valid, error) on `document`, counted in the summary; None when the plugin
    is not here (a note) or broke (an error about `context`)."""
    kind, method, counter, unchecked = _CHECKS[cls]
    if plugins.find(cls, name) is None:
        problems.note("%s %r: no plugin here, %s not checked" % (kind, name, unchecked))
        return None
    try:
        verdict = plugins.call(cls, name, method, document)
    except RuntimeError as err:
        problems.error(where, "%s: %s" % (context, err))
        return None
    summary[counter] += 1
    return verdict


def _check_spec(where, label, test, spec, plugins, problems, summary):
    test_type = test.get("type")
    if not isinstance(test_type, str) or not isinstance(spec, dict):
        problems.error(where, "test spec must be an object")
        return
    spec = dict(spec)
    spec.setdefault("schema", 1)  # what the pSConfig agent adds
    verdict = _plugin_verdict(where, label, "test", test_type, spec, plugins, problems, summary)
    if verdict and not verdict[0]:
        problems.error(where, "test spec for %s rejected by %s spec-is-valid: %s"
                       % (label, test_type, verdict[1]))


def _check_archive(where, label, name, archive, data, plugins, problems, summary):
    archiver = archive.get("archiver")
    if not isinstance(archiver, str):
        problems.error(where, "archive %r: 'archiver' must be a name" % name)
        return
    verdict = _plugin_verdict(where, "archive %r" % name, "archiver", archiver, data, plugins,
                              problems, summary)
    if verdict and not verdict[0]:
        problems.error(where, "archive %r data (for %s) rejected by %s data-is-valid: %s"
                       % (name, label, archiver, verdict[1]))


def _blame_tasks(template, problems):
    """Name the tasks behind problems found in shared objects (tests, archives, groups)."""
    users = {}
    for task_name, task in _section(template, "tasks").items():
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
