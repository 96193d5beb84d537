"""Rounds of probes: send (flow, size, ttl) items back to back, read the answers from every
transport on one clock and one pending-probe table, settle each probe (answered, superseded
by a later answer of its group, or silent) and keep the dest's answer budget model
(budget.py) in step with what came back. The engine's phases and the TTL scan are built on
these rounds."""

import os
import select
import sys
import time

from . import transport as tp
from .search import useful_ptb
from .timing import CONTACT_RETRY, CONTACT_SECONDS, MIN_WAIT, WAIT_RTTS

# JUMBO_PROBE_DEBUG=1: every round's probes and outcomes on stderr (for developers).
DEBUG = bool(os.environ.get("JUMBO_PROBE_DEBUG"))


class Probe(object):
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


class Flow(object):
    def __init__(self, transport, tflow, search):
        self.transport = transport
        self.tflow = tflow
        self.search = search
        self.ptb = []
        self.plan = None  # the search's next round, until it is sent


class Rounds(object):
    """What every round shares: the clock (`start`, `deadline`), the pending probes, the
    answers' round-trip estimate, the dest's answer budget and what the transports heard
    (PTBs, unreachables). `seconds` from now is the deadline; the run names the dest, its
    family and its answer budget (`aim`) once it has resolved it, and keeps `transports`,
    the open transports whose answers the rounds read. Its face: round(), complete() (a
    round's default end), sleep_until(), free_train(), udp_unanswered()."""

    def __init__(self, seconds, cap):
        self.start = time.monotonic()
        self.deadline = self.start + seconds
        self.cap = cap  # the spec's timeout: the longest wait for one answer
        self.dest_ip = None
        self.version = None  # the family, once the dest is resolved
        self.bucket = None  # the dest's answer budget, in that family
        self.srtt = None
        self.min_rtt = None  # the fastest round trip of a probe that reached the dest
        self.pending = {}
        self.ptbs = []
        self.unreach = []
        self.transports = []
        self.order = 0
        self.answered = False
        self.proven = 0
        # Rate-limited transports: when each first sent, which ones the dest ever answered.
        self.limited_first_sent = {}
        self.limited_answering = set()

    def aim(self, dest_ip, version, bucket):
        """The dest the rounds probe, its family and its answer budget (an AnswerBudget)."""
        self.dest_ip = dest_ip
        self.version = version
        self.bucket = bucket

    def udp_unanswered(self):
        """The dest answers the other method (ICMP echo) but none of the UDP probes, sent
        CONTACT_SECONDS ago and more: a host firewall dropping UDP to closed ports. Its
        budget refills in that time, so the flows that need its answers cannot be confirmed;
        they stop and leave the time to the rest of the run."""
        if not self.answered:
            return False
        now = time.monotonic()
        return any(key not in self.limited_answering and now - first > CONTACT_SECONDS
                   for key, first in self.limited_first_sent.items())

    def _wait_limit(self):
        if self.srtt is None:
            return min(self.cap, CONTACT_RETRY)
        return min(self.cap, max(WAIT_RTTS * self.srtt, MIN_WAIT))

    def free_train(self, search):
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
            sample = event.when - probe.sent
            self.min_rtt = sample if self.min_rtt is None else min(self.min_rtt, sample)
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

    def sleep_until(self, when):
        when = min(when, self.deadline)
        while True:
            left = when - time.monotonic()
            if left <= 0:
                return
            self._collect(time.monotonic() + left)

    def _collect(self, until):
        """Read events from every transport until `until` or until something arrived."""
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
        self.sleep_until(time.monotonic() + self.bucket.seconds_until(want))

    def round(self, items, pace=True, deadline=None, complete=None):
        """Send (flow, size, ttl) items back to back; wait until each is answered or
        superseded by a later answered probe of its group (or `complete(probes)` says so),
        or the wait limit (at the latest `deadline`) passes."""
        deadline = self.deadline if deadline is None else min(deadline, self.deadline)
        if pace:
            self._pace(items)
        probes = self._send(items, deadline)
        self._await(probes, deadline, complete or self.complete)
        self._account_budget(probes)
        if DEBUG:
            sys.stderr.write("%.3f %s\n" % (time.monotonic() - self.start, " ".join(
                "%s%d%s:%s" % ("f%d/" % p.flow.tflow, p.size, "t%d" % p.ttl if p.ttl else "",
                               (p.outcome or "-")[:3]) for p in probes)))
        self._settle_unanswered(probes)
        return probes

    def _send(self, items, deadline):
        """The items' probes, sent back to back until `deadline`. A size our own interface
        refuses never leaves: it is settled at once (a failure sign for a search probe)."""
        probes = []
        for flow, size, ttl in items:
            if time.monotonic() >= deadline:
                break
            self.order += 1
            try:
                pid = flow.transport.send(size, flow.tflow, ttl)
            except tp.LocalTooBig:
                probe = Probe(flow, size, ttl, time.monotonic(), self.order)
                probe.outcome = tp.LOCAL
                if ttl is None:
                    flow.search.failed_sign(size, ptb=True)
                probes.append(probe)
                continue
            probe = Probe(flow, size, ttl, time.monotonic(), self.order)
            self.pending[(id(flow.transport), pid)] = probe
            probes.append(probe)
            if flow.transport.arrival_limited:
                self.limited_first_sent.setdefault(id(flow.transport), probe.sent)
        return probes

    def _await(self, probes, deadline, complete):
        """Read answers until `complete(probes)` or the wait limit: a few round trips after
        the last probe once the round trip is known, never past `deadline`."""
        limit = min(time.monotonic() + self._wait_limit(), deadline)
        while not complete(probes):
            now = time.monotonic()
            if now >= limit:
                break
            self._collect(limit)
            if self.srtt is not None:
                limit = min(limit, max(p.sent for p in probes) + self._wait_limit())

    def _settle_unanswered(self, probes):
        """Every probe still without an answer is silent; a search probe's silence is
        evidence for its flow's search (see _silence)."""
        for probe in probes:
            if probe.outcome is None:
                probe.outcome = "silent"
                if probe.ttl is None:
                    self._silence(probe, probes)

    def _silence(self, probe, probes):
        """What a silent search probe tells its search: below the proven size, loss (unless
        the dest's answers are rate-limited); after an answered larger size of a rate-limited
        flow, nothing (the budget went to that one); else a failure sign, ordered when a later
        probe of its flow was answered."""
        search = probe.flow.search
        limited = probe.flow.transport.arrival_limited
        if search.lo is not None and probe.size <= search.lo:
            if not limited:
                search.lost()
            # (Rate-limited: a size that crosses got no answer because the dest's budget
            # went to a larger one first, or is spent: no loss.)
        elif limited and self._after_answer(probe, probes):
            pass  # sent after an answered larger size: the budget, not a sign
        else:
            search.failed_sign(probe.size, ordered=self._superseded(probe, probes))

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
            silent = [p for p in sent if p.size <= self.proven and p.outcome is None]
            if silent:
                self.bucket.empty(since=min(p.sent for p in sent), sure=len(silent) > 1)
            return
        top = max(p.size for p in answered)
        missing = len([p for p in sent if p.size <= top]) - len(answered)
        if missing > 0:
            # One missing answer may be one lost: only two or more make the moment sure
            # enough to learn the dest's rate from.
            self.bucket.empty(since=max(p.sent for p in sent), sure=missing > 1)

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

    def complete(self, probes):
        """Every probe is answered, superseded, or (rate-limited) sent after an answered
        larger one of its flow: the dest's budget went to that one, nothing more will come."""
        return all(p.outcome is not None or self._superseded(p, probes)
                   or (p.ttl is None and p.flow.transport.arrival_limited
                       and self._after_answer(p, probes)) for p in probes)
