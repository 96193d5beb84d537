"""Upstream pScheduler's own enumeration checks, built from the source tarballs, for tests.

Two validators, each upstream's code, never a copy:
  * 5.2.5: python-pscheduler from pscheduler-5.2.5-*.tar.gz (its dictionary is built in);
  * 5.3-dev (issue-1526 snapshot): python-pscheduler with its __DATADIR__ filled in and
    pscheduler-json-dictionary built and installed by its own Makefile (which runs upstream's
    dictionary tests and pickles it), so `json-validate` and python-pscheduler read it.

`server_check(version, kind, enumeration)` runs the body of the server's SQL function
json_validate (pscheduler-server/database/json_validate.sql: what the test_alter,
tool_alter and archiver_alter triggers call) verbatim under that version's python-pscheduler;
`json_validate_tool(kind, enumeration)` runs 5.3's `json-validate` program. Both run
/usr/bin/python3 (the node's interpreter) with pyjq and crontab from scripts/setup.sh.
"""

import json
import os
import re
import subprocess
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.environ.get("PSCHEDULER_SRC", os.path.normpath(
    os.path.join(ROOT, "..", "shared", "real-pscheduler")))
PYDEPS = os.environ.get("RPS_DEPS", os.path.join(ROOT, "var", "real-pscheduler", "pydeps"))
PYTHON = "/usr/bin/python3"
TARBALLS = {"5.2.5": "pscheduler-5.2.5-1e8b192.tar.gz",
            "5.3": "pscheduler-5.3dev-issue1526-4422852.tar.gz"}
KINDS = {"test": "Test", "tool": "Tool", "archiver": "Archiver"}


def missing():
    """Why upstream's validators cannot be built here, or None."""
    for name in TARBALLS.values():
        if not os.path.isfile(os.path.join(SRC, name)):
            return "no %s in %s (set PSCHEDULER_SRC)" % (name, SRC)
    if not os.path.isdir(PYDEPS):
        return "no pyjq/crontab for %s in %s: run scripts/setup.sh" % (PYTHON, PYDEPS)
    return None


