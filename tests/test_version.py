"""`--version` on every command the suite installs, and the one version they all print
(issue 30): the commands are installed the way the packages install them
(scripts/pkg-install.sh library, from setup.py's entry points), each answers `--version`
with its name and jumbo.__version__ on stdout and status 0; the operator's
`python3 -m jumbo.archive.opensearch.setup` too."""

import ast
import os
import subprocess
import sys

import jumbo

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def entry_points():
    """{command: module:function} of python-jumbo/setup.py's console_scripts."""
    tree = ast.parse(open(os.path.join(ROOT, "python-jumbo", "setup.py")).read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == "console_scripts":
                    pairs = [item.value.split("=", 1) for item in value.elts]
                    return dict((name.strip(), target.strip()) for name, target in pairs)
    raise AssertionError("no console_scripts in setup.py")


def test_every_installed_command_answers_version(tmp_path):
    commands = entry_points()
    assert {"jumbocheck", "jumbo-report", "jumbo-alarms", "jumbo-replay"} <= set(commands)
    sitelib, bindir = tmp_path / "site", tmp_path / "bin"
    subprocess.run(["sh", os.path.join(ROOT, "scripts", "pkg-install.sh"), "library",
                    os.path.join(ROOT, "python-jumbo", "jumbo"), str(sitelib), str(bindir),
                    sys.executable], check=True)
    assert sorted(os.listdir(str(bindir))) == sorted(commands)
    env = dict(os.environ, PYTHONPATH=str(sitelib))
    for command in commands:
        done = subprocess.run([str(bindir / command), "--version"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, env=env,
                              timeout=120)
        assert (done.returncode, done.stdout, done.stderr) == \
            (0, "%s %s\n" % (command, jumbo.__version__), ""), command


def test_the_archive_setup_module_answers_version():
    done = subprocess.run([sys.executable, "-m", "jumbo.archive.opensearch.setup", "--version"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python-jumbo")))
    assert (done.returncode, done.stdout) == (0, "jumbo %s\n" % jumbo.__version__)

