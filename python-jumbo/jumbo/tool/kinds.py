"""The two kinds of run the jumbocheck tool makes, one object each, chosen once from the test's
type where the run is made (jumbo.tool.runner.test_kind): what differs between a `pmtu` run and
a `jumbo-throughput` run lives here, so no phase asks which test it serves.

    kind.TEST                       the test's name
    kind.spec(spec)                 the tool's RunSpec for a spec of the test (ValueError)
    kind.phases(full)               seconds per phase (jumbo.core.spec.slot)
    kind.available()                (ok, reason): what this node needs beyond the probe
    kind.participant_data(i, full)  what the kind adds to participant i's data
    kind.forward(run)               the forward phase: (PathResult or None, error or None)
    kind.legs(run, peer, dest_ip, version, forward)  the legs' Throughput, or None
    kind.serve_legs(run, data, secret, deadline, iperf)  p1's iperf3 server: (thread, notes)
    kind.assemble(run, forward, forward_error, reverse, legs, peer_error)  the result
"""

from .. import probe
from ..core import schema as schemas
from ..core import spec as specs
from ..core.spec import RunSpec, slot as slots
from . import dest, iperf_auth, pair_result, result as results, source, throughput
from . import reverse as reverse_search


class PmtuRun(object):
    """A `pmtu` run: background, forward (and reverse, hops, flows as asked), no bulk traffic."""

    TEST = "pmtu"

    def spec(self, spec):
        valid, error = specs.validate(spec)
        if not valid:
            raise ValueError("Invalid spec: %s" % error)
        return RunSpec(spec)

    def phases(self, full):
        reverse = reverse_search.max_duration(full) if full.reverse else 0.0
        return slots.phases(full, probe.max_duration(full), reverse)

    def available(self):
        return True, None

    def participant_data(self, index, full):
        return {}

    def forward(self, run):
        return source.forward_early(run)

    def legs(self, run, peer, dest_ip, version, forward):
        return None

    def serve_legs(self, run, data, secret, deadline, iperf):
        return None, []

    def assemble(self, run, forward, forward_error, reverse, legs, peer_error):
        return results.assemble(run.full, forward, forward_error, reverse, legs,
                                peer_error=peer_error)


class PairRun(object):
    """A `jumbo-throughput` run: exclusive; the path MTU with one flow, bounded, then the
    paired iperf3 legs against the dest's server. Its spec becomes the tool's internal,
    pmtu-shaped spec (jumbo.core.spec.internal_spec)."""

    TEST = schemas.PAIR_TEST

    def validate(self, spec):
        """Full validation of a jumbo-throughput spec, its slot rule included."""
        return specs.validate_pair(spec, probe.max_duration)

    def spec(self, spec):
        valid, error = self.validate(spec)
        if not valid:
            raise ValueError("Invalid spec: %s" % error)
        return RunSpec(specs.internal_spec(spec))

    def phases(self, full):
        return slots.phases(full, probe.max_duration(full), forward_cap=slots.PATH_MTU_BUDGET)

    def available(self):
        try:
            ok, reason = throughput.available()
        except Exception as err:  # noqa: BLE001 - can-run must answer, not crash
            ok, reason = False, "the throughput phase is not available: %s" % err
        if ok:
            ok, reason = iperf_auth.can_run()
        return ok, None if ok else "throughput phase: %s" % reason

    def participant_data(self, index, full):
        data = iperf_auth.participant_data(index)  # keys: see iperf_auth
        if index == 1:
            data["iperf3-port"] = full.throughput.port or throughput.choose_port()
        return data

    def forward(self, run):
        return source.forward_bounded(run)

    def legs(self, run, peer, dest_ip, version, forward):
        return source.legs_phase(run, peer, dest_ip, version, forward)

    def serve_legs(self, run, data, secret, deadline, iperf):
        return dest.serve_legs(run, data, secret, deadline, iperf)

    def assemble(self, run, forward, forward_error, reverse, legs, peer_error):
        return pair_result.assemble(forward, forward_error, legs, peer_error=peer_error)


KINDS = dict((kind.TEST, kind) for kind in (PmtuRun(), PairRun()))
