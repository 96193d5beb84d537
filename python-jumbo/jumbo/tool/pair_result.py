"""The jumbo-throughput test's result (a jumbo.core.result.PairResult): built on the source
from the path-MTU step's answer and the legs' Throughput (assemble), merged on the lead with
the dest's iperf3 server report (merge); every result is checked whole against its schema
(jumbo.core.schema) before it leaves."""

import copy

from ..core import validate as validation
from ..core.result import PATH_FIELDS, SUCCESS_VERDICTS, PairResult, Throughput
from ..core.result.members import attribute


def assemble(forward, forward_error, throughput, peer_error=None):
    """The test result from the path-MTU step's answer (a PathResult or None) and the legs'
    Throughput (or None).

    succeeded: the legs gave a verdict (a black hole or a skipped jumbo leg is a measurement);
    failed when no comparison could be made."""
    result = PairResult()
    if forward is not None:
        for name in map(attribute, PATH_FIELDS):
            if getattr(forward, name) is not None:
                setattr(result, name, getattr(forward, name))
    if result.path_mtu is None:
        result.path_mtu_error = forward_error or "the path MTU was not measured"
    if isinstance(throughput, Throughput):
        for name in map(attribute, PairResult.LEG_MEMBERS):
            if throughput.has(name) and getattr(throughput, name) is not None:
                setattr(result, name, copy.deepcopy(getattr(throughput, name)))
        error = throughput.error
    else:
        error = peer_error or "the throughput legs did not run"
    result.succeeded = result.verdict in SUCCESS_VERDICTS
    if not result.succeeded:
        result.error = error or result.first_leg_error() or "no leg gave a comparison"
    elif error:
        result.notes = list(result.notes) + [error]
    return _checked(result)


def _checked(result):
    valid, error = validation.check_pair_result(result.as_json())
    if valid:
        return result
    return PairResult.failed("internal error: the result does not match its schema (%s)" % error,
                             result.diags or "")


def merge(test, participant_results):
    """merged-results: p0's result (JSON, as pScheduler hands it over) as a PairResult, with
    p1's iperf3 server report as `server`."""
    if not isinstance(participant_results, list) or not participant_results:
        return failed("no participant results to merge")
    lead = participant_results[0]
    inner = lead.get("result") if isinstance(lead, dict) else None
    if not isinstance(inner, dict) or "schema" not in inner:
        error = (lead or {}).get("error") if isinstance(lead, dict) else None
        return failed(str(error or "the source participant produced no result"),
                      str((lead or {}).get("diags") or "") if isinstance(lead, dict) else "")
    result = PairResult.from_json(inner)
    dest = participant_results[1] if len(participant_results) > 1 else None
    notes = [result.diags or ""]
    if not isinstance(dest, dict):
        notes.append("the dest participant's result is missing")
    else:
        notes.append(_fold_server(result, dest))
    result.diags = "; ".join(n for n in notes if n)
    return _checked(result)


def _fold_server(result, dest):
    """p1's iperf3 server report into `result`; returns a note for diags (or None)."""
    note = None
    if not dest.get("succeeded"):
        note = "dest participant: %s" % (dest.get("error") or "failed")
    server = (dest.get("result") or {}).get("throughput-server") \
        if isinstance(dest.get("result"), dict) else None
    if isinstance(server, dict):
        result.server = server
        if not server.get("succeeded") and result.succeeded is False and not result.error:
            result.error = "iperf3 server: %s" % server.get("error")
    return note


def failed(error, diags=""):
    """A jumbo-throughput result that says why there is no measurement."""
    return PairResult.failed(error, diags)
