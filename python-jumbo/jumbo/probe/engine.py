"""The measurement: transports + per-flow size searches + TTL scans -> the result object.

Over 400 lines, with `_measure` (~150) and `scan` (~90) over 60, on purpose for now: the
rounds, the dest's answer-budget model and the phases share one clock and one pending-probe
table, and the time bound (`max_duration`) is argued from this one file. Splitting the phases
into their own module is the probe issue's next step (it reshapes them anyway).
"""

import os
import time

from ..core.mtu import MAX_IP_PACKET, MIN_MTU, is_jumbo
from ..core.resolve import ResolveError, resolve, source_address
from ..core.schema import needs_dest_participant
from ..core.units import duration_seconds
from . import transport as tp
from .budget import AnswerBudget
from .search import SizeSearch, useful_ptb, LIMITED_TRAIN

MAX_TTL = 30
# JUMBO_PROBE_DEBUG=1: every round's probes and outcomes on stderr (for developers).
DEBUG = bool(os.environ.get("JUMBO_PROBE_DEBUG"))
PRIMARY_ROUNDS = 40
SECONDARY_ROUNDS = 16
# Silence is declared after max(WAIT_RTTS round trips, MIN_WAIT) once an RTT is known: a
# late answer still counts when it comes (an arrival is proof at any time).
MIN_WAIT = 0.015
WAIT_RTTS = 3.0
# Before anything answered: resend the first train this often (a dest whose ICMP budget is
# spent answers again within a second; resending finds that moment without guessing it).
CONTACT_RETRY = 0.5
# Nothing answered at all within this: the dest does not answer (an error, not a wait).
CONTACT_SECONDS = 3.0
UDP_UNANSWERED = ("the dest answered ICMP echo but none of the UDP probes within %.0f s (a "
                  "firewall dropping UDP to closed ports?): the UDP flows stay unconfirmed"
                  % CONTACT_SECONDS)
# The slowest round trip the time bound is made for (intercontinental paths).
WORST_RTT = 0.3
SETUP_SECONDS = 0.5
# Seconds budgeted for the primary search: 4 answered rounds a second apart (an IPv4 dest
# answering UDP once a second, the first answer up to a second late), plus the round trips;
# silence (a train's silences are settled by its first answer, one round trip).
SEARCH_SECONDS = 4 * 1.0 + 2 * WORST_RTT
# Each further flow: one answer of the dest's budget (1/s IPv4; the round trip overlaps);
# through the dest's reflector answers are free and the flows go together (a round trip).
FLOW_SECONDS = 1.0
FLOW_SECONDS_REFLECTOR = WORST_RTT
# Through the reflector the verifying flows share their rounds, so past a few flows more of
# them cost sending time, not rounds: the verification is capped at VERIFY_ROUNDS rounds that
# wait out their silences, plus FLOW_SEND_SECONDS per flow (a few probes of up to 9000 bytes
# each, paced; the reflector answers 2000 requests a second).
VERIFY_ROUNDS = 3
FLOW_SEND_SECONDS = 0.02
# Through the dest's reflector (two-participant runs) answers are free: a round ends with
# its first answer (a round trip), only the last one waits out its silences; trains of 7
# sizes at long round trips reach the 1-byte boundary from anywhere in 5 rounds.
REFLECTOR_SEARCH_SECONDS = 5 * WORST_RTT + WAIT_RTTS * WORST_RTT
# The dest's answers a rate-limited flow that has not answered yet is planned to need: its
# answer, and on a path with a partial black hole or loss the companions that make its
# silences votes.
ANSWERS_PER_FLOW = 3
# Greeting the dest's reflector (two-participant runs) before probing through it.
HELLO_SECONDS = 1.0
# TTL scans (locating a black hole; the per-hop scan with `hops`): SCAN_TTLS hops per round;
# a path of up to SCAN_TTLS hops takes one round, plus one per size change (a PTB, a black
# hole passed); each round at most WAIT_RTTS round trips (silences) at WORST_RTT. Each scan
# stops itself at SCAN_SECONDS (what it has not reached by then stays unreported).
SCAN_TTLS = 16
SCAN_ROUNDS = 3  # the window, one size change, one confirmation of a silent big probe
SCAN_SECONDS = SCAN_ROUNDS * WAIT_RTTS * WORST_RTT


def _timeout_seconds(spec):
    return duration_seconds(spec.get("timeout", "PT1S"))


