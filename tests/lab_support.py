"""What lab tests import by name (the repository root, the root-only marker, the process
table as /proc shows it).

Kept out of conftest.py: tests/integration/ has a conftest of its own, and two modules named
`conftest` on sys.path shadow each other, so `from conftest import ...` breaks a whole run.
"""

import os
import shutil

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _can_build_labs():
    return os.geteuid() == 0 and shutil.which("ip") is not None


needs_lab = pytest.mark.skipif(not _can_build_labs(), reason="namespace lab needs root and iproute2")


def _stat_fields(pid):
    """/proc/PID/stat from field 3 (state) on: ([0] the state, [1] the parent's PID)."""
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()


def running(pid):
    """True while the process is there and not a zombie (a zombie nobody reaps is ended)."""
    try:
        return _stat_fields(pid)[0] != "Z"
    except (OSError, IndexError):
        return False


def process_tree(roots):
    """`roots` and every process descended from them that is running now."""
    children = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                children.setdefault(int(_stat_fields(int(name))[1]), []).append(int(name))
            except (OSError, IndexError, ValueError):
                continue    # ended meanwhile
    tree, todo = [], list(roots)
    while todo:
        pid = todo.pop()
        if running(pid):
            tree.append(pid)
            todo.extend(children.get(pid, ()))
    return tree
