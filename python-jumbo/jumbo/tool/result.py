"""The pmtu test result: built from the phases on the source, merged with the dest's view.

`assemble` runs on the source (p0) at the end of its run: its output is already a complete
test result. `merge` runs on the lead in `merged-results`: it takes p0's result and folds in
what only p1 knows (PTBs its reflector received, which decide a reverse black hole when p0
could not ask; the iperf3 server's side of each throughput leg). Both always return a result
that validates whole against the schema (jumbo.core.schema.RESULT_V1; tests/harness.py checks
every lab result, nothing is repaired at run time).

Verdicts:
  succeeded   true whenever the forward phase measured a path MTU. A black hole found is a
              successful measurement; a missing or failing dest participant is reported in
              `reverse-error` / `diags` without failing the forward answer.
  jumbo       forward path MTU >= target-mtu (the direction the data flows in).
  pmtud       forward PMTUD verdict from the probe engine.
  reverse-*   dest -> source, measured with the dest's reflector (jumbo.tool.reflector).
"""

import copy

from ..core.mtu import DEFAULT_TARGET_MTU, is_jumbo

SCHEMA = 1

# Fields of the probe engine's answer that the test result carries over as they are.
FORWARD_FIELDS = ("path-mtu", "local-mtu", "pmtud", "blackhole", "method", "ip-version",
                  "dest-ip", "source-ip", "hops", "flows", "flows-not-measured", "probes",
                  "elapsed", "ptb")


def _base(spec):
    target = (spec or {}).get("target-mtu", DEFAULT_TARGET_MTU)
    return {"schema": SCHEMA, "succeeded": False, "error": None, "diags": "",
            "path-mtu": None, "local-mtu": None, "target-mtu": target, "jumbo": None,
            "pmtud": "unknown", "blackhole": None, "hops": [], "flows": [],
            "flows-not-measured": 0, "ptb": [],
            "probes": 0, "reverse-path-mtu": None, "throughput": None}


def _join(*parts):
    return "; ".join(p for p in parts if p)


def assemble(spec, forward, forward_error=None, reverse=None, throughput=None, peer_error=None):
    """The test result from the phases' outputs (any of them may be None)."""
    spec = spec or {}
    result = _base(spec)
    notes = []
    if isinstance(forward, dict):
        for key in FORWARD_FIELDS:
            if key in forward and forward[key] is not None:
                result[key] = copy.deepcopy(forward[key])
        if forward.get("diags"):
            notes.append(str(forward["diags"]))
    if result["path-mtu"] is not None and not forward_error:
        result["succeeded"] = True
        result["jumbo"] = is_jumbo(result["path-mtu"], result["target-mtu"], result["pmtud"])
    else:
        result["error"] = forward_error or "the forward path MTU could not be measured"
    if spec.get("reverse"):
        _fold_reverse(result, reverse, peer_error)
    if spec.get("throughput") is not None:
        result["throughput"] = throughput if isinstance(throughput, dict) else {
            "runs": [], "verdict": "failed", "skipped": None,
            "error": peer_error or "the throughput phase did not run"}
    result["diags"] = _join(*notes)
    return result


def _fold_reverse(result, reverse, peer_error):
    if not isinstance(reverse, dict):
        reverse = {"error": peer_error or "the reverse phase did not run"}
    result["reverse-path-mtu"] = reverse.get("reverse-path-mtu")
    result["reverse-pmtud"] = reverse.get("reverse-pmtud") or "unknown"
    result["reverse-local-mtu"] = reverse.get("reverse-local-mtu")
    result["reverse-ptb"] = [_ptb(p) for p in reverse.get("reverse-ptb") or []]
    result["reverse-error"] = reverse.get("error")
    result["reverse-flows"] = [_flow(f) for f in reverse.get("reverse-flows") or []]
    if reverse.get("probes"):
        result["probes"] = int(result.get("probes") or 0) + int(reverse["probes"])
    detail = {}
    for key in ("rtt", "elapsed", "probes", "rounds", "reflector", "notes", "pending"):
        if reverse.get(key) is not None:
            detail[key] = reverse[key]
    result["reverse"] = detail


