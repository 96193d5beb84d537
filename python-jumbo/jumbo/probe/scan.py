"""The TTL scan: TTL-limited probes of a big and a small size on one flow's own 5-tuple, to
find where big packets stop (a PTB, or silence where the small probe still gets through)
and, for the `hops` scan, every hop's address, MTU and RTT.

The same train discipline as the size search: each round probes a window of SCAN_TTLS hops
at once, each router getting one probe of each size per round (routers rate-limit their
time-exceeded messages per source, so one answer per router per round is what a round can
count on). A round that changes the size to carry (a PTB, a black hole passed in a full
scan) or meets a silent hop starts the next window there; otherwise the next window starts
after this one. Each scan stops itself within SCAN_SECONDS.
"""

import time

from ..core.mtu import MIN_MTU
from ..core.result import Blackhole, Hop
from . import transport as tp
from .search import useful_ptb
from .timing import SCAN_SECONDS, iso_duration

MAX_TTL = 30
SCAN_TTLS = 16  # hops per round: a path up to this long takes one round
# Rounds where only the big probe to a hop went unanswered before that reads as a black
# hole there rather than loss: on a path where the search saw no loss / where it did.
VANISHED_CLEAN = 2
VANISHED_LOSSY_MAX = 4


def lower(current, ptb_mtu, path_mtu, version):
    """The size to try next at a hop after a PTB for `current`."""
    if useful_ptb(ptb_mtu, current, version):
        return ptb_mtu
    if path_mtu is not None and path_mtu < current:
        return path_mtu
    return max(current - 1, MIN_MTU[6 if version == 6 else 4])


