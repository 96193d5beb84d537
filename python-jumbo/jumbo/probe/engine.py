"""The measurement, phase by phase: resolve the dest and open the transports; choose the
method (through the dest's reflector, ICMP echo with UDP flows verifying, or UDP alone); the
lead flow's search, then every flow's; locate each black hole with a TTL scan (scan.py), and
the `hops` scan; fold the flows into the result (outcome.py).

The rounds (rounds.py), the flows' searches and their answer budget (flows.py, budget.py)
and the time bound (timing.py) are the layers below; this module only orders the phases.
"""

import time

from ..core.mtu import MAX_IP_PACKET, MIN_MTU
from ..core.resolve import ResolveError, resolve, source_address
from ..core.result import fold_pmtud
from . import outcome, reflected, route
from . import transport as tp
from .budget import AnswerBudget
from .flows import FlowSearches, UDP_UNANSWERED
from .rounds import Flow, Rounds
from .scan import TtlScan
from .timing import HELLO_SECONDS, SCAN_SECONDS, iso_duration, max_duration, scan_count

# Rounds a flow's search may take (the time bound binds first on every path measured; these
# bound the count). A verifying flow gets as many as the lead: one misled by a lost probe
# bisects back one size a round on a short path before its trains lengthen (2 % loss, 40
# flows through the reflector: 1 run in 15 left a flow unconfirmed after 0.15 s of a 10 s
# budget with 16).
PRIMARY_ROUNDS = 40
SECONDARY_ROUNDS = 16
# A scan that met a PTB for a flow's black-holed size: the rounds that flow's search gets
# to finish with that evidence.
AFTER_PTB_ROUNDS = 8


