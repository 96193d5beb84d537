"""The size search of one flow: pure logic, no sockets (unit-tested with simulated paths).

Principles:
* An arrival is proof: a size that arrived once crosses the path (DF was set), and so does
  every smaller size. Passes are never doubted; a later pass overrules earlier failures.
* A failure is only a sign: a probe can vanish because of random loss or because the dest's
  ICMP answers are rate-limited. A failure counts as a vote when it is *ordered*: a smaller
  probe of the same flow, sent right after it, arrived (so the path and the dest's answer
  budget were alive). The boundary `hi` = `lo` + 1 is accepted only with enough votes (2, or 3
  once loss has been seen); a packet-too-big for the size counts as a full confirmation.
* Rounds are trains of sizes sent back to back, largest first, so that the first size to
  arrive is the largest one that crosses: it bounds the path MTU from below and the train's
  next size up bounds it from above, even when the dest answers only one probe per round
  (a rate-limited UDP dest with an empty budget). PTB hints, the plateaus real networks
  have (1280, 1500, 4470, 8950, 9000, 9216, the local MTU) and the sizes just above them
  go first; evenly spread sizes fill the train. `train` sets its length: long when each
  answer costs a second of the dest's ICMP budget (about 3 rounds from the minimum to the
  local MTU), short when answers are free and only round trips cost (echo, reflector).
* Once the interval is small, one train carries every remaining size, each repeated as often
  as its boundary needs votes, and the proven size last: one answer settles it.
* With free answers (echo, reflector) a silence with nothing after it is taken tentatively
  as a failure (it lowers `hi` but carries no vote): the boundary itself is still only
  accepted with ordered votes, so a lost probe costs rounds, never the answer.
"""

from ..core.mtu import MIN_MTU, MIN_MTU_V6
from .silence import MAX_NEED, silences_needed
from .trains import LIMITED_TRAIN, PLATEAUS, TrainPlanner, clean_sizes


