"""The scheduled report and alarms (issue 31): jumbo-report.service and jumbo-report.timer in both
packages (python3-jumbo, beside the commands they run), `systemd-analyze verify` clean on the
packaged units, disabled by default, run as an unprivileged user, their settings in
/etc/jumbo/report.conf (a config file, 0600), and the service's own command lines, as
packaged, producing the report and the alarms from a real store; and the firefly collector's
service (jumbo-fireflies.service) beside them, from the same settings, collecting a firefly
into the store the report reads.
(The packages are built once per session by tests/packaging_build.py.)
"""

import glob
import json
import os
import re
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time

import pytest

pytest_plugins = ["packaging_build"]
pytest.register_assert_rewrite("packaging_build")

from packaging_build import deb_files, rpm_files, run, unpack_rpm  # noqa: E402
from fixtures import synth  # noqa: E402
import store_fixtures  # noqa: E402

UNITS = ("jumbo-report.service", "jumbo-report.timer", "jumbo-fireflies.service")
CONF = "/etc/jumbo/report.conf"
RPM_UNITDIR = "/usr/lib/systemd/system"
DEB_UNITDIR = "/lib/systemd/system"
STATE_DIR = "/var/lib/jumbo-report"


def _unpack(fmt, rpms, debs, dest):
    if fmt == "rpm":
        unpack_rpm(rpms["python3-jumbo"], dest)
        return RPM_UNITDIR
    run(["dpkg-deb", "-x", debs["python3-jumbo"], dest])
    return DEB_UNITDIR


def _unit(path):
    """{(section, key): [values]} of a unit file."""
    out, section = {}, None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith(("#", ";")):
                continue
            if line.startswith("["):
                section = line.strip("[]")
                continue
            key, value = line.split("=", 1)
            out.setdefault((section, key), []).append(value)
    return out


def test_units_and_settings_land_in_both_packages(rpms, debs, tmp_path):
    files = rpm_files(rpms["python3-jumbo"])
    for unit in UNITS:
        assert stat.S_IMODE(files[RPM_UNITDIR + "/" + unit]) == 0o644, sorted(files)[:20]
    assert stat.S_IMODE(files[CONF]) == 0o600
    assert run(["rpm", "-qcp", rpms["python3-jumbo"]]).split() == [CONF]   # %config(noreplace)
    files = deb_files(debs["python3-jumbo"])
    for unit in UNITS:
        assert files[DEB_UNITDIR + "/" + unit] == "-rw-r--r--", sorted(files)[:20]
    assert files[CONF] == "-rw-------"
    ctrl = tmp_path / "ctrl"
    run(["dpkg-deb", "-e", debs["python3-jumbo"], str(ctrl)])
    assert (ctrl / "conffiles").read_text().split() == [CONF]


