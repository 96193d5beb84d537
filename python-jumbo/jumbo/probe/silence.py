"""What a silence proves, shared by the size searches (jumbo.probe.search forward, the tool's
reverse search): an arrival is proof, a silence only a sign. A size counts as not crossing
after enough silences that random loss, at the rate the run has seen, explains them all with
a chance below FALSE_HOLE; and the sizes a round tries are spread evenly between what is
known to cross and what is known not to."""

import math

# A silent boundary is accepted when random loss explains its silences with a chance below
# this; never with more than MAX_NEED silences (< 1/1000 even at 30 % loss).
FALSE_HOLE = 1e-3
MAX_NEED = 6


def silences_needed(base, losses, arrivals, most=MAX_NEED):
    """Silences that make a size fail: `base` on a clean path (no loss seen); where `losses`
    were seen beside `arrivals`, as many as make loss at that rate (estimated with one loss
    and one arrival added) an unlikely explanation, at least base + 1, at most `most`."""
    if not losses:
        return base
    rate = (losses + 1.0) / (losses + arrivals + 2.0)
    need = int(math.ceil(math.log(FALSE_HOLE) / math.log(rate))) if rate < 1.0 else most
    return max(base + 1, min(most, need))


def even_sizes(low, high, count):
    """`count` sizes evenly spaced strictly inside (low, high), rounded (a set: rounding may
    merge neighbours or land on an end)."""
    step = (high - low) / float(count + 1)
    return set(int(round(low + step * j)) for j in range(1, count + 1))
