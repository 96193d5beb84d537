"""The demo's stages, in order: survey, build, measure, archive, report, self-check, summary."""

import datetime
import json
import os
import subprocess
import sys
import threading
import time
import uuid

from . import checks, mesh, parts

# Seconds between scheduling a run and its start: covers starting every participant's `run`.
START_IN = 2.0
# Pairs that also measure the reverse path (the far end takes part): the asymmetric site
# both ways, and a symmetric pair for contrast.
REVERSE_PAIRS = (("cern", "bnl"), ("bnl", "cern"), ("cern", "nikhef"), ("tokyo", "bnl"))


class Interrupted(BaseException):
    """SIGTERM/SIGHUP: handled like Ctrl-C (a BaseException, so no `except Exception` in a
    stage swallows it)."""


class StageFailed(Exception):
    pass


def _now_iso():
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()


def _mbps(bits):
    return "%.2f Gbit/s" % (bits / 1e9) if bits >= 1e9 else "%.0f Mbit/s" % (bits / 1e6)


# The paired 1500/9000 throughput is its own exclusive test (pmtu runs in the background).
PAIR_TEST = "jumbo-throughput"

class Run(object):
    """One test's run on a pair: its type and spec, what the plugins made of it (participants,
    merged result, each participant's output, the error that stopped it) and the identifiers
    its archived record gets."""

    def __init__(self, test_type, spec):
        self.test_type = test_type
        self.spec = spec
        self.participants = self.result = self.outputs = self.error = None
        self.task_uuid = str(uuid.uuid4())
        self.run_uuid = str(uuid.uuid4())