class Upstream(object):
    """Both versions unpacked and built under `work` (a pytest tmp dir)."""

    def __init__(self, work):
        self.work = str(work)
        self.tree = {}
        for version, name in TARBALLS.items():
            dest = os.path.join(self.work, version)
            with tarfile.open(os.path.join(SRC, name)) as tar:
                tar.extractall(dest)
            self.tree[version] = os.path.join(dest, "pscheduler")
        self.pylib = {"5.2.5": self._pylib("5.2.5", None)}
        self.datadir = os.path.join(self.work, "5.3-share")
        self.internals = os.path.join(self.work, "5.3-internals")
        dictionary = os.path.join(self.tree["5.3"], "pscheduler-json-dictionary",
                                  "pscheduler-json-dictionary")
        subprocess.run(["make", "-s", "-C", dictionary, "DATADIR=" + self.datadir,
                        "INSTALLED_DATADIR=" + self.datadir, "INTERNALSDIR=" + self.internals,
                        "install"], check=True, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
        self.pylib["5.3"] = self._pylib("5.3", self.datadir)

    def _pylib(self, version, datadir):
        """python-pscheduler's package as its Makefile's file-setup makes it."""
        lib = os.path.join(self.work, version + "-pylib")
        package = os.path.join(self.tree[version], "python-pscheduler", "pscheduler", "pscheduler")
        os.makedirs(lib, exist_ok=True)
        subprocess.run(["cp", "-a", package, lib], check=True)
        for base, _dirs, files in os.walk(os.path.join(lib, "pscheduler")):
            for name in files:
                if name.endswith(".py"):
                    path = os.path.join(base, name)
                    with open(path) as handle:
                        text = handle.read()
                    text = text.replace("__CLASSES__", os.path.join(self.work, "classes"))
                    if datadir:
                        text = text.replace("__DATADIR__", datadir)
                    with open(path, "w") as handle:
                        handle.write(text)
        return lib

    def env(self, version, extra_path=()):
        path = [self.pylib[version]] + list(extra_path) + [PYDEPS]
        return dict(os.environ, PYTHONPATH=os.pathsep.join(path), LANG="C.UTF-8")

    def sql_function_body(self, version):
        """The Python body of the server's SQL function json_validate, as shipped."""
        path = os.path.join(self.tree[version], "pscheduler-server", "pscheduler-server",
                            "database", "json_validate.sql")
        with open(path) as handle:
            sql = handle.read()
        match = re.search(r"FUNCTION json_validate\(.*?AS \$\$\n(.*?)\n\$\$ LANGUAGE plpython3u",
                          sql, re.S)
        return match.group(1)

    def server_check(self, version, kind, enumeration):
        """None when the server of `version` accepts the enumeration, else its message."""
        return self.server_checks(version, [(kind, enumeration)])[0]

    def server_checks(self, version, cases):
        """server_check of every (kind, enumeration) in `cases`, in one interpreter."""
        runner = (
            "import json, sys\n"
            "class plpy(object):\n"
            "    @staticmethod\n"
            "    def error(message): raise SystemExit(message)\n"
            "def _function(candidate, json_ref):\n%s\n"
            "print(json.dumps([_function(json.dumps(e), '#/pScheduler/PluginEnumeration/' + k)\n"
            "                  for k, e in json.loads(sys.stdin.read())]))\n"
            % "\n".join("    " + line for line in self.sql_function_body(version).split("\n")))
        done = subprocess.run([PYTHON, "-c", runner],
                              input=json.dumps([[KINDS[k], e] for k, e in cases]),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, env=self.env(version), timeout=120)
        if done.returncode != 0:
            raise AssertionError("json_validate of %s failed: %s" % (version, done.stderr))
        return json.loads(done.stdout)

    def spec_checks(self, enumeration_dir, specs):
        """[(valid, message)] of upstream's plugins.enumerated_spec_is_valid (what 5.3's own
        spec-is-valid methods run: enumerate.json beside argv[0], versions[schema]) on each
        spec, with the enumerate.json in `enumeration_dir`."""
        runner = (
            "import json, os, sys\n"
            "sys.argv[0] = os.path.join(sys.argv[1], 'spec-is-valid')\n"
            "from pscheduler.plugins import enumerated_spec_is_valid\n"
            "print(json.dumps([enumerated_spec_is_valid(s, 'test', 'spec')\n"
            "                  for s in json.loads(sys.stdin.read())]))\n")
        done = subprocess.run([PYTHON, "-c", runner, enumeration_dir], input=json.dumps(specs),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, env=self.env("5.3"), timeout=120)
        if done.returncode != 0:
            raise AssertionError("enumerated_spec_is_valid failed: %s" % done.stderr)
        return [tuple(answer) for answer in json.loads(done.stdout)]

    def json_validate_tool(self, kind, enumeration):
        """(exit status, output) of 5.3's `json-validate /pScheduler/PluginEnumeration/Kind`."""
        done = subprocess.run([PYTHON, os.path.join(self.internals, "json-validate"),
                               "/pScheduler/PluginEnumeration/" + KINDS[kind]],
                              input=json.dumps(enumeration), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, universal_newlines=True,
                              env=self.env("5.3"), timeout=120)
        return done.returncode, done.stdout

    def enumerate_under(self, version, plugin_dir, library):
        """The plugin's `enumerate` executed (its shebang's `python3` is the node's) with
        `version`'s python-pscheduler importable, as on a node of that version:
        (exit status, stdout, stderr)."""
        env = self.env(version, [library])
        env["PATH"] = os.pathsep.join([os.path.dirname(PYTHON), "/bin", env.get("PATH", "")])
        done = subprocess.run([os.path.join(plugin_dir, "enumerate")],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True,
                              env=env, timeout=120)
        return done.returncode, done.stdout, done.stderr
