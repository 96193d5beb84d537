"""jumbo.probe.silence: how many silences make a size fail, and the sizes a round spreads
between what crosses and what does not. Figures worked out by hand from the module's rule:
rate = (losses + 1) / (losses + arrivals + 2); need = ceil(ln 1e-3 / ln rate), kept within
[base + 1, MAX_NEED] once any loss was seen; `base` on a clean path."""

import math

import pytest

from jumbo.probe.silence import FALSE_HOLE, MAX_NEED, even_sizes, silences_needed


def test_a_clean_path_needs_only_the_base():
    # No loss seen: however many arrivals, the caller's base stands (3 in the searches).
    assert silences_needed(3, 0, 0) == 3
    assert silences_needed(3, 0, 500) == 3
    assert silences_needed(2, 0, 10) == 2


def test_one_loss_beside_eight_arrivals_needs_five():
    # rate 2/11 = 0.1818; ln 1e-3 / ln 0.1818 = 6.908 / 1.705 = 4.05 -> 5.
    assert silences_needed(3, 1, 8) == 5
    # The rule's own promise: five silences at that rate are below FALSE_HOLE, four are not.
    rate = 2.0 / 11.0
    assert rate ** 5 < FALSE_HOLE < rate ** 4


def test_once_loss_is_seen_never_fewer_than_base_plus_one():
    # rate 2/101 = 0.0198: ln 1e-3 / ln 0.0198 = 1.76 -> 2, raised to base + 1 = 4.
    assert silences_needed(3, 1, 99) == 4


def test_heavy_loss_is_capped_at_most():
    # rate 2/4 = 0.5: 9.97 -> 10, capped at MAX_NEED (6); at 30 % loss 0.3^6 < 1e-3 still.
    assert MAX_NEED == 6
    assert silences_needed(3, 1, 1) == 6
    assert silences_needed(3, 50, 0) == 6
    assert silences_needed(3, 1, 1, most=8) == 8
    assert 0.3 ** MAX_NEED < FALSE_HOLE


@pytest.mark.parametrize("losses,arrivals", [(1, 8), (2, 30), (3, 12), (1, 40), (4, 4)])
def test_the_count_is_the_smallest_that_random_loss_cannot_explain(losses, arrivals):
    need = silences_needed(3, losses, arrivals)
    rate = (losses + 1.0) / (losses + arrivals + 2.0)
    smallest = int(math.ceil(math.log(FALSE_HOLE) / math.log(rate)))
    assert need == max(4, min(MAX_NEED, smallest))
    if 4 < need < MAX_NEED:
        assert rate ** need < FALSE_HOLE <= rate ** (need - 1)


def test_even_sizes_split_the_gap_in_equal_steps():
    # (9000 - 1500) / 4 = 1875: 3375, 5250, 7125.
    assert even_sizes(1500, 9000, 3) == {3375, 5250, 7125}
    # (9000 - 8000) / 2 = 500.
    assert even_sizes(8000, 9000, 1) == {8500}


def test_even_sizes_stay_strictly_inside_wide_gaps():
    sizes = even_sizes(1280, 9000, 7)
    assert len(sizes) == 7
    assert all(1280 < s < 9000 for s in sizes)


def test_rounding_merges_neighbours_in_a_narrow_gap():
    # Step 4/6: 1500.67, 1501.33, 1502, 1502.67, 1503.33 -> 1501, 1501, 1502, 1503, 1503.
    assert even_sizes(1500, 1504, 5) == {1501, 1502, 1503}
    # A gap of one: 1500.5 rounds to an end (round half to even: 1500).
    assert even_sizes(1500, 1501, 1) == {1500}
