"""The packages an operator installs: real rpmbuild and dpkg-buildpackage, checked with rpm -qp / dpkg-deb.

Both builds run once per session, the packagers' way (tests/packaging_build.py runs
scripts/check-packaging.sh: `rpmbuild -ta` on the `make dist` tarball, `dpkg-buildpackage` in its
tree, rpmlint and lintian; about a minute). The tarball, the maintainer and the lint verdicts
are tests/test_packaging_dist.py's; the man pages tests/test_packaging_man.py's.
The file lists are compared with the plugin directories in the tree (globbed, so a new helper
module is expected in the package without a change here); the pScheduler method sets required
by the plugin contract are asserted by name. The packaged plugins are then unpacked and run
against the packaged library, which proves the package is complete, not only well-formed.
"""

import json
import os
import re
import stat
import subprocess
import sys

import pytest

# The session fixtures `rpms` and `debs`, registered once for every packaging test module.
pytest_plugins = ["packaging_build"]
pytest.register_assert_rewrite("packaging_build")

from packaging_build import LIBRARY, ROOT, deb_files, rpm_files, run, unpack_rpm, version  # noqa: E402

TEST_METHODS = ["enumerate", "spec-is-valid", "participants", "cli-to-spec", "spec-to-cli",
                "result-format", "spec-format"]
TOOL_METHODS = ["enumerate", "can-run", "duration", "participant-data", "run", "merged-results"]
ARCHIVER_METHODS = ["enumerate", "data-is-valid", "archive"]

# package name -> (plugin class, plugin name, source dir, the contract's methods)
PLUGINS = {
    "pscheduler-test-pmtu": ("test", "pmtu", "pscheduler-test-pmtu/pmtu", TEST_METHODS),
    "pscheduler-test-jumbo-throughput": ("test", "jumbo-throughput",
                                         "pscheduler-test-jumbo-throughput/jumbo-throughput",
                                         TEST_METHODS),
    "pscheduler-tool-jumbocheck": ("tool", "jumbocheck", "pscheduler-tool-jumbocheck/jumbocheck",
                                   TOOL_METHODS),
    "pscheduler-archiver-jumbo": ("archiver", "jumbo", "pscheduler-archiver-jumbo/jumbo",
                                  ARCHIVER_METHODS),
}
RPM_CLASSES = "/usr/libexec/pscheduler/classes"
DEB_CLASSES = "/usr/lib/pscheduler/classes"
# the pSConfig Grafana agent's display config and the pair page it renders (matrix_url_template)
GRAFANA_DATADIR = "/usr/share/pscheduler-archiver-jumbo"
GRAFANA_FILES = ("psconfig-grafana-agent-pmtu.json", "grafana-pmtu-pair-agent.json.j2")
# The template validator and the checks it imports from its own directory.
VALIDATOR_FILES = ("validate_template.py", "validate_structure.py", "validate_expand.py",
                   "validate_plugins.py")
DEB_SITELIB = "/usr/lib/python3/dist-packages"


VERSION = version()
# perfSONAR 5.2 and 5.3 both name the server pscheduler-server (5.3 development: 5.3.0-0.a1).
RPM_SERVER = "pscheduler-server >= 5.2.0"
DEB_SERVER = "pscheduler-server (>= 5.2~)"


def _skipped(name):
    """The files scripts/pkg-install.sh leaves out."""
    return (name in ("__pycache__", "Makefile", "tests") or name.startswith(".")
            or name.endswith((".pyc", ".pyo", "~")))


def _tree(src):
    """{relative path: mode} of what a package must hold for the source directory `src`."""
    expected = {}
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = [d for d in dirnames if not _skipped(d)]
        for name in filenames:
            if _skipped(name):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, src)
            expected[rel] = 0o755 if os.access(path, os.X_OK) else 0o644
    return expected


def _plugin_present(pkg):
    return os.path.isfile(os.path.join(ROOT, PLUGINS[pkg][2], "enumerate"))


def _require_plugin(pkg):
    assert _plugin_present(pkg), "%s: plugin directory %s is missing" % (pkg, PLUGINS[pkg][2])


_run = run


# ---------------------------------------------------------------------------------------------
# RPM


def _rpm_requires(path):
    return [line.strip() for line in _run(["rpm", "-qpR", path]).splitlines()]


