"""The demo's run: its state and output, and its stages in order (survey, build, measure,
archive, report, self-check, summary), each stage in its own module."""

import os
import sys
import threading
import time

from . import archive, fireflies, measure, mesh, parts, report, selfcheck, summary, tasks


class Demo(object):
    def __init__(self, args):
        self.args = args
        self.out = os.path.abspath(args.out)
        self.lab = None
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.skipped = []       # (stage, reason)
        self.failures = []      # (stage, detail)
        self.tasks = []
        self.started_opensearch = False
        self.store_url = None
        self.report_json = None
        self.report_text = self.report_csv = self.serving = self.telemetry_truth = None
        self.firefly_truth = None
        self.html_path = os.path.join(self.out, "report.html")
        self.namespaces_left = None
        self.t0 = time.monotonic()

    # -- output -------------------------------------------------------------------------------

    def say(self, text=""):
        with self.lock:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()

    def stage(self, number, title):
        self.say("")
        self.say("== %d. %s  [%.0fs]" % (number, title, time.monotonic() - self.t0))

    def skip(self, stage, reason):
        self.skipped.append((stage, reason))
        self.say("   SKIPPED: %s" % reason)

    def fail(self, stage, detail):
        self.failures.append((stage, detail))
        self.say("   FAILED: %s" % detail)

    # -- the whole run ------------------------------------------------------------------------

    def main(self):
        args = self.args
        os.makedirs(self.out, exist_ok=True)
        self.topology = mesh.build(loss_percent=args.loss)
        self.say("jumbo demo: does IP MTU 9000 really work between these sites?")

        self.stage(0, "What is there")
        self.parts = parts.survey()
        for key in ("test", "tool", "harness", "user", "archiver", "report", "prometheus"):
            part = self.parts[key]
            self.say("   %-24s %s" % (part.name, ("ok" if key != "user" else "ok: " + part.detail)
                                          if part.ok else "MISSING: " + part.detail))
        self.store_url = archive.store_url(self)
        if self.store_url:
            self.say("   store                    %s" % self.store_url)

        pairs = args.pairs or mesh.pairs(self.topology, quick=args.quick)
        self.tasks = tasks.plan(args, pairs)

        from lab import Lab
        self.stage(1, "Building the lab mesh (%d namespaces)" % len(self.topology.nodes))
        with Lab(self.topology, ping_group_range=mesh.ping_group_ranges()) as lab:
            self.lab = lab
            self.say("   sites (host names resolve inside the lab):")
            for line in mesh.describe(self.topology):
                self.say(" " + line if line else "")
            self.say("   built in %.1fs, namespaces prefixed %s-" % (
                time.monotonic() - self.t0, lab.prefix))
            self.say("   ICMP echo sockets for every user (ping_group_range) on %s; on %s "
                     "only UDP probes (Debian's default)" % (
                         ", ".join(mesh.ECHO_SITES),
                         ", ".join(s for s in mesh.SITES if s not in mesh.ECHO_SITES)))
            self.stage(2, "Measuring %d directed pairs (%s at a time, tool as user jumbotest)"
                       % (len(self.tasks), args.concurrency))
            measure.measure(self, lab)
            fireflies.collect(self, lab)
            self.say("")
            self.say("   tearing the lab down")
        self.lab = None
        selfcheck.namespaces_gone(self, lab)

        self.stage(3, "Archiving every result with the jumbo archiver")
        archive.archive(self)
        self.stage(4, "Adoption report (jumbo-report)")
        report.report(self)
        self.stage(5, "Ground-truth self-check")
        ok = selfcheck.self_check(self)
        self.stage(6, "Summary")
        summary.summary(self, ok)
        if self.skipped or self.failures or not ok:
            return 1
        return 0

    def cleanup(self):
        report.stop_telemetry(self)
        if self.lab is not None:
            self.lab.destroy()
            self.lab = None
