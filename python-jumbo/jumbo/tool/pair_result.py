"""The jumbo-throughput test's result: built on the source from the path-MTU step's answer and
the legs' `throughput` object (assemble), merged on the lead with the dest's iperf3 server
report (merge); every result is checked whole against its schema (jumbo.core.schema)."""

import copy

from ..core import validate as validation

SCHEMA = 1

# What the path-MTU step contributes, from the probe engine's answer.
PATH_FIELDS = ("path-mtu", "local-mtu", "pmtud", "dest-ip", "source-ip", "ip-version")
SUCCESS_VERDICTS = ("jumbo-faster", "jumbo-slower", "no-difference", "blackhole", "skipped")


def _base():
    return {"schema": SCHEMA, "succeeded": False, "error": None, "diags": "",
            "path-mtu": None, "pmtud": "unknown", "path-mtu-error": None,
            "runs": [], "standard": None, "jumbo": None, "gain": None, "gain-noise": None,
            "mathis": None, "verdict": "failed", "skipped": None, "jumbo-mtu": None,
            "notes": []}


def assemble(forward, forward_error, throughput, peer_error=None):
    """The test result from the path-MTU step's answer and the legs' `throughput` object.

    succeeded: the legs gave a verdict (a black hole or a skipped jumbo leg is a measurement);
    failed when no comparison could be made."""
    result = _base()
    if isinstance(forward, dict):
        for key in PATH_FIELDS:
            if forward.get(key) is not None:
                result[key] = forward[key]
    if result["path-mtu"] is None:
        result["path-mtu-error"] = forward_error or "the path MTU was not measured"
    if isinstance(throughput, dict):
        for key in ("runs", "standard", "jumbo", "gain", "gain-noise", "mathis", "verdict",
                    "skipped", "jumbo-mtu", "notes", "by-direction"):
            if key in throughput and throughput[key] is not None:
                result[key] = copy.deepcopy(throughput[key])
        error = throughput.get("error")
    else:
        error = peer_error or "the throughput legs did not run"
    result["succeeded"] = result["verdict"] in SUCCESS_VERDICTS
    if not result["succeeded"]:
        result["error"] = error or _first_leg_error(result) or "no leg gave a comparison"
    elif error:
        result["notes"] = list(result["notes"]) + [error]
    return _checked(result)


def _first_leg_error(result):
    for run in result.get("runs") or []:
        if isinstance(run, dict) and run.get("error"):
            return "leg %s: %s" % (run.get("order"), run["error"])
    return None


def _checked(result):
    valid, error = validation.check_pair_result(result)
    if valid:
        return result
    broken = _base()
    broken["error"] = "internal error: the result does not match its schema (%s)" % error
    broken["diags"] = result.get("diags") or ""
    return broken


def merge(test, participant_results):
    """merged-results: p0's result, with p1's iperf3 server report as `server`."""
    if not isinstance(participant_results, list) or not participant_results:
        return failed("no participant results to merge")
    lead = participant_results[0]
    inner = lead.get("result") if isinstance(lead, dict) else None
    if not isinstance(inner, dict) or "schema" not in inner:
        error = (lead or {}).get("error") if isinstance(lead, dict) else None
        return failed(str(error or "the source participant produced no result"),
                       str((lead or {}).get("diags") or "") if isinstance(lead, dict) else "")
    result = copy.deepcopy(inner)
    dest = participant_results[1] if len(participant_results) > 1 else None
    notes = [result.get("diags") or ""]
    if not isinstance(dest, dict):
        notes.append("the dest participant's result is missing")
    else:
        if not dest.get("succeeded"):
            notes.append("dest participant: %s" % (dest.get("error") or "failed"))
        server = (dest.get("result") or {}).get("throughput-server") \
            if isinstance(dest.get("result"), dict) else None
        if isinstance(server, dict):
            result["server"] = server
            if not server.get("succeeded") and result.get("succeeded") is False \
                    and not result.get("error"):
                result["error"] = "iperf3 server: %s" % server.get("error")
    result["diags"] = "; ".join(n for n in notes if n)
    return _checked(result)


def failed(error, diags=""):
    """A jumbo-throughput result that says why there is no measurement."""
    result = _base()
    result["error"] = error
    result["diags"] = diags
    return result
