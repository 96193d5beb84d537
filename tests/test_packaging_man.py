"""Man pages (docs/man/*.1, section 1): one for every command the packages install, in both
formats, rendered by man(1) without a warning, naming every option the command accepts.
(The packages are built once per session by tests/packaging_build.py.)
"""

import argparse
import ast
import contextlib
import importlib
import io
import os
import re
import subprocess

import pytest

pytest_plugins = ["packaging_build"]
pytest.register_assert_rewrite("packaging_build")

from packaging_build import ROOT, deb_files, rpm_files, run, unpack_rpm, version  # noqa: E402

MAN_DIR = "/usr/share/man/man1"
# Documented ahead of the protocol layer's `--version` (issue 30): checked one way only until
# the command has it, then both ways like every other option.
AHEAD = {"--version"}


def _commands():
    """{command: "module:function"} from setup.py's console scripts (what pkg-install.sh makes)."""
    with open(os.path.join(ROOT, "python-jumbo", "setup.py")) as f:
        tree = ast.parse(f.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "entry_points":
            entries = ast.literal_eval(node.value)["console_scripts"]
            return dict(tuple(part.strip() for part in e.split("=", 1)) for e in entries)
    raise AssertionError("setup.py has no console_scripts")


COMMANDS = _commands()


def test_every_installed_command_has_its_man_page_in_both_packages(rpms, debs):
    files = rpm_files(rpms["python3-jumbo"])
    commands = sorted(f[len("/usr/bin/"):] for f in files if f.startswith("/usr/bin/"))
    assert commands == sorted(COMMANDS)
    pages = sorted(os.path.basename(f) for f in files if f.startswith(MAN_DIR + "/"))
    # uncompressed where rpm has no brp-compress (Debian's), .gz on EL
    assert [re.sub(r"\.1(\.gz|\.bz2|\.xz)?$", "", p) for p in pages] == commands
    files = deb_files(debs["python3-jumbo"])
    assert sorted(f[len("/usr/bin/"):] for f in files if f.startswith("/usr/bin/")) == commands
    assert sorted(os.path.basename(f) for f in files if f.startswith(MAN_DIR + "/")) == \
        sorted(c + ".1.gz" for c in commands)


def _render(page):
    env = dict(os.environ, MANWIDTH="80", LC_ALL="C")  # ASCII: roff's minus renders as "-"
    env.pop("MANPAGER", None)
    env["PAGER"] = "cat"
    return subprocess.run(["man", "--warnings", "-l", page], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)


@pytest.mark.parametrize("fmt", ["rpm", "deb"])
def test_packaged_man_pages_render_without_warnings(rpms, debs, tmp_path, fmt):
    if fmt == "rpm":
        unpack_rpm(rpms["python3-jumbo"], str(tmp_path))
    else:
        run(["dpkg-deb", "-x", debs["python3-jumbo"], str(tmp_path)])
    mandir = str(tmp_path) + MAN_DIR
    assert len(os.listdir(mandir)) == len(COMMANDS)
    for cmd in COMMANDS:
        page = [os.path.join(mandir, p) for p in os.listdir(mandir) if p.startswith(cmd + ".1")][0]
        proc = _render(page)
        assert proc.returncode == 0 and proc.stderr == "", (page, proc.stderr)
        lines = proc.stdout.splitlines()
        assert lines[0].split()[0] == "%s(1)" % cmd.upper(), lines[0]
        assert re.search(r"^NAME\n\s+%s +- +\S" % re.escape(cmd), proc.stdout, re.M), proc.stdout[:400]
        # the version `make dist` stamped, in the footer
        assert "jumbo %s" % version() in lines[-1], lines[-1]
        assert max(len(line) for line in lines) <= 80


def _parser_options(target, monkeypatch):
    """Option strings of the argparse parser the command's main() builds (none: not argparse)."""
    module, func = target.split(":")
    seen = []

    class Seen(Exception):
        pass

    def grab(parser, *args, **kwargs):
        seen.append(parser)
        raise Seen()
    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", grab)
    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", grab)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        with contextlib.suppress(Seen, SystemExit):
            getattr(importlib.import_module(module), func)(["--help"])
    monkeypatch.undo()
    return {opt for parser in seen for action in parser._actions for opt in action.option_strings}


def _help_options(target):
    """Options the command's --help lists (lines that begin with an option, as both argparse and
    optparse print them)."""
    module, func = target.split(":")
    proc = subprocess.run(["python3", "-c", "import sys; from %s import %s; sys.exit(%s(['--help']))"
                           % (module, func, func)], cwd=ROOT, env=dict(os.environ, COLUMNS="200",
                          PYTHONPATH=os.path.join(ROOT, "python-jumbo")),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert proc.returncode == 0, proc.stderr
    options = set()
    for line in proc.stdout.splitlines():
        if re.match(r"^\s{2,}-", line):
            head = re.split(r"\s{2,}", line.strip())[0]
            options |= set(re.findall(r"(?:^|, )(--?[A-Za-z0-9][\w-]*)", head))
    return options


def _man_options(cmd):
    with open(os.path.join(ROOT, "docs", "man", cmd + ".1")) as f:
        source = f.read()
    text = re.sub(r"\\f[BIRP]", "", source.replace("\\-", "-"))
    # the options of the OPTIONS section: the tag line of each .TP entry
    documented = set(re.findall(r"^\.TP\n\.(?:BI|B|BR) (--?[A-Za-z0-9][\w-]*)", text, re.M))
    return text, documented


@pytest.mark.parametrize("cmd", sorted(COMMANDS))
def test_man_page_documents_every_option(cmd, monkeypatch):
    accepted = _parser_options(COMMANDS[cmd], monkeypatch) | _help_options(COMMANDS[cmd])
    assert len(accepted) > 3, accepted
    accepted |= {"-h", "--help"}  # every command answers them (_help_options ran --help)
    text, documented = _man_options(cmd)
    missing = [opt for opt in sorted(accepted)
               if not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(opt), text)]
    assert not missing, "%s(1) does not document %s" % (cmd, missing)
    # and documents no option the command does not have
    stale = sorted(documented - accepted - AHEAD)
    assert not stale, "%s(1) documents options %s the command does not have" % (cmd, stale)
