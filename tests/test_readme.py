"""The README is a front door, and every door in it opens.

- Every shell command in the README's ```sh blocks is run somewhere: by a named test, by the
  demo, or by CI. RUNNERS below says who runs each one; a command nobody runs fails here, and
  a runner that no longer exists (a test renamed or removed) fails here too.
- The cheap ones run here as well: `--help` forms of the console scripts, every option a
  README command uses against that command's own --help, every `pscheduler task pmtu` line
  through the pmtu plugin's own `cli-to-spec` and `spec-is-valid`, `make` targets against the
  Makefile, demo options against the demo's parser.
- The commands in docs/*.md's ```sh blocks get the same cheap checks where there is one.
- Every relative link in README.md and docs/*.md names a file that exists, and its #anchor a
  heading of that file.
- The README stays short (issue 24: well under 300 lines).
"""

import ast
import glob
import json
import os
import re
import shlex
import subprocess
import sys

import pytest

import harness

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
MAX_README_LINES = 300

# Who runs each README command: (regular expression over the whole command, runners).
# A runner is a pytest node id ("tests/FILE.py::test_name"), "demo" (`make demo` itself) or
# ".ci/run" (CI's one command).
RUNNERS = [
    (r"make demo", ["demo", "tests/test_demo.py::test_quick_demo_runs_end_to_end_and_checks_itself"]),
    (r"make test", [".ci/run"]),
    (r"make demo-mesh",
     ["tests/integration/test_mesh.py::"
      "test_agent_created_tasks_match_the_truth_on_every_pair_and_family"]),
    (r"make demo DEMO_ARGS=--quick",
     ["tests/test_demo.py::test_quick_demo_runs_end_to_end_and_checks_itself"]),
    (r"pscheduler task pmtu --dest \S+",
     ["tests/integration/test_real_pscheduler.py::"
      "test_without_hops_no_hop_table_and_milliseconds_archived_to_opensearch"]),
    (r"pscheduler task pmtu --dest \S+ --reverse --hops",
     ["tests/integration/test_real_pscheduler.py::test_ipv4_reverse_hops_exact_and_archived",
      "tests/integration/test_real_pscheduler.py::"
      "test_ipv6_reverse_hops_exact_and_archived_with_ipv6_addresses"]),
    (r"jumbocheck [^-\s]\S*", ["tests/lab/test_probe_lab.py::test_host_names_and_text_output"]),
    (r"jumbocheck \S+ --flows 12 --json", ["tests/lab/test_probe_lab.py::test_every_scenario_exact"]),
    (r"jumbocheck --help",
     ["tests/lab/test_probe_lab.py::test_jumbocheck_refuses_what_needs_pscheduler_nodes",
      "tests/test_readme.py::test_every_readme_command_that_is_cheap_runs_here"]),
]

FENCE = re.compile(r"^```(\S*)\s*$")
SHELL_LANGUAGES = ("sh",)
OTHER_LANGUAGES = ("text", "json")


def _read(path):
    with open(path) as handle:
        return handle.read()


def fenced_blocks(text):
    """[(language, [lines])] of every ``` block."""
    blocks, current, language = [], None, None
    for line in text.splitlines():
        match = FENCE.match(line.strip())
        if current is None:
            if match:
                current, language = [], match.group(1)
        elif line.strip() == "```":
            blocks.append((language, current))
            current = None
        else:
            current.append(line)
    assert current is None, "an unclosed ``` block"
    return blocks


def shell_commands(text):
    """The README's shell commands, one argv each (continuation lines joined, comments cut)."""
    commands = []
    for language, lines in fenced_blocks(text):
        if language not in SHELL_LANGUAGES:
            continue
        joined = "\n".join(lines).replace("\\\n", " ")
        for line in joined.splitlines():
            argv = shlex.split(line, comments=True)
            if argv:
                commands.append(argv)
    return commands


def runners_of(argv):
    command = " ".join(argv)
    for pattern, runners in RUNNERS:
        if re.fullmatch(pattern, command):
            return runners
    return None


def _readme_commands():
    return shell_commands(_read(README))


def _ids(commands):
    return [" ".join(argv) for argv in commands]


# -- the README itself ------------------------------------------------------------------------

def test_readme_is_a_front_door():
    lines = _read(README).splitlines()
    assert len(lines) < MAX_README_LINES, "README.md has %d lines" % len(lines)
    assert _readme_commands(), "no ```sh block in the README"


def test_every_code_block_says_what_it_holds():
    """A command hidden in an unlabelled or indented block would escape the runner check."""
    text = _read(README)
    for language, lines in fenced_blocks(text):
        assert language in SHELL_LANGUAGES + OTHER_LANGUAGES, (language, lines[:2])
    in_fence = False
    previous = ""
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            in_fence = not in_fence
        elif not in_fence and line.startswith("    ") and previous.strip() == "":
            raise AssertionError("an indented code block in the README: %r" % line)
        previous = line