class SizeSearch(object):
    """One flow's search: the evidence (arrived, failed_sign, lost) and what it proves
    (done, result, verdict, holes); its TrainPlanner (`planner`) plans the rounds."""

    def __init__(self, local_max, min_size, version=4, plateaus=PLATEAUS, priors=(),
                 arrival_limited=True, target=None, need=2, train=None):
        self.local_max = local_max
        self.min_size = min_size
        self.version = version
        self.arrival_limited = arrival_limited
        # Sizes per round (see the module text); the engine adapts it to the transport.
        self.train = train if train else (LIMITED_TRAIN if arrival_limited else 1)
        self.base_need = need
        self.lo = None            # largest size proven to arrive
        self.hi = local_max + 1   # smallest size with a sign of failure
        self.failed = set()       # every size that showed a sign of failure (silence or PTB)
        self.votes = {}           # size -> ordered silences (a PTB the sender ignores: 10)
        self.answered = {}        # size -> MTU of the PTB a sender acts on (useful or fallback)
        self.hints = set()        # useful PTB MTU values
        self.priors = set(p for p in priors if min_size <= p <= local_max)
        self.confirmed_elsewhere = set()  # boundaries other flows have confirmed
        self.holes_elsewhere = set()      # sizes other flows confirmed vanishing silently
        # What the other flows of the run saw (the engine keeps these current): loss on the
        # path shows on every flow, and a size another flow proved to cross is a size whose
        # silence here is an ECMP split only against overwhelming evidence.
        self.losses_elsewhere = 0
        self.arrivals_elsewhere = 0
        self.crossed_elsewhere = None
        self.unproven = set()     # silences with nothing answered after them: ask again
        candidates = set(p for p in plateaus if min_size <= p <= local_max)
        if target and min_size <= target <= local_max:
            candidates.add(target)
        self.plateaus = candidates
        self.loss_seen = False
        self.arrivals = 0          # answers that came
        self.losses = 0            # answers that should have come and did not
        self.rounds = 0
        self.empty_rounds = 0
        self.ptb_seen = False      # a useful PTB for a failing size of this flow
        self.useless_ptb_seen = False
        # A PTB whose MTU is below the family minimum (0 from old or broken routers): senders
        # fall back to 552 (IPv4) / 1280 (IPv6) and keep going, slowly. A PTB claiming an MTU
        # at or above the probe is ignored by senders, which then stall as in a black hole.
        self.fallback_ptb_seen = False
        self.planner = TrainPlanner(self)

    def next_round(self):
        """Sizes to send next, largest first (empty when done): the planner's."""
        return self.planner.next_round()

    # -- evidence ---------------------------------------------------------------------------

    def arrived(self, size):
        self.arrivals += 1
        if self.lo is None or size > self.lo:
            self.lo = size
        if size in self.failed or size >= self.hi:
            # A size we thought failing arrives: that silence was loss (or rate limiting).
            # Tentative silences above it stay tentative (they narrow the search, they carry
            # no vote): a wrong one is found out the same way, by an arrival.
            self.loss_seen = True
            self.losses += 1
        for s in [s for s in self.failed if s <= size]:
            self.failed.discard(s)
            self.votes.pop(s, None)
            self.answered.pop(s, None)
        above = [s for s in self.failed if s > self.lo]
        self.hi = min(above) if above else self.local_max + 1

    def failed_sign(self, size, ordered=False, ptb_mtu=None, ptb=False):
        """A probe of `size` vanished (ordered: a smaller probe of the same flow sent after it
        was answered, so the path was alive) or met a PTB."""
        if self.lo is not None and size <= self.lo:
            return
        if not ptb and self.covered(size):
            # A larger size met a PTB from a router this size also fails at: its silence
            # was loss.
            self.lost()
            return
        if not ptb and not ordered:
            self._unordered_silence(size)
            return
        self.failed.add(size)
        self.hi = min(self.hi, size)
        if ptb:
            self._ptb(size, ptb_mtu)
        else:
            self.votes[size] = self.votes.get(size, 0) + 1

    def _unordered_silence(self, size):
        """Nothing answered after it: loss, the dest's spent answer budget or an MTU limit
        look the same. No evidence; ask again with an answered size after it. (Before
        anything crossed, not even the minimum is assumed to cross.)"""
        if self.lo is None:
            return
        if not self.arrival_limited:
            # Answers are free: take it as a tentative failure (it narrows the search,
            # carries no vote; the boundary is verified with ordered silences).
            self.failed.add(size)
            self.hi = min(self.hi, size)
            return
        if self.train <= 2:
            self.unproven.add(size)

    def _ptb(self, size, ptb_mtu):
        """A PTB for `size` naming `ptb_mtu` (None: our own interface refused the size)."""
        if ptb_mtu is not None and useful_ptb(ptb_mtu, size, self.version):
            self._useful_ptb(size, ptb_mtu)
            return
        self.useless_ptb_seen = True
        if ptb_mtu is not None and ptb_mtu < size:
            # Below the family minimum: senders fall back and keep going.
            self.fallback_ptb_seen = True
            self.answered[size] = ptb_mtu
        else:
            # Senders ignore it and stall: as good as silence, and no loss.
            self.votes[size] = self.votes.get(size, 0) + 10

    def _useful_ptb(self, size, ptb_mtu):
        self.hints.add(ptb_mtu)
        self.ptb_seen = True
        self.answered[size] = ptb_mtu
        # Every size between the PTB's MTU and this one fails at the same router, which
        # answers: earlier silences there were loss.
        for s in [s for s in self.failed if ptb_mtu < s < size and s not in self.answered]:
            self.failed.discard(s)
            self.votes.pop(s, None)
            self.loss_seen = True
            self.losses += 1
        above = [s for s in self.failed if self.lo is None or s > self.lo]
        self.hi = min(above) if above else self.local_max + 1

    def covered(self, size):
        """True when a PTB for a size at or above `size` named an MTU below it."""
        return any(mtu < size <= other for other, mtu in self.answered.items()
                   if useful_ptb(mtu, other, self.version))

    def lost(self):
        """An expected arrival did not come although the dest could have answered."""
        self.loss_seen = True
        self.losses += 1

    # -- state ------------------------------------------------------------------------------

    def need(self, size=None):
        """Ordered silences that make a failure of `size` (default: hi) a fact: enough that
        random loss, at the rate this run's flows saw, explains them all with a chance
        below 1/1000. The rate is estimated from all flows' counts with half a loss added
        (a run that saw 3 arrivals has not shown that its path is clean)."""
        size = self.hi if size is None else size
        losses = self.losses + self.losses_elsewhere
        arrivals = self.arrivals + self.arrivals_elsewhere
        if self.crossed_elsewhere is not None and size <= self.crossed_elsewhere:
            # Another flow proved this size crosses: a split between ECMP members is real
            # but rare, loss is common; only a long silence says split (< 1/1000 at 30 %).
            return MAX_NEED
        if self.lo is not None and self.lo in self.confirmed_elsewhere and not losses \
                and self.lo + 1 in self.holes_elsewhere:
            # Another flow proved the same black hole on a clean path: one ordered silence
            # agrees with it. (A silence where another flow met a PTB is more likely a
            # lost PTB.)
            return 1
        need = silences_needed(self.base_need, losses, arrivals)
        if size - 1 not in self.plateaus and size - 1 not in self.hints \
                and size - 1 not in self.priors:
            # A path MTU no link type has and no PTB named: one more repetition.
            need += 1
        if size < min(MIN_MTU_V6, self.local_max):
            # Below the IPv6 minimum no real path narrows: such a boundary is far more likely
            # loss than an MTU, so it takes one more repetition.
            need += 1
        return need

    def boundary_done(self):
        if self.lo is None:
            return False
        if self.lo >= self.local_max:
            return True
        return self.hi == self.lo + 1 and (self.hi in self.answered
                                           or self.votes.get(self.hi, 0) >= self.need())

    def stages(self):
        """Follow the path from the local MTU down, as a sender doing PMTUD does: a PTB sends
        it to the PTB's MTU (the next stage); a size that vanishes silently stalls it (a black
        hole, whose smallest silent size is the largest answered size below + 1). PMTUD works
        only when every size between the path MTU + 1 and the local MTU is answered.

        Returns (complete, holes, sizes to probe next)."""
        holes = []
        if self.lo < self.local_max and self.hi not in self.answered:
            # The size just above the path MTU vanishes silently: whatever the stages above
            # do, a sender ends up there and stalls, and no smaller size can vanish.
            return True, [self.hi], None
        top = self.local_max
        while top > self.lo:
            if top in self.answered:
                mtu = self.answered[top]
                if mtu < top and useful_ptb(mtu, top, self.version):
                    top = mtu
                    continue
                return True, holes, None  # fallback PTB: the sender drops below everything
            if top not in self.failed:
                # Untested (or its silence was unproven): probe it, with an answered smaller
                # size after it so that a silence is ordered.
                return False, holes, self._with_companion(top)
            # `top` failed silently: this stage swallows sizes down to some bottom.
            bottom = max([s for s in self.answered if s < top] + [self.lo])
            silent = sorted(s for s in self.failed if bottom < s <= top
                            and s not in self.answered)
            smallest = silent[0]
            if smallest == bottom + 1:
                if self.votes.get(smallest, 0) >= self.need(smallest):
                    holes.append(smallest)
                    top = bottom
                    continue
                return False, holes, self._with_companion(smallest)
            if not self.votes.get(smallest):
                # One unproven silence: repeat it before searching below it.
                return False, holes, self._with_companion(smallest)
            # Where does this stage start? The plateaus and PTB values first (a probe just
            # above and one at the value), then halves.
            pick = clean_sizes(sorted(self.plateaus | self.hints | self.priors), smallest, bottom)
            if pick:
                size = pick[0]
                sizes = [size + 1, size] if size + 1 < smallest else [size]
                return False, holes, self._with_companion(*sizes)
            return False, holes, self._with_companion(max((bottom + smallest) // 2, bottom + 1))
        return True, holes, None

    def _with_companion(self, *sizes):
        """`sizes`, then the largest answered size below them: its answer proves the path
        was alive when they went silent."""
        below = [s for s in self.answered if s < min(sizes)]
        if self.lo is not None:
            below.append(self.lo)
        return list(sizes) + ([max(below)] if below else [])

    def done(self):
        if not self.boundary_done():
            return False
        return self.stages()[0]

    def result(self):
        return self.lo

    def holes(self):
        """Smallest silently vanishing size of each black-holing stage (once done)."""
        if not self.boundary_done():
            return []
        return self.stages()[1]

    def stage_bottom(self, size):
        """The largest size below `size` known to be answered (arrival or PTB), or None."""
        below = [s for s in self.answered if s < size]
        if self.lo is not None and self.lo < size:
            below.append(self.lo)
        return max(below) if below else None

    def hole(self):
        holes = self.holes()
        return min(holes) if holes else None

    def verdict(self):
        """PMTUD health for this flow, once done."""
        if self.lo is None:
            return "unknown"
        if self.lo >= self.local_max:
            return "not-needed"
        if not self.done():
            return "unknown"
        if self.holes():
            return "blackhole"
        return "ok"


def useful_ptb(mtu, size, version):
    """A PTB's MTU is usable when it is below the probe that caused it and not below the
    family's minimum MTU (68 / 1280)."""
    floor = MIN_MTU[6 if version == 6 else 4]
    return mtu is not None and floor <= mtu < size


def information_minimum(local_max, min_size):
    """Probes a yes/no search needs at least, in the worst case, to name one size of
    [min_size, local_max]: ceil(log2(number of sizes))."""
    count = max(1, local_max - min_size + 1)
    bits = 0
    while (1 << bits) < count:
        bits += 1
    return max(1, bits)
