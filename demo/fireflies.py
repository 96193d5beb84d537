"""The demo's fireflies: real TCP transfers between the lab's sites, the fireflies a site's
flowd-go would send about them (lab/flowd_standin.py, a STAND-IN for flowd-go: the kernel's own
TCP_INFO of those sockets, in flowd-go's format), and jumbo-fireflies collecting them at cern
into the demo's store; the report then reads `used` from them (--fireflies).

Transfers (both IP versions): nikhef -> cern over the 8950 fabric (PTBs sent: a jumbo-sized
MSS), cern -> desy (desy's host is 1500: standard MSS), and one short nikhef -> cern transfer
that ends before its first periodic firefly (its end carries usage.sent, as an application's
does): bytes with no MSS. The truth is what the senders wrote, classed by the lab's path MTU
in both directions: the receiver advertises an MSS from its own route back, whose path MTU it
may have learned (bnl's asymmetric paths would make the class depend on what the
measurements before taught cern's kernel).
"""

import json
import os
import signal
import sys
import time

from . import mesh, parts

COLLECTOR = "cern"
PORT = 10514
SINK_PORT = 5001
PERIOD = 1.0
LONG_BYTES = 12000000            # the first flight's retransmissions before a PTB stay under 1 %
SECONDS = 2.5
SHORT_BYTES = 200000
TRANSFERS = (("nikhef", "cern"), ("cern", "desy"))
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([parts.ROOT, os.path.join(parts.ROOT, "python-jumbo")]))


def _jumbo_path(topology, source, dest):
    truth = mesh.expected(topology, source, dest)
    return min(truth["path-mtu"], truth["reverse-path-mtu"]) > 1500


def _sites_file(demo):
    path = os.path.join(demo.out, "firefly-sites.txt")
    with open(path, "w") as handle:
        for site in mesh.SITES:
            for version in (4, 6):
                handle.write("%s %s\n" % (demo.topology.address(site, version), site))
    return path


def collect(demo, lab):
    """Transfers, fireflies, the collector: demo.firefly_truth, or None (said why)."""
    demo.firefly_truth = None
    if not (demo.store_url or "").startswith("sqlite:///"):
        demo.say("   fireflies: shown with the embedded store only (the collector runs inside the "
                 "lab, where the root namespace's OpenSearch is out of reach)")
        return
    log_path = os.path.join(demo.out, "jumbo-fireflies.log")
    procs = []
    try:
        with open(log_path, "w") as log:
            collector = lab.popen(COLLECTOR, [sys.executable, "-m", "jumbo.report.fireflies_cli",
                                              "--store", demo.store_url, "--sites", _sites_file(demo),
                                              "--port", str(PORT), "--flush", "1"],
                                  env=ENV, cwd=parts.ROOT, stdout=log, stderr=log)
        procs.append(collector)
        for dest in sorted(set(d for _s, d in TRANSFERS)):
            procs.append(lab.popen(dest, [sys.executable, "-m", "lab.tcp_sink", "::", str(SINK_PORT)],
                                   env=ENV, cwd=parts.ROOT))
        if not lab.wait_for(lambda: "listening on" in open(log_path).read(), timeout=30):
            demo.fail("fireflies", "jumbo-fireflies did not start: %s" % open(log_path).read()[-300:])
            return
        time.sleep(0.5)                 # the sinks' listen()
        truth = _transfers(demo, lab)
        time.sleep(PERIOD)
        os.kill(collector.pid, signal.SIGTERM)
        status = collector.wait(30)
        if status != 0 or truth is None:
            demo.fail("fireflies", "jumbo-fireflies exited %d: %s" % (status, open(log_path).read()[-300:]))
            return
        demo.firefly_truth = truth
        demo.say("   fireflies: %d transfers (%.0f MB at a jumbo MSS, %.0f MB at 1500, %.1f MB too short "
                 "for a periodic firefly) reported by the flowd-go stand-in to jumbo-fireflies at %s"
                 % (truth["flows"], truth["jumbo"] / 1e6, truth["standard"] / 1e6,
                    truth["unknown"] / 1e6, COLLECTOR))
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGTERM)
                proc.wait(10)


def _transfers(demo, lab):
    collector = "[%s]:%d" % (demo.topology.address(COLLECTOR, 6), PORT)
    truth = {"jumbo": 0, "standard": 0, "unknown": 0, "flows": 0}
    for source in sorted(set(s for s, _d in TRANSFERS)):
        flows = []
        for _s, dest in [t for t in TRANSFERS if t[0] == source]:
            for version in (4, 6):
                flows.append("%s,%d,%d,%g" % (demo.topology.address(dest, version), SINK_PORT,
                                              LONG_BYTES, SECONDS))
            if source == "nikhef":
                flows.append("%s,%d,%d,0,usage" % (demo.topology.address(dest, 4), SINK_PORT, SHORT_BYTES))
        done = lab.run(source, [sys.executable, "-m", "lab.flowd_standin", "--period", str(PERIOD),
                                "--collector", collector] + ["--flow=" + f for f in flows],
                       env=ENV, check=False, timeout=120)
        if done.returncode != 0:
            demo.fail("fireflies", "the flowd-go stand-in at %s failed: %s" % (source, done.stderr[-300:]))
            return None
        for line in done.stdout.splitlines():
            r = json.loads(line)
            dest = mesh.node_of(demo.topology, r["dest"])
            kind = "unknown" if r["usage"] else \
                ("jumbo" if _jumbo_path(demo.topology, source, dest) else "standard")
            truth[kind] += r["written"]
            truth["flows"] += 1
    return truth


def check(report, csv_text, text, html, truth):
    """The report's fireflies section against the bytes written, within 1 % (the kernel's
    counter also counts what it retransmitted): (ok, lines)."""
    f = report.get("fireflies") or {}
    lines = []
    ok = True
    want = truth["jumbo"] / float(truth["jumbo"] + truth["standard"])
    for label, got, expected in (
            ("used (fireflies: bytes with a known MSS on jumbo segments)", f.get("used"), want),
            ("fireflies jumbo_bytes", f.get("jumbo_bytes"), truth["jumbo"]),
            ("fireflies standard_bytes", f.get("standard_bytes"), truth["standard"]),
            ("fireflies unknown_mss_bytes (no MSS)", f.get("unknown_mss_bytes"), truth["unknown"])):
        good = got is not None and abs(got - expected) <= 0.01 * expected
        ok = ok and good
        lines.append("   report %s: %s, truth %s (bytes written; within 1 %%) %s" % (
            label, "%.3f" % got if isinstance(got, float) else got,
            "%.3f" % expected if isinstance(expected, float) else expected, "ok" if good else "MISMATCH"))
    formats = {"text": "Traffic from fireflies" in text, "csv": "fireflies,mesh,used," in csv_text,
               "html": 'id="fireflies"' in html}
    bad = [k for k, v in formats.items() if not v]
    lines.append("   used from fireflies in text, JSON, CSV and HTML: %s"
                 % ("ok" if not bad else "MISSING in %s" % ", ".join(bad)))
    return ok and not bad, lines