@pytest.mark.parametrize("argv", _readme_commands(), ids=_ids(_readme_commands()))
def test_every_readme_command_has_a_runner(argv):
    runners = runners_of(argv)
    assert runners, "README command %r is run by no test and not by the demo: run it in a " \
                    "test and name that test in tests/test_readme.py RUNNERS" % " ".join(argv)
    for runner in runners:
        if runner == "demo":
            assert os.path.exists(os.path.join(ROOT, "demo", "__main__.py"))
            assert re.search(r"^demo:", _read(os.path.join(ROOT, "Makefile")), re.M)
        elif runner == ".ci/run":
            assert "make test" in _read(os.path.join(ROOT, ".ci", "run"))
        else:
            path, _, name = runner.partition("::")
            source = os.path.join(ROOT, path)
            assert os.path.exists(source), "runner %s: no file %s" % (runner, path)
            assert re.search(r"^def %s\(" % re.escape(name), _read(source), re.M), \
                "runner %s: no test %s in %s" % (runner, name, path)


def test_every_runner_entry_is_used():
    """RUNNERS lists only commands the README still shows."""
    shown = [" ".join(argv) for argv in _readme_commands()]
    for pattern, _runners in RUNNERS:
        assert any(re.fullmatch(pattern, command) for command in shown), \
            "RUNNERS entry %r matches no README command" % pattern


# -- the cheap ones, run here -------------------------------------------------------------

def console_scripts():
    """{name: "module:function"} from python-jumbo/setup.py: where each command lives today."""
    tree = ast.parse(_read(os.path.join(ROOT, "python-jumbo", "setup.py")))
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "entry_points":
            scripts = ast.literal_eval(node.value).get("console_scripts", [])
            return dict((name.strip(), target.strip())
                        for name, target in (line.split("=", 1) for line in scripts))
    raise AssertionError("no console_scripts in python-jumbo/setup.py")


def run_console_script(name, args):
    module, function = console_scripts()[name].split(":")
    code = ("import sys; sys.argv[0] = %r; from %s import %s as main; sys.exit(main())"
            % (name, module, function))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "python-jumbo")]))
    return subprocess.run([sys.executable, "-c", code] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=env, timeout=60,
                          cwd=ROOT)


def _options(args):
    """The option names a command line uses (--name of --name=value; -4/-6)."""
    return [arg.split("=", 1)[0] for arg in args
            if arg.startswith("-") and arg not in ("-", "-h", "--help")]


def check_console_script(argv):
    name, args = argv[0], argv[1:]
    helped = run_console_script(name, ["--help"])
    assert helped.returncode == 0, helped.stderr
    assert name in helped.stdout.splitlines()[0], helped.stdout[:200]
    for option in _options(args):
        assert re.search(r"(^|[\s\[,])%s([\s=\],]|$)" % re.escape(option), helped.stdout,
                         re.M), "%s: the README uses %s, which --help does not list" % (
                             name, option)


def check_pscheduler_task(argv):
    """`pscheduler task TEST ARGS`: ARGS through the test's own cli-to-spec, the spec through
    its spec-is-valid, as pScheduler does at submit."""
    assert argv[:2] == ["pscheduler", "task"], argv
    test, args = argv[2], argv[3:]
    done = harness.invoke("test", test, "cli-to-spec", stdin=json.dumps(args))
    assert done.status == 0, (argv, done.stdout, done.stderr)
    spec = json.loads(done.stdout)
    valid = harness.invoke("test", test, "spec-is-valid", stdin=json.dumps(spec))
    assert valid.status == 0, valid.stderr
    assert json.loads(valid.stdout)["valid"] is True, (argv, valid.stdout)


def makefile_targets():
    return set(re.findall(r"^([A-Za-z][\w-]*):", _read(os.path.join(ROOT, "Makefile")), re.M))


def check_make(argv):
    targets = [arg for arg in argv[1:] if "=" not in arg]
    variables = dict(arg.split("=", 1) for arg in argv[1:] if "=" in arg)
    for target in targets:
        assert target in makefile_targets(), "make %s: no such target in the Makefile" % target
    if "DEMO_ARGS" in variables:
        sys.path.insert(0, ROOT)
        try:
            from demo.__main__ import parse_args
            parse_args(shlex.split(variables["DEMO_ARGS"]) + ["--out", "/nonexistent"])
        finally:
            sys.path.remove(ROOT)
    for variable in variables:
        assert "$(%s)" % variable in _read(os.path.join(ROOT, "Makefile")), variable


def check_command(argv):
    if argv[0] == "make":
        check_make(argv)
    elif argv[0] == "pscheduler":
        check_pscheduler_task(argv)
    elif argv[0] in console_scripts():
        check_console_script(argv)
    else:
        raise AssertionError("no cheap check for %r" % " ".join(argv))


@pytest.mark.parametrize("argv", _readme_commands(), ids=_ids(_readme_commands()))
def test_every_readme_command_that_is_cheap_runs_here(argv):
    check_command(argv)


