"""`make demo` end to end, in its quick mode: measured, archived, reported, checked, torn down."""

import glob
import json
import os
import signal
import sqlite3
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

from lab_support import ROOT, needs_lab


def _demo_argv(out, *extra):
    return [sys.executable, "-m", "demo", "--out", str(out)] + list(extra)


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([ROOT, os.path.join(ROOT, "python-jumbo")])
    env.pop("PYTHONUNBUFFERED", None)
    return env


def _namespaces(prefix):
    listed = subprocess.run(["ip", "netns", "list"], stdout=subprocess.PIPE,
                            universal_newlines=True).stdout
    return [line.split()[0] for line in listed.splitlines() if line.startswith(prefix)]


def _missing_parts():
    from demo import parts
    return ["%s (%s)" % (p.name, p.detail) for p in parts.survey().values() if not p.ok]


def test_demo_arguments_are_checked():
    for bad in (["--concurrency", "0"], ["--pairs", "cern:cern"], ["--pairs", "cern:nowhere"],
                ["--archive", "sqlite:///x", "--opensearch"], ["--flows", "0"],
                ["--loss", "100"], ["--ip-version", "5"]):
        done = subprocess.run(_demo_argv("/tmp/unused", *bad), cwd=ROOT, env=_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=60)
        assert done.returncode == 2, bad
        assert "Traceback" not in done.stderr
        assert "error:" in done.stderr


@needs_lab
def test_quick_demo_runs_end_to_end_and_checks_itself(tmp_path):
    missing = _missing_parts()
    assert not missing, "the demo's parts are missing: %s" % "; ".join(missing)
    began = time.monotonic()
    proc = subprocess.Popen(_demo_argv(tmp_path, "--quick"), cwd=ROOT, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            universal_newlines=True)
    try:
        output, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    elapsed = time.monotonic() - began
    assert proc.returncode == 0, output[-6000:]
    # Every result is in the embedded store: one row per quick pair.
    from demo import mesh
    quick = mesh.pairs(quick=True)
    store = os.path.join(str(tmp_path), "jumbo.sqlite")
    connection = sqlite3.connect(store)
    try:
        rows = connection.execute(
            "select source, dest, path_mtu, pmtud from results where test_type = 'pmtu'"
        ).fetchall()
        # Site labels came in through the task reference, as pSConfig templates set them.
        sites = connection.execute("select source_site, dest_site from results "
                                   "where test_type = 'pmtu'").fetchall()
        # The paired throughput ran as its own test and was archived as such, with its gain.
        pairs = connection.execute("select source, dest, gain from results "
                                   "where test_type = 'jumbo-throughput'").fetchall()
    finally:
        connection.close()
    assert sorted((r[0], r[1]) for r in rows) == sorted(quick)
    assert sorted(sites) == sorted(quick)
    # Progress while it ran: every pair announced with its phases, then its answer.
    for number in range(1, len(quick) + 1):
        assert "[%2d/%d]" % (number, len(quick)) in output
    assert "1500/9000 throughput" in output and "jumbo gain x" in output
    assert len(pairs) == 1 and pairs[0][0] != pairs[0][1] and pairs[0][2] > 1, pairs
    assert "x%.2f" % pairs[0][2] in output
    # ... and they agree with the lab's truth (the demo's own check, and ours).
    topology = mesh.build()
    for source, dest, path_mtu, pmtud in rows:
        truth = mesh.expected(topology, source, dest)
        assert (path_mtu, pmtud) == (truth["path-mtu"], truth["pmtud"]), (source, dest)
    assert "ground truth check: %d/%d paths exact" % (len(quick), len(quick)) in output
    assert "SELF-CHECK FAILED" not in output and "MISMATCH" not in output
    # The report: text on the terminal, an HTML file, JSON with the headline.
    html = os.path.join(str(tmp_path), "report.html")
    assert os.path.getsize(html) > 1000
    assert html in output
    with open(os.path.join(str(tmp_path), "report.json")) as handle:
        report = json.load(handle)
    assert sorted((h["source"], h["dest"]) for h in report["blackholes"]) == [("ral", "cern")]
    # used and configured measured: the traffic as flowd-go flows and every host's interface MTU
    # through a real Prometheus, checked by the demo against its truth in every format.
    assert report["used_source"] == "telemetry" and report["configured_source"] == "node exporter"
    assert report["telemetry"]["configured"]["hosts"] == 7 and report["configured"] == 5 / 7.0
    assert "report used (bytes on jumbo segments, telemetry)" in output
    assert "used, capable and configured in text, JSON, CSV and HTML: ok" in output
    with open(os.path.join(str(tmp_path), "report.csv")) as handle:
        assert "telemetry,mesh,used," in handle.read()
    # The lab is gone.
    assert _namespaces("jl%d-" % proc.pid) == []
    assert "Traceback" not in output
    assert elapsed < 240, "quick demo took %.0f s" % elapsed


@needs_lab
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_tears_the_lab_down(tmp_path, signum):
    """Interrupted while pairs are being measured (tools running inside the namespaces)."""
    missing = _missing_parts()
    assert not missing, "the demo's parts are missing: %s" % "; ".join(missing)
    # The demo's own TMPDIR: its runs' private directories are told apart from those of
    # anything else running on the machine (benchmarks, other test sessions).
    # (Under /tmp, open to all like /tmp: the runs inside the lab are the unprivileged user.)
    private_tmp = tempfile.mkdtemp(prefix="jumbo-demo-test-")
    os.chmod(private_tmp, 0o1777)
    env = _env()
    env["TMPDIR"] = str(private_tmp)
    # SIGINT restored to its default in the child: a test session started in the background
    # (`... &` in a script) ignores SIGINT, the child would inherit that, and Python then
    # installs no Ctrl-C handler at all (the demo would finish as if never interrupted).
    proc = subprocess.Popen(_demo_argv(tmp_path, "--pairs", "cern:desy,desy:cern"), cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            universal_newlines=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    prefix = "jl%d-" % proc.pid
    lines = []
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if line.rstrip().endswith("..."):  # a pair's measurement has started
                break
        assert lines and lines[-1].rstrip().endswith("..."), "".join(lines)
        time.sleep(1.0)
        assert _namespaces(prefix), "the lab should exist while measuring"
        proc.send_signal(signum)
        rest, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
            shutil.rmtree(private_tmp, ignore_errors=True)
    output = "".join(lines) + rest
    assert proc.returncode == 130, output[-3000:]
    assert "interrupted" in output
    assert "Traceback" not in output
    assert _namespaces(prefix) == []
    # Each interrupted run's private TMPDIR is gone too, as the runner would remove it.
    left_dirs = glob.glob(os.path.join(private_tmp, "jumbo-run-*"))
    shutil.rmtree(private_tmp, ignore_errors=True)
    assert left_dirs == []
    # Nothing the demo started is left running inside the lab either.
    left = subprocess.run(["pgrep", "-f", prefix], stdout=subprocess.PIPE,
                          universal_newlines=True).stdout.split()
    assert left == []
