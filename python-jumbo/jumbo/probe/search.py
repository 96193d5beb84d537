"""The size search of one flow: pure logic, no sockets (unit-tested with simulated paths).

Principles:
* An arrival is proof: a size that arrived once crosses the path (DF was set), and so does
  every smaller size. Passes are never doubted; a later pass overrules earlier failures.
* A failure is only a sign: a probe can vanish because of random loss or because the dest's
  ICMP answers are rate-limited. A failure counts as a vote when it is *ordered*: a smaller
  probe of the same flow, sent right after it, arrived (so the path and the dest's answer
  budget were alive). The boundary `hi` = `lo` + 1 is accepted only with enough votes (2, or 3
  once loss has been seen); a packet-too-big for the size counts as a full confirmation.
* Rounds are short lists of sizes sent back to back, largest first: the plateaus real networks
  have (1280, 1500, 4470, 8950, 9000, 9216, and the local MTU) first, then PTB hints, then a
  bisection (k-ary when arrivals are free, binary when each arrival costs a rate-limited
  answer).
"""

PLATEAUS = (9216, 9000, 8950, 4470, 1500, 1280)


class SizeSearch(object):
    def __init__(self, local_max, min_size, version=4, plateaus=PLATEAUS, priors=(),
                 arrival_limited=True, target=None, need=2):
        self.local_max = local_max
        self.min_size = min_size
        self.version = version
        self.arrival_limited = arrival_limited
        self.base_need = need
        self.lo = None            # largest size proven to arrive
        self.hi = local_max + 1   # smallest size with a sign of failure
        self.failed = set()       # every size that showed a sign of failure
        self.votes = {}           # size -> confirmation votes of its failure
        self.hints = set()        # useful PTB MTU values
        self.priors = set(p for p in priors if min_size <= p <= local_max)
        self.confirmed_elsewhere = set()  # boundaries other flows have confirmed
        candidates = set(p for p in plateaus if min_size <= p <= local_max)
        if target and min_size <= target <= local_max:
            candidates.add(target)
        self.plateaus = candidates
        self.loss_seen = False
        self.rounds = 0
        self.empty_rounds = 0
        self.ptb_seen = False      # a useful PTB for a failing size of this flow
        self.useless_ptb_seen = False
        # A PTB whose MTU is below the family minimum (0 from old or broken routers): senders
        # fall back to 552 (IPv4) / 1280 (IPv6) and keep going, slowly. A PTB claiming an MTU
        # at or above the probe is ignored by senders, which then stall as in a black hole.
        self.fallback_ptb_seen = False

    # -- evidence ---------------------------------------------------------------------------

    def arrived(self, size):
        if self.lo is None or size > self.lo:
            self.lo = size
        if size >= self.hi:
            # A size we thought failing arrives: that silence was loss (or rate limiting).
            self.loss_seen = True
            above = [s for s in self.failed if s > size]
            self.hi = min(above) if above else self.local_max + 1
        for s in [s for s in self.failed if s <= size]:
            self.failed.discard(s)
            self.votes.pop(s, None)

    def failed_sign(self, size, ordered=False, ptb_mtu=None, ptb=False):
        """A probe of `size` vanished (ordered: proven by a later arrival) or met a PTB."""
        if self.lo is not None and size <= self.lo:
            return
        if not ptb and not ordered and size in self.confirmed_elsewhere:
            # Another flow proved this size crosses; an unproven silence here is more
            # likely the dest's rate limit than a narrower member. Ask again instead.
            self.loss_seen = True
            return
        if size <= self.min_size and not ptb:
            # The smallest size is assumed to cross; its silence is loss or rate limiting.
            self.loss_seen = True
            return
        self.failed.add(size)
        self.hi = min(self.hi, size)
        if ptb:
            self.votes[size] = self.votes.get(size, 0) + 10
            if ptb_mtu is not None and useful_ptb(ptb_mtu, size, self.version):
                self.hints.add(ptb_mtu)
                self.ptb_seen = True
            else:
                self.useless_ptb_seen = True
                if ptb_mtu is not None and ptb_mtu < size:
                    self.fallback_ptb_seen = True
        elif ordered:
            self.votes[size] = self.votes.get(size, 0) + 1

    def lost(self):
        """An expected arrival did not come although the dest could have answered."""
        self.loss_seen = True

    # -- state ------------------------------------------------------------------------------

    def need(self):
        if self.lo is not None and self.lo in self.confirmed_elsewhere and not self.loss_seen:
            return 1
        return self.base_need + (1 if self.loss_seen else 0)

    def done(self):
        if self.lo is None:
            return False
        if self.lo >= self.local_max:
            return True
        return self.hi == self.lo + 1 and self.votes.get(self.hi, 0) >= self.need()

    def result(self):
        return self.lo

    def verdict(self):
        """PMTUD health for this flow, once done."""
        if self.lo is None:
            return "unknown"
        if self.lo >= self.local_max:
            return "not-needed"
        if not self.done():
            return "unknown"
        if self.ptb_seen or self.fallback_ptb_seen:
            return "ok"
        return "blackhole"

    # -- the next round ---------------------------------------------------------------------

    def _between(self, values):
        low = self.lo if self.lo is not None else self.min_size - 1
        return sorted((v for v in values if low < v < self.hi), reverse=True)

    def next_round(self):
        """Sizes to send next, largest first (empty when done)."""
        if self.done():
            return []
        sizes = self._next_round()
        if not sizes:
            # Never stall: re-check the boundary (or the extremes when nothing is known).
            sizes = [self.hi, self.lo] if self.lo is not None and self.hi <= self.local_max \
                else [self.local_max, self.min_size]
        return sizes

    def _next_round(self):
        self.rounds += 1
        if self.lo is None:
            if self.rounds == 1:
                # Other flows already found these sizes: one arrival tells whether this flow
                # agrees (and only one oversized probe meets a PTB-sending router).
                lower = [p for p in self.priors if p < self.local_max]
                if lower:
                    return _clean([min(lower) + 1, min(lower)], self.hi)
                if self.priors:
                    return [self.local_max]
                return _clean([self.local_max, self.min_size], self.hi)
            # Nothing proven yet: the best candidate below hi, and the minimum as sentinel.
            pick = self._between(self.hints) or self._between(self.priors) \
                or self._between(self.plateaus)
            sizes = []
            if pick:
                sizes = [pick[0] + 1, pick[0]] if pick[0] + 1 < self.hi else [pick[0]]
            elif self.hi - 1 > self.min_size:
                sizes = [(self.hi + self.min_size) // 2]
            if self.priors and self.rounds == 2 and sizes:
                # Optimistic once: other flows make an arrival likely, save the sentinel.
                return _clean(sizes, self.hi)
            return _clean(sizes + [self.min_size], self.hi)
        if self.hi == self.lo + 1:
            return [self.hi, self.lo]
        if self.hi > self.local_max:
            return [self.local_max]
        for group in (self.hints, self.priors, self.plateaus):
            pick = self._between(group)
            if pick:
                size = pick[0]
                return [size + 1, size] if size + 1 < self.hi else [self.hi, size]
        span = self.hi - self.lo
        parts = 2 if self.arrival_limited else 3
        points = sorted(set(self.lo + span * j // parts for j in range(1, parts)), reverse=True)
        return _clean(points, self.hi, self.lo)


def _clean(sizes, hi, lo=None):
    seen = []
    for size in sizes:
        if size < hi and (lo is None or size > lo) and size not in seen:
            seen.append(size)
    return sorted(seen, reverse=True)


def useful_ptb(mtu, size, version):
    """A PTB's MTU is usable when it is below the probe that caused it and not below the
    family's minimum MTU (68 / 1280)."""
    floor = 68 if version == 4 else 1280
    return mtu is not None and floor <= mtu < size


def information_minimum(local_max, min_size):
    """Probes a yes/no search needs at least, in the worst case, to name one size of
    [min_size, local_max]: ceil(log2(number of sizes))."""
    count = max(1, local_max - min_size + 1)
    bits = 0
    while (1 << bits) < count:
        bits += 1
    return max(1, bits)