def _flow(entry):
    entry = entry if isinstance(entry, dict) else {}
    return {"flow": entry.get("flow"), "source-port": entry.get("source-port"),
            "flow-label": None, "path-mtu": entry.get("path-mtu"),
            "pmtud": entry.get("pmtud") or "unknown"}


def _ptb(entry):
    entry = entry if isinstance(entry, dict) else {}
    return {"from": entry.get("from"), "mtu": entry.get("mtu"), "size": entry.get("size"),
            "useful": bool(entry.get("useful")), "count": entry.get("count") or 1}


# ----------------------------------------------------------------------------------------------
# merged-results

def failed(error, spec=None, diags=""):
    result = _base(spec)
    result["error"] = error
    result["diags"] = diags or ""
    return result


def merge(test, participant_results):
    """merged-results: the test result from [p0 output, p1 output | null]."""
    spec = test.get("spec") if isinstance(test, dict) else None
    spec = spec if isinstance(spec, dict) else {}
    if not isinstance(participant_results, list) or not participant_results:
        return failed("no participant results to merge", spec)
    lead = participant_results[0]
    if not isinstance(lead, dict):
        return failed("the source participant produced no result", spec)
    inner = lead.get("result")
    if not isinstance(inner, dict) or "schema" not in inner:
        error = lead.get("error") or "the source participant failed"
        return failed(str(error), spec, str(lead.get("diags") or ""))
    result = copy.deepcopy(inner)
    notes = [result.get("diags") or ""]
    dest = participant_results[1] if len(participant_results) > 1 else None
    if len(participant_results) > 1:
        notes.append(_fold_dest(result, spec, dest))
    result["diags"] = _join(*notes)
    return result


def _fold_dest(result, spec, dest):
    """Add p1's view to p0's result; returns a note for diags."""
    if not isinstance(dest, dict):
        return _missing_reverse(result, spec, "the dest participant's result is missing")
    note = None
    if not dest.get("succeeded"):
        note = _missing_reverse(result, spec,
                                "dest participant: %s" % (dest.get("error") or "failed"))
    inner = dest.get("result") if isinstance(dest.get("result"), dict) else {}
    report = inner.get("reflector")
    if isinstance(report, dict) and spec.get("reverse"):
        _fold_reflector(result, report)
    server = inner.get("throughput-server")
    if isinstance(result.get("throughput"), dict) and isinstance(server, dict):
        result["throughput"]["server"] = server
        if not server.get("succeeded") and not result["throughput"].get("error"):
            result["throughput"]["error"] = "iperf3 server: %s" % server.get("error")
    return note


def _missing_reverse(result, spec, note):
    """`note` becomes the reverse error when the reverse path was asked for and p0 has neither
    its MTU nor an error for it; returns the note."""
    if spec.get("reverse") and result.get("reverse-path-mtu") is None \
            and not result.get("reverse-error"):
        result["reverse-error"] = note
    return note


def _fold_reflector(result, report):
    """What p1's reflector saw of the reverse path: the PTBs it received (when more than p0
    heard of), its verdict when p0 lost the STATUS answer, its local MTU, its counters."""
    received = [_ptb(p) for p in report.get("ptb") or []]
    if received and len(received) > len(result.get("reverse-ptb") or []):
        result["reverse-ptb"] = received
    reverse = result.get("reverse") or {}
    if result.get("reverse-pmtud") == "unknown" and reverse.get("pending") and \
            result.get("reverse-path-mtu") is not None:
        # p0 found the reverse limit but lost p1's STATUS answer: p1's own report decides.
        result["reverse-pmtud"] = "ok" if any(p["useful"] for p in received) else "blackhole"
    if result.get("reverse-local-mtu") is None and report.get("local-mtu"):
        result["reverse-local-mtu"] = report["local-mtu"]
    result["reverse"] = dict(reverse, **{"dest-stats": report.get("stats")})