def test_rpm_names_versions_and_arch(rpms):
    assert LIBRARY in rpms
    for pkg, path in rpms.items():
        info = _run(["rpm", "-qp", "--queryformat", "%{NAME} %{VERSION} %{RELEASE} %{ARCH}", path])
        name, version, release, arch = info.split()
        assert (name, version, arch) == (pkg, VERSION, "noarch")
        assert release.startswith("1")
        assert os.path.basename(path) == "%s-%s-%s.noarch.rpm" % (name, version, release)
    # one source package, as `rpmbuild -ta` makes it from the tarball's one spec
    srpms = os.listdir(os.path.join(ROOT, "build", "rpm", "SRPMS"))
    assert srpms == ["jumbo-%s-%s.src.rpm" % (VERSION, release)]


@pytest.mark.parametrize("pkg", sorted(PLUGINS))
def test_rpm_plugin_files_and_modes(rpms, pkg):
    _require_plugin(pkg)
    cls, name, src, methods = PLUGINS[pkg]
    files = rpm_files(rpms[pkg])
    dest = "%s/%s/%s" % (RPM_CLASSES, cls, name)
    assert stat.S_ISDIR(files.pop(dest))
    if pkg == "pscheduler-archiver-jumbo":  # the coordinator's template and dashboards ride along
        # and the embedded store's directory (the archiver's default store)
        assert stat.S_ISDIR(files.pop("/var/lib/jumbo"))
        docs = {f: m for f, m in files.items() if f.startswith("/usr/share/doc/")}
        for f, m in docs.items():
            del files[f]
            assert stat.S_ISDIR(m) or stat.S_IMODE(m) == 0o644, f
        # the template validator docs/coordinator.md tells coordinators to run
        for script in VALIDATOR_FILES:
            assert any(f.endswith("/archiver/jumbo/" + script) for f in docs), sorted(docs)
        # the Grafana agent's displays and pair page, where matrix_url_template points
        grafana = {f: m for f, m in files.items() if f.startswith(GRAFANA_DATADIR)}
        for f in grafana:
            del files[f]
        assert {f: stat.S_IMODE(m) for f, m in grafana.items() if not stat.S_ISDIR(m)} == \
            {GRAFANA_DATADIR + "/grafana/" + n: 0o644 for n in GRAFANA_FILES}
    assert stat.S_IMODE(files.pop("/usr/share/licenses/%s-%s/LICENSE" % (pkg, VERSION))) == 0o644
    files.pop("/usr/share/licenses/%s-%s" % (pkg, VERSION))
    packaged = {}
    for path, mode in files.items():
        assert path.startswith(dest + "/"), "%s installs %s outside %s" % (pkg, path, dest)
        if not stat.S_ISDIR(mode):
            packaged[path[len(dest) + 1:]] = stat.S_IMODE(mode)
    assert packaged == _tree(os.path.join(ROOT, src))
    for method in methods:
        assert packaged.get(method) == 0o755, "%s: method %s missing or not 0755" % (pkg, method)


def test_rpm_library_files(rpms):
    files = rpm_files(rpms[LIBRARY])
    sitelib = [f for f in files if f.endswith("/site-packages/jumbo")]
    assert len(sitelib) == 1, sorted(files)[:5]
    base = sitelib[0]
    packaged = {f[len(base) + 1:]: stat.S_IMODE(m) for f, m in files.items()
                if f.startswith(base + "/") and not stat.S_ISDIR(m) and "__pycache__" not in f}
    expected = {rel: 0o644 for rel in _tree(os.path.join(ROOT, "python-jumbo", "jumbo"))}
    assert packaged == expected
    # byte-compiled at build time (the pscheduler user cannot write __pycache__)
    # (what every method imports, in each node-side package)
    for module in ("core/schema", "protocol/method", "testtype/spec", "tool/runner", "archive/archiver",
                   "archive/sqlite/store"):
        folder, name = module.rsplit("/", 1)
        pattern = r"/jumbo/%s/__pycache__/%s\.cpython-\d+\.pyc$" % (folder, name)
        assert any(re.search(pattern, f) for f in files), module
    # every console command of setup.py
    commands = [f for f in files if f.startswith("/usr/bin/")]
    for cmd in commands:
        assert stat.S_IMODE(files[cmd]) == 0o755
    assert sorted(commands) == ["/usr/bin/jumbo-alarms", "/usr/bin/jumbo-fireflies", "/usr/bin/jumbo-replay",
                                "/usr/bin/jumbo-report", "/usr/bin/jumbocheck"]
    # test fixtures stay in the source tree (fixtures/), off the nodes
    assert not any(f.endswith(("samples.py", "synth.py")) for f in packaged), sorted(packaged)


