"""The packages, built once per test session the packagers' way (scripts/check-packaging.sh):
`make dist`, `rpmbuild -ta` on the tarball, rpmlint, `dpkg-buildpackage -us -uc -b` in the
unpacked tree, lintian. Shared by tests/test_packaging*.py.

The build is cached in this module, not only by pytest: a session fixture imported into
several test modules is one fixture per module, and the build takes a minute.
"""

import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The builder's one variable (scripts/make-tarball.sh); a test build's, on a documentation domain.
MAINTAINER = "jumbo test build <test-build@example.net>"
LIBRARY = "python3-jumbo"
RPM_DIR = os.path.join(ROOT, "build", "rpm")
DEB_DIR = os.path.join(ROOT, "build", "deb")

_BUILT = {}


def version():
    with open(os.path.join(ROOT, "python-jumbo", "jumbo", "__init__.py")) as f:
        return re.search(r'__version__\s*=\s*"([^"]+)"', f.read()).group(1)


def run(argv, **kwargs):
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, **kwargs)
    assert proc.returncode == 0, "%s failed (%d):\n%s\n%s" % (
        " ".join(argv), proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:])
    return proc.stdout


def build_env(**extra):
    env = dict(os.environ, JUMBO_MAINTAINER=MAINTAINER)
    env.pop("JUMBO_RELEASE", None)
    env.update(extra)
    return env


def check_packaging():
    """The output of scripts/check-packaging.sh (built once; it must pass)."""
    if "out" not in _BUILT:
        _BUILT["out"] = run(["bash", "scripts/check-packaging.sh"], cwd=ROOT, env=build_env())
    return _BUILT["out"]


@pytest.fixture(scope="session")
def rpms():
    """{package name: path} of the binary RPMs."""
    check_packaging()
    found = {}
    rpmdir = os.path.join(RPM_DIR, "RPMS", "noarch")
    for name in os.listdir(rpmdir):
        pkg = run(["rpm", "-qp", "--queryformat", "%{NAME}", os.path.join(rpmdir, name)])
        found[pkg] = os.path.join(rpmdir, name)
    return found


@pytest.fixture(scope="session")
def debs():
    """{package name: path} of the .debs."""
    check_packaging()
    return {name.split("_")[0]: os.path.join(DEB_DIR, name)
            for name in os.listdir(DEB_DIR) if name.endswith(".deb")}


def unpack_rpm(path, dest):
    """Unpack with rpm's own rpm2archive (payload as a tar stream): no cpio needed."""
    os.makedirs(dest, exist_ok=True)
    subprocess.run("rpm2archive - < '%s' | tar -xzf - -C '%s'" % (path, dest), shell=True, check=True)


def rpm_files(path):
    """{file name: mode} from the package header."""
    out = run(["rpm", "-qp", "--queryformat", "[%{FILEMODES:octal} %{FILENAMES}\\n]", path])
    files = {}
    for line in out.splitlines():
        mode, name = line.split(" ", 1)
        files[name] = int(mode, 8)
    return files


def deb_files(path):
    """{path: mode string} from dpkg-deb -c."""
    files = {}
    for line in run(["dpkg-deb", "-c", path]).splitlines():
        parts = line.split(None, 5)
        perms, name = parts[0], parts[5]
        name = name[1:] if name.startswith(".") else name
        files[name.rstrip("/") or "/"] = perms
    return files
