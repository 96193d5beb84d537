"""The size search's planner (jumbo.probe.trains): which sizes a flow's next round carries,
against the plateaus real networks have (core.mtu.PLATEAUS) and the sizes the search holds."""

from jumbo.core.mtu import PLATEAUS
from jumbo.probe.search import SizeSearch


def test_a_rate_limited_first_train_covers_the_plateaus_largest_first():
    """Nothing known yet, each answer a second of the dest's budget: one train from the local
    MTU down to the minimum, every plateau in between and the size just above it (the first
    arrival then bounds the path MTU on both sides on the usual paths)."""
    search = SizeSearch(9000, 68)
    train = search.next_round()
    assert train[0] == 9000 and train[-1] == 68
    assert train == sorted(set(train), reverse=True)
    for plateau in (p for p in PLATEAUS if 68 < p < 9000):
        assert plateau in train and plateau + 1 in train, (plateau, train)
    assert len(train) <= search.train + 2
    assert search.rounds == 1


def test_free_answers_bisect_at_the_largest_plateau_below_the_silence():
    """Echo or reflector answers (free), one size a round: 1500 crossed and 9000 went silent;
    the next round asks the largest plateau between them and the size just above it."""
    search = SizeSearch(9000, 1280, arrival_limited=False, train=1)
    search.arrived(1500)
    search.failed_sign(9000)
    assert (search.lo, search.hi) == (1500, 9000)
    assert search.next_round() == [8951, 8950]


def test_the_last_train_carries_every_size_left_with_the_votes_it_needs():
    """Two sizes left between the proven 8948 and the silent 8951: one train carries 8951,
    8950 and 8949, each as often as its boundary still needs ordered silences, the proven
    size last (its answer makes each silence above it a vote)."""
    search = SizeSearch(9000, 1280)
    search.arrived(8948)
    search.failed_sign(8951, ordered=True)
    train = search.next_round()
    assert train[-1] == 8948
    body = train[:-1]
    assert sorted(set(body), reverse=True) == [8951, 8950, 8949], train
    for size in (8951, 8950, 8949):
        assert body.count(size) == max(1, search.need(size) - search.votes.get(size, 0)), train
