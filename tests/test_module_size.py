"""The shape rule every module of the repository keeps (the developers' guide): modules
under 450 lines, in the library and the plugins as much as in demo, bench, psconfig, lab,
tests and scripts; a module that grows past that is split by phase or concern."""

import os


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULE_LINES = 450
SKIPPED_DIRS = {".git", ".venv", "var", "node_modules", "__pycache__", "build"}


def python_files(root):
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not d.startswith(".")]
        for name in files:
            if name.endswith(".py"):
                yield os.path.join(folder, name)


def test_every_module_in_the_repository_is_under_450_lines():
    long = []
    for path in python_files(ROOT):
        with open(path, encoding="utf-8") as handle:
            count = sum(1 for _ in handle)
        if count >= MODULE_LINES:
            long.append("%s: %d lines" % (os.path.relpath(path, ROOT), count))
    assert not long, "\n".join(long)


def test_the_line_count_sees_a_long_module(tmp_path):
    (tmp_path / "long.py").write_text("x = 1\n" * MODULE_LINES)
    (tmp_path / "short.py").write_text("x = 1\n" * (MODULE_LINES - 1))
    assert [os.path.basename(p) for p in python_files(str(tmp_path))
            if sum(1 for _ in open(p)) >= MODULE_LINES] == ["long.py"]
