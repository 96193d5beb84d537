"""The repository's shape, as the developers' guide states it (docs/developer.md, "Code shape"
and "Where the tests are"):

- no Python file anywhere in the repository over 450 lines (library, plugins, demo, bench,
  psconfig, lab, fixtures, scripts and the tests themselves);
- a library module's tests are found by its name: tests/test_<layer>_<module>[_<aspect>].py
  names a real module of jumbo.<layer>, and every library module is imported by a test or has
  a test file named after it, but for the modules listed in UNTESTED_BY_NAME (the debt, to
  shrink: a module leaves the list when a test names it).
"""

import ast
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBRARY = os.path.join(ROOT, "python-jumbo")
TESTS = os.path.join(ROOT, "tests")
MAX_LINES = 450
LAYERS = ("core", "probe", "archive", "tool", "report", "testtype", "protocol")
# What a checkout may hold besides the project's own files (a walk skips them when git cannot
# list the tracked files, as in an unpacked release tarball).
NOT_OURS = {".git", ".venv", ".venv-js301", "var", "build", "dist", "__pycache__", "node_modules"}

# Library modules no test imports and no test file is named after, on 2026-11-26: each is
# exercised only through another module's tests. New modules may not join this list.
UNTESTED_BY_NAME = {
    "jumbo.archive.opensearch.evidence",
    "jumbo.archive.opensearch.rows",
    "jumbo.archive.sqlite.evidence",
    "jumbo.tool.throughput.__main__",
}

# Top-level test files named after a concern that crosses a layer's modules rather than after
# one module (better placed in a campaign folder; none may be added).
CROSS_MODULE = {
    "test_protocol_short_limits.py": "the protocol methods pScheduler gives 5 s load no enumeration",
}


def python_files(root=ROOT):
    """Every tracked .py file (git ls-files), or every .py file of the tree outside NOT_OURS
    when this is not a git checkout."""
    try:
        listed = subprocess.run(["git", "-C", root, "ls-files", "-z", "--", "*.py"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=60)
    except OSError:
        listed = None
    if listed is not None and listed.returncode == 0:
        names = [n for n in listed.stdout.decode("utf-8", "replace").split("\0") if n]
        return [n for n in names if os.path.isfile(os.path.join(root, n))]
    found = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in NOT_OURS]
        found += [os.path.relpath(os.path.join(directory, f), root) for f in files
                  if f.endswith(".py")]
    return found


def over_long(root=ROOT, limit=MAX_LINES):
    """[(path, lines)] of the Python files over `limit` lines."""
    out = []
    for name in python_files(root):
        with open(os.path.join(root, name), "rb") as handle:
            lines = handle.read().count(b"\n")
        if lines > limit:
            out.append((name, lines))
    return sorted(out)


def library_modules(library=LIBRARY):
    """Dotted names of the library's modules (a package by its own name)."""
    modules = set()
    for directory, _, files in os.walk(os.path.join(library, "jumbo")):
        for name in files:
            if name.endswith(".py"):
                dotted = os.path.relpath(os.path.join(directory, name), library)[:-3]
                dotted = dotted.replace(os.sep, ".")
                modules.add(dotted[:-len(".__init__")] if dotted.endswith(".__init__") else dotted)
    return modules