# -- the commands in docs/ ------------------------------------------------------------------

# Programs the docs show that cannot be checked here (package managers, HTTP, the
# real-pScheduler lab, pytest itself): named, so a new kind of command is looked at.
NOT_CHECKED_HERE = ("dnf", "apt", "curl", "lab/real_pscheduler/nodes.sh", ".venv/bin/python")


def check_module(module, args):
    """`python3 -m MODULE ARGS`: every option ARGS uses is in MODULE's --help."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "python-jumbo")]))
    helped = subprocess.run([sys.executable, "-m", module, "--help"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, universal_newlines=True, env=env, timeout=60,
                            cwd=ROOT)
    assert helped.returncode == 0, (module, helped.stderr)
    for option in _options(args):
        assert re.search(r"(^|[\s\[,])%s([\s=\],]|$)" % re.escape(option), helped.stdout,
                         re.M), "python3 -m %s: no option %s in its --help" % (module, option)


def check_script(path, args):
    helped = subprocess.run([sys.executable, os.path.join(ROOT, path), "--help"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True, timeout=60, cwd=ROOT)
    assert helped.returncode == 0, (path, helped.stderr)
    for option in _options(args):
        assert option in helped.stdout, "%s: no option %s in its --help" % (path, option)


def check_doc_command(argv):
    while argv and re.match(r"^[A-Z_]+=", argv[0]):          # VAR=value prefixes
        argv = argv[1:]
    program = argv[0]
    if program in NOT_CHECKED_HERE:
        return
    if program == "pscheduler" and argv[1] != "task":         # `pscheduler plugins ...`
        return
    if program in ("python3", "python") and argv[1] == "-m":
        check_module(argv[2], argv[3:])
    elif program.endswith(".py") and os.path.exists(os.path.join(ROOT, program)):
        check_script(program, argv[1:])
    else:
        check_command(argv)


def _doc_commands():
    found = []
    for path in sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))):
        for argv in shell_commands(_read(path)):
            segment = []
            for word in argv + ["|"]:
                if word == "|":
                    if segment:
                        found.append((os.path.relpath(path, ROOT), segment))
                    segment = []
                else:
                    segment.append(word)
    return found


@pytest.mark.parametrize("where,argv", _doc_commands(),
                         ids=["%s: %s" % (w, " ".join(a)[:60]) for w, a in _doc_commands()])
def test_every_docs_command_is_checked(where, argv):
    check_doc_command(argv)


# -- links ------------------------------------------------------------------------------------

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _markdown_files():
    return [README] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))


def relative_links(path, keep_anchor=False):
    links = []
    for target in LINK.findall(_read(path)):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):
            continue                                # a URL
        links.append(target if keep_anchor else target.split("#", 1)[0])
    return links


def anchors(path):
    """The anchors GitHub makes for a Markdown file's headings."""
    slugs = set()
    in_fence = False
    for line in _read(path).splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        elif not in_fence and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            slugs.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return slugs


@pytest.mark.parametrize("path", _markdown_files(),
                         ids=[os.path.relpath(p, ROOT) for p in _markdown_files()])
def test_every_relative_link_resolves(path):
    base = os.path.dirname(path)
    missing = []
    for link in relative_links(path, keep_anchor=True):
        name, _, anchor = link.partition("#")
        target = os.path.normpath(os.path.join(base, name)) if name else path
        if not os.path.exists(target):
            missing.append(link)
        elif anchor and target.endswith(".md") and anchor not in anchors(target):
            missing.append(link)
    assert not missing, "%s: links to missing files or headings: %s" % (
        os.path.relpath(path, ROOT), missing)


def test_the_link_check_sees_links():
    assert "docs/operator.md" in relative_links(README)


def test_the_checks_catch_what_they_should():
    """A command nobody runs, an option a command does not have, a spec the test refuses."""
    assert runners_of(["jumbocheck", "ps.example.org", "--flows", "3"]) is None
    with pytest.raises(AssertionError):
        check_console_script(["jumbo-report", "--store", "sqlite:///x.db", "--no-such-option"])
    with pytest.raises(AssertionError):
        check_pscheduler_task(["pscheduler", "task", "pmtu", "--dest", "ps.example.org",
                               "--flows", "0"])
    with pytest.raises(AssertionError):
        check_make(["make", "no-such-target"])
    with pytest.raises(AssertionError):
        check_doc_command(["python3", "-m", "jumbo.archive.opensearch.setup", "check",
                           "--no-such-option"])
    with pytest.raises(AssertionError):
        check_doc_command(["some-new-program", "--flag"])
    assert "known-issues" in anchors(os.path.join(ROOT, "docs", "operator.md"))
    assert "no-such-heading" not in anchors(os.path.join(ROOT, "docs", "operator.md"))
    assert shell_commands("```sh\nmake demo \\\n  DEMO_ARGS='--quick'  # short\n```\n") == \
        [["make", "demo", "DEMO_ARGS=--quick"]]
