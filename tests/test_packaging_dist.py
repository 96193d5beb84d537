"""`make dist` and what packagers get from it: the tarball `rpmbuild -ta` and `dpkg-buildpackage`
build from, the maintainer as one variable the builder must set, and the lint verdicts of
scripts/check-packaging.sh (tests/packaging_build.py builds once per session).
"""

import os
import re
import subprocess
import tarfile

import pytest

pytest_plugins = ["packaging_build"]
pytest.register_assert_rewrite("packaging_build")

from packaging_build import (DEB_DIR, MAINTAINER, RPM_DIR, ROOT, build_env, check_packaging,  # noqa: E402
                             run, version)

VERSION = version()
# Every file that names the maintainer; in the tree each holds only the placeholder.
STAMPED = ["rpm/jumbo.spec", "debian/control", "debian/changelog"]


def _dist(tmp_path, **env):
    return subprocess.run(["bash", "scripts/make-tarball.sh", str(tmp_path)], cwd=ROOT,
                          env=build_env(**env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)


def test_dist_tarball_is_what_rpmbuild_ta_and_dpkg_buildpackage_need(tmp_path):
    proc = _dist(tmp_path)
    assert proc.returncode == 0, proc.stderr
    path = proc.stdout.strip()
    assert path == str(tmp_path / ("jumbo-%s.tar.gz" % VERSION))
    top = "jumbo-%s" % VERSION
    with tarfile.open(path) as tar:
        names = tar.getnames()
        # one top directory
        assert {n.split("/")[0] for n in names} == {top}
        # exactly one spec (`rpmbuild -ta` concatenates all it finds), the debian/ dir, man pages
        assert [n for n in names if n.endswith(".spec")] == [top + "/rpm/jumbo.spec"]
        for need in ("debian/control", "debian/rules", "debian/changelog", "debian/copyright",
                     "scripts/pkg-install.sh", "LICENSE", "python-jumbo/setup.py",
                     "docs/man/jumbocheck.1"):
            assert "%s/%s" % (top, need) in names, need
        # nothing of the development set-up or the build
        assert not [n for n in names if re.search(r"/(\.venv|build|var|tests|fixtures)/|\.pyc$", n)]
        texts = {n: tar.extractfile(n).read().decode() for n in names
                 if (n.startswith((top + "/rpm/", top + "/debian/", top + "/docs/man/")) or
                     n == top + "/python-jumbo/jumbo/__init__.py") and tar.getmember(n).isfile()}
    assert not [n for n, t in texts.items() if "@JUMBO_" in t]
    spec = texts[top + "/rpm/jumbo.spec"]
    assert "%%global jumbo_version %s\n" % VERSION in spec
    assert "Packager:       %s\n" % MAINTAINER in spec
    assert "Source0:        jumbo-%{version}.tar.gz" in spec
    control = texts[top + "/debian/control"]
    assert "\nMaintainer: %s\n" % MAINTAINER in control
    # the plugins' maintainer (`pscheduler plugins`) is the same value
    assert '__maintainer__ = "%s"' % MAINTAINER in texts[top + "/python-jumbo/jumbo/__init__.py"]
    changelog = texts[top + "/debian/changelog"].splitlines()
    assert changelog[0].startswith("pscheduler-jumbo (%s-1) " % VERSION)
    assert [line for line in changelog if line.startswith(" -- ")][0].startswith(" -- %s  " % MAINTAINER)
    # the same bytes twice: reproducible
    again = tmp_path / "again"
    assert _dist(again).returncode == 0
    with open(path, "rb") as a, open(str(again / os.path.basename(path)), "rb") as b:
        assert a.read() == b.read()


@pytest.mark.parametrize("value", [None, "", "nobody", "Jane <jane@localhost>", "Jane <jane@example.net> x",
                                   "Jane & co <jane@example.net>", "Jane\n<jane@example.net>",
                                   "Jane | sed <jane@example.net>"])
def test_dist_refuses_an_unset_or_malformed_maintainer(tmp_path, value):
    env = build_env()
    if value is None:
        del env["JUMBO_MAINTAINER"]
    else:
        env["JUMBO_MAINTAINER"] = value
    proc = subprocess.run(["bash", "scripts/make-tarball.sh", str(tmp_path)], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert proc.returncode == 2, proc.stdout
    assert "JUMBO_MAINTAINER" in proc.stderr
    assert not os.listdir(str(tmp_path))


def test_dist_refuses_a_bad_release(tmp_path):
    proc = _dist(tmp_path, JUMBO_RELEASE="1; rm")
    assert proc.returncode == 2 and "JUMBO_RELEASE" in proc.stderr


def test_maintainer_is_one_variable_in_the_tree():
    """No made-up address anywhere in the packaging: the placeholder, filled by `make dist`."""
    for rel in STAMPED:
        with open(os.path.join(ROOT, rel)) as f:
            text = f.read()
        assert "@JUMBO_MAINTAINER@" in text, rel
        assert not re.search(r"[\w.-]+@example\.(org|com|net)", text), rel
    for rel in os.listdir(os.path.join(ROOT, "debian")):
        path = os.path.join(ROOT, "debian", rel)
        if os.path.isfile(path):
            with open(path) as f:
                assert "example.org" not in f.read(), rel


def test_built_packages_name_the_builders_maintainer(rpms, debs):
    for path in rpms.values():
        assert run(["rpm", "-qp", "--queryformat", "%{PACKAGER}", path]) == MAINTAINER
        assert MAINTAINER in run(["rpm", "-qp", "--changelog", path])
    for path in debs.values():
        assert run(["dpkg-deb", "-f", path, "Maintainer"]).strip() == MAINTAINER


def test_rpmlint_and_lintian_report_no_errors(rpms, debs):
    out = check_packaging()
    assert out.rstrip().endswith("check-packaging: OK")
    with open(os.path.join(RPM_DIR, "rpmlint.log")) as f:
        log = f.read()
    checked = re.search(r"(\d+) packages and (\d+) specfiles checked; (\d+) errors", log)
    assert checked and checked.groups() == (str(len(rpms) + 1), "1", "0"), log[-2000:]
    with open(os.path.join(DEB_DIR, "lintian.log")) as f:
        log = f.read()
    assert not re.search(r"^E: ", log, re.M), log
    # lintian looked at every package (each has at least its changelog warning or nothing):
    # the log names no package that is not one of ours
    assert set(re.findall(r"^[EWIP]: ([\w.+-]+):", log, re.M)) <= set(debs)


def test_packaging_targets_run_no_development_setup():
    """`make dist/rpm/deb/check-packaging` need only the packaging tools (not scripts/setup.sh)."""
    for target in ("dist", "rpm", "deb", "check-packaging", "check-clean-build"):
        plan = run(["make", "-n", "-C", ROOT, target])
        assert "setup.sh" not in plan, (target, plan)
        assert "scripts/" in plan, (target, plan)


def test_check_packaging_names_missing_tools(tmp_path):
    """Without the packaging tools the check says which, and fails before building anything."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "dirname", "env"):  # a shell and nothing of the packaging tools
        os.symlink(run(["sh", "-c", "command -v %s" % tool]).strip(), str(bin_dir / tool))
    proc = subprocess.run(["bash", "scripts/check-packaging.sh"], cwd=ROOT,
                          env=build_env(PATH=str(bin_dir)), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)
    assert proc.returncode == 1
    for tool in ("rpmbuild (rpm)", "rpmlint (rpmlint)", "dpkg-buildpackage (dpkg-dev)",
                 "lintian (lintian)"):
        assert tool in proc.stderr, proc.stderr
