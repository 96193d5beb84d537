"""Stage 3: archive every result with the `jumbo` archiver's `archive` process into the store
(an embedded SQLite store by default, or OpenSearch), as pScheduler's archiver would."""

import json
import os
import subprocess
import time

from . import parts
from .tasks import PAIR_TEST


def store_url(demo):
    if demo.args.archive:
        return demo.args.archive
    if demo.args.opensearch:
        return _start_opensearch(demo)
    path = os.path.join(demo.out, "jumbo.sqlite")
    # The archiver keeps SQLite stores in the directories the node's limits allow
    # (docs/security.md); the demo's own output directory is one, for its processes.
    os.environ["JUMBO_SQLITE_DIRS"] = ":".join(
        [d for d in (os.environ.get("JUMBO_SQLITE_DIRS"), demo.out) if d])
    # A fresh embedded store per run: the report then shows this run only.
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.unlink(path + suffix)
    return "sqlite:///" + path


def _start_opensearch(demo):
    """The local test OpenSearch (scripts/opensearch.sh): used if it already answers,
    started otherwise (and left running for a look afterwards). Each run archives under
    its own index prefix, so the report shows this run only."""
    script = os.path.join(parts.ROOT, "scripts", "opensearch.sh")
    if not os.path.exists(script):
        demo.skip("archive", "scripts/opensearch.sh is missing: cannot start OpenSearch")
        return None

    def call(*words, **kwargs):
        return subprocess.run(["bash", script] + list(words), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, universal_newlines=True,
                              timeout=kwargs.get("timeout", 30))

    if call("status").returncode != 0:
        demo.say("   starting OpenSearch (scripts/opensearch.sh start; up to a minute) ...")
        done = call("start", timeout=300)
        if done.returncode != 0:
            demo.fail("archive", "OpenSearch did not start: %s" % done.stdout.strip()[-400:])
            return None
        demo.started_opensearch = True
    url = call("url").stdout.strip() or "http://127.0.0.1:9250"
    prefix = time.strftime("demo%Y%m%d%H%M%S-", time.gmtime())
    return "%s?prefix=%s" % (url, prefix)


def envelope(demo, task, run=None):
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
        "data": demo.archive_data,
        "task-href": task_href,
        "run-href": run_href,
        "attempts": 0,
        "last-attempt": None,
        "result": {
            "id": run_uuid,
            "schedule": {"start": task.start, "duration": duration},
            "test": {"type": test_type, "spec": public_spec},
            "tool": {"name": "jumbocheck", "version": _tool_version()},
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


def _tool_version():
    try:
        return json.loads(parts.invoke("tool", "jumbocheck", "enumerate", None)).get(
            "version", "unknown")
    except Exception:  # noqa: BLE001 - the version is only shown; never stop the demo for it
        return "unknown"


def archive(demo):
    measured = [t for t in demo.tasks if isinstance(t.result, dict)]
    if not measured:
        demo.skip("archive", "no results to archive (nothing was measured)")
        return
    if not demo.parts["archiver"].ok:
        demo.skip("archive", "%s is not available (%s)" % (demo.parts["archiver"].name,
                                                            demo.parts["archiver"].detail))
        return
    if not demo.store_url:
        demo.skip("archive", "no store to archive into")
        return
    demo.archive_data = {"schema": 1, "_url": demo.store_url,
                         "retry-policy": [{"attempts": 3, "wait": "PT2S"}]}
    try:
        valid = parts.invoke_json("archiver", "jumbo", "data-is-valid",
                                 demo.archive_data)
    except Exception as err:  # noqa: BLE001 - reported as the archive step's failure
        demo.fail("archive", "data-is-valid: %s" % err)
        return
    if not valid.get("valid"):
        demo.fail("archive", "the archiver rejects %s: %s" % (demo.store_url,
                                                               valid.get("error")))
        return
    demo.prior_paths = _latest_count(demo)
    records = [envelope(demo, t) for t in measured]
    paired = [t for t in measured if isinstance(t.pair_result, dict)]
    records += [envelope(demo, t, t.paired) for t in paired]
    began = time.monotonic()
    try:
        outcomes = _archive_stream(records)
    except Exception as err:  # noqa: BLE001 - reported as the archive step's failure
        demo.fail("archive", "archive process: %s" % err)
        return
    stored = 0
    for task, outcome in zip(paired, outcomes[len(measured):]):
        if outcome.succeeded:
            stored += 1
        else:
            demo.fail("archive", "%s -> %s %s not archived after %d attempt(s): %s" % (
                task.source, task.dest, PAIR_TEST, outcome.attempts, outcome.error))
    for task, outcome in zip(measured, outcomes):
        task.archived = bool(outcome.succeeded)
        if task.archived:
            stored += 1
        else:
            demo.fail("archive", "%s -> %s not archived after %d attempt(s): %s" % (
                task.source, task.dest, outcome.attempts, outcome.error))
    demo.say("   %d/%d results archived into %s in %.1fs" % (
        stored, len(records), demo.store_url, time.monotonic() - began))
    _refresh_opensearch(demo)


def _latest_count(demo):
    """Paths the store already has a pmtu result for (None when it cannot be read)."""
    try:
        from jumbo.archive.stores import open_store
        store = open_store(demo.store_url)
        try:
            return len(store.latest("pmtu"))
        finally:
            store.close()
    except Exception:  # noqa: BLE001 - an empty or new store may not exist yet
        return None


def _refresh_opensearch(demo):
    """OpenSearch makes new documents searchable about once a second: ask for it now,
    so the report right after sees every result (a no-op for the embedded store)."""
    if not demo.store_url.startswith(("http://", "https://")):
        return
    try:
        from urllib.parse import parse_qs, urlsplit
        from urllib.request import Request, urlopen
        url = urlsplit(demo.store_url)
        prefix = (parse_qs(url.query).get("prefix") or [""])[0]
        target = "%s://%s%s/%s*/_refresh" % (url.scheme, url.netloc.rpartition("@")[2],
                                              url.path.rstrip("/"), prefix)
        urlopen(Request(target, data=b"", method="POST"), timeout=30).read()
    except Exception as err:  # noqa: BLE001 - the report will say if data is missing
        demo.say("   (could not refresh the OpenSearch indices: %s)" % err)


def _archive_stream(records):
    """Feed the records to one long-lived `archive` process (RFC 7464), as the archiver
    daemon does: the harness's archive_stream (retries included)."""
    harness = parts.load_harness()
    if not hasattr(harness, "archive_stream"):
        raise RuntimeError("tests/harness.py has no archive_stream")
    return harness.archive_stream("jumbo", records, retry_scale=0.2, max_wait=5.0)
