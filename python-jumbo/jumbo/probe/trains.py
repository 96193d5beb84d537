"""The size search's next round: which sizes a flow sends, largest first (the evidence they
produce is search.py's). A train carries PTB hints, the sizes other flows found (priors) and
the plateaus real networks have, each with the size just above it, then evenly spread sizes;
once the interval is small, one final train carries every size left with the votes its
boundary needs, the proven size last.

A SizeSearch has a TrainPlanner: the planner reads the search's state (lo, hi, votes, hints,
priors, plateaus, train, ...), changes only its `rounds` and `unproven`, and keeps what is
its own (`bare`)."""

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
    """Plans the rounds of one SizeSearch (`search`). next_round() -> sizes, largest first."""

    def __init__(self, search):
        self.search = search
        self.bare = set()  # sizes verified once without a companion (see _companion)

    def _between(self, values):
        search = self.search
        low = search.lo if search.lo is not None else search.min_size - 1
        return sorted((v for v in values if low < v < search.hi), reverse=True)

    def _best_candidates(self):
        """The sizes between the bounds a PTB named, else those other flows found, else
        the plateaus: largest first."""
        search = self.search
        return self._between(search.hints) or self._between(search.priors) \
            or self._between(search.plateaus)

    def next_round(self):
        """Sizes to send next, largest first (empty when done)."""
        search = self.search
        retry = sorted(s for s in search.unproven if search.lo < s < search.hi) \
            if search.lo is not None else []
        search.unproven = set()
        if retry and not search.done():
            search.rounds += 1
            return [retry[0], search.lo]
        if search.boundary_done():
            complete, _holes, sizes = search.stages()
            if complete:
                return []
            search.rounds += 1
            return sizes
        sizes = self._next_round()
        if not sizes:
            # Never stall: re-check the boundary (or the extremes when nothing is known).
            sizes = [search.hi, search.lo] \
                if search.lo is not None and search.hi <= search.local_max \
                else [search.local_max, search.min_size]
        return sizes

    def _next_round(self):
        search = self.search
        search.rounds += 1
        if search.lo is None:
            return self._before_arrival()
        if search.train > 2 or not search.arrival_limited:
            return self._train_round()
        return self._limited_pair()

    def _before_arrival(self):
        """Nothing has crossed yet."""
        search = self.search
        if search.train > 2 and not search.priors:
            # Each answer is precious: one train over everything, the minimum last
            # (answered whenever the dest answers at all).
            return clean_sizes([search.local_max] + self._spread(search.min_size - 1, search.hi)
                               + [search.min_size], search.hi)
        if search.rounds == 1:
            return self._first_try()
        # The best candidate below hi, and the minimum as sentinel.
        pick = self._best_candidates()
        sizes = []
        if pick:
            sizes = [pick[0] + 1, pick[0]] if pick[0] + 1 < search.hi else [pick[0]]
        elif search.hi - 1 > search.min_size:
            sizes = [(search.hi + search.min_size) // 2]
        # Without an arrival after them, silences are no evidence: the sentinel follows
        # (unless the pick is a size another flow crossed, see _companion).
        return clean_sizes(sizes + self._companion(pick[0] if pick else None, search.min_size),
                           search.hi)

    def _first_try(self):
        """The first round of a short-train search: where other flows already found sizes,
        one arrival tells whether this flow agrees (and only one oversized probe meets a
        PTB-sending router)."""
        search = self.search
        lower = [p for p in search.priors if p < search.local_max]
        if lower:
            return clean_sizes([min(lower) + 1, min(lower)], search.hi)
        if search.priors:
            return [search.local_max]
        return clean_sizes([search.local_max, search.min_size], search.hi)

    def _limited_pair(self):
        """Rate-limited answers, short rounds, something crossed: a pair of sizes a round."""
        search = self.search
        if search.hi == search.lo + 1:
            return [search.hi, search.lo]
        if search.hi > search.local_max:
            return [search.local_max]
        pick = self._best_candidates()
        if pick:
            size = pick[0]
            # No proven size after the pair: the smaller one usually arrives (each arrival
            # spends the dest's answer budget); if both go silent they are asked again with
            # the proven size after them.
            return [size + 1, size] if size + 1 < search.hi else [search.hi, size]
        middle = search.lo + (search.hi - search.lo) // 2
        # The proven size last: a silence above it is then evidence at once.
        return clean_sizes([middle], search.hi, search.lo) + [search.lo]

    def _companion(self, size, smaller):
        """What follows `size` in a round: `smaller` (a size expected to arrive), so that a
        silence of `size` is an ordered vote. Not when the dest's answers are rate-limited,
        another flow of the run proved that `size` crosses and this flow has not yet tried it
        alone: `size` then usually arrives and is itself the answer that orders the silences
        above it, and an answered companion would spend one more of the dest's answers (each
        a second of its budget once the burst is gone). A bare try that goes silent is asked
        again with the companion."""
        search = self.search
        if (size is not None and search.arrival_limited and size not in self.bare
                and search.crossed_elsewhere is not None and size <= search.crossed_elsewhere):
            self.bare.add(size)
            return []
        return [smaller]

    # -- trains -------------------------------------------------------------------------------

    def _spread(self, low, high, count=None):
        """Up to `count` (default: train) sizes strictly between low and high, largest first:
        PTB hints, priors and plateaus with the size just above each, then evenly spread."""
        search = self.search
        count = search.train if count is None else count
        picked = set()
        for group in (search.hints, search.priors, search.plateaus):
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
        return max(1, self.search.need(size) - self.search.votes.get(size, 0))

    def _train_round(self):
        """The next train once something crossed (lo known)."""
        search = self.search
        if search.hi > search.local_max and search.lo < search.local_max:
            # Nothing failed yet above lo: the local MTU first, then the rest.
            top = search.local_max + 1
        else:
            top = search.hi
        agreed = [p for p in search.priors if search.lo < p < top]
        if agreed:
            return self._verify_prior(min(agreed), top)
        final = self._final_train(top)
        if final:
            return final
        if not search.arrival_limited and search.train <= 2:
            return self._bisect(top)
        sizes = self._spread(search.lo, top)
        if top <= search.local_max and top not in search.failed:
            sizes = [top] + sizes
        return sizes + [search.lo]

    def _verify_prior(self, prior, top):
        """Other flows found `prior`: its next size up, as often as its boundary needs, then
        it, the proven size last in case it does not cross."""
        search = self.search
        clean = not (search.losses + search.losses_elsewhere)
        copies = 1 if (prior + 1 in search.holes_elsewhere and clean) else self._copies(prior + 1)
        if prior + 1 < top:
            return [prior + 1] * copies + [prior] + self._companion(prior, search.lo)
        return [prior] + self._companion(prior, search.lo)

    def _final_train(self, top):
        """Every size left below `top`, each with the votes its boundary needs, the proven
        size last; None when that train is longer than a round may be."""
        search = self.search
        limit = max(search.train * FINAL_FACTOR, 6)
        if not search.arrival_limited:
            limit = max(limit, FREE_FINAL_TRAIN)
        final = []
        if top <= search.local_max:
            final = [top] * (self._copies(top) if top in search.failed else 1)
        for size in range(top - 1, search.lo, -1):
            if len(final) > limit:
                return None  # (the rest cannot make it shorter)
            final += [size] * self._copies(size)
        if final and len(final) <= limit:
            return final + [search.lo]
        return None

    def _bisect(self, top):
        """Free answers, short rounds: bisect (hints and plateaus first), no companion."""
        search = self.search
        pick = self._best_candidates()
        if pick and pick[0] + 1 < top:
            return [pick[0] + 1, pick[0]]
        if pick:
            return [pick[0]]
        return [(search.lo + top) // 2]