class TtlScan(object):
    """One scan of `flow` from size `big` (down to `small`) over `rounds` (the run's
    Rounds). `full`: every hop with its MTU (the `hops` scan); otherwise only where big
    packets stop. `local_max`: the largest size the run can send. run() -> (hops, blackhole
    or None, the MTU a useful PTB named or None)."""

    def __init__(self, rounds, flow, big, small, full, local_max):
        self.rounds = rounds
        self.local_max = local_max
        self.flow = flow
        self.small = small
        self.full = full
        self.current = big
        self.hops = []
        self.blackhole = None
        self.ptb_found = None
        # The last hop the big probe reached: the black hole is past it. (Not simply the hop
        # before the first silent one: a router that rate-limits its time-exceeded answers
        # can stay silent in between, and the hole would move a hop late.)
        self.last_big = (0, None)
        self.vanished = {}  # ttl -> rounds where the big probe alone went unanswered there
        self.silences = {}  # ttl -> silent rounds
        self.pace = False  # wait for the dest's budget before the next round
        self.confirm = False  # the next round asks one hop again
        self.done = False

    def run(self):
        deadline = min(self.rounds.deadline, time.monotonic() + SCAN_SECONDS)
        ttl = 1
        while ttl <= MAX_TTL and time.monotonic() < deadline and not self.done:
            # A confirmation asks the one hop again (the hops past it are not needed and
            # would spend the dest's answer budget).
            ttls = [ttl] if self.confirm else \
                list(range(ttl, min(MAX_TTL, ttl + SCAN_TTLS - 1) + 1))
            self.confirm = False
            sizes = [self.current, self.small] if self.current != self.small else [self.small]
            # Only a probe reaching the dest spends its answer budget: wait for it only
            # when a round came back empty.
            probes = self.rounds.round([(self.flow, s, t) for t in ttls for s in sizes],
                                       pace=self.pace, deadline=deadline,
                                       complete=self._round_complete)
            self.pace = False
            next_ttl = self._read_round(ttls, probes)
            if self.done:
                break
            ttl = next_ttl if next_ttl is not None else ttls[-1] + 1
            if self.pace and not any(p.outcome for p in probes):
                # Nothing at all answered: let the routers' budgets refill.
                self.rounds.sleep_until(min(deadline, time.monotonic() + 0.35))
        return self.hops, self.blackhole, self.ptb_found

    def _read_round(self, ttls, probes):
        """Each hop of the round in order; the TTL the next round starts from (None: after
        this window). Sets `done` when the scan has its answer or its time is up."""
        by_ttl = {}
        for probe in probes:
            by_ttl.setdefault(probe.ttl, []).append(probe)
        for ttl in ttls:
            sent = by_ttl.get(ttl)
            if not sent:
                self.done = True  # the scan's time is up
                return None
            next_ttl = self._read_hop(ttl, sent[0], sent[-1])
            if self.done or next_ttl is not None:
                return next_ttl
        return None

    def _read_hop(self, ttl, big, small):
        """One hop's big and small probe: what it says, and the TTL to ask next (None: the
        next hop of this round)."""
        if big.outcome in (tp.TTL, tp.ARRIVED):
            return self._big_reached(ttl, big)
        if big.outcome == tp.TOO_BIG:
            return self._too_big(ttl, big)
        if small is not big and small.outcome == tp.TTL and self._big_lost_by_chance(ttl):
            # The small probe answered and the big one did not: a black hole here, or one
            # lost packet (a lossy path would put the hole at the wrong hop). Ask this hop
            # again until loss is an unlikely reading. (Not where the dest answered the
            # small probe: that would spend its rate-limited budget, and no hop is left past
            # the last router.)
            self.pace, self.confirm = False, True
            return ttl
        if small is not big and small.outcome in (tp.TTL, tp.ARRIVED):
            return self._big_vanished(ttl, small)
        return self._silent(ttl)

    def _big_reached(self, ttl, big):
        # `current` reaching a hop proves the path up to it carries `current`; it is the
        # hop's MTU only when nothing larger could be sent (the local MTU) or a PTB / the
        # search named it (full scans lower `current` so).
        mtu = self.current if (self.full or self.current >= self.local_max) else None
        self.last_big = (ttl, big.event.source)
        hop = Hop(ttl=ttl, ip=big.event.source, mtu=mtu,
                  rtt=iso_duration(big.event.when - big.sent))
        return self._add_hop(hop, big.outcome == tp.ARRIVED, False, ttl)

    def _too_big(self, ttl, big):
        version = self.rounds.version
        if useful_ptb(big.event.mtu, self.current, version):
            self.ptb_found = big.event.mtu
        if not self.full:
            self.done = True
            return None
        self.current = lower(self.current, big.event.mtu, self.flow.search.result(), version)
        return ttl  # this hop again, with the size it carries

    def _big_vanished(self, ttl, small):
        """The small probe got past this hop, the big one not (confirmed): the black hole
        is just past the last hop the big probe reached."""
        if self.blackhole is None:
            self.blackhole = Blackhole(ttl=self.last_big[0], ip=self.last_big[1],
                                       size=self.current)
        if not self.full:
            self.done = True
            return None
        if small.outcome == tp.ARRIVED:
            return self._dest_past_hole(ttl, small)
        # The largest size known to pass this stage (answered further along).
        lowered = self.flow.search.stage_bottom(self.current)
        hop = None
        if lowered is None or lowered >= self.current:
            hop = Hop(ttl=ttl, ip=small.event.source, mtu=None,
                      rtt=iso_duration(small.event.when - small.sent))
        self.current = lowered if lowered is not None else self.small
        if hop is None:
            return ttl
        return self._add_hop(hop, small.outcome == tp.ARRIVED, True, ttl)

    def _dest_past_hole(self, ttl, small):
        """The small probe reached the dest at `ttl` and the big one vanished: the dest is
        this hop, and the hole is on the link into it. Asking the dest again with a smaller
        size would only spend its rate-limited answers (it then reads as a silent hop and
        the dest one TTL late, the phantom `*`): its MTU is what the search saw arrive."""
        arrived = self.flow.search.lo
        mtu = arrived if self.full and arrived is not None and arrived < self.current else None
        self.hops.append(Hop(ttl=ttl, ip=small.event.source, mtu=mtu,
                             rtt=iso_duration(small.event.when - small.sent)))
        self.done = True
        return None

    def _silent(self, ttl):
        self.silences[ttl] = self.silences.get(ttl, 0) + 1
        if self.silences[ttl] >= 2:
            return self._add_hop(Hop(ttl=ttl, ip=None, mtu=None, rtt=None), False, False, ttl)
        # Silent: this hop's ICMP budget may be spent, or the dest's (a probe that reached
        # it). Ask again next round, paced.
        self.pace = True
        return ttl

    def _add_hop(self, hop, reached, changed, ttl):
        self.hops.append(hop)
        if reached or hop.ip == self.rounds.dest_ip:
            self.done = True
            return None
        if changed:
            return ttl + 1  # the later hops carried the old size: again
        return None

    def _big_lost_by_chance(self, ttl):
        """Count one more round where only the big probe to `ttl` went unanswered; True
        while that is still likely loss: twice on a path where the search saw no loss (the
        search's few probes cannot rule out 2 % loss), up to four times where it did."""
        self.vanished[ttl] = self.vanished.get(ttl, 0) + 1
        search = self.flow.search
        lossy = search.losses + search.losses_elsewhere
        need = VANISHED_CLEAN if not lossy else \
            max(3, min(search.need(), VANISHED_LOSSY_MAX))
        return self.vanished[ttl] < need

    def _round_complete(self, probes):
        """A scan round is complete when every hop up to the first that reached the dest is
        (probes past the dest only spend its answer budget; nothing waits for them)."""
        reached = [p.ttl for p in probes if p.outcome == tp.ARRIVED]
        if reached:
            probes = [p for p in probes if p.ttl <= min(reached)]
        return self.rounds.complete(probes)
