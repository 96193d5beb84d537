"""The size search's next round: which sizes a flow sends, largest first (the evidence they
produce is search.py's). A train carries PTB hints, the sizes other flows found (priors) and
the plateaus real networks have, each with the size just above it, then evenly spread sizes;
once the interval is small, one final train carries every size left with the votes its
boundary needs, the proven size last.

TrainPlanner is the planning half of SizeSearch: it reads the search's state (lo, hi, votes,
hints, priors, plateaus, train, ...) and changes only `rounds`, `unproven` and `bare`."""

from ..core.mtu import PLATEAUS as KNOWN_PLATEAUS
from .silence import even_sizes

PLATEAUS = tuple(sorted(KNOWN_PLATEAUS, reverse=True))
# Sizes per round when each answer costs the dest's rate-limited ICMP budget: 1280..9000 in
# ~3 answered rounds (7720 / 33 / 33 < 8, then one train with the votes).
LIMITED_TRAIN = 32
# The final train may be this much longer than `train` (it carries the votes); with free
# answers (echo, reflector) it may always be this long: probes are cheap, rounds are not.
FINAL_FACTOR = 1.5
FREE_FINAL_TRAIN = 32


def clean_sizes(sizes, hi, lo=None):
    """`sizes` strictly between lo and hi, once each, largest first."""
    seen = []
    for size in sizes:
        if size < hi and (lo is None or size > lo) and size not in seen:
            seen.append(size)
    return sorted(seen, reverse=True)