class Engine(object):
    """One forward measurement: the phases, in order, over the run's Rounds (`rounds`: the
    clock, the answers, the dest's budget) and its FlowSearches (`searches`: the flows and
    their size searches). run() -> outcome.PathResult."""

    def __init__(self, spec, reflector=None, progress=None):
        """`spec`: a core.spec.RunSpec (a pmtu spec with its defaults filled). `reflector`: {"port", "token",
        "starting"} of the dest participant's reflector, when there is one (two-participant
        runs): forward probes then go through it."""
        # A dest participant starting at the same moment may need up to its start-up wait
        # (`starting`, seconds, given by the runner from its slot) before its reflector
        # answers: the greeting may take that long, and the bound moves with it.
        self.starting = float((reflector or {}).get("starting") or 0.0)
        self.rounds = Rounds(self.starting + max_duration(spec) - 0.2, spec.timeout_seconds)
        self.diags = []  # the run's notes, in the order they happened (the searches' too)
        # The searches end early enough for the TTL scans the bound includes: a black hole
        # found in the last round is still located.
        self.searches = FlowSearches(self.rounds, spec.target_mtu,
                                     self.rounds.deadline - SCAN_SECONDS * scan_count(spec),
                                     self.diags)
        self.spec = spec
        self.reflector = reflector
        # Told each phase as it begins (a line of text), for a console that shows progress.
        self.progress = progress or (lambda phase: None)
        self.source = None  # the spec's source, resolved by resolve_hosts
        self.dest_ip = self.version = None
        # Flows the dest's ICMP budget left no time for (single-ended): never given an
        # answer after the first round, so reported as not measured, not as half-measured.
        self.unmeasured = []
        self.local_mtu = self.local_max = self.min_size = None

    # -- setting up -------------------------------------------------------------------------

    def resolve_hosts(self):
        # The suite's one resolver and family preference: the dest's reflector listens in
        # the family it resolves, so the probes must take the same one.
        try:
            self.dest_ip, self.version = resolve(self.spec.dest, self.spec.ip_version)
        except ResolveError as err:
            raise tp.ProbeError(str(err))
        self.source = self.spec.source
        if self.source:
            try:
                self.source = resolve(self.source, self.version)[0]
            except ResolveError as err:
                raise tp.ProbeError("source: %s" % err)

    def _sizes(self, device_mtu):
        self.local_mtu = device_mtu
        floor = MIN_MTU[self.version]
        self.min_size = max(int(self.spec.min_mtu or floor), floor)
        # Loopback's MTU (65536) is above the largest IP packet: a size nothing can send
        # must not read as a black hole.
        self.local_max = min(device_mtu, MAX_IP_PACKET,
                             int(self.spec.max_mtu or device_mtu))
        if self.local_max < self.min_size:
            raise tp.ProbeError("Nothing to probe: largest size %d is below the smallest %d"
                                % (self.local_max, self.min_size))

    def prepare(self, device_mtu, bucket=None):
        """Once the dest is resolved: the sizes to search (from the egress device's MTU and
        the spec) and the dest's answer budget the rounds keep (by default planned at our
        own kernel's rate for the family)."""
        self._sizes(device_mtu)
        self.searches.sized(self.local_max, self.min_size)
        self.rounds.aim(self.dest_ip, self.version, bucket or AnswerBudget(self.version))

    def run(self):
        """The measurement -> outcome.PathResult; raises tp.ProbeError when it cannot."""
        self.resolve_hosts()
        iface, device_mtu = route.local_mtu(self.dest_ip, self.version, self.source)
        self.prepare(device_mtu)
        nflows = int(self.spec.flows)
        try:
            forward = self._reflector_transport(nflows, device_mtu)
            udp = tp.UdpTransport(self.dest_ip, self.version, self.source, flows=nflows)
            udp.max_size = device_mtu
            self.rounds.transports.append(udp)
            echo = None
            if forward is None:
                echo = self._echo_transport(device_mtu)
            return self.measure(udp, echo, nflows, iface, forward)
        finally:
            for transport in self.rounds.transports:
                transport.close()

    def _echo_transport(self, device_mtu):
        try:
            echo = tp.EchoTransport(self.dest_ip, self.version, self.source)
        except tp.ProbeError as err:
            self.diags.append("ICMP echo not used: %s" % err)
            return None
        echo.max_size = device_mtu
        self.rounds.transports.append(echo)
        return echo

    def _reflector_transport(self, nflows, device_mtu):
        """The dest's reflector as a transport when it answers a HELLO, else None (with a
        diag): the run then probes single-ended (echo, UDP)."""
        if not self.reflector:
            return None
        try:
            forward = reflected.ForwardTransport(self.dest_ip, self.version,
                                            int(self.reflector["port"]),
                                            self.reflector["token"], self.source,
                                            flows=nflows)
        except (tp.ProbeError, ValueError, KeyError, TypeError) as err:
            self.diags.append("forward probing through the reflector not possible: %s" % err)
            return None
        forward.max_size = device_mtu
        starting_until = time.monotonic() + self.starting
        if not forward.hello(starting_until + HELLO_SECONDS, starting_until):
            forward.close()
            self.diags.append("the dest's reflector did not answer: probing single-ended")
            return None
        self.rounds.transports.append(forward)
        return forward

    # -- the phases -------------------------------------------------------------------------

    def measure(self, udp, echo, nflows, iface, forward=None):
        """The phases over open transports -> outcome.PathResult."""
        # Probing begins (after greeting the dest's reflector, if any): the time the dest
        # has had to answer anything at all counts from here.
        self.searches.contact_start = time.monotonic()
        self.progress("probing %s (IPv%d) from %s, local MTU %d" % (
            self.dest_ip, self.version, iface, self.local_max))
        flows, method = self._choose_method(udp, echo, nflows, forward)
        self.progress("searching the path MTU: %d flow%s, %s" % (
            len(flows), "" if len(flows) == 1 else "s", method))
        self._search_all(flows)
        blackhole, hops = self._locate(flows)
        return self._finish(flows, method, blackhole, hops, iface)

    def _choose_method(self, udp, echo, nflows, forward):
        """The flows and the method: every flow through the reflector (answers are free,
        each flow its own port); else ICMP echo leading with UDP flows verifying, or UDP
        alone when echo is not allowed or not answered. Runs the first round."""
        if forward is not None:
            flows = [Flow(forward, i, self.searches.new_search(False)) for i in range(nflows)]
            self.searches.flows = list(flows)
            self.searches.first_round(flows[:1], flows[1:])
            return flows, "reflector"
        udp_flows = [Flow(udp, i, self.searches.new_search(True)) for i in range(nflows)]
        self.searches.flows = list(udp_flows)
        if echo is None:
            self.searches.first_round(udp_flows[:1], udp_flows[1:])
            return udp_flows, "udp"
        echo_flow = Flow(echo, 0, self.searches.new_search(False))
        self.searches.flows.append(echo_flow)
        # Echo answers are free: the UDP flows only verify what echo finds, each starting
        # with the local MTU alone (a smaller size beside it would spend one more of the
        # dest's rate-limited answers each run, for nothing once echo answers).
        self.searches.first_round([echo_flow], udp_flows[:nflows - 1])
        if echo_flow.search.lo is None:
            # A silent echo round may be loss (and the UDP flow's silence the budget an
            # earlier run spent): ask twice more before taking echo for filtered.
            self.searches.search_rounds([echo_flow], 3)
        if echo_flow.search.lo is not None:
            return [echo_flow] + udp_flows[:nflows - 1], "icmp-echo"
        self.diags.append("ICMP echo got no answer (filtered?): using UDP probes")
        echo.close()
        self.rounds.transports.remove(echo)
        return udp_flows, "udp"

    def _search_all(self, flows):
        """The lead flow's search, then every flow's (the lead again where what the others
        prove undoes its answer: a size it held for a black hole crossed elsewhere, loss or
        an ECMP split; more silences tell which)."""
        primary = flows[0]
        self.searches.search_rounds([primary], PRIMARY_ROUNDS)
        if primary.search.lo is None:
            self._no_answer()
        secondary = flows[1:]
        self.searches.flows = flows
        if secondary:
            self.searches.share(flows, priors=True)
            self.searches.search_rounds(flows, max(PRIMARY_ROUNDS,
                                          primary.search.rounds + SECONDARY_ROUNDS))
        # Rate-limited flows the budget never reached after the first round: not measured
        # (their first round alone proves nothing), rather than left half-measured.
        self.unmeasured = [f for f in secondary if f.transport.arrival_limited
                           and not f.search.done() and id(f) not in self.searches.served]

    def _locate(self, flows):
        """Where do big packets vanish? One TTL scan per distinct black-holed size (and the
        `hops` scan). -> (the smallest located black hole or None, hops)."""
        blackhole, hops, scanned = None, [], {}
        primary = flows[0]
        if self.spec.hops:
            self.progress("listing the hops and their MTUs")
            # Start at the local MTU, as tracepath does, so each hop's MTU is the real one
            # (starting at the smallest lost size would report that size at the first hops).
            hops, found, _ptb = TtlScan(self.rounds, primary, self.local_max, self.min_size,
                                        True, self.local_max).run()
            hole = primary.search.hole()
            if found and hole is not None and \
                    primary.search.stage_bottom(found.size) < hole <= found.size:
                # The scan lost its big probe in the stage that swallows the smallest
                # silent size: that is where the black hole is.
                found.size = hole
                blackhole = found
                scanned[hole] = None
        for flow in flows:
            hole = flow.search.hole() if flow.search.verdict() == "blackhole" else None
            if hole is None:
                continue
            if hole not in scanned:
                blackhole = self._scan_hole(flow, hole, scanned, blackhole)
            if scanned[hole] is not None:
                # A PTB did come for that size during the scan: the earlier silences were
                # loss or a rate limit. Take it as evidence and finish the search.
                flow.search.failed_sign(hole, ptb=True, ptb_mtu=scanned[hole])
                self.searches.search_rounds([flow], flow.search.rounds + AFTER_PTB_ROUNDS)
        if blackhole is not None:
            holes = [f.search.hole() for f in flows if f.search.verdict() == "blackhole"]
            if blackhole.size not in holes:
                blackhole = None
        return blackhole, hops

    def _scan_hole(self, flow, hole, scanned, blackhole):
        # Only the location counts here: the size that reached a hop is not that hop's
        # MTU, so this walk never becomes the result's hops.
        self.progress("locating where %d-byte packets vanish" % hole)
        _walk, found, ptb_mtu = TtlScan(self.rounds, flow, hole, self.min_size, False,
                                         self.local_max).run()
        scanned[hole] = ptb_mtu
        if found:
            found.size = hole
            if blackhole is None or hole < blackhole.size:
                return found
        return blackhole

    def _finish(self, flows, method, blackhole, hops, iface):
        if self.unmeasured:
            # Never probed beyond the first round: these flows say nothing either way.
            self.searches.note("%d of %d flows not measured: the dest answers UDP probes about once a "
                      "second (its ICMP rate limit), which left time to measure %d fully "
                      "(probe through the dest's reflector, `reflector`, to measure all)"
                      % (len(self.unmeasured), len(flows), len(flows) - len(self.unmeasured)))
            flows = [f for f in flows if f not in self.unmeasured]
        entries, path_mtu = outcome.flow_entries(flows)
        if path_mtu is None:
            proven = [f.search.result() for f in flows if f.search.result() is not None]
            if proven:
                self.diags.append("path MTU not confirmed; %d bytes proven to cross"
                                  % max(proven))
        pmtud = fold_pmtud(set(e.pmtud for e in entries))
        if pmtud != "blackhole":
            blackhole = None
        elif blackhole is None:
            self.diags.append("black hole not located (routers do not answer TTL-limited "
                              "probes)")
        self._note_unconfirmed(flows)
        probes = self._probes_sent(flows)
        if iface:
            self.diags.append("egress interface %s, MTU %d" % (iface, self.local_mtu))
        return outcome.PathResult(
            path_mtu=path_mtu, local_mtu=self.local_mtu, target_mtu=self.spec.target_mtu, pmtud=pmtud,
            blackhole=blackhole, method=method, ip_version=self.version, dest_ip=self.dest_ip,
            source_ip=source_address(self.dest_ip, self.version, self.source), hops=hops,
            flows=entries, flows_not_measured=len(self.unmeasured), probes=probes,
            elapsed=round(time.monotonic() - self.rounds.start, 4),
            rtt=None if self.rounds.min_rtt is None else iso_duration(self.rounds.min_rtt),
            ptb=outcome.distinct_ptbs(self.rounds.ptbs), diags=list(self.diags))

    def _note_unconfirmed(self, flows):
        unconfirmed = [f for f in flows if not f.search.done()]
        udp_unanswered = self.rounds.udp_unanswered()
        if udp_unanswered:
            self.searches.note(UDP_UNANSWERED)
        if unconfirmed and not (udp_unanswered and all(
                f.transport.arrival_limited for f in unconfirmed)):
            self.diags.append("some flows were not confirmed within the time bound")

    def _probes_sent(self, flows):
        seen, total = set(), 0
        for transport in [f.transport for f in flows] + self.rounds.transports:
            if id(transport) not in seen:
                seen.add(id(transport))
                total += transport.sent
        return total

    def _no_answer(self):
        if self.rounds.unreach:
            source, kind, code = self.rounds.unreach[-1]
            raise tp.ProbeError("%s is unreachable: ICMP type %d code %d from %s"
                                % (self.dest_ip, kind, code, source))
        raise tp.ProbeError("No answer from %s to any probe within %.1f s (host down, or ICMP "
                            "and UDP filtered on the path)"
                            % (self.dest_ip, time.monotonic() - self.searches.contact_start))
