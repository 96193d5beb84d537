"""Stage 2: measure every task through the plugin harness the tests use, a few pairs at a
time (pairs running together share no site), the tool as the unprivileged user."""

import datetime
import threading
import time

from . import checks, mesh, parts
from .tasks import Interrupted, node

# Seconds between scheduling a run and its start: covers starting every participant's `run`.
START_IN = 2.0


def measure(demo, lab):
    for key in ("test", "tool", "harness", "user"):
        if not demo.parts[key].ok:
            demo.skip("measure", "%s is not available (%s): nothing can be measured"
                      % (demo.parts[key].name, demo.parts[key].detail))
            return
    demo.harness = parts.load_harness()
    # Specs first, through the test plugin as the server would on task creation.
    for task in demo.tasks:
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
            demo.fail("measure", "%s -> %s: %s" % (task.source, task.dest, task.error))
    # Long tasks first (throughput phases, two-participant runs), so that they overlap
    # with the many short ones; at most one throughput phase at a time (the two cores
    # are shared by everything in the lab, and legs running together would skew gains).
    pending = [t for t in demo.tasks if t.error is None]
    pending.sort(key=lambda t: (0 if t.paired is not None else
                                1 if len(t.participants or ()) > 1 else 2, t.number))
    _run_concurrently(demo, lab, pending)


def _run_concurrently(demo, lab, tasks):
    queue = list(tasks)
    busy = set()
    running = []
    limit = demo.args.concurrency

    def worker(task):
        try:
            _run_one(demo, lab, task)
        finally:
            with demo.lock:
                busy.discard(task.source)
                busy.discard(task.dest)
                if task.paired is not None:
                    busy.discard("throughput")

    while queue or running:
        running = [t for t in running if t.is_alive()]
        if demo.stop.is_set():
            queue = []
        started = False
        if len(running) < limit:
            with demo.lock:
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


def _run_one(demo, lab, task):
    total = len(demo.tasks)
    with demo.lock:
        # Numbered in the order they start, so the counter reads as progress.
        demo.started_count = getattr(demo, "started_count", 0) + 1
        task.number = demo.started_count
    demo.say("   [%2d/%d] %-6s -> %-6s  %s ..." % (task.number, total, task.source, task.dest,
                                                   task.phases()))
    task.start = _now_iso()
    began = time.monotonic()
    try:
        task.result, task.outputs = _harness_run(demo, lab, task)
    except (KeyboardInterrupt, Interrupted):
        raise
    except Exception as err:  # noqa: BLE001 - reported, never a traceback
        task.error = "%s: %s" % (type(err).__name__, err)
    task.elapsed = time.monotonic() - began
    task.end = _now_iso()
    if task.error is None and not (isinstance(task.result, dict) and "succeeded" in task.result):
        task.error = "the tool returned no result object"
    if task.error is not None:
        demo.fail("measure", "[%d] %s -> %s: %s" % (task.number, task.source, task.dest,
                                                    task.error))
        if not demo.args.keep_going:
            demo.stop.set()
            demo.say("   stopping the measurements (use --keep-going to measure every pair "
                     "regardless)")
        return
    task.checks = checks.measurement(demo.topology, task.source, task.dest, task.result,
                                     task.spec)
    if task.paired is not None and not demo.stop.is_set():
        pair = task.paired
        try:
            pair.result, pair.outputs = _harness_run(demo, lab, task, pair)
        except (KeyboardInterrupt, Interrupted):
            raise
        except Exception as err:  # noqa: BLE001 - reported, never a traceback
            pair.error = "%s: %s" % (type(err).__name__, err)
        if pair.error is None and not (isinstance(pair.result, dict)
                                       and pair.result.get("succeeded")):
            pair.error = (pair.result or {}).get("error") or "no result"
        if pair.error is not None:
            demo.fail("measure", "[%d] %s -> %s: %s: %s" % (
                task.number, task.source, task.dest, pair.test_type, pair.error))
    demo.say("   [%2d/%d] %-6s -> %-6s  %s  (%.1fs)" % (
        task.number, total, task.source, task.dest, _one_line(demo, task), task.elapsed))
    if not task.result.get("succeeded"):
        demo.fail("measure", "[%d] %s -> %s: measurement failed: %s" % (
            task.number, task.source, task.dest, task.result.get("error")))
        if not demo.args.keep_going:
            demo.stop.set()
            demo.say("   stopping the measurements (use --keep-going to measure every pair "
                     "regardless)")


def _harness_run(demo, lab, task, run=None):
    """One run through the harness: duration, participant-data, run on every participant
    with one start time, merged-results on the lead; as the server would, the tool as the
    unprivileged user jumbotest inside each site's namespace. `run`: the task's
    own (pmtu) run by default."""
    run = run or task
    places = [{"lab": lab, "node": node(name), "user": parts.TOOL_USER}
              for name in run.participants]
    outcome = demo.harness.run_tool_participants(
        "jumbocheck", {"type": run.test_type, "spec": run.spec}, places,
        start_in=START_IN)
    for index, done in enumerate(outcome.runs):
        if done is not None and done.status != 0:
            demo.say("   [%2d] participant %d run exited %d: %s" % (
                task.number, index, done.status, done.stderr.strip()[-300:]))
    return outcome.merged, outcome.results


def _one_line(demo, task):
    r = task.result
    truth = mesh.expected(demo.topology, task.source, task.dest)
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


def _now_iso():
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
