"""Stage 6: the summary: pairs measured, the jumbo-capable share, black holes, throughput
gains, where the report went, and the verdict."""

import os
import time

from . import mesh


def summary(demo, ok):
    say = demo.say
    measured = [t for t in demo.tasks if isinstance(t.result, dict) and
                t.result.get("succeeded")]
    say("   pairs measured:     %d of %d directed pairs between %d sites" % (
        len(measured), len(demo.tasks), len(mesh.SITES)))
    if measured:
        capable, paths, source = _capable(measured), len(measured), "measured"
        report = demo.report_json or {}
        if isinstance(report.get("capable_paths"), int) and report.get("paths"):
            capable, paths, source = report["capable_paths"], report["paths"], "report"
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
        ff = report.get("fireflies")
        if ff and ff.get("used") is not None:
            say("   used (fireflies):   %.1f%% of the bytes sent with a known MSS went on jumbo-sized "
                "segments; %.1f%% of the bytes had no MSS (flows shorter than the period)"
                % (100.0 * ff["used"], 100.0 * (ff["unknown_mss_share"] or 0)))
        holes = [t for t in measured if t.result.get("pmtud") == "blackhole"]
        real = [t for t in measured if mesh.expected(
            demo.topology, t.source, t.dest)["pmtud"] == "blackhole"]
        say("   black holes:        %d paths where big packets vanish silently%s" % (
            len(holes), ":" if len(holes) == len(real) else
            " (the lab has %d: the demo-check above lists the difference):" % len(real)))
        for task in holes:
            hole = task.result.get("blackhole") or {}
            truth = mesh.expected(demo.topology, task.source, task.dest)
            router = mesh.node_of(demo.topology, hole.get("ip")) if hole.get("ip") \
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
    say("   store:              %s" % (demo.store_url or "none"))
    if demo.started_opensearch:
        say("                       (OpenSearch left running: scripts/opensearch.sh stop)")
    if os.path.exists(demo.html_path):
        say("   HTML report:        %s" % demo.html_path)
    for stage, reason in demo.skipped:
        say("   skipped (%s): %s" % (stage, reason))
    for stage, detail in demo.failures:
        say("   failed (%s): %s" % (stage, detail))
    say("")
    say("   %s" % getattr(demo, "ground_truth_line", "ground truth check: not run"))
    verdict = "OK" if (ok and not demo.skipped and not demo.failures) else "NOT OK"
    say("   demo %s in %.0fs" % (verdict, time.monotonic() - demo.t0))


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


def _mbps(bits):
    return "%.2f Gbit/s" % (bits / 1e9) if bits >= 1e9 else "%.0f Mbit/s" % (bits / 1e6)