def test_rpm_requires(rpms):
    lib = _rpm_requires(rpms[LIBRARY])
    assert "python3" in lib
    assert any(r.startswith("python3-jsonschema") for r in lib)
    for pkg in PLUGINS:
        if pkg not in rpms:
            continue
        req = _rpm_requires(rpms[pkg])
        assert RPM_SERVER in req, (pkg, req)
        assert "python3-jumbo = %s-1" % VERSION in req, (pkg, req)
        assert "python3" in req
    req = _rpm_requires(rpms["pscheduler-tool-jumbocheck"])
    # iperf3 with authentication (>= 3.7); perfSONAR's EL repositories ship it as `iperf3`
    for dep in ("iperf3 >= 3.7", "openssl", "pscheduler-test-pmtu = %s-1" % VERSION,
                "pscheduler-test-jumbo-throughput = %s-1" % VERSION):
        assert dep in req, (dep, req)
    # the methods name the system interpreter (EL guidelines), not /usr/bin/env
    assert "/usr/bin/env" not in req, req


@pytest.mark.parametrize("pkg", sorted(PLUGINS))
def test_rpm_warmboot_scriptlets(rpms, pkg, tmp_path):
    """%post/%postun warm boot pScheduler, and do not fail when it is absent or broken."""
    _require_plugin(pkg)
    for tag in ("POSTIN", "POSTUN"):
        script = _run(["rpm", "-qp", "--queryformat", "%%{%s}" % tag, rpms[pkg]])
        assert "pscheduler internal warmboot" in script
        # 1. no pscheduler command at all
        proc = subprocess.run(["/bin/sh", "-c", script, "x", "1"], env={"PATH": str(tmp_path)})
        assert proc.returncode == 0
        # 2. a pscheduler that fails (database down): still not an install failure
        fake = tmp_path / "pscheduler"
        log = tmp_path / "calls"
        fake.write_text("#!/bin/sh\necho \"$@\" >> %s\nexit 3\n" % log)
        fake.chmod(0o755)
        proc = subprocess.run(["/bin/sh", "-c", script, "x", "1"],
                              env={"PATH": "%s:/usr/bin:/bin" % tmp_path})
        assert proc.returncode == 0
        assert log.read_text().splitlines()[-1] == "internal warmboot"


def _plugin_env(sitelib):
    env = dict(os.environ)
    # the interpreter with jsonschema (the suite's venv), the library from the package only
    env["PATH"] = os.path.dirname(sys.executable) + ":/usr/bin:/bin"
    env["PYTHONPATH"] = sitelib
    env.pop("PYTHONHOME", None)
    return env


def _check_unpacked_plugins(root, classes, sitelib):
    """Run enumerate of every packaged plugin: its name must be its directory's (contract 1)."""
    env = _plugin_env(sitelib)
    probe = _run([sys.executable, "-c", "import jumbo; print(jumbo.__file__)"], env=env)
    assert probe.startswith(sitelib), probe  # the packaged library, not the tree's
    checked = 0
    for pkg, (cls, name, _src, _methods) in PLUGINS.items():
        plugin_dir = os.path.join(root, classes.lstrip("/"), cls, name)
        if not os.path.isdir(plugin_dir):
            continue
        out = _run([os.path.join(plugin_dir, "enumerate")], env=env, stdin=subprocess.DEVNULL)
        enum = json.loads(out)
        assert enum["name"] == name
        checked += 1
        if cls == "test":
            spec = {"schema": 1, "dest": "192.0.2.1", "ip-version": 4}
            out = _run([os.path.join(plugin_dir, "spec-is-valid")], env=env, input=json.dumps(spec))
            assert json.loads(out)["valid"] is True, out
    return checked


def test_rpm_unpacked_plugins_run_on_packaged_library(rpms, tmp_path):
    for path in rpms.values():
        unpack_rpm(path, str(tmp_path))
    sitelib = [os.path.join(dp, d) for dp, dn, _ in os.walk(str(tmp_path)) for d in dn
               if d == "site-packages"]
    assert len(sitelib) == 1
    assert _check_unpacked_plugins(str(tmp_path), RPM_CLASSES, sitelib[0]) == len(rpms) - 1


# ---------------------------------------------------------------------------------------------
# Debian


def _perm_bits(perms):
    bits = 0
    for i, ch in enumerate(perms[1:10]):
        if ch != "-":
            bits |= 1 << (8 - i)
    return bits


def _deb_depends(path):
    return [d.strip() for d in _run(["dpkg-deb", "-f", path, "Depends"]).split(",")]


def test_deb_names_versions(debs):
    assert sorted(debs) == sorted([LIBRARY] + list(PLUGINS))
    for pkg, path in debs.items():
        assert _run(["dpkg-deb", "-f", path, "Version"]).strip() == VERSION + "-1"
        assert _run(["dpkg-deb", "-f", path, "Architecture"]).strip() == "all"
        assert _run(["dpkg-deb", "-f", path, "Package"]).strip() == pkg


