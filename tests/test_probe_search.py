"""The size search without a network: simulated paths with PTBs, black holes and loss."""

import random

from jumbo.probe.search import SizeSearch, information_minimum, useful_ptb


def simulate(mtu, local_max=9000, ptb=False, loss=0.0, seed=1, version=4):
    rng = random.Random(seed)
    search = SizeSearch(local_max, 68 if version == 4 else 1280, version=version)
    probes = 0
    for _ in range(60):
        sizes = search.next_round()
        if not sizes:
            break
        outcomes = []
        for size in sizes:
            probes += 1
            if size <= mtu and rng.random() >= loss:
                outcomes.append((size, "arrived"))
            elif size > mtu and ptb:
                outcomes.append((size, "ptb"))
            else:
                outcomes.append((size, "silent"))
        for size, what in outcomes:
            if what == "arrived":
                search.arrived(size)
            elif what == "ptb":
                search.failed_sign(size, ptb=True, ptb_mtu=mtu)
        for index, (size, what) in enumerate(outcomes):
            if what == "silent":
                ordered = any(w == "arrived" for _, w in outcomes[index + 1:])
                if search.lo is not None and size <= search.lo:
                    search.lost()
                else:
                    search.failed_sign(size, ordered=ordered)
    return search, probes


def test_plateaus_are_found_in_few_probes():
    for mtu in (9000, 8950, 4470, 1500, 1280):
        search, probes = simulate(mtu)
        assert search.done() and search.result() == mtu
        assert probes <= 12


def test_any_size_within_twice_the_information_minimum():
    minimum = information_minimum(9000, 68)
    for mtu in (68, 500, 1499, 3000, 7777, 8999):
        for ptb in (False, True):
            search, probes = simulate(mtu, ptb=ptb)
            assert search.result() == mtu
            assert probes <= 2 * minimum + 4, (mtu, probes)


def test_verdicts():
    assert simulate(9000)[0].verdict() == "not-needed"
    assert simulate(8950, ptb=True)[0].verdict() == "ok"
    assert simulate(8950)[0].verdict() == "blackhole"


def test_loss_never_lowers_the_answer():
    for seed in range(200):
        search, _ = simulate(8950, loss=0.05, seed=seed)
        assert search.result() == 8950, seed


def test_useless_ptb_is_not_trusted():
    assert not useful_ptb(0, 9000, 4)
    assert not useful_ptb(9000, 9000, 4)
    assert not useful_ptb(1000, 1500, 6)
    assert useful_ptb(8950, 9000, 4)
    search = SizeSearch(9000, 68)
    search.failed_sign(9000, ptb=True, ptb_mtu=12000)
    assert not search.hints and search.useless_ptb_seen