def imported_by_tests(tests=TESTS):
    """Every name a test file imports, as `a.b` for `import a.b` and `a.b` and `a.b.c` for
    `from a.b import c` (c may be a module)."""
    names = set()
    for directory, _, files in os.walk(tests):
        for file_name in files:
            if not file_name.endswith(".py"):
                continue
            with open(os.path.join(directory, file_name)) as handle:
                tree = ast.parse(handle.read())
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names.update(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    names.add(node.module)
                    names.update("%s.%s" % (node.module, alias.name) for alias in node.names)
    return names


def module_named_by(test_file, modules):
    """The library module a tests/test_<layer>_<rest>.py file is named after: the longest
    jumbo.<layer>.<...> whose dotted path, spelt with underscores, starts <rest> (what
    follows is the aspect tested); the layer package itself when <rest> is empty. None when
    the file is not named after a layer, "" when it names no module of it."""
    stem = os.path.basename(test_file)[len("test_"):-len(".py")]
    layer, _, rest = stem.partition("_")
    if layer not in LAYERS:
        return None
    if not rest:
        return "jumbo." + layer
    best = ""
    for module in modules:
        if not module.startswith("jumbo.%s." % layer):
            continue
        spelt = module[len("jumbo.%s." % layer):].replace(".", "_")
        if (rest == spelt or rest.startswith(spelt + "_")) and len(module) > len(best):
            best = module
    return best


def top_level_test_files(tests=TESTS):
    return sorted(f for f in os.listdir(tests) if f.startswith("test_") and f.endswith(".py"))


def test_no_python_file_is_over_450_lines():
    long_files = over_long()
    assert not long_files, "over %d lines (split them by concern): %s" % (
        MAX_LINES, ", ".join("%s (%d)" % item for item in long_files))


def test_a_test_file_named_after_a_layer_names_one_of_its_modules():
    modules = library_modules()
    wrong = [f for f in top_level_test_files()
             if module_named_by(f, modules) == "" and f not in CROSS_MODULE]
    assert not wrong, ("tests/test_<layer>_<module>[_<aspect>].py must name a module of that "
                       "layer; these do not: %s" % ", ".join(wrong))


def test_every_library_module_has_a_test_that_names_it():
    modules = library_modules()
    named = imported_by_tests() | set(
        filter(None, (module_named_by(f, modules) for f in top_level_test_files())))
    untested = sorted(m for m in modules if m not in named and m not in UNTESTED_BY_NAME)
    assert not untested, ("no test imports these modules and no tests/test_<layer>_<module>.py "
                          "is named after them: %s" % ", ".join(untested))


# -- the checks themselves find what they look for -----------------------------------------------

def _tree(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return str(tmp_path)


def test_the_line_count_finds_a_long_file_anywhere(tmp_path):
    root = _tree(tmp_path, {"bench/long.py": "x = 1\n" * 451, "demo/short.py": "x = 1\n" * 450,
                            ".venv/lib/huge.py": "x = 1\n" * 999, "notes.txt": "x\n" * 999})
    assert over_long(root) == [(os.path.join("bench", "long.py"), 451)]


@pytest.mark.parametrize("name,expected", [
    ("test_archive_opensearch_client.py", "jumbo.archive.opensearch.client"),
    ("test_plugin_pmtu_format.py", None),
    ("test_report.py", "jumbo.report"),
    ("test_report_prometheus_answer.py", "jumbo.report.prometheus_answer"),
    ("test_report_prometheus_anything.py", "jumbo.report.prometheus"),
    ("test_probe_engine_sim.py", "jumbo.probe.engine"),
    ("test_tool_nothing_here.py", ""),
])
def test_a_file_name_maps_to_its_module(name, expected):
    modules = {"jumbo.archive.opensearch.client", "jumbo.archive.opensearch", "jumbo.report",
               "jumbo.report.prometheus", "jumbo.report.prometheus_answer", "jumbo.probe.engine",
               "jumbo.tool", "jumbo.tool.dest"}
    assert module_named_by(name, modules) == expected


def test_imports_are_read_from_every_test_file(tmp_path):
    tests = _tree(tmp_path, {"test_a.py": "from jumbo.tool import dest\n",
                             "lab/test_b.py": "def f():\n    import jumbo.probe.wire\n",
                             "test_c.py": "from . import jumbo\nS = 'import jumbo.core.units'\n"})
    names = imported_by_tests(tests)
    assert {"jumbo.tool", "jumbo.tool.dest", "jumbo.probe.wire"} <= names
    assert "jumbo.core.units" not in names


def test_the_debt_list_holds_only_modules_still_untested():
    """A module leaves UNTESTED_BY_NAME when a test names it, or when it is gone: a stale entry
    would let that module lose its tests again unnoticed."""
    modules = set(library_modules())
    named = imported_by_tests() | set(
        filter(None, (module_named_by(f, modules) for f in top_level_test_files())))
    stale = sorted(m for m in UNTESTED_BY_NAME if m in named or m not in modules)
    assert not stale, "tested or gone, remove from UNTESTED_BY_NAME: %s" % ", ".join(stale)


def test_no_library_function_is_graded_d_or_worse():
    """Cyclomatic complexity (radon's grades): a function over 20 (D or worse) is split into
    named phases, as the library's functions are today."""
    from radon.complexity import cc_rank, cc_visit
    worst = []
    for module in library_modules():
        path = os.path.join(LIBRARY, *module.split(".")) + ".py"
        if not os.path.exists(path):
            path = os.path.join(LIBRARY, *module.split("."), "__init__.py")
        with open(path) as handle:
            blocks = cc_visit(handle.read())
        for block in blocks:
            for item in [block] + list(getattr(block, "methods", [])):
                if cc_rank(item.complexity) > "C":
                    worst.append("%s %s %s(%d)" % (module, item.name, cc_rank(item.complexity),
                                                   item.complexity))
    assert not worst, "split these into named phases: %s" % ", ".join(sorted(set(worst)))