@pytest.mark.parametrize("pkg", sorted(PLUGINS))
def test_deb_plugin_files_and_modes(debs, pkg):
    cls, name, src, methods = PLUGINS[pkg]
    files = deb_files(debs[pkg])
    dest = "%s/%s/%s" % (DEB_CLASSES, cls, name)
    assert files[dest].startswith("d")
    packaged = {p[len(dest) + 1:]: _perm_bits(m) for p, m in files.items()
                if p.startswith(dest + "/") and not m.startswith("d")}
    assert packaged == _tree(os.path.join(ROOT, src))
    for method in methods:
        assert packaged.get(method) == 0o755, "%s: method %s missing or not 0755" % (pkg, method)
    # nothing outside the plugin directory but docs
    for path, perms in files.items():
        if not perms.startswith("d"):
            assert path.startswith((dest + "/", "/usr/share/doc/", GRAFANA_DATADIR + "/")), path
    if pkg == "pscheduler-archiver-jumbo":
        assert {p for p, m in files.items() if p.startswith(GRAFANA_DATADIR + "/")
                and not m.startswith("d")} == {GRAFANA_DATADIR + "/grafana/" + n for n in GRAFANA_FILES}


def test_deb_library_files(debs):
    files = deb_files(debs[LIBRARY])
    base = DEB_SITELIB + "/jumbo"
    packaged = {p[len(base) + 1:]: _perm_bits(m) for p, m in files.items()
                if p.startswith(base + "/") and not m.startswith("d")}
    assert packaged == {rel: 0o644 for rel in _tree(os.path.join(ROOT, "python-jumbo", "jumbo"))}
    assert _perm_bits(files["/usr/bin/jumbocheck"]) == 0o755
    assert not any(p.endswith(("/samples.py", "/synth.py")) for p in packaged), sorted(packaged)
    docs = [p for p in deb_files(debs["pscheduler-archiver-jumbo"]) if p.startswith("/usr/share/doc/")]
    for script in VALIDATOR_FILES:
        assert any(p.endswith("/archiver/jumbo/" + script) for p in docs), docs


def test_deb_depends_and_triggers(debs, tmp_path):
    lib = _deb_depends(debs[LIBRARY])
    assert any(d.startswith("python3-jsonschema") for d in lib)
    for pkg in PLUGINS:
        dep = _deb_depends(debs[pkg])
        assert DEB_SERVER in dep, (pkg, dep)
        assert "python3-jumbo (= %s-1)" % VERSION in dep, (pkg, dep)
        # pscheduler-server's postinst warm boots on this trigger (install, upgrade, removal)
        ctrl = tmp_path / pkg
        _run(["dpkg-deb", "-e", debs[pkg], str(ctrl)])
        with open(str(ctrl / "triggers")) as f:
            assert "activate-noawait pscheduler-warmboot" in f.read().split("\n")
    dep = _deb_depends(debs["pscheduler-tool-jumbocheck"])
    # iperf3 with authentication; perfSONAR's Debian repositories also ship it as iperf3-ssl3
    for name in ("iperf3 (>= 3.7) | iperf3-ssl3 (>= 3.7)", "openssl", "pscheduler-test-pmtu (= %s-1)" % VERSION,
                 "pscheduler-test-jumbo-throughput (= %s-1)" % VERSION):
        assert name in dep, (name, dep)


def test_deb_unpacked_plugins_run_on_packaged_library(debs, tmp_path):
    for path in debs.values():
        _run(["dpkg-deb", "-x", path, str(tmp_path)])
    sitelib = os.path.join(str(tmp_path), DEB_SITELIB.lstrip("/"))
    assert _check_unpacked_plugins(str(tmp_path), DEB_CLASSES, sitelib) == len(PLUGINS)


def test_store_directory_belongs_to_the_archiver_daemon(rpms, debs, tmp_path):
    """The default embedded store, /var/lib/jumbo/jumbo.db, is written as `pscheduler`."""
    owners = _run(["rpm", "-qp", "--queryformat", "[%{FILEUSERNAME}:%{FILEGROUPNAME} %{FILENAMES}\\n]",
                   rpms["pscheduler-archiver-jumbo"]])
    assert "pscheduler:pscheduler /var/lib/jumbo" in owners.splitlines()
    ctrl = tmp_path / "ctrl"
    _run(["dpkg-deb", "-e", debs["pscheduler-archiver-jumbo"], str(ctrl)])
    with open(str(ctrl / "postinst")) as f:
        script = f.read()
    assert "install -d -m 0755 /var/lib/jumbo" in script
    assert "chown pscheduler:pscheduler /var/lib/jumbo" in script
