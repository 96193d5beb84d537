"""pSConfig template checks, part 3: every task expanded for its pairs, each test spec and
archive data through the real plugins' validating methods (spec-is-valid, data-is-valid), as
pScheduler calls them when the pSConfig agent posts a task."""

import json
import os
import subprocess
import sys

from validate_expand import Expander
from validate_structure import SITE_KEYS, group_pairs, section_of

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
INSTALLED_CLASSES = ["/usr/libexec/pscheduler/classes", "/usr/lib/pscheduler/classes"]
PLUGIN_TIMEOUT = 15  # seconds: what pScheduler's database allows data-is-valid


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
    groups = section_of(template, "groups")
    tests = section_of(template, "tests")
    archives = section_of(template, "archives")
    summary = {"tasks": 0, "pairs": 0, "specs": 0, "archives": 0}
    for item in require:
        cls, name = item.split("/")
        if plugins.find(cls, name) is None:
            raise RuntimeError("the %s plugin %r is not here: install pscheduler-%s-%s or pass "
                               "--plugins" % (cls, name, cls, name))
    for task_name, task in sorted(section_of(template, "tasks").items()):
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
