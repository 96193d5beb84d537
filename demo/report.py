"""Stage 4: the adoption report, `jumbo-report` on the store in every format (text on the
terminal, HTML, CSV and JSON in files), with the traffic and interface MTUs served to a real
Prometheus when it is installed."""

import json
import os
import subprocess

from . import mesh, parts


def report(demo):
    if not demo.parts["report"].ok:
        demo.skip("report", "%s is not available (%s)" % (demo.parts["report"].name,
                                                          demo.parts["report"].detail))
        return
    if not any(t.archived for t in demo.tasks):
        demo.skip("report", "nothing was archived, so there is nothing to report on")
        return
    base = parts.report_command() + ["--store", demo.store_url]
    volumes = _write_volumes(demo)
    if volumes:
        base += ["--volumes", volumes]
    prometheus = _serve_telemetry(demo)
    if prometheus:
        base += ["--prometheus", prometheus, "--sites", demo.serving.sites_file]
    if getattr(demo, "firefly_truth", None):
        base += ["--fireflies"]         # used from the fireflies collected (demo/fireflies.py)
    csv_out = os.path.join(demo.out, "report.csv")
    if _run_report(demo, base + ["--format", "csv", "--out", csv_out]) is not None:
        with open(csv_out) as handle:
            demo.report_csv = handle.read()
    text = demo.report_text = _run_report(demo, base + ["--format", "text"])
    if text is not None:
        for line in text.rstrip("\n").splitlines():
            demo.say("   | " + line)
    if os.path.exists(demo.html_path):
        os.unlink(demo.html_path)
    if _run_report(demo, base + ["--format", "html", "--out", demo.html_path]) is not None:
        if os.path.exists(demo.html_path) and os.path.getsize(demo.html_path) > 0:
            demo.say("   HTML report written to %s (open it in a browser; works offline)"
                     % demo.html_path)
        else:
            demo.fail("report", "jumbo-report --format html wrote no file")
    raw = _run_report(demo, base + ["--format", "json"])
    if raw is not None:
        try:
            demo.report_json = json.loads(raw)
            with open(os.path.join(demo.out, "report.json"), "w") as handle:
                handle.write(raw)
        except ValueError:
            demo.fail("report", "jumbo-report --format json printed no JSON")
    stop_telemetry(demo)


def _serve_telemetry(demo):
    """The traffic and the interface MTUs to a real Prometheus (demo/telemetry.py): its URL,
    or None (said why)."""
    from . import telemetry
    demo.serving = None
    why = telemetry.missing()
    if why:
        demo.skip("telemetry", "%s: used and configured cannot be measured; the report falls "
                  "back to the volume matrix and the measuring hosts' local MTU" % why)
        return None
    measured = [(t.source, t.dest, bool(t.spec.get("reverse"))) for t in demo.tasks if t.archived]
    try:
        demo.serving = telemetry.Serving(demo.topology, measured, demo.out)
        demo.telemetry_truth = demo.serving.truth
        url = demo.serving.start()
    except Exception as err:  # noqa: BLE001 - reported, never a traceback
        demo.fail("telemetry", "Prometheus did not start: %s" % err)
        stop_telemetry(demo)
        return None
    demo.say("   traffic (the volume matrix as flowd-go flows, %.0f TB/week) and %d hosts' "
             "interface MTUs (node exporter) served to Prometheus at %s"
             % (demo.serving.total / 1e12, demo.serving.truth["hosts"], url))
    return url


def stop_telemetry(demo):
    if getattr(demo, "serving", None) is not None:
        demo.serving.stop()
        demo.serving = None


def _write_volumes(demo):
    """The traffic matrix (demo/mesh.py) between the sites measured, as the report's CSV."""
    measured = [t for t in demo.tasks if t.archived]
    names = set(s for t in measured for s in t.pair)
    path = os.path.join(demo.out, "volumes.csv")
    with open(path, "w") as handle:
        handle.write("source_site,dest_site,bytes\n")
        for source in mesh.SITES:
            for dest in mesh.SITES:
                if source != dest and source in names and dest in names:
                    handle.write("%s,%s,%d\n" % (source, dest,
                                                  mesh.volume_tb(source, dest) * 10 ** 12))
    return path


def _run_report(demo, argv):
    try:
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=120)
    except subprocess.TimeoutExpired:
        demo.fail("report", "%s timed out" % " ".join(argv[-2:]))
        return None
    if done.returncode != 0:
        demo.fail("report", "jumbo-report %s failed (exit %d): %s" % (
            " ".join(argv[-2:]), done.returncode, done.stderr.strip()[-400:]))
        return None
    return done.stdout