def test_disabled_by_default_in_both_packages(rpms, debs, tmp_path):
    """Nothing enables or starts the timer on install: an admin does, once the store is set.
    (The Debian postinst re-enables it on upgrade only where the admin had enabled it.)"""
    scripts = run(["rpm", "-qp", "--scripts", rpms["python3-jumbo"]])
    assert not re.search(r"systemctl[^\n]*\b(enable|start|preset)\b", scripts.replace("disable", "")), scripts
    assert "disable --now jumbo-report.timer" in scripts        # and gone on removal
    assert "jumbo-fireflies.service" in scripts
    ctrl = tmp_path / "ctrl"
    run(["dpkg-deb", "-e", debs["python3-jumbo"], str(ctrl)])
    postinst = (ctrl / "postinst").read_text()
    assert "deb-systemd-invoke" not in postinst and "systemctl start" not in postinst, postinst
    enables = [m.start() for m in re.finditer(r"deb-systemd-helper enable", postinst)]
    assert enables, postinst
    for at in enables:      # each one under "was it enabled before this upgrade?"
        assert re.search(r"was-enabled '(jumbo-report\.timer|jumbo-fireflies\.service)'",
                         postinst[max(0, at - 200):at]), postinst
    for fmt in ("rpm", "deb"):
        root = str(tmp_path / fmt)
        _unpack(fmt, rpms, debs, root)
        for unit in ("jumbo-report.timer", "jumbo-fireflies.service"):
            state = subprocess.run(["systemctl", "--root=" + root, "is-enabled", unit],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   universal_newlines=True)
            assert state.stdout.strip() == "disabled", (fmt, unit, state.stdout, state.stderr)


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
@pytest.mark.parametrize("fmt", ["rpm", "deb"])
def test_systemd_analyze_verify_is_clean(rpms, debs, tmp_path, fmt):
    """The packaged units, verified in a root holding the package (the commands they run,
    their man pages) and the system's targets; a warning counts as a failure."""
    root = str(tmp_path / "root")
    unitdir = _unpack(fmt, rpms, debs, root)
    targets = os.path.join(root, RPM_UNITDIR.lstrip("/"))
    os.makedirs(targets, exist_ok=True)
    for target in glob.glob("/usr/lib/systemd/system/*.target"):
        shutil.copy(target, targets)
    env = dict(os.environ, MANPATH=os.path.join(root, "usr/share/man"), SYSTEMD_LOG_COLOR="0")
    proc = subprocess.run(["systemd-analyze", "verify", "--root=" + root] + list(UNITS), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert proc.returncode == 0 and proc.stderr == "" and proc.stdout == "", (fmt, proc.stdout, proc.stderr)
    unit = _unit(os.path.join(root, unitdir.lstrip("/"), "jumbo-report.service"))
    # unprivileged: a user made for the run (or a static one of that name), never root
    assert unit[("Service", "DynamicUser")] == ["yes"] and unit[("Service", "User")] != ["root"]
    assert unit[("Service", "EnvironmentFile")] == [CONF]
    timer = _unit(os.path.join(root, unitdir.lstrip("/"), "jumbo-report.timer"))
    assert timer[("Install", "WantedBy")] == ["timers.target"] and timer[("Timer", "OnCalendar")]
    collector = _unit(os.path.join(root, unitdir.lstrip("/"), "jumbo-fireflies.service"))
    assert collector[("Service", "DynamicUser")] == ["yes"] and collector[("Service", "User")] != ["root"]
    assert collector[("Service", "EnvironmentFile")] == [CONF]


def _conf(path, **values):
    """The packaged settings file as systemd reads it, with `values` set."""
    env = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                key, value = line.split("=", 1)
                env[key] = value
    env.update(values)
    return env


def _expand(line, env):
    """An ExecStart line as systemd expands it: ${VAR} one word, $VAR split on white space."""
    words = []
    for word in shlex.split(line):
        whole = re.fullmatch(r"\$([A-Z_]+)", word)
        if whole:
            words.extend(env.get(whole.group(1), "").split())
        else:
            words.append(re.sub(r"\$\{([A-Z_]+)\}", lambda m: env.get(m.group(1), ""), word))
    return words


@pytest.mark.parametrize("fmt", ["rpm", "deb"])
def test_the_service_runs_report_and_alarms_from_its_settings(rpms, debs, tmp_path, fmt):
    """Each ExecStart of the packaged service, as systemd would run it from the packaged
    settings (the store set), on the packaged library against a real SQLite store: the
    report written and the alarms' lines and state in the state directory."""
    root = str(tmp_path / "root")
    unitdir = _unpack(fmt, rpms, debs, root)
    mesh = synth.Mesh.small(days=3)
    url = "sqlite:///" + str(tmp_path / "jumbo.db")
    store_fixtures.load(url, mesh.records())
    env = _conf(os.path.join(root, CONF.lstrip("/")), JUMBO_STORE=url,
                JUMBO_ALARMS_OPTIONS="--since %s" % mesh.start.strftime("%Y-%m-%d"))
    state_dir = tmp_path / "state"
    state_dir.mkdir()
    sitelib = glob.glob(os.path.join(root, "usr/lib/python3*/*-packages"))
    unit = _unit(os.path.join(root, unitdir.lstrip("/"), "jumbo-report.service"))
    commands = unit[("Service", "ExecStart")]
    assert [shlex.split(c)[0] for c in commands] == ["/usr/bin/jumbo-report", "/usr/bin/jumbo-alarms"]
    for line in commands:
        argv = [a.replace(STATE_DIR, str(state_dir)) for a in _expand(line, env)]
        proc = subprocess.run([sys.executable, os.path.join(root, argv[0].lstrip("/"))] + argv[1:],
                              env=dict(os.environ, PYTHONPATH=os.pathsep.join(sitelib)),
                              cwd=str(state_dir), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True)
        assert proc.returncode == 0, (argv, proc.stderr)
    html = (state_dir / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "ps0.site-a.example" in html
    events = [json.loads(line) for line in (state_dir / "alarms.jsonl").read_text().splitlines()]
    assert "MTU black hole shared by multiple sites" in [e["event"] for e in events]
    assert json.loads((state_dir / "alarms-state.json").read_text())["active"]


def _ongoing(sport, sent, mss):
    """One periodic firefly (flowd-go's shape, syslog-wrapped) of a flow SITE-A -> SITE-B."""
    return ("<134>1 2026-11-26T04:00:01+00:00 h flowd-go - firefly-json - " + json.dumps({
        "version": 1, "flow-lifecycle": {"state": "ongoing",
                                         "start-time": "2026-11-26T04:00:00+00:00"},
        "flow-id": {"afi": "ipv4", "src-ip": "198.18.0.1", "dst-ip": "198.18.1.2",
                    "protocol": "tcp", "src-port": sport, "dst-port": 1094},
        "context": {"experiment-id": 1, "activity-id": 1, "application": "x"},
        "netlink": {"tcpInfo": {"sndMss": mss, "pMtu": 9000, "bytesSent": sent}}})).encode()


@pytest.mark.parametrize("fmt", ["rpm", "deb"])
def test_the_collector_service_stores_fireflies_from_its_settings(rpms, debs, tmp_path, fmt):
    """jumbo-fireflies.service's ExecStart, as systemd would run it from the packaged settings
    (the store and the sites file set, the port moved off 10514 for the test), on the packaged
    library: it listens, takes two flows' fireflies, stores them at SIGTERM (its KillSignal)
    and exits 0; the bytes are in the store the report reads, per MSS."""
    from jumbo.archive.firefly_store import open_fireflies
    root = str(tmp_path / "root")
    unitdir = _unpack(fmt, rpms, debs, root)
    sites = tmp_path / "sites.txt"
    sites.write_text("198.18.0.0/24 SITE-A\n198.18.1.0/24 SITE-B\n")
    url = "sqlite:///" + str(tmp_path / "jumbo.db")
    env = _conf(os.path.join(root, CONF.lstrip("/")), JUMBO_STORE=url,
                JUMBO_FIREFLIES_SITES=str(sites),
                JUMBO_FIREFLIES_OPTIONS="--listen 127.0.0.1 --port 0")
    unit = _unit(os.path.join(root, unitdir.lstrip("/"), "jumbo-fireflies.service"))
    assert unit[("Service", "KillSignal")] == ["SIGTERM"]
    (line,) = unit[("Service", "ExecStart")]
    argv = _expand(line, env)
    assert argv[0] == "/usr/bin/jumbo-fireflies"
    sitelib = glob.glob(os.path.join(root, "usr/lib/python3*/*-packages"))
    log = open(str(tmp_path / "collector.err"), "w+")
    proc = subprocess.Popen([sys.executable, os.path.join(root, argv[0].lstrip("/"))] + argv[1:],
                            env=dict(os.environ, PYTHONPATH=os.pathsep.join(sitelib)),
                            cwd=str(tmp_path), stdout=log, stderr=log)
    try:
        text = ""
        for _ in range(600):            # bounded: 30 s
            log.seek(0)
            text = log.read()
            if "listening on" in text or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert "listening on" in text, text
        port = int(text.split("port ")[1].split()[0])
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for data in (_ongoing(1, 9000, 8948), _ongoing(2, 700, 1448)):
            sock.sendto(data, ("127.0.0.1", port))
        sock.close()
        time.sleep(1.0)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
    store = open_fireflies(url)
    try:
        assert store.sums(0, time.time() + 60) == {("SITE-A", "SITE-B", 4): [9000, 700, 0, 2]}
    finally:
        store.close()