def max_duration(spec):
    """Upper bound, in seconds, of a measurement with this spec (defaults filled in).

    Built from the engine's own worst case, not from round counts times `timeout`: the
    primary search (SEARCH_SECONDS: a rate-limited IPv4 dest, RTT up to WORST_RTT; through
    the dest's reflector REFLECTOR_SEARCH_SECONDS), one answer per further flow, one TTL
    scan to locate a black hole, one more with `hops`. The engine stops itself at this
    bound (what is unconfirmed by then is said so). A two-participant run whose reflector
    does not answer probes single-ended within the same bound: with ICMP echo that fits; a
    UDP-only search on a spent budget may end unconfirmed (the result says so)."""
    flows = max(1, int(spec["flows"]))
    # The dest participant runs the reflector when the spec asks for it (the runner then
    # probes through it; without an answer the engine falls back within the same bound).
    if needs_dest_participant(spec):
        search = HELLO_SECONDS + REFLECTOR_SEARCH_SECONDS
        verify = min(FLOW_SECONDS_REFLECTOR * (flows - 1),
                     VERIFY_ROUNDS * WAIT_RTTS * WORST_RTT) + FLOW_SEND_SECONDS * (flows - 1)
    else:
        search, verify = SEARCH_SECONDS, FLOW_SECONDS * (flows - 1)
    return round(SETUP_SECONDS + search + verify + SCAN_SECONDS * scan_count(spec), 3)


def scan_count(spec):
    """TTL scans a run keeps time for: one to locate a black hole, one more with `hops`.
    The searches stop that much before the bound, so a hole found late is still located."""
    return 2 if spec.get("hops") else 1


def _answers_needed(search):
    """The dest's answers a rate-limited flow still needs, as its search stands: the votes
    its boundary lacks (each ordered silence is one round with an answered companion), at
    least one. For a flow nothing has answered yet (its first round met a spent budget):
    ANSWERS_PER_FLOW where the run saw loss or a black hole, else 2 (its answer, and one
    companion should its size turn out to vanish)."""
    if search.lo is None:
        if search.losses + search.losses_elsewhere or search.holes_elsewhere:
            return ANSWERS_PER_FLOW
        return 2
    return max(1, search.need() - search.votes.get(search.hi, 0))


def iso_duration(seconds):
    return "PT%sS" % ("%.6f" % max(seconds, 0.0)).rstrip("0").rstrip(".")


class _Probe(object):
    __slots__ = ("flow", "size", "ttl", "sent", "order", "outcome", "event", "group")

    def __init__(self, flow, size, ttl, sent, order):
        self.flow = flow
        self.size = size
        self.ttl = ttl
        self.sent = sent
        self.order = order
        self.outcome = None
        self.event = None
        self.group = (id(flow), ttl)


class _Flow(object):
    def __init__(self, transport, tflow, search):
        self.transport = transport
        self.tflow = tflow
        self.search = search
        self.ptb = []
        self.plan = None  # the search's next round, until it is sent