class TrainPlanner(object):
    def _between(self, values):
        low = self.lo if self.lo is not None else self.min_size - 1
        return sorted((v for v in values if low < v < self.hi), reverse=True)

    def next_round(self):
        """Sizes to send next, largest first (empty when done)."""
        retry = sorted(s for s in self.unproven if self.lo < s < self.hi) \
            if self.lo is not None else []
        self.unproven = set()
        if retry and not self.done():
            self.rounds += 1
            return [retry[0], self.lo]
        if self._boundary_done():
            complete, _holes, sizes = self._stages()
            if complete:
                return []
            self.rounds += 1
            return sizes
        sizes = self._next_round()
        if not sizes:
            # Never stall: re-check the boundary (or the extremes when nothing is known).
            sizes = [self.hi, self.lo] if self.lo is not None and self.hi <= self.local_max \
                else [self.local_max, self.min_size]
        return sizes

    def _next_round(self):
        self.rounds += 1
        if self.lo is None and self.train > 2 and not self.priors:
            # Nothing proven yet and each answer is precious: one train over everything,
            # the minimum last (answered whenever the dest answers at all).
            return clean_sizes([self.local_max] + self._spread(self.min_size - 1, self.hi)
                          + [self.min_size], self.hi)
        if self.lo is None:
            if self.rounds == 1:
                # Other flows already found these sizes: one arrival tells whether this flow
                # agrees (and only one oversized probe meets a PTB-sending router).
                lower = [p for p in self.priors if p < self.local_max]
                if lower:
                    return clean_sizes([min(lower) + 1, min(lower)], self.hi)
                if self.priors:
                    return [self.local_max]
                return clean_sizes([self.local_max, self.min_size], self.hi)
            # Nothing proven yet: the best candidate below hi, and the minimum as sentinel.
            pick = self._between(self.hints) or self._between(self.priors) \
                or self._between(self.plateaus)
            sizes = []
            if pick:
                sizes = [pick[0] + 1, pick[0]] if pick[0] + 1 < self.hi else [pick[0]]
            elif self.hi - 1 > self.min_size:
                sizes = [(self.hi + self.min_size) // 2]
            # Without an arrival after them, silences are no evidence: the sentinel follows
            # (unless the pick is a size another flow crossed, see _companion).
            return clean_sizes(sizes + self._companion(pick[0] if pick else None, self.min_size),
                          self.hi)
        if self.train > 2 or not self.arrival_limited:
            return self._train_round()
        if self.hi == self.lo + 1:
            return [self.hi, self.lo]
        if self.hi > self.local_max:
            return [self.local_max]
        for group in (self.hints, self.priors, self.plateaus):
            pick = self._between(group)
            if pick:
                size = pick[0]
                # No proven size after the pair: the smaller one usually arrives (each
                # arrival spends the dest's answer budget); if both go silent they are asked
                # again with the proven size after them.
                return [size + 1, size] if size + 1 < self.hi else [self.hi, size]
        span = self.hi - self.lo
        parts = 2 if self.arrival_limited else 3
        points = sorted(set(self.lo + span * j // parts for j in range(1, parts)), reverse=True)
        # The proven size last: a silence above it is then evidence at once.
        return clean_sizes(points, self.hi, self.lo) + [self.lo]

    def _companion(self, size, smaller):
        """What follows `size` in a round: `smaller` (a size expected to arrive), so that a
        silence of `size` is an ordered vote. Not when the dest's answers are rate-limited,
        another flow of the run proved that `size` crosses and this flow has not yet tried it
        alone: `size` then usually arrives and is itself the answer that orders the silences
        above it, and an answered companion would spend one more of the dest's answers (each
        a second of its budget once the burst is gone). A bare try that goes silent is asked
        again with the companion."""
        if (size is not None and self.arrival_limited and size not in self.bare
                and self.crossed_elsewhere is not None and size <= self.crossed_elsewhere):
            self.bare.add(size)
            return []
        return [smaller]

    # -- trains -------------------------------------------------------------------------------

    def _spread(self, low, high, count=None):
        """Up to `count` (default: train) sizes strictly between low and high, largest first:
        PTB hints, priors and plateaus with the size just above each, then evenly spread."""
        count = self.train if count is None else count
        picked = set()
        for group in (self.hints, self.priors, self.plateaus):
            for value in group:
                if low < value < high:
                    picked.add(value)
                    if value + 1 < high:
                        picked.add(value + 1)
        span = high - low - 1
        if span <= 0:
            return []
        if span <= count:
            return list(range(high - 1, low, -1))
        room = max(1, count - len(picked))
        picked |= even_sizes(low, high, room)
        return sorted((s for s in picked if low < s < high), reverse=True)

    def _copies(self, size):
        """Silent repetitions of `size` still needed for it to be the boundary."""
        return max(1, self.need(size) - self.votes.get(size, 0))

    def _train_round(self):
        """The next train once something crossed (lo known)."""
        if self.hi > self.local_max and self.lo < self.local_max:
            # Nothing failed yet above lo: the local MTU first, then the rest.
            top = self.local_max + 1
        else:
            top = self.hi
        agreed = [p for p in self.priors if self.lo < p < top]
        if agreed:
            # Other flows found these sizes: verify the smallest (its next size up, as often
            # as its boundary needs, then it), the proven size last in case it does not cross.
            prior = min(agreed)
            clean = not (self.losses + self.losses_elsewhere)
            copies = 1 if (prior + 1 in self.holes_elsewhere and clean) \
                else max(1, self.need(prior + 1) - self.votes.get(prior + 1, 0))
            if prior + 1 < top:
                return [prior + 1] * copies + [prior] + self._companion(prior, self.lo)
            return [prior] + self._companion(prior, self.lo)
        # The final train: every size left, each with the votes its boundary needs.
        final = []
        if top <= self.local_max:
            final = [top] * (self._copies(top) if top in self.failed else 1)
        for size in range(top - 1, self.lo, -1):
            final += [size] * self._copies(size)
        limit = max(self.train * FINAL_FACTOR, 6)
        if not self.arrival_limited:
            limit = max(limit, FREE_FINAL_TRAIN)
        if final and len(final) <= limit:
            return final + [self.lo]
        if not self.arrival_limited and self.train <= 2:
            # Free answers, short rounds: bisect (hints and plateaus first), no companion.
            pick = self._between(self.hints) or self._between(self.priors) \
                or self._between(self.plateaus)
            if pick and pick[0] + 1 < top:
                return [pick[0] + 1, pick[0]]
            if pick:
                return [pick[0]]
            return [(self.lo + top) // 2]
        sizes = self._spread(self.lo, top)
        if top <= self.local_max and top not in self.failed:
            sizes = [top] + sizes
        return sizes + [self.lo]
