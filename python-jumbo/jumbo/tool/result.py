"""The pmtu test result: built from the phases on the source, merged with the dest's view.

`assemble` runs on the source (p0) at the end of its run: its output is already a complete
test result. `merge` runs on the lead in `merged-results`: it takes p0's result and folds in
what only p1 knows (PTBs its reflector received, which decide a reverse black hole when p0
could not ask; the iperf3 server's side of each throughput leg). Both always return a result
that validates whole against the schema (jumbo.core.schema.RESULT_V1; tests/harness.py checks
every lab result, nothing is repaired at run time). Both build a jumbo.core.result.PmtuResult;
the plugin methods turn it into JSON (as_json), merge reads the participants' JSON once
(PmtuResult.from_json).

Verdicts:
  succeeded   true whenever the forward phase measured a path MTU. A black hole found is a
              successful measurement; a missing or failing dest participant is reported in
              `reverse-error` / `diags` without failing the forward answer.
  jumbo       forward path MTU >= target-mtu (the direction the data flows in).
  pmtud       forward PMTUD verdict from the probe engine.
  reverse-*   dest -> source, measured with the dest's reflector (jumbo.tool.reflector).
"""

import copy

from ..core.mtu import is_jumbo
from ..core.result import PmtuResult, Ptb, Reverse, Throughput

# The forward answer's members (jumbo.probe.outcome.PathResult) the test result carries over.
FORWARD_FIELDS = ("path_mtu", "local_mtu", "pmtud", "blackhole", "method", "ip_version",
                  "dest_ip", "source_ip", "hops", "flows", "flows_not_measured", "probes",
                  "elapsed", "rtt", "ptb")


def _join(*parts):
    return "; ".join(p for p in parts if p)


def assemble(spec, forward, forward_error=None, reverse=None, throughput=None, peer_error=None):
    """The test result (a PmtuResult) from the phases' outputs, any of them None: `spec` a
    RunSpec, `forward` a PathResult, `reverse` a Reverse, `throughput` a Throughput."""
    result = PmtuResult(target_mtu=spec.target_mtu)
    notes = []
    if forward is not None:
        for name in FORWARD_FIELDS:
            value = getattr(forward, name)
            if value is not None:
                setattr(result, name, copy.deepcopy(value))
        notes.append("; ".join(forward.diags or []))
    if result.path_mtu is not None and not forward_error:
        result.succeeded = True
        result.jumbo = is_jumbo(result.path_mtu, result.target_mtu, result.pmtud)
    else:
        result.error = forward_error or "the forward path MTU could not be measured"
    if spec.reverse:
        if reverse is None:
            reverse = Reverse.not_measured(peer_error or "the reverse phase did not run")
        reverse.fold_into(result)
    if spec.throughput is not None:
        result.throughput = throughput if throughput is not None else \
            Throughput.failed(peer_error or "the throughput phase did not run")
    result.diags = _join(*notes)
    return result


# ----------------------------------------------------------------------------------------------
# merged-results

def failed(error, spec=None, diags=""):
    """A PmtuResult that says why there is no measurement (`spec`: the test's spec JSON)."""
    target = spec.get("target-mtu") if isinstance(spec, dict) and "target-mtu" in spec \
        else PmtuResult().target_mtu
    return PmtuResult.failed(error, target, diags)


def merge(test, participant_results):
    """merged-results: the test result (a PmtuResult) from [p0 output, p1 output | null], as
    pScheduler hands them over (JSON)."""
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
    result = PmtuResult.from_json(inner)
    notes = [result.diags or ""]
    dest = participant_results[1] if len(participant_results) > 1 else None
    if len(participant_results) > 1:
        notes.append(_fold_dest(result, spec, dest))
    result.diags = _join(*notes)
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
    if isinstance(result.throughput, Throughput) and isinstance(server, dict):
        result.throughput.server = server
        if not server.get("succeeded") and not result.throughput.error:
            result.throughput.error = "iperf3 server: %s" % server.get("error")
    return note


def _missing_reverse(result, spec, note):
    """`note` becomes the reverse error when the reverse path was asked for and p0 has neither
    its MTU nor an error for it; returns the note."""
    if spec.get("reverse") and result.reverse_path_mtu is None and not result.reverse_error:
        result.reverse_error = note
    return note


def _fold_reflector(result, report):
    """What p1's reflector saw of the reverse path: the PTBs it received (when more than p0
    heard of), its verdict when p0 lost the STATUS answer, its local MTU, its counters."""
    received = [Ptb.received(p) for p in report.get("ptb") or []]
    if received and len(received) > len(result.reverse_ptb or []):
        result.reverse_ptb = received
    reverse = result.reverse or {}
    if result.reverse_pmtud == "unknown" and reverse.get("pending") and \
            result.reverse_path_mtu is not None:
        # p0 found the reverse limit but lost p1's STATUS answer: p1's own report decides.
        result.reverse_pmtud = "ok" if any(p.useful for p in received) else "blackhole"
    if result.reverse_local_mtu is None and report.get("local-mtu"):
        result.reverse_local_mtu = report["local-mtu"]
    result.reverse = dict(reverse, **{"dest-stats": report.get("stats")})