class Task(Run):
    """One directed pair: its pmtu run, its checks, and the paired 1500/9000 throughput run
    right after it on the same pair as its own (exclusive) test, jumbo-throughput: `paired`,
    a Run (None when this pair has none)."""

    def __init__(self, number, source, dest, spec):
        super(Task, self).__init__("pmtu", spec)
        self.number = number
        self.source = source
        self.dest = dest
        self.paired = None
        self.checks = []
        self.archived = self.start = self.end = self.elapsed = None

    def runs(self):
        return [self] + ([self.paired] if self.paired is not None else [])

    @property
    def pair_result(self):
        """The paired throughput's merged result (None when there is none)."""
        return self.paired.result if self.paired is not None else None

    @property
    def pair(self):
        return (self.source, self.dest)

    def phases(self):
        what = ["forward path MTU (%d flows%s)" % (
            self.spec["flows"], ", through the dest's reflector" if self.spec.get("reflector")
            else "")]
        if self.spec.get("reverse"):
            what.append("reverse path")
        if self.paired is not None:
            what.append("then jumbo-throughput: 1500/9000 throughput, ABBA")
        return ", ".join(what)


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
        self.store_url = self._store_url()
        if self.store_url:
            self.say("   store                    %s" % self.store_url)

        pairs = args.pairs or mesh.pairs(self.topology, quick=args.quick)
        self.tasks = self._plan(pairs)

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
            self._measure(lab)
            self.say("")
            self.say("   tearing the lab down")
        self.lab = None
        self._check_namespaces_gone(lab)

        self.stage(3, "Archiving every result with the jumbo archiver")
        self._archive()
        self.stage(4, "Adoption report (jumbo-report)")
        self._report()
        self.stage(5, "Ground-truth self-check")
        ok = self._self_check()
        self.stage(6, "Summary")
        self._summary(ok)
        if self.skipped or self.failures or not ok:
            return 1
        return 0

    def cleanup(self):
        self._stop_telemetry()
        if self.lab is not None:
            self.lab.destroy()
            self.lab = None

    # -- plan ---------------------------------------------------------------------------------

    def _plan(self, pairs):
        throughput_pairs = set()
        if not self.args.no_throughput:
            wanted = [("cern", "nikhef")] if self.args.quick else \
                [("cern", "tokyo"), ("cern", "nikhef"), ("tokyo", "cern")]
            throughput_pairs = set(p for p in wanted if p in pairs)
        tasks = []
        # The shipped template's own pmtu spec (through the dest's reflector, its flows).
        template = mesh.template_pmtu_spec(self.args.ip_version)
        for number, (source, dest) in enumerate(pairs, start=1):
            spec = dict(template, schema=1, source=source, dest=dest)
            if self.args.flows is not None:
                spec["flows"] = self.args.flows
            if self.args.ip_version == 6:
                # The lab names each host's IPv6 address SITE6.
                spec.update({"source": source + "6", "dest": dest + "6"})
            # The reverse path needs the far end as a participant: ask for it where paths
            # are asymmetric in the mesh (bnl) and on a couple of others for contrast.
            if (source, dest) in REVERSE_PAIRS:
                spec["reverse"] = True
            task = Task(number, source, dest, spec)
            if (source, dest) in throughput_pairs:
                task.paired = Run(PAIR_TEST, dict(
                    ((k, spec[k]) for k in ("source", "dest", "ip-version") if k in spec),
                    schema=1, duration="PT2S", omit="PT0S", rounds=1, order="abba"))
            tasks.append(task)
        return tasks

    # -- stage 2: measure -----------------------------------------------------------------------

    def _measure(self, lab):
        for key in ("test", "tool", "harness", "user"):
            if not self.parts[key].ok:
                self.skip("measure", "%s is not available (%s): nothing can be measured"
                          % (self.parts[key].name, self.parts[key].detail))
                return
        self.harness = parts.load_harness()
        # Specs first, through the test plugin as the server would on task creation.
        for task in self.tasks:
            try:
                for run in task.runs():
                    valid = parts.invoke_json("test", run.test_type, "spec-is-valid", run.spec)
                    if not valid.get("valid"):
                        raise RuntimeError("%sspec rejected: %s" % (
                            "" if run is task else run.test_type + " ", valid.get("error")))
                    run.participants = parts.invoke_json(
                        "test", run.test_type, "participants", run.spec)["participants"]
            except Exception as err:  # noqa: BLE001 - reported, never a traceback
                task.error = "spec: %s" % err
                self.fail("measure", "%s -> %s: %s" % (task.source, task.dest, task.error))
        # Long tasks first (throughput phases, two-participant runs), so that they overlap
        # with the many short ones; at most one throughput phase at a time (the two cores
        # are shared by everything in the lab, and legs running together would skew gains).
        pending = [t for t in self.tasks if t.error is None]
        pending.sort(key=lambda t: (0 if t.paired is not None else
                                    1 if len(t.participants or ()) > 1 else 2, t.number))
        self._run_concurrently(lab, pending)

    def _run_concurrently(self, lab, tasks):
        queue = list(tasks)
        busy = set()
        running = []
        limit = self.args.concurrency

        def worker(task):
            try:
                self._run_one(lab, task)
            finally:
                with self.lock:
                    busy.discard(task.source)
                    busy.discard(task.dest)
                    if task.paired is not None:
                        busy.discard("throughput")

        while queue or running:
            running = [t for t in running if t.is_alive()]
            if self.stop.is_set():
                queue = []
            started = False
            if len(running) < limit:
                with self.lock:
                    for task in queue:
                        # Pairs running together share no site: ICMP errors are rate-limited
                        # per destination by routers, and each site has one address.
                        if task.source in busy or task.dest in busy:
                            continue
                        if task.paired is not None and "throughput" in busy:
                            continue
                        busy.update((task.source, task.dest))
                        if task.paired is not None:
                            busy.add("throughput")
                        queue.remove(task)
                        thread = threading.Thread(target=worker, args=(task,), daemon=True)
                        thread.start()
                        running.append(thread)
                        started = True
                        break
            if not started:
                time.sleep(0.05)

    def _run_one(self, lab, task):
        total = len(self.tasks)
        with self.lock:
            # Numbered in the order they start, so the counter reads as progress.
            self.started_count = getattr(self, "started_count", 0) + 1
            task.number = self.started_count
        self.say("   [%2d/%d] %-6s -> %-6s  %s ..." % (task.number, total, task.source, task.dest,
                                                       task.phases()))
        task.start = _now_iso()
        began = time.monotonic()
        try:
            task.result, task.outputs = self._harness_run(lab, task)
        except (KeyboardInterrupt, Interrupted):
            raise
        except Exception as err:  # noqa: BLE001 - reported, never a traceback
            task.error = "%s: %s" % (type(err).__name__, err)
        task.elapsed = time.monotonic() - began
        task.end = _now_iso()
        if task.error is None and not (isinstance(task.result, dict) and "succeeded" in task.result):
            task.error = "the tool returned no result object"
        if task.error is not None:
            self.fail("measure", "[%d] %s -> %s: %s" % (task.number, task.source, task.dest,
                                                        task.error))
            if not self.args.keep_going:
                self.stop.set()
                self.say("   stopping the measurements (use --keep-going to measure every pair "
                         "regardless)")
            return
        task.checks = checks.measurement(self.topology, task.source, task.dest, task.result,
                                         task.spec)
        if task.paired is not None and not self.stop.is_set():
            pair = task.paired
            try:
                pair.result, pair.outputs = self._harness_run(lab, task, pair)
            except (KeyboardInterrupt, Interrupted):
                raise
            except Exception as err:  # noqa: BLE001 - reported, never a traceback
                pair.error = "%s: %s" % (type(err).__name__, err)
            if pair.error is None and not (isinstance(pair.result, dict)
                                           and pair.result.get("succeeded")):
                pair.error = (pair.result or {}).get("error") or "no result"
            if pair.error is not None:
                self.fail("measure", "[%d] %s -> %s: %s: %s" % (
                    task.number, task.source, task.dest, pair.test_type, pair.error))
        self.say("   [%2d/%d] %-6s -> %-6s  %s  (%.1fs)" % (
            task.number, total, task.source, task.dest, self._one_line(task), task.elapsed))
        if not task.result.get("succeeded"):
            self.fail("measure", "[%d] %s -> %s: measurement failed: %s" % (
                task.number, task.source, task.dest, task.result.get("error")))
            if not self.args.keep_going:
                self.stop.set()
                self.say("   stopping the measurements (use --keep-going to measure every pair "
                         "regardless)")

    def _harness_run(self, lab, task, run=None):
        """One run through the harness: duration, participant-data, run on every participant
        with one start time, merged-results on the lead; as the server would, the tool as the
        unprivileged user jumbotest inside each site's namespace. `run`: the task's
        own (pmtu) run by default."""
        run = run or task
        places = [{"lab": lab, "node": _node(name), "user": parts.TOOL_USER}
                  for name in run.participants]
        outcome = self.harness.run_tool_participants(
            "jumbocheck", {"type": run.test_type, "spec": run.spec}, places,
            start_in=START_IN)
        for index, done in enumerate(outcome.runs):
            if done is not None and done.status != 0:
                self.say("   [%2d] participant %d run exited %d: %s" % (
                    task.number, index, done.status, done.stderr.strip()[-300:]))
        return outcome.merged, outcome.results

    def _one_line(self, task):
        r = task.result
        truth = mesh.expected(self.topology, task.source, task.dest)
        if not r.get("succeeded"):
            return "FAILED: %s" % r.get("error")
        text = "path MTU %s, pmtud %s" % (r.get("path-mtu"), r.get("pmtud"))
        if r.get("blackhole"):
            hole = r["blackhole"]
            text += " (vanish at hop %s %s)" % (hole.get("ttl"), hole.get("ip") or "")
        flows = r.get("flows") or []
        if len(set(f.get("path-mtu") for f in flows)) > 1:
            text += ", flows differ"
        if task.spec.get("reverse"):
            text += ", reverse %s" % r.get("reverse-path-mtu")
        tp = task.pair_result or {}
        if tp.get("gain") is not None:
            text += ", jumbo gain x%.2f" % tp["gain"]
        elif tp:
            text += ", throughput %s" % (tp.get("skipped") or tp.get("verdict") or "no gain")
        bad = [c for c in task.checks if not c.ok]
        text += "  | truth %s %s: %s" % (truth["path-mtu"], truth["pmtud"],
                                         "exact" if not bad else "MISMATCH")
        return text

    # -- stage 3: archive ----------------------------------------------------------------------

    def _store_url(self):
        if self.args.archive:
            return self.args.archive
        if self.args.opensearch:
            return self._start_opensearch()
        path = os.path.join(self.out, "jumbo.sqlite")
        # The archiver keeps SQLite stores in the directories the node's limits allow
        # (docs/security.md); the demo's own output directory is one, for its processes.
        os.environ["JUMBO_SQLITE_DIRS"] = ":".join(
            [d for d in (os.environ.get("JUMBO_SQLITE_DIRS"), self.out) if d])
        # A fresh embedded store per run: the report then shows this run only.
        for suffix in ("", "-wal", "-shm", "-journal"):
            if os.path.exists(path + suffix):
                os.unlink(path + suffix)
        return "sqlite:///" + path

    def _start_opensearch(self):
        """The local test OpenSearch (scripts/opensearch.sh): used if it already answers,
        started otherwise (and left running for a look afterwards). Each run archives under
        its own index prefix, so the report shows this run only."""
        script = os.path.join(parts.ROOT, "scripts", "opensearch.sh")
        if not os.path.exists(script):
            self.skip("archive", "scripts/opensearch.sh is missing: cannot start OpenSearch")
            return None

        def call(*words, **kwargs):
            return subprocess.run(["bash", script] + list(words), stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, universal_newlines=True,
                                  timeout=kwargs.get("timeout", 30))

        if call("status").returncode != 0:
            self.say("   starting OpenSearch (scripts/opensearch.sh start; up to a minute) ...")
            done = call("start", timeout=300)
            if done.returncode != 0:
                self.fail("archive", "OpenSearch did not start: %s" % done.stdout.strip()[-400:])
                return None
            self.started_opensearch = True
        url = call("url").stdout.strip() or "http://127.0.0.1:9250"
        prefix = time.strftime("demo%Y%m%d%H%M%S-", time.gmtime())
        return "%s?prefix=%s" % (url, prefix)

    def envelope(self, task, run=None):
        """The archiver's input for the task's pmtu run, or for `run` (its paired throughput
        run)."""
        run = run or task
        test_type, spec, result, outputs = run.test_type, run.spec, run.result, run.outputs
        participants, task_uuid, run_uuid = run.participants, run.task_uuid, run.run_uuid
        lead = participants[0] if participants else task.source
        task_href = "https://%s/pscheduler/tasks/%s" % (lead, task_uuid)
        run_href = "%s/runs/%s" % (task_href, run_uuid)
        reference = {"source-site": task.source, "dest-site": task.dest,
                     "created-by": {"user-agent": "jumbo-demo"}}
        duration = "PT%dS" % max(1, int(round(task.elapsed or 1)))
        public_spec = dict((k, (None if k.startswith("_") else v)) for k, v in spec.items())
        return {
            "data": self.archive_data,
            "task-href": task_href,
            "run-href": run_href,
            "attempts": 0,
            "last-attempt": None,
            "result": {
                "id": run_uuid,
                "schedule": {"start": task.start, "duration": duration},
                "test": {"type": test_type, "spec": public_spec},
                "tool": {"name": "jumbocheck", "version": self._tool_version()},
                "participants": list(participants or [task.source]),
                "result": result,
                "run": {"href": run_href, "task-href": task_href, "start-time": task.start,
                        "end-time": task.end, "duration": duration, "participant": 0,
                        "participants": list(participants or [task.source]),
                        "result-full": outputs, "result-merged": result,
                        "state": "finished", "state-display": "Finished", "errors": None},
                "task": {"href": task_href, "reference": reference,
                         "test": {"type": test_type, "spec": public_spec},
                         "tool": "jumbocheck", "detail": {"duration": duration}},
                "reference": reference,
            },
        }

    def _tool_version(self):
        try:
            return json.loads(parts.invoke("tool", "jumbocheck", "enumerate", None)).get(
                "version", "unknown")
        except Exception:  # noqa: BLE001 - the version is only shown; never stop the demo for it
            return "unknown"

    def _archive(self):
        measured = [t for t in self.tasks if isinstance(t.result, dict)]
        if not measured:
            self.skip("archive", "no results to archive (nothing was measured)")
            return
        if not self.parts["archiver"].ok:
            self.skip("archive", "%s is not available (%s)" % (self.parts["archiver"].name,
                                                                self.parts["archiver"].detail))
            return
        if not self.store_url:
            self.skip("archive", "no store to archive into")
            return
        self.archive_data = {"schema": 1, "_url": self.store_url,
                             "retry-policy": [{"attempts": 3, "wait": "PT2S"}]}
        try:
            valid = parts.invoke_json("archiver", "jumbo", "data-is-valid",
                                     self.archive_data)
        except Exception as err:  # noqa: BLE001 - reported as the archive step's failure
            self.fail("archive", "data-is-valid: %s" % err)
            return
        if not valid.get("valid"):
            self.fail("archive", "the archiver rejects %s: %s" % (self.store_url,
                                                                   valid.get("error")))
            return
        self.prior_paths = self._latest_count()
        records = [self.envelope(t) for t in measured]
        paired = [t for t in measured if isinstance(t.pair_result, dict)]
        records += [self.envelope(t, t.paired) for t in paired]
        began = time.monotonic()
        try:
            outcomes = self._archive_stream(records)
        except Exception as err:  # noqa: BLE001 - reported as the archive step's failure
            self.fail("archive", "archive process: %s" % err)
            return
        stored = 0
        for task, outcome in zip(paired, outcomes[len(measured):]):
            if outcome.succeeded:
                stored += 1
            else:
                self.fail("archive", "%s -> %s %s not archived after %d attempt(s): %s" % (
                    task.source, task.dest, PAIR_TEST, outcome.attempts, outcome.error))
        for task, outcome in zip(measured, outcomes):
            task.archived = bool(outcome.succeeded)
            if task.archived:
                stored += 1
            else:
                self.fail("archive", "%s -> %s not archived after %d attempt(s): %s" % (
                    task.source, task.dest, outcome.attempts, outcome.error))
        self.say("   %d/%d results archived into %s in %.1fs" % (
            stored, len(records), self.store_url, time.monotonic() - began))
        self._refresh_opensearch()

    def _refresh_opensearch(self):
        """OpenSearch makes new documents searchable about once a second: ask for it now,
        so the report right after sees every result (a no-op for the embedded store)."""
        if not self.store_url.startswith(("http://", "https://")):
            return
        try:
            from urllib.parse import parse_qs, urlsplit
            from urllib.request import Request, urlopen
            url = urlsplit(self.store_url)
            prefix = (parse_qs(url.query).get("prefix") or [""])[0]
            target = "%s://%s%s/%s*/_refresh" % (url.scheme, url.netloc.rpartition("@")[2],
                                                  url.path.rstrip("/"), prefix)
            urlopen(Request(target, data=b"", method="POST"), timeout=30).read()
        except Exception as err:  # noqa: BLE001 - the report will say if data is missing
            self.say("   (could not refresh the OpenSearch indices: %s)" % err)

    def _archive_stream(self, records):
        """Feed the records to one long-lived `archive` process (RFC 7464), as the archiver
        daemon does: the harness's archive_stream (retries included)."""
        harness = parts.load_harness()
        if not hasattr(harness, "archive_stream"):
            raise RuntimeError("tests/harness.py has no archive_stream")
        return harness.archive_stream("jumbo", records, retry_scale=0.2, max_wait=5.0)

    # -- stage 4: report -----------------------------------------------------------------------

    def _report(self):
        if not self.parts["report"].ok:
            self.skip("report", "%s is not available (%s)" % (self.parts["report"].name,
                                                              self.parts["report"].detail))
            return
        if not any(t.archived for t in self.tasks):
            self.skip("report", "nothing was archived, so there is nothing to report on")
            return
        base = parts.report_command() + ["--store", self.store_url]
        volumes = self._write_volumes()
        if volumes:
            base += ["--volumes", volumes]
        prometheus = self._serve_telemetry()
        if prometheus:
            base += ["--prometheus", prometheus, "--sites", self.serving.sites_file]
        csv_out = os.path.join(self.out, "report.csv")
        if self._run_report(base + ["--format", "csv", "--out", csv_out]) is not None:
            with open(csv_out) as handle:
                self.report_csv = handle.read()
        text = self.report_text = self._run_report(base + ["--format", "text"])
        if text is not None:
            for line in text.rstrip("\n").splitlines():
                self.say("   | " + line)
        if os.path.exists(self.html_path):
            os.unlink(self.html_path)
        if self._run_report(base + ["--format", "html", "--out", self.html_path]) is not None:
            if os.path.exists(self.html_path) and os.path.getsize(self.html_path) > 0:
                self.say("   HTML report written to %s (open it in a browser; works offline)"
                         % self.html_path)
            else:
                self.fail("report", "jumbo-report --format html wrote no file")
        raw = self._run_report(base + ["--format", "json"])
        if raw is not None:
            try:
                self.report_json = json.loads(raw)
                with open(os.path.join(self.out, "report.json"), "w") as handle:
                    handle.write(raw)
            except ValueError:
                self.fail("report", "jumbo-report --format json printed no JSON")
        self._stop_telemetry()

    def _serve_telemetry(self):
        """The traffic and the interface MTUs to a real Prometheus (demo/telemetry.py): its URL,
        or None (said why)."""
        from . import telemetry
        self.serving = None
        why = telemetry.missing()
        if why:
            self.skip("telemetry", "%s: used and configured cannot be measured; the report falls "
                      "back to the volume matrix and the measuring hosts' local MTU" % why)
            return None
        measured = [(t.source, t.dest, bool(t.spec.get("reverse"))) for t in self.tasks if t.archived]
        try:
            self.serving = telemetry.Serving(self.topology, measured, self.out)
            self.telemetry_truth = self.serving.truth
            url = self.serving.start()
        except Exception as err:  # noqa: BLE001 - reported, never a traceback
            self.fail("telemetry", "Prometheus did not start: %s" % err)
            self._stop_telemetry()
            return None
        self.say("   traffic (the volume matrix as flowd-go flows, %.0f TB/week) and %d hosts' "
                 "interface MTUs (node exporter) served to Prometheus at %s"
                 % (self.serving.total / 1e12, self.serving.truth["hosts"], url))
        return url

    def _stop_telemetry(self):
        if getattr(self, "serving", None) is not None:
            self.serving.stop()
            self.serving = None

    def _write_volumes(self):
        """The traffic matrix (demo/mesh.py) between the sites measured, as the report's CSV."""
        measured = [t for t in self.tasks if t.archived]
        names = set(s for t in measured for s in t.pair)
        path = os.path.join(self.out, "volumes.csv")
        with open(path, "w") as handle:
            handle.write("source_site,dest_site,bytes\n")
            for source in mesh.SITES:
                for dest in mesh.SITES:
                    if source != dest and source in names and dest in names:
                        handle.write("%s,%s,%d\n" % (source, dest,
                                                      mesh.volume_tb(source, dest) * 10 ** 12))
        return path

    def _run_report(self, argv):
        try:
            done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  universal_newlines=True, timeout=120)
        except subprocess.TimeoutExpired:
            self.fail("report", "%s timed out" % " ".join(argv[-2:]))
            return None
        if done.returncode != 0:
            self.fail("report", "jumbo-report %s failed (exit %d): %s" % (
                " ".join(argv[-2:]), done.returncode, done.stderr.strip()[-400:]))
            return None
        return done.stdout

    # -- stage 5: self-check -------------------------------------------------------------------

    def _self_check(self):
        ok = True
        measured = [t for t in self.tasks if isinstance(t.result, dict)]
        exact = [t for t in measured if t.checks and all(c.ok for c in t.checks)]
        if measured:
            self.say("   measurements: %d/%d paths exact (path MTU, PMTUD verdict, per-flow "
                     "MTUs, reverse path)" % (len(exact), len(measured)))
        for task in measured:
            for check in task.checks:
                if not check.ok:
                    self.say("     MISMATCH %s: %s" % (check.what, check.detail))
        if len(exact) != len(measured) or not measured:
            ok = False
        if len(exact) != len(measured):
            self.say("     (MISMATCH: the measurement disagrees with what the lab was built to "
                     "be; the lab is the reference, so this points at the suite)")
        if len(measured) != len(self.tasks):
            self.say("   %d of %d pairs have no measurement" % (len(self.tasks) - len(measured),
                                                             len(self.tasks)))
        stored = self._count_stored(measured)
        if stored is not None:
            good = stored == len(measured)
            ok = ok and good
            self.say("   store: %d/%d results read back as the latest of their path from %s %s" % (
                stored, len(measured), self.store_url, "" if good else "(MISSING SOME)"))
        if self.report_json is not None:
            if getattr(self, "prior_paths", None):
                self.say("   report headline not compared with the truth: the store already "
                         "held %d paths before this run" % self.prior_paths)
            else:
                ok = self._check_report(measured) and ok
        gone = self.namespaces_left == []
        self.say("   lab teardown: %s" % ("no namespace left (ip netns list)" if gone else
                                          "LEFT BEHIND: %s" % self.namespaces_left))
        ok = ok and gone
        if not measured:
            self.ground_truth_line = "ground truth check: not run (nothing was measured)"
        else:
            self.ground_truth_line = "ground truth check: %d/%d paths exact%s" % (
                len(exact), len(self.tasks), "" if ok else " - SELF-CHECK FAILED")
        self.say("   " + self.ground_truth_line)
        return ok

    def _latest_count(self):
        """Paths the store already has a pmtu result for (None when it cannot be read)."""
        try:
            from jumbo.archive.stores import open_store
            store = open_store(self.store_url)
            try:
                return len(store.latest("pmtu"))
            finally:
                store.close()
        except Exception:  # noqa: BLE001 - an empty or new store may not exist yet
            return None

    def _count_stored(self, measured):
        """How many of this run's results the store holds as the latest of their path
        (read back through the store interface; None = not checked)."""
        if not self.store_url or not any(t.archived is not None for t in measured):
            return None
        try:
            from jumbo.archive import record as records
            from jumbo.archive.stores import open_store
            wanted = set(records.normalize(self.envelope(t))[0]["id"] for t in measured)
            store = open_store(self.store_url)
            try:
                latest = set(row["id"] for row in store.latest("pmtu"))
            finally:
                store.close()
        except Exception as err:  # noqa: BLE001 - reported, never a traceback
            self.fail("self-check", "cannot read the store back: %s: %s"
                      % (type(err).__name__, err))
            return 0
        return len(wanted & latest)

    def _share_check(self, label, measured, expected, detail):
        """One headline share of the report against the lab's truth; says so, returns ok."""
        good = measured is not None and expected is not None and abs(measured - expected) < 1e-6
        shown = "%.3f" % measured if isinstance(measured, (int, float)) else measured
        self.say("   report %s: %s, truth %.3f (%s) %s" % (
            label, shown, expected or 0, detail, "ok" if good else "MISMATCH"))
        return good

    def _check_report(self, measured):
        truth = checks.headline_truth(self.topology, [
            (t.source, t.dest, bool(t.spec.get("reverse"))) for t in measured if t.archived])
        report = self.report_json
        ok = True
        paths = report.get("paths")
        count = len(paths) if isinstance(paths, list) else paths
        good = count == truth["paths"]
        ok = ok and good
        self.say("   report paths: %s, truth %d %s" % (count, truth["paths"],
                                                      "ok" if good else "MISMATCH"))
        capable = report.get("capable")
        if isinstance(capable, dict):
            capable = capable.get("share", capable.get("value"))
        ok = self._share_check("jumbo-capable share", capable, truth["capable"], "%d/%d" % (
            truth["capable-paths"], truth["paths"])) and ok
        if report.get("telemetry") and self.telemetry_truth:
            from .telemetry import check
            html = open(self.html_path).read() if os.path.exists(self.html_path) else ""
            good, lines = check(report, self.report_csv or "", self.report_text or "", html,
                                self.telemetry_truth, self._share_check)
            for line in lines:
                self.say(line)
            ok = good and ok
        else:
            ok = self._share_check("traffic-weighted share", report.get("used"), truth["used"],
                                   "%d of %d TB/week" % (truth["used-tb"], truth["volume-tb"])) and ok
            ok = self._share_check("configured hosts", report.get("configured"), truth["configured"],
                                   "%d/%d hosts with MTU >= 9000" % (truth["configured-hosts"],
                                                                     truth["hosts"])) and ok
        # By site (the reference every result carries); hosts are SITE or SITE6.
        holes = sorted((h.get("source_site") or _node(h.get("source") or ""),
                        h.get("dest_site") or _node(h.get("dest") or ""))
                       for h in report.get("blackholes") or [])
        good = holes == truth["blackholes"]
        ok = ok and good
        self.say("   report black holes: %d, truth %d %s" % (
            len(holes), len(truth["blackholes"]), "ok" if good else "MISMATCH"))
        if not good:
            self.say("     report: %s" % holes)
            self.say("     truth:  %s" % truth["blackholes"])
        return ok

    def _check_namespaces_gone(self, lab):
        listed = subprocess.run(["ip", "netns", "list"], stdout=subprocess.PIPE,
                                universal_newlines=True).stdout
        self.namespaces_left = [line.split()[0] for line in listed.splitlines()
                                if line.startswith(lab.prefix + "-")]
        if self.namespaces_left:
            self.fail("teardown", "namespaces left: %s" % " ".join(self.namespaces_left))
        else:
            self.say("   lab torn down: no namespace left")

    # -- stage 6: summary ----------------------------------------------------------------------

    def _summary(self, ok):
        say = self.say
        measured = [t for t in self.tasks if isinstance(t.result, dict) and
                    t.result.get("succeeded")]
        say("   pairs measured:     %d of %d directed pairs between %d sites" % (
            len(measured), len(self.tasks), len(mesh.SITES)))
        if measured:
            capable, paths, source = _capable(measured), len(measured), "measured"
            report = self.report_json or {}
            if isinstance(report.get("capable_paths"), int) and report.get("paths_measured"):
                capable, paths, source = report["capable_paths"], report["paths_measured"], "report"
            say("   jumbo-capable:      %d of %d paths (%.0f%%) carry 9000-byte packets both ways "
                "with no black hole (%s; DC26 target 50%%, DC28 99%%)" % (
                    capable, paths, 100.0 * capable / paths, source))
            forward = [t for t in measured if t.result.get("jumbo")]
            say("                       (%d of %d carry 9000 in the measured direction: the "
                "reverse path or a black hole stops the rest)" % (len(forward), len(measured)))
            tel = report.get("telemetry")
            if tel:
                say("   traffic on jumbo:   %.1f%% of the bytes sent (flowd-go telemetry; gap %.1f%%: "
                    "capable paths still at 1500)" % (100.0 * (tel["used"] or 0), 100.0 * (tel["gap"] or 0)))
                say("   configured:         %d of %d hosts at MTU 9000 (node exporter, measuring or not)"
                    % (report["configured_hosts"], report["hosts"]))
            holes = [t for t in measured if t.result.get("pmtud") == "blackhole"]
            real = [t for t in measured if mesh.expected(
                self.topology, t.source, t.dest)["pmtud"] == "blackhole"]
            say("   black holes:        %d paths where big packets vanish silently%s" % (
                len(holes), ":" if len(holes) == len(real) else
                " (the lab has %d: the self-check above lists the difference):" % len(real)))
            for task in holes:
                hole = task.result.get("blackhole") or {}
                truth = mesh.expected(self.topology, task.source, task.dest)
                router = mesh.node_of(self.topology, hole.get("ip")) if hole.get("ip") \
                    else None
                where = "at hop %s (%s = lab router %s)" % (hole.get("ttl"), hole.get("ip"),
                                                            router)
                if (hole.get("ttl"), router) != (truth["blackhole-ttl"],
                                                 truth["blackhole-router"]):
                    where += " - truth: hop %s, %s" % (truth["blackhole-ttl"],
                                                       truth["blackhole-router"])
                say("     %-6s -> %-6s %s%s" % (task.source, task.dest, where,
                                                ", some flows only" if truth["partial"] else ""))
            gains = [t for t in measured if (t.pair_result or {}).get("gain")]
            for task in gains:
                tp = task.pair_result
                say("   throughput gain:    %s -> %s x%.2f (1500: %s, jumbo: %s)" % (
                    task.source, task.dest, tp["gain"],
                    _mbps((tp.get("standard") or {}).get("mean") or 0),
                    _mbps((tp.get("jumbo") or {}).get("mean") or 0)))
            if not gains:
                say("   throughput gain:    not measured")
        say("   store:              %s" % (self.store_url or "none"))
        if self.started_opensearch:
            say("                       (OpenSearch left running: scripts/opensearch.sh stop)")
        if os.path.exists(self.html_path):
            say("   HTML report:        %s" % self.html_path)
        for stage, reason in self.skipped:
            say("   skipped (%s): %s" % (stage, reason))
        for stage, detail in self.failures:
            say("   failed (%s): %s" % (stage, detail))
        say("")
        say("   %s" % getattr(self, "ground_truth_line", "ground truth check: not run"))
        verdict = "OK" if (ok and not self.skipped and not self.failures) else "NOT OK"
        say("   demo %s in %.0fs" % (verdict, time.monotonic() - self.t0))


def _capable(tasks, target=mesh.TARGET_MTU):
    """Paths whose measurements show the target size both ways with no black hole (the
    report's rule: the reverse direction from the reflector or from the reverse pair)."""
    by_pair = dict((t.pair, t.result) for t in tasks)

    def good(result):
        return bool(result.get("succeeded")) and (result.get("path-mtu") or 0) >= target \
            and result.get("pmtud") != "blackhole"

    count = 0
    for task in tasks:
        result = task.result
        ok = good(result)
        if result.get("reverse-path-mtu") is not None:
            ok = ok and result["reverse-path-mtu"] >= target and \
                result.get("reverse-pmtud") != "blackhole"
        back = by_pair.get((task.dest, task.source))
        if back is not None:
            ok = ok and good(back)
        count += bool(ok)
    return count


def _node(host):
    """Lab node of a participant: the site name (host names are site names; "cern6" is the
    IPv6 name of cern)."""
    if host not in mesh.SITES and host.endswith("6") and host[:-1] in mesh.SITES:
        return host[:-1]
    return host
