"""What lab tests import by name (the repository root, the root-only marker).

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
