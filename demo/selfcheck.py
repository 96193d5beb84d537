"""Stage 5: the ground-truth self-check: every measured value, the store's read-back and the
report's headline against what the lab was built to be; and the lab's teardown."""

import functools
import os
import subprocess

from . import archive, checks
from .tasks import node


def self_check(demo):
    ok = True
    measured = [t for t in demo.tasks if isinstance(t.result, dict)]
    exact = [t for t in measured if t.checks and all(c.ok for c in t.checks)]
    if measured:
        demo.say("   measurements: %d/%d paths exact (path MTU, PMTUD verdict, per-flow "
                 "MTUs, reverse path)" % (len(exact), len(measured)))
    for task in measured:
        for check in task.checks:
            if not check.ok:
                demo.say("     MISMATCH %s: %s" % (check.what, check.detail))
    if len(exact) != len(measured) or not measured:
        ok = False
    if len(exact) != len(measured):
        demo.say("     (MISMATCH: the measurement disagrees with what the lab was built to "
                 "be; the lab is the reference, so this points at the suite)")
    if len(measured) != len(demo.tasks):
        demo.say("   %d of %d pairs have no measurement" % (len(demo.tasks) - len(measured),
                                                         len(demo.tasks)))
    stored = _count_stored(demo, measured)
    if stored is not None:
        good = stored == len(measured)
        ok = ok and good
        demo.say("   store: %d/%d results read back as the latest of their path from %s %s" % (
            stored, len(measured), demo.store_url, "" if good else "(MISSING SOME)"))
    if demo.report_json is not None:
        if getattr(demo, "prior_paths", None):
            demo.say("   report headline not compared with the truth: the store already "
                     "held %d paths before this run" % demo.prior_paths)
        else:
            ok = _check_report(demo, measured) and ok
    gone = demo.namespaces_left == []
    demo.say("   lab teardown: %s" % ("no namespace left (ip netns list)" if gone else
                                      "LEFT BEHIND: %s" % demo.namespaces_left))
    ok = ok and gone
    if not measured:
        demo.ground_truth_line = "ground truth check: not run (nothing was measured)"
    else:
        demo.ground_truth_line = "ground truth check: %d/%d paths exact%s" % (
            len(exact), len(demo.tasks), "" if ok else " - SELF-CHECK FAILED")
    demo.say("   " + demo.ground_truth_line)
    return ok


def _count_stored(demo, measured):
    """How many of this run's results the store holds as the latest of their path
    (read back through the store interface; None = not checked)."""
    if not demo.store_url or not any(t.archived is not None for t in measured):
        return None
    try:
        from jumbo.archive import record as records
        from jumbo.archive.stores import open_store
        wanted = set(records.normalize(archive.envelope(demo, t))[0]["id"] for t in measured)
        store = open_store(demo.store_url)
        try:
            latest = set(row["id"] for row in store.latest("pmtu"))
        finally:
            store.close()
    except Exception as err:  # noqa: BLE001 - reported, never a traceback
        demo.fail("demo-check", "cannot read the store back: %s: %s"
                  % (type(err).__name__, err))
        return 0
    return len(wanted & latest)


def _share_check(demo, label, measured, expected, detail):
    """One headline share of the report against the lab's truth; says so, returns ok."""
    good = measured is not None and expected is not None and abs(measured - expected) < 1e-6
    shown = "%.3f" % measured if isinstance(measured, (int, float)) else measured
    demo.say("   report %s: %s, truth %.3f (%s) %s" % (
        label, shown, expected or 0, detail, "ok" if good else "MISMATCH"))
    return good


def _check_report(demo, measured):
    truth = checks.headline_truth(demo.topology, [
        (t.source, t.dest, bool(t.spec.get("reverse"))) for t in measured if t.archived])
    report = demo.report_json
    ok = True
    paths = report.get("paths")
    count = len(paths) if isinstance(paths, list) else paths
    good = count == truth["paths"]
    ok = ok and good
    demo.say("   report paths: %s, truth %d %s" % (count, truth["paths"],
                                                  "ok" if good else "MISMATCH"))
    capable = report.get("capable")
    if isinstance(capable, dict):
        capable = capable.get("share", capable.get("value"))
    ok = _share_check(demo, "jumbo-capable share", capable, truth["capable"], "%d/%d" % (
        truth["capable-paths"], truth["paths"])) and ok
    if report.get("telemetry") and demo.telemetry_truth:
        from .telemetry import check
        html = open(demo.html_path).read() if os.path.exists(demo.html_path) else ""
        good, lines = check(report, demo.report_csv or "", demo.report_text or "", html,
                            demo.telemetry_truth, functools.partial(_share_check, demo))
        for line in lines:
            demo.say(line)
        ok = good and ok
    else:
        ok = _share_check(demo, "traffic-weighted share", report.get("used"), truth["used"],
                               "%d of %d TB/week" % (truth["used-tb"], truth["volume-tb"])) and ok
        ok = _share_check(demo, "configured hosts", report.get("configured"), truth["configured"],
                               "%d/%d hosts with MTU >= 9000" % (truth["configured-hosts"],
                                                                 truth["hosts"])) and ok
    if getattr(demo, "firefly_truth", None):
        from .fireflies import check as check_fireflies
        html = open(demo.html_path).read() if os.path.exists(demo.html_path) else ""
        good, lines = check_fireflies(report, demo.report_csv or "", demo.report_text or "", html,
                                      demo.firefly_truth)
        for line in lines:
            demo.say(line)
        ok = good and ok
    # By site (the reference every result carries); hosts are SITE or SITE6.
    holes = sorted((h.get("source_site") or node(h.get("source") or ""),
                    h.get("dest_site") or node(h.get("dest") or ""))
                   for h in report.get("blackholes") or [])
    good = holes == truth["blackholes"]
    ok = ok and good
    demo.say("   report black holes: %d, truth %d %s" % (
        len(holes), len(truth["blackholes"]), "ok" if good else "MISMATCH"))
    if not good:
        demo.say("     report: %s" % holes)
        demo.say("     truth:  %s" % truth["blackholes"])
    return ok


def namespaces_gone(demo, lab):
    listed = subprocess.run(["ip", "netns", "list"], stdout=subprocess.PIPE,
                            universal_newlines=True).stdout
    demo.namespaces_left = [line.split()[0] for line in listed.splitlines()
                            if line.startswith(lab.prefix + "-")]
    if demo.namespaces_left:
        demo.fail("teardown", "namespaces left: %s" % " ".join(demo.namespaces_left))
    else:
        demo.say("   lab torn down: no namespace left")