class Engine(object):
    def __init__(self, spec, reflector=None):
        """`reflector`: {"port", "token"} of the dest participant's reflector, when there is
        one (two-participant runs): forward probes then go through it."""
        self.spec = spec
        self.reflector = reflector
        self.source = None  # the spec's source, resolved by _resolve
        self.start = time.monotonic()
        # When probing began (after greeting the dest's reflector, if any): the time the
        # dest has had to answer anything at all.
        self.contact_start = self.start
        # A dest participant starting at the same moment may need up to its start-up wait
        # (`starting`, seconds, given by the runner from its slot) before its reflector
        # answers: the greeting may take that long, and the bound moves with it.
        self.starting = float((reflector or {}).get("starting") or 0.0)
        self.deadline = self.start + self.starting + max_duration(spec) - 0.2
        # The searches end early enough for the TTL scans the bound includes: a black hole
        # found in the last round is still located.
        self.search_deadline = self.deadline - SCAN_SECONDS * scan_count(spec)
        # Flows the dest's ICMP budget left no time for (single-ended): never given an
        # answer after the first round, so reported as not measured, not as half-measured.
        self.unmeasured = []
        self.served = set()  # ids of the rate-limited flows given answers after the first round
        self.left_out = set()  # ids of those the budget cannot finish: never started
        self.cap = _timeout_seconds(spec)
        self.srtt = None
        self.pending = {}
        self.ptbs = []
        self.unreach = []
        self.transports = []
        self.diags = []
        self.order = 0
        self.answered = False
        self.proven = 0
        # Rate-limited transports: when each first sent, which ones the dest ever answered.
        self.limited_first_sent = {}
        self.limited_answering = set()
        self.flows = []  # every flow of the measurement: they share what they learn

    # -- plumbing ---------------------------------------------------------------------------

    def _wait_limit(self):
        if self.srtt is None:
            return min(self.cap, CONTACT_RETRY)
        return min(self.cap, max(WAIT_RTTS * self.srtt, MIN_WAIT))

    def _free_train(self, search):
        """Sizes per round when answers are free: short rounds on short paths (probes cost
        more than round trips), longer trains as round trips grow or once loss is seen (a
        lone probe's silence is only a tentative failure; in a train, the silences above the
        first arrival are ordered: evidence)."""
        if search.losses + search.losses_elsewhere:
            return 7
        if self.srtt is None or self.srtt < 0.02:
            return 1
        return 3 if self.srtt < 0.1 else 7

    def _handle(self, transport, event):
        probe = self.pending.get((id(transport), event.probe))
        if probe is None:
            return
        if probe.outcome is not None and probe.outcome != "silent":
            return
        probe.outcome = event.kind
        probe.event = event
        if event.kind in (tp.ARRIVED, tp.TTL):
            sample = event.when - probe.sent
            self.srtt = sample if self.srtt is None else 0.75 * self.srtt + 0.25 * sample
        if event.kind == tp.ARRIVED:
            self.answered = True
            # The largest size any flow got across: a smaller silent one met a spent budget
            # (or loss), not an MTU.
            self.proven = max(self.proven, probe.size)
            if transport.arrival_limited:
                self.bucket.take(probe.sent)
                self.limited_answering.add(id(transport))
        search = probe.flow.search
        if event.kind == tp.TOO_BIG:
            entry = {"from": event.source, "mtu": event.mtu, "size": probe.size,
                     "useful": useful_ptb(event.mtu, probe.size, self.version)}
            self.ptbs.append(entry)
            probe.flow.ptb.append(entry)
        elif event.kind == tp.UNREACH:
            self.unreach.append((event.source, event.icmp_type, event.icmp_code))
        if probe.ttl is not None:
            return
        if event.kind == tp.ARRIVED:
            search.arrived(probe.size)
        elif event.kind == tp.TOO_BIG:
            search.failed_sign(probe.size, ptb=True, ptb_mtu=event.mtu)

    def _sleep_until(self, when):
        when = min(when, self.deadline)
        while True:
            left = when - time.monotonic()
            if left <= 0:
                return
            self._collect(time.monotonic() + left)

    def _collect(self, until):
        """Read events from every transport until `until` or until something arrived."""
        import select
        fds = {}
        for transport in self.transports:
            for fd in transport.fds():
                fds[fd] = transport
        left = max(0.0, until - time.monotonic())
        silent = [t for t in self.transports if not t.fds()]
        if silent:
            # Transports without descriptors are polled (each waits at most until `until`).
            got = False
            for transport in silent:
                for event in transport.poll(until if not got else time.monotonic()):
                    got = True
                    self._handle(transport, event)
            if got or not fds:
                return got
            left = 0.0
        ready = select.select(list(fds), [], [], left)[0] if fds else []
        seen = set()
        for fd in ready:
            transport = fds[fd]
            if id(transport) in seen:
                continue
            seen.add(id(transport))
            for event in transport.poll(time.monotonic()):
                self._handle(transport, event)
        return bool(ready)

    def _pace(self, items):
        limited = set(id(f) for f, _, _ in items if f.transport.arrival_limited)
        if not limited:
            return
        want = min(len(limited), self.bucket.capacity)
        self._sleep_until(time.monotonic() + self.bucket.seconds_until(want))

    def round(self, items, pace=True, deadline=None, complete=None):
        """Send (flow, size, ttl) items back to back; wait until each is answered or
        superseded by a later answered probe of its group (or `complete(probes)` says so),
        or the wait limit (at the latest `deadline`) passes."""
        deadline = self.deadline if deadline is None else min(deadline, self.deadline)
        complete = complete or self._complete
        if pace:
            self._pace(items)
        probes = []
        for flow, size, ttl in items:
            if time.monotonic() >= deadline:
                break
            self.order += 1
            try:
                pid = flow.transport.send(size, flow.tflow, ttl)
            except tp.LocalTooBig:
                probe = _Probe(flow, size, ttl, time.monotonic(), self.order)
                probe.outcome = tp.LOCAL
                if ttl is None:
                    flow.search.failed_sign(size, ptb=True)
                probes.append(probe)
                continue
            probe = _Probe(flow, size, ttl, time.monotonic(), self.order)
            self.pending[(id(flow.transport), pid)] = probe
            probes.append(probe)
            if flow.transport.arrival_limited:
                self.limited_first_sent.setdefault(id(flow.transport), probe.sent)
        limit = min(time.monotonic() + self._wait_limit(), deadline)
        while not complete(probes):
            now = time.monotonic()
            if now >= limit:
                break
            self._collect(limit)
            if self.srtt is not None:
                limit = min(limit, max(p.sent for p in probes) + self._wait_limit())
        self._account_budget(probes)
        if DEBUG:
            import sys
            sys.stderr.write("%.3f %s\n" % (time.monotonic() - self.start, " ".join(
                "%s%d%s:%s" % ("f%d/" % p.flow.tflow, p.size, "t%d" % p.ttl if p.ttl else "",
                               (p.outcome or "-")[:3]) for p in probes)))
        for probe in probes:
            if probe.outcome is None:
                probe.outcome = "silent"
                ordered = self._superseded(probe, probes)
                if probe.ttl is None:
                    search = probe.flow.search
                    limited = probe.flow.transport.arrival_limited
                    if search.lo is not None and probe.size <= search.lo:
                        if not limited:
                            search.lost()
                        # (Rate-limited: a size that crosses got no answer because the
                        # dest's budget went to a larger one first, or is spent: no loss.)
                    elif limited and self._after_answer(probe, probes):
                        pass  # sent after an answered larger size: the budget, not a sign
                    else:
                        search.failed_sign(probe.size, ordered=ordered)
        return probes

    def _account_budget(self, probes):
        """Our model of the dest's answer budget after a rate-limited round: every size at or
        below the largest answered one arrived; fewer answers than that means the budget ran
        dry during the round, no answer at all that it was dry when the round arrived."""
        sent = [p for p in probes if p.ttl is None and p.flow.transport.arrival_limited
                and p.outcome != tp.LOCAL]
        if not sent:
            return
        answered = [p for p in sent if p.outcome == tp.ARRIVED]
        if not answered:
            # Silence where a size known to cross went: the budget was dry (or the answer
            # was lost). PTBs and silences above the path MTU say nothing about it.
            if any(p.size <= self.proven and p.outcome is None for p in sent):
                self.bucket.empty(since=min(p.sent for p in sent))
            return
        top = max(p.size for p in answered)
        crossing = [p for p in sent if p.size <= top]
        if len(answered) < len(crossing):
            self.bucket.empty(since=max(p.sent for p in sent))

    @staticmethod
    def _after_answer(probe, probes):
        """A rate-limited probe sent after an answered, larger-or-equal probe of its flow."""
        return any(other.group == probe.group and other.order < probe.order
                   and other.outcome == tp.ARRIVED and other.size >= probe.size
                   for other in probes)

    @staticmethod
    def _superseded(probe, probes):
        """A later probe of the same flow and TTL was answered (arrival, time exceeded, or a
        PTB: a smaller probe meets its PTB at the same router or further along than a larger
        one would): the path was alive when `probe` went silent."""
        return any(other.group == probe.group and other.order > probe.order
                   and other.outcome in (tp.ARRIVED, tp.TTL, tp.TOO_BIG) for other in probes)

    def _complete(self, probes):
        """Every probe is answered, superseded, or (rate-limited) sent after an answered
        larger one of its flow: the dest's budget went to that one, nothing more will come."""
        return all(p.outcome is not None or self._superseded(p, probes)
                   or (p.ttl is None and p.flow.transport.arrival_limited
                       and self._after_answer(p, probes)) for p in probes)

    # -- phases -----------------------------------------------------------------------------

    def _new_search(self, arrival_limited):
        return SizeSearch(self.local_max, self.min_size, version=self.version,
                          arrival_limited=arrival_limited, target=self.spec.get("target-mtu"),
                          train=LIMITED_TRAIN if arrival_limited else 1)

    def _search_rounds(self, flows, rounds):
        """Rounds until every flow is done; flows whose arrivals are rate-limited take part
        only as far as the dest's answer budget allows (one arrival each)."""
        while time.monotonic() < self.search_deadline:
            active = [f for f in flows if not f.search.done() and f.search.rounds < rounds
                      and id(f) not in self.left_out]
            if not active:
                return
            if not self.answered and time.monotonic() - self.contact_start > CONTACT_SECONDS:
                return  # the dest never answered: no point waiting for the time bound
            if any(f.transport.arrival_limited for f in active) and self._udp_unanswered():
                self._note(UDP_UNANSWERED)
                active = [f for f in active if not f.transport.arrival_limited]
                if not active:
                    return
            for flow in active:
                if not flow.transport.arrival_limited:
                    flow.search.train = self._free_train(flow.search)
            for flow in active:
                if flow.plan is None:
                    flow.plan = flow.search.next_round()
            free = [f for f in active if not f.transport.arrival_limited
                    or not self._needs_answer(f)]
            limited = [f for f in active if f not in free]
            if limited:
                limited = self._budgeted(limited, free)
            items = []
            for flow in free + limited:
                for size in flow.plan or []:
                    items.append((flow, size, None))
                flow.plan = None
            if not items:
                return
            self.round(items, pace=False)
            self._share(self.flows or flows)

    def _budgeted(self, limited, free):
        """The rate-limited flows that get one of the dest's answers this round. Each needs
        one answer: as many flows as its budget holds, at least one (after waiting for it).
        Flows are served in their order, so they finish one after another: a run that
        runs out of time has whole flows and flows never started, not many half-measured
        ones. A flow not started yet starts only when the answers left before the search
        deadline (budget now + refill) cover what the started ones still need and its own
        (_answers_needed); otherwise it is not measured, and the result says so."""
        started = [f for f in limited if id(f) in self.served]
        waiting = [f for f in limited if id(f) not in self.served]
        if waiting:
            left = self.bucket.affordable(self.search_deadline - time.monotonic())
            need = sum(_answers_needed(f.search) for f in started)
            for flow in waiting:
                need += _answers_needed(flow.search)
                if need > left and (started or flow is not waiting[0]):
                    # For good: a flow started later would be cut short, half-measured.
                    self.left_out.add(id(flow))
            limited = [f for f in limited if id(f) not in self.left_out]
        level = self.bucket.level()
        if level < 1.0 and not free:
            self._sleep_until(time.monotonic() + self.bucket.seconds_until(1.0))
            level = self.bucket.level()
        count = max(1, int(level)) if not free else max(0, int(level))
        chosen = limited[:count]
        self.served.update(id(f) for f in chosen)
        return chosen

    def _udp_unanswered(self):
        """The dest answers the other method (ICMP echo) but none of the UDP probes, sent
        CONTACT_SECONDS ago and more: a host firewall dropping UDP to closed ports. Its
        budget refills in that time, so the flows that need its answers cannot be confirmed;
        they stop (UDP_UNANSWERED in the result) and leave the time to the rest of the run."""
        if not self.answered:
            return False
        now = time.monotonic()
        return any(key not in self.limited_answering and now - first > CONTACT_SECONDS
                   for key, first in self.limited_first_sent.items())

    def _note(self, text):
        if text not in self.diags:
            self.diags.append(text)

    @staticmethod
    def _share(flows, priors=False):
        """What each flow's search learns from the others of the run: their confirmed
        answers (as priors once it has searched itself, or when `priors`), their black
        holes, the largest size proven to cross, and the loss they saw."""
        known = set(f.search.result() for f in flows if f.search.done())
        holes = set(f.search.hole() for f in flows if f.search.done()) - {None}
        for flow in flows:
            search = flow.search
            others = [f.search for f in flows if f is not flow]
            search.losses_elsewhere = sum(o.losses for o in others)
            search.arrivals_elsewhere = sum(o.arrivals for o in others)
            crossed = [o.lo for o in others if o.lo is not None]
            search.crossed_elsewhere = max(crossed) if crossed else None
            if known:
                search.confirmed_elsewhere |= known
                search.holes_elsewhere |= holes
                if priors or search.rounds:
                    search.priors |= known

    def _first_round(self, leads, others):
        """The first round: each of `others` (the flows that will verify the leads' answer)
        sends the local MTU ahead of the leads' first rounds (with UDP, the lead's whole
        train, see below). On a clean path every flow is done at once, each with the first
        answer it gets: a rate-limited dest's budget goes to answers that settle a flow, not
        to sizes below one that crossed."""
        items = []
        plans = [(flow, flow.search.next_round()) for flow in leads]
        lead_plan = plans[0][1] if plans else []
        shared = len(leads) == 1 and leads[0].transport.arrival_limited
        for flow in others:
            flow.search.rounds += 1
            # Only UDP: every flow sends the plateau part of the lead's train, and the round
            # goes out largest size first across the flows. The dest's answers go to the first arrivals, one
            # per flow at the size that crosses: a fresh budget (burst of 6) settles several
            # flows in this one round instead of one flow a second.
            if shared:
                # The train's plateau sizes (and the size above each), the local MTU and the
                # minimum: what settles the usual paths; odd sizes are the lead's to find.
                marks = flow.search.plateaus | set(p + 1 for p in flow.search.plateaus)
                plan = [size for size in lead_plan if size in marks
                        or size in (self.local_max, self.min_size)]
            else:
                plan = [self.local_max]
            plans.append((flow, plan))
        if shared:
            order = dict((id(flow), index) for index, (flow, _plan) in enumerate(plans))
            for flow, plan in plans:
                items.extend((flow, size, None) for size in plan)
            items.sort(key=lambda item: (-item[1], order[id(item[0])]))
        else:
            for flow, plan in plans[len(leads):] + plans[:len(leads)]:
                items.extend((flow, size, None) for size in plan)
        self.round(items, pace=False)

    @staticmethod
    def _needs_answer(flow):
        """Whether the flow's planned round can only be read from the dest's (rate-limited)
        answer: some size in it may reach the dest. Sizes proven to fail (a PTB, or
        silences the search holds as failures) meet a router or nothing, not the dest."""
        search = flow.search
        for size in flow.plan or []:
            if size in search.answered or search._covered(size):
                continue
            if size in search.failed and search.votes.get(size):
                continue
            return True
        return False

    def scan(self, flow, big, small, full):
        """TTL-limited probes of `big` and `small` bytes: where big packets stop (PTB or
        silence) and, when `full`, every hop's address, MTU and RTT.

        The same train discipline as the size search: each round probes a window of
        SCAN_TTLS hops at once (each router gets one probe of each size per round: routers
        rate-limit their time-exceeded messages per source, so one answer per router per
        round is what a round can count on). A round that changes the size to carry (a PTB,
        a black hole passed in a full scan) or meets a silent hop starts the next window
        there; otherwise the next window starts after this one. Each scan stops itself
        within SCAN_SECONDS."""
        hops, blackhole, ptb_found = [], None, None
        # The last hop the big probe reached: the black hole is past it. (Not simply the hop
        # before the first silent one: a router that rate-limits its time-exceeded answers
        # can stay silent in between, and the hole would move a hop late.)
        last_big = (0, None)
        vanished = {}  # ttl -> rounds where the big probe alone went unanswered there
        current = big
        deadline = min(self.deadline, time.monotonic() + SCAN_SECONDS)
        silences = {}
        ttl, pace, confirm = 1, False, False
        while ttl <= MAX_TTL and time.monotonic() < deadline:
            # A confirmation asks the one hop again (the hops past it are not needed and
            # would spend the dest's answer budget).
            ttls = [ttl] if confirm else list(range(ttl, min(MAX_TTL, ttl + SCAN_TTLS - 1) + 1))
            confirm = False
            sizes = [current, small] if current != small else [small]
            # Only a probe reaching the dest spends its answer budget: wait for it only
            # when a round came back empty.
            probes = self.round([(flow, s, t) for t in ttls for s in sizes], pace=pace,
                                deadline=deadline, complete=self._scan_complete)
            pace = False
            by_ttl = {}
            for probe in probes:
                by_ttl.setdefault(probe.ttl, []).append(probe)
            next_ttl = None
            for t in ttls:
                sent = by_ttl.get(t)
                if not sent:
                    return hops, blackhole, ptb_found  # the scan's time is up
                b, s = sent[0], sent[-1]
                hop, reached, changed = None, False, False
                if b.outcome in (tp.TTL, tp.ARRIVED):
                    # `current` reaching a hop proves the path up to it carries `current`;
                    # it is the hop's MTU only when nothing larger could be sent (the local
                    # MTU) or a PTB / the search named it (full scans lower `current` so).
                    hop = {"ttl": t, "ip": b.event.source,
                           "mtu": current if (full or current >= self.local_max) else None,
                           "rtt": iso_duration(b.event.when - b.sent)}
                    reached = b.outcome == tp.ARRIVED
                    last_big = (t, b.event.source)
                elif b.outcome == tp.TOO_BIG:
                    if useful_ptb(b.event.mtu, current, self.version):
                        ptb_found = b.event.mtu
                    if not full:
                        return hops, blackhole, ptb_found
                    current = _lower(current, b.event.mtu, flow.search.result(), self.version)
                    next_ttl = t  # this hop again, with the size it carries
                elif s is not b and s.outcome == tp.TTL and \
                        self._big_lost_by_chance(flow, vanished, t):
                    # The small probe answered and the big one did not: a black hole
                    # here, or one lost packet (a lossy path would put the hole at the
                    # wrong hop). Ask this hop again until loss is an unlikely reading.
                    # (Not where the dest answered the small probe: that would spend its
                    # rate-limited budget, and no hop is left past the last router.)
                    next_ttl, pace, confirm = t, False, True
                elif s is not b and s.outcome in (tp.TTL, tp.ARRIVED):
                    if blackhole is None:
                        blackhole = {"ttl": last_big[0], "ip": last_big[1], "size": current}
                    if not full:
                        return hops, blackhole, ptb_found
                    # The largest size known to pass this stage (answered further along).
                    lowered = flow.search.stage_bottom(current)
                    if lowered is None or lowered >= current:
                        hop = {"ttl": t, "ip": s.event.source, "mtu": None,
                               "rtt": iso_duration(s.event.when - s.sent)}
                        reached = s.outcome == tp.ARRIVED
                    current = lowered if lowered is not None else small
                    changed = True
                    if hop is None:
                        next_ttl = t
                else:
                    silences[t] = silences.get(t, 0) + 1
                    if silences[t] >= 2:
                        hop = {"ttl": t, "ip": None, "mtu": None, "rtt": None}
                    else:
                        # Silent: this hop's ICMP budget may be spent, or the dest's (a
                        # probe that reached it). Ask again next round, paced.
                        next_ttl, pace = t, True
                if hop is not None:
                    hops.append(hop)
                    if reached or hop["ip"] == self.dest_ip:
                        return hops, blackhole, ptb_found
                    if changed:
                        next_ttl = t + 1  # the later hops carried the old size: again
                if next_ttl is not None:
                    break
            ttl = next_ttl if next_ttl is not None else ttls[-1] + 1
            if pace and not any(p.outcome for p in probes):
                # Nothing at all answered: let the routers' budgets refill.
                self._sleep_until(min(deadline, time.monotonic() + 0.35))
        return hops, blackhole, ptb_found

    @staticmethod
    def _big_lost_by_chance(flow, vanished, ttl):
        """Count one more round where only the big probe to `ttl` went unanswered; True
        while that is still likely loss: twice on a path where the search saw no loss (the
        search's few probes cannot rule out 2 % loss), up to four times where it did."""
        vanished[ttl] = vanished.get(ttl, 0) + 1
        search = flow.search
        lossy = search.losses + search.losses_elsewhere
        need = 2 if not lossy else max(3, min(search.need(), 4))
        return vanished[ttl] < need

    def _scan_complete(self, probes):
        """A scan round is complete when every hop up to the first that reached the dest is
        (probes past the dest only spend its answer budget; nothing waits for them)."""
        reached = [p.ttl for p in probes if p.outcome == tp.ARRIVED]
        if reached:
            probes = [p for p in probes if p.ttl <= min(reached)]
        return self._complete(probes)

    # -- the run ----------------------------------------------------------------------------

    def _resolve(self):
        # The suite's one resolver and family preference: the dest's reflector listens in
        # the family it resolves, so the probes must take the same one.
        try:
            self.dest_ip, self.version = resolve(self.spec["dest"], self.spec.get("ip-version"))
        except ResolveError as err:
            raise tp.ProbeError(str(err))
        self.source = self.spec.get("source")
        if self.source:
            try:
                self.source = resolve(self.source, self.version)[0]
            except ResolveError as err:
                raise tp.ProbeError("source: %s" % err)

    def run(self):
        self._resolve()
        iface, device_mtu = tp.local_mtu(self.dest_ip, self.version, self.source)
        self.local_mtu = device_mtu
        floor = MIN_MTU[self.version]
        self.min_size = max(int(self.spec.get("min-mtu") or floor), floor)
        # Loopback's MTU (65536) is above the largest IP packet: a size nothing can send
        # must not read as a black hole.
        self.local_max = min(device_mtu, MAX_IP_PACKET,
                             int(self.spec.get("max-mtu") or device_mtu))
        if self.local_max < self.min_size:
            raise tp.ProbeError("Nothing to probe: largest size %d is below the smallest %d"
                                % (self.local_max, self.min_size))
        nflows = int(self.spec["flows"])
        self.bucket = AnswerBudget(self.version)
        forward = self._reflector_transport(nflows, device_mtu)
        udp = tp.UdpTransport(self.dest_ip, self.version, self.source, flows=nflows)
        udp.max_size = device_mtu
        self.transports.append(udp)
        echo = None
        if forward is not None:
            try:
                return self._measure(udp, None, nflows, iface, forward)
            finally:
                for transport in self.transports:
                    transport.close()
        try:
            echo = tp.EchoTransport(self.dest_ip, self.version, self.source)
            echo.max_size = device_mtu
            self.transports.append(echo)
        except tp.ProbeError as err:
            self.diags.append("ICMP echo not used: %s" % err)
        try:
            return self._measure(udp, echo, nflows, iface)
        finally:
            for transport in self.transports:
                transport.close()

    def _reflector_transport(self, nflows, device_mtu):
        """The dest's reflector as a transport when it answers a HELLO, else None (with a
        diag): the run then probes single-ended (echo, UDP)."""
        if not self.reflector:
            return None
        from ..tool import forward as refl
        try:
            forward = refl.ForwardTransport(self.dest_ip, self.version,
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
        self.transports.append(forward)
        return forward

    def _measure(self, udp, echo, nflows, iface, forward=None):
        self.contact_start = time.monotonic()
        udp_flows = [_Flow(udp, i, self._new_search(True)) for i in range(nflows)]
        method = "udp"
        if forward is not None:
            # Every flow through the reflector: answers are free, each flow its own port.
            udp_flows = [_Flow(forward, i, self._new_search(False)) for i in range(nflows)]
            method = "reflector"
        self.flows = list(udp_flows)
        if echo is not None:
            echo_flow = _Flow(echo, 0, self._new_search(False))
            self.flows.append(echo_flow)
            # Echo answers are free: the UDP flows only verify what echo finds, each starting
            # with the local MTU alone (a smaller size beside it would spend one more of the
            # dest's rate-limited answers each run, for nothing once echo answers).
            self._first_round([echo_flow], udp_flows[:nflows - 1])
            if echo_flow.search.lo is None:
                # A silent echo round may be loss (and the UDP flow's silence the budget an
                # earlier run spent): ask twice more before taking echo for filtered.
                self._search_rounds([echo_flow], 3)
            if echo_flow.search.lo is not None:
                flows = [echo_flow] + udp_flows[:nflows - 1]
                method = "icmp-echo"
            else:
                self.diags.append("ICMP echo got no answer (filtered?): using UDP probes")
                flows = udp_flows
                echo.close()
                self.transports.remove(echo)
        else:
            flows = udp_flows
            self._first_round(flows[:1], flows[1:])
        primary = flows[0]
        self._search_rounds([primary], PRIMARY_ROUNDS)
        if primary.search.lo is None:
            self._no_answer()
        secondary = flows[1:]
        self.flows = flows
        if secondary:
            self._share(flows, priors=True)
            # The primary takes part again when what the others prove undoes its answer (a
            # size it held for a black hole crossed elsewhere: loss or an ECMP split; more
            # silences tell which).
            self._search_rounds(flows, primary.search.rounds + SECONDARY_ROUNDS)

        # Rate-limited flows the budget never reached after the first round: not measured
        # (their first round alone proves nothing), rather than left half-measured.
        self.unmeasured = [f for f in secondary if f.transport.arrival_limited
                           and not f.search.done() and id(f) not in self.served]

        # Where do big packets vanish? One TTL scan per distinct black-holed size.
        blackhole = None
        hops = []
        scanned = {}
        if self.spec.get("hops"):
            # Start at the local MTU, as tracepath does, so each hop's MTU is the real one
            # (starting at the smallest lost size would report that size at the first hops).
            hops, found, _ptb = self.scan(primary, self.local_max, self.min_size, True)
            hole = primary.search.hole()
            if found and hole is not None and \
                    primary.search.stage_bottom(found["size"]) < hole <= found["size"]:
                # The scan lost its big probe in the stage that swallows the smallest
                # silent size: that is where the black hole is.
                found["size"] = hole
                blackhole = found
                scanned[hole] = None
        for flow in flows:
            hole = flow.search.hole() if flow.search.verdict() == "blackhole" else None
            if hole is None:
                continue
            if hole not in scanned:
                # Only the location counts here: the size that reached a hop is not that
                # hop's MTU, so this walk never becomes the result's hops.
                _walk, found, ptb_mtu = self.scan(flow, hole, self.min_size, False)
                scanned[hole] = ptb_mtu
                if found:
                    found["size"] = hole
                    if blackhole is None or hole < blackhole["size"]:
                        blackhole = found
            if scanned[hole] is not None:
                # A PTB did come for that size during the scan: the earlier silences were
                # loss or a rate limit. Take it as evidence and finish the search.
                flow.search.failed_sign(hole, ptb=True, ptb_mtu=scanned[hole])
                self._search_rounds([flow], flow.search.rounds + 8)
        if blackhole is not None:
            holes = [f.search.hole() for f in flows if f.search.verdict() == "blackhole"]
            if blackhole["size"] not in holes:
                blackhole = None

        if self.unmeasured:
            # Never probed beyond the first round: these flows say nothing either way.
            self._note("%d of %d flows not measured: the dest answers UDP probes about once a "
                       "second (its ICMP rate limit), which left time to measure %d fully "
                       "(probe through the dest's reflector, `reflector`, to measure all)"
                       % (len(self.unmeasured), len(flows), len(flows) - len(self.unmeasured)))
            flows = [f for f in flows if f not in self.unmeasured]
        results = []
        for index, flow in enumerate(flows):
            entry = {"flow": index, "path-mtu": flow.search.result(),
                     "pmtud": flow.search.verdict()}
            entry.update(flow.transport.flow_info(flow.tflow))
            results.append(entry)
        # Only confirmed boundaries are answers: an unconfirmed search has a proven lower
        # bound, not a path MTU.
        confirmed = [r["path-mtu"] for r, f in zip(results, flows) if f.search.done()]
        for r, f in zip(results, flows):
            if not f.search.done():
                r["path-mtu"] = None
        path_mtu = min(confirmed) if confirmed else None
        if path_mtu is None:
            proven = [f.search.result() for f in flows if f.search.result() is not None]
            if proven:
                self.diags.append("path MTU not confirmed; %d bytes proven to cross"
                                  % max(proven))
        verdicts = set(r["pmtud"] for r in results)
        if "blackhole" in verdicts:
            pmtud = "blackhole"
        elif "unknown" in verdicts:
            pmtud = "unknown"
        elif "ok" in verdicts:
            pmtud = "ok"
        else:
            pmtud = "not-needed"
        if pmtud != "blackhole":
            blackhole = None
        elif blackhole is None:
            self.diags.append("black hole not located (routers do not answer TTL-limited "
                              "probes)")
        target = self.spec.get("target-mtu")
        unconfirmed = [f for f in flows if not f.search.done()]
        udp_unanswered = self._udp_unanswered()
        if udp_unanswered:
            self._note(UDP_UNANSWERED)
        if unconfirmed and not (udp_unanswered and all(
                f.transport.arrival_limited for f in unconfirmed)):
            self.diags.append("some flows were not confirmed within the time bound")
        probes = self._probes_sent(flows)
        ptb = []
        for entry in self.ptbs:
            item = {"from": entry["from"], "mtu": entry["mtu"], "useful": entry["useful"]}
            if item not in ptb:
                ptb.append(item)
        if iface:
            self.diags.append("egress interface %s, MTU %d" % (iface, self.local_mtu))
        return {
            "schema": 1,
            "succeeded": True,
            "error": None,
            "diags": "; ".join(self.diags) or None,
            "path-mtu": path_mtu,
            "local-mtu": self.local_mtu,
            "target-mtu": target,
            "jumbo": is_jumbo(path_mtu, target, pmtud),
            "pmtud": pmtud,
            "blackhole": blackhole,
            "method": method,
            "ip-version": self.version,
            "dest-ip": self.dest_ip,
            "source-ip": source_address(self.dest_ip, self.version, self.source),
            "hops": hops,
            "flows": results,
            "flows-not-measured": len(self.unmeasured),
            "probes": probes,
            "elapsed": round(time.monotonic() - self.start, 4),
            "ptb": ptb,
        }

    def _probes_sent(self, flows):
        seen, total = set(), 0
        for transport in [f.transport for f in flows] + self.transports:
            if id(transport) not in seen:
                seen.add(id(transport))
                total += transport.sent
        return total

    def _no_answer(self):
        if self.unreach:
            source, kind, code = self.unreach[-1]
            raise tp.ProbeError("%s is unreachable: ICMP type %d code %d from %s"
                                % (self.dest_ip, kind, code, source))
        raise tp.ProbeError("No answer from %s to any probe within %.1f s (host down, or ICMP "
                            "and UDP filtered on the path)"
                            % (self.dest_ip, time.monotonic() - self.contact_start))


def _lower(current, ptb_mtu, path_mtu, version):
    """The size to try next at a hop after a PTB for `current`."""
    if useful_ptb(ptb_mtu, current, version):
        return ptb_mtu
    if path_mtu is not None and path_mtu < current:
        return path_mtu
    return max(current - 1, MIN_MTU[6 if version == 6 else 4])
